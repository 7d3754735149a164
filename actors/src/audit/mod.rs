//! The audit log (`[audit]`): one JSON line for every `tools/call`,
//! `resources/read` and `prompts/get` that ran or was refused, written off
//! the request path, each line carrying the SHA-256 of the line before it,
//! so that an edit, an insertion or a removal anywhere but at the end
//! breaks the chain: [`verify`] (what `actix-mcp audit verify FILE…` runs)
//! checks a whole log from its first record, [`verify_after`] files that
//! continue a log after a head kept elsewhere (`--after SEQ:SHA256`).
//!
//! ```text
//! {"seq":1,"time":"2026-12-05T10:00:00.123Z","caller":"anonymous","method":"tools/call","name":"echo",
//!  "upstream":"","decision":"allow","outcome":"ok","duration_ms":0,"arguments_sha256":"…","prev":"0000…"}
//! ```
//!
//! A request hands its record to a bounded queue ([`AuditLog::record`]);
//! one thread writes the lines: calls wait for a disk that
//! is behind only as `audit.when_full` says.

mod chain;
mod verify;
mod writer;

use std::sync::mpsc::{sync_channel, SyncSender, TrySendError};
use std::sync::Mutex;
use std::thread::JoinHandle;
use std::time::Duration;

pub use chain::{Head, Record, GENESIS};
pub use verify::{verify, verify_after, Broken, Intact};

use crate::config::{AuditConfig, AuditWhenFull};
use crate::telemetry::{AUDIT_DROPPED, AUDIT_QUEUE_FULL};

/// What the log records of one call, known when it starts.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Call {
    /// The caller's identity key, `anonymous` without authorization.
    pub caller: String,
    /// `tools/call`, `resources/read`, `prompts/get`, `events/poll` or
    /// `events/stream`.
    pub method: &'static str,
    /// The tool or prompt name, or the resource URI.
    pub name: String,
    /// The upstream serving the item (`""`: served here).
    pub upstream: String,
    /// Lowercase hex SHA-256 of the raw `arguments` (of `{}` when absent).
    pub arguments_sha256: String,
}

/// Whether the call was let through.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Decision {
    /// It ran.
    Allow,
    /// A policy refused it.
    Deny,
    /// A quota refused it.
    Quota,
}

impl Decision {
    /// The word in the log.
    pub fn as_str(self) -> &'static str {
        match self {
            Decision::Allow => "allow",
            Decision::Deny => "deny",
            Decision::Quota => "quota",
        }
    }
}

/// The audit log: a handle on its queue and writer. [`AuditLog::close`]
/// (or dropping it) lets the writer finish the queue, sync and stop.
pub struct AuditLog {
    /// Bounded (`audit.queue`): a stalled disk must not grow memory.
    tx: SyncSender<writer::Letter>,
    when_full: AuditWhenFull,
    /// Taken by the first [`AuditLog::close`].
    writer: Mutex<Option<JoinHandle<()>>>,
}

impl std::fmt::Debug for AuditLog {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AuditLog").field("when_full", &self.when_full).finish_non_exhaustive()
    }
}

impl AuditLog {
    /// Opens the log `config` names (`None` when `audit.file` is empty),
    /// continuing the chain of a file that exists (or of its latest rotated
    /// file when it is missing or empty); an error names the file and why
    /// it cannot be used. A file it creates is removed again if the log is
    /// dropped before anything was written to it.
    pub fn open(config: &AuditConfig, log: &slog::Logger) -> Result<Option<AuditLog>, String> {
        if !config.enabled() {
            return Ok(None);
        }
        let writer = writer::Writer::open(config, &log.new(slog::o!("actor" => "audit")))?;
        let (tx, rx) = sync_channel(config.queue.max(1));
        let thread = std::thread::Builder::new()
            .name("audit-writer".into())
            .spawn(move || writer.run(rx))
            .map_err(|e| format!("audit writer not started: {e}"))?;
        Ok(Some(AuditLog { tx, when_full: config.when_full, writer: Mutex::new(Some(thread)) }))
    }

    /// Records `call`, which ended with `outcome` (`ok`, `error`,
    /// `tool_error`, `cancelled`) after `took`, as `decision` said.
    pub fn record(&self, call: Call, decision: Decision, outcome: &'static str, took: Duration) {
        let tx = &self.tx;
        let now = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap_or_default();
        let record = Record {
            seq: 0,
            time: mcp_protocol::tasks::iso8601(now.as_millis() as u64),
            caller: call.caller,
            method: call.method.to_owned(),
            name: call.name,
            upstream: call.upstream,
            decision: decision.as_str().to_owned(),
            outcome: outcome.to_owned(),
            duration_ms: took.as_millis() as u64,
            arguments_sha256: call.arguments_sha256,
            prev: String::new(),
        };
        let letter = match tx.try_send(writer::Letter::Record(record)) {
            Ok(()) => return,
            Err(TrySendError::Disconnected(_)) => {
                metrics::counter!(AUDIT_DROPPED).increment(1);
                return;
            }
            Err(TrySendError::Full(letter)) => letter,
        };
        metrics::counter!(AUDIT_QUEUE_FULL).increment(1);
        let sent = match self.when_full {
            AuditWhenFull::Block => tx.send(letter).is_ok(),
            _ => false,
        };
        if !sent {
            metrics::counter!(AUDIT_DROPPED).increment(1);
        }
    }

    /// Closes the log: every record queued so far is written and synced,
    /// the closing head is logged (`audit log closed`), and the writer
    /// stops; a record that arrives later is counted as dropped. The
    /// servers call it once their requests are done, so that the log is
    /// whole when the process ends, even while a handle is still held
    /// elsewhere. Later calls return at once.
    pub fn close(&self) {
        let writer = self.writer.lock().unwrap_or_else(|e| e.into_inner()).take();
        if let Some(writer) = writer {
            let _ = self.tx.send(writer::Letter::Close);
            let _ = writer.join();
        }
    }
}

impl Drop for AuditLog {
    fn drop(&mut self) {
        self.close();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use mcp_protocol::digest::sha256_hex;

    fn call(name: &str) -> Call {
        Call {
            caller: "anonymous".into(),
            method: "tools/call",
            name: name.into(),
            upstream: String::new(),
            arguments_sha256: sha256_hex(b"{}"),
        }
    }

    #[test]
    fn records_are_written_chained_rotated_and_continued() {
        let dir = chain::scratch("log");
        let file = dir.path().join("audit.jsonl");
        let config = AuditConfig { file: file.display().to_string(), max_bytes: 2000, ..AuditConfig::default() };
        let log = crate::telemetry::logging::discard();
        let audit = AuditLog::open(&config, &log).unwrap().expect("enabled");
        for i in 0..40 {
            audit.record(call(&format!("t{i}")), Decision::Allow, "ok", Duration::from_millis(i));
        }
        drop(audit);
        // A second process continues the chain.
        let audit = AuditLog::open(&config, &log).unwrap().expect("enabled");
        audit.record(call("again"), Decision::Deny, "error", Duration::ZERO);
        drop(audit);
        let mut files: Vec<_> = std::fs::read_dir(&dir).unwrap().map(|e| e.unwrap().path()).collect();
        let seq_of = |p: &std::path::PathBuf| p.extension().and_then(|e| e.to_str()?.parse::<u64>().ok());
        files.sort_by_key(|p| seq_of(p).unwrap_or(u64::MAX));
        assert!(files.len() > 2, "rotated by size: {files:?}");
        assert_eq!(seq_of(&files[0]), Some(1));
        let intact = verify(&files).unwrap();
        assert_eq!((intact.records, intact.head_seq), (41, 41));
        let last = std::fs::read_to_string(&file).unwrap();
        let last: Record = serde_json::from_str(last.lines().last().unwrap()).unwrap();
        assert_eq!((last.name.as_str(), last.decision.as_str(), last.outcome.as_str()), ("again", "deny", "error"));
    }

    #[test]
    fn a_restart_after_a_rotation_continues_the_chain_and_an_unused_new_file_is_removed() {
        let dir = chain::scratch("restart");
        let file = dir.path().join("audit.jsonl");
        // Every record fills a file: the live file is left empty.
        let config = AuditConfig { file: file.display().to_string(), max_bytes: 1, ..AuditConfig::default() };
        let log = crate::telemetry::logging::discard();
        let audit = AuditLog::open(&config, &log).unwrap().expect("enabled");
        for i in 0..3 {
            audit.record(call(&format!("t{i}")), Decision::Allow, "ok", Duration::ZERO);
        }
        drop(audit);
        assert_eq!(std::fs::read(&file).unwrap(), b"", "rotated after each record");
        std::fs::remove_file(&file).unwrap();
        // Opened with no live file and dropped unused: none is left.
        drop(AuditLog::open(&config, &log).unwrap());
        assert!(!file.exists(), "an unused file the log created is removed");
        let audit = AuditLog::open(&config, &log).unwrap().expect("enabled");
        audit.record(call("again"), Decision::Allow, "ok", Duration::ZERO);
        drop(audit);
        let files: Vec<_> = (1..=4).map(|seq| dir.path().join(format!("audit.jsonl.{seq}"))).collect();
        let intact = verify(&files).unwrap();
        assert_eq!((intact.records, intact.head_seq), (4, 4));
        // A file that was there is kept, even with nothing written to it.
        drop(AuditLog::open(&config, &log).unwrap());
        assert_eq!(std::fs::read(&file).unwrap(), b"", "an existing file is kept");
    }

    #[test]
    fn close_writes_every_queued_record_while_handles_are_still_held_and_later_ones_are_dropped() {
        let dir = chain::scratch("close");
        let file = dir.path().join("audit.jsonl");
        let config = AuditConfig { file: file.display().to_string(), sync_ms: 60_000, ..AuditConfig::default() };
        let log = crate::telemetry::logging::discard();
        let audit = std::sync::Arc::new(AuditLog::open(&config, &log).unwrap().expect("enabled"));
        // Another thread still holds the log when it is closed, as an HTTP
        // worker may while the process ends.
        let held = audit.clone();
        for i in 0..100 {
            audit.record(call(&format!("t{i}")), Decision::Allow, "ok", Duration::ZERO);
        }
        audit.close();
        let intact = verify(std::slice::from_ref(&file)).unwrap();
        assert_eq!((intact.records, intact.head_seq), (100, 100), "closed with every record written");
        held.record(call("late"), Decision::Allow, "ok", Duration::ZERO);
        held.close();
        drop((audit, held));
        assert_eq!(verify(&[file]).unwrap().records, 100, "a record after close is not written");
    }

    #[test]
    fn an_empty_file_setting_is_no_log_and_a_bad_path_is_named() {
        let log = crate::telemetry::logging::discard();
        assert!(AuditLog::open(&AuditConfig::default(), &log).unwrap().is_none());
        let bad = AuditConfig { file: "/nonexistent-dir/audit.jsonl".into(), ..AuditConfig::default() };
        assert!(AuditLog::open(&bad, &log).unwrap_err().contains("/nonexistent-dir/audit.jsonl"));
    }
}
