//! The stdout side of stdio: one task owns the output and writes each
//! message as one line, flushing once its queue is drained.

use tokio::io::{AsyncWrite, AsyncWriteExt};

use crate::channels::outbound::OutboundRx;

/// Writes every message from `rx` as a line until every sender is gone.
pub(super) async fn write_all<W: AsyncWrite + Unpin>(mut output: W, mut rx: OutboundRx) -> std::io::Result<()> {
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
