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

use std::collections::HashMap;
use std::process::Stdio as Piped;
use std::sync::{Arc, Mutex};

use bytes::Bytes;
use serde_json::Value;
use tokio::io::{AsyncBufRead, AsyncBufReadExt, AsyncWriteExt, BufReader, BufWriter};
use tokio::process::{Child, Command};
use tokio::sync::{mpsc, watch};

use super::error::ClientError;
use super::outgoing::{inbound_sharing, Broken, Inbound, InboundTx, Outgoing};

/// Requests awaiting their answers, by the id's JSON text.
type Pending = Arc<Mutex<HashMap<String, InboundTx>>>;

/// A child process speaking MCP on stdin/stdout.
pub(crate) struct Stdio {
    /// Lines for the child's stdin; taken at close, which closes it.
    writer: Mutex<Option<mpsc::UnboundedSender<Bytes>>>,
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
    /// A whole line (without its newline), in the buffer.
    Read,
    /// Over `max` bytes, and not read further.
    TooLong,
    /// The end of the output.
    End,
}

/// Reads one line into `buf`, stopping as soon as it is longer than `max`.
async fn read_line<R: AsyncBufRead + Unpin>(input: &mut R, buf: &mut Vec<u8>, max: usize) -> std::io::Result<Line> {
    buf.clear();
    loop {
        let available = input.fill_buf().await?;
        if available.is_empty() {
            return Ok(if buf.is_empty() { Line::End } else { Line::Read });
        }
        let (chunk, used, done) = match available.iter().position(|&b| b == b'\n') {
            Some(pos) => (&available[..pos], pos + 1, true),
            None => (available, available.len(), false),
        };
        if buf.len() + chunk.len() > max {
            return Ok(Line::TooLong);
        }
        buf.extend_from_slice(chunk);
        input.consume(used);
        if done {
            return Ok(Line::Read);
        }
    }
}

impl Stdio {
    /// Spawns `command` (stdin and stdout piped, stderr inherited unless
    /// the command says otherwise, a process group of its own); messages of
    /// no request go to `unrouted`; a line over `max_line` bytes ends the
    /// connection.
    pub(crate) fn spawn(mut command: Command, unrouted: InboundTx, max_line: usize) -> Result<Self, ClientError> {
        command.stdin(Piped::piped()).stdout(Piped::piped()).kill_on_drop(true);
        #[cfg(unix)]
        command.process_group(0);
        let program = format!("{:?}", command.as_std().get_program());
        let mut child =
            command.spawn().map_err(|e| ClientError::transport(format!("starting the server {program}: {e}")))?;
        let stdin = child.stdin.take().expect("piped stdin");
        let stdout = child.stdout.take().expect("piped stdout");
        let (writer, mut lines) = mpsc::unbounded_channel::<Bytes>();
        let pending: Pending = Arc::default();
        let ended = Arc::new(watch::Sender::new(None));
        let broken = Broken::default();
        tokio::spawn(async move {
            let mut stdin = BufWriter::new(stdin);
            while let Some(line) = lines.recv().await {
                let written = async {
                    stdin.write_all(&line).await?;
                    stdin.write_all(b"\n").await?;
                    stdin.flush().await
                };
                if written.await.is_err() {
                    break;
                }
            }
        });
        let (p, e, b) = (pending.clone(), ended.clone(), broken.clone());
        tokio::spawn(async move {
            let mut reader = BufReader::new(stdout);
            let mut line = Vec::new();
            let why = loop {
                match read_line(&mut reader, &mut line, max_line).await {
                    // Not JSON (invalid UTF-8 included): skipped.
                    Ok(Line::Read) => match serde_json::from_slice::<Value>(&line) {
                        Ok(msg) => route(&p, msg, &unrouted),
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
            let _ = b.set(ClientError::Transport(why.clone()));
            e.send_replace(Some(why));
            // Every waiting request learns it by its channel closing.
            p.lock().expect("pending lock").clear();
        });
        let group = child.id();
        let child = tokio::sync::Mutex::new(Some(child));
        Ok(Stdio { writer: Mutex::new(Some(writer)), pending, child, group, ended, broken })
    }

    /// Writes a message; a request's answer comes on the returned channel.
    pub(crate) fn send(&self, out: &Outgoing) -> Result<Inbound, ClientError> {
        if let Some(why) = self.ended.borrow().clone() {
            return Err(ClientError::Transport(why));
        }
        let (tx, rx) = inbound_sharing(self.broken.clone());
        if let Some(id) = &out.id {
            self.pending.lock().expect("pending lock").insert(id.to_string(), tx);
        }
        let sent = match self.writer.lock().expect("writer lock").as_ref() {
            Some(w) => w.send(out.body.clone()).is_ok(),
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
    pub(crate) fn forget(&self, id: &Value) {
        self.pending.lock().expect("pending lock").remove(&id.to_string());
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

/// Sends a message from the server to the request it belongs to, or to
/// the connection.
fn route(pending: &Pending, msg: Value, unrouted: &InboundTx) {
    let key = if msg.get("method").is_none() {
        // A response: its id, and the request is done.
        let key = msg.get("id").map(Value::to_string);
        if let Some(tx) = key.and_then(|k| pending.lock().expect("pending lock").remove(&k)) {
            tx.send(msg);
            return;
        }
        None
    } else if msg.get("id").is_none() {
        notification_key(&msg)
    } else {
        // A server request that names the request it is part of.
        let related = msg.get("params").and_then(|p| p.get("_meta")?.get(mcp_protocol::meta::RELATED_REQUEST_KEY));
        related.map(Value::to_string)
    };
    let target = key.and_then(|k| pending.lock().expect("pending lock").get(&k).cloned());
    match target {
        Some(tx) => {
            tx.send(msg);
        }
        None => {
            unrouted.send(msg);
        }
    }
}

/// The request a notification belongs to: a progress token, a
/// subscription id or a related request id names it (this client uses the
/// request id for all three).
fn notification_key(msg: &Value) -> Option<String> {
    let params = msg.get("params")?;
    let meta = |k: &str| params.get("_meta")?.get(k);
    let named = params
        .get("progressToken")
        .or_else(|| meta(mcp_protocol::meta::SUBSCRIPTION_ID_KEY))
        .or_else(|| meta(mcp_protocol::meta::RELATED_REQUEST_KEY))?;
    Some(match named {
        // A string token that spells a number names the numeric id.
        Value::String(s) if s.parse::<i64>().is_ok() => s.clone(),
        other => other.to_string(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn messages_find_their_request() {
        let pending: Pending = Arc::default();
        let (tx, mut rx) = super::super::outgoing::inbound();
        pending.lock().unwrap().insert("7".into(), tx);
        let (utx, mut urx) = super::super::outgoing::inbound();
        route(
            &pending,
            json!({"jsonrpc": "2.0", "method": "notifications/progress", "params": {"progressToken": 7, "progress": 1}}),
            &utx,
        );
        route(
            &pending,
            json!({"jsonrpc": "2.0", "method": "notifications/tools/list_changed", "params": {"_meta": {"io.modelcontextprotocol/subscriptionId": "7"}}}),
            &utx,
        );
        route(
            &pending,
            json!({"jsonrpc": "2.0", "method": "notifications/message", "params": {"level": "info", "data": 1}}),
            &utx,
        );
        route(&pending, json!({"jsonrpc": "2.0", "id": 1, "method": "roots/list"}), &utx);
        let named = json!({"jsonrpc": "2.0", "id": 2, "method": "roots/list",
            "params": {"_meta": {mcp_protocol::meta::RELATED_REQUEST_KEY: 7}}});
        route(&pending, named, &utx);
        route(&pending, json!({"jsonrpc": "2.0", "id": 7, "result": {}}), &utx);
        assert_eq!(rx.try_recv().unwrap()["method"], "notifications/progress");
        assert_eq!(rx.try_recv().unwrap()["method"], "notifications/tools/list_changed");
        assert_eq!(rx.try_recv().unwrap()["id"], 2, "a server request naming request 7 goes to it");
        assert!(rx.try_recv().unwrap().get("result").is_some());
        assert!(pending.lock().unwrap().is_empty());
        assert_eq!(urx.try_recv().unwrap()["method"], "notifications/message");
        assert_eq!(urx.try_recv().unwrap()["method"], "roots/list");
    }

    #[tokio::test]
    async fn a_line_over_the_limit_is_not_read_further() {
        let data: &[u8] = b"short\nthis line is too long and never ends";
        let mut r = BufReader::with_capacity(4, data);
        let mut buf = Vec::new();
        assert!(matches!(read_line(&mut r, &mut buf, 10).await.unwrap(), Line::Read));
        assert_eq!(buf, b"short");
        assert!(matches!(read_line(&mut r, &mut buf, 10).await.unwrap(), Line::TooLong));
        let mut r = BufReader::new(&b"last"[..]);
        assert!(matches!(read_line(&mut r, &mut buf, 10).await.unwrap(), Line::Read));
        assert_eq!(buf, b"last");
        assert!(matches!(read_line(&mut r, &mut buf, 10).await.unwrap(), Line::End));
    }
}
