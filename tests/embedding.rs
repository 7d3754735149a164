//! An existing actix-web app with its own routes mounts the MCP endpoint
//! through `transport::http::configure`, over real loopback HTTP: what
//! `configure()` mounts and how to mount each part alone, the listener of
//! `metrics.bind` when embedded, and the binary's shutdown (drain, then
//! completion results) through `run_until`, with the gateway's upstreams
//! ending without a fault.

use crate::common;

use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use actix_mcp::catalog::{Catalog, Tool};
use actix_mcp::config::{Config, UpstreamConfig};
use actix_mcp::server::Signal;
use actix_mcp::transport::http::{configure, configure_endpoint, configure_operations, run_until};
use actix_mcp::{telemetry::logging, McpServer};
use actix_web::{web, App, HttpServer};
use common::logs::Logs;
use common::*;
use mcp_protocol::model::tools::CallToolResult;
use serde_json::{json, Value};
use tokio::sync::oneshot;

#[derive(serde::Deserialize, schemars::JsonSchema)]
struct AddArgs {
    a: i64,
    b: i64,
}

#[actix_rt::test]
async fn mounts_next_to_existing_routes() {
    let catalog = Catalog::new();
    catalog
        .add_tool(Tool::new("add", "Adds", |x: AddArgs, _| async move {
            Ok(CallToolResult::structured(json!({"sum": x.a + x.b})))
        }))
        .unwrap();
    let mut config = test_config();
    config.http.path = "/api/mcp".into();
    let mcp = McpServer::new(Arc::new(catalog), config, logging::discard()).unwrap();
    let server = HttpServer::new(move || {
        App::new()
            .route("/health", web::get().to(|| async { "ok" }))
            .configure(actix_mcp::transport::http::configure(mcp.clone()))
    })
    .workers(1)
    .bind(("127.0.0.1", 0))
    .unwrap();
    let addr = server.addrs()[0];
    let server = server.run();
    let handle = server.handle();
    actix_rt::spawn(server);

    let health = client().get(format!("http://{addr}/health")).send().await.unwrap().text().await.unwrap();
    assert_eq!(health, "ok");
    let url = format!("http://{addr}/api/mcp");
    let r = post(&url, &request(json!(1), "tools/call", json!({"name": "add", "arguments": {"a": 2, "b": 40}}))).await;
    assert_eq!(r.response()["result"]["structuredContent"]["sum"], 42, "{}", r.raw);
    // Typed arguments that do not fit are a tool execution error the model can read.
    let r = post(&url, &request(json!(2), "tools/call", json!({"name": "add", "arguments": {"a": "two"}}))).await;
    assert_eq!(r.status, 200);
    assert_eq!(r.response()["result"]["isError"], true, "{}", r.raw);
    let r = post(&url, &request(json!(3), "tools/list", json!({}))).await;
    let schema = &r.response()["result"]["tools"][0]["inputSchema"];
    assert_eq!(schema["type"], "object");
    assert_eq!(schema["properties"]["a"]["type"], "integer");
    handle.stop(false).await;
}

/// The application's own actix-web server, as an embedder writes it: its
/// route `/hello`, then what `mount` registers; one worker on a loopback
/// port, its signals left to [`run_until`]. The server (to run) and its
/// base URL.
fn app(mount: impl Fn(&mut web::ServiceConfig) + Clone + Send + 'static) -> (actix_web::dev::Server, String) {
    let http = HttpServer::new(move || {
        App::new().route("/hello", web::get().to(|| async { "hello" })).configure(mount.clone())
    })
    .workers(1)
    .disable_signals()
    .shutdown_timeout(1)
    .h1_allow_half_closed(false)
    .bind(("127.0.0.1", 0))
    .unwrap();
    let base = format!("http://{}", http.addrs()[0]);
    (http.run(), base)
}

/// The everything catalog with the test configuration as `edit` changes it.
fn everything_server(edit: impl FnOnce(&mut Config)) -> McpServer {
    let mut config = test_config();
    edit(&mut config);
    McpServer::new(Arc::new(actix_mcp::catalogs::everything::catalog()), config, logging::discard()).unwrap()
}

/// `http` run by [`run_until`] for `mcp`, until a signal is sent on the
/// returned sender.
fn run(
    mcp: McpServer,
    http: actix_web::dev::Server,
) -> (oneshot::Sender<Signal>, actix_rt::task::JoinHandle<std::io::Result<()>>) {
    let (stop, stopped) = oneshot::channel();
    let running = actix_rt::spawn(run_until(mcp, http, async move { stopped.await.unwrap_or(Signal::Interrupt) }));
    (stop, running)
}

/// `GET base+path`: the status, the content type and the body.
async fn get(base: &str, path: &str) -> (u16, String, String) {
    let res = client().get(format!("{base}{path}")).send().await.unwrap();
    let ct = res.headers().get("content-type").map(|v| v.to_str().unwrap().to_owned()).unwrap_or_default();
    (res.status().as_u16(), ct, res.text().await.unwrap())
}

/// Polls `probe` every 10 ms until it holds; fails after 20 s naming `what`.
async fn until<F: Future<Output = bool>>(what: &str, mut probe: impl FnMut() -> F) {
    let deadline = tokio::time::Instant::now() + Duration::from_secs(20);
    while !probe().await {
        assert!(tokio::time::Instant::now() < deadline, "not within 20 s: {what}");
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}

/// `configure()` mounts health and metrics at the root of the app, next to
/// the endpoint; `configure_endpoint` and `configure_operations` mount each
/// part alone, so that the operational routes go under a scope of the
/// application's and its own `/metrics` keeps its path.
/// "an application's own `/metrics` registered after `configure()` is
/// never reached, one registered before hides the server's" (the
/// embedding guide): actix-web answers with the route registered first.
#[actix_rt::test]
async fn the_metrics_route_registered_first_answers() {
    let own = || web::get().to(|| async { "app_requests_total 7\n" });
    for app_first in [true, false] {
        let mcp = everything_server(|_| {});
        let mounted = configure(mcp.clone());
        let (http, base) = app(move |cfg: &mut web::ServiceConfig| {
            if app_first {
                cfg.route("/metrics", own());
                mounted(cfg);
            } else {
                mounted(cfg);
                cfg.route("/metrics", own());
            }
        });
        let handle = http.handle();
        actix_rt::spawn(http);
        let (status, content_type, body) = get(&base, "/metrics").await;
        assert_eq!(status, 200);
        if app_first {
            assert_eq!(body, "app_requests_total 7\n", "registered before: the application's own");
        } else {
            assert!(content_type.starts_with("text/plain; version=0.0.4"), "registered after: the server's");
            assert_ne!(body, "app_requests_total 7\n", "registered after: never reached");
        }
        handle.stop(false).await;
    }
}

#[actix_rt::test]
async fn configure_mounts_the_operational_routes_and_each_part_mounts_alone() {
    let discover = request(json!(1), "server/discover", json!({}));
    let mcp = everything_server(|_| {});
    let (http, base) = app(configure(mcp.clone()));
    let handle = http.handle();
    actix_rt::spawn(http);
    for path in ["/healthz", "/readyz", "/metrics"] {
        assert_eq!(get(&base, path).await.0, 200, "{path}");
    }
    assert_eq!(post(&format!("{base}/mcp"), &discover).await.status, 200);
    handle.stop(false).await;

    let mcp = everything_server(|_| {});
    let (endpoint, operations) = (configure_endpoint(mcp.clone()), configure_operations(mcp.clone()));
    let (http, base) = app(move |cfg: &mut web::ServiceConfig| {
        cfg.route("/metrics", web::get().to(|| async { "app_requests_total 7\n" }));
        endpoint(cfg);
        cfg.service(web::scope("/ops").configure(operations.clone()));
    });
    let handle = http.handle();
    actix_rt::spawn(http);
    assert_eq!(get(&base, "/metrics").await.2, "app_requests_total 7\n", "the application's own");
    let (status, content_type, _) = get(&base, "/ops/metrics").await;
    assert_eq!(status, 200);
    assert!(content_type.starts_with("text/plain; version=0.0.4"), "{content_type}");
    for path in ["/ops/healthz", "/ops/readyz"] {
        assert_eq!(get(&base, path).await.0, 200, "{path}");
    }
    for path in ["/healthz", "/readyz"] {
        assert_eq!(get(&base, path).await.0, 404, "{path}: not at the root");
    }
    assert_eq!(post(&format!("{base}/mcp"), &discover).await.status, 200);
    handle.stop(false).await;
}

/// With `metrics.bind`, an embedded server gets the listener of its own
/// the binary has (started when it is built), and `/metrics` is not on the
/// application's port; an address taken fails the build naming the key;
/// the listener stops with the application's server.
#[actix_rt::test]
async fn metrics_bind_gets_a_listener_of_its_own_when_embedded() {
    let mut config = test_config();
    config.metrics.bind = "127.0.0.1:0".into();
    let info = || mcp_protocol::model::discover::Implementation::new("shop", "1.0.0");
    let mcp = McpServer::builder(info()).config(config.clone()).build().unwrap();
    let metrics = *mcp.metrics_addrs().first().expect("the listener started with the server");
    let (http, base) = app(configure(mcp.clone()));
    let (stop, running) = run(mcp, http);
    let (status, content_type, _) = get(&format!("http://{metrics}"), "/metrics").await;
    assert_eq!(status, 200);
    assert!(content_type.starts_with("text/plain; version=0.0.4"), "{content_type}");
    assert_eq!(get(&base, "/metrics").await.0, 404, "not on the application's port");

    let taken = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    config.metrics.bind = taken.local_addr().unwrap().to_string();
    let refused = McpServer::builder(info()).config(config).build().unwrap_err().to_string();
    assert!(refused.contains("metrics.bind") && refused.contains("cannot listen"), "{refused}");

    stop.send(Signal::Interrupt).unwrap();
    running.await.unwrap().unwrap();
    until("the metrics listener stops", || async move { tokio::net::TcpStream::connect(metrics).await.is_err() }).await;
}

/// `run_until` gives the application's own server the binary's shutdown:
/// at SIGTERM `/readyz` fails while every request is still served (with
/// `Connection: close`), then the listen streams get their completion
/// result and the server stops.
#[actix_rt::test]
async fn run_until_drains_then_completes_the_subscriptions_and_stops() {
    let mcp = everything_server(|c| c.shutdown.drain_ms = 3000);
    let (http, base) = app(configure(mcp.clone()));
    let url = format!("{base}/mcp");
    let (stop, running) = run(mcp, http);
    assert_eq!(get(&base, "/readyz").await.0, 200);
    let listen = request(json!(0), "subscriptions/listen", json!({"notifications": {"toolsListChanged": true}}));
    let mut stream = SseReader::open(&url, &listen).await;
    assert_eq!(stream.next().await.unwrap()["method"], "notifications/subscriptions/acknowledged");

    stop.send(Signal::Terminate).unwrap();
    let at = base.as_str();
    until("/readyz answers 503", || async move { get(at, "/readyz").await.0 == 503 }).await;
    let call = request(json!(1), "tools/call", json!({"name": "echo", "arguments": {"text": "x"}}));
    let served = post(&url, &call).await;
    assert_eq!(served.status, 200, "served while draining: {}", served.raw);
    assert_eq!(served.headers.get("connection").map(|v| v.to_str().unwrap()), Some("close"));
    assert_eq!(get(&base, "/hello").await.0, 200, "the application's own routes too");

    let done = stream.next().await.expect("the completion result");
    assert_eq!((done["id"].clone(), done["result"]["resultType"].clone()), (json!(0), json!("complete")), "{done}");
    running.await.unwrap().unwrap();
}

/// A stdio upstream's connection lives on an HTTP worker's thread and ends
/// with it: at shutdown that is said at INFO, not as an upstream down to be
/// restarted.
#[actix_rt::test]
async fn a_shutdown_ends_the_upstreams_without_a_fault() {
    let test = "embedding::a_shutdown_ends_the_upstreams_without_a_fault";
    if external(test, &["python3"]).is_none() {
        return;
    }
    let logs = Logs::default();
    let up = UpstreamConfig {
        name: "up".into(),
        command: "python3".into(),
        args: vec![hostile_script().display().to_string()],
        ..Default::default()
    };
    let mcp = McpServer::builder(mcp_protocol::model::discover::Implementation::new("shop", "1.0.0"))
        .config(test_config())
        .upstream(up)
        .logger(logs.logger())
        .build()
        .unwrap();
    let (http, base) = app(configure(mcp.clone()));
    let (stop, running) = run(mcp, http);
    let url = format!("{base}/mcp");
    let listed = |r: Value| r["result"]["tools"].as_array().is_some_and(|t| t.iter().any(|t| t["name"] == "up__echo"));
    let at = url.as_str();
    until("the upstream's tool is served", || async move {
        listed(post(at, &request(json!(1), "tools/list", json!({}))).await.response().clone())
    })
    .await;

    stop.send(Signal::Interrupt).unwrap();
    running.await.unwrap().unwrap();
    let logged = &logs;
    until("the upstream's end is logged", || async move { !logged.with_msg("upstream closed").is_empty() }).await;
    let down = logs.with_msg("upstream down");
    assert!(down.is_empty(), "a shutdown is not a fault: {down:?}\n{}", logs.text());
}
