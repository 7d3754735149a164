//! [`SessionRegistry`]: the actor that maps HTTP session ids to their
//! sessions, opens new ones within the cap and forgets those that ended.
//! Sessions run on the registry's arbiter; each expires on its own timer.

use std::collections::HashMap;
use std::time::Duration;

use actix::prelude::*;
use mcp_protocol::legacy::SessionState;
use slog::Logger;

use super::handle::SessionHandle;
use super::session::Session;

/// Why a session could not be opened.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SessionsFull {
    /// The cap.
    pub max: usize,
}

/// The open legacy sessions of HTTP clients.
pub struct SessionRegistry {
    sessions: HashMap<String, SessionHandle>,
    max: usize,
    idle: Duration,
    input_timeout: Duration,
    log: Logger,
}

impl SessionRegistry {
    /// A registry of at most `max` sessions, each expiring after `idle`
    /// without messages; handlers wait `input_timeout` for answers.
    pub fn new(max: usize, idle: Duration, input_timeout: Duration, log: Logger) -> Self {
        SessionRegistry { sessions: HashMap::new(), max, idle, input_timeout, log }
    }
}

impl Actor for SessionRegistry {
    type Context = Context<Self>;
}

/// Opens a session with the state `initialize` negotiated.
#[derive(Message)]
#[rtype(result = "Result<SessionHandle, SessionsFull>")]
pub struct Open(pub SessionState);

impl Handler<Open> for SessionRegistry {
    type Result = Result<SessionHandle, SessionsFull>;

    fn handle(&mut self, Open(state): Open, ctx: &mut Self::Context) -> Self::Result {
        self.sessions.retain(|_, s| s.is_open());
        if self.sessions.len() >= self.max {
            return Err(SessionsFull { max: self.max });
        }
        // 32 hex digits of a random UUID: visible ASCII, unguessable.
        let id = uuid::Uuid::new_v4().simple().to_string();
        let version = state.version;
        let me = ctx.address();
        let session = Session::new(id.clone(), state, Some(self.idle), self.log.clone())
            .on_end(move |id| me.do_send(Forget(id.to_owned())));
        let handle = SessionHandle::start(session, &id, version, self.input_timeout);
        self.sessions.insert(id, handle.clone());
        Ok(handle)
    }
}

/// Finds an open session by id.
#[derive(Message)]
#[rtype(result = "Option<SessionHandle>")]
pub struct Find(pub String);

impl Handler<Find> for SessionRegistry {
    type Result = Option<SessionHandle>;

    fn handle(&mut self, Find(id): Find, _ctx: &mut Self::Context) -> Self::Result {
        self.sessions.get(&id).filter(|s| s.is_open()).cloned()
    }
}

/// Forgets a session that ended.
#[derive(Message)]
#[rtype(result = "()")]
pub struct Forget(pub String);

impl Handler<Forget> for SessionRegistry {
    type Result = ();

    fn handle(&mut self, Forget(id): Forget, _ctx: &mut Self::Context) {
        self.sessions.remove(&id);
    }
}

/// Ends a session and forgets it; answers whether it was open.
#[derive(Message)]
#[rtype(result = "bool")]
pub struct Close(pub String);

impl Handler<Close> for SessionRegistry {
    type Result = bool;

    fn handle(&mut self, Close(id): Close, _ctx: &mut Self::Context) -> bool {
        match self.sessions.remove(&id) {
            Some(s) => {
                s.end();
                true
            }
            None => false,
        }
    }
}

/// How many sessions are open.
#[derive(Message)]
#[rtype(result = "usize")]
pub struct Count;

impl Handler<Count> for SessionRegistry {
    type Result = usize;

    fn handle(&mut self, _: Count, _ctx: &mut Self::Context) -> usize {
        self.sessions.retain(|_, s| s.is_open());
        self.sessions.len()
    }
}
