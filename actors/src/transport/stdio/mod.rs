//! stdio: newline-delimited JSON-RPC, a thin driver over [`super::stream`].
//! One reader on stdin feeding a [`StreamConnection`] actor, one writer task that owns stdout (every
//! message is one line, nothing else is written), concurrent requests
//! interleaved, `notifications/cancelled` cancels a request or a
//! subscription (`subscriptions/listen` may be sent at any time; its
//! deliveries interleave on the one writer), and EOF ends every
//! subscription and, after a bounded drain, the connection.

mod lines;
mod std_pipes;
mod writer;

use actix::prelude::*;
use slog::{info, warn};
use tokio::io::{AsyncBufRead, AsyncWrite};

pub use lines::{lines, read_line};

use super::stream::{Hangup, StreamConnection};
use crate::server::{shutdown_signal, McpServer};

/// Serves MCP over a line-oriented reader and writer until EOF, or until
/// `hangup` resolves; returns once everything queued was written.
pub async fn serve_until<R, W>(
    server: McpServer,
    input: R,
    output: W,
    hangup: impl std::future::Future<Output = ()>,
) -> std::io::Result<()>
where
    R: AsyncBufRead + Unpin + 'static,
    W: AsyncWrite + Unpin + 'static,
{
    let (tx, rx) = crate::channels::outbound::channel(server.config().stdio.writer_buffer);
    let mut writer = actix_rt::spawn(writer::write_all(output, rx));
    let max = server.config().stdio.max_line_bytes;
    let log = server.logger().clone();
    let input = lines(input, max, move |e| warn!(log, "stdin failed"; "error" => %e));
    let conn = StreamConnection::create(move |ctx| {
        ctx.add_stream(input);
        StreamConnection::new(server, "stdio", tx)
    });
    let written = tokio::select! {
        w = &mut writer => w,
        _ = hangup => {
            conn.do_send(Hangup);
            writer.await
        }
    };
    written.unwrap_or_else(|e| Err(std::io::Error::other(e.to_string())))
}

/// Serves MCP over a line-oriented reader and writer until EOF.
pub async fn serve<R, W>(server: McpServer, input: R, output: W) -> std::io::Result<()>
where
    R: AsyncBufRead + Unpin + 'static,
    W: AsyncWrite + Unpin + 'static,
{
    serve_until(server, input, output, std::future::pending()).await
}

/// Serves over stdin/stdout until EOF or SIGINT/SIGTERM: at the signal every
/// subscription gets its completion result, the connection ends as at EOF,
/// and this returns once stdout has everything.
///
/// With upstreams configured (a gateway), stdin is read once every
/// required upstream's first start has settled, so that the first
/// listing already has their items.
pub async fn serve_std(server: McpServer) -> std::io::Result<()> {
    #[cfg(feature = "gateway")]
    if let Some(gateway) = server.gateway() {
        gateway.started().await;
    }
    let input = tokio::io::BufReader::new(std_pipes::input());
    let s = server.clone();
    let hangup = async move {
        shutdown_signal().await;
        let open = s.shutdown().await;
        info!(s.logger(), "shutting down"; "subscriptions_closed" => open);
    };
    let served = serve_until(server.clone(), input, std_pipes::output(), hangup).await;
    server.close_audit();
    served
}
