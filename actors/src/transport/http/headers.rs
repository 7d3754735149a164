//! The `Mcp-*` headers of an HTTP request, for the dispatcher's checks.

use actix_web::http::header::HeaderName;
use actix_web::HttpRequest;

use crate::pipeline::intake::{Headers, McpHeader, Repeated};

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
    fn get(&self, name: McpHeader<'_>) -> Result<Option<&[u8]>, Repeated> {
        let h = self.0.headers();
        let mut values = match name {
            McpHeader::Method => h.get_all(MCP_METHOD),
            McpHeader::Name => h.get_all(MCP_NAME),
            McpHeader::ProtocolVersion => h.get_all(MCP_PROTOCOL_VERSION),
            McpHeader::Param(name) => h.get_all(name),
        };
        let first = values.next();
        match values.next() {
            None => Ok(first.map(|v| v.as_bytes())),
            Some(_) => Err(Repeated),
        }
    }
}

/// The `Mcp-Session-Id` of a request, if it has one.
pub(super) fn session_id(req: &HttpRequest) -> Option<&str> {
    req.headers().get(MCP_SESSION_ID).and_then(|v| v.to_str().ok())
}
