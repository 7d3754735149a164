//! Liveness and readiness over real HTTP: both answer without the Origin
//! check and without authorization; readiness fails as soon as graceful
//! shutdown begins, before the listen streams get their completion result.

use crate::common;

use common::*;
use serde_json::{json, Value};

async fn get(url: &str, path: &str, headers: &[(&str, &str)]) -> (u16, Value) {
    let mut req = client().get(url.replace("/mcp", path));
    for (k, v) in headers {
        req = req.header(*k, *v);
    }
    let res = req.send().await.unwrap();
    assert_eq!(res.headers().get("cache-control").map(|v| v.to_str().unwrap()), Some("no-store"));
    (res.status().as_u16(), res.json().await.unwrap())
}

#[actix_rt::test]
async fn readiness_fails_when_draining_begins() {
    let s = TestServer::everything();
    assert_eq!(get(&s.url, "/healthz", &[]).await, (200, json!({"status": "ok"})));
    assert_eq!(get(&s.url, "/readyz", &[]).await, (200, json!({"ready": true})));
    let listen = request(json!(0), "subscriptions/listen", json!({"notifications": {"toolsListChanged": true}}));
    let mut stream = SseReader::open(&s.url, &listen).await;
    assert_eq!(stream.next().await.unwrap()["method"], "notifications/subscriptions/acknowledged");

    let server = s.server.clone();
    let drained = actix_rt::spawn(async move { server.shutdown().await });
    // The stream's completion result arrives after readiness has failed.
    let last = stream.next().await.expect("the completion result");
    assert_eq!((last["id"].clone(), last.get("result").is_some()), (json!(0), true), "{last}");
    let (status, body) = get(&s.url, "/readyz", &[]).await;
    assert_eq!(status, 503);
    assert_eq!(body, json!({"ready": false, "reasons": ["draining: the server is shutting down"]}));
    assert_eq!(get(&s.url, "/healthz", &[]).await.0, 200, "alive while draining");
    assert_eq!(drained.await.unwrap(), 1);
    s.stop().await;
}

#[actix_rt::test]
async fn health_needs_no_token_and_no_origin() {
    let mut config = test_config();
    config.auth.mode = actix_mcp::config::AuthMode::ApiKey;
    config.auth.api_keys =
        vec![actix_mcp::config::ApiKeyConfig { sha256: "0".repeat(64), subject: "ci".into(), ..Default::default() }];
    config.health.readiness_path = "/ready".into();
    let s = TestServer::start(std::sync::Arc::new(actix_mcp::catalogs::everything::catalog()), config);
    let foreign = [("Origin", "https://evil.example")];
    assert_eq!(get(&s.url, "/healthz", &foreign).await.0, 200);
    assert_eq!(get(&s.url, "/ready", &foreign).await.0, 200);
    // The MCP endpoint itself still refuses both.
    assert_eq!(post(&s.url, &request(json!(1), "server/discover", json!({}))).await.status, 401);
    s.stop().await;
}
