//! [`SessionHandle`]: how the transports, request actors and handlers reach
//! one legacy session. Cheap to clone. A request that only reads the
//! session's state is decided here, against its shared part; a change of
//! that state, the notification stream and the questions asked of the
//! client are messages to its actor. A copy of a session that lives in a
//! store is brought up to the store's revision before each message of its
//! client is served ([`SessionHandle::fresh`]).

use std::sync::Arc;
use std::time::Duration;

use actix::prelude::*;
use mcp_protocol::jsonrpc::{Request, Response};
use mcp_protocol::subscription::SubscriptionFilter;
use mcp_protocol::{ProtocolVersion, RequestId};
use tokio::sync::oneshot;

use super::dispatch::{self, Reply, SessionAction};
use super::session::{Ask, Change, ClientAnswer, End, ForgetAsk, Replace, Session, SetStream, StreamFilter};
use super::shared::SessionShared;
use super::store::{asked_by, Checked, Revised, SessionStore, StoreError};
use crate::catalog::context::SessionPeer;
use crate::channels::control::{Cancel, Close, UpdateFilter};
use futures::future::BoxFuture;
use mcp_protocol::ErrorData;

/// The session as a request's context asks it for input: made once per
/// session, shared by its requests.
struct Peer {
    addr: Addr<Session>,
    input_timeout: Duration,
}

impl SessionPeer for Peer {
    fn ask(&self) -> BoxFuture<'_, Result<(RequestId, oneshot::Receiver<super::Answer>), ErrorData>> {
        Box::pin(async move { self.addr.send(Ask).await.map_err(gone) })
    }

    fn forget(&self, id: RequestId) {
        self.addr.do_send(ForgetAsk(id));
    }

    fn input_timeout(&self) -> Duration {
        self.input_timeout
    }
}

/// The address of one legacy session with what never changes about it.
#[derive(Clone)]
pub(crate) struct SessionHandle {
    id: Arc<str>,
    version: ProtocolVersion,
    addr: Addr<Session>,
    shared: Arc<SessionShared>,
    /// The key ([`Identity::key`](crate::facts::identity::Identity::key): issuer and subject)
    /// of the caller whose credentials opened the session: only it may use it.
    owner: Option<Arc<str>>,
    peer: Arc<Peer>,
    /// Where the session lives beyond this instance, if it does.
    store: Option<Arc<dyn SessionStore>>,
}

impl std::fmt::Debug for SessionHandle {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SessionHandle").field("id", &self.id).field("version", &self.version).finish()
    }
}

fn gone(_: MailboxError) -> ErrorData {
    ErrorData::internal("the session has ended")
}

impl SessionHandle {
    /// Starts `session` on the current arbiter.
    pub(crate) fn start(session: Session, id: &str, version: ProtocolVersion, input_timeout: Duration) -> Self {
        let shared = session.shared();
        let addr = session.start();
        let peer = Arc::new(Peer { addr: addr.clone(), input_timeout });
        SessionHandle { id: id.into(), version, addr, shared, owner: None, peer, store: None }
    }

    /// This handle for a session that lives in `store` too.
    #[must_use]
    pub(crate) fn with_store(mut self, store: Option<Arc<dyn SessionStore>>) -> Self {
        self.store = store;
        self
    }

    /// This handle for a session only `owner` may use.
    #[must_use]
    pub(crate) fn with_owner(mut self, owner: Option<Arc<str>>) -> Self {
        self.owner = owner;
        self
    }

    /// Whether a request by the caller with key `caller` (`None`:
    /// unauthenticated) may use the session: a session opened with
    /// credentials is its caller's alone.
    pub(crate) fn usable_by(&self, caller: Option<&str>) -> bool {
        match &self.owner {
            None => true,
            Some(owner) => caller == Some(&**owner),
        }
    }

    /// The session id (`Mcp-Session-Id` on HTTP).
    pub(crate) fn id(&self) -> &str {
        &self.id
    }

    /// The negotiated protocol version.
    pub(crate) fn version(&self) -> ProtocolVersion {
        self.version
    }

    /// The session as a request's context asks it for input.
    pub(crate) fn peer(&self) -> Arc<dyn SessionPeer> {
        self.peer.clone()
    }

    /// Whether the session is still open.
    pub(crate) fn is_open(&self) -> bool {
        self.addr.connected()
    }

    /// Decides one request of the session's client.
    pub(crate) async fn request(&self, r: Request) -> Result<Reply, ErrorData> {
        if !self.is_open() {
            return Err(gone(MailboxError::Closed));
        }
        self.shared.touch();
        let action = dispatch::classify(&self.shared.state(), r);
        match action {
            SessionAction::Reply(reply) => Ok(reply),
            SessionAction::Change(change) => self.addr.send(Change(change)).await.map_err(gone),
        }
    }

    /// A client notification other than a cancellation: marks the session used.
    pub(crate) fn touch(&self) {
        self.shared.touch();
    }

    /// When the session's client last spoke.
    pub(crate) fn last_seen(&self) -> std::time::Instant {
        self.shared.last_seen()
    }

    /// `notifications/cancelled` for a request of the session: cancelled
    /// here if it runs here, else (sessions shared by instances) on the
    /// instance where it runs.
    pub(crate) fn cancel(&self, id: RequestId, reason: Option<String>) {
        self.shared.touch();
        if self.cancel_here(&id, reason.clone()) {
            return;
        }
        if let Some(store) = &self.store {
            let told = store.cancel(&self.id, id, reason);
            actix_rt::spawn(async move {
                let _ = told.await;
            });
        }
    }

    /// Cancels request `id` if it runs on this instance; whether it did.
    pub(crate) fn cancel_here(&self, id: &RequestId, reason: Option<String>) -> bool {
        match self.shared.untrack(id) {
            Some(cancel) => {
                let _ = cancel.try_send(Cancel { reason });
                true
            }
            None => false,
        }
    }

    /// Hands the client's answer to the handler waiting for it: here, or on
    /// the instance that asked the question (named in its id). An answer
    /// nobody waits for is dropped; one for an instance that is gone is an
    /// error.
    pub(crate) async fn answer(&self, r: Response) -> Result<(), StoreError> {
        self.shared.touch();
        if let Some(store) = &self.store
            && let Some(by) = asked_by(&r.id).filter(|by| by != store.instance())
        {
            return store.answer(&self.id, &by, r).await;
        }
        let _ = self.addr.send(ClientAnswer(r)).await;
        Ok(())
    }

    /// The session's state as another instance changed it (a letter: not
    /// waited for).
    pub(crate) fn replace(&self, revised: Revised) {
        self.addr.do_send(Replace(revised));
    }

    /// Brings this copy up to `revised` when that is newer than its state;
    /// returns once the copy serves by it, its notification stream
    /// included. False if the session has ended here.
    pub(crate) async fn revise(&self, revised: Revised) -> bool {
        revised.revision <= self.shared.revision() || self.addr.send(Replace(revised)).await.is_ok()
    }

    /// Before a message of the client is served on this instance: with a
    /// store, asks it for the session's revision (one round trip, which
    /// counts as the session's use) and brings this copy up to it, so that
    /// whatever another instance answered before shows here — a change
    /// whose letter is late or was lost included. False when the session is
    /// gone (expired, or ended on another instance): this copy ends. While
    /// the store cannot be reached the copy serves as it is.
    pub(crate) async fn fresh(&self) -> bool {
        let Some(store) = &self.store else { return true };
        match store.check(&self.id, self.shared.revision()).await {
            Ok(Checked::Current) | Err(_) => true,
            Ok(Checked::Changed(revised)) => self.revise(revised).await,
            Ok(Checked::Gone) => {
                self.end();
                false
            }
        }
    }

    /// Registers a request started in the session.
    pub(crate) fn track(&self, id: RequestId, cancel: Recipient<Cancel>) {
        self.shared.track(id, cancel);
    }

    /// A request registered with [`SessionHandle::track`] ended.
    pub(crate) fn finished(&self, id: &RequestId, cancel: &Recipient<Cancel>) {
        self.shared.finished(id, cancel);
    }

    /// The filter of a new notification stream.
    pub(crate) async fn stream_filter(&self) -> Result<SubscriptionFilter, ErrorData> {
        self.addr.send(StreamFilter).await.map_err(gone)
    }

    /// Sets the listener behind the notification stream.
    pub(crate) fn set_stream(&self, close: Recipient<Close>, update: Recipient<UpdateFilter>) {
        self.addr.do_send(SetStream { close, update });
    }

    /// Ends the session: its stream closes and its requests are cancelled.
    pub(crate) fn end(&self) {
        self.addr.do_send(End);
    }
}
