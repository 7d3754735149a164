//! Protocol versions this crate understands, and the error-code profile of each.
//!
//! The released stateless revision `2026-07-28` renumbered the errors that the
//! seed draft `DRAFT-2026-v1` introduced; each version is answered with its own
//! codes, so errors are rendered through [`ProtocolVersion::profile`].

use crate::error::ErrorCode;

/// A stateless (per-request `_meta`) protocol version.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[non_exhaustive]
pub enum ProtocolVersion {
    /// The released stateless revision (SEP-2575).
    V2026_07_28,
    /// The seed draft of SEP-2575, with its older error codes.
    Draft2026V1,
}

/// Error codes that differ between versions.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ErrorProfile {
    /// `Mcp-*` header and body disagree.
    pub header_mismatch: ErrorCode,
    /// The request needs a client capability the client did not declare.
    pub missing_capability: ErrorCode,
    /// The requested protocol version is not served.
    pub unsupported_version: ErrorCode,
    /// Whether `clientInfo` is required in `_meta` (it is a SHOULD in 2026-07-28).
    pub client_info_required: bool,
}

impl ProtocolVersion {
    /// Every version, newest first: the default supported set.
    pub const ALL: &'static [ProtocolVersion] = &[ProtocolVersion::V2026_07_28, ProtocolVersion::Draft2026V1];

    /// The version string on the wire.
    pub const fn as_str(self) -> &'static str {
        match self {
            ProtocolVersion::V2026_07_28 => "2026-07-28",
            ProtocolVersion::Draft2026V1 => "DRAFT-2026-v1",
        }
    }

    /// Parses a wire version string; `None` for versions this crate does not know.
    pub fn parse(s: &str) -> Option<Self> {
        match s {
            "2026-07-28" => Some(ProtocolVersion::V2026_07_28),
            "DRAFT-2026-v1" => Some(ProtocolVersion::Draft2026V1),
            _ => None,
        }
    }

    /// The error-code profile of this version.
    pub const fn profile(self) -> ErrorProfile {
        match self {
            ProtocolVersion::V2026_07_28 => ErrorProfile {
                header_mismatch: ErrorCode::HEADER_MISMATCH,
                missing_capability: ErrorCode::MISSING_REQUIRED_CLIENT_CAPABILITY,
                unsupported_version: ErrorCode::UNSUPPORTED_PROTOCOL_VERSION,
                client_info_required: false,
            },
            ProtocolVersion::Draft2026V1 => ErrorProfile {
                header_mismatch: ErrorCode::DRAFT_HEADER_MISMATCH,
                missing_capability: ErrorCode::DRAFT_MISSING_REQUIRED_CLIENT_CAPABILITY,
                unsupported_version: ErrorCode::INVALID_PARAMS,
                client_info_required: true,
            },
        }
    }

    /// The profile for a version string that may be unknown: unknown strings
    /// get the newest released profile.
    pub fn profile_for(s: Option<&str>) -> ErrorProfile {
        s.and_then(Self::parse).unwrap_or(ProtocolVersion::V2026_07_28).profile()
    }
}

impl std::fmt::Display for ProtocolVersion {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trips_and_profiles() {
        for v in ProtocolVersion::ALL {
            assert_eq!(ProtocolVersion::parse(v.as_str()), Some(*v));
        }
        assert_eq!(ProtocolVersion::parse("2025-11-25"), None);
        assert_eq!(ProtocolVersion::V2026_07_28.profile().header_mismatch.0, -32020);
        assert_eq!(ProtocolVersion::V2026_07_28.profile().missing_capability.0, -32021);
        assert_eq!(ProtocolVersion::V2026_07_28.profile().unsupported_version.0, -32022);
        assert_eq!(ProtocolVersion::Draft2026V1.profile().header_mismatch.0, -32001);
        assert_eq!(ProtocolVersion::Draft2026V1.profile().missing_capability.0, -32003);
        assert_eq!(ProtocolVersion::Draft2026V1.profile().unsupported_version.0, -32602);
        assert_eq!(ProtocolVersion::profile_for(Some("v999")), ProtocolVersion::V2026_07_28.profile());
    }
}
