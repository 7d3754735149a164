//! What a client puts on the wire for one request, without doing any I/O:
//! the stateless `_meta` envelope and the standard HTTP headers
//! (`MCP-Protocol-Version`, `Mcp-Method`, `Mcp-Name`, `Mcp-Param-*`).

use mcp_protocol::header::{encode_value, header_form};
use mcp_protocol::header_params::HeaderParam;
use mcp_protocol::meta::{CLIENT_CAPABILITIES_KEY, CLIENT_INFO_KEY, LOG_LEVEL_KEY, PROTOCOL_VERSION_KEY};
use mcp_protocol::request::item_member;
use serde_json::{json, Map, Value};

use super::error::ClientError;
use super::options::ClientOptions;

/// The `_meta` entries every stateless request of a client carries besides
/// the version: its identity and capabilities (and its log level), built once.
pub(crate) fn client_meta(options: &ClientOptions) -> Map<String, Value> {
    let mut meta = Map::new();
    meta.insert(CLIENT_INFO_KEY.into(), serde_json::to_value(&options.info).unwrap_or(Value::Null));
    meta.insert(CLIENT_CAPABILITIES_KEY.into(), options.capabilities());
    if let Some(level) = options.log_level {
        meta.insert(LOG_LEVEL_KEY.into(), serde_json::to_value(level).unwrap_or(Value::Null));
    }
    meta
}

/// Stamps a stateless request's `_meta` with the version and the client's
/// entries ([`client_meta`]) it does not carry already (a request's own
/// capabilities stay), keeping any other keys.
pub(crate) fn stamp_meta(params: &mut Map<String, Value>, version: &str, client: &Map<String, Value>) {
    let meta = params.entry("_meta").or_insert_with(|| json!({}));
    if !meta.is_object() {
        *meta = json!({});
    }
    let meta = meta.as_object_mut().expect("an object");
    meta.insert(PROTOCOL_VERSION_KEY.into(), json!(version));
    for (k, v) in client {
        if !meta.contains_key(k) {
            meta.insert(k.clone(), v.clone());
        }
    }
}

/// The name a request is about, mirrored into `Mcp-Name`: the member the
/// protocol crate's method list names for it (a tool or prompt name, a
/// resource URI, a task id).
fn item_name<'a>(method: &str, params: &'a Map<String, Value>) -> Option<&'a str> {
    let (_, member) = item_member(method)?;
    params.get(member).and_then(Value::as_str)
}

/// Request params: an object (`null` reads as `{}`).
pub(crate) fn object(v: Value) -> Result<Map<String, Value>, ClientError> {
    match v {
        Value::Object(m) => Ok(m),
        Value::Null => Ok(Map::new()),
        other => Err(ClientError::Input(format!("params must be a JSON object, not {other}"))),
    }
}

/// The standard headers of a stateless request: the method, its item and
/// the arguments its tool's schema marks with `x-mcp-header` (a null or
/// absent argument is left out; values a header cannot carry go as Base64).
pub(crate) fn standard_headers(
    method: &str,
    params: &Map<String, Value>,
    tool_params: &[HeaderParam],
) -> Vec<(String, String)> {
    let mut out = vec![("Mcp-Method".to_owned(), method.to_owned())];
    if let Some(name) = item_name(method, params) {
        out.push(("Mcp-Name".to_owned(), encode_value(name)));
    }
    if method == "tools/call" {
        if let Some(args) = params.get("arguments").and_then(Value::as_object) {
            for p in tool_params {
                if let Some(v) = p.value_in(args).and_then(header_form) {
                    out.push((p.header_name(), encode_value(&v)));
                }
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use mcp_protocol::header_params::header_params;

    #[test]
    fn the_envelope_keeps_other_meta_keys() {
        let mut p = json!({"_meta": {"progressToken": 3}, "name": "x"}).as_object().unwrap().clone();
        stamp_meta(&mut p, "2026-07-28", &client_meta(&ClientOptions::new("c", "1")));
        let meta = &p["_meta"];
        assert_eq!(meta["progressToken"], 3);
        assert_eq!(meta[PROTOCOL_VERSION_KEY], "2026-07-28");
        assert_eq!(meta[CLIENT_INFO_KEY]["name"], "c");
        assert_eq!(meta[CLIENT_CAPABILITIES_KEY], json!({}));
    }

    #[test]
    fn headers_mirror_the_item_and_annotated_arguments() {
        let schema = json!({"type": "object", "properties": {
            "region": {"type": "string", "x-mcp-header": "Region"},
            "n": {"type": "integer", "x-mcp-header": "N"},
            "note": {"type": "string", "x-mcp-header": "Note"}
        }});
        let tp = header_params(&schema).unwrap();
        let p = json!({"name": "déjà", "arguments": {"region": "eu west", "n": 4, "note": null}});
        let h = standard_headers("tools/call", p.as_object().unwrap(), &tp);
        let get = |k: &str| h.iter().find(|(n, _)| n == k).map(|(_, v)| v.as_str());
        assert_eq!(get("Mcp-Method"), Some("tools/call"));
        assert_eq!(get("Mcp-Name"), Some("=?base64?ZMOpasOg?="));
        assert_eq!(get("Mcp-Param-Region"), Some("eu west"));
        assert_eq!(get("Mcp-Param-N"), Some("4"));
        assert_eq!(get("Mcp-Param-Note"), None);
        let h = standard_headers("tools/list", &Map::new(), &[]);
        assert_eq!(h.len(), 1);
        let p = json!({"taskId": "t-1"});
        let h = standard_headers("tasks/get", p.as_object().unwrap(), &[]);
        assert!(h.contains(&("Mcp-Name".to_owned(), "t-1".to_owned())));
    }
}
