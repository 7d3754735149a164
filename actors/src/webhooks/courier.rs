//! [`Courier`]: one webhook subscription's delivery, as one task that owns
//! everything about it — its reader of the event type, its secrets, the
//! occurrences waiting for a retry, its status. The registry asks it to
//! change through [`Command`]s and reads its status from a watch channel
//! (a copy that is at most one attempt old).
//!
//! Each occurrence is posted once at once, then retried on its own
//! schedule (backoff ×4) without holding later ones back, until accepted,
//! refused for good (410, 413), out of attempts or out of its window. The
//! `cursor` a delivery carries is the watermark: the position at or before
//! which every occurrence was accepted or abandoned, safe for the client
//! to persist. Too many failures in the window suspend delivery until the
//! next refresh; what the history no longer holds then is a `gap`.

use std::collections::VecDeque;
use std::sync::Arc;
use std::time::Duration;

use mcp_protocol::events::webhook::{self, Secret};
use mcp_protocol::events::{Batch, CallbackFailure, EventError, Occurrence};
use serde_json::{json, Value};
use tokio::sync::{mpsc, watch};
use tokio::time::Instant;

use super::post::{Letter, Posted, Poster};
use crate::catalog::{Reader, Wake};
use crate::config::WebhooksConfig;

/// What the registry asks of a courier.
#[derive(Debug)]
pub(crate) enum Command {
    /// The client subscribed again: this secret from now on (the old one
    /// signs beside it for the grace period), and delivery resumes.
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
    /// Occurrences accepted, and abandoned (refused, out of attempts,
    /// too large, pushed out of the retry queue).
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

/// An occurrence waiting for its next attempt.
struct Retry {
    n: u64,
    event_id: String,
    body: Vec<u8>,
    attempt: u32,
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

/// One subscription's delivery.
pub(crate) struct Courier {
    pub(crate) id: String,
    pub(crate) url: url::Url,
    pub(crate) poster: Arc<Poster>,
    pub(crate) limits: Arc<WebhooksConfig>,
    pub(crate) secret: Secret,
    pub(crate) reader: Reader,
    pub(crate) page: usize,
    pub(crate) commands: mpsc::Receiver<Command>,
    pub(crate) status: watch::Sender<Status>,
    previous: Option<(Secret, Instant)>,
    retries: Vec<Retry>,
    /// Occurrences posted and not yet settled, in order: (n, position
    /// after it, settled).
    order: VecDeque<(u64, Option<String>, bool)>,
    next_n: u64,
    /// Attempts within the suspension window: (when, failed).
    attempts: VecDeque<(Instant, bool)>,
}

impl Courier {
    /// A courier for a subscription whose reader has already read `first`.
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn new(
        id: String,
        url: url::Url,
        poster: Arc<Poster>,
        limits: Arc<WebhooksConfig>,
        secret: Secret,
        reader: Reader,
        page: usize,
        commands: mpsc::Receiver<Command>,
        status: watch::Sender<Status>,
    ) -> Self {
        Courier {
            id,
            url,
            poster,
            limits,
            secret,
            reader,
            page,
            commands,
            status,
            previous: None,
            retries: Vec::new(),
            order: VecDeque::new(),
            next_n: 0,
            attempts: VecDeque::new(),
        }
    }

    /// Delivers `first` and everything after it until released or ended.
    pub(crate) async fn run(mut self, first: Batch) -> Stopped {
        self.deliver_batch(first).await;
        self.drain().await;
        loop {
            let active = self.status.borrow().active;
            let due = self.retries.iter().map(|r| r.due).min();
            tokio::select! {
                biased;
                command = self.commands.recv() => match command {
                    None => return Stopped::Released,
                    Some(Command::Refresh(secret)) => self.refresh(secret),
                    Some(Command::Gap) => {
                        let cursor = self.reader.position().unwrap_or_default();
                        self.control("gap", &webhook::gap_body(&cursor)).await;
                    }
                    Some(Command::Terminate(why)) => {
                        self.control("terminated", &webhook::terminated_body(&why)).await;
                        return Stopped::Terminated;
                    }
                },
                wake = self.reader.wake(), if active => match wake {
                    Wake::Ended(why) => {
                        self.control("terminated", &webhook::terminated_body(&why)).await;
                        return Stopped::Terminated;
                    }
                    // A source's passing failure has no webhook body.
                    Wake::Failed(_) => {}
                    Wake::Appended => self.drain().await,
                },
                () = sleep_until(due), if active && due.is_some() => self.retry_due().await,
            }
        }
    }

    fn refresh(&mut self, secret: Secret) {
        if secret != self.secret {
            let old = std::mem::replace(&mut self.secret, secret);
            self.previous = Some((old, Instant::now() + Duration::from_millis(self.limits.secret_grace_ms)));
        }
        self.attempts.clear();
        self.status.send_modify(|s| s.active = true);
    }

    /// Reads and delivers until the reader has nothing more.
    async fn drain(&mut self) {
        loop {
            let batch = self.reader.read(self.page);
            let more = batch.has_more;
            self.deliver_batch(batch).await;
            if !more || !self.status.borrow().active {
                return;
            }
        }
    }

    async fn deliver_batch(&mut self, batch: Batch) {
        if batch.truncated {
            self.control("gap", &webhook::gap_body(&batch.start)).await;
        }
        if self.order.is_empty() && batch.events.is_empty() {
            self.status.send_modify(|s| s.watermark = Some(batch.cursor.clone()));
        }
        for occurrence in batch.events {
            self.first_attempt(occurrence).await;
        }
    }

    async fn first_attempt(&mut self, mut occurrence: Occurrence) {
        let n = self.next_n;
        self.next_n += 1;
        self.order.push_back((n, occurrence.cursor.take(), false));
        // What the client may persist: never past this occurrence's
        // predecessors that are still unsettled.
        occurrence.cursor = self.status.borrow().watermark.clone();
        let body = serde_json::to_vec(&occurrence).unwrap_or_default();
        if body.len() > self.limits.max_body_bytes {
            self.settle(n, false);
            return;
        }
        let now = Instant::now();
        let retry = Retry { n, event_id: occurrence.event_id, body, attempt: 1, first_at: now, due: now };
        self.attempt(retry).await;
    }

    async fn retry_due(&mut self) {
        let now = Instant::now();
        let due: Vec<Retry> = {
            let (due, waiting) = std::mem::take(&mut self.retries).into_iter().partition(|r| r.due <= now);
            self.retries = waiting;
            due
        };
        for retry in due {
            self.attempt(retry).await;
        }
    }

    /// One attempt; schedules the next or settles the occurrence.
    async fn attempt(&mut self, mut retry: Retry) {
        let posted = self.post(&retry.event_id, &retry.body, false).await;
        match posted {
            Posted::Accepted(_) => self.settle(retry.n, true),
            Posted::Refused => self.settle(retry.n, false),
            Posted::Failed(_) => {
                let wait = Duration::from_millis(
                    self.limits.retry_base_ms.saturating_mul(4u64.saturating_pow(retry.attempt - 1)),
                );
                let window = Duration::from_millis(self.limits.retry_window_ms);
                let now = Instant::now();
                if retry.attempt >= self.limits.max_attempts || now + wait > retry.first_at + window {
                    self.settle(retry.n, false);
                    return;
                }
                retry.attempt += 1;
                retry.due = now + wait;
                if self.retries.len() >= self.limits.max_pending
                    && let Some(oldest) = (0..self.retries.len()).min_by_key(|&i| self.retries[i].first_at)
                {
                    let dropped = self.retries.swap_remove(oldest);
                    self.settle(dropped.n, false);
                }
                self.retries.push(retry);
            }
        }
    }

    /// Posts one body, signed with the current secret (and the previous one
    /// in its grace period), and records the outcome in the status.
    async fn post(&mut self, id: &str, body: &[u8], read_answer: bool) -> Posted {
        if self.previous.as_ref().is_some_and(|(_, until)| *until <= Instant::now()) {
            self.previous = None;
        }
        let secrets: Vec<&Secret> =
            std::iter::once(&self.secret).chain(self.previous.as_ref().map(|(s, _)| s)).collect();
        let letter = Letter { url: &self.url, subscription_id: &self.id, id, body, secrets: &secrets };
        let posted = self.poster.post(&letter, read_answer).await;
        let now_ms = crate::catalog::now_ms();
        let failed = match &posted {
            Posted::Accepted(_) => {
                self.status.send_modify(|s| {
                    s.last_delivery_ms = Some(now_ms);
                    s.last_error = None;
                    s.failed_since_ms = None;
                });
                false
            }
            Posted::Refused => {
                self.status.send_modify(|s| s.last_error = Some(CallbackFailure::Http4xx));
                true
            }
            Posted::Failed(failure) => {
                self.status.send_modify(|s| {
                    s.last_error = Some(failure.category);
                    s.failed_since_ms.get_or_insert(now_ms);
                });
                true
            }
        };
        self.count_attempt(failed);
        posted
    }

    /// Counts an attempt in the window; suspends delivery when the window
    /// holds enough attempts and too many failed.
    fn count_attempt(&mut self, failed: bool) {
        let now = Instant::now();
        self.attempts.push_back((now, failed));
        let window = Duration::from_millis(self.limits.suspend_window_ms);
        while self.attempts.front().is_some_and(|(at, _)| now.duration_since(*at) > window) {
            self.attempts.pop_front();
        }
        let total = self.attempts.len();
        let failures = self.attempts.iter().filter(|(_, failed)| *failed).count();
        if total >= self.limits.suspend_min_attempts as usize
            && failures * 100 >= usize::from(self.limits.suspend_failure_percent) * total
        {
            self.status.send_modify(|s| s.active = false);
        }
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
            watermark = self.reader.position().or(watermark);
        }
        self.status.send_modify(|s| {
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
