//! `events/stream` sessions as the suite reads them: the raw SSE frames
//! with their times, comment lines, the final frame, whether the server
//! closed.

use super::*;

/// A JSON-RPC notification as it arrived on a stream.
#[derive(Clone, Debug)]
pub(super) struct Note {
    pub(super) method: String,
    /// Always an object (`{}` when the frame had none).
    pub(super) params: Value,
    /// Milliseconds since just before the POST.
    pub(super) at_ms: u64,
}

/// What a stream delivered so far.
#[derive(Default)]
pub(super) struct Frames {
    pub(super) notes: Vec<Note>,
    /// SSE comment lines (starting with `:`).
    pub(super) comments: Vec<String>,
    /// The frame answering the stream's request id.
    pub(super) final_frame: Option<Value>,
    pub(super) error: Option<RpcError>,
    pub(super) open: bool,
}

/// One `events/stream` POST, read in the background until the server ends
/// it or it is cancelled (the response dropped: the client-side cancel).
pub(super) struct Session {
    pub(super) request_id: u64,
    pub(super) status: u16,
    pub(super) content_type: Option<String>,
    pub(super) frames: Arc<Mutex<Frames>>,
    pub(super) reader: Option<tokio::task::JoinHandle<()>>,
}

impl Session {
    /// POSTs `events/stream` with a random id; returns once the headers came
    /// and, for a stream, once a first notification came (or
    /// `open_timeout_ms` passed).
    pub(super) async fn start(url: &str, params: Value, open_timeout_ms: u64) -> Session {
        let request_id = random() % 1_000_000 + 1;
        let body = common::request(json!(request_id), "events/stream", with_meta(params));
        let mut request = reqwest::Client::new().post(url).body(serde_json::to_vec(&body).unwrap());
        for (name, value) in common::standard_headers(&body) {
            request = request.header(name, value);
        }
        let opened = Instant::now();
        let response = tokio::time::timeout(Duration::from_secs(10), request.send())
            .await
            .expect("events/stream answers its headers within 10 s")
            .expect("events/stream is sent");
        let status = response.status().as_u16();
        let content_type = response.headers().get("content-type").and_then(|v| v.to_str().ok()).map(str::to_owned);
        let frames = Arc::new(Mutex::new(Frames { open: true, ..Frames::default() }));
        let mut session = Session { request_id, status, content_type, frames, reader: None };
        if session.is_sse() {
            let reader = read_frames(response, session.frames.clone(), opened, request_id);
            session.reader = Some(actix_rt::spawn(reader));
            session.wait_for(|_| true, open_timeout_ms).await;
        } else {
            let text = response.text().await.unwrap_or_default();
            let mut frames = session.frames.lock().unwrap();
            frames.open = false;
            if let Ok(frame) = serde_json::from_str(&text) {
                ingest(&mut frames, frame, opened, request_id);
            }
        }
        session
    }

    pub(super) fn is_sse(&self) -> bool {
        self.content_type.as_deref().is_some_and(|c| c.contains("text/event-stream"))
    }

    pub(super) fn is_open(&self) -> bool {
        self.frames.lock().unwrap().open
    }

    pub(super) fn notes(&self) -> Vec<Note> {
        self.frames.lock().unwrap().notes.clone()
    }

    pub(super) fn comments(&self) -> Vec<String> {
        self.frames.lock().unwrap().comments.clone()
    }

    pub(super) fn final_frame(&self) -> Option<Value> {
        self.frames.lock().unwrap().final_frame.clone()
    }

    pub(super) fn error(&self) -> Option<RpcError> {
        self.frames.lock().unwrap().error.clone()
    }

    pub(super) fn find(&self, wanted: &impl Fn(&Note) -> bool) -> Option<Note> {
        self.frames.lock().unwrap().notes.iter().find(|note| wanted(note)).cloned()
    }

    /// The first notification `wanted` accepts, waiting up to `timeout_ms`
    /// while the stream is open.
    pub(super) async fn wait_for(&self, wanted: impl Fn(&Note) -> bool, timeout_ms: u64) -> Option<Note> {
        let deadline = Instant::now() + Duration::from_millis(timeout_ms);
        loop {
            if let Some(hit) = self.find(&wanted) {
                return Some(hit);
            }
            if !self.is_open() || Instant::now() >= deadline {
                return self.find(&wanted);
            }
            tokio::time::sleep(pause(deadline)).await;
        }
    }

    /// Waits `ms`, or until the stream ends.
    pub(super) async fn settle(&self, ms: u64) {
        let deadline = Instant::now() + Duration::from_millis(ms);
        while self.is_open() && Instant::now() < deadline {
            tokio::time::sleep(pause(deadline)).await;
        }
    }

    pub(super) fn cancel(&mut self) {
        if let Some(reader) = self.reader.take() {
            reader.abort();
        }
        if let Ok(mut frames) = self.frames.lock() {
            frames.open = false;
        }
    }
}

impl Drop for Session {
    fn drop(&mut self) {
        self.cancel();
    }
}

pub(super) fn pause(deadline: Instant) -> Duration {
    deadline.saturating_duration_since(Instant::now()).clamp(Duration::from_millis(1), Duration::from_millis(100))
}

/// Splits the body on line ends: `:` lines are comments, `data:` lines JSON
/// frames; every other line is ignored.
pub(super) async fn read_frames(
    response: reqwest::Response,
    frames: Arc<Mutex<Frames>>,
    opened: Instant,
    request_id: u64,
) {
    let mut body = Box::pin(response.bytes_stream());
    let mut buf: Vec<u8> = Vec::new();
    while let Some(Ok(chunk)) = body.next().await {
        buf.extend_from_slice(&chunk);
        while let Some(end) = buf.iter().position(|b| *b == b'\n') {
            let raw: Vec<u8> = buf.drain(..=end).collect();
            let text = String::from_utf8_lossy(&raw);
            let line = text.trim_end_matches(['\n', '\r']);
            read_line(&mut frames.lock().unwrap(), line, opened, request_id);
        }
    }
    frames.lock().unwrap().open = false;
}

pub(super) fn read_line(frames: &mut Frames, line: &str, opened: Instant, request_id: u64) {
    if line.starts_with(':') {
        frames.comments.push(line.to_owned());
        return;
    }
    let Some(payload) = line.strip_prefix("data:").map(str::trim) else { return };
    if payload.is_empty() {
        return;
    }
    let frame = serde_json::from_str(payload).unwrap_or_else(|_| Value::String(payload.to_owned()));
    ingest(frames, frame, opened, request_id);
}

/// A notification (a `method` and no `id`), or the answer to the stream's
/// request id; any other frame is foreign and ignored.
pub(super) fn ingest(frames: &mut Frames, frame: Value, opened: Instant, request_id: u64) {
    let Some(object) = frame.as_object() else { return };
    if let (Some(method), None) = (object.get("method").and_then(Value::as_str), object.get("id")) {
        let params = object.get("params").filter(|p| p.is_object()).cloned().unwrap_or_else(|| json!({}));
        let at_ms = opened.elapsed().as_millis() as u64;
        frames.notes.push(Note { method: method.to_owned(), params, at_ms });
        return;
    }
    if object.get("id") == Some(&json!(request_id)) {
        if let Some(error) = object.get("error").filter(|e| e.is_object()) {
            frames.error = Some(RpcError::from_error(error));
        }
        frames.final_frame = Some(frame.clone());
    }
}

pub(super) fn is_active(note: &Note) -> bool {
    note.method == ACTIVE
}

pub(super) fn subscription(name: &str, args: &Value) -> Value {
    json!({"name": name, "arguments": args, "cursor": null})
}
