//! Legacy (`initialize`) sessions as the transports reach them: open,
//! find, end, count, and hand a session its next request.

use std::sync::Arc;

use actix::{Actor, Addr};
use mcp_protocol::jsonrpc::{encode_error, encode_result, Request};
use mcp_protocol::ErrorData;
use tokio::sync::OwnedSemaphorePermit;

use super::{McpServer, OpenError};
use crate::channels::outbound::{Outbound, OutboundTx};
use crate::facts::RequestFacts;
use crate::pipeline::legacy::era::Era;
use crate::pipeline::legacy::registry::{Adopt, Count, EndSession, Open};
use crate::pipeline::legacy::store::Stored;
use crate::pipeline::legacy::{Reply, SessionHandle};
use crate::pipeline::request::RequestActor;

impl McpServer {
    /// Answers a legacy client's `initialize` and opens its HTTP session,
    /// which only `owner` may use when it is given (the authenticated
    /// caller's [`Identity::key`](crate::facts::Identity::key)).
    pub(crate) async fn open_session(
        &self,
        r: &Request,
        owner: Option<&str>,
    ) -> Result<(SessionHandle, Vec<u8>), OpenError> {
        let (state, result) = self.inner.service.initialize(r).map_err(OpenError::Refused)?;
        let (version, client) = (state.version, state.client_info.name.clone());
        let owner: Option<Arc<str>> = owner.map(Arc::from);
        // With a store, a copy for it.
        let to_store = self
            .inner
            .session_store
            .as_ref()
            .map(|store| (store, Stored { state: state.clone(), owner: owner.clone(), revision: 0 }));
        let opened = self.inner.sessions.send(Open(state, owner)).await;
        let session = match opened {
            Ok(Ok(s)) => s,
            Ok(Err(full)) => return Err(OpenError::Full(full)),
            Err(_) => return Err(OpenError::Refused(ErrorData::internal("the session registry has stopped"))),
        };
        // Stored before the client hears of it: its next message may land
        // on any instance.
        if let Some((store, stored)) = to_store
            && let Err(e) = store.create(session.id(), &stored).await
        {
            session.end();
            return Err(OpenError::Unavailable(e.to_error_data()));
        }
        slog::info!(self.inner.log, "legacy session opened"; "session" => session.id(),
            "version" => version.as_str(), "client" => client);
        Ok((session, encode_result(&r.id, &result)))
    }

    /// The open HTTP session `id`, if there is one: held here, or (with a
    /// session store) opened on another instance and now held here too. A
    /// copy held here is first brought up to the store's revision of the
    /// session ([`SessionHandle::fresh`]), so that the message is served
    /// by what other instances answered before it. An error when the store
    /// cannot be reached for a session not held here.
    pub(crate) async fn find_session(&self, id: &str) -> Result<Option<SessionHandle>, ErrorData> {
        if let Some(held) = self.inner.session_index.find(id) {
            return Ok(held.fresh().await.then_some(held));
        }
        let Some(store) = &self.inner.session_store else { return Ok(None) };
        let Some(stored) = store.load(id).await.map_err(|e| e.to_error_data())? else { return Ok(None) };
        match self.inner.sessions.send(Adopt(id.to_owned(), stored)).await {
            Ok(Ok(session)) => Ok(Some(session)),
            Ok(Err(full)) => Err(ErrorData::internal(format!("Too many sessions held here (limit {})", full.max))),
            Err(_) => Err(ErrorData::internal("the session registry has stopped")),
        }
    }

    /// Ends the HTTP session `id` (on every instance, with a session
    /// store); false if there was none, or the store cannot be reached.
    pub async fn end_session(&self, id: &str) -> bool {
        self.end_session_everywhere(id).await.unwrap_or(false)
    }

    /// Ends the HTTP session `id` here and in the session store (which
    /// tells every instance); whether it was open.
    pub(crate) async fn end_session_everywhere(&self, id: &str) -> Result<bool, ErrorData> {
        let stored = match &self.inner.session_store {
            Some(store) => store.end(id).await.map_err(|e| e.to_error_data())?,
            None => false,
        };
        let here = self.inner.sessions.send(EndSession(id.to_owned())).await.unwrap_or(false);
        Ok(stored || here)
    }

    /// How many HTTP sessions are open.
    pub async fn session_count(&self) -> usize {
        self.inner.sessions.send(Count).await.unwrap_or(0)
    }

    /// Serves a request of a legacy session: session methods are answered
    /// into `outbound` at once; shared methods run in a request actor of the
    /// session's era (returned). Either way the reply arrives on `outbound`.
    pub(crate) async fn session_request(
        &self,
        session: &SessionHandle,
        r: Request,
        facts: RequestFacts,
        outbound: OutboundTx,
        slot: Option<OwnedSemaphorePermit>,
    ) -> Option<Addr<RequestActor>> {
        let id = r.id.clone();
        match session.request(r).await {
            Ok(Reply::Run(mut admitted)) => {
                admitted.facts = facts;
                let era = Era::Legacy(session.clone());
                Some(self.request_actor(admitted, era, outbound, slot).start())
            }
            Ok(Reply::Now(result)) => {
                answer_now(&id, result, &outbound).await;
                None
            }
            Err(e) => {
                answer_now(&id, Err(e), &outbound).await;
                None
            }
        }
    }

    /// [`McpServer::session_request`] with the request actor started in the
    /// calling task ([`RequestActor::start_here`]): a handler that answers
    /// at once has answered when this returns.
    pub(crate) async fn session_request_here(
        &self,
        session: &SessionHandle,
        r: Request,
        facts: RequestFacts,
        outbound: OutboundTx,
    ) {
        let id = r.id.clone();
        match session.request(r).await {
            Ok(Reply::Run(mut admitted)) => {
                admitted.facts = facts;
                self.request_actor(admitted, Era::Legacy(session.clone()), outbound, None).start_here().await;
            }
            Ok(Reply::Now(result)) => answer_now(&id, result, &outbound).await,
            Err(e) => answer_now(&id, Err(e), &outbound).await,
        }
    }
}

/// Hands a session's immediate answer (or its error) to the outbound channel.
async fn answer_now(id: &mcp_protocol::RequestId, now: Result<serde_json::Value, ErrorData>, outbound: &OutboundTx) {
    let (bytes, code) = match now {
        Ok(result) => (encode_result(id, &result), None),
        Err(e) => (encode_error(Some(id), &e), Some(e.code.0)),
    };
    let _ = outbound.send(Outbound::answer(bytes, code)).await;
}
