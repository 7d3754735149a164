//! `initialize` of a legacy client: negotiates a legacy version and builds
//! the session state and the result (a modern-only server names its
//! versions in the error).

use mcp_protocol::jsonrpc::Request;
use mcp_protocol::legacy::{initialize_result, negotiate, InitializeParams, LegacyRequest, SessionState};
use mcp_protocol::{ErrorCode, ErrorData, ProtocolVersion};
use serde_json::{json, Value};

use super::McpService;

impl McpService {
    /// Answers `initialize`: the new session's state and the result, or the error.
    pub(crate) fn initialize(&self, r: &Request) -> Result<(SessionState, Value), ErrorData> {
        initialize(self, r)
    }
}

fn initialize(service: &McpService, r: &Request) -> Result<(SessionState, Value), ErrorData> {
    let params = match LegacyRequest::from_parts(mcp_protocol::legacy::method::INITIALIZE, r.params.as_ref()) {
        Ok(LegacyRequest::Initialize(p)) => *p,
        Ok(_) => return Err(ErrorData::internal("initialize did not parse as initialize")),
        Err(e) => return Err(e.to_error_data(ProtocolVersion::V2025_11_25.profile())),
    };
    let InitializeParams { protocol_version, .. } = &params;
    let served = service.versions();
    let Some(version) = negotiate(protocol_version, served) else {
        let supported: Vec<&str> = served.iter().map(|v| v.as_str()).collect();
        return Err(ErrorData::new(
            ErrorCode::INVALID_PARAMS,
            format!(
                "Unsupported protocol version {protocol_version}: this server serves only stateless MCP ({}); \
                 send requests with _meta instead of initialize",
                supported.join(", ")
            ),
        )
        .with_data(json!({"supported": supported, "requested": protocol_version})));
    };
    let state = SessionState::new(version, &params);
    let mut capabilities = service.capabilities();
    // The Events extension is served on the stateless era only.
    if let Some(extensions) = capabilities.extensions.as_mut() {
        extensions.remove(mcp_protocol::events::EXTENSION);
        if extensions.is_empty() {
            capabilities.extensions = None;
        }
    }
    // Its requests to the client name the request they are part of.
    let experimental = capabilities.experimental.get_or_insert_with(Default::default);
    experimental.insert(mcp_protocol::meta::RELATED_REQUEST_KEY.into(), json!({}));
    let result = initialize_result(version, &capabilities, service.info(), service.instructions());
    Ok((state, result))
}
