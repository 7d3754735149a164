//! The intake's own tests: the era, the one-pass read against the general
//! way, listen admission, notifications, responses and garbage.

use super::*;
use crate::config::Config;
use serde_json::json;

/// A server's side of the intake, for a test: an empty catalog, the
/// default configuration, a hub that holds `room` more listeners.
struct Fixture {
    service: McpService,
    config: Config,
    occupancy: Arc<Occupancy>,
}

use std::sync::Arc;

impl Fixture {
    fn new(room: usize) -> Self {
        let config = Config::default();
        let service = McpService::new(Arc::new(Catalog::new()), &config);
        Fixture { service, config, occupancy: Occupancy::new(room) }
    }

    fn intake(&self) -> Intake<'_> {
        Intake::new(&self.service, &self.config.hub, &self.occupancy, None)
    }
}

/// A transport with no headers and no caller (stdio's kind).
struct Bare;

impl Driver for Bare {}

fn outside(f: &Fixture, v: &serde_json::Value) -> Route {
    f.intake().route(&Bare, v.to_string().as_bytes())
}

fn inside(f: &Fixture, v: &serde_json::Value) -> SessionRoute {
    f.intake().route_in_session(&Bare, v.to_string().as_bytes())
}

fn stateless(id: i64, method: &str) -> serde_json::Value {
    json!({"jsonrpc": "2.0", "id": id, "method": method, "params": {"_meta": {
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientInfo": {"name": "t", "version": "1"},
        "io.modelcontextprotocol/clientCapabilities": {}
    }}})
}

fn listen(id: i64) -> serde_json::Value {
    let mut listen = stateless(id, "subscriptions/listen");
    listen["params"]["notifications"] = json!({"toolsListChanged": true});
    listen
}

#[test]
fn the_era_is_decided_once() {
    let f = Fixture::new(8);
    let init = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {}});
    assert!(matches!(outside(&f, &init), Route::Initialize(_)));
    assert!(matches!(inside(&f, &init), SessionRoute::Session(Incoming::Request(_))));
    // A request that names a stateless version is stateless, in a session too.
    assert!(matches!(inside(&f, &stateless(2, "tools/list")), SessionRoute::Act(Action::Run(_))));
    match outside(&f, &listen(3)) {
        Route::Act(Action::Listen(a, admission)) => {
            assert_eq!(a.id, RequestId::number(3));
            assert!(admission.filter.tools_list_changed);
        }
        other => panic!("{other:?}"),
    }
    // An `initialize` that claims the stateless era is refused as a stateless request.
    match outside(&f, &stateless(4, "initialize")) {
        Route::Act(Action::Refuse(r)) => {
            assert_eq!(r.error.code, ErrorCode::METHOD_NOT_FOUND);
            assert_eq!(
                (r.cause, r.method, r.version),
                (Cause::Protocol, "initialize", Some(ProtocolVersion::V2026_07_28))
            );
        }
        other => panic!("{other:?}"),
    }
}

/// The admitted request of a route, or what the route was.
fn admitted(route: Route) -> Result<(bool, Admitted), String> {
    match route {
        Route::Act(Action::Run(a)) => Ok((false, *a)),
        Route::Act(Action::Listen(a, _)) => Ok((true, *a)),
        other => Err(format!("{other:?}")),
    }
}

#[test]
fn the_one_pass_admits_what_the_general_way_admits_and_nothing_else() {
    let f = Fixture::new(8);
    let intake = f.intake();
    let mut call = stateless(4, "tools/call");
    call["params"]["name"] = json!("echo");
    call["params"]["arguments"] = json!({"text": "hi"});
    call["params"]["_meta"]["io.modelcontextprotocol/progressToken"] = json!("p");
    let general = |bytes: &[u8]| intake.route_general::<Stateless>(&Bare, mcp_protocol::jsonrpc::decode(bytes));
    for message in [stateless(2, "tools/list"), listen(3), call] {
        let bytes = message.to_string();
        let read = mcp_protocol::decode(bytes.as_bytes(), Expect::Stateless);
        assert!(matches!(read, Message::Stateless(..)), "{message}");
        let one = admitted(intake.route(&Bare, bytes.as_bytes())).unwrap();
        let general = admitted(general(bytes.as_bytes())).unwrap();
        assert_eq!(one.0, general.0, "{message}");
        assert_eq!(one.1.id, general.1.id);
        assert_eq!(one.1.meta, general.1.meta);
        assert_eq!(one.1.request, general.1.request);
    }
    // Refused after a one-pass read, or not read in one pass: the route is
    // the general way's.
    let mut unsupported = stateless(5, "tools/list");
    unsupported["params"]["_meta"]["io.modelcontextprotocol/protocolVersion"] = json!("1999-01-01");
    let legacy = json!({"jsonrpc": "2.0", "id": 7, "method": "initialize", "params": {}});
    for message in [unsupported, legacy, stateless(8, "no/such")] {
        let bytes = message.to_string();
        let routed = intake.route(&Bare, bytes.as_bytes());
        assert_eq!(format!("{routed:?}"), format!("{:?}", general(bytes.as_bytes())), "{message}");
    }
    // In a session, a message is read the general way at once.
    let in_session = stateless(6, "tools/list").to_string();
    let routed = intake.route_in_session(&Bare, in_session.as_bytes());
    let general = intake.route_general::<InSession>(&Bare, mcp_protocol::jsonrpc::decode(in_session.as_bytes()));
    assert_eq!(format!("{routed:?}"), format!("{general:?}"));
}

#[test]
fn a_listen_is_admitted_only_with_room_in_the_hub_and_within_the_limits() {
    let full = Fixture::new(0);
    match outside(&full, &listen(1)) {
        Route::Act(Action::Refuse(r)) => {
            assert_eq!((r.cause, r.method), (Cause::Full, "subscriptions/listen"));
            assert_eq!(r.id, Some(RequestId::number(1)));
            assert_eq!(r.error.code, ErrorCode::INTERNAL_ERROR);
        }
        other => panic!("{other:?}"),
    }
    let f = Fixture::new(8);
    let mut many = listen(2);
    let uris: Vec<String> = (0..=f.config.hub.max_resource_subscriptions).map(|i| format!("file:///{i}")).collect();
    many["params"]["notifications"] = json!({"resourceSubscriptions": uris});
    match outside(&f, &many) {
        Route::Act(Action::Refuse(r)) => {
            assert_eq!((r.cause.clone(), r.error.code), (Cause::Protocol, ErrorCode::INVALID_PARAMS));
            let v: serde_json::Value = serde_json::from_slice(&r.encode()).unwrap();
            assert_eq!(v["id"], 2);
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn notifications_responses_and_garbage() {
    let f = Fixture::new(8);
    let cancel = json!({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 7}});
    assert!(matches!(inside(&f, &cancel), SessionRoute::Act(Action::Cancel { id, .. }) if id == RequestId::number(7)));
    assert!(matches!(outside(&f, &cancel), Route::Act(Action::Cancel { .. })));
    let other = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
    assert!(matches!(outside(&f, &other), Route::Act(Action::Notification(_))));
    assert!(matches!(inside(&f, &other), SessionRoute::Session(Incoming::Notification(_))));
    let response = json!({"jsonrpc": "2.0", "id": 1, "result": {}});
    assert!(matches!(outside(&f, &response), Route::Act(Action::Unexpected(_))));
    assert!(matches!(inside(&f, &response), SessionRoute::Session(Incoming::Response(_))));
    match f.intake().route(&Bare, b"{not json") {
        Route::Act(Action::Refuse(r)) => assert_eq!((r.error.code, r.method), (ErrorCode::PARSE_ERROR, OTHER)),
        other => panic!("{other:?}"),
    }
}
