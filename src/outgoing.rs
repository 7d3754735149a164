//! What a client puts on the wire for one stateless request, without any
//! I/O: the `_meta` stamp (version, identity, capabilities) and the
//! standard HTTP headers (`Mcp-Method`, `Mcp-Name`, `Mcp-Param-*`). Every
//! client of this project — the MCP client, the gateway's upstream side,
//! the in-process test client — builds its requests with these.

use serde::ser::{Serialize, SerializeMap, Serializer};
use serde_json::value::RawValue;
use serde_json::{Map, Value};

use crate::header::{encode_value, header_form};
use crate::header_params::HeaderParam;
use crate::meta::{CLIENT_CAPABILITIES_KEY, PROGRESS_TOKEN_KEY, PROTOCOL_VERSION_KEY};
use crate::model::ClientCapabilities;
use crate::params::Params;
use crate::raw_object::RawObject;
use crate::request::{item_member, method};

/// A request's params as they go on the wire: its own members, and a
/// `_meta` stamped with what the request says of itself — a stateless
/// request's `version` and the client's own entries (`client`: identity,
/// capabilities, log level, each already JSON) it does not carry already,
/// and for any request its progress token and its own capabilities (over
/// the client's) — keeping any other keys. A `_meta` that is not an object
/// is replaced. The params themselves are not touched: a retry is stamped
/// again, the same way.
#[derive(Clone, Copy)]
pub struct Stamped<'a> {
    /// The request's params.
    pub params: &'a Map<String, Value>,
    /// Members written as their text, after `params` (and over a member of
    /// the same name there).
    pub raw: &'a [(String, RawObject)],
    /// The protocol version (`None`: a legacy request, which carries none).
    pub version: Option<&'a str>,
    /// The client's `_meta` entries, encoded once.
    pub client: &'a [(String, Box<RawValue>)],
    /// Its progress token, when the request asks for progress.
    pub progress: Option<i64>,
    /// Its own capabilities, in place of the client's.
    pub capabilities: Option<&'a ClientCapabilities>,
}

impl<'a> Stamped<'a> {
    /// `params` as they are, to be stamped with what is set next.
    pub fn new(params: &'a Map<String, Value>) -> Self {
        Stamped { params, raw: &[], version: None, client: &[], progress: None, capabilities: None }
    }

    /// The members and raw members of `params`, to be stamped likewise.
    pub fn of(params: &'a Params) -> Self {
        Stamped { raw: params.raw(), ..Stamped::new(params.members()) }
    }

    /// Whether nothing is stamped (the params go as they are).
    fn is_plain(&self) -> bool {
        self.version.is_none() && self.client.is_empty() && self.progress.is_none() && self.capabilities.is_none()
    }

    /// Whether `key` is stamped by the request itself (its own entries give way).
    fn stamps(&self, key: &str) -> bool {
        (key == PROTOCOL_VERSION_KEY && self.version.is_some())
            || (key == PROGRESS_TOKEN_KEY && self.progress.is_some())
            || (key == CLIENT_CAPABILITIES_KEY && self.capabilities.is_some())
    }
}

impl Serialize for Stamped<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let plain = self.is_plain();
        if plain && self.raw.is_empty() {
            return self.params.serialize(s);
        }
        let is_raw = |k: &str| self.raw.iter().any(|(r, _)| r == k);
        let mut map = s.serialize_map(None)?;
        for (k, v) in self.params.iter().filter(|(k, _)| *k != "_meta" && !is_raw(k)) {
            map.serialize_entry(k, v)?;
        }
        for (k, v) in self.raw {
            map.serialize_entry(k, v)?;
        }
        match (plain, self.params.get("_meta")) {
            (false, _) => map.serialize_entry("_meta", &StampedMeta(*self))?,
            (true, Some(own)) => map.serialize_entry("_meta", own)?,
            (true, None) => {}
        }
        map.end()
    }
}

/// The `_meta` of [`Stamped`].
struct StampedMeta<'a>(Stamped<'a>);

impl Serialize for StampedMeta<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let st = &self.0;
        let own = st.params.get("_meta").and_then(Value::as_object);
        // A few keys: a look along them costs less than hashing.
        let carried = |k: &str| own.is_some_and(|m| m.keys().any(|o| o == k)) || st.stamps(k);
        let mut map = s.serialize_map(None)?;
        for (k, v) in own.into_iter().flatten().filter(|(k, _)| !st.stamps(k)) {
            map.serialize_entry(k, v)?;
        }
        if let Some(version) = st.version {
            map.serialize_entry(PROTOCOL_VERSION_KEY, version)?;
        }
        if let Some(token) = st.progress {
            map.serialize_entry(PROGRESS_TOKEN_KEY, &token)?;
        }
        if let Some(caps) = st.capabilities {
            map.serialize_entry(CLIENT_CAPABILITIES_KEY, caps)?;
        }
        for (k, v) in st.client.iter().filter(|(k, _)| !carried(k)) {
            map.serialize_entry(k, v)?;
        }
        map.end()
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
    headers_with(method, params, params.get("arguments").and_then(Value::as_object), tool_params)
}

/// [`standard_headers`] of [`Params`]: raw arguments are read only when the
/// tool has header parameters.
pub fn params_headers(method: &str, params: &Params, tool_params: &[HeaderParam]) -> Vec<(String, String)> {
    let args = match method == method::TOOLS_CALL && !tool_params.is_empty() {
        true => params.object("arguments"),
        false => None,
    };
    headers_with(method, params.members(), args.as_deref(), tool_params)
}

/// The headers of `method` about `params`, with the tool call's `args`.
fn headers_with(
    method: &str,
    params: &Map<String, Value>,
    args: Option<&Map<String, Value>>,
    tool_params: &[HeaderParam],
) -> Vec<(String, String)> {
    let mut out = vec![("Mcp-Method".to_owned(), method.to_owned())];
    if let Some(name) = item_name(method, params) {
        out.push(("Mcp-Name".to_owned(), encode_value(name)));
    }
    if let Some(args) = args.filter(|_| method == method::TOOLS_CALL) {
        for p in tool_params {
            if let Some(v) = p.value_in(args).and_then(header_form) {
                out.push((p.header_name(), encode_value(&v)));
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

    /// `params` stamped, as JSON.
    fn stamped(params: Value, client: Value) -> Value {
        let client: Vec<(String, Box<RawValue>)> = client
            .as_object()
            .unwrap()
            .iter()
            .map(|(k, v)| (k.clone(), serde_json::value::to_raw_value(v).unwrap()))
            .collect();
        let stamp =
            Stamped { version: Some("2026-07-28"), client: &client, ..Stamped::new(params.as_object().unwrap()) };
        serde_json::to_value(stamp).unwrap()
    }

    #[test]
    fn the_stamp_keeps_other_meta_keys_and_the_requests_own() {
        let p = json!({"_meta": {"progressToken": 3, CLIENT_INFO_KEY: {"name": "own"}}, "name": "x"});
        let client = json!({CLIENT_INFO_KEY: {"name": "c"}, "io.modelcontextprotocol/clientCapabilities": {}});
        let p = stamped(p, client);
        let meta = &p["_meta"];
        assert_eq!(meta["progressToken"], 3);
        assert_eq!(meta[PROTOCOL_VERSION_KEY], "2026-07-28");
        assert_eq!(meta[CLIENT_INFO_KEY]["name"], "own");
        assert_eq!(meta["io.modelcontextprotocol/clientCapabilities"], json!({}));
        assert_eq!(p["name"], "x");
        // A version of the request's own is the stamp's; a `_meta` that is not an object is replaced.
        let p = stamped(json!({"_meta": {PROTOCOL_VERSION_KEY: "old"}}), json!({}));
        assert_eq!(p, json!({"_meta": {PROTOCOL_VERSION_KEY: "2026-07-28"}}));
        let p = stamped(json!({"_meta": 7}), json!({}));
        assert_eq!(p["_meta"], json!({PROTOCOL_VERSION_KEY: "2026-07-28"}));
    }

    #[test]
    fn a_request_marks_its_progress_and_its_own_capabilities() {
        let p = json!({"name": "x", "_meta": {PROGRESS_TOKEN_KEY: "old", "k": 1}});
        let client = [(CLIENT_CAPABILITIES_KEY.to_owned(), serde_json::value::to_raw_value(&json!({})).unwrap())];
        let caps = ClientCapabilities::sampling();
        let marked = Stamped { progress: Some(4), capabilities: Some(&caps), ..Stamped::new(p.as_object().unwrap()) };
        // A legacy request: its marks, no version, nothing of the client's.
        let legacy = serde_json::to_value(marked).unwrap();
        assert_eq!(legacy["_meta"], json!({"k": 1, PROGRESS_TOKEN_KEY: 4, CLIENT_CAPABILITIES_KEY: {"sampling": {}}}));
        // A stateless one: its own capabilities over the client's.
        let stateless = Stamped { version: Some("2026-07-28"), client: &client, ..marked };
        let sent = serde_json::to_value(stateless).unwrap();
        assert_eq!(sent["_meta"][CLIENT_CAPABILITIES_KEY], json!({"sampling": {}}));
        assert_eq!(sent["_meta"][PROTOCOL_VERSION_KEY], "2026-07-28");
        // Nothing to stamp: the params as they are.
        assert_eq!(serde_json::to_value(Stamped::new(p.as_object().unwrap())).unwrap(), p);
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
