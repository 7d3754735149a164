//! The one dispatcher of incoming messages, for every transport. For each
//! message, [`route`] decides once what it is and returns a [`Route`]:
//! refuse it (with its error), run it in a request actor, open a listener,
//! cancel something, open a legacy session, or hand it to the legacy
//! session of the connection. The era is decided here: a message goes to
//! the connection's legacy session unless it claims the stateless era by
//! naming a protocol version in `_meta` (the one "is this legacy" rule).
//!
//! Admission of a stateless request, in order: `_meta` (-32602 /
//! HeaderMismatch / UnsupportedProtocolVersion) → `Mcp-Method` (HTTP:
//! HeaderMismatch) → method and params (-32601 / -32602) → `Mcp-Name` and
//! `Mcp-Param-*` (HTTP: HeaderMismatch). Transports without headers (stdio)
//! skip the header checks.

use mcp_protocol::header::{decode_value, matches_body};
use mcp_protocol::jsonrpc::{encode_error, DecodeError, Incoming, Notification, Request, Response};
use mcp_protocol::meta::{MetaKeys, VersionHeader, PROTOCOL_VERSION_KEY};
use mcp_protocol::request::{ClientNotification, ClientRequest};
use mcp_protocol::{ErrorCode, ErrorData, ErrorProfile, ProtocolError, ProtocolVersion, RequestId, RequestMeta};

use crate::catalog::Catalog;
use crate::facts::RequestFacts;

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

/// An `Mcp-*` header a transport may carry.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum McpHeader<'a> {
    /// `Mcp-Method`.
    Method,
    /// `Mcp-Name`.
    Name,
    /// `MCP-Protocol-Version`.
    ProtocolVersion,
    /// `Mcp-Param-{name}` of a tool argument (the whole header name).
    Param(&'a str),
}

/// A header that came more than once: a proxy may read another value than
/// the server, so it is refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Repeated;

/// The headers of a transport that has them (HTTP).
pub trait Headers {
    /// The raw value of a header, if present once; `Err` if repeated.
    fn get(&self, name: McpHeader<'_>) -> Result<Option<&[u8]>, Repeated>;
}

impl McpHeader<'_> {
    /// The header's name as errors show it.
    pub fn name(&self) -> &str {
        match self {
            McpHeader::Method => "Mcp-Method",
            McpHeader::Name => "Mcp-Name",
            McpHeader::ProtocolVersion => "MCP-Protocol-Version",
            McpHeader::Param(name) => name,
        }
    }
}

/// A header's value; a repeated one is a mismatch with whatever the body says.
fn header<'h>(h: &'h dyn Headers, name: McpHeader<'_>, body: &str) -> Result<Option<&'h [u8]>, ProtocolError> {
    h.get(name).map_err(|Repeated| mismatch(name.name(), Some("<repeated>".into()), body.to_owned()))
}

/// What the dispatcher knows of the connection a message came on.
pub struct Connection<'a> {
    /// The stateless versions served.
    pub versions: &'a [ProtocolVersion],
    /// The catalog (for the `Mcp-Param-*` headers of a tool).
    pub catalog: &'a Catalog,
    /// The transport's headers; `None` on stdio.
    pub headers: Option<&'a dyn Headers>,
    /// Whether the connection has a legacy session (HTTP: the request named
    /// one with `Mcp-Session-Id` and it exists; stdio: the client sent
    /// `initialize`).
    pub in_session: bool,
}

/// What to do with one incoming message.
#[derive(Debug)]
pub enum Route {
    /// Refused before any handler ran.
    Refuse(Refusal),
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
    /// A legacy client's `initialize`: open a session.
    Initialize(Request),
    /// A message for the connection's legacy session.
    Session(Incoming),
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

/// Decides what an incoming message is.
pub fn route(conn: &Connection<'_>, decoded: Result<Incoming, DecodeError>) -> Route {
    let message = match decoded {
        Ok(m) => m,
        Err(e) => return Route::Refuse(Refusal::new(e.id, &e.error, ProtocolVersion::V2026_07_28.profile())),
    };
    match message {
        Incoming::Notification(n) => match ClientNotification::from_parts(&n.method, n.params.as_ref()) {
            Ok(ClientNotification::Cancelled { request_id, reason }) => Route::Cancel { id: request_id, reason },
            _ if conn.in_session => Route::Session(Incoming::Notification(n)),
            _ => Route::Notification(n),
        },
        Incoming::Response(r) if conn.in_session => Route::Session(Incoming::Response(r)),
        Incoming::Response(r) => Route::Unexpected(r),
        Incoming::Request(r) => {
            // Outside a session, one pass over `params` reads the request
            // and its `_meta` when it claims the stateless era and reads
            // cleanly; else `_meta` is read once on its own, for the era
            // and for admission, and each error is found in its order.
            let fast = match (&r.params, conn.in_session) {
                (Some(p), false) => ClientRequest::parse_with_meta(&r.method, p).filter(|(_, k)| k.version.is_some()),
                _ => None,
            };
            let (keys, parsed) = match fast {
                Some((parsed, keys)) => (Ok(keys), Some(parsed)),
                None => (MetaKeys::of(r.params.as_ref()), None),
            };
            if !claims(&r, &keys) {
                if conn.in_session {
                    return Route::Session(Incoming::Request(r));
                }
                if r.method == "initialize" {
                    return Route::Initialize(r);
                }
            }
            match admit(conn, &r, keys, parsed) {
                Ok((meta, request)) => {
                    let listen = matches!(request, ClientRequest::Listen(_));
                    let admitted = Box::new(Admitted { id: r.id, meta, request, facts: RequestFacts::default() });
                    if listen {
                        Route::Listen(admitted)
                    } else {
                        Route::Run(admitted)
                    }
                }
                Err(refusal) => Route::Refuse(refusal),
            }
        }
        _ => Route::Refuse(Refusal {
            id: None,
            error: ErrorData::new(ErrorCode::INVALID_REQUEST, "Unsupported message"),
        }),
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

/// Routes a request read in one pass over its message
/// ([`mcp_protocol::one_pass`]), outside a session: `Run` or `Listen` when
/// it is admitted. `None` for anything else — a message the one pass does
/// not read, or one it reads that is refused — which [`route`] then takes
/// the general way, where every refusal is made, in the specified order.
pub fn route_one_pass(conn: &Connection<'_>, message: &[u8]) -> Option<Route> {
    if conn.in_session {
        return None;
    }
    let one = mcp_protocol::one_pass::decode_request(message)?;
    let (meta, request) = check(conn, one.method, &one.keys, Parsed::Done(one.request)).ok()?;
    let listen = matches!(request, ClientRequest::Listen(_));
    let admitted = Box::new(Admitted { id: one.id, meta, request, facts: RequestFacts::default() });
    Some(if listen { Route::Listen(admitted) } else { Route::Run(admitted) })
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
    let header = match conn.headers.map(|h| header(h, McpHeader::ProtocolVersion, version.as_deref().unwrap_or(""))) {
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

fn mismatch(header: &str, header_value: Option<String>, body_value: String) -> ProtocolError {
    ProtocolError::HeaderMismatch { header: header.into(), header_value, body_value }
}

/// `Mcp-Method` must be present and equal the body's method (case-sensitive).
fn check_method_header(h: &dyn Headers, method: &str) -> Result<(), ProtocolError> {
    match header(h, McpHeader::Method, method)?.map(<[u8]>::trim_ascii) {
        Some(v) if v == method.as_bytes() => Ok(()),
        other => Err(mismatch("Mcp-Method", other.map(|v| String::from_utf8_lossy(v).into_owned()), method.to_owned())),
    }
}

/// `Mcp-Name` must mirror `params.name` / `params.uri` where the method has one,
/// and each `Mcp-Param-*` of the called tool must mirror its argument.
fn check_name_headers(h: &dyn Headers, catalog: &Catalog, request: &ClientRequest) -> Result<(), ProtocolError> {
    if let Some(body) = request.name_for_header() {
        match header(h, McpHeader::Name, body)?.map(decode_value) {
            Some(Ok(v)) if v == body => {}
            Some(Ok(v)) => return Err(mismatch("Mcp-Name", Some(v), body.to_owned())),
            Some(Err(_)) => return Err(mismatch("Mcp-Name", Some("<undecodable>".into()), body.to_owned())),
            None => return Err(mismatch("Mcp-Name", None, body.to_owned())),
        }
    }
    let ClientRequest::CallTool(call) = request else { return Ok(()) };
    let Some(tool) = catalog.tool(&call.name) else { return Ok(()) };
    let params = tool.header_params();
    if params.is_empty() {
        return Ok(());
    }
    let args = call.arguments.as_ref().map(mcp_protocol::RawObject::to_map).unwrap_or_default();
    for param in params {
        let name = param.header_name();
        let body = param.value_in(&args);
        let absent = || "<absent>".to_string();
        let shown = body.map_or_else(absent, |b| b.to_string());
        match (header(h, McpHeader::Param(&name), &shown)?.map(decode_value), body) {
            (None, None) => {}
            (Some(Ok(h)), Some(b)) if matches_body(&h, b) => {}
            (Some(Ok(h)), _) => return Err(mismatch(&name, Some(h), shown)),
            (Some(Err(_)), _) => return Err(mismatch(&name, Some("<invalid>".into()), shown)),
            (None, Some(_)) => return Err(mismatch(&name, None, shown)),
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use mcp_protocol::jsonrpc::decode;
    use serde_json::json;

    fn conn<'a>(catalog: &'a Catalog, in_session: bool) -> Connection<'a> {
        Connection { versions: ProtocolVersion::ALL, catalog, headers: None, in_session }
    }

    fn msg(v: serde_json::Value) -> Result<Incoming, DecodeError> {
        decode(v.to_string().as_bytes())
    }

    fn stateless(id: i64, method: &str) -> serde_json::Value {
        json!({"jsonrpc": "2.0", "id": id, "method": method, "params": {"_meta": {
            "io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "io.modelcontextprotocol/clientInfo": {"name": "t", "version": "1"},
            "io.modelcontextprotocol/clientCapabilities": {}
        }}})
    }

    #[test]
    fn the_era_is_decided_once() {
        let c = Catalog::new();
        let init = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {}});
        assert!(matches!(route(&conn(&c, false), msg(init.clone())), Route::Initialize(_)));
        assert!(matches!(route(&conn(&c, true), msg(init)), Route::Session(Incoming::Request(_))));
        // A request that names a stateless version is stateless, in a session too.
        assert!(matches!(route(&conn(&c, true), msg(stateless(2, "tools/list"))), Route::Run(_)));
        let mut listen = stateless(3, "subscriptions/listen");
        listen["params"]["notifications"] = json!({"toolsListChanged": true});
        match route(&conn(&c, false), msg(listen)) {
            Route::Listen(a) => assert_eq!(a.id, RequestId::number(3)),
            other => panic!("{other:?}"),
        }
        // An `initialize` that claims the stateless era is refused as a stateless request.
        match route(&conn(&c, false), msg(stateless(4, "initialize"))) {
            Route::Refuse(r) => assert_eq!(r.error.code, ErrorCode::METHOD_NOT_FOUND),
            other => panic!("{other:?}"),
        }
    }

    /// The admitted request of a route, or what the route was.
    fn admitted(route: Route) -> Result<(bool, Admitted), String> {
        match route {
            Route::Run(a) => Ok((false, *a)),
            Route::Listen(a) => Ok((true, *a)),
            other => Err(format!("{other:?}")),
        }
    }

    #[test]
    fn the_one_pass_admits_what_the_general_way_admits_and_nothing_else() {
        let c = Catalog::new();
        let mut listen = stateless(3, "subscriptions/listen");
        listen["params"]["notifications"] = json!({"toolsListChanged": true});
        let mut call = stateless(4, "tools/call");
        call["params"]["name"] = json!("echo");
        call["params"]["arguments"] = json!({"text": "hi"});
        call["params"]["_meta"]["io.modelcontextprotocol/progressToken"] = json!("p");
        for message in [stateless(2, "tools/list"), listen, call] {
            let bytes = message.to_string();
            let one = admitted(route_one_pass(&conn(&c, false), bytes.as_bytes()).expect("one pass")).unwrap();
            let general = admitted(route(&conn(&c, false), decode(bytes.as_bytes()))).unwrap();
            assert_eq!(one.0, general.0, "{message}");
            assert_eq!(one.1.id, general.1.id);
            assert_eq!(one.1.meta, general.1.meta);
            assert_eq!(one.1.request, general.1.request);
        }
        // Refused, in a session, or not read in one pass: left to the general way.
        let mut unsupported = stateless(5, "tools/list");
        unsupported["params"]["_meta"]["io.modelcontextprotocol/protocolVersion"] = json!("1999-01-01");
        assert!(matches!(route(&conn(&c, false), msg(unsupported.clone())), Route::Refuse(_)));
        let in_session = stateless(6, "tools/list").to_string();
        let legacy = json!({"jsonrpc": "2.0", "id": 7, "method": "initialize", "params": {}}).to_string();
        let unknown = stateless(8, "no/such").to_string();
        for (message, session) in
            [(unsupported.to_string(), false), (in_session, true), (legacy, false), (unknown, false)]
        {
            assert!(route_one_pass(&conn(&c, session), message.as_bytes()).is_none(), "{message}");
        }
    }

    #[test]
    fn notifications_responses_and_garbage() {
        let c = Catalog::new();
        let cancel = json!({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 7}});
        assert!(matches!(route(&conn(&c, true), msg(cancel)), Route::Cancel { id, .. } if id == RequestId::number(7)));
        let other = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
        assert!(matches!(route(&conn(&c, false), msg(other.clone())), Route::Notification(_)));
        assert!(matches!(route(&conn(&c, true), msg(other)), Route::Session(Incoming::Notification(_))));
        let response = json!({"jsonrpc": "2.0", "id": 1, "result": {}});
        assert!(matches!(route(&conn(&c, false), msg(response.clone())), Route::Unexpected(_)));
        assert!(matches!(route(&conn(&c, true), msg(response)), Route::Session(Incoming::Response(_))));
        match route(&conn(&c, false), decode(b"{not json")) {
            Route::Refuse(r) => assert_eq!(r.error.code, ErrorCode::PARSE_ERROR),
            other => panic!("{other:?}"),
        }
    }
}
