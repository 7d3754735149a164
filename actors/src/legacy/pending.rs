//! [`PendingRequests`]: server-to-client requests of the legacy era waiting
//! for the client's answer (a JSON-RPC response the client POSTs, or writes
//! on stdin), matched by id.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;
use std::time::Duration;

use mcp_protocol::RequestId;
use serde_json::Value;
use tokio::sync::oneshot;

/// The client's answer: a result, or the error object.
pub type Answer = Result<Value, Value>;

/// Requests sent to one client and not yet answered.
#[derive(Debug)]
pub struct PendingRequests {
    next: AtomicU64,
    waiting: Mutex<HashMap<RequestId, oneshot::Sender<Answer>>>,
    /// How long a handler waits for an answer.
    pub timeout: Duration,
}

impl PendingRequests {
    /// An empty set; answers are awaited at most `timeout`.
    pub fn new(timeout: Duration) -> Self {
        PendingRequests { next: AtomicU64::new(1), waiting: Mutex::new(HashMap::new()), timeout }
    }

    /// A fresh request id and the receiver of its answer.
    pub fn register(&self) -> (RequestId, oneshot::Receiver<Answer>) {
        let id = RequestId::string(&format!("srv-{}", self.next.fetch_add(1, Ordering::Relaxed)));
        let (tx, rx) = oneshot::channel();
        self.waiting.lock().unwrap_or_else(|p| p.into_inner()).insert(id.clone(), tx);
        (id, rx)
    }

    /// Hands the client's answer to the waiting handler; false for an id
    /// nobody waits for (unknown, answered already, or given up).
    pub fn complete(&self, id: &RequestId, answer: Answer) -> bool {
        let tx = self.waiting.lock().unwrap_or_else(|p| p.into_inner()).remove(id);
        tx.is_some_and(|tx| tx.send(answer).is_ok())
    }

    /// Forgets a request (its handler stopped waiting).
    pub fn forget(&self, id: &RequestId) {
        self.waiting.lock().unwrap_or_else(|p| p.into_inner()).remove(id);
    }

    /// How many requests are waiting.
    pub fn len(&self) -> usize {
        self.waiting.lock().unwrap_or_else(|p| p.into_inner()).len()
    }

    /// Whether none are waiting.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn answers_reach_their_request_once() {
        let p = PendingRequests::new(Duration::from_secs(1));
        let (id, mut rx) = p.register();
        let (id2, _rx2) = p.register();
        assert_ne!(id, id2);
        assert!(p.complete(&id, Ok(Value::Bool(true))));
        assert!(!p.complete(&id, Ok(Value::Null)), "answered once");
        assert_eq!(rx.try_recv().unwrap(), Ok(Value::Bool(true)));
        assert!(!p.complete(&RequestId::number(7), Ok(Value::Null)));
        p.forget(&id2);
        assert!(p.is_empty());
    }
}
