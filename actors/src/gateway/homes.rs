//! The threads a stdio upstream's connection lives on: the HTTP workers'.
//!
//! A forwarded call runs on the HTTP worker that took it. When the
//! upstream's pipes are read and written on another thread, each call
//! crosses to that thread and back (two wake-ups of a sleeping thread per
//! call); started on the worker's own arbiter, the child's stdin and stdout
//! are driven by the worker's reactor, so a call from that worker never
//! leaves its thread. With several workers the upstreams are spread over
//! them (calls from the others cross as before); without an HTTP server
//! (the stdio transport, an embedder's own), a connection opens where its
//! upstream actor runs.

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Mutex;
use std::time::Duration;

use actix_rt::ArbiterHandle;

use super::connect;
use crate::client::{Client, ClientError};
use crate::config::UpstreamConfig;

/// How long an upstream opening at start-up waits for the first worker
/// when workers are expected (they start as the server is first polled).
const FIRST_WORKER: Duration = Duration::from_secs(2);

/// The arbiters of the HTTP workers, as they start.
#[derive(Default)]
pub(crate) struct Homes {
    arbiters: Mutex<Vec<ArbiterHandle>>,
    /// Which one the next connection opens on.
    next: AtomicUsize,
    /// Whether an HTTP server will register its workers.
    expected: AtomicBool,
    arrived: tokio::sync::Notify,
}

impl Homes {
    /// Workers are about to register: an upstream opening before the
    /// first has waits for it (at most [`FIRST_WORKER`]).
    pub(crate) fn expect(&self) {
        self.expected.store(true, Ordering::Release);
    }

    /// The current thread's arbiter (an HTTP worker's) may hold connections.
    pub(crate) fn register_current(&self) {
        let here = actix_rt::Arbiter::current();
        self.arbiters.lock().unwrap_or_else(|p| p.into_inner()).push(here);
        self.arrived.notify_waiters();
    }

    /// Starts or connects to `config`'s upstream: a stdio server on the
    /// next worker's thread, if there is one (a worker that has stopped is
    /// forgotten), else on this thread; an HTTP upstream here.
    pub(crate) async fn open(&self, config: &UpstreamConfig) -> Result<Client, ClientError> {
        if !config.is_stdio() {
            return connect::open(config).await;
        }
        if self.expected.load(Ordering::Acquire) && self.is_empty() {
            let arrived = self.arrived.notified();
            if self.is_empty() {
                let _ = tokio::time::timeout(FIRST_WORKER, arrived).await;
            }
        }
        while let Some(home) = self.pick() {
            let (tx, rx) = tokio::sync::oneshot::channel();
            let c = config.clone();
            let accepted = home.spawn(async move {
                let _ = tx.send(connect::open(&c).await);
            });
            if accepted {
                // The worker stopping before it answers drops the sender: open here.
                if let Ok(opened) = rx.await {
                    return opened;
                }
                break;
            }
            self.forget_stopped();
        }
        connect::open(config).await
    }

    fn is_empty(&self) -> bool {
        self.arbiters.lock().unwrap_or_else(|p| p.into_inner()).is_empty()
    }

    /// The next worker's arbiter, in turn.
    fn pick(&self) -> Option<ArbiterHandle> {
        let arbiters = self.arbiters.lock().unwrap_or_else(|p| p.into_inner());
        if arbiters.is_empty() {
            return None;
        }
        let n = self.next.fetch_add(1, Ordering::Relaxed);
        Some(arbiters[n % arbiters.len()].clone())
    }

    /// Forgets the arbiters of stopped workers (which refuse work).
    fn forget_stopped(&self) {
        self.arbiters.lock().unwrap_or_else(|p| p.into_inner()).retain(|a| a.spawn(async {}));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn missing_program() -> UpstreamConfig {
        UpstreamConfig::parse_flag("x=/nonexistent/program").unwrap()
    }

    #[actix_rt::test]
    async fn workers_take_connections_in_turn_and_a_stopped_one_is_forgotten() {
        let homes = Homes::default();
        let stopped = actix_rt::Arbiter::new();
        let gone = stopped.handle();
        gone.stop();
        stopped.join().unwrap();
        let (a, b) = (actix_rt::Arbiter::new(), actix_rt::Arbiter::new());
        homes.arbiters.lock().unwrap().extend([gone, a.handle(), b.handle()]);
        // The stopped one refuses; the connection goes to the next (and fails there: no such program).
        let why = homes.open(&missing_program()).await.err().unwrap().to_string();
        assert!(why.contains("/nonexistent/program"), "{why}");
        assert_eq!(homes.arbiters.lock().unwrap().len(), 2, "the stopped worker is forgotten");
        assert_eq!(homes.next.load(Ordering::Relaxed), 2, "two picks: the stopped worker, then the next");
        a.stop();
        b.stop();
    }

    #[actix_rt::test]
    async fn without_workers_a_connection_opens_here() {
        let homes = Homes::default();
        assert!(homes.open(&missing_program()).await.is_err());
        assert_eq!(homes.next.load(Ordering::Relaxed), 0, "no worker was picked");
    }

    #[actix_rt::test]
    async fn an_upstream_opening_before_the_first_worker_waits_for_it() {
        let homes = std::sync::Arc::new(Homes::default());
        homes.expect();
        let worker = actix_rt::Arbiter::new();
        let h = homes.clone();
        // The worker registers a little after the upstream started opening.
        worker.spawn(async move {
            tokio::time::sleep(Duration::from_millis(50)).await;
            h.register_current();
        });
        assert!(homes.open(&missing_program()).await.is_err());
        assert_eq!(homes.next.load(Ordering::Relaxed), 1, "the connection went to the worker");
        worker.stop();
    }
}
