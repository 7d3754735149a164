//! The protocol version a connection speaks, and so its era.

use crate::ProtocolVersion;

/// The protocol version a connection speaks, and so its era.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Spoken {
    /// Every request carries the version and the client in `_meta`.
    Stateless(ProtocolVersion),
    /// After an `initialize` handshake, in a session.
    Legacy(ProtocolVersion),
}

impl Spoken {
    /// The version spoken.
    pub fn version(self) -> ProtocolVersion {
        match self {
            Spoken::Stateless(v) | Spoken::Legacy(v) => v,
        }
    }

    /// Whether requests carry their own `_meta` (no session).
    pub fn is_stateless(self) -> bool {
        matches!(self, Spoken::Stateless(_))
    }
}
