//! The text log format (`log.format = "term"`): one line per record,
//! `TIME LEVEL message, key: value, …`, the time in UTC to the millisecond
//! (`2026-12-04 09:15:02.123Z`), the record's own values first, then its
//! logger's. Plain text, no colours: the log goes to stderr and often to a
//! file or a collector.

use std::fmt::Write as _;
use std::io::Write;
use std::sync::Mutex;

use slog::{Key, OwnedKVList, Record, KV};

/// A drain writing [text lines](self) to `W`, flushed per record.
pub(crate) struct TextDrain<W: Write> {
    out: Mutex<W>,
}

impl<W: Write> TextDrain<W> {
    pub(crate) fn new(out: W) -> Self {
        TextDrain { out: Mutex::new(out) }
    }
}

impl<W: Write> slog::Drain for TextDrain<W> {
    type Ok = ();
    type Err = std::io::Error;

    fn log(&self, record: &Record<'_>, values: &OwnedKVList) -> std::io::Result<()> {
        let line = line(time::OffsetDateTime::now_utc(), record, values);
        let mut out = self.out.lock().unwrap_or_else(|e| e.into_inner());
        out.write_all(line.as_bytes())?;
        out.flush()
    }
}

/// One record as a line, newline included.
fn line(now: time::OffsetDateTime, record: &Record<'_>, values: &OwnedKVList) -> String {
    let mut line = String::with_capacity(128);
    let _ = write!(
        line,
        "{:04}-{:02}-{:02} {:02}:{:02}:{:02}.{:03}Z {} {}",
        now.year(),
        u8::from(now.month()),
        now.day(),
        now.hour(),
        now.minute(),
        now.second(),
        now.millisecond(),
        record.level().as_short_str(),
        record.msg()
    );
    let mut pairs = Pairs(&mut line);
    let _ = record.kv().serialize(record, &mut pairs);
    let _ = values.serialize(record, &mut pairs);
    line.push('\n');
    line
}

/// Appends `, key: value` for each pair.
struct Pairs<'a>(&'a mut String);

impl slog::Serializer for Pairs<'_> {
    fn emit_arguments(&mut self, key: Key, value: &std::fmt::Arguments<'_>) -> slog::Result {
        let _ = write!(self.0, ", {key}: {value}");
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use slog::{o, Drain, Logger};

    #[derive(Clone, Default)]
    struct Shared(std::sync::Arc<Mutex<Vec<u8>>>);

    impl Write for Shared {
        fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
            self.0.lock().unwrap().extend_from_slice(buf);
            Ok(buf.len())
        }

        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }

    #[test]
    fn a_record_is_one_line_with_time_level_message_and_values() {
        let out = Shared::default();
        let log = Logger::root(TextDrain::new(out.clone()).fuse(), o!("service" => "weather"));
        slog::warn!(log, "slow request"; "ms" => 1200, "method" => "tools/call");
        let text = String::from_utf8(out.0.lock().unwrap().clone()).unwrap();
        let (time, rest) = text.split_at(25);
        assert!(time.ends_with("Z ") && time.as_bytes()[4] == b'-' && time.as_bytes()[10] == b' ', "{text}");
        assert_eq!(rest, "WARN slow request, method: tools/call, ms: 1200, service: weather\n");
    }
}
