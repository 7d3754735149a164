//! The stdin side of stdio: newline-delimited messages of bounded length
//! ([`LineReader`] frames them), as a stream for the connection actor.

use futures::Stream;
use mcp_protocol::lines::{Line, LineReader};
use tokio::io::{AsyncBufRead, AsyncBufReadExt};

use crate::transport::stream::Inbound;

/// Reads one line through `reader` (its bytes are then
/// [`LineReader::line`]). `Ok(None)` at EOF; an over-long line is consumed
/// and reported as [`Line::TooLong`].
pub async fn read_line<R: AsyncBufRead + Unpin>(
    input: &mut R,
    reader: &mut LineReader,
) -> std::io::Result<Option<Line>> {
    loop {
        let available = input.fill_buf().await?;
        if available.is_empty() {
            return Ok(reader.finish());
        }
        let (used, line) = reader.feed(available);
        input.consume(used);
        if line.is_some() {
            return Ok(line);
        }
    }
}

/// The lines of `input`, ending at EOF or at a read error (`on_error` is told).
pub fn lines<R>(input: R, max: usize, on_error: impl Fn(std::io::Error) + 'static) -> impl Stream<Item = Inbound>
where
    R: AsyncBufRead + Unpin + 'static,
{
    futures::stream::unfold(
        (input, LineReader::new(max), on_error),
        move |(mut input, mut reader, on_error)| async move {
            let line = match read_line(&mut input, &mut reader).await {
                Ok(None) => return None,
                Ok(Some(Line::Complete)) => Inbound::Message(reader.take_line()),
                Ok(Some(Line::TooLong(len))) => Inbound::TooLong(len),
                Err(e) => {
                    on_error(e);
                    return None;
                }
            };
            Some((line, (input, reader, on_error)))
        },
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use futures::StreamExt;

    #[tokio::test]
    async fn reads_bounded_lines() {
        let data: &[u8] = b"short\nthis line is too long\nok\nlast";
        let mut r = tokio::io::BufReader::with_capacity(4, data);
        let mut reader = LineReader::new(10);
        assert_eq!(read_line(&mut r, &mut reader).await.unwrap(), Some(Line::Complete));
        assert_eq!(reader.line(), b"short");
        assert_eq!(read_line(&mut r, &mut reader).await.unwrap(), Some(Line::TooLong(21)));
        assert_eq!(read_line(&mut r, &mut reader).await.unwrap(), Some(Line::Complete));
        assert_eq!(reader.line(), b"ok");
        assert_eq!(read_line(&mut r, &mut reader).await.unwrap(), Some(Line::Complete));
        assert_eq!(reader.line(), b"last");
        assert_eq!(read_line(&mut r, &mut reader).await.unwrap(), None);
    }

    #[tokio::test]
    async fn the_stream_yields_messages_and_overlong_lines_then_ends() {
        let data: &[u8] = b"{}\n0123456789abc\n\nx";
        let got: Vec<Inbound> = lines(tokio::io::BufReader::with_capacity(3, data), 8, |_| {}).collect().await;
        assert_eq!(
            got,
            vec![
                Inbound::Message(b"{}".to_vec()),
                Inbound::TooLong(13),
                Inbound::Message(Vec::new()),
                Inbound::Message(b"x".to_vec())
            ]
        );
    }
}
