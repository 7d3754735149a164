//! A client's requests as they go on the wire: stamped with what their era
//! needs (a stateless request's `_meta` and standard headers), encoded once.

use serde::Serialize;
use serde_json::value::RawValue;
use serde_json::Value;

use super::era::Spoken;
use crate::header_params::HeaderParam;
use crate::legacy::method as legacy;
use crate::meta::{CLIENT_CAPABILITIES_KEY, CLIENT_INFO_KEY, LOG_LEVEL_KEY};
use crate::model::{ClientCapabilities, Implementation, JsonObject, LoggingLevel};
use crate::outgoing::{params_headers, Stamped};
use crate::params::Params;
use crate::request::method;
use crate::{ErrorData, ProtocolVersion, RequestId};

/// One message encoded: its bytes and the HTTP headers it goes with
/// (ignored over stdio).
#[derive(Debug, Clone, PartialEq)]
pub struct Encoded {
    /// The JSON-RPC message.
    pub body: Vec<u8>,
    /// Its headers (`MCP-Protocol-Version`, `Mcp-Method`, `Mcp-Name`, `Mcp-Param-*`).
    pub headers: Vec<(String, String)>,
}

/// Who the client is, as every request of its says it: the `_meta`
/// entries of a stateless request and the params of `initialize`, built
/// once.
#[derive(Debug, Clone)]
pub struct Session {
    info: Implementation,
    capabilities: ClientCapabilities,
    /// `clientInfo`, `clientCapabilities` and the log level as `_meta`
    /// entries, encoded once.
    meta: Vec<(String, Box<RawValue>)>,
}

/// What one request says of itself in its `_meta`, beyond its params.
#[derive(Debug, Clone, Copy, Default)]
pub struct Marks<'a> {
    /// It asks for progress (its id is the token).
    pub progress: bool,
    /// Its own capabilities, in place of the session's.
    pub capabilities: Option<&'a ClientCapabilities>,
}

/// A request as it goes on the wire, its params borrowed.
#[derive(Serialize)]
struct RequestBody<'a> {
    jsonrpc: &'static str,
    id: i64,
    method: &'a str,
    params: Stamped<'a>,
}

impl Session {
    /// The session of a client with this identity and these capabilities,
    /// asking for `log_level` (statelessly in `_meta`).
    pub fn new(info: Implementation, capabilities: ClientCapabilities, log_level: Option<LoggingLevel>) -> Self {
        let mut meta =
            vec![(CLIENT_INFO_KEY.to_owned(), raw(&info)), (CLIENT_CAPABILITIES_KEY.to_owned(), raw(&capabilities))];
        if let Some(level) = log_level {
            meta.push((LOG_LEVEL_KEY.to_owned(), raw(&level)));
        }
        Session { info, capabilities, meta }
    }

    /// The capabilities the client declares.
    pub fn capabilities(&self) -> &ClientCapabilities {
        &self.capabilities
    }

    /// The params of `initialize` offering `version`.
    pub fn initialize_params(&self, version: ProtocolVersion) -> JsonObject {
        let mut params = JsonObject::new();
        params.insert("protocolVersion".into(), version.as_str().into());
        params.insert("capabilities".into(), serde_json::to_value(&self.capabilities).unwrap_or(Value::Null));
        params.insert("clientInfo".into(), serde_json::to_value(&self.info).unwrap_or(Value::Null));
        params
    }

    /// Request `id` in `era` (`None`: before one is chosen, as
    /// `initialize`), with what it says of itself (`marks`): its `_meta`
    /// is stamped as it is encoded (`params` stay as they are, so a retry is
    /// stamped the same way) and, when stateless, its standard headers made,
    /// with the `x-mcp-header` arguments of its tool (`tool_params`).
    pub fn request(
        &self,
        era: Option<Spoken>,
        id: i64,
        method: &str,
        params: &Params,
        marks: Marks<'_>,
        tool_params: &[HeaderParam],
    ) -> Encoded {
        let mut stamped =
            Stamped { progress: marks.progress.then_some(id), capabilities: marks.capabilities, ..Stamped::of(params) };
        let mut headers = Vec::new();
        if let Some(Spoken::Stateless(v)) = era {
            (stamped.version, stamped.client) = (Some(v.as_str()), &self.meta);
            headers = params_headers(method, params, tool_params);
            headers.push(("MCP-Protocol-Version".into(), v.as_str().to_owned()));
        }
        let body = serde_json::to_vec(&RequestBody { jsonrpc: "2.0", id, method, params: stamped });
        Encoded { body: body.expect("a request serializes"), headers }
    }

    /// A notification (`params` `None`: without params).
    pub fn notification(era: Option<Spoken>, method: &str, params: Option<JsonObject>) -> Encoded {
        let mut m = JsonObject::new();
        m.insert("jsonrpc".into(), "2.0".into());
        m.insert("method".into(), method.into());
        if let Some(p) = params {
            m.insert("params".into(), Value::Object(p));
        }
        Encoded {
            body: serde_json::to_vec(&m).expect("a notification serializes"),
            headers: message_headers(era, Some(method)),
        }
    }

    /// `notifications/cancelled` for request `id`.
    pub fn cancelled(era: Option<Spoken>, id: i64, reason: &str) -> Encoded {
        let mut params = JsonObject::new();
        params.insert("requestId".into(), Value::from(id));
        params.insert("reason".into(), reason.into());
        Self::notification(era, method::CANCELLED, Some(params))
    }

    /// The answer to a server's request `id`.
    pub fn response(era: Option<Spoken>, id: &RequestId, outcome: Result<Value, ErrorData>) -> Encoded {
        let body = match outcome {
            Ok(result) => crate::jsonrpc::encode_result(id, &result),
            Err(error) => crate::jsonrpc::encode_error(Some(id), &error),
        };
        Encoded { body, headers: message_headers(era, None) }
    }

    /// `notifications/initialized`, the end of the legacy handshake.
    pub fn initialized() -> Encoded {
        Self::notification(None, legacy::INITIALIZED, None)
    }
}

/// `v` as JSON text (`null` if it does not serialize).
fn raw<T: Serialize>(v: &T) -> Box<RawValue> {
    serde_json::value::to_raw_value(v)
        .unwrap_or_else(|_| RawValue::from_string("null".to_owned()).expect("null is JSON"))
}

/// The headers of a message that expects no answer.
fn message_headers(era: Option<Spoken>, method: Option<&str>) -> Vec<(String, String)> {
    let mut headers = Vec::new();
    if let Some(Spoken::Stateless(v)) = era {
        headers.push(("MCP-Protocol-Version".into(), v.as_str().to_owned()));
        if let Some(m) = method {
            headers.push(("Mcp-Method".into(), m.to_owned()));
        }
    }
    headers
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::meta::{PROGRESS_TOKEN_KEY, PROTOCOL_VERSION_KEY};
    use serde_json::json;

    #[test]
    fn a_stateless_request_is_stamped_and_a_legacy_one_is_not() {
        let session = Session::new(Implementation::new("c", "1"), ClientCapabilities::roots(), None);
        let p = Params::new(json!({"_meta": {"progressToken": 3}, "name": "x"}).as_object().unwrap().clone());
        let era = Some(Spoken::Stateless(ProtocolVersion::V2026_07_28));
        let out = session.request(era, 9, method::TOOLS_CALL, &p, Marks::default(), &[]);
        // Stamped on the wire, not in the params (a retry is stamped the same way).
        assert_eq!(json!(p.members()), json!({"_meta": {"progressToken": 3}, "name": "x"}));
        assert_eq!(session.request(era, 9, method::TOOLS_CALL, &p, Marks::default(), &[]), out);
        let sent: Value = serde_json::from_slice(&out.body).unwrap();
        let meta = &sent["params"]["_meta"];
        assert_eq!(
            (meta["progressToken"].clone(), meta[PROTOCOL_VERSION_KEY].clone()),
            (json!(3), json!("2026-07-28"))
        );
        assert_eq!(meta[CLIENT_INFO_KEY]["name"], "c");
        assert_eq!(meta[CLIENT_CAPABILITIES_KEY], json!({"roots": {}}));
        assert!(out.headers.contains(&("Mcp-Name".into(), "x".into())));
        let legacy_era = Some(Spoken::Legacy(ProtocolVersion::V2025_11_25));
        let legacy = session.request(legacy_era, 1, "tools/list", &p, Marks::default(), &[]);
        let sent: Value = serde_json::from_slice(&legacy.body).unwrap();
        assert!(legacy.headers.is_empty());
        assert_eq!(sent["params"], json!({"_meta": {"progressToken": 3}, "name": "x"}));
    }

    #[test]
    fn raw_arguments_go_as_their_text_and_are_read_only_for_header_parameters() {
        let session = Session::new(Implementation::new("c", "1"), ClientCapabilities::default(), None);
        let text = r#"{"region":"eu", "n":1.50}"#;
        let args = crate::RawObject::from_raw(RawValue::from_string(text.into()).unwrap()).unwrap();
        let name = json!({"name": "t", "arguments": {"stale": true}}).as_object().unwrap().clone();
        let p = Params::new(name).with_raw("arguments", args);
        let era = Some(Spoken::Stateless(ProtocolVersion::V2026_07_28));
        let schema = json!({"type": "object", "properties": {"region": {"type": "string", "x-mcp-header": "Region"}}});
        let tool_params = crate::header_params::header_params(&schema).unwrap();
        let out = session.request(era, 5, method::TOOLS_CALL, &p, Marks::default(), &tool_params);
        // The caller's text as it came (spacing and number form kept), once.
        let body = std::str::from_utf8(&out.body).unwrap();
        assert!(body.contains(&format!(r#""arguments":{text}"#)), "{body}");
        assert_eq!(body.matches("arguments").count(), 1, "{body}");
        let sent: Value = serde_json::from_slice(&out.body).unwrap();
        assert_eq!(sent["params"]["name"], "t");
        assert_eq!(sent["params"]["_meta"][PROTOCOL_VERSION_KEY], "2026-07-28");
        assert!(out.headers.contains(&("Mcp-Param-Region".into(), "eu".into())), "{:?}", out.headers);
        // Legacy: no stamp, no headers; the text all the same.
        let legacy = session.request(
            Some(Spoken::Legacy(ProtocolVersion::V2025_11_25)),
            6,
            method::TOOLS_CALL,
            &p,
            Marks::default(),
            &tool_params,
        );
        let body = std::str::from_utf8(&legacy.body).unwrap();
        assert!(body.contains(&format!(r#""params":{{"name":"t","arguments":{text}}}"#)), "{body}");
    }

    #[test]
    fn marks_and_messages() {
        let session = Session::new(Implementation::new("c", "1"), ClientCapabilities::roots(), None);
        let caps = ClientCapabilities::sampling();
        let marks = Marks { progress: true, capabilities: Some(&caps) };
        let legacy = Some(Spoken::Legacy(ProtocolVersion::V2025_11_25));
        let sent = session.request(legacy, 4, "tools/call", &Params::default(), marks, &[]);
        let sent: Value = serde_json::from_slice(&sent.body).unwrap();
        assert_eq!(
            sent["params"],
            json!({"_meta": {PROGRESS_TOKEN_KEY: 4, CLIENT_CAPABILITIES_KEY: {"sampling": {}}}})
        );
        let c = Session::cancelled(Some(Spoken::Stateless(ProtocolVersion::V2026_07_28)), 4, "gone");
        let sent: Value = serde_json::from_slice(&c.body).unwrap();
        assert_eq!(sent["params"], json!({"requestId": 4, "reason": "gone"}));
        assert!(c.headers.contains(&("Mcp-Method".into(), "notifications/cancelled".into())));
        let r = Session::response(None, &RequestId::number(2), Err(ErrorData::internal("no")));
        let sent: Value = serde_json::from_slice(&r.body).unwrap();
        assert_eq!(sent["error"]["code"], -32603);
    }
}
