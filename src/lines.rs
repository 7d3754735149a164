//! Newline-delimited messages of bounded length: the framing of the stdio
//! transport, both ways. [`LineReader`] is fed whatever bytes the input has
//! and says where each line ends; the caller owns the input (a blocking or
//! an async reader) and consumes what it was told was used.
//!
//! ```
//! use mcp_protocol::lines::{Line, LineReader};
//!
//! let mut reader = LineReader::new(8);
//! let input = b"{}\n0123456789\nlast";
//! let (used, line) = reader.feed(input);
//! assert_eq!((used, line, reader.line()), (3, Some(Line::Complete), &b"{}"[..]));
//! let (used, line) = reader.feed(&input[3..]);
//! assert_eq!((used, line), (11, Some(Line::TooLong(10))));
//! assert_eq!(reader.feed(&input[14..]), (4, None));
//! assert_eq!((reader.finish(), reader.line()), (Some(Line::Complete), &b"last"[..]));
//! assert_eq!(reader.finish(), None);
//! ```

/// How a line ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Line {
    /// Within the bound: its bytes, without the newline, are
    /// [`LineReader::line`].
    Complete,
    /// Longer than the bound: this many bytes (without the newline) were
    /// read past and not kept.
    TooLong(usize),
}

/// One line at a time, at most `max` bytes kept (a longer line is counted,
/// not stored).
#[derive(Debug, Clone)]
pub struct LineReader {
    max: usize,
    line: Vec<u8>,
    /// Bytes of the current line once it has grown past `max` (0: within).
    overflow: usize,
    /// The last call ended a line: the next starts a new one.
    ended: bool,
}

impl LineReader {
    /// A reader keeping lines of at most `max` bytes.
    pub fn new(max: usize) -> Self {
        LineReader { max, line: Vec::new(), overflow: 0, ended: false }
    }

    /// Reads from `available` up to and including its first newline. Returns
    /// how many bytes were used (the caller consumes exactly these) and, if
    /// a newline ended the line, how it ended. An empty slice uses nothing.
    pub fn feed(&mut self, available: &[u8]) -> (usize, Option<Line>) {
        self.start_if_ended();
        let (chunk, used, done) = match available.iter().position(|&b| b == b'\n') {
            Some(pos) => (&available[..pos], pos + 1, true),
            None => (available, available.len(), false),
        };
        if self.overflow > 0 || self.line.len() + chunk.len() > self.max {
            self.overflow += self.line.len() + chunk.len();
            self.line.clear();
        } else {
            self.line.extend_from_slice(chunk);
        }
        if !done {
            return (used, None);
        }
        self.ended = true;
        (used, Some(self.ending()))
    }

    /// At the end of the input: the last line, ended by no newline, if it
    /// has any byte; `None` once everything was read.
    pub fn finish(&mut self) -> Option<Line> {
        self.start_if_ended();
        if self.line.is_empty() && self.overflow == 0 {
            return None;
        }
        self.ended = true;
        Some(self.ending())
    }

    /// Whether the line being read is already longer than the bound (a
    /// reader that gives up on such a line need not read on to its end).
    pub fn is_too_long(&self) -> bool {
        !self.ended && self.overflow > 0
    }

    /// The bytes of the line just ended as [`Line::Complete`] (or of the
    /// line so far).
    pub fn line(&self) -> &[u8] {
        &self.line
    }

    /// Takes the bytes of the line just ended, leaving none behind.
    pub fn take_line(&mut self) -> Vec<u8> {
        std::mem::take(&mut self.line)
    }

    fn start_if_ended(&mut self) {
        if self.ended {
            self.line.clear();
            self.overflow = 0;
            self.ended = false;
        }
    }

    fn ending(&self) -> Line {
        match self.overflow {
            0 => Line::Complete,
            n => Line::TooLong(n),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Feeds `input` in chunks of `chunk` bytes; every line, as
    /// (bytes, how it ended).
    fn read_all(input: &[u8], chunk: usize, max: usize) -> Vec<(Vec<u8>, Line)> {
        let mut reader = LineReader::new(max);
        let mut out = Vec::new();
        let mut rest = input;
        while !rest.is_empty() {
            let window = &rest[..chunk.min(rest.len())];
            let (used, line) = reader.feed(window);
            assert!(used > 0 && used <= window.len());
            rest = &rest[used..];
            if let Some(line) = line {
                out.push((reader.take_line(), line));
            }
        }
        while let Some(line) = reader.finish() {
            out.push((reader.take_line(), line));
        }
        out
    }

    #[test]
    fn lines_within_the_bound_are_kept_and_longer_ones_counted() {
        for chunk in [1, 2, 3, 5, 64] {
            assert_eq!(
                read_all(b"{}\n0123456789abc\n\nx", chunk, 8),
                vec![
                    (b"{}".to_vec(), Line::Complete),
                    (Vec::new(), Line::TooLong(13)),
                    (Vec::new(), Line::Complete),
                    (b"x".to_vec(), Line::Complete),
                ],
                "chunks of {chunk}"
            );
        }
    }

    #[test]
    fn a_line_of_exactly_the_bound_is_kept_and_one_more_byte_is_too_long() {
        assert_eq!(
            read_all(b"1234\n12345\n", 2, 4),
            vec![(b"1234".to_vec(), Line::Complete), (Vec::new(), Line::TooLong(5))]
        );
    }

    #[test]
    fn an_over_long_line_at_the_end_of_the_input_is_reported_and_the_reader_knows_early() {
        let mut reader = LineReader::new(3);
        assert_eq!(reader.feed(b"12"), (2, None));
        assert!(!reader.is_too_long());
        assert_eq!(reader.feed(b"34"), (2, None));
        assert!(reader.is_too_long());
        assert_eq!(reader.finish(), Some(Line::TooLong(4)));
        assert!(!reader.is_too_long());
        assert_eq!(reader.finish(), None);
    }

    #[test]
    fn an_empty_input_has_no_line_and_an_empty_feed_uses_nothing() {
        let mut reader = LineReader::new(3);
        assert_eq!(reader.feed(b""), (0, None));
        assert_eq!(reader.finish(), None);
    }
}
