//! The JSON-RPC 2.0 envelope: decoding one message, encoding responses and
//! notifications as single-line JSON.
//!
//! Request ids keep their exact JSON text ([`RequestId`] wraps a raw value),
//! so a numeric id stays a number, a string stays a string, and an integer too
//! large for `i64` is echoed byte for byte.

use serde::{Deserialize, Deserializer, Serialize};
use serde_json::value::RawValue;
use serde_json::Value;

use crate::error::{ErrorData, ProtocolError};
use crate::raw_object::{nests_deeper_than, raw_str, RawObject, MAX_DEPTH};
pub use crate::request_id::RequestId;

/// The JSON-RPC version string.
pub const JSONRPC_VERSION: &str = "2.0";

/// A decoded request.
#[derive(Debug, Clone, PartialEq)]
pub struct Request {
    /// The request id.
    pub id: RequestId,
    /// The method name.
    pub method: String,
    /// The params object, if any, as its text.
    pub params: Option<RawObject>,
}

/// A decoded notification.
#[derive(Debug, Clone, PartialEq)]
pub struct Notification {
    /// The method name.
    pub method: String,
    /// The params object, if any, as its text.
    pub params: Option<RawObject>,
}

/// A decoded response (a client answering a server request).
#[derive(Debug, Clone, PartialEq)]
pub struct Response {
    /// The id of the request answered.
    pub id: RequestId,
    /// The result, or the error as a value.
    pub outcome: Result<Value, Value>,
}

/// One incoming JSON-RPC message.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum Incoming {
    /// A request (has an id and a method).
    Request(Request),
    /// A notification (a method and no id).
    Notification(Notification),
    /// A response (an id and a result or error).
    Response(Response),
}

/// Why a message could not be decoded, with the id when one could be read.
#[derive(Debug, Clone, PartialEq)]
pub struct DecodeError {
    /// The request id, if the envelope got that far.
    pub id: Option<RequestId>,
    /// What was wrong.
    pub error: ProtocolError,
}

fn present<'de, D: Deserializer<'de>>(d: D) -> Result<Option<Box<RawValue>>, D::Error> {
    Box::<RawValue>::deserialize(d).map(Some)
}

/// The envelope, read without building a tree: `params` is kept as its
/// text for the typed parse that follows, the rest is borrowed.
#[derive(Deserialize)]
struct Envelope<'a> {
    #[serde(default, borrow)]
    jsonrpc: Option<&'a RawValue>,
    #[serde(default, deserialize_with = "present")]
    id: Option<Box<RawValue>>,
    #[serde(default, borrow)]
    method: Option<&'a RawValue>,
    #[serde(default)]
    params: Option<Box<RawValue>>,
    #[serde(default)]
    result: Option<Value>,
    #[serde(default)]
    error: Option<Value>,
}

/// The envelope of one message: a batch is refused without trusting its
/// content (but only if it is JSON), malformed JSON is a parse error, and
/// JSON of the wrong shape an invalid request.
fn envelope(bytes: &[u8]) -> Result<Envelope<'_>, ProtocolError> {
    let first = bytes.iter().find(|b| !b.is_ascii_whitespace());
    if first == Some(&b'[') {
        return Err(match serde_json::from_slice::<serde::de::IgnoredAny>(bytes) {
            Ok(_) => {
                ProtocolError::InvalidRequest("batch requests are not supported; send one message per request".into())
            }
            Err(e) => ProtocolError::Parse(e.to_string()),
        });
    }
    serde_json::from_slice(bytes).map_err(|e| {
        if e.is_data() {
            ProtocolError::InvalidRequest(e.to_string())
        } else {
            ProtocolError::Parse(e.to_string())
        }
    })
}

/// Decodes one JSON-RPC message from bytes (one stdio line or one POST body).
pub fn decode(bytes: &[u8]) -> Result<Incoming, DecodeError> {
    let env = envelope(bytes).map_err(|error| DecodeError { id: None, error })?;
    let id = match env.id {
        None => None,
        Some(raw) => Some(RequestId::from_raw(raw).map_err(|error| DecodeError { id: None, error })?),
    };
    let fail = |id: &Option<RequestId>, m: &str| DecodeError {
        id: id.clone(),
        error: ProtocolError::InvalidRequest(m.into()),
    };
    if env.jsonrpc.and_then(raw_str).as_deref() != Some(JSONRPC_VERSION) {
        return Err(fail(&id, "jsonrpc must be \"2.0\""));
    }
    let params = match env.params {
        None => None,
        Some(raw) if nests_deeper_than(raw.get(), MAX_DEPTH) => {
            let error = ProtocolError::Parse(format!("params nest deeper than {MAX_DEPTH} levels"));
            return Err(DecodeError { id: None, error });
        }
        Some(raw) => match RawObject::from_raw(raw) {
            Some(p) => Some(p),
            None => {
                return Err(DecodeError { id, error: ProtocolError::InvalidParams("params must be an object".into()) })
            }
        },
    };
    let method = env.method.map(|m| raw_str(m).map(std::borrow::Cow::into_owned));
    match (method, id) {
        (Some(Some(method)), Some(id)) => Ok(Incoming::Request(Request { id, method, params })),
        (Some(Some(method)), None) => Ok(Incoming::Notification(Notification { method, params })),
        (Some(None), id) => Err(fail(&id, "method must be a string")),
        (None, Some(id)) => match (env.result, env.error) {
            (Some(r), None) => Ok(Incoming::Response(Response { id, outcome: Ok(r) })),
            (None, Some(e)) => Ok(Incoming::Response(Response { id, outcome: Err(e) })),
            _ => Err(fail(&Some(id), "a message needs a method, or exactly one of result and error")),
        },
        (None, None) => Err(fail(&None, "a message needs a method")),
    }
}

#[derive(Serialize)]
struct ResultOut<'a, T: Serialize> {
    jsonrpc: &'static str,
    id: &'a RequestId,
    result: &'a T,
}

#[derive(Serialize)]
struct ErrorOut<'a> {
    jsonrpc: &'static str,
    id: Option<&'a RequestId>,
    error: &'a ErrorData,
}

#[derive(Serialize)]
struct NotificationOut<'a, T: Serialize> {
    jsonrpc: &'static str,
    method: &'a str,
    params: &'a T,
}

/// Encodes a success response as one line of JSON (no trailing newline).
pub fn encode_result<T: Serialize>(id: &RequestId, result: &T) -> Vec<u8> {
    serde_json::to_vec(&ResultOut { jsonrpc: JSONRPC_VERSION, id, result }).expect("results serialize")
}

/// Encodes a success response whose result is `result`'s object with the
/// members `extra` (JSON text: `"key":value` pairs, comma-separated)
/// appended, written straight into the response: no tree is built. `T`
/// must serialize as an object without the members `extra` names.
pub fn encode_result_with<T: Serialize>(id: &RequestId, result: &T, extra: &str) -> Vec<u8> {
    let mut out = Vec::with_capacity(128 + extra.len());
    out.extend_from_slice(b"{\"jsonrpc\":\"2.0\",\"id\":");
    out.extend_from_slice(id.as_json().as_bytes());
    out.extend_from_slice(b",\"result\":");
    serde_json::to_writer(&mut out, result).expect("results serialize");
    debug_assert_eq!(out.last(), Some(&b'}'), "the result is an object");
    out.pop();
    if !extra.is_empty() {
        if out.last() != Some(&b'{') {
            out.push(b',');
        }
        out.extend_from_slice(extra.as_bytes());
    }
    out.extend_from_slice(b"}}");
    out
}

/// Encodes an error response; `id: None` renders `"id": null`.
pub fn encode_error(id: Option<&RequestId>, error: &ErrorData) -> Vec<u8> {
    serde_json::to_vec(&ErrorOut { jsonrpc: JSONRPC_VERSION, id, error }).expect("errors serialize")
}

/// Encodes a notification.
pub fn encode_notification<T: Serialize>(method: &str, params: &T) -> Vec<u8> {
    serde_json::to_vec(&NotificationOut { jsonrpc: JSONRPC_VERSION, method, params }).expect("notifications serialize")
}

/// Encodes a server-to-client request (legacy era).
pub fn encode_request<T: Serialize>(id: &RequestId, method: &str, params: &T) -> Vec<u8> {
    #[derive(Serialize)]
    struct Out<'a, T: Serialize> {
        jsonrpc: &'static str,
        id: &'a RequestId,
        method: &'a str,
        params: &'a T,
    }
    serde_json::to_vec(&Out { jsonrpc: JSONRPC_VERSION, id, method, params }).expect("requests serialize")
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn req(text: &str) -> Request {
        match decode(text.as_bytes()).unwrap() {
            Incoming::Request(r) => r,
            other => panic!("not a request: {other:?}"),
        }
    }

    #[test]
    fn ids_keep_their_json_type_and_digits() {
        assert_eq!(req(r#"{"jsonrpc":"2.0","id":7,"method":"m"}"#).id.as_json(), "7");
        assert_eq!(req(r#"{"jsonrpc":"2.0","id":"7","method":"m"}"#).id.as_json(), "\"7\"");
        let huge = "123456789012345678901234567890";
        let r = req(&format!(r#"{{"jsonrpc":"2.0","id":{huge},"method":"m"}}"#));
        let out = encode_result(&r.id, &json!({}));
        assert_eq!(String::from_utf8(out).unwrap(), format!(r#"{{"jsonrpc":"2.0","id":{huge},"result":{{}}}}"#));
    }

    #[test]
    fn rejects_bad_envelopes_with_the_right_error() {
        type Check = fn(&ProtocolError) -> bool;
        let cases: &[(&[u8], Check)] = &[
            (b"{\"jsonrpc\":\"2.0\",", |e| matches!(e, ProtocolError::Parse(_))),
            (b"\xff\xfe", |e| matches!(e, ProtocolError::Parse(_))),
            (b"[]", |e| matches!(e, ProtocolError::InvalidRequest(_))),
            (b"[{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"m\"}]", |e| matches!(e, ProtocolError::InvalidRequest(_))),
            (b"42", |e| matches!(e, ProtocolError::InvalidRequest(_))),
            (br#"{"jsonrpc":"1.0","id":1,"method":"m"}"#, |e| matches!(e, ProtocolError::InvalidRequest(_))),
            (br#"{"jsonrpc":"2.0","id":null,"method":"m"}"#, |e| matches!(e, ProtocolError::InvalidRequest(_))),
            (br#"{"jsonrpc":"2.0","id":1.5,"method":"m"}"#, |e| matches!(e, ProtocolError::InvalidRequest(_))),
            (br#"{"jsonrpc":"2.0","id":{},"method":"m"}"#, |e| matches!(e, ProtocolError::InvalidRequest(_))),
            (br#"{"jsonrpc":"2.0","id":1,"method":5}"#, |e| matches!(e, ProtocolError::InvalidRequest(_))),
            (br#"{"jsonrpc":"2.0","id":1,"method":"m","params":[1]}"#, |e| {
                matches!(e, ProtocolError::InvalidParams(_))
            }),
        ];
        for (bytes, check) in cases {
            let err = decode(bytes).expect_err(&String::from_utf8_lossy(bytes));
            assert!(check(&err.error), "{}: {:?}", String::from_utf8_lossy(bytes), err.error);
        }
        let deep = format!("{}{}", "[".repeat(10_000), "]".repeat(10_000));
        assert!(decode(deep.as_bytes()).is_err());
        let deep = format!(
            r#"{{"jsonrpc":"2.0","id":3,"method":"m","params":{{"a":{}1{}}}}}"#,
            "[".repeat(5000),
            "]".repeat(5000)
        );
        assert!(matches!(decode(deep.as_bytes()).unwrap_err().error, ProtocolError::Parse(_)));
    }

    #[test]
    fn error_keeps_id_when_envelope_was_readable() {
        let err = decode(br#"{"jsonrpc":"2.0","id":"a","method":"m","params":3}"#).unwrap_err();
        assert_eq!(err.id.unwrap().as_json(), "\"a\"");
    }

    #[test]
    fn notifications_and_responses() {
        assert!(matches!(
            decode(br#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1}}"#).unwrap(),
            Incoming::Notification(_)
        ));
        assert!(matches!(decode(br#"{"jsonrpc":"2.0","id":1,"result":{}}"#).unwrap(), Incoming::Response(_)));
    }

    #[test]
    fn a_result_with_members_appended_is_the_same_json() {
        let id = RequestId::number(4);
        let out = encode_result_with(&id, &json!({"content": []}), r#""resultType":"complete""#);
        let v: Value = serde_json::from_slice(&out).unwrap();
        assert_eq!(v, json!({"jsonrpc": "2.0", "id": 4, "result": {"content": [], "resultType": "complete"}}));
        let out = encode_result_with(&id, &json!({}), r#""a":1"#);
        assert_eq!(serde_json::from_slice::<Value>(&out).unwrap()["result"], json!({"a": 1}));
        let out = encode_result_with(&id, &json!({"b": 2}), "");
        assert_eq!(serde_json::from_slice::<Value>(&out).unwrap()["result"], json!({"b": 2}));
    }

    #[test]
    fn encodes_single_lines() {
        let id = RequestId::string("x");
        let e = encode_error(Some(&id), &ErrorData::internal("boom\nline"));
        assert!(!e.contains(&b'\n'));
        assert_eq!(
            String::from_utf8(encode_error(None, &ErrorData::internal("x"))).unwrap(),
            r#"{"jsonrpc":"2.0","id":null,"error":{"code":-32603,"message":"x"}}"#
        );
        let n = encode_notification("notifications/progress", &json!({"progress": 1}));
        assert_eq!(n, br#"{"jsonrpc":"2.0","method":"notifications/progress","params":{"progress":1}}"#);
    }
}
