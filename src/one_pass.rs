//! [`decode_request`]: the common message — a well-formed stateless request —
//! read in one pass: the envelope, the method's typed params and the keys of
//! `params._meta`, without keeping `params` as text to parse a second time.
//!
//! It reads only messages it can read completely and in order (`method`
//! before `params`, no member twice, no member the envelope does not define,
//! strings without escapes) and gives `None` for anything else. The caller
//! then decodes the message the general way ([`crate::jsonrpc::decode`],
//! [`crate::ClientRequest::parse_with_meta`] or the slow path after it),
//! which finds every error in the order the specification sets; for the
//! messages this reads, both ways give the same request.

use std::fmt;

use serde::de::{Error as _, MapAccess, Visitor};
use serde::Deserializer;
use serde_json::value::RawValue;

use crate::jsonrpc::{RequestId, JSONRPC_VERSION};
use crate::meta::MetaKeys;
use crate::raw_object::{nests_deeper_than, MAX_DEPTH};
use crate::request::{ClientRequest, ParamsSeed};

/// A request read in one pass, borrowing from its message.
#[derive(Debug)]
pub struct OnePass<'a> {
    /// The request id.
    pub id: RequestId,
    /// The method.
    pub method: &'a str,
    /// The parsed request.
    pub request: ClientRequest,
    /// The keys of `params._meta`, not yet checked; the protocol version is
    /// always among them (the request claims the stateless era).
    pub keys: MetaKeys<'a>,
}

/// Reads `message` in one pass, when it is a request of this revision that
/// names a protocol version in `_meta` and reads cleanly; `None` otherwise.
pub(crate) fn decode_request(message: &[u8]) -> Option<OnePass<'_>> {
    let text = std::str::from_utf8(message).ok()?;
    let mut de = serde_json::Deserializer::from_str(text);
    let read = de.deserialize_map(EnvelopeVisitor).ok()?;
    de.end().ok()?;
    // Arguments and other members kept as text are not depth-checked by
    // the parse; the general way refuses `params` deeper than MAX_DEPTH,
    // which with the envelope's scalar members is the message deeper than
    // one level more.
    if read.keys.version.is_none() || nests_deeper_than(text, MAX_DEPTH + 1) {
        return None;
    }
    Some(read)
}

/// Visits the envelope's members in order.
struct EnvelopeVisitor;

impl<'de> Visitor<'de> for EnvelopeVisitor {
    type Value = OnePass<'de>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a JSON-RPC request")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<OnePass<'de>, A::Error> {
        let (mut version_seen, mut id, mut method, mut request) = (false, None, None, None);
        let mut keys = MetaKeys::default();
        while let Some(key) = map.next_key::<&'de str>()? {
            match key {
                "jsonrpc" if !version_seen => {
                    if map.next_value::<&'de str>()? != JSONRPC_VERSION {
                        return Err(A::Error::custom("not JSON-RPC 2.0"));
                    }
                    version_seen = true;
                }
                "id" if id.is_none() => {
                    let raw = map.next_value::<&'de RawValue>()?;
                    id = Some(RequestId::from_raw(raw.to_owned()).map_err(A::Error::custom)?);
                }
                "method" if method.is_none() => method = Some(map.next_value::<&'de str>()?),
                "params" if request.is_none() => {
                    let method = method.ok_or_else(|| A::Error::custom("params before method"))?;
                    request = Some(map.next_value_seed(ParamsSeed { method, keys: &mut keys })?);
                }
                _ => return Err(A::Error::custom("a member for the general way")),
            }
        }
        match (version_seen, id, method, request) {
            (true, Some(id), Some(method), Some(request)) => Ok(OnePass { id, method, request, keys }),
            _ => Err(A::Error::custom("incomplete for the one pass")),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::jsonrpc::{decode, Incoming};

    const META: &str = r#""_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}"#;

    fn call(args: &str) -> String {
        format!(
            r#"{{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{{"name":"echo","arguments":{args},{META}}}}}"#
        )
    }

    /// The general way: the envelope, then params and `_meta` in one pass.
    fn general(message: &str) -> Option<(RequestId, String, ClientRequest, Option<String>)> {
        let Ok(Incoming::Request(r)) = decode(message.as_bytes()) else { return None };
        let (request, keys) = ClientRequest::parse_with_meta(&r.method, r.params.as_ref()?)?;
        let version = keys.version_str().map(|v| v.into_owned());
        Some((r.id, r.method, request, version))
    }

    #[track_caller]
    fn same_as_general(message: &str) {
        let one = decode_request(message.as_bytes()).expect("read in one pass");
        let (id, method, request, version) = general(message).expect("read the general way");
        assert_eq!((one.id.to_string(), one.method), (id.to_string(), method.as_str()));
        assert_eq!(one.request, request);
        assert_eq!(one.keys.version_str().map(|v| v.into_owned()), version);
    }

    #[test]
    fn a_common_request_reads_as_the_general_way_reads_it() {
        same_as_general(&call(r#"{"text":"hello"}"#));
        same_as_general(&format!(r#"{{"method":"tools/list","params":{{{META}}},"id":"a","jsonrpc":"2.0"}}"#));
        same_as_general(&format!(r#" {{"jsonrpc":"2.0","id":1,"method":"server/discover","params":{{{META}}}}} "#));
        let message = call("{}");
        let one = decode_request(message.as_bytes()).unwrap();
        assert!(one.keys.client_capabilities.is_some());
        assert!(matches!(one.request, ClientRequest::CallTool(ref c) if c.name == "echo"));
    }

    #[test]
    fn anything_else_is_left_to_the_general_way() {
        let p = format!(r#"{{{META}}}"#);
        for message in [
            // params before method; a member twice; a member the envelope lacks
            format!(r#"{{"jsonrpc":"2.0","id":1,"params":{p},"method":"tools/list"}}"#),
            format!(r#"{{"jsonrpc":"2.0","id":1,"id":2,"method":"tools/list","params":{p}}}"#),
            format!(r#"{{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{p},"x":1}}"#),
            format!(r#"{{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{p},"result":{{}}}}"#),
            // an escape, another version, a bad id, no id (a notification)
            format!(r#"{{"jsonrpc":"2.0","id":1,"method":"tools\/list","params":{p}}}"#),
            format!(r#"{{"jsonrpc":"1.0","id":1,"method":"tools/list","params":{p}}}"#),
            format!(r#"{{"jsonrpc":"2.0","id":1.5,"method":"tools/list","params":{p}}}"#),
            format!(r#"{{"jsonrpc":"2.0","method":"tools/list","params":{p}}}"#),
            // no protocol version; a legacy method; params of the wrong shape
            r#"{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{}}"#.to_owned(),
            format!(r#"{{"jsonrpc":"2.0","id":1,"method":"initialize","params":{p}}}"#),
            format!(r#"{{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{p}}}"#),
            // a batch, trailing text, not UTF-8
            format!(r#"[{{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{p}}}]"#),
            format!(r#"{{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{p}}} x"#),
        ] {
            assert!(decode_request(message.as_bytes()).is_none(), "{message}");
        }
        let mut bytes = call(r#"{"text":"hello"}"#).into_bytes();
        let at = bytes.iter().position(|&b| b == b'h').unwrap();
        bytes[at] = 0xff;
        assert!(decode_request(&bytes).is_none());
    }

    #[test]
    fn nesting_is_limited_as_the_general_way_limits_it() {
        let nested = |levels: usize| format!(r#"{{"a":{}1{}}}"#, "[".repeat(levels - 1), "]".repeat(levels - 1));
        // params = {"name", "arguments": {"a": [[...]]}, _meta}: arguments'
        // depth + 1. At the limit both read it; one level more, neither.
        let at_limit = call(&nested(MAX_DEPTH - 1));
        same_as_general(&at_limit);
        let deeper = call(&nested(MAX_DEPTH));
        assert!(decode_request(deeper.as_bytes()).is_none());
        assert!(decode(deeper.as_bytes()).is_err());
    }
}
