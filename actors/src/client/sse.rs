//! Server-sent events as a client reads them (`text/event-stream`, the
//! WHATWG rules): chunks in, events out, in time linear in the bytes and in
//! memory bounded by one event. Each byte is looked at once to find line
//! ends and copied at most twice (into the current line, then into the
//! event's data); an event larger than the limit is refused before it is
//! read whole. An event whose data or id is not UTF-8 is refused too, as a
//! JSON body with invalid UTF-8 is: nothing the server sent is replaced.

use std::time::Duration;

/// One event.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct SseEvent {
    /// Its `id:` field, if it had one.
    pub(crate) id: Option<String>,
    /// Its `data:` lines, joined by `\n`.
    pub(crate) data: String,
    /// A `retry:` field, if it had one.
    pub(crate) retry: Option<Duration>,
}

/// Why the stream is not read further.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Malformed {
    /// An event larger than the limit (its size so far).
    TooLarge(usize),
    /// An event whose data or id is not UTF-8: which event of the stream it
    /// is (counted from 1) and its id, when that was readable.
    NotUtf8 {
        /// Its place in the stream.
        event: usize,
        /// Its `id:`, if it had a readable one.
        id: Option<String>,
    },
}

impl Malformed {
    /// What went wrong, as a clause: in the stream answering `what`, with
    /// events limited to `max` bytes.
    pub(crate) fn describe(&self, what: &str, max: usize) -> String {
        match self {
            Malformed::TooLarge(read) => format!(
                "the server sent an event of more than {max} bytes (max_message_bytes; {read} read); \
                 the stream is not read further"
            ),
            Malformed::NotUtf8 { event, id } => {
                let id = id.as_ref().map(|i| format!(" (id {i:?})")).unwrap_or_default();
                format!(
                    "event {event}{id} of the SSE stream answering {what} is not UTF-8; \
                     the stream is not read further"
                )
            }
        }
    }
}

/// The parser's state between chunks.
pub(crate) struct SseDecoder {
    /// The current line, not ended yet.
    line: Vec<u8>,
    /// The current event's data.
    data: Vec<u8>,
    id: Option<String>,
    retry: Option<Duration>,
    /// The last chunk ended with `\r`: a `\n` first in the next is part of it.
    after_cr: bool,
    /// Largest event (data and the line being read), in bytes.
    max: usize,
    /// Events passed on so far.
    events: usize,
    /// Bytes looked at so far, for the test of linearity.
    #[cfg(test)]
    examined: usize,
}

impl SseDecoder {
    /// A decoder refusing events over `max` bytes.
    pub(crate) fn new(max: usize) -> Self {
        SseDecoder {
            line: Vec::new(),
            data: Vec::new(),
            id: None,
            retry: None,
            after_cr: false,
            max,
            events: 0,
            #[cfg(test)]
            examined: 0,
        }
    }

    /// Reads `chunk`, handing each event it completes to `event`.
    /// After an error the decoder is not to be fed again.
    pub(crate) fn feed(&mut self, mut chunk: &[u8], mut event: impl FnMut(SseEvent)) -> Result<(), Malformed> {
        if std::mem::take(&mut self.after_cr) && chunk.first() == Some(&b'\n') {
            chunk = &chunk[1..];
        }
        while !chunk.is_empty() {
            let end = chunk.iter().position(|&b| b == b'\n' || b == b'\r');
            #[cfg(test)]
            {
                self.examined += end.map_or(chunk.len(), |e| e + 1);
            }
            let Some(end) = end else {
                self.grow_line(chunk)?;
                return Ok(());
            };
            self.grow_line(&chunk[..end])?;
            let mut next = end + 1;
            if chunk[end] == b'\r' {
                match chunk.get(next) {
                    Some(b'\n') => next += 1,
                    Some(_) => {}
                    None => self.after_cr = true,
                }
            }
            chunk = &chunk[next..];
            if let Some(e) = self.line_ended()? {
                event(e);
            }
        }
        Ok(())
    }

    fn grow_line(&mut self, bytes: &[u8]) -> Result<(), Malformed> {
        let size = self.data.len() + self.line.len() + bytes.len();
        if size > self.max {
            return Err(Malformed::TooLarge(size));
        }
        self.line.extend_from_slice(bytes);
        Ok(())
    }

    /// The current line is whole: a field of the event, a comment, or (an
    /// empty line) the event's end.
    fn line_ended(&mut self) -> Result<Option<SseEvent>, Malformed> {
        let line = std::mem::take(&mut self.line);
        if line.is_empty() {
            return self.dispatch();
        }
        if line[0] == b':' {
            return Ok(None);
        }
        let (field, value) = match line.iter().position(|&b| b == b':') {
            Some(at) => {
                let value = &line[at + 1..];
                (&line[..at], value.strip_prefix(b" ").unwrap_or(value))
            }
            None => (&line[..], &b""[..]),
        };
        match field {
            b"data" => {
                if !self.data.is_empty() {
                    self.data.push(b'\n');
                }
                self.data.extend_from_slice(value);
            }
            b"id" if !value.contains(&0) => match std::str::from_utf8(value) {
                Ok(id) => self.id = Some(id.to_owned()),
                Err(_) => return Err(Malformed::NotUtf8 { event: self.events + 1, id: None }),
            },
            b"retry" => {
                if let Some(ms) = std::str::from_utf8(value).ok().and_then(|v| v.parse::<u64>().ok()) {
                    self.retry = Some(Duration::from_millis(ms));
                }
            }
            _ => {}
        }
        // The line's buffer is kept for the next line.
        self.line = line;
        self.line.clear();
        Ok(None)
    }

    /// The event read so far (none after a blank line alone), reset for
    /// the next. An event with an `id:` and no data is passed on: a server
    /// names the point to resume from with one. Data that is not UTF-8 is
    /// refused, naming the event.
    fn dispatch(&mut self) -> Result<Option<SseEvent>, Malformed> {
        let (id, retry) = (self.id.take(), self.retry.take());
        if self.data.is_empty() && id.is_none() && retry.is_none() {
            return Ok(None);
        }
        self.events += 1;
        let data = match String::from_utf8(std::mem::take(&mut self.data)) {
            Ok(data) => data,
            Err(_) => return Err(Malformed::NotUtf8 { event: self.events, id }),
        };
        Ok(Some(SseEvent { id, data, retry }))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn events(chunks: &[&[u8]], max: usize) -> Result<Vec<SseEvent>, Malformed> {
        let mut d = SseDecoder::new(max);
        let mut out = Vec::new();
        for c in chunks {
            d.feed(c, |e| out.push(e))?;
        }
        Ok(out)
    }

    #[test]
    fn fields_lines_and_line_ends_in_any_chunking() {
        let text = b"id: 7\nretry: 250\ndata: {\"a\":\ndata: 1}\n\n\n: comment\r\ndata:x\r\rdata: y\r\n\r\n";
        let whole = events(&[text], 1024).unwrap();
        assert_eq!(
            whole,
            [
                SseEvent { id: Some("7".into()), data: "{\"a\":\n1}".into(), retry: Some(Duration::from_millis(250)) },
                SseEvent { id: None, data: "x".into(), retry: None },
                SseEvent { id: None, data: "y".into(), retry: None },
            ]
        );
        // Byte by byte (a `\r\n` split between chunks is one line end).
        let bytes: Vec<&[u8]> = text.chunks(1).collect();
        assert_eq!(events(&bytes, 1024).unwrap(), whole);
    }

    #[test]
    fn an_event_over_the_limit_is_refused_before_it_is_read_whole() {
        assert_eq!(events(&[b"data: 0123456789\n\n"], 8), Err(Malformed::TooLarge(16)));
        // Over several lines and chunks, and without ever ending.
        let r = events(&[b"data: 0123\n", b"data: 4567", b"89ab"], 12);
        assert!(matches!(r, Err(Malformed::TooLarge(n)) if n > 12), "{r:?}");
        assert!(events(&[b"data: 0123\n\ndata: 4567\n\n"], 12).is_ok(), "the limit is per event");
    }

    #[test]
    fn an_event_that_is_not_utf8_is_refused_naming_it() {
        let second = events(&[b"id: 1\ndata: {}\n\nid: 2\ndata: \"\xff\xfe\"\n\n"], 1024);
        assert_eq!(second, Err(Malformed::NotUtf8 { event: 2, id: Some("2".into()) }));
        let id = events(&[b"data: {}\n\nid: \xc3\n"], 1024);
        assert_eq!(id, Err(Malformed::NotUtf8 { event: 2, id: None }));
        // Split inside a character, it is still whole UTF-8.
        let e = events(&[b"data: \xc3", b"\xa9\n\n"], 1024).unwrap();
        assert_eq!(e[0].data, "\u{e9}");
        let why = Malformed::NotUtf8 { event: 2, id: Some("2".into()) }.describe("tools/list", 8);
        assert!(why.contains("event 2 (id \"2\")") && why.contains("tools/list") && why.contains("UTF-8"), "{why}");
    }

    #[test]
    fn each_byte_is_looked_at_once_whatever_the_event_size() {
        // 8 MiB of one event in 8 KiB chunks, as a slow call's result
        // arrives: the bytes examined grow with the bytes, not their square.
        let body = vec![b'x'; 8 << 20];
        let mut d = SseDecoder::new(16 << 20);
        let mut got = Vec::new();
        d.feed(b"data: ", |_| {}).unwrap();
        for c in body.chunks(8192) {
            d.feed(c, |e| got.push(e)).unwrap();
        }
        d.feed(b"\n\n", |e| got.push(e)).unwrap();
        assert_eq!(got.len(), 1);
        assert_eq!(got[0].data.len(), 8 << 20);
        assert!(d.examined <= body.len() + 16, "{} bytes examined for {}", d.examined, body.len());
    }
}
