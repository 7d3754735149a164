//! The kernel's floor under `mcp-load fanout` over HTTP/1.1: a server that
//! does nothing per delivery but one non-blocking `write` of the same
//! pre-framed bytes on each stream's socket, from the task that got the
//! trigger — no per-stream task, wake-up, queue, filter or subscription id.
//! What it costs per delivery is what loopback TCP costs on the machine; a
//! real server can only add to it.
//!
//! It speaks just enough HTTP/1.1 for `mcp-load`: `subscriptions/listen` is
//! answered with a chunked `text/event-stream` holding the acknowledgement,
//! and the socket is kept for the events; a `tools/call` of
//! `test_trigger_resource_update` (or `test_trigger_tool_change`) writes one
//! `notifications/resources/updated` (or `tools/list_changed`) event to every
//! kept socket, then answers with the number written. Anything else gets a
//! JSON-RPC error. Closed sockets are forgotten at the next event; a socket
//! whose send buffer is full misses the event (counted in the reply).
//!
//! `fanout-floor [ADDR:PORT]` (default `127.0.0.1:8093`), one thread.

use std::cell::RefCell;
use std::io::ErrorKind;
use std::rc::Rc;

use mcp_load::triggers::{acknowledgement, notification_of};
use serde_json::{json, Value};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

/// Largest request head and body read.
const MAX_REQUEST: usize = 64 * 1024;

thread_local! {
    /// The sockets of the open listen streams.
    static STREAMS: RefCell<Vec<Rc<TcpStream>>> = const { RefCell::new(Vec::new()) };
}

fn main() -> std::io::Result<()> {
    let addr = std::env::args().nth(1).unwrap_or_else(|| "127.0.0.1:8093".into());
    let rt = tokio::runtime::Builder::new_current_thread().enable_io().build()?;
    let local = tokio::task::LocalSet::new();
    local.block_on(&rt, async move {
        let listener = TcpListener::bind(&addr).await?;
        eprintln!("listening on http://{}/mcp", listener.local_addr()?);
        loop {
            let (socket, _) = listener.accept().await?;
            socket.set_nodelay(true)?;
            tokio::task::spawn_local(async move {
                if let Err(e) = connection(socket).await {
                    eprintln!("connection: {e}");
                }
            });
        }
    })
}

/// Serves requests on one connection until it closes or becomes a stream.
async fn connection(mut socket: TcpStream) -> std::io::Result<()> {
    let mut buf = Vec::with_capacity(4096);
    loop {
        let Some(body) = read_request(&mut socket, &mut buf).await? else { return Ok(()) };
        let Ok(request) = serde_json::from_slice::<Value>(&body) else {
            return reply(
                &mut socket,
                "400 Bad Request",
                &json!({"jsonrpc": "2.0", "id": null, "error": {"code": -32700, "message": "Parse error"}}),
            )
            .await;
        };
        let id = request["id"].clone();
        if request["method"] == "subscriptions/listen" {
            let mut head =
                b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ntransfer-encoding: chunked\r\n\r\n".to_vec();
            head.extend_from_slice(&chunk(&acknowledgement(&id)));
            socket.write_all(&head).await?;
            STREAMS.with(|s| s.borrow_mut().push(Rc::new(socket)));
            return Ok(());
        }
        let name = request["params"]["name"].as_str().unwrap_or_default();
        match notification_of(name, &request["params"]["arguments"]) {
            Some(event) if request["method"] == "tools/call" => {
                let (sent, missed) = fan_out(&event);
                reply(&mut socket, "200 OK", &result(&id, sent, missed)).await?;
            }
            _ => {
                let error =
                    json!({"jsonrpc": "2.0", "id": id, "error": {"code": -32601, "message": "Method not found"}});
                reply(&mut socket, "404 Not Found", &error).await?;
            }
        }
    }
}

/// Reads one request; its body, or `None` when the peer closed first.
async fn read_request(socket: &mut TcpStream, buf: &mut Vec<u8>) -> std::io::Result<Option<Vec<u8>>> {
    let invalid = |what: &str| std::io::Error::new(ErrorKind::InvalidData, what.to_owned());
    loop {
        if let Some(end) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
            let head = std::str::from_utf8(&buf[..end]).map_err(|_| invalid("head is not UTF-8"))?;
            let length = head
                .lines()
                .filter_map(|l| l.split_once(':'))
                .find(|(name, _)| name.trim().eq_ignore_ascii_case("content-length"))
                .and_then(|(_, v)| v.trim().parse::<usize>().ok())
                .ok_or_else(|| invalid("no Content-Length"))?;
            let start = end + 4;
            if start + length > MAX_REQUEST {
                return Err(invalid("request too large"));
            }
            if buf.len() >= start + length {
                let body = buf[start..start + length].to_vec();
                buf.drain(..start + length);
                return Ok(Some(body));
            }
        } else if buf.len() > MAX_REQUEST {
            return Err(invalid("head too large"));
        }
        let mut chunk = [0u8; 4096];
        let n = socket.read(&mut chunk).await?;
        if n == 0 {
            return Ok(None);
        }
        buf.extend_from_slice(&chunk[..n]);
    }
}

/// One SSE event in one HTTP/1.1 chunk.
fn chunk(message: &Value) -> Vec<u8> {
    let data = format!("data: {message}\n\n");
    format!("{:x}\r\n{data}\r\n", data.len()).into_bytes()
}

/// Writes `message` to every kept socket: `(written, missed)`.
fn fan_out(message: &Value) -> (usize, usize) {
    let frame = chunk(message);
    let mut missed = 0;
    STREAMS.with(|s| {
        let mut streams = s.borrow_mut();
        streams.retain(|socket| match socket.try_write(&frame) {
            Ok(n) if n == frame.len() => true,
            // A partial write would corrupt the stream: close it.
            Ok(_) => false,
            Err(e) if e.kind() == ErrorKind::WouldBlock => {
                missed += 1;
                true
            }
            Err(_) => false,
        });
        (streams.len() - missed, missed)
    })
}

fn result(id: &Value, sent: usize, missed: usize) -> Value {
    let text = format!("written to {sent} streams, missed by {missed}");
    json!({"jsonrpc": "2.0", "id": id, "result": {"content": [{"type": "text", "text": text}], "resultType": "complete"}})
}

async fn reply(socket: &mut TcpStream, status: &str, body: &Value) -> std::io::Result<()> {
    let body = body.to_string();
    let response =
        format!("HTTP/1.1 {status}\r\ncontent-type: application/json\r\ncontent-length: {}\r\n\r\n{body}", body.len());
    socket.write_all(response.as_bytes()).await
}
