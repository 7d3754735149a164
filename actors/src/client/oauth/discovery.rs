//! Where authorization metadata is looked for, in the order the MCP
//! authorization spec gives: the protected resource metadata (RFC 9728)
//! from the challenge, else its well-known URLs; the authorization server
//! metadata (RFC 8414, then OpenID Connect discovery) of its issuer; and the
//! checks each document must pass.

use url::Url;

/// The protected resource metadata URLs to try: the challenge's, then the
/// path-aware well-known URL, then the root one.
pub(crate) fn resource_metadata_urls(from_challenge: Option<&str>, server_url: &str) -> Vec<String> {
    let mut out: Vec<String> = from_challenge.map(str::to_owned).into_iter().collect();
    if let Ok(u) = Url::parse(server_url) {
        let origin = origin_of(&u);
        let path = u.path().trim_end_matches('/');
        if !path.is_empty() {
            out.push(format!("{origin}/.well-known/oauth-protected-resource{path}"));
        }
        out.push(format!("{origin}/.well-known/oauth-protected-resource"));
    }
    out.dedup();
    out
}

/// The authorization server metadata URLs of an issuer: RFC 8414 and
/// OpenID Connect, path-aware when the issuer has a path. Without an
/// issuer (a 2025-03-26 server with no resource metadata), the server's
/// origin.
pub(crate) fn server_metadata_urls(issuer: Option<&str>, server_url: &str) -> Vec<String> {
    let Some(issuer) = issuer else {
        return Url::parse(server_url)
            .map(|u| vec![format!("{}/.well-known/oauth-authorization-server", origin_of(&u))])
            .unwrap_or_default();
    };
    let Ok(u) = Url::parse(issuer) else { return Vec::new() };
    let origin = origin_of(&u);
    let path = u.path().trim_end_matches('/');
    if path.is_empty() {
        vec![
            format!("{origin}/.well-known/oauth-authorization-server"),
            format!("{origin}/.well-known/openid-configuration"),
        ]
    } else {
        vec![
            format!("{origin}/.well-known/oauth-authorization-server{path}"),
            format!("{origin}/.well-known/openid-configuration{path}"),
            format!("{origin}{path}/.well-known/openid-configuration"),
        ]
    }
}

/// `scheme://host[:port]` of a URL.
pub(crate) fn origin_of(u: &Url) -> String {
    u.origin().ascii_serialization()
}

/// The resource a server URL names (RFC 8707): the URL without fragment.
pub(crate) fn canonical_resource(server_url: &str) -> String {
    match Url::parse(server_url) {
        Ok(mut u) => {
            u.set_fragment(None);
            u.to_string()
        }
        Err(_) => server_url.to_owned(),
    }
}

/// Whether the resource metadata's `resource` covers the server URL: the
/// same origin, and its path a prefix of the server's on a segment boundary.
pub(crate) fn resource_covers(resource: &str, server_url: &str) -> bool {
    let (Ok(r), Ok(s)) = (Url::parse(resource), Url::parse(server_url)) else { return false };
    if origin_of(&r) != origin_of(&s) {
        return false;
    }
    let rp = r.path().trim_end_matches('/');
    let sp = s.path().trim_end_matches('/');
    sp == rp || sp.starts_with(&format!("{rp}/"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn metadata_urls_in_the_specified_order() {
        assert_eq!(
            resource_metadata_urls(None, "https://r.example/api/mcp"),
            [
                "https://r.example/.well-known/oauth-protected-resource/api/mcp",
                "https://r.example/.well-known/oauth-protected-resource"
            ]
        );
        assert_eq!(resource_metadata_urls(Some("https://x/prm"), "https://r.example/").len(), 2);
        assert_eq!(
            server_metadata_urls(Some("https://as.example/tenant1"), "https://r.example/mcp"),
            [
                "https://as.example/.well-known/oauth-authorization-server/tenant1",
                "https://as.example/.well-known/openid-configuration/tenant1",
                "https://as.example/tenant1/.well-known/openid-configuration"
            ]
        );
        assert_eq!(
            server_metadata_urls(None, "http://127.0.0.1:9/mcp"),
            ["http://127.0.0.1:9/.well-known/oauth-authorization-server"]
        );
    }

    #[test]
    fn a_resource_covers_its_own_paths_only() {
        assert!(resource_covers("https://r.example/mcp", "https://r.example/mcp"));
        assert!(resource_covers("https://r.example/", "https://r.example/mcp"));
        assert!(!resource_covers("https://r.example/mc", "https://r.example/mcp"));
        assert!(!resource_covers("https://other.example/mcp", "https://r.example/mcp"));
    }
}
