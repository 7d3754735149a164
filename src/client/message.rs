//! One decode of what a server sends a client, beside the server's one
//! decode of what a client sends ([`crate::jsonrpc::decode`]).

use serde::Deserialize;
use serde_json::value::RawValue;
use serde_json::Value;

use crate::error::{ErrorCode, ErrorData};
use crate::jsonrpc::RequestId;
use crate::meta::{RELATED_REQUEST_KEY, SUBSCRIPTION_ID_KEY};
use crate::model::JsonObject;

/// One message from a server.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub enum ServerMessage {
    /// A request of the server's (elicitation, sampling, roots, ping),
    /// for the client to answer.
    Request {
        /// Its id, echoed in the answer.
        id: RequestId,
        /// Its method.
        method: String,
        /// Its params (`{}` when absent).
        params: JsonObject,
    },
    /// A notification: progress, a log message, a change, a delivery.
    Notification {
        /// Its method.
        method: String,
        /// Its params (`null` when absent).
        params: Value,
    },
    /// The answer to one of the client's requests.
    Response {
        /// The id of the request answered (`None`: the server could not
        /// read it).
        id: Option<RequestId>,
        /// The result as the server wrote it (read once, into what its
        /// reader needs), or the error.
        outcome: Result<Box<RawValue>, ErrorData>,
    },
}

/// The members of a message, each optional: what it is follows from
/// which are present.
#[derive(Deserialize)]
struct Envelope {
    jsonrpc: Option<String>,
    /// Read once, as the id it is (`null`: none).
    #[serde(default)]
    id: Option<RequestId>,
    #[serde(default)]
    method: Option<String>,
    #[serde(default)]
    params: Option<Value>,
    #[serde(default)]
    result: Option<Box<RawValue>>,
    #[serde(default)]
    error: Option<Value>,
}

impl ServerMessage {
    /// Decodes one message (a stdio line, an HTTP body, an SSE event's
    /// data); `Err` says why it is not a JSON-RPC message.
    pub fn decode(bytes: &[u8]) -> Result<Self, String> {
        let env: Envelope = serde_json::from_slice(bytes).map_err(|e| e.to_string())?;
        if env.jsonrpc.is_none() {
            return Err("not a JSON-RPC message (no \"jsonrpc\" member)".into());
        }
        Ok(match (env.method, env.id) {
            (Some(method), Some(id)) => {
                let params = match env.params {
                    Some(Value::Object(m)) => m,
                    _ => JsonObject::new(),
                };
                ServerMessage::Request { id, method, params }
            }
            (Some(method), None) => ServerMessage::Notification { method, params: env.params.unwrap_or(Value::Null) },
            (None, id) => {
                let outcome = match (env.result, env.error) {
                    (_, Some(error)) => Err(error_data(error)),
                    (result, None) => Ok(result.unwrap_or_else(null)),
                };
                ServerMessage::Response { id, outcome }
            }
        })
    }

    /// Decodes a message already parsed as JSON.
    pub fn from_value(v: &Value) -> Result<Self, String> {
        Self::decode(v.to_string().as_bytes())
    }

    /// The message as JSON, as the server sent it (less unknown members).
    pub fn to_value(&self) -> Value {
        let mut m = JsonObject::new();
        m.insert("jsonrpc".into(), "2.0".into());
        match self {
            ServerMessage::Request { id, method, params } => {
                m.insert("id".into(), id.to_value());
                m.insert("method".into(), method.as_str().into());
                m.insert("params".into(), Value::Object(params.clone()));
            }
            ServerMessage::Notification { method, params } => {
                m.insert("method".into(), method.as_str().into());
                if !params.is_null() {
                    m.insert("params".into(), params.clone());
                }
            }
            ServerMessage::Response { id, outcome } => {
                m.insert("id".into(), id.as_ref().map(RequestId::to_value).unwrap_or(Value::Null));
                match outcome {
                    Ok(result) => m.insert("result".into(), as_value(result)),
                    Err(error) => m.insert("error".into(), serde_json::to_value(error).unwrap_or(Value::Null)),
                };
            }
        }
        Value::Object(m)
    }

    /// The method of a request or notification.
    pub fn method(&self) -> Option<&str> {
        match self {
            ServerMessage::Request { method, .. } | ServerMessage::Notification { method, .. } => Some(method),
            ServerMessage::Response { .. } => None,
        }
    }

    /// Whether this is the response to request `id`.
    pub fn answers(&self, id: &RequestId) -> bool {
        matches!(self, ServerMessage::Response { id: Some(own), .. } if own == id)
    }

    /// The client request this message belongs to, as the JSON text of its
    /// id: a response's id; a notification's progress token, subscription
    /// id or related request (a client that uses its request ids for all
    /// three finds the request by them; a string that spells a number names
    /// the numeric id); a server request's related request.
    pub fn belongs_to(&self) -> Option<String> {
        let (params, notification) = match self {
            ServerMessage::Response { id, .. } => return id.as_ref().map(|id| id.as_json().to_owned()),
            ServerMessage::Request { params, .. } => (params.get("_meta"), false),
            ServerMessage::Notification { params, .. } => (params.get("_meta"), true),
        };
        let meta = |k: &str| params.and_then(|m| m.get(k));
        let named = match self {
            ServerMessage::Notification { params, .. } if notification => {
                params.get("progressToken").or_else(|| meta(SUBSCRIPTION_ID_KEY)).or_else(|| meta(RELATED_REQUEST_KEY))
            }
            _ => meta(RELATED_REQUEST_KEY),
        }?;
        Some(match named {
            Value::String(s) if s.parse::<i64>().is_ok() => s.clone(),
            other => other.to_string(),
        })
    }
}

/// Messages are equal when they say the same (results compared as JSON,
/// whatever their whitespace or key order).
impl PartialEq for ServerMessage {
    fn eq(&self, other: &Self) -> bool {
        use ServerMessage::*;
        match (self, other) {
            (Request { id, method, params }, Request { id: i, method: m, params: p }) => {
                (id, method, params) == (i, m, p)
            }
            (Notification { method, params }, Notification { method: m, params: p }) => (method, params) == (m, p),
            (Response { id, outcome }, Response { id: i, outcome: o }) => {
                id == i
                    && match (outcome, o) {
                        (Ok(a), Ok(b)) => a.get() == b.get() || as_value(a) == as_value(b),
                        (Err(a), Err(b)) => a == b,
                        _ => false,
                    }
            }
            _ => false,
        }
    }
}

/// A raw result as a JSON tree.
fn as_value(raw: &RawValue) -> Value {
    serde_json::from_str(raw.get()).unwrap_or_default()
}

/// `null`, the result of a response that gives none.
fn null() -> Box<RawValue> {
    RawValue::from_string("null".to_owned()).expect("null is JSON")
}

/// A JSON-RPC error object; one of the wrong shape is kept as its text.
fn error_data(error: Value) -> ErrorData {
    match ErrorData::deserialize(&error) {
        Ok(e) => e,
        Err(_) => {
            let code = error.get("code").and_then(Value::as_i64).and_then(|c| i32::try_from(c).ok()).unwrap_or(0);
            let message = match error.get("message").and_then(Value::as_str) {
                Some(m) => m.to_owned(),
                None => error.to_string(),
            };
            ErrorData { code: ErrorCode(code), message, data: error.get("data").cloned() }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn decode(v: Value) -> ServerMessage {
        ServerMessage::from_value(&v).unwrap()
    }

    #[test]
    fn each_kind_is_told_apart() {
        let r = decode(json!({"jsonrpc": "2.0", "id": 3, "method": "roots/list"}));
        assert!(
            matches!(&r, ServerMessage::Request { method, params, .. } if method == "roots/list" && params.is_empty())
        );
        let n = decode(json!({"jsonrpc": "2.0", "method": "notifications/progress", "params": {"progressToken": "7"}}));
        assert_eq!(n.method(), Some("notifications/progress"));
        assert_eq!(n.belongs_to().as_deref(), Some("7"));
        let ok = decode(json!({"jsonrpc": "2.0", "id": 7, "result": {"x": 1}}));
        assert!(ok.answers(&RequestId::number(7)));
        // The result is kept as the server wrote it.
        let text = ServerMessage::decode(br#"{"jsonrpc": "2.0", "id": 7, "result": {"x":  1}}"#).unwrap();
        assert!(matches!(&text, ServerMessage::Response { outcome: Ok(r), .. } if r.get() == r#"{"x":  1}"#));
        assert_eq!(text, ok);
        assert_eq!(ok.belongs_to().as_deref(), Some("7"));
        let err = decode(json!({"jsonrpc": "2.0", "id": "a", "error": {"code": -32602, "message": "bad"}}));
        let ServerMessage::Response { outcome: Err(e), .. } = err else { panic!() };
        assert_eq!((e.code, e.message.as_str()), (ErrorCode::INVALID_PARAMS, "bad"));
    }

    #[test]
    fn odd_shapes_are_read_or_refused() {
        assert!(ServerMessage::decode(b"{\"id\": 1, \"result\": {}}").is_err());
        // An id that is neither a string nor an integer is not a message.
        assert!(ServerMessage::decode(br#"{"jsonrpc": "2.0", "id": true, "result": {}}"#).is_err());
        assert!(ServerMessage::decode(br#"{"jsonrpc": "2.0", "id": 1.5, "result": {}}"#).is_err());
        assert!(ServerMessage::decode(b"not json").is_err());
        let e = decode(json!({"jsonrpc": "2.0", "id": null, "error": {"code": "x"}}));
        let ServerMessage::Response { id: None, outcome: Err(e) } = e else { panic!() };
        assert_eq!(e.code, ErrorCode(0));
        let related = decode(json!({"jsonrpc": "2.0", "id": 1, "method": "elicitation/create",
            "params": {"_meta": {RELATED_REQUEST_KEY: 12}}}));
        assert_eq!(related.belongs_to().as_deref(), Some("12"));
        let back = decode(related.to_value());
        assert_eq!(back, related);
    }
}
