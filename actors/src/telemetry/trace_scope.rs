//! The trace context of the request whose handler is running on this
//! thread, so that what the handler causes without a context at hand (a
//! catalog change, and so the notifications the hub fans out for it)
//! carries the request's trace. `InTrace` sets it for each poll of a
//! handler's future; [`current`] reads it.

use std::cell::RefCell;
use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};

use mcp_protocol::trace::TraceContext;

thread_local! {
    static CURRENT: RefCell<Option<TraceContext>> = const { RefCell::new(None) };
}

/// The trace context of the handler being polled on this thread, if traced.
pub fn current() -> Option<TraceContext> {
    CURRENT.try_with(|c| c.borrow().clone()).ok().flatten()
}

pin_project_lite::pin_project! {
    /// A future polled with `trace` as the thread's current trace context.
    pub(crate) struct InTrace<F> {
        trace: Option<TraceContext>,
        #[pin]
        inner: F,
    }
}

impl<F> InTrace<F> {
    /// `inner`, polled under `trace` (nothing is set when it is `None`).
    pub(crate) fn new(trace: Option<TraceContext>, inner: F) -> Self {
        InTrace { trace, inner }
    }
}

impl<F: Future> Future for InTrace<F> {
    type Output = F::Output;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<F::Output> {
        let this = self.project();
        if this.trace.is_none() {
            return this.inner.poll(cx);
        }
        let previous = CURRENT.with(|c| c.replace(this.trace.take()));
        let polled = this.inner.poll(cx);
        // Put the context back on this future and the thread's previous one
        // back on the thread (polls may nest).
        *this.trace = CURRENT.with(|c| c.replace(previous));
        polled
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[actix_rt::test]
    async fn the_context_is_current_only_while_the_future_is_polled() {
        let tp = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";
        let trace = TraceContext::from_parts(Some(tp), None, None);
        let seen = InTrace::new(trace.clone(), async {
            let first = current();
            tokio::task::yield_now().await;
            (first, current())
        })
        .await;
        assert_eq!(seen, (trace.clone(), trace));
        assert_eq!(current(), None, "not left behind on the thread");
        let untraced = InTrace::new(None, async { current() }).await;
        assert_eq!(untraced, None);
    }
}
