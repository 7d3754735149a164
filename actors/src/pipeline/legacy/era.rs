//! [`Era`]: which protocol era a request is served in, decided once at
//! intake and carried by the request actor, its context and the service.

use std::sync::Arc;

use crate::catalog::context::SessionPeer;
use crate::pipeline::legacy::SessionHandle;

/// The era of one request.
#[derive(Debug, Clone)]
pub(crate) enum Era {
    /// 2026-07-28 (and its draft): everything the request needs is in its
    /// `_meta`; input from the client comes by `InputRequiredResult` and a
    /// retry.
    Stateless,
    /// A request inside a legacy (`initialize`) session: input from the
    /// client is asked by server-to-client requests through the session, and
    /// `notifications/cancelled` reaches the request through it.
    Legacy(SessionHandle),
}

impl Era {
    /// The legacy session, if the request is in one.
    pub(crate) fn session(&self) -> Option<&SessionHandle> {
        match self {
            Era::Stateless => None,
            Era::Legacy(s) => Some(s),
        }
    }

    /// The session as a request's context asks it for input.
    pub(crate) fn peer(&self) -> Option<Arc<dyn SessionPeer>> {
        self.session().map(SessionHandle::peer)
    }
}
