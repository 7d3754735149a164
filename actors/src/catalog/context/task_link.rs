//! [`TaskLink`]: what ties a handler's context to the task its call may
//! become — the handler says when the task begins
//! ([`RequestContext::begin_task`]), and once it has, its progress becomes
//! the task's `statusMessage`.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

use tokio::sync::{oneshot, watch};

use super::RequestContext;

/// The link between a task-eligible call's handler and its task.
#[derive(Debug)]
pub(crate) struct TaskLink {
    begun: AtomicBool,
    begin: Mutex<Option<oneshot::Sender<()>>>,
    status: watch::Sender<Option<String>>,
}

impl TaskLink {
    /// A link for a call that is not a task yet: the receiver hears when
    /// the handler begins the task.
    pub(crate) fn pending() -> (Arc<Self>, oneshot::Receiver<()>) {
        let (tx, rx) = oneshot::channel();
        let link =
            TaskLink { begun: AtomicBool::new(false), begin: Mutex::new(Some(tx)), status: watch::channel(None).0 };
        (Arc::new(link), rx)
    }

    /// A link for a handler run inside an existing task (a run resumed by
    /// `tasks/update`).
    pub(crate) fn begun() -> Arc<Self> {
        Arc::new(TaskLink { begun: AtomicBool::new(true), begin: Mutex::new(None), status: watch::channel(None).0 })
    }

    /// Whether the call is a task now.
    pub(crate) fn is_begun(&self) -> bool {
        self.begun.load(Ordering::Acquire)
    }

    /// Marks the call a task (the request side was told, or is about to
    /// create it on its own: `tasks.task_after_ms`).
    pub(crate) fn mark_begun(&self) {
        self.begun.store(true, Ordering::Release);
        if let Some(tx) = self.begin.lock().unwrap_or_else(|p| p.into_inner()).take() {
            let _ = tx.send(());
        }
    }

    /// Records the handler's latest status message.
    pub(crate) fn set_status(&self, message: String) {
        self.status.send_replace(Some(message));
    }

    /// The status messages, for the task's actor.
    pub(crate) fn statuses(&self) -> watch::Receiver<Option<String>> {
        self.status.subscribe()
    }
}

impl RequestContext {
    /// Makes this call a task now, when the tool allows tasks and the client
    /// declared the extension: the client gets its `CreateTaskResult` and
    /// the handler carries on inside the task (progress becomes the task's
    /// `statusMessage`; input requests move it to `input_required`).
    /// Questions asked before this point are multi round-trip requests of
    /// the call itself. Returns whether the call is a task; where it cannot
    /// be one this does nothing and returns false.
    pub async fn begin_task(&self) -> bool {
        let Some(link) = self.task_link() else { return false };
        if !link.is_begun() {
            link.mark_begun();
            // Let the request side create the task before the handler goes on.
            tokio::task::yield_now().await;
        }
        true
    }

    /// Whether this call runs as a task.
    pub fn in_task(&self) -> bool {
        self.task_link().is_some_and(|l| l.is_begun())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn beginning_tells_the_request_side_once() {
        let (link, rx) = TaskLink::pending();
        assert!(!link.is_begun());
        link.mark_begun();
        link.mark_begun();
        assert!(link.is_begun());
        rx.await.expect("told");
        let mut statuses = link.statuses();
        link.set_status("half way".into());
        assert_eq!(statuses.borrow_and_update().as_deref(), Some("half way"));
        assert!(TaskLink::begun().is_begun());
    }
}
