//! [`SseSink`] and [`SseFrames`]: the queue between a listener actor and
//! its own SSE response, holding ready-framed SSE events. A listener is started on the
//! arbiter that serves its request, so both ends live on one worker thread:
//! the queue is an `Rc<RefCell<..>>` with one waker each way. That needs no
//! atomics and no channel blocks, and an idle stream holds no buffer and no
//! timer (keep-alives come from the hub's one timer through the listener):
//! it matters with tens of thousands of idle streams.

use std::cell::RefCell;
use std::collections::VecDeque;
use std::pin::Pin;
use std::rc::Rc;
use std::task::{Context, Poll, Waker};

use bytes::Bytes;
use futures::Stream;
use mcp_protocol::subscription::EventTemplate;
use mcp_protocol::RequestId;

use super::frame::{frame, frame_event, KEEP_ALIVE};
use crate::channels::outbound::Outbound;
use crate::channels::sink::{ListenerSink, SinkError};

struct Shared {
    queue: VecDeque<Bytes>,
    capacity: usize,
    /// The response body, waiting for a message.
    reader: Option<Waker>,
    /// Told when the response goes away.
    on_closed: Option<Box<dyn FnOnce()>>,
    reader_gone: bool,
    writer_gone: bool,
}

fn register(slot: &mut Option<Waker>, cx: &Context<'_>) {
    match slot {
        Some(w) if w.will_wake(cx.waker()) => {}
        _ => *slot = Some(cx.waker().clone()),
    }
}

/// A bounded single-threaded queue of `capacity` messages: the listener's
/// end and the response body's end.
pub fn queue(capacity: usize) -> (SseSink, SseFrames) {
    let shared = Rc::new(RefCell::new(Shared {
        queue: VecDeque::new(),
        capacity: capacity.max(1),
        reader: None,
        on_closed: None,
        reader_gone: false,
        writer_gone: false,
    }));
    (SseSink(shared.clone()), SseFrames(shared))
}

/// The listener's end. Dropping it ends the stream after what is queued.
pub struct SseSink(Rc<RefCell<Shared>>);

impl SseSink {
    fn enqueue(&self, frame: Bytes) -> Result<(), SinkError> {
        let mut s = self.0.borrow_mut();
        if s.reader_gone {
            return Err(SinkError::Closed);
        }
        if s.queue.len() >= s.capacity {
            return Err(SinkError::Full);
        }
        s.queue.push_back(frame);
        if let Some(w) = s.reader.take() {
            w.wake();
        }
        Ok(())
    }
}

impl ListenerSink for SseSink {
    fn push(&self, msg: Outbound) -> Result<(), SinkError> {
        self.enqueue(frame(msg.bytes()))
    }

    fn push_event(&self, event: &EventTemplate, id: &RequestId) -> Result<(), SinkError> {
        self.enqueue(frame_event(event, id))
    }

    fn on_closed(&self, notify: Box<dyn FnOnce()>) {
        let mut s = self.0.borrow_mut();
        if s.reader_gone {
            drop(s);
            notify();
        } else {
            s.on_closed = Some(notify);
        }
    }

    fn end(&self, _reason: &str) {}

    fn keep_alive(&self) {
        // Only on a quiet stream; a full or busy one is writing anyway.
        if self.0.borrow().queue.is_empty() {
            let _ = self.enqueue(Bytes::from_static(KEEP_ALIVE));
        }
    }
}

impl Drop for SseSink {
    fn drop(&mut self) {
        let mut s = self.0.borrow_mut();
        s.writer_gone = true;
        if let Some(w) = s.reader.take() {
            w.wake();
        }
    }
}

/// The response's end: the queued SSE frames, then the end of the stream
/// once the listener has gone. Dropping it (the client left) tells the
/// listener.
pub struct SseFrames(Rc<RefCell<Shared>>);

impl Stream for SseFrames {
    type Item = Bytes;

    fn poll_next(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Bytes>> {
        let mut s = self.0.borrow_mut();
        if let Some(frame) = s.queue.pop_front() {
            if s.queue.is_empty() && s.queue.capacity() > 0 {
                // An idle stream keeps no buffer.
                s.queue = VecDeque::new();
            }
            return Poll::Ready(Some(frame));
        }
        if s.writer_gone {
            return Poll::Ready(None);
        }
        register(&mut s.reader, cx);
        Poll::Pending
    }
}

impl Drop for SseFrames {
    fn drop(&mut self) {
        let mut s = self.0.borrow_mut();
        s.reader_gone = true;
        s.queue.clear();
        let notify = s.on_closed.take();
        drop(s);
        if let Some(notify) = notify {
            notify();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use bytes::Bytes;
    use futures::StreamExt;

    fn note(s: &'static str) -> Outbound {
        Outbound::Notification(Bytes::from_static(s.as_bytes()))
    }

    fn framed(s: &str) -> Bytes {
        Bytes::from(format!("data: {s}\n\n"))
    }

    #[tokio::test]
    async fn delivers_in_order_then_ends_when_the_listener_goes() {
        let (tx, mut rx) = queue(4);
        tx.push(note("a")).unwrap();
        tx.push(note("b")).unwrap();
        drop(tx);
        assert_eq!(rx.next().await, Some(framed("a")));
        assert_eq!(rx.next().await, Some(framed("b")));
        assert_eq!(rx.next().await, None);
    }

    #[tokio::test]
    async fn keep_alives_go_only_to_quiet_streams() {
        let (tx, mut rx) = queue(4);
        tx.keep_alive();
        assert_eq!(rx.next().await, Some(Bytes::from_static(b": keep-alive\n\n")));
        tx.push(note("a")).unwrap();
        tx.keep_alive();
        drop(tx);
        assert_eq!(rx.next().await, Some(framed("a")));
        assert_eq!(rx.next().await, None);
    }

    #[tokio::test]
    async fn a_full_queue_refuses_and_a_gone_reader_closes() {
        let (tx, rx) = queue(2);
        tx.push(note("a")).unwrap();
        tx.push(note("b")).unwrap();
        assert_eq!(tx.push(note("c")), Err(SinkError::Full));
        let told = Rc::new(std::cell::Cell::new(false));
        let t = told.clone();
        tx.on_closed(Box::new(move || t.set(true)));
        assert!(!told.get());
        drop(rx);
        assert!(told.get(), "the listener is told when the response goes");
        assert_eq!(tx.push(note("d")), Err(SinkError::Closed));
    }

    #[tokio::test]
    async fn a_waiting_reader_is_woken_by_a_push() {
        let (tx, mut rx) = queue(2);
        let local = tokio::task::LocalSet::new();
        local
            .run_until(async move {
                let reader = tokio::task::spawn_local(async move { rx.next().await });
                tokio::task::yield_now().await;
                tx.push(note("late")).unwrap();
                assert_eq!(reader.await.unwrap(), Some(framed("late")));
            })
            .await;
    }
}
