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
    /// Tests only: when each sync of the file returned, and the `seq` of
    /// the last line it made durable.
    #[cfg(test)]
    synced: Synced,
}

/// Tests only: the syncs a writer made (when each returned, up to which `seq`).
#[cfg(test)]
type Synced = std::sync::Arc<std::sync::Mutex<Vec<(Instant, u64)>>>;

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
            #[cfg(test)]
            synced: Default::default(),
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
        match self.file.get_ref().sync_data() {
            Ok(()) => {
                #[cfg(test)]
                self.synced.lock().unwrap_or_else(|e| e.into_inner()).push((Instant::now(), self.head.seq));
            }
            Err(e) => error!(self.log, "audit log not synced"; "file" => %self.path.display(), "error" => %e),
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

#[cfg(test)]
mod tests {
    use std::sync::mpsc::{sync_channel, SyncSender};
    use std::sync::Mutex;
    use std::thread::JoinHandle;

    use super::super::chain::{sample, scratch};
    use super::*;

    /// Room for what the scheduler of a busy machine adds to a wait.
    const SLACK: Duration = Duration::from_millis(250);

    /// A writer of `config` running on a thread of its own: its queue, the
    /// syncs it made (when, up to which `seq`), and its thread.
    fn running(config: &AuditConfig) -> (SyncSender<Letter>, Synced, JoinHandle<()>) {
        let writer = Writer::open(config, &crate::telemetry::logging::discard()).unwrap();
        let synced = writer.synced.clone();
        let (tx, rx) = sync_channel(64);
        (tx, synced, std::thread::spawn(move || writer.run(rx)))
    }

    /// The syncs so far, once one made line `seq` durable (fails after 10 s).
    fn until_synced(synced: &Mutex<Vec<(Instant, u64)>>, seq: u64) -> Vec<(Instant, u64)> {
        let deadline = Instant::now() + Duration::from_secs(10);
        loop {
            let syncs = synced.lock().unwrap().clone();
            if syncs.last().is_some_and(|(_, s)| *s >= seq) {
                return syncs;
            }
            assert!(Instant::now() < deadline, "line {seq} not synced within 10 s: {syncs:?}");
            std::thread::sleep(Duration::from_millis(2));
        }
    }

    /// "Lines are written as they come and fsync'd every `audit.sync_ms`"
    /// (operating guide, "Audit log"; "at least every sync_ms",
    /// config/default.toml): 20 lines handed over 30 ms apart with
    /// `sync_ms = 300` are each made durable within 300 ms of reaching the
    /// writer (give or take [`SLACK`]), by syncs at least 300 ms apart —
    /// a few syncs for the 20 lines, not one each.
    #[test]
    fn lines_are_synced_within_sync_ms_by_syncs_sync_ms_apart() {
        let dir = scratch("sync-every");
        let file = dir.path().join("audit.jsonl");
        let every = Duration::from_millis(300);
        let config = AuditConfig { file: file.display().to_string(), sync_ms: 300, ..AuditConfig::default() };
        let (tx, synced, writer) = running(&config);
        let mut handed = Vec::new();
        for i in 0..20 {
            handed.push(Instant::now());
            tx.send(Letter::Record(sample(&format!("t{i}")))).unwrap();
            // Paced: the lines come over about two windows.
            std::thread::sleep(Duration::from_millis(30));
        }
        let syncs = until_synced(&synced, 20);
        for (i, at) in handed.iter().enumerate() {
            let seq = i as u64 + 1;
            let (when, _) = syncs.iter().find(|(_, s)| *s >= seq).expect("a sync covering it");
            let late = when.saturating_duration_since(*at);
            assert!(late <= every + SLACK, "line {seq} was made durable {late:?} after it was handed over: {syncs:?}");
        }
        for pair in syncs.windows(2) {
            let apart = pair[1].0.duration_since(pair[0].0);
            assert!(apart >= every, "two syncs {apart:?} apart, less than sync_ms: {syncs:?}");
        }
        assert!(syncs.len() < 20, "not one sync per line: {syncs:?}");
        drop(tx);
        writer.join().unwrap();
        assert_eq!(std::fs::read_to_string(&file).unwrap().lines().count(), 20);
    }

    /// "(0: each line)": with `sync_ms = 0` a line handed alone is synced
    /// on its own, at once, before the next arrives; a burst handed
    /// together is synced before the writer waits for more (its lines share
    /// that sync).
    #[test]
    fn with_sync_ms_0_each_line_is_synced_before_the_writer_waits() {
        let dir = scratch("sync-each");
        let file = dir.path().join("audit.jsonl");
        let config = AuditConfig { file: file.display().to_string(), sync_ms: 0, ..AuditConfig::default() };
        let (tx, synced, writer) = running(&config);
        for seq in 1..=5u64 {
            let handed = Instant::now();
            tx.send(Letter::Record(sample(&format!("t{seq}")))).unwrap();
            let syncs = until_synced(&synced, seq);
            let (when, covered) = *syncs.last().unwrap();
            assert_eq!(covered, seq, "{syncs:?}");
            assert!(when.saturating_duration_since(handed) <= SLACK, "line {seq} synced at once: {syncs:?}");
        }
        let seqs: Vec<u64> = synced.lock().unwrap().iter().map(|(_, s)| *s).collect();
        assert_eq!(seqs, [1, 2, 3, 4, 5], "one sync per line handed alone");
        for i in 0..50 {
            tx.send(Letter::Record(sample(&format!("burst{i}")))).unwrap();
        }
        until_synced(&synced, 55);
        drop(tx);
        writer.join().unwrap();
        assert_eq!(std::fs::read_to_string(&file).unwrap().lines().count(), 55);
    }
}
