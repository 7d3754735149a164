//! An HTTP request as the transport-neutral [`Head`]: the headers the
//! server reads (`Authorization`, `Mcp-*`), its query and its peer.

use actix_web::http::header::{HeaderMap, HeaderName, AUTHORIZATION};
use actix_web::HttpRequest;

use crate::facts::head::{Head, Header, Headers, Repeated};
use crate::facts::headers::RequestHeaders;

// Header names built once: looking a header up by a `&str` name that is
// not a standard one allocates a `HeaderName` for every request.
const MCP_METHOD: HeaderName = HeaderName::from_static("mcp-method");
const MCP_NAME: HeaderName = HeaderName::from_static("mcp-name");
const MCP_PROTOCOL_VERSION: HeaderName = HeaderName::from_static("mcp-protocol-version");
/// The legacy session header.
pub(super) const MCP_SESSION_ID: HeaderName = HeaderName::from_static("mcp-session-id");

/// The headers of one HTTP request.
pub(super) struct HttpHeaders<'a>(pub(super) &'a HttpRequest);

impl Headers for HttpHeaders<'_> {
    fn get(&self, name: Header<'_>) -> Result<Option<&[u8]>, Repeated> {
        let h = self.0.headers();
        let mut values = match name {
            Header::Authorization => h.get_all(AUTHORIZATION),
            Header::Method => h.get_all(MCP_METHOD),
            Header::Name => h.get_all(MCP_NAME),
            Header::ProtocolVersion => h.get_all(MCP_PROTOCOL_VERSION),
            Header::Param(name) | Header::Named(name) => h.get_all(name),
        };
        let first = values.next();
        match values.next() {
            None => Ok(first.map(|v| v.as_bytes())),
            Some(_) => Err(Repeated),
        }
    }
}

impl<'a> HttpHeaders<'a> {
    /// The request's [`Head`]: these headers, the query, the peer. (The
    /// server does not ask for client certificates, so none is there.)
    pub(super) fn head(&'a self) -> Head<'a> {
        Head { headers: Some(self), query: self.0.uri().query(), peer: self.0.peer_addr(), client_certificate: None }
    }
}

/// The `Mcp-Session-Id` of a request, if it has one.
pub(super) fn session_id(req: &HttpRequest) -> Option<&str> {
    req.headers().get(MCP_SESSION_ID).and_then(|v| v.to_str().ok())
}

/// A request's headers as a handler sees them, leaving out `skip` (the
/// `Authorization` header when the server checked it itself).
///
/// The map's names are lowercase and its values hold no NUL (the `http`
/// crate refuses control bytes), so the pairs are copied as they are; a
/// value that is not UTF-8 is passed over when read.
pub(super) fn request_headers(map: &HeaderMap, skip: Option<&HeaderName>) -> RequestHeaders {
    let capacity = map.iter().map(|(n, v)| n.as_str().len() + v.len() + 2).sum();
    let pairs =
        map.iter().filter(|(name, _)| skip != Some(*name)).map(|(name, value)| (name.as_str(), value.as_bytes()));
    RequestHeaders::from_header_values(pairs, capacity)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_header_map_reads_like_its_pairs() {
        use actix_web::http::header::HeaderValue;
        let mut map = HeaderMap::new();
        map.append(HeaderName::from_static("x-tenant"), HeaderValue::from_static("acme"));
        map.append(HeaderName::from_static("x-tenant"), HeaderValue::from_static("second"));
        map.insert(AUTHORIZATION, HeaderValue::from_static("Bearer t"));
        // Not visible ASCII but UTF-8: kept; not UTF-8: left out.
        map.insert(HeaderName::from_static("x-name"), HeaderValue::from_bytes("Jürgen".as_bytes()).unwrap());
        map.insert(HeaderName::from_static("x-binary"), HeaderValue::from_bytes(&[0xff, 0xfe]).unwrap());
        let all = request_headers(&map, None);
        let pairs: Vec<(&str, &[u8])> = map.iter().map(|(n, v)| (n.as_str(), v.as_bytes())).collect();
        assert_eq!(all, RequestHeaders::from_pairs(pairs));
        assert_eq!(all.get("x-name"), Some("Jürgen"));
        assert_eq!(all.get("x-binary"), None);
        assert_eq!(
            all.iter().filter(|(n, _)| *n == "x-tenant").map(|(_, v)| v).collect::<Vec<_>>(),
            ["acme", "second"]
        );
        let without = request_headers(&map, Some(&AUTHORIZATION));
        assert_eq!(without.get("authorization"), None);
        assert_eq!(all.get("authorization"), Some("Bearer t"));
        assert_eq!(without.iter().count(), all.iter().count() - 1);
    }
}
