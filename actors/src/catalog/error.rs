//! [`HandlerError`]: what a tool, resource or prompt handler can fail with.
//!
//! Protocol errors are rendered with the codes of the request's protocol
//! version by the request actor, so a handler never picks a numeric code for
//! version-dependent errors (e.g. a missing client capability).

use mcp_protocol::{ErrorData, ProtocolError};

/// A handler failure that becomes a JSON-RPC error response.
///
/// Failures the model should see and correct (bad argument values, an API
/// that failed) belong in a tool *result* with `isError: true`
/// ([`CallToolResult::error`](mcp_protocol::model::tools::CallToolResult::error)), not here.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum HandlerError {
    /// A protocol-level error (invalid params, missing capability, unknown resource…).
    Protocol(ProtocolError),
    /// A JSON-RPC error with an explicit code.
    Rpc(ErrorData),
    /// The handler needs client input it asked for through the request
    /// context (`elicit`, `sample`, `list_roots`, `ask`): the server answers
    /// an `InputRequiredResult` and the client retries. Return it with `?`
    /// from those calls, or from [`RequestContext::input_required`](crate::RequestContext::input_required).
    InputRequired,
}

impl HandlerError {
    /// `-32602` with a message.
    pub fn invalid_params(message: impl Into<String>) -> Self {
        HandlerError::Protocol(ProtocolError::InvalidParams(message.into()))
    }

    /// `-32602 Unknown tool: NAME`: what a call of a tool nothing serves gets.
    pub(crate) fn unknown_tool(name: &str) -> Self {
        Self::invalid_params(format!("Unknown tool: {name}"))
    }

    /// `-32602 Unknown prompt: NAME`: what a get of a prompt nothing serves gets.
    pub(crate) fn unknown_prompt(name: &str) -> Self {
        Self::invalid_params(format!("Unknown prompt: {name}"))
    }

    /// `-32603` with a message.
    pub fn internal(message: impl Into<String>) -> Self {
        HandlerError::Rpc(ErrorData::internal(message))
    }

    /// Renders the error with the codes of `version`.
    pub fn to_error_data(&self, version: mcp_protocol::ProtocolVersion) -> ErrorData {
        match self {
            HandlerError::Protocol(p) => p.to_error_data(version.profile()),
            HandlerError::Rpc(d) => d.clone(),
            HandlerError::InputRequired => {
                ErrorData::internal("input was requested outside tools/call, prompts/get or resources/read")
            }
        }
    }
}

impl From<ProtocolError> for HandlerError {
    fn from(e: ProtocolError) -> Self {
        HandlerError::Protocol(e)
    }
}

impl From<ErrorData> for HandlerError {
    fn from(e: ErrorData) -> Self {
        HandlerError::Rpc(e)
    }
}

impl std::fmt::Display for HandlerError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            HandlerError::Protocol(p) => p.fmt(f),
            HandlerError::Rpc(d) => write!(f, "{} ({})", d.message, d.code.0),
            HandlerError::InputRequired => f.write_str("client input required"),
        }
    }
}

impl std::error::Error for HandlerError {}

/// The message of a panic payload (`panic!` with a string, or a formatted one).
pub(crate) fn panic_message(panic: &(dyn std::any::Any + Send)) -> String {
    match (panic.downcast_ref::<&str>(), panic.downcast_ref::<String>()) {
        (Some(s), _) => (*s).to_owned(),
        (_, Some(s)) => s.clone(),
        _ => "a panic without a message".to_owned(),
    }
}
