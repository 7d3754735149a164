//! HTTP/2 without TLS (`http.h2c`, the `h2c` feature) beside HTTP/1.1 on one
//! port, over real loopback connections: a call, and many listen streams
//! carried by one connection, each acknowledged and tagged with its own id.

use crate::common;

use common::*;
use serde_json::{json, Value};

fn h2c_server() -> TestServer {
    TestServer::everything_with(|c| c.http.h2c = true)
}

fn h2_client() -> reqwest::Client {
    reqwest::Client::builder().http2_prior_knowledge().build().unwrap()
}

async fn send(client: &reqwest::Client, url: &str, body: &Value) -> reqwest::Response {
    let mut req = client.post(url).json(body);
    for (k, v) in standard_headers(body) {
        req = req.header(k, v);
    }
    req.send().await.expect("request sent")
}

#[actix_rt::test]
async fn calls_work_over_http2_and_http1_on_one_port() {
    let srv = h2c_server();
    let body = request(json!(1), "tools/call", json!({"name": "echo", "arguments": {"text": "over h2"}}));
    let resp = send(&h2_client(), &srv.url, &body).await;
    assert_eq!(resp.version(), reqwest::Version::HTTP_2);
    assert_eq!(resp.status(), 200);
    let v: Value = resp.json().await.unwrap();
    assert_eq!(v["id"], 1);
    assert_eq!(v["result"]["content"][0]["text"], "over h2");
    let r = post(&srv.url, &body).await;
    assert_eq!(r.status, 200, "{}", r.raw);
    assert_eq!(r.response()["result"]["content"][0]["text"], "over h2");
    // Validation is the same on HTTP/2: a wrong Mcp-Method header is refused.
    let mut req = h2_client().post(&srv.url).json(&body);
    for (k, v) in standard_headers(&body) {
        req = req.header(k.as_str(), if k.eq_ignore_ascii_case("mcp-method") { "tools/list".to_string() } else { v });
    }
    let resp = req.send().await.unwrap();
    assert_eq!(resp.status(), 400);
    srv.stop().await;
}

#[actix_rt::test]
async fn one_connection_carries_many_listen_streams() {
    let srv = h2c_server();
    let client = h2_client();
    let mut streams = Vec::new();
    for i in 0..50 {
        let body = request(json!(i), "subscriptions/listen", json!({"notifications": {"toolsListChanged": true}}));
        let resp = send(&client, &srv.url, &body).await;
        assert_eq!(resp.version(), reqwest::Version::HTTP_2);
        let mut s = SseReader::from_response(resp);
        let ack = s.next().await.expect("the acknowledgement");
        assert_eq!(ack["method"], "notifications/subscriptions/acknowledged");
        assert_eq!(ack["params"]["_meta"]["io.modelcontextprotocol/subscriptionId"], i);
        streams.push(s);
    }
    assert_eq!(srv.server.hub_stats().await.listeners, 50);
    let trigger = request(json!("t"), "tools/call", json!({"name": "test_trigger_tool_change", "arguments": {}}));
    assert_eq!(send(&client, &srv.url, &trigger).await.status(), 200);
    for (i, s) in streams.iter_mut().enumerate() {
        let note = s.next().await.expect("list_changed");
        assert_eq!(note["method"], "notifications/tools/list_changed");
        assert_eq!(note["params"]["_meta"]["io.modelcontextprotocol/subscriptionId"], i);
    }
    srv.stop().await;
}
