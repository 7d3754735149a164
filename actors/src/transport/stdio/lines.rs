//! The stdin side of stdio: newline-delimited messages of bounded length,
//! as a stream for the connection actor.

use futures::Stream;
use tokio::io::{AsyncBufRead, AsyncBufReadExt};

use crate::transport::stream::Inbound;

/// Reads one line of at most `max` bytes. `Ok(None)` at EOF; an over-long
/// line is consumed and reported as `Err(len)`.
pub async fn read_line<R: AsyncBufRead + Unpin>(
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

/// The lines of `input`, ending at EOF or at a read error (`on_error` is told).
pub fn lines<R>(input: R, max: usize, on_error: impl Fn(std::io::Error) + 'static) -> impl Stream<Item = Inbound>
where
    R: AsyncBufRead + Unpin + 'static,
{
    futures::stream::unfold((input, Vec::new(), on_error), move |(mut input, mut buf, on_error)| async move {
        let line = match read_line(&mut input, &mut buf, max).await {
            Ok(None) => return None,
            Ok(Some(Ok(()))) => Inbound::Message(std::mem::take(&mut buf)),
            Ok(Some(Err(len))) => Inbound::TooLong(len),
            Err(e) => {
                on_error(e);
                return None;
            }
        };
        Some((line, (input, buf, on_error)))
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use futures::StreamExt;

    #[tokio::test]
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
