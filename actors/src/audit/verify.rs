//! `actix-mcp audit verify FILE…`: walks the chain of one or more log files
//! (rotated files first, oldest first, the live file last) and names the
//! first line that was altered, inserted or removed.
//!
//! Each line must be a record whose `seq` is one more than the line
//! before's and whose `prev` is the SHA-256 of the line before. The first
//! line verified may continue an older log (its `prev` is then taken as
//! the anchor), but `seq` 1, and only it, has a `prev` of 64 zeros.
//!
//! A broken link between lines N and N+1 means one of the two changed:
//! line N, when the link after N+1 holds (any byte of N changes its hash),
//! else line N+1 (its own `prev` changed, so its hash did too). A chain
//! alone cannot see a changed or removed *last* line: compare the head this
//! prints with one kept elsewhere (see the operating guide).

use std::path::{Path, PathBuf};

use serde::Deserialize;

use super::chain::{is_digest, sha256_hex, GENESIS};

/// A chain that holds.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Intact {
    /// Records verified.
    pub records: u64,
    /// The last record's `seq` (0 when there was none).
    pub head_seq: u64,
    /// The hash of the last line: the value to keep elsewhere.
    pub head_hash: String,
}

/// The first line that breaks the chain.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Broken {
    /// The file it is in.
    pub file: PathBuf,
    /// Its line number in that file, from 1.
    pub line: usize,
    /// What is wrong.
    pub why: String,
}

impl std::fmt::Display for Broken {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} line {}: {}", self.file.display(), self.line, self.why)
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

/// Verifies `files` as one chain, in the order given.
pub fn verify(files: &[PathBuf]) -> Result<Intact, Broken> {
    let mut lines = Vec::new();
    for (i, path) in files.iter().enumerate() {
        read_lines(i, path, &mut lines)?;
    }
    let at = |l: &Line, why: String| Broken { file: files[l.file].clone(), line: l.number, why };
    for (k, line) in lines.iter().enumerate() {
        let links = line.links.as_ref().map_err(|why| at(line, why.clone()))?;
        let Some(before) = k.checked_sub(1).map(|b| &lines[b]) else {
            // Seq 1 and only it starts from 64 zeros; a later start is an anchor.
            if (links.seq == 1) != (links.prev == GENESIS) {
                return Err(at(line, "only the first record (seq 1) has a prev of 64 zeros".into()));
            }
            continue;
        };
        let before_seq = before.links.as_ref().map(|l| l.seq).unwrap_or_default();
        if links.seq != before_seq + 1 {
            return Err(at(line, format!("seq {} follows seq {before_seq}", links.seq)));
        }
        if links.prev != before.hash {
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
    }
    let head = lines.last();
    Ok(Intact {
        records: lines.len() as u64,
        head_seq: head.and_then(|l| l.links.as_ref().ok()).map_or(0, |l| l.seq),
        head_hash: head.map_or_else(|| GENESIS.to_owned(), |l| l.hash.clone()),
    })
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
        // A later file alone continues an older log.
        assert_eq!(verify(&files[1..]).unwrap().records, 15);
        // Out of order, the chain breaks where the files meet.
        let e = verify(&[files[1].clone(), files[0].clone()]).unwrap_err();
        assert_eq!((e.file.clone(), e.line), (files[0].clone(), 1), "{e}");
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
