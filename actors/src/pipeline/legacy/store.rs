//! [`SessionStore`]: where a legacy session lives beyond the instance that
//! serves one of its messages, so that every instance serves every session
//! (in Redis: `legacy.store = "redis"`); and [`Remote`], what another
//! instance tells this one about a session. Without a store a session lives
//! in the instance that opened it.
//!
//! With a store, each instance holds its own copy of a session it serves
//! (an actor, as without one), made from the stored state on the session's
//! first message there. Changes of the state are written to the store,
//! each raising the session's revision, and told to every instance; every
//! later message of the session on an instance first asks the store for
//! the revision ([`SessionStore::check`]) and brings the copy up to it, so
//! that a change another instance answered is seen even when its letter is
//! late or lost. The questions an instance asks the client carry its name
//! in their ids, so that the client's answer, wherever it lands, reaches
//! the instance waiting for it.

use std::sync::Arc;

use futures::future::BoxFuture;
use mcp_protocol::jsonrpc::Response;
use mcp_protocol::legacy::SessionState;
use mcp_protocol::{ErrorData, RequestId};

use super::dispatch::StateChange;

/// A session as the store holds it.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Stored {
    /// Its negotiated state.
    pub state: SessionState,
    /// The key of the caller that opened it (only it may use it).
    pub owner: Option<Arc<str>>,
    /// Its revision (0 as opened).
    pub revision: u64,
}

/// A session's state at one revision in the store: the number each change
/// of the state raises by one, so that a copy tells a newer state from one
/// it already has, whatever order they reach it in.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Revised {
    /// The revision.
    pub revision: u64,
    /// The state at it.
    pub state: SessionState,
}

/// What the store says of a copy's revision ([`SessionStore::check`]).
#[cfg_attr(not(feature = "redis"), allow(dead_code))] // only stores make them
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Checked {
    /// The session is gone (expired, or ended).
    Gone,
    /// The copy has the stored revision.
    Current,
    /// The store holds another revision: this one.
    Changed(Revised),
}

/// Why the store could not do what was asked.
#[cfg_attr(not(feature = "redis"), allow(dead_code))] // only stores make them
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum StoreError {
    /// The store cannot be reached (why).
    Unavailable(String),
    /// The instance a letter was for is gone.
    Gone(String),
}

impl StoreError {
    /// As a JSON-RPC error.
    pub(crate) fn to_error_data(&self) -> ErrorData {
        match self {
            StoreError::Unavailable(why) => ErrorData::internal(format!("the session store is unavailable: {why}")),
            StoreError::Gone(to) => ErrorData::internal(format!(
                "the instance that asked this question ({to}) is gone, and the request it belonged to with it"
            )),
        }
    }
}

/// What another instance tells this one about a session.
#[cfg_attr(not(feature = "redis"), allow(dead_code))] // only stores make them
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Remote {
    /// The client's answer to a question this instance asked.
    Answer {
        /// The session.
        session: String,
        /// The answer.
        response: Response,
    },
    /// `notifications/cancelled` for a request of the session, which may
    /// be running here.
    Cancel {
        /// The session.
        session: String,
        /// The request.
        id: RequestId,
        /// Why, as the client said.
        reason: Option<String>,
    },
    /// The session's state changed (the state now).
    Changed {
        /// The session.
        session: String,
        /// Its state, and the revision it is.
        revised: Revised,
    },
    /// The session ended (`DELETE`).
    Ended {
        /// The session.
        session: String,
    },
}

/// A session's life beyond one instance.
pub(crate) trait SessionStore: Send + Sync {
    /// This instance's name, which the ids of its questions carry.
    fn instance(&self) -> &str;

    /// Writes a new session.
    fn create(&self, id: &str, stored: &Stored) -> BoxFuture<'static, Result<(), StoreError>>;

    /// Reads session `id` (counting as a use): `None` when there is none
    /// (it never was, expired or ended).
    fn load(&self, id: &str) -> BoxFuture<'static, Result<Option<Stored>, StoreError>>;

    /// Applies `change`, raising the session's revision, and tells every
    /// instance; the state after it, or `None` if the session is gone.
    fn change(&self, id: &str, change: &StateChange) -> BoxFuture<'static, Result<Option<Revised>, StoreError>>;

    /// The session was used (it lives another idle period): whether it is
    /// gone, at revision `known`, or at another (then its state too). One
    /// round trip.
    fn check(&self, id: &str, known: u64) -> BoxFuture<'static, Result<Checked, StoreError>>;

    /// Ends the session everywhere; whether it was there.
    fn end(&self, id: &str) -> BoxFuture<'static, Result<bool, StoreError>>;

    /// Hands the client's answer to `instance`, which asked.
    fn answer(&self, session: &str, instance: &str, response: Response) -> BoxFuture<'static, Result<(), StoreError>>;

    /// Tells every instance to cancel request `id` of the session.
    fn cancel(
        &self,
        session: &str,
        id: RequestId,
        reason: Option<String>,
    ) -> BoxFuture<'static, Result<(), StoreError>>;
}

/// The id of the `n`th question a session asks on the instance named
/// `instance` (`srv-{instance}-{n}`; `srv-{n}` without a store).
pub(crate) fn question_id(instance: Option<&str>, n: u64) -> RequestId {
    match instance {
        Some(me) => RequestId::string(&format!("srv-{me}-{n}")),
        None => RequestId::string(&format!("srv-{n}")),
    }
}

/// The instance that asked the question `id` answers, if its id names one.
pub(crate) fn asked_by(id: &RequestId) -> Option<String> {
    let text: String = serde_json::from_str(id.as_json()).ok()?;
    let (instance, n) = text.strip_prefix("srv-")?.rsplit_once('-')?;
    (!instance.is_empty() && n.parse::<u64>().is_ok()).then(|| instance.to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_question_names_the_instance_that_asked() {
        assert_eq!(asked_by(&question_id(Some("a1b2c3"), 7)).as_deref(), Some("a1b2c3"));
        assert_eq!(asked_by(&question_id(None, 7)), None);
        assert_eq!(asked_by(&RequestId::number(7)), None);
        assert_eq!(asked_by(&RequestId::string("srv--7")), None);
        assert_eq!(asked_by(&RequestId::string("srv-x-y")), None);
    }
}
