//! `Host` / `Origin` allow-lists against DNS rebinding (403 when refused).

use actix_web::http::header;
use actix_web::HttpRequest;
use slog::debug;

use super::error::HttpError;
use crate::server::McpServer;

/// The host part of `host[:port]` or `[v6]:port` (compared without regard
/// to case). Anything after `]` but a port keeps the whole authority, which
/// then matches no allowed host (`[::1]evil.com` is not `[::1]`).
pub fn host_part(authority: &str) -> &str {
    let a = authority.trim();
    if a.starts_with('[') {
        let Some(end) = a.find(']') else { return a };
        match &a[end + 1..] {
            "" => &a[..=end],
            rest if rest.strip_prefix(':').is_some_and(|p| !p.is_empty() && p.bytes().all(|b| b.is_ascii_digit())) => {
                &a[..=end]
            }
            _ => a,
        }
    } else {
        a.rsplit_once(':').map_or(a, |(h, port)| if port.bytes().all(|b| b.is_ascii_digit()) { h } else { a })
    }
}

fn allowed(list: &[String], host: &str) -> bool {
    list.iter().any(|a| a == "*" || a.eq_ignore_ascii_case(host) || (a == "[::1]" && host == "::1"))
}

/// Checks `Host` and, when present, `Origin`. Returns the reason for refusal.
pub fn check(req: &HttpRequest, allowed_hosts: &[String], allowed_origins: &[String]) -> Result<(), String> {
    // A repeated Host or Origin: a proxy may read another one than this check.
    for name in [header::HOST, header::ORIGIN] {
        if req.headers().get_all(&name).nth(1).is_some() {
            return Err(format!("{name} must not be repeated"));
        }
    }
    // HTTP/1.1 sends `Host`; HTTP/2 carries the authority in the request target.
    let host = req
        .headers()
        .get(header::HOST)
        .and_then(|h| h.to_str().ok())
        .or_else(|| req.uri().authority().map(|a| a.as_str()));
    match host {
        Some(h) if allowed(allowed_hosts, host_part(h)) => {}
        Some(h) => return Err(format!("Host {h:?} is not allowed")),
        None => return Err("a Host header is required".into()),
    }
    if let Some(origin) = req.headers().get(header::ORIGIN) {
        let origin = origin.to_str().map_err(|_| "Origin is not ASCII".to_string())?;
        let authority = origin.split_once("://").map(|(_, rest)| rest.split('/').next().unwrap_or(rest));
        match authority {
            Some(a) if allowed(allowed_origins, host_part(a)) => {}
            _ => return Err(format!("Origin {origin:?} is not allowed")),
        }
    }
    Ok(())
}

/// The guard with the server's allow-lists: a refusal is logged and answered 403.
pub fn admit(req: &HttpRequest, server: &McpServer) -> Result<(), HttpError> {
    let http = &server.config().http;
    check(req, &http.allowed_hosts, &http.allowed_origins).map_err(|reason| {
        debug!(server.logger(), "refused by host/origin guard"; "reason" => &reason);
        HttpError::forbidden(&reason)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn host_parts() {
        assert_eq!(host_part("127.0.0.1:8080"), "127.0.0.1");
        assert_eq!(host_part("LOCALHOST:80"), "LOCALHOST");
        assert_eq!(host_part("[::1]:80"), "[::1]");
        assert_eq!(host_part("evil.example.com"), "evil.example.com");
        assert_eq!(host_part("[::1]"), "[::1]");
        assert_eq!(host_part("[::1]evil.com"), "[::1]evil.com");
        assert_eq!(host_part("[::1]:"), "[::1]:");
        assert_eq!(host_part("[::1]:80x"), "[::1]:80x");
    }

    #[test]
    fn checks_host_and_origin() {
        let hosts = vec!["localhost".to_string(), "127.0.0.1".to_string()];
        let ok = actix_web::test::TestRequest::default()
            .insert_header(("Host", "127.0.0.1:9"))
            .insert_header(("Origin", "http://localhost:3000"))
            .to_http_request();
        assert!(check(&ok, &hosts, &hosts).is_ok());
        let evil =
            actix_web::test::TestRequest::default().insert_header(("Host", "evil.example.com")).to_http_request();
        assert!(check(&evil, &hosts, &hosts).is_err());
        let evil_origin = actix_web::test::TestRequest::default()
            .insert_header(("Host", "localhost"))
            .insert_header(("Origin", "http://evil.example.com"))
            .to_http_request();
        assert!(check(&evil_origin, &hosts, &hosts).is_err());
        let null_origin = actix_web::test::TestRequest::default()
            .insert_header(("Host", "localhost"))
            .insert_header(("Origin", "null"))
            .to_http_request();
        assert!(check(&null_origin, &hosts, &hosts).is_err());
        assert!(check(&evil, &["*".to_string()], &hosts).is_ok());
        let v6 = vec!["[::1]".to_string()];
        let host = |h: &str| actix_web::test::TestRequest::default().insert_header(("Host", h)).to_http_request();
        assert!(check(&host("[::1]:8080"), &v6, &v6).is_ok());
        assert!(check(&host("[::1]evil.com"), &v6, &v6).is_err());
        let origin = |o: &str| {
            actix_web::test::TestRequest::default().insert_header(("Host", "[::1]")).insert_header(("Origin", o))
        };
        assert!(check(&origin("http://[::1]:3000").to_http_request(), &v6, &v6).is_ok());
        assert!(check(&origin("http://[::1]evil.com").to_http_request(), &v6, &v6).is_err());
        let twice = origin("http://[::1]:3000").append_header(("Origin", "http://evil.example.com")).to_http_request();
        assert_eq!(check(&twice, &v6, &v6).unwrap_err(), "origin must not be repeated");
    }
}
