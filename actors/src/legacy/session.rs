//! [`Session`]: one legacy session — its negotiated state, its pending
//! server-to-client requests, its in-flight requests and its notification
//! stream — and [`SessionRegistry`], which creates, finds, caps and expires
//! them. A [`SessionReaper`] actor removes idle sessions.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use actix::prelude::*;
use mcp_protocol::legacy::SessionState;
use mcp_protocol::subscription::SubscriptionFilter;
use mcp_protocol::RequestId;
use slog::{debug, info, Logger};

use super::PendingRequests;
use crate::hub::{Close, CloseReason};
use crate::listener::{ListenerActor, UpdateFilter};
use crate::request::{Cancel, RequestActor};

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

/// One legacy session.
#[derive(Debug)]
pub struct Session {
    /// The `Mcp-Session-Id` (32 hex digits of a random UUID: visible ASCII,
    /// unguessable).
    pub id: String,
    state: Mutex<SessionState>,
    /// Server-to-client requests awaiting the client's answer.
    pub pending: Arc<PendingRequests>,
    last_seen: Mutex<Instant>,
    in_flight: Mutex<HashMap<RequestId, Addr<RequestActor>>>,
    stream: Mutex<Option<Addr<ListenerActor>>>,
}

impl Session {
    /// A session with its state after `initialize`.
    pub fn new(id: String, state: SessionState, input_timeout: Duration) -> Self {
        Session {
            id,
            state: Mutex::new(state),
            pending: Arc::new(PendingRequests::new(input_timeout)),
            last_seen: Mutex::new(Instant::now()),
            in_flight: Mutex::new(HashMap::new()),
            stream: Mutex::new(None),
        }
    }

    /// A copy of the state.
    pub fn state(&self) -> SessionState {
        lock(&self.state).clone()
    }

    /// Changes the state.
    pub fn update(&self, f: impl FnOnce(&mut SessionState)) {
        f(&mut lock(&self.state));
    }

    /// Marks the session used now.
    pub fn touch(&self) {
        *lock(&self.last_seen) = Instant::now();
    }

    /// How long since it was last used.
    pub fn idle_for(&self) -> Duration {
        lock(&self.last_seen).elapsed()
    }

    /// What its notification stream delivers: every list change (the legacy
    /// era has no opt-in) and updates of the subscribed resources.
    pub fn filter(&self) -> SubscriptionFilter {
        SubscriptionFilter {
            tools_list_changed: true,
            prompts_list_changed: true,
            resources_list_changed: true,
            resource_subscriptions: lock(&self.state).subscriptions.iter().cloned().collect(),
        }
    }

    /// Sets the listener behind its notification stream (replacing, and
    /// closing, an earlier one).
    pub fn set_stream(&self, listener: Addr<ListenerActor>) {
        if let Some(old) = lock(&self.stream).replace(listener) {
            old.do_send(Close { reason: CloseReason::ClientGone });
        }
    }

    /// Tells the stream's listener the current filter and waits until the
    /// hub routes by it (so an update right after `resources/subscribe` is
    /// not missed).
    pub async fn refresh_stream(&self) {
        let listener = lock(&self.stream).clone();
        if let Some(l) = listener {
            let _ = l.send(UpdateFilter { filter: self.filter() }).await;
        }
    }

    /// Remembers an in-flight request (for `notifications/cancelled`).
    pub fn track(&self, id: RequestId, addr: Addr<RequestActor>) {
        let mut m = lock(&self.in_flight);
        m.retain(|_, a| a.connected());
        m.insert(id, addr);
    }

    /// Cancels an in-flight request.
    pub fn cancel(&self, id: &RequestId, reason: Option<String>) -> bool {
        match lock(&self.in_flight).remove(id) {
            Some(addr) => addr.try_send(Cancel { reason }).is_ok(),
            None => false,
        }
    }

    /// Ends the session: its stream closes and its requests are cancelled.
    pub fn end(&self) {
        if let Some(l) = lock(&self.stream).take() {
            l.do_send(Close { reason: CloseReason::ClientGone });
        }
        for (_, addr) in lock(&self.in_flight).drain() {
            let _ = addr.try_send(Cancel { reason: Some("session ended".into()) });
        }
    }
}

/// Why a session could not be created.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SessionsFull {
    /// The cap.
    pub max: usize,
}

/// The open legacy sessions.
#[derive(Debug)]
pub struct SessionRegistry {
    sessions: Mutex<HashMap<String, Arc<Session>>>,
    max: usize,
    idle: Duration,
    input_timeout: Duration,
}

impl SessionRegistry {
    /// A registry of at most `max` sessions expiring after `idle`.
    pub fn new(max: usize, idle: Duration, input_timeout: Duration) -> Self {
        SessionRegistry { sessions: Mutex::new(HashMap::new()), max, idle, input_timeout }
    }

    /// Opens a session.
    pub fn create(&self, state: SessionState) -> Result<Arc<Session>, SessionsFull> {
        self.reap();
        let mut m = lock(&self.sessions);
        if m.len() >= self.max {
            return Err(SessionsFull { max: self.max });
        }
        let id = uuid::Uuid::new_v4().simple().to_string();
        let session = Arc::new(Session::new(id.clone(), state, self.input_timeout));
        m.insert(id, session.clone());
        Ok(session)
    }

    /// Finds a live session and marks it used; an expired one is removed.
    pub fn get(&self, id: &str) -> Option<Arc<Session>> {
        let mut m = lock(&self.sessions);
        let s = m.get(id)?.clone();
        if s.idle_for() >= self.idle {
            m.remove(id);
            drop(m);
            s.end();
            return None;
        }
        s.touch();
        Some(s)
    }

    /// Ends and forgets a session.
    pub fn remove(&self, id: &str) -> Option<Arc<Session>> {
        let s = lock(&self.sessions).remove(id)?;
        s.end();
        Some(s)
    }

    /// Ends every idle session; returns how many.
    pub fn reap(&self) -> usize {
        let expired: Vec<Arc<Session>> = {
            let mut m = lock(&self.sessions);
            let ids: Vec<String> =
                m.iter().filter(|(_, s)| s.idle_for() >= self.idle).map(|(k, _)| k.clone()).collect();
            ids.iter().filter_map(|k| m.remove(k)).collect()
        };
        for s in &expired {
            s.end();
        }
        expired.len()
    }

    /// How many sessions are open.
    pub fn len(&self) -> usize {
        lock(&self.sessions).len()
    }

    /// Whether none are open.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The idle timeout.
    pub fn idle(&self) -> Duration {
        self.idle
    }
}

/// Expires idle sessions on a timer (a tenth of the idle timeout, at least
/// every 10 ms and at most every 10 s).
pub struct SessionReaper {
    /// The registry.
    pub registry: Arc<SessionRegistry>,
    /// Logger.
    pub log: Logger,
}

impl Actor for SessionReaper {
    type Context = Context<Self>;

    fn started(&mut self, ctx: &mut Self::Context) {
        let every = (self.registry.idle() / 10).clamp(Duration::from_millis(10), Duration::from_secs(10));
        ctx.run_interval(every, |act, _| {
            let n = act.registry.reap();
            if n > 0 {
                info!(act.log, "legacy sessions expired"; "expired" => n, "open" => act.registry.len());
            } else {
                debug!(act.log, "no legacy session expired"; "open" => act.registry.len());
            }
        });
    }
}
