//! stdio: newline-delimited JSON-RPC. One reader on stdin, one writer task
//! that owns stdout (every message is one line, nothing else is written),
//! concurrent requests interleaved, `notifications/cancelled` cancels a
//! request or a subscription (`subscriptions/listen` may be sent at any time;
//! its deliveries interleave on the one writer), and EOF ends every
//! subscription and, after a bounded drain, the session.

use std::collections::HashMap;
use std::time::{Duration, Instant};

use actix::Addr;
use mcp_protocol::jsonrpc::{self, Incoming};
use mcp_protocol::request::ClientNotification;
use mcp_protocol::{ErrorCode, ErrorData, ProtocolVersion, RequestId};
use slog::{debug, info, warn};
use tokio::io::{AsyncBufRead, AsyncBufReadExt, AsyncWrite, AsyncWriteExt};

use std::sync::Arc;

use crate::hub::{Close, CloseReason};
use crate::intake::{self, Refusal};
use crate::legacy::dispatch::{self, Reply};
use crate::legacy::Session;
use crate::listener::{ListenerActor, StdioOutlet};
use crate::outbound::{Outbound, OutletRx};
use crate::request::{Cancel, RequestActor};
use crate::server::McpServer;

/// Reads one line of at most `max` bytes. `Ok(None)` at EOF; an over-long
/// line is consumed and reported as `Err(len)`.
async fn read_line<R: AsyncBufRead + Unpin>(
    input: &mut R,
    buf: &mut Vec<u8>,
    max: usize,
) -> std::io::Result<Option<Result<(), usize>>> {
    buf.clear();
    let mut overflow = 0usize;
    loop {
        let available = input.fill_buf().await?;
        if available.is_empty() {
            return Ok(match (buf.is_empty() && overflow == 0, overflow) {
                (true, _) => None,
                (false, 0) => Some(Ok(())),
                (false, n) => Some(Err(n)),
            });
        }
        let (chunk, used, done) = match available.iter().position(|&b| b == b'\n') {
            Some(pos) => (&available[..pos], pos + 1, true),
            None => (available, available.len(), false),
        };
        if overflow > 0 || buf.len() + chunk.len() > max {
            overflow += buf.len() + chunk.len();
            buf.clear();
        } else {
            buf.extend_from_slice(chunk);
        }
        input.consume(used);
        if done {
            return Ok(Some(if overflow > 0 { Err(overflow) } else { Ok(()) }));
        }
    }
}

async fn write_all<W: AsyncWrite + Unpin>(mut output: W, mut rx: OutletRx) -> std::io::Result<()> {
    while let Some(msg) = rx.recv().await {
        output.write_all(msg.bytes()).await?;
        output.write_all(b"\n").await?;
        // Flush once the queue is drained, so bursts cost one flush.
        while let Ok(msg) = rx.try_recv() {
            output.write_all(msg.bytes()).await?;
            output.write_all(b"\n").await?;
        }
        output.flush().await?;
    }
    output.flush().await
}

/// Serves MCP over a line-oriented reader and writer until EOF.
pub async fn serve<R, W>(server: McpServer, mut input: R, output: W) -> std::io::Result<()>
where
    R: AsyncBufRead + Unpin,
    W: AsyncWrite + Unpin + 'static,
{
    let config = server.config().clone();
    let log = server.logger().clone();
    let (tx, rx) = crate::outbound::outlet(config.stdio.writer_buffer);
    let writer = actix_rt::spawn(write_all(output, rx));
    let mut in_flight: HashMap<RequestId, Addr<RequestActor>> = HashMap::new();
    let mut listeners: HashMap<RequestId, Addr<ListenerActor>> = HashMap::new();
    // A client that opens with `initialize` gets a legacy session for the process.
    let mut session: Option<Arc<Session>> = None;
    let mut line = Vec::new();
    let send = |bytes: Vec<u8>, code: Option<i32>| {
        let tx = tx.clone();
        async move { tx.send(Box::new(Outbound::Final { bytes: bytes.into(), error_code: code })).await.is_ok() }
    };
    info!(log, "serving on stdio");
    loop {
        let read = match read_line(&mut input, &mut line, config.stdio.max_line_bytes).await {
            Ok(r) => r,
            Err(e) => {
                warn!(log, "stdin failed"; "error" => %e);
                break;
            }
        };
        let bytes = match read {
            None => break,
            Some(Err(len)) => {
                let e = ErrorData::new(
                    ErrorCode::INVALID_REQUEST,
                    format!("Message of {len} bytes exceeds the limit of {} bytes", config.stdio.max_line_bytes),
                );
                send(jsonrpc::encode_error(None, &e), Some(e.code.0)).await;
                continue;
            }
            Some(Ok(())) => &line,
        };
        if bytes.iter().all(u8::is_ascii_whitespace) {
            continue;
        }
        match jsonrpc::decode(bytes) {
            Err(e) => {
                let r = Refusal::new(e.id, &e.error, ProtocolVersion::V2026_07_28.profile());
                send(r.encode(), Some(r.error.code.0)).await;
            }
            Ok(Incoming::Notification(n)) => match ClientNotification::from_parts(&n.method, n.params.as_ref()) {
                Ok(ClientNotification::Cancelled { request_id, reason }) => {
                    if let Some(addr) = in_flight.remove(&request_id) {
                        let _ = addr.try_send(Cancel { reason });
                    } else if let Some(addr) = listeners.remove(&request_id) {
                        // Control message: delivered even when the mailbox is full of events.
                        addr.do_send(Close { reason: CloseReason::ClientGone });
                    } else {
                        debug!(log, "cancellation for a request not in flight"; "request" => %request_id);
                    }
                }
                Ok(_) => match &session {
                    Some(s) => dispatch::notification(s, &n),
                    None => debug!(log, "notification ignored"; "method" => &n.method),
                },
                Err(e) => {
                    debug!(log, "malformed notification ignored"; "method" => &n.method, "error" => %e)
                }
            },
            Ok(Incoming::Response(r)) => match &session {
                Some(s) => {
                    if !dispatch::response(s, r) {
                        debug!(log, "answer to no pending request ignored");
                    }
                }
                None => debug!(log, "unexpected response ignored"; "id" => %r.id),
            },
            Ok(Incoming::Request(r)) => {
                in_flight.retain(|_, addr| addr.connected());
                listeners.retain(|_, addr| addr.connected());
                if in_flight.contains_key(&r.id) || listeners.contains_key(&r.id) {
                    let e =
                        ErrorData::new(ErrorCode::INVALID_REQUEST, format!("Request id {} is already in flight", r.id));
                    send(jsonrpc::encode_error(Some(&r.id), &e), Some(e.code.0)).await;
                    continue;
                }
                if dispatch::is_legacy_initialize(&r) {
                    let reply = if session.is_some() {
                        Err(ErrorData::new(ErrorCode::INVALID_REQUEST, "The session is already initialized"))
                    } else {
                        dispatch::initialize(&server, &r).map(|(state, result)| {
                            let input_timeout = Duration::from_millis(config.legacy.input_timeout_ms);
                            let s = Arc::new(Session::new("stdio".into(), state, input_timeout));
                            let outlet = StdioOutlet::new(tx.clone(), RequestId::string("stdio"));
                            server.start_legacy_listener(&s, Box::new(outlet));
                            session = Some(s);
                            result
                        })
                    };
                    let (bytes, code) = match reply {
                        Ok(result) => (jsonrpc::encode_result(&r.id, &result), None),
                        Err(e) => (jsonrpc::encode_error(Some(&r.id), &e), Some(e.code.0)),
                    };
                    send(bytes, code).await;
                    continue;
                }
                if let Some(s) = session.as_ref().filter(|_| !dispatch::is_stateless(&r)) {
                    let id = r.id.clone();
                    match dispatch::request(s, r).await {
                        Reply::Now(Ok(result)) => {
                            send(jsonrpc::encode_result(&id, &result), None).await;
                        }
                        Reply::Now(Err(e)) => {
                            send(jsonrpc::encode_error(Some(&id), &e), Some(e.code.0)).await;
                        }
                        Reply::Run(admitted) => {
                            let addr = server.start_request_in(*admitted, tx.clone(), Some(s.pending.clone()));
                            in_flight.insert(id, addr);
                        }
                    }
                    continue;
                }
                match intake::admit(r, server.service().stateless_versions()) {
                    Ok(admitted) if matches!(admitted.request, mcp_protocol::ClientRequest::Listen(_)) => {
                        let outlet = StdioOutlet::new(tx.clone(), admitted.id.clone());
                        let (addr, _ready) = server.start_listener(&admitted, Box::new(outlet));
                        listeners.insert(admitted.id, addr);
                    }
                    Ok(admitted) => {
                        let id = admitted.id.clone();
                        let addr = server.start_request(admitted, tx.clone());
                        in_flight.insert(id, addr);
                    }
                    Err(refusal) => {
                        send(refusal.encode(), Some(refusal.error.code.0)).await;
                    }
                }
            }
            Ok(_) => {}
        }
    }
    // EOF ends every subscription of this connection, and its session.
    if let Some(s) = session.take() {
        s.end();
    }
    for (_, addr) in listeners.drain() {
        addr.do_send(Close { reason: CloseReason::ClientGone });
    }
    // EOF: give in-flight requests a bounded time, then cancel the rest.
    let deadline = Instant::now() + Duration::from_millis(config.stdio.drain_ms);
    loop {
        in_flight.retain(|_, addr| addr.connected());
        if in_flight.is_empty() || Instant::now() >= deadline {
            break;
        }
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    for (_, addr) in in_flight.drain() {
        let _ = addr.try_send(Cancel { reason: Some("stdin closed".into()) });
    }
    info!(log, "stdin closed; stopping");
    drop(tx);
    match writer.await {
        Ok(r) => r,
        Err(e) => Err(std::io::Error::other(e.to_string())),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[actix_rt::test]
    async fn reads_bounded_lines() {
        let data: &[u8] = b"short\nthis line is too long\nok\nlast";
        let mut r = tokio::io::BufReader::with_capacity(4, data);
        let mut buf = Vec::new();
        assert_eq!(read_line(&mut r, &mut buf, 10).await.unwrap(), Some(Ok(())));
        assert_eq!(buf, b"short");
        assert!(matches!(read_line(&mut r, &mut buf, 10).await.unwrap(), Some(Err(_))));
        assert_eq!(read_line(&mut r, &mut buf, 10).await.unwrap(), Some(Ok(())));
        assert_eq!(buf, b"ok");
        assert_eq!(read_line(&mut r, &mut buf, 10).await.unwrap(), Some(Ok(())));
        assert_eq!(buf, b"last");
        assert_eq!(read_line(&mut r, &mut buf, 10).await.unwrap(), None);
    }
}
