//! The intake: the one pipeline every incoming message goes through, on
//! every transport, and no I/O in it. A transport (a *driver*) hands it a
//! message's bytes and what it knows of the message ([`Driver`]: headers,
//! caller, facts); the intake decodes it, decides its era, checks the
//! caller's scopes, admits it and returns what to do — a [`Route`] on a
//! connection without a legacy session, a [`SessionRoute`] on one with a
//! session. Refusals come with their error, their cause and the labels
//! they are counted under ([`Refusal`]), listen streams with their
//! admission (hub room, filter, read scopes). The driver carries out the
//! result — start a request actor, a listener, a session, or answer the
//! refusal as its transport does (HTTP with a status and, for an
//! authorization refusal, a challenge) — and reports what happened to the
//! server's observer ([`McpServer::refused`](crate::McpServer)): the intake
//! reads no clock, logs nothing and counts nothing.
//!
//! The era is decided here: a message goes to the connection's legacy
//! session unless it claims the stateless era by naming a protocol version
//! in `_meta` (the one "is this legacy" rule).
//!
//! In order: with an authenticated caller, the item a request uses (a tool,
//! a prompt, a resource, in either era) must be one its credentials grant
//! (403 with a step-up challenge). Then admission of a stateless request:
//! `_meta` (-32602 / HeaderMismatch / UnsupportedProtocolVersion) →
//! `Mcp-Method` (HTTP: HeaderMismatch) → method and params (-32601 /
//! -32602) → `Mcp-Name` and `Mcp-Param-*` (HTTP: HeaderMismatch); and for a
//! listen, its admission ([`ListenAdmission`]).

use mcp_protocol::decode::OnePass;
use mcp_protocol::jsonrpc::{DecodeError, Incoming, Notification, Request, Response};
use mcp_protocol::request::{ClientNotification, ClientRequest};
use mcp_protocol::{ErrorCode, ErrorData, Expect, Message, ProtocolVersion, RequestId, RequestMeta};
use std::sync::Arc;

use crate::auth::Authorizer;
use crate::catalog::{Catalog, Tool};
use crate::config::HubConfig;
use crate::facts::head::Headers;
use crate::facts::identity::Identity;
use crate::facts::RequestFacts;
use crate::hub::Occupancy;
use crate::pipeline::service::McpService;

mod admit;
mod listen;
mod refusal;

use admit::{admit, check, claims, Checked, Parsed};
pub(crate) use listen::ListenAdmission;
pub(crate) use refusal::{Cause, Refusal};

/// What a transport knows of one message besides its bytes. HTTP, stdio,
/// a WebSocket and the test client are drivers: each implements this and
/// carries out what the intake returns.
pub(crate) trait Driver {
    /// The message's headers; `None` where the transport has none.
    fn headers(&self) -> Option<&dyn Headers> {
        None
    }

    /// The caller the transport authenticated, if any: the items a request
    /// uses must be ones its credentials grant.
    fn caller(&self) -> Option<&Identity> {
        None
    }

    /// What an admitted request carries to its handler (headers, caller,
    /// extensions, trace context); asked once per admitted request.
    fn facts(&self) -> RequestFacts {
        RequestFacts::default()
    }
}

/// The server's side of the intake: what it admits messages against.
/// Cheap to make (references only); [`McpServer::intake`](crate::McpServer::intake) makes one.
#[derive(Clone, Copy)]
pub(crate) struct Intake<'a> {
    service: &'a McpService,
    hub: &'a HubConfig,
    occupancy: &'a Occupancy,
    authorizer: Option<&'a Authorizer>,
}

/// A request that passed admission.
#[derive(Debug, Clone)]
pub(crate) struct Admitted {
    /// The id.
    pub id: RequestId,
    /// The validated `_meta`.
    pub meta: RequestMeta,
    /// The parsed request.
    pub request: ClientRequest,
    /// What the transport knows besides the message (headers, extensions).
    pub facts: RequestFacts,
    /// The tool a `tools/call` names, when admission looked it up (to
    /// check its `Mcp-Param-*` headers): the service does not look again.
    pub tool: Option<Arc<Tool>>,
}

/// What to do with a message on a connection without a legacy session.
#[derive(Debug)]
pub(crate) enum Route {
    /// Something of the stateless era, or of none.
    Act(Action),
    /// A legacy client's `initialize`: open a session.
    Initialize(Request),
}

/// What to do with a message on a connection with a legacy session.
#[derive(Debug)]
pub(crate) enum SessionRoute {
    /// Something of the stateless era (a request that names a stateless
    /// version is served statelessly, in a session too), or a cancellation.
    Act(Action),
    /// A message for the session.
    Session(Incoming),
}

/// What to do with a message of the stateless era, or one that needs no era.
#[derive(Debug)]
pub(crate) enum Action {
    /// Refused before any handler ran: answer it, and report it.
    Refuse(Refusal),
    /// A stateless request for a request actor (boxed: it is large and
    /// moves from the transport to the actor).
    Run(Box<Admitted>),
    /// `subscriptions/listen`, admitted: a listener with this filter.
    Listen(Box<Admitted>, ListenAdmission),
    /// `notifications/cancelled` for a request or a listen stream.
    Cancel {
        /// The request to cancel.
        id: RequestId,
        /// Why.
        reason: Option<String>,
    },
    /// Any other notification outside a session: nothing to do.
    Notification(Notification),
    /// A response, with no session expecting one.
    Unexpected(Response),
}

/// What admission checks a request against.
struct Checks<'a> {
    versions: &'a [ProtocolVersion],
    /// Every version served, the legacy ones included.
    served: &'a [ProtocolVersion],
    catalog: &'a Catalog,
    headers: Option<&'a dyn Headers>,
}

/// The era of a connection, as the type of what its messages route to.
trait Era {
    /// What a message routes to.
    type Route: std::fmt::Debug;
    /// How the connection's messages are read: a session's the general
    /// way at once, others first in one pass.
    const EXPECT: Expect;
    /// An action.
    fn act(action: Action) -> Self::Route;
    /// Whether a request that does not claim the stateless era is the
    /// era's own (else stateless admission refuses it).
    fn owns(request: &Request) -> bool;
    /// A message of the era's own: a notification other than a
    /// cancellation, a response, or a request it [`owns`](Self::owns).
    fn own(message: Incoming) -> Self::Route;
}

/// A connection without a legacy session.
struct Stateless;

impl Era for Stateless {
    type Route = Route;
    const EXPECT: Expect = Expect::Stateless;

    fn act(action: Action) -> Route {
        Route::Act(action)
    }

    fn owns(request: &Request) -> bool {
        request.method == mcp_protocol::legacy::method::INITIALIZE
    }

    fn own(message: Incoming) -> Route {
        match message {
            Incoming::Request(r) => Route::Initialize(r),
            Incoming::Notification(n) => Route::Act(Action::Notification(n)),
            Incoming::Response(r) => Route::Act(Action::Unexpected(r)),
            _ => Route::Act(Action::Refuse(unsupported())),
        }
    }
}

/// A connection with a legacy session.
struct InSession;

impl Era for InSession {
    type Route = SessionRoute;
    const EXPECT: Expect = Expect::Session;

    fn act(action: Action) -> SessionRoute {
        SessionRoute::Act(action)
    }

    fn owns(_: &Request) -> bool {
        true
    }

    fn own(message: Incoming) -> SessionRoute {
        SessionRoute::Session(message)
    }
}

/// The method label of an operation whose method this server does not know.
pub(crate) const OTHER: &str = "_OTHER";

/// A method's name as a bounded label: one this server knows, or `_OTHER`.
pub(crate) fn method_label(method: &str) -> &'static str {
    let legacy = mcp_protocol::legacy::method::ALL.iter();
    ClientRequest::METHODS.iter().chain(legacy).find(|m| **m == method).copied().unwrap_or(OTHER)
}

fn unsupported() -> Refusal {
    Refusal::of(None, ErrorData::new(ErrorCode::INVALID_REQUEST, "Unsupported message"))
}

impl<'a> Intake<'a> {
    /// An intake over `service`, with the hub's limits and occupancy and
    /// the server's authorization (if on).
    pub(crate) fn new(
        service: &'a McpService,
        hub: &'a HubConfig,
        occupancy: &'a Occupancy,
        authorizer: Option<&'a Authorizer>,
    ) -> Self {
        Intake { service, hub, occupancy, authorizer }
    }

    /// What to do with one message on a connection without a legacy
    /// session.
    pub(crate) fn route(&self, driver: &dyn Driver, bytes: &[u8]) -> Route {
        self.route_as::<Stateless>(driver, mcp_protocol::decode(bytes, Stateless::EXPECT))
    }

    /// What to do with one message on a connection with a legacy session.
    pub(crate) fn route_in_session(&self, driver: &dyn Driver, bytes: &[u8]) -> SessionRoute {
        self.route_as::<InSession>(driver, mcp_protocol::decode(bytes, InSession::EXPECT))
    }

    fn checks<'d>(&'d self, driver: &'d dyn Driver) -> Checks<'d> {
        Checks {
            versions: self.service.stateless_versions(),
            served: self.service.versions(),
            catalog: self.service.catalog(),
            headers: driver.headers(),
        }
    }

    /// A stateless request read in one pass is admitted as it was read; one
    /// that admission refuses, and every other message, is taken the
    /// general way, where each refusal is made in the specified order.
    fn route_as<E: Era>(&self, driver: &dyn Driver, message: Message<'_>) -> E::Route {
        if let Err(refusal) = self.permit(driver, &message) {
            return E::act(Action::Refuse(refusal));
        }
        let decoded = match message {
            Message::Stateless(one, bytes) => {
                let OnePass { id, method, request, keys } = one;
                match check(&self.checks(driver), method, &keys, Parsed::Done(request)) {
                    Ok(checked) => return E::act(self.admitted(driver, id, checked)),
                    Err(_) => mcp_protocol::jsonrpc::decode(bytes),
                }
            }
            other => other.general(),
        };
        self.route_general::<E>(driver, decoded)
    }

    /// The item a request uses (a tool, a prompt, a resource — in either
    /// era) must be one the caller's credentials grant.
    fn permit(&self, driver: &dyn Driver, message: &Message<'_>) -> Result<(), Refusal> {
        let (Some(auth), Some(caller)) = (self.authorizer, driver.caller()) else { return Ok(()) };
        let catalog = self.service.catalog();
        if !catalog.has_scoped_items() {
            return Ok(());
        }
        let Some((kind, name)) = message.item() else { return Ok(()) };
        let scopes = catalog.item_scopes(kind, &name);
        if scopes.is_empty() {
            return Ok(());
        }
        auth.permit(caller, &scopes).map_err(|e| {
            let method = message.method().map_or(OTHER, method_label);
            Refusal::auth(message.request_id().cloned(), e).labelled(method, None)
        })
    }

    /// The action of an admitted request, given the driver's facts: a
    /// listener for `subscriptions/listen` (when admitted), a request actor
    /// for anything else.
    fn admitted(&self, driver: &dyn Driver, id: RequestId, checked: Checked) -> Action {
        let Checked { meta, request, tool } = checked;
        let listen = matches!(request, ClientRequest::Listen(_));
        let admitted = Box::new(Admitted { id, meta, request, facts: driver.facts(), tool });
        if !listen {
            return Action::Run(admitted);
        }
        match self.admit_listen(&admitted) {
            Ok(admission) => Action::Listen(admitted, admission),
            Err(refusal) => {
                let (method, version) = (admitted.request.method(), Some(admitted.meta.version));
                Action::Refuse(refusal.labelled(method, version))
            }
        }
    }

    /// [`route_as`](Self::route_as) of a message decoded the general way.
    fn route_general<E: Era>(&self, driver: &dyn Driver, decoded: Result<Incoming, DecodeError>) -> E::Route {
        let message = match decoded {
            Ok(m) => m,
            Err(e) => {
                let refusal = Refusal::new(e.id, &e.error, ProtocolVersion::V2026_07_28.profile());
                return E::act(Action::Refuse(refusal));
            }
        };
        let r = match message {
            Incoming::Notification(n) => match ClientNotification::from_parts(&n.method, n.params.as_ref()) {
                Ok(ClientNotification::Cancelled { request_id, reason }) => {
                    return E::act(Action::Cancel { id: request_id, reason })
                }
                _ => return E::own(Incoming::Notification(n)),
            },
            Incoming::Request(r) => r,
            other => return E::own(other),
        };
        // Outside a session, one pass over `params` reads the request and
        // its `_meta` when it claims the stateless era and reads cleanly;
        // else `_meta` is read once on its own, for the era and for
        // admission, and each error is found in its order.
        let fast = match (&r.params, E::EXPECT) {
            (Some(p), Expect::Stateless) => {
                ClientRequest::parse_with_meta(&r.method, p).filter(|(_, k)| k.version.is_some())
            }
            _ => None,
        };
        let (keys, parsed) = match fast {
            Some((parsed, keys)) => (Ok(keys), Some(parsed)),
            None => (mcp_protocol::meta::MetaKeys::of(r.params.as_ref()), None),
        };
        if !claims(&r, &keys) && E::owns(&r) {
            return E::own(Incoming::Request(r));
        }
        let version = keys.as_ref().ok().and_then(|k| k.version_str()).and_then(|v| ProtocolVersion::parse(&v));
        E::act(match admit(&self.checks(driver), &r, keys, parsed) {
            Ok(checked) => self.admitted(driver, r.id, checked),
            Err(refusal) => Action::Refuse(refusal.labelled(method_label(&r.method), version)),
        })
    }
}

#[cfg(test)]
mod tests;
