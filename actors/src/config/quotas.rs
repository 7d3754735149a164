//! `[[quotas]]`: how many calls a caller, a tool or an upstream may make in
//! a window (see [`crate::quota`]); `quotas_fail`, `quotas_max_keys` and
//! `quotas_timeout_ms` say how the counters behave.

use serde::{Deserialize, Serialize};

use super::choices::QuotaBy;
use super::error::ConfigError;

/// One `[[quotas]]` table: at most `limit` `tools/call`s per `per_secs`
/// seconds for each caller, caller and tool, tool or upstream (`by`), of the
/// tools matching `tools`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct QuotaConfig {
    /// Its name: the `quota` label of its metrics and `data.quota` of a
    /// refusal. Letters, digits, `-`, `_` and `.`; unique.
    pub name: String,
    /// Calls allowed per window (at least 1).
    pub limit: u64,
    /// The window, in seconds (at least 1). A counter's window starts with
    /// the first call it counts; when it ends, the count starts again.
    pub per_secs: u64,
    /// What one counter counts. Default: `caller`.
    pub by: QuotaBy,
    /// The tools it applies to, by glob over the name as served (a gateway's
    /// `PREFIX__name`). Default: `[]`, every tool.
    pub tools: Vec<String>,
}

impl Default for QuotaConfig {
    fn default() -> Self {
        QuotaConfig { name: String::new(), limit: 0, per_secs: 0, by: QuotaBy::Caller, tools: Vec::new() }
    }
}

/// Checks the quotas: each named, unique, with a limit and a window, its
/// globs valid; and the counters' own bounds.
pub(super) fn validate(quotas: &[QuotaConfig], max_keys: usize, timeout_ms: u64) -> Result<(), ConfigError> {
    let mut names = std::collections::BTreeSet::new();
    for q in quotas {
        let name = &q.name;
        if name.is_empty() || !name.chars().all(|c| c.is_ascii_alphanumeric() || "-_.".contains(c)) {
            return Err(ConfigError(format!("quotas: name {name:?}: letters, digits, '-', '_' and '.' are needed")));
        }
        if !names.insert(name.as_str()) {
            return Err(ConfigError(format!("quotas: two quotas are named {name:?}")));
        }
        if q.limit == 0 || q.per_secs == 0 {
            return Err(ConfigError(format!("quotas: {name:?} needs limit and per_secs of at least 1")));
        }
        for glob in &q.tools {
            globset::Glob::new(glob).map_err(|e| ConfigError(format!("quotas: {name:?}: {glob:?}: {e}")))?;
        }
    }
    if max_keys == 0 || timeout_ms == 0 {
        return Err(ConfigError("quotas_max_keys and quotas_timeout_ms must be at least 1".into()));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn quota(name: &str, limit: u64, per_secs: u64, tools: &[&str]) -> QuotaConfig {
        let tools = tools.iter().map(|t| t.to_string()).collect();
        QuotaConfig { name: name.into(), limit, per_secs, tools, ..QuotaConfig::default() }
    }

    #[test]
    fn quotas_are_named_once_with_a_limit_a_window_and_valid_globs() {
        assert!(validate(&[quota("a", 1, 1, &[]), quota("b.c-d_e", 5, 60, &["x__*"])], 10, 10).is_ok());
        for (bad, says) in [
            (vec![quota("", 1, 1, &[])], "name \"\""),
            (vec![quota("a b", 1, 1, &[])], "name \"a b\""),
            (vec![quota("a", 1, 1, &[]), quota("a", 2, 2, &[])], "two quotas are named \"a\""),
            (vec![quota("a", 0, 1, &[])], "limit and per_secs"),
            (vec![quota("a", 1, 0, &[])], "limit and per_secs"),
            (vec![quota("a", 1, 1, &["a[b"])], "\"a[b\""),
        ] {
            let e = validate(&bad, 10, 10).unwrap_err().0;
            assert!(e.contains(says), "{e}");
        }
        assert!(validate(&[], 0, 10).unwrap_err().0.contains("quotas_max_keys"));
    }
}
