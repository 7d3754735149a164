//! The one dispatcher of incoming messages, for every transport. For each
//! message, [`route`] decides once what it is and returns a [`Route`]:
//! refuse it (with its error), run it in a request actor, open a listener,
//! cancel something, open a legacy session, or hand it to the legacy
//! session of the connection. The era is decided here: a message goes to
//! the connection's legacy session unless it claims the stateless era by
//! naming a protocol version in `_meta` (the one "is this legacy" rule).
//!
//! First, with an authenticated caller, the item a request uses (a tool, a
//! prompt, a resource, in either era) must be one its credentials grant
//! ([`Action::Forbidden`]). Admission of a stateless request, in order:
//! `_meta` (-32602 /
//! HeaderMismatch / UnsupportedProtocolVersion) → `Mcp-Method` (HTTP:
//! HeaderMismatch) → method and params (-32601 / -32602) → `Mcp-Name` and
//! `Mcp-Param-*` (HTTP: HeaderMismatch). Transports without headers (stdio)
//! skip the header checks.

use mcp_protocol::decode::OnePass;
use mcp_protocol::jsonrpc::{encode_error, DecodeError, Incoming, Notification, Request, Response};
use mcp_protocol::meta::{MetaKeys, VersionHeader, PROTOCOL_VERSION_KEY};
use mcp_protocol::request::{ClientNotification, ClientRequest};
use mcp_protocol::{
    ErrorCode, ErrorData, ErrorProfile, Expect, Message, ProtocolError, ProtocolVersion, RequestId, RequestMeta,
};

use crate::auth::{AuthError, Authorizer};
use crate::catalog::Catalog;

mod headers;

use crate::facts::head::{Header, Headers};
use crate::facts::identity::Identity;
use crate::facts::RequestFacts;
use headers::{check_method_header, check_name_headers, header};

/// A request that passed admission.
#[derive(Debug, Clone)]
pub struct Admitted {
    /// The id.
    pub id: RequestId,
    /// The validated `_meta`.
    pub meta: RequestMeta,
    /// The parsed request.
    pub request: ClientRequest,
    /// What the transport knows besides the message (headers, extensions).
    pub facts: RequestFacts,
}

/// A request refused before any handler ran.
#[derive(Debug, Clone, PartialEq)]
pub struct Refusal {
    /// The id to echo (`None` renders `null`).
    pub id: Option<RequestId>,
    /// The error.
    pub error: ErrorData,
}

impl Refusal {
    /// Renders a protocol error with `profile`'s codes.
    pub fn new(id: Option<RequestId>, error: &ProtocolError, profile: ErrorProfile) -> Self {
        Refusal { id, error: error.to_error_data(profile) }
    }

    /// The encoded error response.
    pub fn encode(&self) -> Vec<u8> {
        encode_error(self.id.as_ref(), &self.error)
    }
}

/// What the dispatcher knows of the connection a message came on.
pub struct Connection<'a> {
    /// The stateless versions served.
    pub versions: &'a [ProtocolVersion],
    /// The catalog (for the `Mcp-Param-*` headers of a tool).
    pub catalog: &'a Catalog,
    /// The transport's headers; `None` on stdio.
    pub headers: Option<&'a dyn Headers>,
    /// Whether the connection has a legacy session.
    pub era: ConnectionEra,
    /// The caller, when the transport authenticated one: the item a
    /// request uses must be one its credentials grant.
    pub caller: Option<Caller<'a>>,
}

/// An authenticated caller, and the authorizer that checks its scopes.
#[derive(Clone, Copy)]
pub struct Caller<'a> {
    /// Who is calling.
    pub identity: &'a Identity,
    /// The server's authorization.
    pub authorizer: &'a Authorizer,
}

/// Whether a connection has a legacy session: the era its messages are
/// served in unless they claim the stateless one.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ConnectionEra {
    /// No session: every request must claim the stateless era, but for an
    /// `initialize` that opens one.
    Stateless,
    /// A legacy session (HTTP: the request named one with `Mcp-Session-Id`
    /// and it exists; stdio: the client sent `initialize`).
    Session,
}

impl ConnectionEra {
    /// What the connection's messages are read as: a session's the general
    /// way at once, others first in one pass.
    pub fn expect(self) -> Expect {
        match self {
            ConnectionEra::Stateless => Expect::Stateless,
            ConnectionEra::Session => Expect::Session,
        }
    }
}

/// What to do with one incoming message.
#[derive(Debug)]
pub enum Route {
    /// Something of the stateless era (or of none).
    Stateless(Action),
    /// A legacy client's `initialize`, outside a session: open one.
    Initialize(Request),
    /// A message for the connection's legacy session.
    Session(Incoming),
}

/// What to do with a message of the stateless era, or one that needs no era.
#[derive(Debug)]
pub enum Action {
    /// Refused before any handler ran.
    Refuse(Refusal),
    /// The caller's credentials do not grant the scopes of the item the
    /// request uses (HTTP: 403 with a step-up challenge).
    Forbidden {
        /// The request's id.
        id: Option<RequestId>,
        /// What is missing.
        error: AuthError,
    },
    /// A stateless request for a request actor (boxed: it is large and
    /// moves from the transport to the actor).
    Run(Box<Admitted>),
    /// `subscriptions/listen`: a listener.
    Listen(Box<Admitted>),
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

/// Whether a request claims the stateless era (its `_meta` names a
/// protocol version, valid or not), from its `_meta` keys; when they could
/// not be read (a key given twice, say), the message is read as a tree.
fn claims(r: &Request, keys: &Result<MetaKeys<'_>, ProtocolError>) -> bool {
    match keys {
        Ok(k) => k.version.is_some(),
        Err(_) => tree_meta(r).is_some_and(|m| m.contains_key(PROTOCOL_VERSION_KEY)),
    }
}

/// `params._meta` as a map (the slow path of malformed messages).
fn tree_meta(r: &Request) -> Option<serde_json::Map<String, serde_json::Value>> {
    match r.params.as_ref()?.to_map().remove("_meta")? {
        serde_json::Value::Object(m) => Some(m),
        _ => None,
    }
}

/// Decides what an incoming message is. A stateless request read in one
/// pass outside a session is admitted as it was read; one that admission
/// refuses, and every other message, is taken the general way, where each
/// refusal is made in the specified order.
pub fn route(conn: &Connection<'_>, message: Message<'_>) -> Route {
    if let Err(error) = permit(conn, &message) {
        return Route::Stateless(Action::Forbidden { id: message.request_id().cloned(), error });
    }
    let decoded = match message {
        Message::Stateless(one, bytes) if conn.era == ConnectionEra::Stateless => {
            let OnePass { id, method, request, keys } = one;
            match check(conn, method, &keys, Parsed::Done(request)) {
                Ok((meta, request)) => return admitted(id, meta, request),
                Err(_) => mcp_protocol::jsonrpc::decode(bytes),
            }
        }
        other => other.general(),
    };
    route_general(conn, decoded)
}

/// The item a request uses (a tool, a prompt, a resource — in either era)
/// must be one the caller's credentials grant.
fn permit(conn: &Connection<'_>, message: &Message<'_>) -> Result<(), AuthError> {
    let Some(caller) = conn.caller else { return Ok(()) };
    if !conn.catalog.has_scoped_items() {
        return Ok(());
    }
    let Some((kind, name)) = message.item() else { return Ok(()) };
    let scopes = conn.catalog.item_scopes(kind, &name);
    if scopes.is_empty() {
        return Ok(());
    }
    caller.authorizer.permit(caller.identity, &scopes)
}

/// The route of an admitted request: a listener for `subscriptions/listen`,
/// a request actor for anything else.
fn admitted(id: RequestId, meta: RequestMeta, request: ClientRequest) -> Route {
    let listen = matches!(request, ClientRequest::Listen(_));
    let admitted = Box::new(Admitted { id, meta, request, facts: RequestFacts::default() });
    if listen {
        Route::Stateless(Action::Listen(admitted))
    } else {
        Route::Stateless(Action::Run(admitted))
    }
}

/// [`route`] of a message decoded the general way.
fn route_general(conn: &Connection<'_>, decoded: Result<Incoming, DecodeError>) -> Route {
    let in_session = conn.era == ConnectionEra::Session;
    let message = match decoded {
        Ok(m) => m,
        Err(e) => {
            return Route::Stateless(Action::Refuse(Refusal::new(
                e.id,
                &e.error,
                ProtocolVersion::V2026_07_28.profile(),
            )))
        }
    };
    match message {
        Incoming::Notification(n) => match ClientNotification::from_parts(&n.method, n.params.as_ref()) {
            Ok(ClientNotification::Cancelled { request_id, reason }) => {
                Route::Stateless(Action::Cancel { id: request_id, reason })
            }
            _ if in_session => Route::Session(Incoming::Notification(n)),
            _ => Route::Stateless(Action::Notification(n)),
        },
        Incoming::Response(r) if in_session => Route::Session(Incoming::Response(r)),
        Incoming::Response(r) => Route::Stateless(Action::Unexpected(r)),
        Incoming::Request(r) => {
            // Outside a session, one pass over `params` reads the request
            // and its `_meta` when it claims the stateless era and reads
            // cleanly; else `_meta` is read once on its own, for the era
            // and for admission, and each error is found in its order.
            let fast = match (&r.params, in_session) {
                (Some(p), false) => ClientRequest::parse_with_meta(&r.method, p).filter(|(_, k)| k.version.is_some()),
                _ => None,
            };
            let (keys, parsed) = match fast {
                Some((parsed, keys)) => (Ok(keys), Some(parsed)),
                None => (MetaKeys::of(r.params.as_ref()), None),
            };
            if !claims(&r, &keys) {
                if in_session {
                    return Route::Session(Incoming::Request(r));
                }
                if r.method == "initialize" {
                    return Route::Initialize(r);
                }
            }
            match admit(conn, &r, keys, parsed) {
                Ok((meta, request)) => admitted(r.id, meta, request),
                Err(refusal) => Route::Stateless(Action::Refuse(refusal)),
            }
        }
        _ => Route::Stateless(Action::Refuse(Refusal {
            id: None,
            error: ErrorData::new(ErrorCode::INVALID_REQUEST, "Unsupported message"),
        })),
    }
}

/// The error profile for a request that has not been validated yet: the
/// profile of the version it names, or the newest.
fn profile_of(req: &Request) -> ErrorProfile {
    let meta = tree_meta(req);
    ProtocolVersion::profile_for(meta.as_ref().and_then(|m| m.get(PROTOCOL_VERSION_KEY)?.as_str()))
}

/// Admits a stateless request whose `_meta` keys were read (and its params,
/// when they were read in the same pass): its validated `_meta` and the
/// parsed request.
fn admit(
    conn: &Connection<'_>,
    request: &Request,
    keys: Result<MetaKeys<'_>, ProtocolError>,
    parsed: Option<ClientRequest>,
) -> Result<(RequestMeta, ClientRequest), Refusal> {
    let checked = keys.map_err(Refused::Early).and_then(|keys| {
        let parsed = parsed.map_or_else(|| Parsed::Later(request.params.as_ref()), Parsed::Done);
        check(conn, &request.method, &keys, parsed)
    });
    checked.map_err(|refused| match refused {
        Refused::Early(e) => Refusal::new(Some(request.id.clone()), &e, profile_of(request)),
        Refused::Late(e, profile) => Refusal::new(Some(request.id.clone()), &e, profile),
    })
}

/// A request's params: parsed already, or still to parse.
enum Parsed<'a> {
    Done(ClientRequest),
    Later(Option<&'a mcp_protocol::RawObject>),
}

/// Why [`check`] refused, and with which error profile.
enum Refused {
    /// Before `_meta` was validated: the profile of the version it names.
    Early(ProtocolError),
    /// After: the validated version's profile.
    Late(ProtocolError, ErrorProfile),
}

/// The checks of admission, in the specified order: the version header
/// against `_meta`, `_meta` itself, `Mcp-Method`, the params, `Mcp-Name`
/// and `Mcp-Param-*`.
fn check(
    conn: &Connection<'_>,
    method: &str,
    keys: &MetaKeys<'_>,
    parsed: Parsed<'_>,
) -> Result<(RequestMeta, ClientRequest), Refused> {
    let version = keys.version_str();
    let header = match conn.headers.map(|h| header(h, Header::ProtocolVersion, version.as_deref().unwrap_or(""))) {
        None => VersionHeader::NotApplicable,
        Some(Err(e)) => return Err(Refused::Early(e)),
        Some(Ok(None)) => VersionHeader::Missing,
        Some(Ok(Some(v))) => VersionHeader::Present(std::str::from_utf8(v).unwrap_or("")),
    };
    let meta = RequestMeta::validate_keys(keys, header, conn.versions).map_err(Refused::Early)?;
    let profile = meta.version.profile();
    let refuse = |e: ProtocolError| Refused::Late(e, profile);
    if let Some(h) = conn.headers {
        check_method_header(h, method).map_err(refuse)?;
    }
    let parsed = match parsed {
        Parsed::Done(parsed) => parsed,
        Parsed::Later(params) => ClientRequest::from_parts(method, params).map_err(refuse)?,
    };
    if let Some(h) = conn.headers {
        check_name_headers(h, conn.catalog, &parsed).map_err(refuse)?;
    }
    Ok((meta, parsed))
}

#[cfg(test)]
mod tests;
