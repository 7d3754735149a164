//! What a client puts on the wire for one stateless request, without any
//! I/O: the `_meta` stamp (version, identity, capabilities) and the
//! standard HTTP headers (`Mcp-Method`, `Mcp-Name`, `Mcp-Param-*`). Every
//! client of this project — the MCP client, the gateway's upstream side,
//! the in-process test client — builds its requests with these.

use serde_json::{Map, Value};

use crate::header::{encode_value, header_form};
use crate::header_params::HeaderParam;
use crate::meta::PROTOCOL_VERSION_KEY;
use crate::request::{item_member, method};

/// Stamps a stateless request's `_meta` with `version` and the client's
/// own entries (`client`: identity, capabilities, log level) it does not
/// carry already — a request's own capabilities stay — keeping any other
/// keys. A `_meta` that is not an object is replaced.
pub fn stamp_meta(params: &mut Map<String, Value>, version: &str, client: &Map<String, Value>) {
    let meta = params.entry("_meta").or_insert_with(|| Value::Object(Map::new()));
    if !meta.is_object() {
        *meta = Value::Object(Map::new());
    }
    let Value::Object(meta) = meta else { return };
    meta.insert(PROTOCOL_VERSION_KEY.into(), Value::String(version.to_owned()));
    for (k, v) in client {
        if !meta.contains_key(k) {
            meta.insert(k.clone(), v.clone());
        }
    }
}

/// The name a request is about, mirrored into `Mcp-Name`: the member the
/// method list names for it (a tool or prompt name, a resource URI, a
/// task id).
pub fn item_name<'a>(method: &str, params: &'a Map<String, Value>) -> Option<&'a str> {
    let (_, member) = item_member(method)?;
    params.get(member).and_then(Value::as_str)
}

/// The standard headers of a stateless request: the method, its item and,
/// for `tools/call`, the arguments its tool's schema marks with
/// `x-mcp-header` (`tool_params`; a null or absent argument is left out,
/// a value a header cannot carry goes as Base64).
pub fn standard_headers(
    method: &str,
    params: &Map<String, Value>,
    tool_params: &[HeaderParam],
) -> Vec<(String, String)> {
    let mut out = vec![("Mcp-Method".to_owned(), method.to_owned())];
    if let Some(name) = item_name(method, params) {
        out.push(("Mcp-Name".to_owned(), encode_value(name)));
    }
    if method == method::TOOLS_CALL {
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
    use crate::header_params::header_params;
    use crate::meta::CLIENT_INFO_KEY;
    use serde_json::json;

    #[test]
    fn the_stamp_keeps_other_meta_keys_and_the_requests_own() {
        let mut p = json!({"_meta": {"progressToken": 3, CLIENT_INFO_KEY: {"name": "own"}}, "name": "x"});
        let client = json!({CLIENT_INFO_KEY: {"name": "c"}, "io.modelcontextprotocol/clientCapabilities": {}});
        stamp_meta(p.as_object_mut().unwrap(), "2026-07-28", client.as_object().unwrap());
        let meta = &p["_meta"];
        assert_eq!(meta["progressToken"], 3);
        assert_eq!(meta[PROTOCOL_VERSION_KEY], "2026-07-28");
        assert_eq!(meta[CLIENT_INFO_KEY]["name"], "own");
        assert_eq!(meta["io.modelcontextprotocol/clientCapabilities"], json!({}));
        let mut p = json!({"_meta": 7});
        stamp_meta(p.as_object_mut().unwrap(), "2026-07-28", &Map::new());
        assert_eq!(p["_meta"], json!({PROTOCOL_VERSION_KEY: "2026-07-28"}));
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
        // Annotated arguments of another method are not headers.
        let h = standard_headers("prompts/get", p.as_object().unwrap(), &tp);
        assert_eq!(h.len(), 2);
        let h = standard_headers("tools/list", &Map::new(), &[]);
        assert_eq!(h.len(), 1);
        let p = json!({"taskId": "t-1"});
        let h = standard_headers("tasks/get", p.as_object().unwrap(), &[]);
        assert!(h.contains(&("Mcp-Name".to_owned(), "t-1".to_owned())));
    }
}
