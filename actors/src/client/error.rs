//! What can go wrong talking to an MCP server: one variant per thing a
//! program would do differently, each displayed as a sentence.

use std::time::Duration;

use mcp_protocol::model::tools::CallToolResult;
use mcp_protocol::ErrorData;
use serde_json::Value;

/// An error of a client call.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub enum ClientError {
    /// The connection failed or the server broke the transport's rules: a
    /// refused connection, an unexpected HTTP status, a malformed message, a
    /// server process that exited.
    Transport(String),
    /// The server answered with a JSON-RPC error: its code (e.g. -32602
    /// for invalid params), message and data (typed per code by the
    /// specification).
    Protocol(ErrorData),
    /// The tool ran and reported a failure (`isError: true`); the result is
    /// kept whole, for the model to read.
    Tool(CallToolResult),
    /// The server refused the credentials (HTTP 401 or 403), with its
    /// `WWW-Authenticate` challenge.
    Auth {
        /// The HTTP status (401 or 403).
        status: u16,
        /// The `WWW-Authenticate` header, as sent.
        challenge: Option<String>,
        /// What the client was doing.
        message: String,
    },
    /// The server asked for input this client cannot give: no handler for
    /// the method, or more rounds than the configured limit.
    Input(String),
    /// No answer within the time limit.
    Timeout(Duration),
    /// The call was cancelled before its answer.
    Cancelled,
}

impl ClientError {
    /// A transport error with this description.
    pub(crate) fn transport(message: impl Into<String>) -> Self {
        ClientError::Transport(message.into())
    }

    /// The error of a JSON-RPC error object of the wrong shape too (a
    /// failed task's `error`).
    pub(crate) fn from_error_value(error: Value) -> Self {
        let data = match serde_json::from_value::<ErrorData>(error.clone()) {
            Ok(e) => e,
            Err(_) => ErrorData::internal(format!("a malformed error: {error}")),
        };
        data.into()
    }

    /// The JSON-RPC code, for a protocol error.
    pub fn code(&self) -> Option<i64> {
        match self {
            ClientError::Protocol(e) => Some(i64::from(e.code.0)),
            _ => None,
        }
    }
}

impl From<ErrorData> for ClientError {
    fn from(e: ErrorData) -> Self {
        ClientError::Protocol(e)
    }
}

/// Reads a server's answer to `what` as `T`; an answer of the wrong shape
/// is a transport error.
pub(crate) fn decode<T: serde::de::DeserializeOwned>(what: &str, v: Value) -> Result<T, ClientError> {
    serde_json::from_value(v).map_err(|e| ClientError::transport(format!("the answer to {what} is malformed: {e}")))
}

/// Reads a server's answer to `what`, as the server wrote it, as `T`.
pub(crate) fn decode_raw<T: serde::de::DeserializeOwned>(
    what: &str,
    raw: &serde_json::value::RawValue,
) -> Result<T, ClientError> {
    serde_json::from_str(raw.get())
        .map_err(|e| ClientError::transport(format!("the answer to {what} is malformed: {e}")))
}

/// A member of the wrong type reads as absent (with `#[serde(default,
/// deserialize_with = "lenient")]`): one odd member of what a server
/// sends does not cost the whole message.
pub(crate) fn lenient<'de, D: serde::Deserializer<'de>, T: serde::de::DeserializeOwned>(
    d: D,
) -> Result<Option<T>, D::Error> {
    use serde::Deserialize;
    Ok(serde_json::from_value(Value::deserialize(d)?).ok())
}

impl std::fmt::Display for ClientError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ClientError::Transport(m) => write!(f, "The connection to the MCP server failed: {m}."),
            ClientError::Protocol(ErrorData { code, message, data }) => {
                write!(f, "The MCP server answered with error {}: {message}", code.0)?;
                match data {
                    Some(d) => write!(f, " ({d})."),
                    None => write!(f, "."),
                }
            }
            ClientError::Tool(result) => {
                let text: Vec<&str> = result
                    .content
                    .iter()
                    .filter_map(|c| match c {
                        mcp_protocol::model::content::Content::Text { text, .. } => Some(text.as_str()),
                        _ => None,
                    })
                    .collect();
                write!(f, "The tool reported an error: {}.", text.join(" "))
            }
            ClientError::Auth { status, challenge, message } => {
                write!(f, "The MCP server refused the credentials (HTTP {status}) while {message}")?;
                match challenge {
                    Some(c) => write!(f, "; its challenge: {c}."),
                    None => write!(f, "."),
                }
            }
            ClientError::Input(m) => write!(f, "The server asked for input this client cannot give: {m}."),
            ClientError::Timeout(d) => write!(f, "The MCP server did not answer within {} ms.", d.as_millis()),
            ClientError::Cancelled => write!(f, "The call was cancelled before the server answered."),
        }
    }
}

impl std::error::Error for ClientError {}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn each_variant_reads_as_a_sentence() {
        let errors = [
            ClientError::transport("connection refused"),
            ClientError::from_error_value(json!({"code": -32602, "message": "Unknown tool: x"})),
            ClientError::Tool(CallToolResult::error("division by zero")),
            ClientError::Auth { status: 401, challenge: Some("Bearer".into()), message: "calling tools/list".into() },
            ClientError::Input("no handler for elicitation/create".into()),
            ClientError::Timeout(Duration::from_millis(1500)),
            ClientError::Cancelled,
        ];
        for e in &errors {
            let s = e.to_string();
            assert!(s.starts_with("The "), "{s}");
            assert!(s.ends_with('.'), "{s}");
        }
        assert_eq!(errors[1].code(), Some(-32602));
        assert!(errors[2].to_string().contains("division by zero"));
        assert!(errors[5].to_string().contains("1500 ms"));
    }
}
