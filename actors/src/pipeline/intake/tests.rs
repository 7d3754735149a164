//! The intake's own tests: the era, the one-pass read against the general
//! way, notifications, responses and garbage.

use super::*;
use mcp_protocol::jsonrpc::decode;
use serde_json::json;

fn conn<'a>(catalog: &'a Catalog, in_session: bool) -> Connection<'a> {
    let era = if in_session { ConnectionEra::Session } else { ConnectionEra::Stateless };
    Connection { versions: ProtocolVersion::ALL, catalog, headers: None, era, caller: None }
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
    assert!(matches!(route_general(&conn(&c, false), msg(init.clone())), Route::Initialize(_)));
    assert!(matches!(route_general(&conn(&c, true), msg(init)), Route::Session(Incoming::Request(_))));
    // A request that names a stateless version is stateless, in a session too.
    assert!(matches!(
        route_general(&conn(&c, true), msg(stateless(2, "tools/list"))),
        Route::Stateless(Action::Run(_))
    ));
    let mut listen = stateless(3, "subscriptions/listen");
    listen["params"]["notifications"] = json!({"toolsListChanged": true});
    match route_general(&conn(&c, false), msg(listen)) {
        Route::Stateless(Action::Listen(a)) => assert_eq!(a.id, RequestId::number(3)),
        other => panic!("{other:?}"),
    }
    // An `initialize` that claims the stateless era is refused as a stateless request.
    match route_general(&conn(&c, false), msg(stateless(4, "initialize"))) {
        Route::Stateless(Action::Refuse(r)) => assert_eq!(r.error.code, ErrorCode::METHOD_NOT_FOUND),
        other => panic!("{other:?}"),
    }
}

/// The admitted request of a route, or what the route was.
fn admitted(route: Route) -> Result<(bool, Admitted), String> {
    match route {
        Route::Stateless(Action::Run(a)) => Ok((false, *a)),
        Route::Stateless(Action::Listen(a)) => Ok((true, *a)),
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
        let read = mcp_protocol::decode(bytes.as_bytes(), mcp_protocol::Expect::Stateless);
        assert!(matches!(read, Message::Stateless(..)), "{message}");
        let one = admitted(route(&conn(&c, false), read)).unwrap();
        let general = admitted(route_general(&conn(&c, false), decode(bytes.as_bytes()))).unwrap();
        assert_eq!(one.0, general.0, "{message}");
        assert_eq!(one.1.id, general.1.id);
        assert_eq!(one.1.meta, general.1.meta);
        assert_eq!(one.1.request, general.1.request);
    }
    // Refused after a one-pass read, in a session, or not read in one
    // pass: the route is the general way's.
    let mut unsupported = stateless(5, "tools/list");
    unsupported["params"]["_meta"]["io.modelcontextprotocol/protocolVersion"] = json!("1999-01-01");
    let in_session = stateless(6, "tools/list").to_string();
    let legacy = json!({"jsonrpc": "2.0", "id": 7, "method": "initialize", "params": {}}).to_string();
    let unknown = stateless(8, "no/such").to_string();
    for (message, session) in [(unsupported.to_string(), false), (in_session, true), (legacy, false), (unknown, false)]
    {
        let on = conn(&c, session);
        let routed = route(&on, mcp_protocol::decode(message.as_bytes(), on.era.expect()));
        let general = route_general(&on, decode(message.as_bytes()));
        assert_eq!(format!("{routed:?}"), format!("{general:?}"), "{message}");
    }
}

#[test]
fn notifications_responses_and_garbage() {
    let c = Catalog::new();
    let cancel = json!({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 7}});
    assert!(
        matches!(route_general(&conn(&c, true), msg(cancel)), Route::Stateless(Action::Cancel { id, .. }) if id == RequestId::number(7))
    );
    let other = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
    assert!(matches!(route_general(&conn(&c, false), msg(other.clone())), Route::Stateless(Action::Notification(_))));
    assert!(matches!(route_general(&conn(&c, true), msg(other)), Route::Session(Incoming::Notification(_))));
    let response = json!({"jsonrpc": "2.0", "id": 1, "result": {}});
    assert!(matches!(route_general(&conn(&c, false), msg(response.clone())), Route::Stateless(Action::Unexpected(_))));
    assert!(matches!(route_general(&conn(&c, true), msg(response)), Route::Session(Incoming::Response(_))));
    match route_general(&conn(&c, false), decode(b"{not json")) {
        Route::Stateless(Action::Refuse(r)) => assert_eq!(r.error.code, ErrorCode::PARSE_ERROR),
        other => panic!("{other:?}"),
    }
}
