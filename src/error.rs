//! Errors: wire data ([`ErrorCode`], [`ErrorData`]) apart from the Rust error
//! of this layer ([`ProtocolError`]), which renders into wire data once, in
//! [`ProtocolError::to_error_data`], with the codes of the request's version.

use serde::{Deserialize, Serialize};
use serde_json::{json, Value};

use crate::model::capabilities::ClientCapabilities;

/// Error codes that differ between versions (each version renders its
/// errors through its profile: see `ProtocolVersion::profile`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ErrorProfile {
    /// `Mcp-*` header and body disagree.
    pub header_mismatch: ErrorCode,
    /// The request needs a client capability the client did not declare.
    pub missing_capability: ErrorCode,
    /// The requested protocol version is not served.
    pub unsupported_version: ErrorCode,
    /// Whether `clientInfo` is required in `_meta` (it is a SHOULD in 2026-07-28).
    pub client_info_required: bool,
    /// A resource URI that does not exist.
    pub resource_not_found: ErrorCode,
}

impl ErrorProfile {
    /// The codes of the released stateless revision (2026-07-28), also used
    /// where no version is known.
    pub const RELEASED: ErrorProfile = ErrorProfile {
        header_mismatch: ErrorCode::HEADER_MISMATCH,
        missing_capability: ErrorCode::MISSING_REQUIRED_CLIENT_CAPABILITY,
        unsupported_version: ErrorCode::UNSUPPORTED_PROTOCOL_VERSION,
        client_info_required: false,
        resource_not_found: ErrorCode::INVALID_PARAMS,
    };
}

/// A JSON-RPC error code.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(transparent)]
pub struct ErrorCode(pub i32);

impl ErrorCode {
    /// Invalid JSON was received.
    pub const PARSE_ERROR: ErrorCode = ErrorCode(-32700);
    /// The JSON sent is not a valid request object.
    pub const INVALID_REQUEST: ErrorCode = ErrorCode(-32600);
    /// The method does not exist or is not available.
    pub const METHOD_NOT_FOUND: ErrorCode = ErrorCode(-32601);
    /// Invalid method parameter(s).
    pub const INVALID_PARAMS: ErrorCode = ErrorCode(-32602);
    /// Internal JSON-RPC error.
    pub const INTERNAL_ERROR: ErrorCode = ErrorCode(-32603);
    /// 2026-07-28: an `Mcp-*` header disagrees with the body.
    pub const HEADER_MISMATCH: ErrorCode = ErrorCode(-32020);
    /// 2026-07-28: a required client capability was not declared.
    pub const MISSING_REQUIRED_CLIENT_CAPABILITY: ErrorCode = ErrorCode(-32021);
    /// 2026-07-28: the requested protocol version is not supported.
    pub const UNSUPPORTED_PROTOCOL_VERSION: ErrorCode = ErrorCode(-32022);
    /// Legacy (2025-*): resource not found.
    pub const RESOURCE_NOT_FOUND: ErrorCode = ErrorCode(-32002);
    /// DRAFT-2026-v1: header mismatch.
    pub const DRAFT_HEADER_MISMATCH: ErrorCode = ErrorCode(-32001);
    /// DRAFT-2026-v1: missing required client capability.
    pub const DRAFT_MISSING_REQUIRED_CLIENT_CAPABILITY: ErrorCode = ErrorCode(-32003);
    /// A JSON-RPC implementation-defined server error of this server: it is
    /// at a capacity limit (the task store, the caller's share of it), a
    /// matter of load rather than a fault; the client may retry later. HTTP
    /// answers it with 429.
    pub const SERVER_BUSY: ErrorCode = ErrorCode(-32000);
    /// Events: the event type (or the webhook subscription) does not exist.
    pub const EVENT_NOT_FOUND: ErrorCode = ErrorCode(-32011);
    /// Events: the caller may not subscribe to this event type.
    pub const EVENT_FORBIDDEN: ErrorCode = ErrorCode(-32012);
    /// Events: a limit of the server (streams, subscriptions) is reached.
    pub const EVENT_RESOURCE_EXHAUSTED: ErrorCode = ErrorCode(-32013);
    /// Events: the request is well formed but asks for what the event type
    /// does not offer (a delivery mode), or its schema changed incompatibly.
    pub const EVENT_UNSUPPORTED: ErrorCode = ErrorCode(-32014);
    /// Events: a webhook's callback failed verification or was unreachable.
    pub const EVENT_CALLBACK_ENDPOINT: ErrorCode = ErrorCode(-32015);

    /// Every code named above, in the order they are named.
    pub const NAMED: [ErrorCode; 17] = [
        Self::PARSE_ERROR,
        Self::INVALID_REQUEST,
        Self::METHOD_NOT_FOUND,
        Self::INVALID_PARAMS,
        Self::INTERNAL_ERROR,
        Self::HEADER_MISMATCH,
        Self::MISSING_REQUIRED_CLIENT_CAPABILITY,
        Self::UNSUPPORTED_PROTOCOL_VERSION,
        Self::RESOURCE_NOT_FOUND,
        Self::DRAFT_HEADER_MISMATCH,
        Self::DRAFT_MISSING_REQUIRED_CLIENT_CAPABILITY,
        Self::SERVER_BUSY,
        Self::EVENT_NOT_FOUND,
        Self::EVENT_FORBIDDEN,
        Self::EVENT_RESOURCE_EXHAUSTED,
        Self::EVENT_UNSUPPORTED,
        Self::EVENT_CALLBACK_ENDPOINT,
    ];

    /// The code as text when it is one named above (a bounded label for
    /// metrics and spans), `None` for any other.
    pub fn label(self) -> Option<&'static str> {
        Some(match self {
            Self::PARSE_ERROR => "-32700",
            Self::INVALID_REQUEST => "-32600",
            Self::METHOD_NOT_FOUND => "-32601",
            Self::INVALID_PARAMS => "-32602",
            Self::INTERNAL_ERROR => "-32603",
            Self::HEADER_MISMATCH => "-32020",
            Self::MISSING_REQUIRED_CLIENT_CAPABILITY => "-32021",
            Self::UNSUPPORTED_PROTOCOL_VERSION => "-32022",
            Self::RESOURCE_NOT_FOUND => "-32002",
            Self::DRAFT_HEADER_MISMATCH => "-32001",
            Self::DRAFT_MISSING_REQUIRED_CLIENT_CAPABILITY => "-32003",
            Self::SERVER_BUSY => "-32000",
            Self::EVENT_NOT_FOUND => "-32011",
            Self::EVENT_FORBIDDEN => "-32012",
            Self::EVENT_RESOURCE_EXHAUSTED => "-32013",
            Self::EVENT_UNSUPPORTED => "-32014",
            Self::EVENT_CALLBACK_ENDPOINT => "-32015",
            _ => return None,
        })
    }

    /// The HTTP status of a stateless response carrying this error: 404 for
    /// an unknown method, 500 for an internal error, 429 for a busy server,
    /// 400 for a request the server cannot take as sent (in every revision's
    /// codes); 200 for any other (an error of the operation, not of the
    /// request). A legacy session answers 200 whatever the code.
    pub fn http_status(self) -> u16 {
        match self {
            Self::METHOD_NOT_FOUND => 404,
            Self::INTERNAL_ERROR => 500,
            Self::SERVER_BUSY => 429,
            Self::PARSE_ERROR
            | Self::INVALID_REQUEST
            | Self::INVALID_PARAMS
            | Self::HEADER_MISMATCH
            | Self::MISSING_REQUIRED_CLIENT_CAPABILITY
            | Self::UNSUPPORTED_PROTOCOL_VERSION
            | Self::DRAFT_HEADER_MISMATCH
            | Self::DRAFT_MISSING_REQUIRED_CLIENT_CAPABILITY => 400,
            _ => 200,
        }
    }
}

/// The `error` member of a JSON-RPC error response.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ErrorData {
    /// The error code.
    pub code: ErrorCode,
    /// A short description.
    pub message: String,
    /// Structured detail, typed per code by the spec.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub data: Option<Value>,
}

impl std::fmt::Display for ErrorData {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} ({})", self.message, self.code.0)
    }
}

impl std::error::Error for ErrorData {}

impl ErrorData {
    /// An error with a code and message and no data.
    pub fn new(code: ErrorCode, message: impl Into<String>) -> Self {
        ErrorData { code, message: message.into(), data: None }
    }

    /// Adds structured data.
    #[must_use]
    pub fn with_data(mut self, data: Value) -> Self {
        self.data = Some(data);
        self
    }

    /// `-32603`.
    pub fn internal(message: impl Into<String>) -> Self {
        Self::new(ErrorCode::INTERNAL_ERROR, message)
    }

    /// `-32602`.
    pub fn invalid_params(message: impl Into<String>) -> Self {
        Self::new(ErrorCode::INVALID_PARAMS, message)
    }
}

/// Everything the protocol layer can reject a message for.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum ProtocolError {
    /// The bytes are not JSON (or not UTF-8, or nested too deep).
    Parse(String),
    /// JSON, but not a valid JSON-RPC request (batch, wrong types, bad id).
    InvalidRequest(String),
    /// The method's parameters are malformed.
    InvalidParams(String),
    /// A required `_meta` field is missing or malformed.
    InvalidMeta(String),
    /// A transport header disagrees with the body.
    HeaderMismatch {
        /// The header name, e.g. `Mcp-Name`.
        header: String,
        /// What the header said (`None`: missing).
        header_value: Option<String>,
        /// What the body said.
        body_value: String,
    },
    /// The requested protocol version is not served.
    UnsupportedVersion {
        /// The version the client asked for.
        requested: String,
        /// The versions this server supports.
        supported: Vec<String>,
    },
    /// The method is unknown or was removed in this revision.
    MethodNotFound(String),
    /// The request needs capabilities the client did not declare.
    MissingCapability {
        /// The capabilities required, as a ClientCapabilities object.
        required: Box<ClientCapabilities>,
        /// Human-readable detail.
        message: String,
    },
    /// A resource URI that does not exist.
    ResourceNotFound {
        /// The URI requested.
        uri: String,
    },
    /// A cursor this server did not issue.
    InvalidCursor(String),
}

impl ProtocolError {
    /// Renders the error as wire data with the codes of `profile`.
    pub fn to_error_data(&self, profile: ErrorProfile) -> ErrorData {
        match self {
            ProtocolError::Parse(m) => ErrorData::new(ErrorCode::PARSE_ERROR, format!("Parse error: {m}")),
            ProtocolError::InvalidRequest(m) => {
                ErrorData::new(ErrorCode::INVALID_REQUEST, format!("Invalid request: {m}"))
            }
            ProtocolError::InvalidParams(m) => {
                ErrorData::new(ErrorCode::INVALID_PARAMS, format!("Invalid params: {m}"))
            }
            ProtocolError::InvalidMeta(m) => ErrorData::new(ErrorCode::INVALID_PARAMS, format!("Invalid _meta: {m}")),
            ProtocolError::HeaderMismatch { header, header_value, body_value } => {
                let message = match header_value {
                    None => format!("Header mismatch: required header {header} is missing (body value '{body_value}')"),
                    Some(h) => {
                        format!("Header mismatch: {header} header value '{h}' does not match body value '{body_value}'")
                    }
                };
                ErrorData::new(profile.header_mismatch, message)
            }
            ProtocolError::UnsupportedVersion { requested, supported } => {
                ErrorData::new(profile.unsupported_version, "Unsupported protocol version")
                    .with_data(json!({ "supported": supported, "requested": requested }))
            }
            ProtocolError::MethodNotFound(m) => {
                ErrorData::new(ErrorCode::METHOD_NOT_FOUND, format!("Method not found: {m}"))
            }
            ProtocolError::MissingCapability { required, message } => {
                ErrorData::new(profile.missing_capability, message.clone())
                    .with_data(json!({ "requiredCapabilities": serde_json::to_value(required).unwrap_or_default() }))
            }
            ProtocolError::ResourceNotFound { uri } => {
                ErrorData::new(profile.resource_not_found, format!("Resource not found: {uri}"))
                    .with_data(json!({ "uri": uri }))
            }
            ProtocolError::InvalidCursor(c) => {
                ErrorData::new(ErrorCode::INVALID_PARAMS, format!("Invalid cursor: {c}"))
            }
        }
    }
}

impl std::fmt::Display for ProtocolError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let data = self.to_error_data(ErrorProfile::RELEASED);
        f.write_str(&data.message)
    }
}

impl std::error::Error for ProtocolError {}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ProtocolVersion;

    #[test]
    fn unsupported_version_uses_profile_code_and_typed_data() {
        let e =
            ProtocolError::UnsupportedVersion { requested: "v999.0.0".into(), supported: vec!["2026-07-28".into()] };
        let d = e.to_error_data(ProtocolVersion::V2026_07_28.profile());
        assert_eq!(d.code.0, -32022);
        assert_eq!(d.data.unwrap()["requested"], "v999.0.0");
        let d = e.to_error_data(ProtocolVersion::Draft2026V1.profile());
        assert_eq!(d.code.0, -32602);
    }

    #[test]
    fn every_named_code_has_its_text_as_label_and_one_status() {
        for code in ErrorCode::NAMED {
            assert_eq!(code.label(), Some(code.0.to_string().as_str()));
            assert!([200, 400, 404, 429, 500].contains(&code.http_status()), "{code:?}");
        }
        assert_eq!(ErrorCode(-32099).label(), None);
        assert_eq!(ErrorCode(-32099).http_status(), 200);
        assert_eq!(ErrorCode::RESOURCE_NOT_FOUND.http_status(), 200, "a legacy code of the operation");
        assert_eq!(ErrorCode::DRAFT_HEADER_MISMATCH.http_status(), 400);
    }

    #[test]
    fn missing_capability_data_is_an_object() {
        let required = ClientCapabilities::sampling();
        let e = ProtocolError::MissingCapability { required: Box::new(required), message: "needs sampling".into() };
        let d = e.to_error_data(ProtocolVersion::V2026_07_28.profile());
        assert_eq!(d.code.0, -32021);
        assert_eq!(d.data.unwrap(), json!({"requiredCapabilities": {"sampling": {}}}));
        let d = e.to_error_data(ProtocolVersion::Draft2026V1.profile());
        assert_eq!(d.code.0, -32003);
    }
}
