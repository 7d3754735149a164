//! [`Counted`]: a response body that adds the bytes it yields to the
//! `bytes out` counter, for sized bodies and streams (SSE) alike.

use std::pin::Pin;
use std::task::{Context, Poll};

use actix_web::body::{BodySize, MessageBody};
use bytes::Bytes;

/// A body whose bytes are counted as they leave.
pub(super) struct Counted<B>(pub(super) B);

impl<B: MessageBody + Unpin> MessageBody for Counted<B> {
    type Error = B::Error;

    fn size(&self) -> BodySize {
        self.0.size()
    }

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Result<Bytes, Self::Error>>> {
        let polled = Pin::new(&mut self.0).poll_next(cx);
        if let Poll::Ready(Some(Ok(chunk))) = &polled {
            crate::telemetry::bytes_out(chunk.len());
        }
        polled
    }

    fn try_into_bytes(self) -> Result<Bytes, Self> {
        match self.0.try_into_bytes() {
            Ok(bytes) => {
                crate::telemetry::bytes_out(bytes.len());
                Ok(bytes)
            }
            Err(body) => Err(Counted(body)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[actix_rt::test]
    async fn a_body_is_passed_through_whole() {
        let body = Counted(Bytes::from_static(b"{\"ok\":true}"));
        assert_eq!(body.size(), BodySize::Sized(11));
        let bytes = actix_web::body::to_bytes(body).await.ok().unwrap();
        assert_eq!(&bytes[..], b"{\"ok\":true}");
    }
}
