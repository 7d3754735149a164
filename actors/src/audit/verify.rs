//! `actix-mcp audit verify FILE…`: walks the chain of one or more log files
//! (rotated files first, oldest first, the live file last) and names the
//! line where the chain first breaks: the line altered, inserted or removed,
//! when one was (with several lines in a row altered, that line or the one
//! before it).
//!
//! Each line must be a record whose `seq` is one more than the line
//! before's and whose `prev` is the SHA-256 of the line before. The first
//! line follows an anchor: the genesis ([`verify`]: `seq` 1 with a `prev`
//! of 64 zeros), so that lines removed from the start are seen too; or,
//! for files that continue a log whose earlier files are gone or kept
//! elsewhere, a head recorded before ([`verify_after`]: `seq` S+1 whose
//! `prev` is the anchored SHA-256).
//!
//! A broken link between lines N and N+1 means one of the two changed:
//! line N, when the link after N+1 holds (any byte of N changes its hash),
//! else line N+1 (its own `prev` changed, so its hash did too). A chain
//! alone cannot see a changed or removed *last* line: compare the head this
//! prints with one kept elsewhere (see the operating guide).

use std::path::{Path, PathBuf};

use serde::Deserialize;

use super::chain::{is_digest, sha256_hex, Head};

/// A chain that holds.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Intact {
    /// Records verified.
    pub records: u64,
    /// The last record's `seq` (the anchor's when there was none: 0 for
    /// [`verify`]).
    pub head_seq: u64,
    /// The hash of the last line (the anchor's when there was none): the
    /// value to keep elsewhere.
    pub head_hash: String,
}

/// The first line that breaks the chain.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Broken {
    /// The file it is in.
    pub file: PathBuf,
    /// Its line number in that file, from 1 (0: the file could not be
    /// read, see [`Broken::unreadable`]).
    pub line: usize,
    /// What is wrong.
    pub why: String,
}

impl Broken {
    /// Whether the file could not be read at all (missing, unreadable):
    /// nothing is known of its chain. Its `line` is 0.
    pub fn unreadable(&self) -> bool {
        self.line == 0
    }
}

impl std::fmt::Display for Broken {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.unreadable() {
            true => write!(f, "{} cannot be read: {}", self.file.display(), self.why),
            false => write!(f, "{} line {}: {}", self.file.display(), self.line, self.why),
        }
    }
}

/// What a line's check needs of it.
#[derive(Deserialize)]
struct Links {
    seq: u64,
    prev: String,
}

/// One line of the files, where it is, and its links if it has them.
struct Line {
    file: usize,
    number: usize,
    hash: String,
    links: Result<Links, String>,
}

/// Verifies `files` as one whole log, in the order given (rotated files
/// first, oldest first, the live file last): its first record must be
/// `seq` 1 with a `prev` of 64 zeros, so a log missing its first lines (or
/// its first files) is broken at line 1. What `actix-mcp audit verify
/// FILE…` runs; [`verify_after`] checks files that continue a log.
///
/// ```no_run
/// let files = vec![std::path::PathBuf::from("/var/log/actix-mcp/audit.jsonl")];
/// match actix_mcp::audit::verify(&files) {
///     Ok(intact) => println!("{} records, head: seq {} sha256 {}", intact.records, intact.head_seq, intact.head_hash),
///     Err(broken) => eprintln!("altered: {broken}"),
/// }
/// ```
pub fn verify(files: &[PathBuf]) -> Result<Intact, Broken> {
    verify_after(&Head::default(), files)
}

/// Verifies `files` as the continuation of a log after `anchor`, a head
/// recorded before (by [`verify`], or as the server logs it when the log
/// opens, rotates or closes): the first record must be `seq`
/// `anchor.seq + 1` and its `prev` `anchor.hash`. `audit verify --after
/// SEQ:SHA256` runs it. With [`Head::default`] it is [`verify`].
pub fn verify_after(anchor: &Head, files: &[PathBuf]) -> Result<Intact, Broken> {
    let mut lines = Vec::new();
    for (i, path) in files.iter().enumerate() {
        read_lines(i, path, &mut lines)?;
    }
    let at = |l: &Line, why: String| Broken { file: files[l.file].clone(), line: l.number, why };
    let (mut seq, mut hash) = (anchor.seq, anchor.hash.as_str());
    for (k, line) in lines.iter().enumerate() {
        let links = line.links.as_ref().map_err(|why| at(line, why.clone()))?;
        let Some(before) = k.checked_sub(1).map(|b| &lines[b]) else {
            // The anchor cannot have changed: a broken first link is this line's.
            if let Some(why) = first_break(anchor, links) {
                return Err(at(line, why));
            }
            (seq, hash) = (links.seq, line.hash.as_str());
            continue;
        };
        if Some(links.seq) != seq.checked_add(1) {
            return Err(at(line, format!("seq {} follows seq {seq}", links.seq)));
        }
        if links.prev != hash {
            // The line before changed, unless this one's own hash no longer
            // matches the next line's prev either.
            let next_breaks = lines.get(k + 1).is_some_and(|n| n.links.as_ref().map_or(true, |l| l.prev != line.hash));
            return Err(match next_breaks {
                true => at(
                    line,
                    "its prev is not the SHA-256 of the line before, nor is its SHA-256 the next line's prev".into(),
                ),
                false => at(before, "its SHA-256 is not the next line's prev".into()),
            });
        }
        (seq, hash) = (links.seq, line.hash.as_str());
    }
    Ok(Intact { records: lines.len() as u64, head_seq: seq, head_hash: hash.to_owned() })
}

/// What is wrong with the first record's links after `anchor`, if anything.
fn first_break(anchor: &Head, links: &Links) -> Option<String> {
    let want = anchor.seq.saturating_add(1);
    let after = match anchor.seq {
        0 => String::new(),
        s => format!(" (it follows the anchor, seq {s})"),
    };
    if links.seq > want {
        let missing = match links.seq - 1 {
            last if last == want => format!("the record before it (seq {want}) is"),
            last => format!("the records before it (seq {want} to {last}) are"),
        };
        return Some(format!("the first record has seq {}, not {want}{after}: {missing} missing", links.seq));
    }
    if links.seq < want {
        return Some(format!("the first record has seq {}, not {want}{after}", links.seq));
    }
    match (links.prev == anchor.hash, anchor.seq) {
        (true, _) => None,
        (false, 0) => Some("the first record (seq 1) has a prev that is not 64 zeros".into()),
        (false, s) => Some(format!("its prev is not the anchored SHA-256 of seq {s}")),
    }
}

/// Reads the lines of `path` (file `index` of the chain) into `out`.
fn read_lines(index: usize, path: &Path, out: &mut Vec<Line>) -> Result<(), Broken> {
    let broken = |line: usize, why: String| Broken { file: path.to_owned(), line, why };
    let text = std::fs::read(path).map_err(|e| broken(0, e.to_string()))?;
    if text.is_empty() {
        return Ok(());
    }
    let body = match text.strip_suffix(b"\n") {
        Some(body) => body,
        None => {
            let last = text.split(|b| *b == b'\n').count();
            return Err(broken(last, "the last line is cut short (no newline)".into()));
        }
    };
    for (n, bytes) in body.split(|b| *b == b'\n').enumerate() {
        let links =
            serde_json::from_slice::<Links>(bytes).map_err(|e| format!("not an audit record ({e})")).and_then(|l| {
                match is_digest(&l.prev) {
                    true => Ok(l),
                    false => Err("its prev is not a SHA-256 in lowercase hex".to_owned()),
                }
            });
        out.push(Line { file: index, number: n + 1, hash: sha256_hex(bytes), links });
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::audit::chain::{sample, scratch, Head};

    #[test]
    fn a_missing_file_is_unreadable_not_altered() {
        let dir = scratch("missing");
        let missing = dir.path().join("audit.jsonl.7");
        let broken = verify(std::slice::from_ref(&missing)).unwrap_err();
        assert!(broken.unreadable(), "{broken}");
        let said = broken.to_string();
        assert!(said.starts_with(&format!("{} cannot be read: ", missing.display())), "{said}");
    }

    /// `n` chained lines, split into files of `per_file` lines under `dir`.
    fn log(dir: &Path, n: usize, per_file: usize) -> Vec<PathBuf> {
        let mut head = Head::default();
        let mut files = Vec::new();
        for chunk in (0..n).collect::<Vec<_>>().chunks(per_file) {
            let path = dir.join(format!("audit.jsonl.{}", chunk[0] + 1));
            let text: String = chunk.iter().map(|i| head.append(sample(&format!("tool{i}"))) + "\n").collect();
            std::fs::write(&path, text).unwrap();
            files.push(path);
        }
        files
    }

    #[test]
    fn an_intact_chain_across_files_verifies() {
        let dir = scratch("verify-intact");
        let files = log(dir.path(), 25, 10);
        let intact = verify(&files).unwrap();
        assert_eq!((intact.records, intact.head_seq), (25, 25));
        // A later file alone is a log missing its start, unless it is
        // verified after the head of the files before it.
        let e = verify(&files[1..]).unwrap_err();
        assert_eq!((e.file.clone(), e.line), (files[1].clone(), 1), "{e}");
        assert!(e.why.contains("has seq 11, not 1: the records before it (seq 1 to 10) are missing"), "{e}");
        let anchor = Head::of_file(&files[0]).unwrap();
        let continued = verify_after(&anchor, &files[1..]).unwrap();
        assert_eq!((continued.records, continued.head_seq, continued.head_hash), (15, 25, intact.head_hash));
        // Out of order, the chain breaks where the files meet.
        let e = verify(&[files[0].clone(), files[2].clone(), files[1].clone()]).unwrap_err();
        assert_eq!((e.file.clone(), e.line), (files[2].clone(), 1), "{e}");
    }

    #[test]
    fn lines_removed_from_the_start_are_named() {
        let dir = scratch("verify-prefix");
        let files = log(dir.path(), 6, 100);
        let text = std::fs::read_to_string(&files[0]).unwrap();
        let lines: Vec<&str> = text.lines().collect();
        let from = |k: usize| -> String { lines[k..].iter().map(|l| format!("{l}\n")).collect() };
        for (cut, why) in [
            (1, "the first record has seq 2, not 1: the record before it (seq 1) is missing"),
            (2, "the first record has seq 3, not 1: the records before it (seq 1 to 2) are missing"),
        ] {
            std::fs::write(&files[0], from(cut)).unwrap();
            let e = verify(&files).unwrap_err();
            assert_eq!((e.line, e.why.as_str()), (1, why), "{e}");
        }
        // Anchored at the head of the lines removed, the rest verifies;
        // anchored anywhere else, it does not.
        let head = |k: usize| Head { seq: k as u64, hash: sha256_hex(lines[k - 1].as_bytes()) };
        assert_eq!(verify_after(&head(2), &files).unwrap().records, 4);
        let e = verify_after(&head(1), &files).unwrap_err();
        assert!(e.why.contains("has seq 3, not 2 (it follows the anchor, seq 1)"), "{e}");
        let forged = Head { seq: 2, hash: head(1).hash };
        assert_eq!(verify_after(&forged, &files).unwrap_err().why, "its prev is not the anchored SHA-256 of seq 2");
        // A first record with seq 1 must start from 64 zeros.
        std::fs::write(&files[0], from(0).replacen(r#""prev":"0"#, r#""prev":"1"#, 1)).unwrap();
        let e = verify(&files).unwrap_err();
        assert_eq!((e.line, e.why.as_str()), (1, "the first record (seq 1) has a prev that is not 64 zeros"));
        // An empty log is intact, its head the anchor's.
        std::fs::write(&files[0], "").unwrap();
        assert_eq!(verify_after(&head(2), &files).unwrap().head_seq, 2);
    }

    #[test]
    fn a_flipped_byte_anywhere_but_the_last_line_is_named() {
        let dir = scratch("verify-flip");
        let files = log(dir.path(), 12, 100);
        let original = std::fs::read(&files[0]).unwrap();
        let starts: Vec<usize> = std::iter::once(0)
            .chain(original.iter().enumerate().filter(|(_, b)| **b == b'\n').map(|(i, _)| i + 1))
            .collect();
        // Every byte of every line but the last (and not a newline).
        for at in 0..starts[11] {
            if original[at] == b'\n' {
                continue;
            }
            let mut text = original.clone();
            text[at] ^= 0x01;
            std::fs::write(&files[0], &text).unwrap();
            let line = starts.iter().rposition(|s| *s <= at).unwrap() + 1;
            let e = verify(&files).expect_err("a flipped byte breaks the chain");
            assert_eq!(e.line, line, "byte {at} ({:?}): {e}", original[at] as char);
        }
    }

    #[test]
    fn a_removed_or_inserted_line_is_named() {
        let dir = scratch("verify-remove");
        let files = log(dir.path(), 5, 100);
        let text = std::fs::read_to_string(&files[0]).unwrap();
        let lines: Vec<&str> = text.lines().collect();
        let without: String =
            lines.iter().enumerate().filter(|(i, _)| *i != 2).map(|(_, l)| format!("{l}\n")).collect();
        std::fs::write(&files[0], without).unwrap();
        assert_eq!(verify(&files).unwrap_err().line, 3);
        let doubled: String = lines.iter().chain(std::iter::once(&lines[1])).map(|l| format!("{l}\n")).collect();
        std::fs::write(&files[0], doubled).unwrap();
        assert_eq!(verify(&files).unwrap_err().line, 6);
    }
}
