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

use crate::jsonrpc::{self, DecodeError, Incoming, RequestId};
use crate::one_pass::decode_request;
pub use crate::one_pass::OnePass;
use crate::request::ItemKind;

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
