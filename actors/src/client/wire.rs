//! The client's own `_meta` entries and params, built once; the stamp and
//! the standard headers are the protocol crate's
//! ([`mcp_protocol::outgoing`]).

use mcp_protocol::meta::{CLIENT_CAPABILITIES_KEY, CLIENT_INFO_KEY, LOG_LEVEL_KEY};
use serde_json::{Map, Value};

use super::error::ClientError;
use super::options::ClientOptions;

/// The `_meta` entries every stateless request of a client carries besides
/// the version: its identity and capabilities (and its log level), built
/// once; [`stamp_meta`](mcp_protocol::outgoing::stamp_meta) puts them on.
pub(crate) fn client_meta(options: &ClientOptions) -> Map<String, Value> {
    let mut meta = Map::new();
    meta.insert(CLIENT_INFO_KEY.into(), serde_json::to_value(&options.info).unwrap_or(Value::Null));
    meta.insert(CLIENT_CAPABILITIES_KEY.into(), options.capabilities());
    if let Some(level) = options.log_level {
        meta.insert(LOG_LEVEL_KEY.into(), serde_json::to_value(level).unwrap_or(Value::Null));
    }
    meta
}

/// Request params: an object (`null` reads as `{}`).
pub(crate) fn object(v: Value) -> Result<Map<String, Value>, ClientError> {
    match v {
        Value::Object(m) => Ok(m),
        Value::Null => Ok(Map::new()),
        other => Err(ClientError::Input(format!("params must be a JSON object, not {other}"))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use mcp_protocol::meta::PROTOCOL_VERSION_KEY;
    use mcp_protocol::outgoing::stamp_meta;
    use serde_json::json;

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
}
