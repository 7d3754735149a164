//! `[policy]`: which calls a caller may make, as Cedar policies (see
//! [`crate::policy`]).

use serde::{Deserialize, Serialize};

use super::choices::PolicyMode;

/// `[policy]`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct PolicyConfig {
    /// The Cedar policies (`PATH.cedar`). Default: `""`, no policy: every
    /// call the other checks (scopes, `allow_tools`) let through is allowed.
    /// With a file, what no `permit` allows is denied.
    pub file: String,
    /// `enforce` or `shadow`. Default: `enforce`.
    pub mode: PolicyMode,
    /// The Cedar schema the policies are validated against at start.
    /// Default: `""`, the built-in one (`config/policy.cedarschema`).
    pub schema: String,
}

impl PolicyConfig {
    /// Whether a policy is set.
    pub fn enabled(&self) -> bool {
        !self.file.is_empty()
    }
}
