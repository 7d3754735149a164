//! [`Courier`]: one webhook subscription's delivery, as one task that owns
//! everything about it — its reader of the event type, its secrets, the
//! occurrences waiting for an attempt, its status. The registry asks it to
//! change through [`Command`]s, stops it through its cancellation token (a
//! post under way is abandoned at once), and reads its status from a watch
//! channel (a copy at most one attempt old).
//!
//! Each occurrence is posted at once, then retried on its own schedule
//! (backoff ×4) without holding later ones back, until accepted, refused
//! for good (410, 413), out of attempts or out of its window. The `cursor`
//! a delivery carries is the watermark: the position at or before which
//! every occurrence read was accepted or abandoned, safe for the client to
//! persist. Too many failures in the window suspend delivery until the
//! next refresh: what was read stays queued (within the server's budget
//! of held bodies), and what the history no longer holds then is a `gap`.

use std::collections::VecDeque;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

use mcp_protocol::events::webhook::{self, Secret};
use mcp_protocol::events::{Batch, CallbackFailure, EventError, Occurrence};
use serde_json::{json, Value};
use tokio::sync::{mpsc, watch};
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

use super::post::{Letter, Posted, Poster};
use super::window::Window;
use crate::catalog::{Reader, Wake};
use crate::config::WebhooksConfig;

/// What the registry asks of a courier.
#[derive(Debug)]
pub(crate) enum Command {
    /// The client subscribed again: this secret from now on (the ones it
    /// replaces sign beside it for the grace period), and delivery resumes.
    Refresh(Secret),
    /// Tell the client of a gap (a `gap` body with the current position).
    Gap,
    /// End the subscription: a `terminated` body, then the courier stops.
    Terminate(EventError),
}

/// What the registry may read of a subscription's delivery.
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct Status {
    /// Delivering (false: suspended after too many failures).
    pub(crate) active: bool,
    /// When a delivery was last accepted (ms since the epoch).
    pub(crate) last_delivery_ms: Option<u64>,
    /// The last failure's category, until a delivery is accepted.
    pub(crate) last_error: Option<CallbackFailure>,
    /// Since when deliveries fail (ms since the epoch).
    pub(crate) failed_since_ms: Option<u64>,
    /// The safe-to-persist position.
    pub(crate) watermark: Option<String>,
    /// Occurrences accepted, and abandoned (refused, out of attempts, too
    /// large, or no room to hold them for another attempt).
    pub(crate) delivered: u64,
    pub(crate) abandoned: u64,
}

impl Status {
    /// `deliveryStatus` as a subscribe's answer carries it.
    pub(crate) fn to_json(&self) -> Value {
        let iso = |ms: Option<u64>| ms.map(mcp_protocol::tasks::iso8601);
        let mut status = json!({
            "active": self.active,
            "lastDeliveryAt": iso(self.last_delivery_ms),
            "lastError": self.last_error.map(CallbackFailure::as_str),
        });
        if let Some(since) = iso(self.failed_since_ms) {
            status["failedSince"] = Value::String(since);
        }
        status
    }
}

/// A body held in memory for a later attempt, counted against the server's
/// budget of held bytes until it is dropped.
struct Held {
    body: Vec<u8>,
    budget: Arc<AtomicUsize>,
}

impl Held {
    /// `body` counted against `budget` (at most `max` bytes held in all);
    /// `None` when there is no room.
    fn take(body: Vec<u8>, budget: &Arc<AtomicUsize>, max: usize) -> Option<Self> {
        let len = body.len();
        budget
            .fetch_update(Ordering::AcqRel, Ordering::Acquire, |held| (held + len <= max).then_some(held + len))
            .ok()?;
        Some(Held { body, budget: budget.clone() })
    }
}

impl Drop for Held {
    fn drop(&mut self) {
        self.budget.fetch_sub(self.body.len(), Ordering::AcqRel);
    }
}

/// An occurrence waiting for its next attempt.
struct Attempt {
    n: u64,
    event_id: String,
    body: Held,
    /// The attempt this will be (1: the first).
    number: u32,
    first_at: Instant,
    due: Instant,
}

/// Why a courier stopped.
#[derive(Debug, PartialEq)]
pub(crate) enum Stopped {
    /// The registry let go of it (unsubscribed, expired, shutting down).
    Released,
    /// The subscription ended (`terminated` was sent).
    Terminated,
}

/// What a courier is made of.
pub(crate) struct Parts {
    pub(crate) id: String,
    pub(crate) url: url::Url,
    pub(crate) poster: Arc<Poster>,
    pub(crate) limits: Arc<WebhooksConfig>,
    pub(crate) secret: Secret,
    pub(crate) reader: Reader,
    pub(crate) page: usize,
    pub(crate) commands: mpsc::Receiver<Command>,
    pub(crate) status: watch::Sender<Status>,
    pub(crate) stop: CancellationToken,
    /// The bytes of bodies held for a later attempt, server-wide.
    pub(crate) held: Arc<AtomicUsize>,
}

/// One subscription's delivery.
pub(crate) struct Courier {
    p: Parts,
    /// The secrets replaced lately, each signing until its deadline.
    previous: Vec<(Secret, Instant)>,
    waiting: Vec<Attempt>,
    /// Occurrences read and not yet settled, in order: (n, position after
    /// it, settled).
    order: VecDeque<(u64, Option<String>, bool)>,
    next_n: u64,
    window: Window,
}

/// At most this many replaced secrets sign beside the current one.
const MAX_PREVIOUS_SECRETS: usize = 4;

impl Courier {
    pub(crate) fn new(p: Parts) -> Self {
        let window = Window::new(Duration::from_millis(p.limits.suspend_window_ms));
        Courier { p, previous: Vec::new(), waiting: Vec::new(), order: VecDeque::new(), next_n: 0, window }
    }

    fn active(&self) -> bool {
        self.p.status.borrow().active
    }

    /// Delivers `first` and everything after it until released or ended.
    pub(crate) async fn run(mut self, first: Batch) -> Stopped {
        self.take_batch(first).await;
        self.drain().await;
        loop {
            if self.p.stop.is_cancelled() {
                return Stopped::Released;
            }
            let active = self.active();
            let due = self.waiting.iter().map(|r| r.due).min();
            tokio::select! {
                biased;
                () = self.p.stop.cancelled() => return Stopped::Released,
                command = self.p.commands.recv() => match command {
                    None => return Stopped::Released,
                    Some(Command::Refresh(secret)) => self.refresh(secret),
                    Some(Command::Gap) => {
                        let cursor = self.p.reader.position().unwrap_or_default();
                        self.control("gap", &webhook::gap_body(&cursor)).await;
                    }
                    Some(Command::Terminate(why)) => {
                        self.control("terminated", &webhook::terminated_body(&why)).await;
                        return Stopped::Terminated;
                    }
                },
                wake = self.p.reader.wake(), if active => match wake {
                    Wake::Ended(why) => {
                        self.control("terminated", &webhook::terminated_body(&why)).await;
                        return Stopped::Terminated;
                    }
                    // A source's passing failure has no webhook body.
                    Wake::Failed(_) => {}
                    Wake::Appended => self.drain().await,
                },
                () = sleep_until(due), if active && due.is_some() => self.attempt_due().await,
            }
        }
    }

    fn refresh(&mut self, secret: Secret) {
        if secret != self.p.secret {
            let old = std::mem::replace(&mut self.p.secret, secret);
            let until = Instant::now() + Duration::from_millis(self.p.limits.secret_grace_ms);
            self.previous.push((old, until));
            if self.previous.len() > MAX_PREVIOUS_SECRETS {
                self.previous.remove(0);
            }
        }
        self.window = Window::new(Duration::from_millis(self.p.limits.suspend_window_ms));
        self.p.status.send_modify(|s| s.active = true);
    }

    /// Reads and delivers until the reader has nothing more, delivery is
    /// suspended or the courier is stopped.
    async fn drain(&mut self) {
        loop {
            let batch = self.p.reader.read(self.p.page);
            let more = batch.has_more;
            self.take_batch(batch).await;
            if !more || !self.active() || self.p.stop.is_cancelled() {
                return;
            }
        }
    }

    /// Queues a batch's occurrences (each with the watermark as its cursor,
    /// which never passes an unsettled predecessor), then attempts them.
    async fn take_batch(&mut self, batch: Batch) {
        if batch.truncated {
            self.control("gap", &webhook::gap_body(&batch.start)).await;
        }
        if self.order.is_empty() && batch.events.is_empty() {
            self.p.status.send_modify(|s| s.watermark = Some(batch.cursor.clone()));
        }
        let now = Instant::now();
        let mut queued = Vec::new();
        for occurrence in batch.events {
            let n = self.next_n;
            self.next_n += 1;
            self.order.push_back((n, occurrence.cursor.clone(), false));
            queued.push((n, occurrence));
        }
        for (n, mut occurrence) in queued {
            occurrence.cursor = self.p.status.borrow().watermark.clone();
            match self.hold(&occurrence) {
                Some(body) => {
                    let event_id = std::mem::take(&mut occurrence.event_id);
                    self.waiting.push(Attempt { n, event_id, body, number: 1, first_at: now, due: now });
                }
                None => self.settle(n, false),
            }
        }
        self.attempt_due().await;
    }

    /// An occurrence's body, held within the budget; `None` (abandoned)
    /// when it is larger than `max_body_bytes` or there is no room.
    fn hold(&self, occurrence: &Occurrence) -> Option<Held> {
        let body = serde_json::to_vec(occurrence).ok()?;
        if body.len() > self.p.limits.max_body_bytes {
            return None;
        }
        Held::take(body, &self.p.held, self.p.limits.max_held_bytes)
    }

    /// Attempts every occurrence that is due, in order, while delivery is
    /// active and the courier is not stopped.
    async fn attempt_due(&mut self) {
        let now = Instant::now();
        let (mut due, waiting): (Vec<Attempt>, Vec<Attempt>) =
            std::mem::take(&mut self.waiting).into_iter().partition(|a| a.due <= now);
        self.waiting = waiting;
        due.sort_by_key(|a| a.n);
        let mut due = due.into_iter();
        while let Some(attempt) = due.next() {
            if !self.active() || self.p.stop.is_cancelled() {
                // Suspended or stopped: the rest wait as they are.
                self.waiting.push(attempt);
                self.waiting.extend(due);
                return;
            }
            self.attempt(attempt).await;
        }
    }

    /// One attempt; schedules the next or settles the occurrence.
    async fn attempt(&mut self, mut attempt: Attempt) {
        match self.post(&attempt.event_id, &attempt.body.body, false).await {
            Posted::Accepted(_) => self.settle(attempt.n, true),
            Posted::Refused => self.settle(attempt.n, false),
            Posted::Failed(_) if self.p.stop.is_cancelled() => {}
            Posted::Failed(_) => {
                let backoff = 4u64.saturating_pow(attempt.number - 1);
                let wait = Duration::from_millis(self.p.limits.retry_base_ms.saturating_mul(backoff));
                let window = Duration::from_millis(self.p.limits.retry_window_ms);
                let now = Instant::now();
                if attempt.number >= self.p.limits.max_attempts || now + wait > attempt.first_at + window {
                    self.settle(attempt.n, false);
                    return;
                }
                attempt.number += 1;
                attempt.due = now + wait;
                if self.waiting.len() >= self.p.limits.max_pending
                    && let Some(oldest) = (0..self.waiting.len()).min_by_key(|&i| self.waiting[i].n)
                {
                    let dropped = self.waiting.swap_remove(oldest);
                    self.settle(dropped.n, false);
                }
                self.waiting.push(attempt);
            }
        }
    }

    /// Posts one body, signed with the current secret (and those it
    /// replaced, in their grace period), and records the outcome. A stop
    /// abandons the post at once.
    async fn post(&mut self, id: &str, body: &[u8], read_answer: bool) -> Posted {
        let now = Instant::now();
        self.previous.retain(|(_, until)| *until > now);
        let secrets: Vec<&Secret> =
            std::iter::once(&self.p.secret).chain(self.previous.iter().map(|(s, _)| s)).collect();
        let letter = Letter { url: &self.p.url, subscription_id: &self.p.id, id, body, secrets: &secrets };
        let posted = tokio::select! {
            biased;
            () = self.p.stop.cancelled() => return Posted::Failed(super::post::Failure::stopped()),
            posted = self.p.poster.post(&letter, read_answer) => posted,
        };
        let now_ms = crate::catalog::now_ms();
        let failed = match &posted {
            Posted::Accepted(_) => {
                self.p.status.send_modify(|s| {
                    s.last_delivery_ms = Some(now_ms);
                    s.last_error = None;
                    s.failed_since_ms = None;
                });
                false
            }
            Posted::Refused => {
                self.p.status.send_modify(|s| s.last_error = Some(CallbackFailure::Http4xx));
                true
            }
            Posted::Failed(failure) => {
                self.p.status.send_modify(|s| {
                    s.last_error = Some(failure.category);
                    s.failed_since_ms.get_or_insert(now_ms);
                });
                true
            }
        };
        let (attempts, failures) = self.window.count(Instant::now(), failed);
        let l = &self.p.limits;
        if attempts >= u64::from(l.suspend_min_attempts)
            && failures * 100 >= u64::from(l.suspend_failure_percent) * attempts
        {
            self.p.status.send_modify(|s| s.active = false);
        }
        posted
    }

    /// Occurrence `n` is done (accepted, or abandoned): the watermark moves
    /// past every settled occurrence at the front.
    fn settle(&mut self, n: u64, accepted: bool) {
        if let Some(entry) = self.order.iter_mut().find(|(m, _, _)| *m == n) {
            entry.2 = true;
        }
        let mut watermark = None;
        while self.order.front().is_some_and(|(_, _, settled)| *settled) {
            watermark = self.order.pop_front().and_then(|(_, cursor, _)| cursor);
        }
        if self.order.is_empty() {
            // Everything read is settled: the reader's position is safe.
            watermark = self.p.reader.position().or(watermark);
        }
        self.p.status.send_modify(|s| {
            if let Some(w) = watermark {
                s.watermark = Some(w);
            }
            if accepted {
                s.delivered += 1;
            } else {
                s.abandoned += 1;
            }
        });
    }

    /// One control body (`gap`, `terminated`), posted once.
    async fn control(&mut self, kind: &str, body: &Value) {
        let id = format!("msg_{kind}_{}", uuid::Uuid::new_v4().simple());
        let bytes = body.to_string().into_bytes();
        self.post(&id, &bytes, false).await;
    }
}

async fn sleep_until(due: Option<Instant>) {
    match due {
        Some(due) => tokio::time::sleep_until(due).await,
        None => std::future::pending().await,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn held_bodies_are_counted_against_the_budget_until_dropped() {
        let budget = Arc::new(AtomicUsize::new(0));
        let a = Held::take(vec![0; 60], &budget, 100).expect("room");
        assert!(Held::take(vec![0; 50], &budget, 100).is_none(), "past the budget");
        drop(a);
        assert_eq!(budget.load(Ordering::Acquire), 0);
        assert!(Held::take(vec![0; 100], &budget, 100).is_some());
    }
}
