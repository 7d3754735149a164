//! Protocol versions this crate understands, and the error-code profile of each.
//!
//! The released stateless revision `2026-07-28` renumbered the errors that the
//! seed draft `DRAFT-2026-v1` introduced; each version is answered with its own
//! codes, so errors are rendered through [`ProtocolVersion::profile`].

use crate::error::{ErrorCode, ErrorProfile};

/// A stateless (per-request `_meta`) protocol version.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[non_exhaustive]
pub enum ProtocolVersion {
    /// The released stateless revision (SEP-2575).
    V2026_07_28,
    /// The seed draft of SEP-2575, with its older error codes.
    Draft2026V1,
    /// Legacy (initialize/session era): 2025-11-25.
    V2025_11_25,
    /// Legacy: 2025-06-18.
    V2025_06_18,
    /// Legacy: 2025-03-26.
    V2025_03_26,
}

impl ProtocolVersion {
    /// The stateless versions, newest first.
    pub const ALL: &'static [ProtocolVersion] = &[ProtocolVersion::V2026_07_28, ProtocolVersion::Draft2026V1];

    /// The legacy versions (an `initialize` handshake and a session), newest first.
    pub const LEGACY: &'static [ProtocolVersion] =
        &[ProtocolVersion::V2025_11_25, ProtocolVersion::V2025_06_18, ProtocolVersion::V2025_03_26];

    /// Whether requests of this version carry everything in `_meta` (no session).
    pub const fn is_stateless(self) -> bool {
        matches!(self, ProtocolVersion::V2026_07_28 | ProtocolVersion::Draft2026V1)
    }

    /// The version string on the wire.
    pub const fn as_str(self) -> &'static str {
        match self {
            ProtocolVersion::V2026_07_28 => "2026-07-28",
            ProtocolVersion::Draft2026V1 => "DRAFT-2026-v1",
            ProtocolVersion::V2025_11_25 => "2025-11-25",
            ProtocolVersion::V2025_06_18 => "2025-06-18",
            ProtocolVersion::V2025_03_26 => "2025-03-26",
        }
    }

    /// Parses a wire version string; `None` for versions this crate does not know.
    pub fn parse(s: &str) -> Option<Self> {
        match s {
            "2026-07-28" => Some(ProtocolVersion::V2026_07_28),
            "DRAFT-2026-v1" => Some(ProtocolVersion::Draft2026V1),
            "2025-11-25" => Some(ProtocolVersion::V2025_11_25),
            "2025-06-18" => Some(ProtocolVersion::V2025_06_18),
            "2025-03-26" => Some(ProtocolVersion::V2025_03_26),
            _ => None,
        }
    }

    /// The error-code profile of this version.
    pub const fn profile(self) -> ErrorProfile {
        match self {
            ProtocolVersion::V2026_07_28 => ErrorProfile::RELEASED,
            ProtocolVersion::Draft2026V1 => ErrorProfile {
                header_mismatch: ErrorCode::DRAFT_HEADER_MISMATCH,
                missing_capability: ErrorCode::DRAFT_MISSING_REQUIRED_CLIENT_CAPABILITY,
                unsupported_version: ErrorCode::INVALID_PARAMS,
                client_info_required: true,
                resource_not_found: ErrorCode::INVALID_PARAMS,
            },
            // The legacy era had none of the stateless errors; the closest
            // JSON-RPC codes stand in, and a missing resource is -32002.
            ProtocolVersion::V2025_11_25 | ProtocolVersion::V2025_06_18 | ProtocolVersion::V2025_03_26 => {
                ErrorProfile {
                    header_mismatch: ErrorCode::INVALID_REQUEST,
                    missing_capability: ErrorCode::INVALID_PARAMS,
                    unsupported_version: ErrorCode::INVALID_PARAMS,
                    client_info_required: true,
                    resource_not_found: ErrorCode::RESOURCE_NOT_FOUND,
                }
            }
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
        assert_eq!(ProtocolVersion::parse("2025-11-25"), Some(ProtocolVersion::V2025_11_25));
        assert_eq!(ProtocolVersion::parse("2024-11-05"), None);
        assert!(!ProtocolVersion::V2025_06_18.is_stateless());
        assert_eq!(ProtocolVersion::V2025_03_26.profile().resource_not_found.0, -32002);
        assert_eq!(ProtocolVersion::V2026_07_28.profile().header_mismatch.0, -32020);
        assert_eq!(ProtocolVersion::V2026_07_28.profile().missing_capability.0, -32021);
        assert_eq!(ProtocolVersion::V2026_07_28.profile().unsupported_version.0, -32022);
        assert_eq!(ProtocolVersion::Draft2026V1.profile().header_mismatch.0, -32001);
        assert_eq!(ProtocolVersion::Draft2026V1.profile().missing_capability.0, -32003);
        assert_eq!(ProtocolVersion::Draft2026V1.profile().unsupported_version.0, -32602);
        assert_eq!(ProtocolVersion::profile_for(Some("v999")), ProtocolVersion::V2026_07_28.profile());
    }
}
