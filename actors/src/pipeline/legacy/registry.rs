//! [`SessionRegistry`]: the actor that maps HTTP session ids to their
//! sessions, opens new ones within the cap and forgets those that ended.
//! Sessions run on the registry's arbiter; each expires on its own timer.
//! The registry is the one writer of the map, and publishes it as a
//! [`SessionIndex`] of immutable snapshots (in shards, so that a change
//! copies a small part): a request that names its session finds it with a
//! load, not a lock or a round trip to the registry's arbiter.
//!
//! With a [`SessionStore`] the registry also holds this instance's copies
//! of sessions opened elsewhere ([`Adopt`]) and hands each what the other
//! instances say of it ([`Deliver`]); `max_sessions` then bounds the copies
//! held here, and evicting one forgets this copy only.

use std::collections::HashMap;
use std::hash::BuildHasher;
use std::sync::Arc;
use std::time::Duration;

use actix::prelude::*;
use arc_swap::ArcSwap;
use mcp_protocol::legacy::SessionState;
use slog::{info, Logger};

use super::handle::SessionHandle;
use super::session::Session;
use super::store::{Remote, Revised, SessionStore, Stored};

/// Why a session could not be opened.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct SessionsFull {
    /// The cap.
    pub max: usize,
}

/// How many parts the map is published in.
const SHARDS: usize = 64;

/// One part of the map.
type Shard = HashMap<String, SessionHandle>;

/// The part `id` lives in.
fn shard_of(id: &str) -> usize {
    (foldhash::fast::FixedState::default().hash_one(id) % SHARDS as u64) as usize
}

/// The open sessions by id, as the registry last published them.
#[derive(Debug, Clone)]
pub(crate) struct SessionIndex(Arc<[ArcSwap<Shard>]>);

impl Default for SessionIndex {
    fn default() -> Self {
        SessionIndex((0..SHARDS).map(|_| ArcSwap::from_pointee(Shard::new())).collect())
    }
}

impl SessionIndex {
    /// The open session `id`.
    pub(crate) fn find(&self, id: &str) -> Option<SessionHandle> {
        self.0[shard_of(id)].load().get(id).filter(|s| s.is_open()).cloned()
    }
}

/// The registry's own map, in the index's shards; each change publishes
/// the shard it touched.
#[derive(Debug)]
struct Sessions {
    shards: Vec<Shard>,
    index: SessionIndex,
}

impl Sessions {
    fn new() -> Self {
        Sessions { shards: (0..SHARDS).map(|_| Shard::new()).collect(), index: SessionIndex::default() }
    }

    fn publish(&self, shard: usize) {
        self.index.0[shard].store(Arc::new(self.shards[shard].clone()));
    }

    fn insert(&mut self, id: String, handle: SessionHandle) {
        let shard = shard_of(&id);
        self.shards[shard].insert(id, handle);
        self.publish(shard);
    }

    fn remove(&mut self, id: &str) -> Option<SessionHandle> {
        let shard = shard_of(id);
        let removed = self.shards[shard].remove(id);
        if removed.is_some() {
            self.publish(shard);
        }
        removed
    }

    /// Forgets the sessions that ended; how many are open.
    fn open(&mut self) -> usize {
        for shard in 0..SHARDS {
            let before = self.shards[shard].len();
            self.shards[shard].retain(|_, s| s.is_open());
            if self.shards[shard].len() != before {
                self.publish(shard);
            }
        }
        self.shards.iter().map(HashMap::len).sum()
    }

    fn iter(&self) -> impl Iterator<Item = (&String, &SessionHandle)> {
        self.shards.iter().flat_map(HashMap::iter)
    }
}

/// The open legacy sessions of HTTP clients.
pub(crate) struct SessionRegistry {
    /// Each session by id.
    sessions: Sessions,
    max: usize,
    idle: Duration,
    evict_idle: Duration,
    input_timeout: Duration,
    /// Where sessions live beyond this instance, if they do.
    store: Option<Arc<dyn SessionStore>>,
    log: Logger,
}

impl SessionRegistry {
    /// A registry of at most `max` sessions, each expiring after `idle`
    /// without messages; handlers wait `input_timeout` for answers. A full
    /// registry lets a new session evict the one unused the longest once it
    /// has been unused for `evict_idle`.
    pub(crate) fn new(max: usize, idle: Duration, input_timeout: Duration, log: Logger) -> Self {
        SessionRegistry { sessions: Sessions::new(), max, idle, evict_idle: idle, input_timeout, store: None, log }
    }

    /// Sessions that live in `store` too, shared by instances.
    #[must_use]
    pub(crate) fn with_store(mut self, store: Option<Arc<dyn SessionStore>>) -> Self {
        self.store = store;
        self
    }

    /// Starts session `id` with `stored` here, within the cap.
    fn start(&mut self, id: String, stored: Stored, me: Addr<Self>) -> Result<SessionHandle, SessionsFull> {
        let open = self.sessions.open();
        if open >= self.max && !self.evict() {
            return Err(SessionsFull { max: self.max });
        }
        let version = stored.state.version;
        let session = Session::new(id.clone(), stored.state, Some(self.idle), self.log.clone())
            .with_store(self.store.clone())
            .at_revision(stored.revision)
            .on_end(move |id| me.do_send(Forget(id.to_owned())));
        let handle = SessionHandle::start(session, &id, version, self.input_timeout)
            .with_owner(stored.owner)
            .with_store(self.store.clone());
        self.sessions.insert(id, handle.clone());
        Ok(handle)
    }

    /// Ends the session `id` held here and forgets it; whether it was held.
    fn end(&mut self, id: &str) -> bool {
        let held = self.sessions.remove(id);
        held.as_ref().map(SessionHandle::end).is_some()
    }

    /// Its index, for lookups from any thread.
    pub(crate) fn index(&self) -> SessionIndex {
        self.sessions.index.clone()
    }

    /// How long a session must be unused before a full registry evicts it.
    #[must_use]
    pub(crate) fn with_eviction(mut self, evict_idle: Duration) -> Self {
        self.evict_idle = evict_idle;
        self
    }

    /// Makes room in a full registry by ending the session unused the
    /// longest, if it has been unused for `evict_idle`.
    fn evict(&mut self) -> bool {
        let oldest = self
            .sessions
            .iter()
            .map(|(id, s)| (id, s.last_seen()))
            .min_by_key(|(_, used)| *used)
            .map(|(id, u)| (id.clone(), u));
        match oldest {
            Some((id, used)) if used.elapsed() >= self.evict_idle => {
                if let Some(s) = self.sessions.remove(&id) {
                    s.end();
                }
                info!(self.log, "legacy session evicted to make room"; "session" => id, "idle_ms" => used.elapsed().as_millis() as u64);
                true
            }
            _ => false,
        }
    }
}

impl Actor for SessionRegistry {
    type Context = Context<Self>;
}

/// Opens a session with the state `initialize` negotiated, owned by the
/// subject that opened it (when requests are authorized).
#[derive(Message)]
#[rtype(result = "Result<SessionHandle, SessionsFull>")]
pub(crate) struct Open(pub SessionState, pub Option<std::sync::Arc<str>>);

impl Handler<Open> for SessionRegistry {
    type Result = Result<SessionHandle, SessionsFull>;

    fn handle(&mut self, Open(state, owner): Open, ctx: &mut Self::Context) -> Self::Result {
        // 32 hex digits of a random UUID: visible ASCII, unguessable.
        let id = uuid::Uuid::new_v4().simple().to_string();
        self.start(id, Stored { state, owner, revision: 0 }, ctx.address())
    }
}

/// This instance's copy of session `id`, opened on another instance, as
/// the store holds it (the copy already here, if there is one, brought up
/// to what the store held).
#[derive(Message)]
#[rtype(result = "Result<SessionHandle, SessionsFull>")]
pub(crate) struct Adopt(pub String, pub Stored);

impl Handler<Adopt> for SessionRegistry {
    type Result = ResponseFuture<Result<SessionHandle, SessionsFull>>;

    fn handle(&mut self, Adopt(id, stored): Adopt, ctx: &mut Self::Context) -> Self::Result {
        let Some(held) = self.sessions.index.find(&id) else {
            let started = self.start(id, stored, ctx.address());
            return Box::pin(std::future::ready(started));
        };
        // Two first messages at once: the one that read a newer revision
        // must not be served by the older.
        let revised = Revised { revision: stored.revision, state: stored.state };
        Box::pin(async move {
            held.revise(revised).await;
            Ok(held)
        })
    }
}

/// What another instance says of a session, for this instance's copy.
#[derive(Message)]
#[rtype(result = "()")]
pub(crate) struct Deliver(pub Remote);

impl Handler<Deliver> for SessionRegistry {
    type Result = ();

    fn handle(&mut self, Deliver(remote): Deliver, _ctx: &mut Self::Context) {
        let find = |id: &str| self.sessions.index.find(id);
        match remote {
            Remote::Answer { session, response } => match find(&session) {
                Some(s) => {
                    actix_rt::spawn(async move {
                        let _ = s.answer(response).await;
                    });
                }
                None => slog::debug!(self.log, "an answer for a session not held here"; "session" => session),
            },
            Remote::Cancel { session, id, reason } => {
                if let Some(s) = find(&session) {
                    s.cancel_here(&id, reason);
                }
            }
            Remote::Changed { session, revised } => {
                if let Some(s) = find(&session) {
                    s.replace(revised);
                }
            }
            Remote::Ended { session } => {
                if self.end(&session) {
                    info!(self.log, "legacy session ended on another instance"; "session" => session);
                }
            }
        }
    }
}

/// Forgets a session that ended.
#[derive(Message)]
#[rtype(result = "()")]
pub(crate) struct Forget(pub String);

impl Handler<Forget> for SessionRegistry {
    type Result = ();

    fn handle(&mut self, Forget(id): Forget, _ctx: &mut Self::Context) {
        self.sessions.remove(&id);
    }
}

/// Ends a session and forgets it; answers whether it was open.
#[derive(Message)]
#[rtype(result = "bool")]
pub(crate) struct EndSession(pub String);

impl Handler<EndSession> for SessionRegistry {
    type Result = bool;

    fn handle(&mut self, EndSession(id): EndSession, _ctx: &mut Self::Context) -> bool {
        self.end(&id)
    }
}

/// How many sessions are open.
#[derive(Message)]
#[rtype(result = "usize")]
pub(crate) struct Count;

impl Handler<Count> for SessionRegistry {
    type Result = usize;

    fn handle(&mut self, _: Count, _ctx: &mut Self::Context) -> usize {
        self.sessions.open()
    }
}
