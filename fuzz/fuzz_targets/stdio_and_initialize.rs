//! The stdio line reader over any input fed in any chunk size (every byte is
//! accounted for: in a kept line, a newline, or an over-long line), and any
//! params as a legacy `initialize`.
#![no_main]

use libfuzzer_sys::fuzz_target;
use mcp_protocol::legacy::LegacyRequest;
use mcp_protocol::lines::{Line, LineReader};

fuzz_target!(|data: &[u8]| {
    let (max, chunk, input) = match data {
        [m, c, rest @ ..] => (usize::from(*m % 64) + 1, usize::from(*c % 16) + 1, rest),
        _ => return,
    };
    let mut reader = LineReader::new(max);
    let mut rest = input;
    let (mut accounted, mut newlines) = (0usize, 0usize);
    let count = |line: Line, reader: &LineReader| match line {
        Line::Complete => {
            assert!(reader.line().len() <= max && !reader.line().contains(&b'\n'));
            reader.line().len()
        }
        Line::TooLong(len) => {
            assert!(len > max);
            len
        }
    };
    while !rest.is_empty() {
        let window = &rest[..chunk.min(rest.len())];
        let (used, line) = reader.feed(window);
        assert!(used > 0 && used <= window.len(), "{used} of {}", window.len());
        rest = &rest[used..];
        if let Some(line) = line {
            assert_eq!(window[used - 1], b'\n');
            newlines += 1;
            accounted += count(line, &reader);
        }
    }
    if let Some(line) = reader.finish() {
        accounted += count(line, &reader);
    }
    assert_eq!(reader.finish(), None);
    assert_eq!(accounted + newlines, input.len());
    if let Ok(params) = serde_json::from_slice::<mcp_protocol::RawObject>(input) {
        let _ = LegacyRequest::from_parts("initialize", Some(&params));
    }
});
