//! The audit log's writer: a thread of its own that appends each record as
//! one line, makes the file durable every `audit.sync_ms`, rotates it by
//! size with the chain carried into the next file, and says where the
//! chain's head stands when it rotates or stops. Lines are buffered while
//! more records wait in the queue and written out as soon as it is empty
//! (one write for a burst, not one per record). A file it created and
//! never wrote to is removed when it stops (a server whose build failed
//! after the log opened leaves no empty file behind).

use std::fs::{File, OpenOptions};
use std::io::{BufRead, BufReader, BufWriter, Write};
use std::path::{Path, PathBuf};
use std::sync::mpsc::{Receiver, RecvTimeoutError, TryRecvError};
use std::time::{Duration, Instant};

use slog::{error, info, Logger};

use super::chain::{Head, Record};
use crate::config::AuditConfig;
use crate::telemetry::{AUDIT_DROPPED, AUDIT_RECORDS};

/// What the writer's queue carries. `Close` is as large as a record: the
/// queue held records of that size before it existed.
#[allow(clippy::large_enum_variant)]
pub(super) enum Letter {
    /// A record to append.
    Record(Record),
    /// Stop after what came before.
    Close,
}

/// The open log file and where its chain stands.
pub(super) struct Writer {
    path: PathBuf,
    file: BufWriter<File>,
    head: Head,
    /// Bytes in the current file.
    size: u64,
    /// The `seq` of the current file's first record (its name once rotated).
    first_seq: Option<u64>,
    max_bytes: u64,
    /// `None`: every record is synced.
    sync_every: Option<Duration>,
    last_sync: Instant,
    /// Written since the last sync.
    dirty: bool,
    /// The file did not exist before this writer and nothing was written
    /// to it yet: it is removed when the writer stops.
    created: bool,
    log: Logger,
}

impl Writer {
    /// Opens (or continues) the log `config.file`: the chain goes on from
    /// the file's last record or, when the file is missing or empty, from
    /// the last record of its latest rotated file ([`Head::of_log`]).
    pub(super) fn open(config: &AuditConfig, log: &Logger) -> Result<Writer, String> {
        let path = PathBuf::from(&config.file);
        let head = Head::of_log(&path)?;
        let first_seq = first_seq(&path)?;
        let created = !path.exists();
        let file = append(&path)?;
        let size = file.metadata().map_err(|e| format!("{}: {e}", path.display()))?.len();
        let file = BufWriter::with_capacity(64 * 1024, file);
        info!(log, "audit log open"; "file" => %path.display(), "seq" => head.seq, "head_sha256" => &head.hash);
        Ok(Writer {
            path,
            file,
            head,
            size,
            first_seq,
            max_bytes: config.max_bytes,
            sync_every: (config.sync_ms > 0).then(|| Duration::from_millis(config.sync_ms)),
            last_sync: Instant::now(),
            dirty: false,
            created,
            log: log.clone(),
        })
    }

    /// Writes what arrives until [`Letter::Close`] or every sender is gone,
    /// then syncs.
    pub(super) fn run(mut self, records: Receiver<Letter>) {
        loop {
            let wait = match (self.dirty, self.sync_every) {
                (true, Some(every)) => every.saturating_sub(self.last_sync.elapsed()),
                _ => Duration::from_secs(3600),
            };
            let mut gone = false;
            match records.recv_timeout(wait) {
                Ok(Letter::Record(record)) => self.write(record),
                Ok(Letter::Close) | Err(RecvTimeoutError::Disconnected) => gone = true,
                Err(RecvTimeoutError::Timeout) => {}
            }
            // The rest of a burst goes into the same buffer.
            while !gone {
                match records.try_recv() {
                    Ok(Letter::Record(record)) => self.write(record),
                    Ok(Letter::Close) | Err(TryRecvError::Disconnected) => gone = true,
                    Err(TryRecvError::Empty) => break,
                }
            }
            self.flush();
            if gone {
                break;
            }
            if self.dirty && self.sync_every.is_none_or(|every| self.last_sync.elapsed() >= every) {
                self.sync();
            }
        }
        self.sync();
        info!(self.log, "audit log closed"; "file" => %self.path.display(), "seq" => self.head.seq,
            "head_sha256" => &self.head.hash);
    }

    /// Appends `record` as the chain's next line.
    fn write(&mut self, record: Record) {
        let before = self.head.clone();
        let mut line = self.head.append(record);
        line.push('\n');
        if let Err(e) = self.file.write_all(line.as_bytes()) {
            // The record is lost; the chain stays where the file is.
            self.head = before;
            metrics::counter!(AUDIT_DROPPED).increment(1);
            error!(self.log, "audit record not written"; "file" => %self.path.display(), "error" => %e);
            return;
        }
        metrics::counter!(AUDIT_RECORDS).increment(1);
        self.created = false;
        self.first_seq.get_or_insert(self.head.seq);
        self.size += line.len() as u64;
        self.dirty = true;
        if self.max_bytes > 0 && self.size >= self.max_bytes {
            self.rotate();
        }
    }

    /// Writes out the buffered lines.
    fn flush(&mut self) {
        if let Err(e) = self.file.flush() {
            error!(self.log, "audit lines not written"; "file" => %self.path.display(), "error" => %e);
        }
    }

    fn sync(&mut self) {
        self.flush();
        if let Err(e) = self.file.get_ref().sync_data() {
            error!(self.log, "audit log not synced"; "file" => %self.path.display(), "error" => %e);
        }
        self.dirty = false;
        self.last_sync = Instant::now();
    }

    /// Renames the full file `FILE.SEQ` and goes on in a new `FILE`.
    fn rotate(&mut self) {
        self.sync();
        let Some(first) = self.first_seq else { return };
        let rotated = PathBuf::from(format!("{}.{first}", self.path.display()));
        let renamed = std::fs::rename(&self.path, &rotated).map_err(|e| e.to_string());
        match renamed.and_then(|()| append(&self.path)) {
            Ok(file) => {
                self.file = BufWriter::with_capacity(64 * 1024, file);
                self.size = 0;
                self.first_seq = None;
                info!(self.log, "audit log rotated"; "rotated" => %rotated.display(), "seq" => self.head.seq,
                    "head_sha256" => &self.head.hash);
            }
            // Written on where it is (the rename may not have happened).
            Err(e) => error!(self.log, "audit log not rotated"; "file" => %self.path.display(), "error" => e),
        }
    }
}

impl Drop for Writer {
    /// Removes the file this writer created if nothing was written to it.
    fn drop(&mut self) {
        if self.created && self.size == 0 && std::fs::remove_file(&self.path).is_ok() {
            info!(self.log, "audit log removed: nothing was written to it"; "file" => %self.path.display());
        }
    }
}

/// `path` opened for appending (created if missing).
fn append(path: &Path) -> Result<File, String> {
    OpenOptions::new().create(true).append(true).open(path).map_err(|e| format!("{}: {e}", path.display()))
}

/// The `seq` of the first record in `path` (`None`: no file, or empty).
fn first_seq(path: &Path) -> Result<Option<u64>, String> {
    let Ok(file) = File::open(path) else { return Ok(None) };
    let mut line = String::new();
    BufReader::new(file).read_line(&mut line).map_err(|e| format!("{}: {e}", path.display()))?;
    if line.trim().is_empty() {
        return Ok(None);
    }
    let record: Record = serde_json::from_str(line.trim_end())
        .map_err(|e| format!("{}: the first line is not an audit record ({e})", path.display()))?;
    Ok(Some(record.seq))
}
