//! `[audit]`: the tamper-evident audit log of calls (see [`crate::audit`]).

use serde::{Deserialize, Serialize};

use super::choices::AuditWhenFull;
use super::error::ConfigError;

/// `[audit]`: one JSON line per `tools/call`, `resources/read` and
/// `prompts/get`, each line carrying the SHA-256 of the line before it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct AuditConfig {
    /// The log file (JSON Lines). Default: `""`, no audit log. A file that
    /// exists is continued: its last line's `seq` and hash start the chain
    /// (those of the latest rotated `FILE.SEQ` when the file is missing or
    /// empty).
    pub file: String,
    /// Records waiting for the writer at most. Default: 4096 (bounded: a
    /// stalled disk must not grow memory; see `when_full`).
    pub queue: usize,
    /// What a call does when the queue is full. Default: `"block"`.
    pub when_full: AuditWhenFull,
    /// Records are written at once and made durable (`fsync`) at least this
    /// often, in milliseconds; 0: after every record. Default: 1000.
    pub sync_ms: u64,
    /// The file is rotated once it holds this many bytes: renamed to
    /// `FILE.SEQ` (`SEQ` the first record it holds) and a new `FILE` goes
    /// on with the chain; 0: never. Default: 67108864 (64 MiB).
    pub max_bytes: u64,
}

impl Default for AuditConfig {
    fn default() -> Self {
        AuditConfig {
            file: String::new(),
            queue: 4096,
            when_full: AuditWhenFull::Block,
            sync_ms: 1000,
            max_bytes: 64 * 1024 * 1024,
        }
    }
}

impl AuditConfig {
    /// Whether calls are audited.
    pub fn enabled(&self) -> bool {
        !self.file.is_empty()
    }

    /// Checks the values the types cannot.
    pub(crate) fn validate(&self) -> Result<(), ConfigError> {
        if self.enabled() && self.queue == 0 {
            return Err(ConfigError("audit.queue must be at least 1".into()));
        }
        Ok(())
    }
}
