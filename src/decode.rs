//! [`decode`]: the one entry for every incoming message, whatever carries
//! it (an HTTP body, a stdio line), with or without an authenticated caller
//! or a session.
//!
//! The common message — a well-formed stateless request — is read in one
//! pass (unless the connection is a legacy session's, [`Expect::Session`]): the envelope, the method's typed params and the keys of
//! `params._meta`. Anything else is decoded the general way
//! ([`jsonrpc::decode`]), which finds each error in the order the
//! specification sets; so is a request read in one pass that admission then
//! refuses ([`Message::general`]), so that its error is the one the general
//! way finds first.

use std::borrow::Cow;
use std::fmt;

use serde::de::{Error as _, MapAccess, Visitor};
use serde::Deserializer;
use serde_json::value::RawValue;

use crate::jsonrpc::{self, DecodeError, Incoming, RequestId, JSONRPC_VERSION};
use crate::meta::MetaKeys;
use crate::raw_object::{nests_deeper_than, MAX_DEPTH};
use crate::request::{ClientRequest, ItemKind, ParamsSeed};

/// One incoming message, decoded once.
// The large variant is the common one: boxing it would cost every request
// an allocation to save a few bytes of a value moved once.
#[allow(clippy::large_enum_variant)]
#[derive(Debug)]
pub enum Message<'a> {
    /// A stateless request read in one pass, and the bytes it was read from.
    Stateless(OnePass<'a>, &'a [u8]),
    /// Any other message, decoded the general way.
    General(Result<Incoming, DecodeError>),
}

/// What a connection expects its messages to be, so that the common one
/// is read the fast way.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Expect {
    /// Stateless requests: each message is first read in one pass.
    Stateless,
    /// The messages of a legacy session: decoded the general way at once
    /// (they name no protocol version, so a one-pass read would be wasted).
    Session,
}

/// Decodes one JSON-RPC message.
pub fn decode(bytes: &[u8], expect: Expect) -> Message<'_> {
    let one = match expect {
        Expect::Stateless => decode_request(bytes),
        Expect::Session => None,
    };
    match one {
        Some(one) => Message::Stateless(one, bytes),
        None => Message::General(jsonrpc::decode(bytes)),
    }
}

impl Message<'_> {
    /// The message decoded the general way (a request read in one pass is
    /// decoded again).
    pub fn general(self) -> Result<Incoming, DecodeError> {
        match self {
            Message::Stateless(_, bytes) => jsonrpc::decode(bytes),
            Message::General(decoded) => decoded,
        }
    }

    /// The method of a request (`None` for anything else).
    pub fn method(&self) -> Option<&str> {
        match self {
            Message::Stateless(one, _) => Some(one.method),
            Message::General(Ok(Incoming::Request(r))) => Some(&r.method),
            Message::General(_) => None,
        }
    }

    /// The id of a request.
    pub fn request_id(&self) -> Option<&RequestId> {
        match self {
            Message::Stateless(one, _) => Some(&one.id),
            Message::General(Ok(Incoming::Request(r))) => Some(&r.id),
            Message::General(_) => None,
        }
    }

    /// The item a request of either era is about (see
    /// [`crate::legacy::item_in`]), for the scopes it needs.
    pub fn item(&self) -> Option<(ItemKind, Cow<'_, str>)> {
        match self {
            Message::Stateless(one, _) => one.request.item().map(|(kind, name)| (kind, Cow::Borrowed(name))),
            Message::General(Ok(Incoming::Request(r))) => {
                crate::legacy::item_in(&r.method, r.params.as_ref()).map(|(kind, name)| (kind, Cow::Owned(name)))
            }
            Message::General(_) => None,
        }
    }
}

// The one-pass reader, `decode_request`: the common message — a well-formed stateless request —
// read in one pass: the envelope, the method's typed params and the keys of
// `params._meta`, without keeping `params` as text to parse a second time.
//
// It reads only messages it can read completely and in order (`method`
// before `params`, no member twice, no member the envelope does not define,
// strings without escapes) and gives `None` for anything else. The caller
// then decodes the message the general way ([`crate::jsonrpc::decode`],
// [`crate::ClientRequest::parse_with_meta`] or the slow path after it),
// which finds every error in the order the specification sets; for the
// messages this reads, both ways give the same request.

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
                    id = Some(RequestId::from_raw_text(raw.get()).map_err(A::Error::custom)?);
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

    const CALL: &[u8] = br#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo",
        "_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}}"#;

    #[test]
    fn a_stateless_request_is_read_in_one_pass_and_anything_else_the_general_way() {
        let m = decode(CALL, Expect::Stateless);
        assert!(matches!(m, Message::Stateless(..)));
        assert_eq!(m.request_id(), Some(&RequestId::number(1)));
        assert_eq!(m.item(), Some((ItemKind::Tool, Cow::Borrowed("echo"))));
        assert!(matches!(m.general(), Ok(Incoming::Request(r)) if r.method == "tools/call"));
        // A legacy request (no version in `_meta`), a notification, a batch.
        let legacy = br#"{"jsonrpc":"2.0","id":"a","method":"resources/subscribe","params":{"uri":"u://x"}}"#;
        let m = decode(legacy, Expect::Stateless);
        assert!(matches!(m, Message::General(Ok(Incoming::Request(_)))));
        assert_eq!(m.item(), Some((ItemKind::Resource, Cow::Owned("u://x".to_owned()))));
        assert!(matches!(
            decode(br#"{"jsonrpc":"2.0","method":"x"}"#, Expect::Stateless),
            Message::General(Ok(Incoming::Notification(_)))
        ));
        assert!(matches!(decode(b"[]", Expect::Stateless), Message::General(Err(_))));
        // In a session, the general way at once.
        assert!(matches!(decode(CALL, Expect::Session), Message::General(Ok(Incoming::Request(_)))));
    }
}

#[cfg(test)]
mod one_pass_tests {
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
