//! The chain of an audit log: a record as its one line of JSON, the
//! SHA-256 that links each line to the one before it, and where a log
//! that exists already left off.

use std::io::{Read, Seek, SeekFrom};
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

pub(super) use mcp_protocol::digest::sha256_hex;

/// The `prev` of the first record of a log: 64 zeros.
pub const GENESIS: &str = "0000000000000000000000000000000000000000000000000000000000000000";

/// One line of the log, its members in this order.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Record {
    /// 1 for the first record of the log, then one more per record (across
    /// rotated files too).
    pub seq: u64,
    /// When the call ended: RFC 3339, UTC, to the millisecond.
    pub time: String,
    /// The caller's identity key, `anonymous` without authorization.
    pub caller: String,
    /// `tools/call`, `resources/read`, `prompts/get`, `events/poll` or
    /// `events/stream`.
    pub method: String,
    /// The tool or prompt name, or the resource URI, as the caller named it.
    pub name: String,
    /// The upstream that serves the item (`""`: served here).
    pub upstream: String,
    /// `allow`, `deny` (a policy refused it) or `quota` (over a quota).
    pub decision: String,
    /// `ok`, `error`, `tool_error` or `cancelled`.
    pub outcome: String,
    /// From the request's start to its end.
    pub duration_ms: u64,
    /// Lowercase hex SHA-256 of the `arguments` as received (of `{}` when absent).
    pub arguments_sha256: String,
    /// Lowercase hex SHA-256 of the previous line (without its newline);
    /// [`GENESIS`] for the first.
    pub prev: String,
}

/// Whether `text` is a SHA-256 as the log writes it (64 lowercase hex digits).
pub(super) fn is_digest(text: &str) -> bool {
    text.len() == 64 && text.bytes().all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
}

/// Where the chain stands: the last record's `seq` and the hash of its line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Head {
    /// The last record's `seq` (0 before the first).
    pub seq: u64,
    /// The hash of the last line ([`GENESIS`] before the first).
    pub hash: String,
}

impl Default for Head {
    fn default() -> Self {
        Head { seq: 0, hash: GENESIS.to_owned() }
    }
}

impl Head {
    /// `record`'s line (without the newline), stamped with the next `seq`
    /// and this head's hash as its `prev`; the head moves past it.
    pub fn append(&mut self, mut record: Record) -> String {
        record.seq = self.seq + 1;
        record.prev = std::mem::take(&mut self.hash);
        let line = serde_json::to_string(&record).expect("a record serializes");
        self.seq = record.seq;
        self.hash = sha256_hex(line.as_bytes());
        line
    }

    /// Where the log at `path` left off: its last line's `seq` and hash
    /// (the default for a missing or empty file). A file that does not end
    /// in a whole record is refused, naming why: appending to it would
    /// break the chain.
    pub fn of_file(path: &Path) -> Result<Head, String> {
        let mut file = match std::fs::File::open(path) {
            Ok(f) => f,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Head::default()),
            Err(e) => return Err(format!("{}: {e}", path.display())),
        };
        let len = file.metadata().map_err(|e| format!("{}: {e}", path.display()))?.len();
        if len == 0 {
            return Ok(Head::default());
        }
        // The last line is short: read the tail, growing it until it holds a whole line.
        let mut tail = 4096u64;
        loop {
            let from = len.saturating_sub(tail);
            file.seek(SeekFrom::Start(from)).map_err(|e| format!("{}: {e}", path.display()))?;
            let mut buf = Vec::new();
            file.read_to_end(&mut buf).map_err(|e| format!("{}: {e}", path.display()))?;
            if buf.last() != Some(&b'\n') {
                return Err(format!(
                    "{}: the last line is cut short (no newline); move the file aside to start a new log",
                    path.display()
                ));
            }
            let body = &buf[..buf.len() - 1];
            match body.iter().rposition(|b| *b == b'\n') {
                Some(at) => return Self::of_line(path, &body[at + 1..]),
                None if from == 0 => return Self::of_line(path, body),
                None => tail *= 4,
            }
        }
    }

    fn of_line(path: &Path, line: &[u8]) -> Result<Head, String> {
        let record: Record = serde_json::from_slice(line)
            .map_err(|e| format!("{}: the last line is not an audit record ({e})", path.display()))?;
        Ok(Head { seq: record.seq, hash: sha256_hex(line) })
    }

    /// Where the log whose live file is `path` left off: the live file's
    /// head or, when that file is missing or empty (a server stopped right
    /// after a rotation), the head of its rotated file `FILE.SEQ` with the
    /// highest `SEQ`; the default when there is neither.
    pub fn of_log(path: &Path) -> Result<Head, String> {
        let head = Head::of_file(path)?;
        if head.seq > 0 {
            return Ok(head);
        }
        match latest_rotated(path) {
            Some(rotated) => Head::of_file(&rotated),
            None => Ok(head),
        }
    }
}

/// A head written as `SEQ:SHA256` (`actix-mcp audit verify --after`): the
/// `seq` of a record and the SHA-256 of its line, as the server logs them.
impl std::str::FromStr for Head {
    type Err = String;

    fn from_str(text: &str) -> Result<Head, String> {
        let (seq, hash) = text.split_once(':').ok_or_else(|| format!("{text:?} is not SEQ:SHA256"))?;
        let seq = seq.parse().map_err(|_| format!("{seq:?} is not a seq (a whole number)"))?;
        if !is_digest(hash) {
            return Err(format!("{hash:?} is not a SHA-256 in lowercase hex"));
        }
        Ok(Head { seq, hash: hash.to_owned() })
    }
}

/// The rotated file of the log at `path` with the highest `SEQ`
/// (`FILE.SEQ`, `SEQ` its first record), if there is one.
fn latest_rotated(path: &Path) -> Option<PathBuf> {
    let prefix = format!("{}.", path.file_name()?.to_str()?);
    let dir = match path.parent() {
        Some(dir) if !dir.as_os_str().is_empty() => dir,
        _ => Path::new("."),
    };
    let rotated = std::fs::read_dir(dir).ok()?.filter_map(|entry| {
        let entry = entry.ok()?;
        let seq: u64 = entry.file_name().to_str()?.strip_prefix(prefix.as_str())?.parse().ok()?;
        Some((seq, entry.path()))
    });
    rotated.max_by_key(|(seq, _)| *seq).map(|(_, path)| path)
}

/// An empty folder of its own for a test, removed when dropped.
#[cfg(test)]
pub(crate) fn scratch(name: &str) -> tempfile::TempDir {
    tempfile::Builder::new().prefix(&format!("actix-mcp-audit-{name}-")).tempdir().unwrap()
}

/// A record of a call of `name`, before it is chained.
#[cfg(test)]
pub(crate) fn sample(name: &str) -> Record {
    Record {
        seq: 0,
        time: "2026-12-05T10:00:00.000Z".into(),
        caller: "anonymous".into(),
        method: "tools/call".into(),
        name: name.into(),
        upstream: String::new(),
        decision: "allow".into(),
        outcome: "ok".into(),
        duration_ms: 1,
        arguments_sha256: sha256_hex(b"{}"),
        prev: String::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_are_chained_from_genesis() {
        let mut head = Head::default();
        let first = head.append(sample("a"));
        let second = head.append(sample("b"));
        let (a, b): (Record, Record) = (serde_json::from_str(&first).unwrap(), serde_json::from_str(&second).unwrap());
        assert_eq!((a.seq, a.prev.as_str()), (1, GENESIS));
        assert_eq!((b.seq, b.prev), (2, sha256_hex(first.as_bytes())));
        assert_eq!(head, Head { seq: 2, hash: sha256_hex(second.as_bytes()) });
        // The members in the documented order.
        assert!(first.starts_with(r#"{"seq":1,"time":"#) && first.contains(r#","prev":"0000"#), "{first}");
    }

    #[test]
    fn sha256_is_lowercase_hex() {
        let empty = sha256_hex(b"");
        assert_eq!(empty, "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
        assert!(is_digest(&empty) && is_digest(GENESIS) && !is_digest(&empty.to_uppercase()));
    }

    #[test]
    fn a_log_continues_where_its_file_left_off_and_a_cut_line_is_refused() {
        let dir = scratch("chain");
        let path = dir.path().join("audit.jsonl");
        assert_eq!(Head::of_file(&path).unwrap(), Head::default());
        let mut head = Head::default();
        let mut text = String::new();
        for i in 0..300 {
            // Long lines, so that the last one is found past a first short read.
            text.push_str(&head.append(sample(&"x".repeat(i * 10))));
            text.push('\n');
        }
        std::fs::write(&path, &text).unwrap();
        assert_eq!(Head::of_file(&path).unwrap(), head);
        std::fs::write(&path, &text[..text.len() - 1]).unwrap();
        assert!(Head::of_file(&path).unwrap_err().contains("cut short"));
        std::fs::write(&path, "not json\n").unwrap();
        assert!(Head::of_file(&path).unwrap_err().contains("not an audit record"));
    }

    #[test]
    fn an_empty_live_file_continues_the_latest_rotated_file() {
        let dir = scratch("chain-rotated");
        let path = dir.path().join("audit.jsonl");
        let mut head = Head::default();
        for first in [1, 3, 5] {
            let text: String = (0..2).map(|i| head.append(sample(&format!("t{i}"))) + "\n").collect();
            std::fs::write(dir.path().join(format!("audit.jsonl.{first}")), text).unwrap();
        }
        std::fs::write(dir.path().join("audit.jsonl.old"), "not a rotated file\n").unwrap();
        assert_eq!(Head::of_log(&path).unwrap(), head, "no live file");
        std::fs::write(&path, "").unwrap();
        assert_eq!(Head::of_log(&path).unwrap(), head, "an empty live file");
        let live = head.append(sample("live")) + "\n";
        std::fs::write(&path, live).unwrap();
        assert_eq!(Head::of_log(&path).unwrap(), head, "the live file's own head");
    }

    #[test]
    fn a_head_is_read_as_seq_colon_sha256() {
        let hash = sha256_hex(b"x");
        assert_eq!(format!("7:{hash}").parse::<Head>().unwrap(), Head { seq: 7, hash: hash.clone() });
        assert!(hash.parse::<Head>().unwrap_err().contains("SEQ:SHA256"));
        assert!(format!("x:{hash}").parse::<Head>().unwrap_err().contains("not a seq"));
        assert!(format!("7:{}", hash.to_uppercase()).parse::<Head>().unwrap_err().contains("lowercase hex"));
    }
}
