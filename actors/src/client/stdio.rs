//! stdio, the client side: the server is a child process; messages are
//! lines on its stdin and stdout. Responses are routed to their request by
//! id, progress by its token (the request's id) and listen deliveries by
//! their subscription id; anything else (server requests of a legacy
//! session, notifications of no request) goes to the connection.

use std::collections::HashMap;
use std::process::Stdio as Piped;
use std::sync::{Arc, Mutex};

use bytes::Bytes;
use serde_json::Value;
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader, BufWriter};
use tokio::process::{Child, Command};
use tokio::sync::{mpsc, watch};

use super::error::ClientError;
use super::outgoing::{Inbound, Outgoing};

/// Requests awaiting their answers, by the id's JSON text.
type Pending = Arc<Mutex<HashMap<String, mpsc::UnboundedSender<Value>>>>;

/// A child process speaking MCP on stdin/stdout.
pub(crate) struct Stdio {
    /// Lines for the child's stdin; taken at close, which closes it.
    writer: Mutex<Option<mpsc::UnboundedSender<Bytes>>>,
    pending: Pending,
    child: tokio::sync::Mutex<Option<Child>>,
    /// Why the connection ended, once it did.
    ended: Arc<watch::Sender<Option<String>>>,
}

impl Stdio {
    /// Spawns `command` (stdin and stdout piped, stderr inherited unless
    /// the command says otherwise); messages of no request go to `unrouted`.
    pub(crate) fn spawn(mut command: Command, unrouted: mpsc::UnboundedSender<Value>) -> Result<Self, ClientError> {
        command.stdin(Piped::piped()).stdout(Piped::piped()).kill_on_drop(true);
        let program = format!("{:?}", command.as_std().get_program());
        let mut child =
            command.spawn().map_err(|e| ClientError::transport(format!("starting the server {program}: {e}")))?;
        let stdin = child.stdin.take().expect("piped stdin");
        let stdout = child.stdout.take().expect("piped stdout");
        let (writer, mut lines) = mpsc::unbounded_channel::<Bytes>();
        let pending: Pending = Arc::default();
        let ended = Arc::new(watch::Sender::new(None));
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
        let (p, e) = (pending.clone(), ended.clone());
        tokio::spawn(async move {
            let mut reader = BufReader::new(stdout).lines();
            while let Ok(Some(line)) = reader.next_line().await {
                let Ok(msg) = serde_json::from_str::<Value>(&line) else { continue };
                route(&p, msg, &unrouted);
            }
            e.send_replace(Some(format!("the server process {program} closed its stdout")));
            // Every waiting request learns it by its channel closing.
            p.lock().expect("pending lock").clear();
        });
        Ok(Stdio { writer: Mutex::new(Some(writer)), pending, child: tokio::sync::Mutex::new(Some(child)), ended })
    }

    /// Writes a message; a request's answer comes on the returned channel.
    pub(crate) fn send(&self, out: &Outgoing) -> Result<Inbound, ClientError> {
        if let Some(why) = self.ended.borrow().clone() {
            return Err(ClientError::Transport(why));
        }
        let (tx, rx) = mpsc::unbounded_channel();
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

    /// Ends the child: its stdin is closed, then it is killed if it has
    /// not exited within two seconds.
    pub(crate) async fn close(&self) {
        // Dropping the sender ends the writer task, which closes stdin.
        drop(self.writer.lock().expect("writer lock").take());
        let Some(mut child) = self.child.lock().await.take() else { return };
        let exited = tokio::time::timeout(std::time::Duration::from_secs(2), child.wait()).await;
        if exited.is_err() {
            let _ = child.kill().await;
        }
    }
}

/// Sends a message from the server to the request it belongs to, or to
/// the connection.
fn route(pending: &Pending, msg: Value, unrouted: &mpsc::UnboundedSender<Value>) {
    let key = if msg.get("method").is_none() {
        // A response: its id, and the request is done.
        let key = msg.get("id").map(Value::to_string);
        if let Some(tx) = key.and_then(|k| pending.lock().expect("pending lock").remove(&k)) {
            let _ = tx.send(msg);
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
            let _ = tx.send(msg);
        }
        None => {
            let _ = unrouted.send(msg);
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
        let (tx, mut rx) = mpsc::unbounded_channel();
        pending.lock().unwrap().insert("7".into(), tx);
        let (utx, mut urx) = mpsc::unbounded_channel();
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
}
