//! stdio, the client side: the server is a child process; messages are
//! lines on its stdin and stdout. Responses are routed to their request by
//! id, progress by its token (the request's id) and listen deliveries by
//! their subscription id; anything else (server requests of a legacy
//! session, notifications of no request) goes to the connection.
//!
//! What the child writes is bounded: a line longer than
//! `max_message_bytes` ends the connection (with that reason, before the
//! line is read whole), and a line that is not JSON — invalid UTF-8
//! included — is skipped. The child runs in a process group of its own,
//! which is ended with it: a shell's children (`sh -c "server …; …"`) too.
//!
//! Both directions are bounded by `max_queued_messages`: a child that stops
//! reading its stdin makes senders wait (within their time limits), and a
//! request whose reader leaves that many messages unread is waited for at
//! most its connection's time limit, then fails naming the limit, rather
//! than stalling every other request behind it for longer.

use foldhash::HashMap;
use std::process::Stdio as Piped;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use bytes::Bytes;
use mcp_protocol::client::ServerMessage;
use mcp_protocol::lines::{self, LineReader};
use mcp_protocol::RequestId;
use tokio::io::{AsyncBufRead, AsyncBufReadExt, AsyncWriteExt, BufReader, BufWriter};
use tokio::process::{Child, Command};
use tokio::sync::{mpsc, watch};

use super::error::ClientError;
use super::outgoing::{inbound_sharing, Broken, Inbound, InboundTx, Outgoing, Refused};

/// Requests awaiting their answers, by the id's JSON text.
type Pending = Arc<Mutex<HashMap<String, InboundTx>>>;

/// A child process speaking MCP on stdin/stdout.
pub(crate) struct Stdio {
    /// Lines for the child's stdin; taken at close, which closes it.
    writer: Mutex<Option<mpsc::Sender<Bytes>>>,
    /// How many messages a queue holds (each way).
    bound: usize,
    pending: Pending,
    child: tokio::sync::Mutex<Option<Child>>,
    /// The child's process group (its own id), ended with it.
    group: Option<u32>,
    /// Why the connection ended, once it did.
    ended: Arc<watch::Sender<Option<String>>>,
    /// The same, for the answers it cut short.
    broken: Broken,
}

/// One line of the child's stdout, read within `max` bytes.
enum Line {
    /// A whole line (without its newline), in the reader.
    Read,
    /// Over `max` bytes, and not read further.
    TooLong,
    /// The end of the output.
    End,
}

/// Reads one line through `reader`, stopping as soon as it is longer than
/// its bound.
async fn read_line<R: AsyncBufRead + Unpin>(input: &mut R, reader: &mut LineReader) -> std::io::Result<Line> {
    loop {
        let available = input.fill_buf().await?;
        if available.is_empty() {
            return Ok(match reader.finish() {
                None => Line::End,
                Some(lines::Line::Complete) => Line::Read,
                Some(lines::Line::TooLong(_)) => Line::TooLong,
            });
        }
        let (used, line) = reader.feed(available);
        input.consume(used);
        match line {
            Some(lines::Line::Complete) => return Ok(Line::Read),
            Some(lines::Line::TooLong(_)) => return Ok(Line::TooLong),
            None if reader.is_too_long() => return Ok(Line::TooLong),
            None => {}
        }
    }
}

impl Stdio {
    /// Spawns `command` (stdin and stdout piped, stderr inherited unless
    /// the command says otherwise, a process group of its own); messages of
    /// no request go to `unrouted`; a line over `max_line` bytes ends the
    /// connection; `bound` messages at most wait in each direction.
    pub(crate) fn spawn(
        mut command: Command,
        unrouted: InboundTx,
        max_line: usize,
        bound: usize,
        patience: Duration,
    ) -> Result<Self, ClientError> {
        command.stdin(Piped::piped()).stdout(Piped::piped()).kill_on_drop(true);
        #[cfg(unix)]
        command.process_group(0);
        let program = format!("{:?}", command.as_std().get_program());
        let mut child =
            command.spawn().map_err(|e| ClientError::transport(format!("starting the server {program}: {e}")))?;
        let stdin = child.stdin.take().expect("piped stdin");
        let stdout = child.stdout.take().expect("piped stdout");
        let (writer, lines) = mpsc::channel::<Bytes>(bound.max(1));
        let pending: Pending = Arc::default();
        let ended = Arc::new(watch::Sender::new(None));
        let broken = Broken::default();
        tokio::spawn(write_lines(stdin, lines));
        let end = End { why: None, pending: pending.clone(), ended: ended.clone(), broken: broken.clone() };
        let p = pending.clone();
        tokio::spawn(async move {
            let mut reader = BufReader::new(stdout);
            let mut line = LineReader::new(max_line);
            let why = loop {
                match read_line(&mut reader, &mut line).await {
                    // Not JSON (invalid UTF-8 included): skipped.
                    Ok(Line::Read) => match ServerMessage::decode(line.line()) {
                        Ok(msg) => route(&p, msg, &unrouted, patience).await,
                        Err(_) => continue,
                    },
                    Ok(Line::TooLong) => {
                        break format!(
                            "the server process {program} wrote a line of more than {max_line} bytes \
                             (max_message_bytes); the connection is closed"
                        )
                    }
                    Ok(Line::End) => break format!("the server process {program} closed its stdout"),
                    Err(err) => break format!("reading the stdout of the server process {program}: {err}"),
                }
            };
            end.because(why);
        });
        let group = child.id();
        let child = tokio::sync::Mutex::new(Some(child));
        Ok(Stdio { writer: Mutex::new(Some(writer)), bound, pending, child, group, ended, broken })
    }

    /// Writes a message (waiting while `bound` lines wait for the child);
    /// a request's answer comes on the returned channel.
    pub(crate) async fn send(&self, out: &Outgoing) -> Result<Inbound, ClientError> {
        if let Some(why) = self.ended.borrow().clone() {
            return Err(ClientError::Transport(why));
        }
        let (tx, rx) = inbound_sharing(self.broken.clone(), self.bound);
        if let Some(id) = &out.id {
            self.pending.lock().expect("pending lock").insert(id.as_json().to_owned(), tx);
        }
        let writer = self.writer.lock().expect("writer lock").clone();
        let sent = match writer {
            Some(w) => w.send(out.body.clone()).await.is_ok(),
            None => false,
        };
        if !sent {
            return Err(ClientError::transport("the server process no longer reads its stdin"));
        }
        Ok(rx)
    }

    /// Waits until the child has closed its stdout (exited, most often);
    /// why, as a sentence.
    pub(crate) async fn ended(&self) -> String {
        let mut rx = self.ended.subscribe();
        let why = rx.wait_for(Option::is_some).await.map(|v| v.clone()).ok().flatten();
        why.unwrap_or_else(|| "the server process is gone".into())
    }

    /// Forgets a request (its answer was given up).
    pub(crate) fn forget(&self, id: &RequestId) {
        self.pending.lock().expect("pending lock").remove(id.as_json());
    }

    /// Ends the child: its stdin is closed, then its process group is
    /// killed if it has not exited within two seconds.
    pub(crate) async fn close(&self) {
        // Dropping the sender ends the writer task, which closes stdin.
        drop(self.writer.lock().expect("writer lock").take());
        let Some(mut child) = self.child.lock().await.take() else { return };
        let exited = tokio::time::timeout(std::time::Duration::from_secs(2), child.wait()).await;
        if exited.is_err() {
            self.kill_group();
            let _ = child.kill().await;
        }
    }

    /// Kills the child's process group (the child and what it started).
    fn kill_group(&self) {
        #[cfg(unix)]
        if let Some(group) = self.group.and_then(|g| libc::pid_t::try_from(g).ok()) {
            // SAFETY: killpg only sends a signal; the group is the child's
            // own (process_group(0)), which has not been reaped yet.
            unsafe { libc::killpg(group, libc::SIGKILL) };
        }
    }
}

impl Drop for Stdio {
    /// A connection dropped without `close` (its last handle gone) ends its
    /// child's process group as `kill_on_drop` ends the child.
    fn drop(&mut self) {
        let running = match self.child.get_mut() {
            Some(child) => matches!(child.try_wait(), Ok(None)),
            None => false,
        };
        if running {
            self.kill_group();
        }
    }
}

/// The end of a connection, said when its reader stops: why (or, when the
/// reader was dropped unfinished — the runtime it ran on stopped — that),
/// and every waiting request learns it by its channel closing.
struct End {
    why: Option<String>,
    pending: Pending,
    ended: Arc<watch::Sender<Option<String>>>,
    broken: Broken,
}

impl End {
    /// The reader stopped for `why`.
    fn because(mut self, why: String) {
        self.why = Some(why);
    }
}

impl Drop for End {
    fn drop(&mut self) {
        let why = self.why.take().unwrap_or_else(|| "the thread that read the server process's output stopped".into());
        let _ = self.broken.set(ClientError::Transport(why.clone()));
        self.ended.send_replace(Some(why));
        self.pending.lock().unwrap_or_else(|p| p.into_inner()).clear();
    }
}

/// Writes each line for the child's stdin, until the senders are gone
/// (which closes it) or the child stops reading. The lines waiting are
/// written together, flushed once the queue is drained: a burst of calls
/// costs one write (and one wake-up of the child), not one each.
async fn write_lines(stdin: tokio::process::ChildStdin, mut lines: mpsc::Receiver<Bytes>) {
    let mut stdin = BufWriter::new(stdin);
    while let Some(line) = lines.recv().await {
        let written = async {
            stdin.write_all(&line).await?;
            stdin.write_all(b"\n").await?;
            while let Ok(more) = lines.try_recv() {
                stdin.write_all(&more).await?;
                stdin.write_all(b"\n").await?;
            }
            stdin.flush().await
        };
        if written.await.is_err() {
            break;
        }
    }
}

/// Sends a message from the server to the request it belongs to, or to
/// the connection. A request whose reader stays `bound` messages behind
/// for `patience` fails (naming the limit) instead of stalling the one
/// reader longer; the connection's own queue is waited for (its reader
/// never stops).
async fn route(pending: &Pending, msg: ServerMessage, unrouted: &InboundTx, patience: Duration) {
    let response = matches!(msg, ServerMessage::Response { .. });
    let target = msg.belongs_to().and_then(|key| {
        let mut pending = pending.lock().expect("pending lock");
        // A response ends its request.
        match response {
            true => pending.remove(&key),
            false => pending.get(&key).cloned(),
        }
        .map(|tx| (key, tx))
    });
    let Some((key, tx)) = target else {
        if !response {
            unrouted.send(msg).await;
        }
        return;
    };
    if let Err(Refused::Full) = tx.send_within(msg, patience).await {
        pending.lock().expect("pending lock").remove(&key);
        let bound = tx.bound();
        tx.give_up(ClientError::Transport(format!(
            "the server sent more than {bound} messages for one request that the client did not read \
             in time (max_queued_messages); the request is given up"
        )));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    const WAIT: Duration = Duration::from_secs(1);

    #[tokio::test]
    async fn messages_find_their_request() {
        let pending: Pending = Arc::default();
        let (tx, mut rx) = super::super::outgoing::inbound(16);
        pending.lock().unwrap().insert("7".into(), tx);
        let (utx, mut urx) = super::super::outgoing::inbound(16);
        let msg = |v: serde_json::Value| ServerMessage::from_value(&v).unwrap();
        route(&pending, msg(json!({"jsonrpc": "2.0", "method": "notifications/progress", "params": {"progressToken": 7, "progress": 1}})), &utx, WAIT).await;
        route(&pending, msg(json!({"jsonrpc": "2.0", "method": "notifications/tools/list_changed", "params": {"_meta": {"io.modelcontextprotocol/subscriptionId": "7"}}})), &utx, WAIT).await;
        route(
            &pending,
            msg(json!({"jsonrpc": "2.0", "method": "notifications/message", "params": {"level": "info", "data": 1}})),
            &utx,
            WAIT,
        )
        .await;
        route(&pending, msg(json!({"jsonrpc": "2.0", "id": 1, "method": "roots/list"})), &utx, WAIT).await;
        let named = json!({"jsonrpc": "2.0", "id": 2, "method": "roots/list",
            "params": {"_meta": {mcp_protocol::meta::RELATED_REQUEST_KEY: 7}}});
        route(&pending, msg(named), &utx, WAIT).await;
        route(&pending, msg(json!({"jsonrpc": "2.0", "id": 7, "result": {}})), &utx, WAIT).await;
        let method = |m: Option<ServerMessage>| m.unwrap().method().map(str::to_owned);
        assert_eq!(method(rx.try_recv()).as_deref(), Some("notifications/progress"));
        assert_eq!(method(rx.try_recv()).as_deref(), Some("notifications/tools/list_changed"));
        let named = rx.try_recv().unwrap();
        assert!(matches!(&named, ServerMessage::Request { id, .. } if id.as_json() == "2"), "request 7's: {named:?}");
        assert!(rx.try_recv().unwrap().answers(&RequestId::number(7)));
        assert!(pending.lock().unwrap().is_empty());
        assert_eq!(method(urx.try_recv()).as_deref(), Some("notifications/message"));
        assert_eq!(method(urx.try_recv()).as_deref(), Some("roots/list"));
    }

    #[tokio::test]
    async fn a_reader_that_falls_behind_fails_its_request_alone() {
        let pending: Pending = Arc::default();
        let (tx, mut rx) = super::super::outgoing::inbound(2);
        pending.lock().unwrap().insert("7".into(), tx);
        let (utx, _urx) = super::super::outgoing::inbound(2);
        for n in 0..3 {
            let note = json!({"jsonrpc": "2.0", "method": "notifications/progress", "params": {"progressToken": 7, "progress": n}});
            route(&pending, ServerMessage::from_value(&note).unwrap(), &utx, Duration::from_millis(20)).await;
        }
        assert!(pending.lock().unwrap().is_empty(), "the request is given up");
        assert!(rx.try_recv().is_some() && rx.try_recv().is_some() && rx.try_recv().is_none());
        let why = rx.stopped(|| ClientError::transport("none")).to_string();
        assert!(why.contains("max_queued_messages"), "{why}");
    }

    #[actix_rt::test]
    async fn a_connection_whose_reading_thread_stops_ends_saying_so() {
        let thread = actix_rt::Arbiter::new();
        let (tx, rx) = tokio::sync::oneshot::channel();
        thread.spawn(async move {
            let (unrouted, _) = super::super::outgoing::inbound(1);
            let mut sleeper = Command::new("sleep");
            sleeper.arg("30");
            let _ = tx.send(Stdio::spawn(sleeper, unrouted, 1024, 4, WAIT));
        });
        let stdio = rx.await.unwrap().unwrap();
        thread.stop();
        thread.join().unwrap();
        let why = tokio::time::timeout(Duration::from_secs(10), stdio.ended()).await.unwrap();
        assert!(why.contains("the thread that read the server process's output stopped"), "{why}");
        stdio.close().await;
    }

    #[tokio::test]
    async fn a_line_over_the_limit_is_not_read_further() {
        let data: &[u8] = b"short\nthis line is too long and never ends";
        let mut r = BufReader::with_capacity(4, data);
        let mut line = LineReader::new(10);
        assert!(matches!(read_line(&mut r, &mut line).await.unwrap(), Line::Read));
        assert_eq!(line.line(), b"short");
        assert!(matches!(read_line(&mut r, &mut line).await.unwrap(), Line::TooLong));
        // Stopped within one buffer of the bound (10 + 4 bytes read of the
        // long line): the rest is still unread.
        let rest = r.fill_buf().await.unwrap().len() + r.get_ref().len();
        assert!(rest >= data.len() - 6 - (10 + 4), "{rest} bytes left unread");
        let mut r = BufReader::new(&b"last"[..]);
        let mut line = LineReader::new(10);
        assert!(matches!(read_line(&mut r, &mut line).await.unwrap(), Line::Read));
        assert_eq!(line.line(), b"last");
        assert!(matches!(read_line(&mut r, &mut line).await.unwrap(), Line::End));
    }
}
