//! The live status page in a real browser: headless Chromium (Debian's
//! `chromium`) loads it from a running server; it must load without a
//! console error or a blocked resource, and show the numbers its JSON
//! endpoint gives. Off-loopback clients get 403 unless allowed.

use crate::common;

use common::*;
use serde_json::{json, Value};

fn call(id: i64, tool: &str, args: Value) -> Value {
    request(json!(id), "tools/call", json!({"name": tool, "arguments": args}))
}

#[actix_rt::test]
async fn the_status_page_shows_what_its_data_says() {
    let Some(_) = external("status::the_status_page_shows_what_its_data_says", &["chromium"]) else { return };
    let s = TestServer::everything_with(|c| c.status.enabled = true);
    for i in 0..5 {
        assert_eq!(post(&s.url, &call(i, "echo", json!({"text": "x"}))).await.status, 200);
    }
    assert_eq!(post(&s.url, &call(9, "no_such_tool", json!({}))).await.error_code(), Some(-32602));
    post(&s.url, &request(json!(10), "tools/list", json!({}))).await;
    // Refused before any handler: an unknown method.
    assert_eq!(post(&s.url, &request(json!(11), "no/such", json!({}))).await.error_code(), Some(-32601));

    let page = s.url.replace("/mcp", "/status");
    let data: Value = client().get(format!("{page}.json")).send().await.unwrap().json().await.unwrap();
    let calls = data["methods"].as_array().unwrap().iter().find(|m| m["method"] == "tools/call").unwrap().clone();
    assert_eq!((calls["count"].as_u64(), calls["errors"].as_u64()), (Some(6), Some(1)), "{data}");
    assert_eq!((data["requests"].as_u64(), data["errors"].as_u64()), (Some(8), Some(2)));
    assert_eq!(data["refused_before_handler"], 1, "{data}");
    assert_eq!(
        (data["cancelled"].as_u64(), data["timed_out"].as_u64(), data["tls"].as_bool()),
        (Some(0), Some(0), Some(false))
    );

    let (dom, log) = chromium(&page, &["--dump-dom"]).await;
    for bad in [":CONSOLE(", "Refused to", "Uncaught"] {
        let line = log.lines().find(|l| l.contains(bad));
        assert!(line.is_none(), "the page logged {bad:?}: {line:?}");
    }
    assert!(dom.contains(r#"<b id="requests">8</b>"#), "{dom}");
    assert!(dom.contains(r#"<b id="errors" class="bad">2</b>"#), "{dom}");
    assert!(dom.contains(r#"<b id="refused">1</b>"#), "{dom}");
    assert!(dom.contains(r#"<b id="timed-out">0</b>"#) && dom.contains(r#"<b id="tls">off</b>"#), "{dom}");
    let top = data["history"].as_array().unwrap().iter().filter_map(Value::as_u64).max().unwrap_or(0).max(1);
    assert!(dom.contains(&format!(r#"<span id="spark-max">{top}</span>"#)), "the sparkline's scale: {dom}");
    assert!(dom.contains(r#"<b id="redis">none</b>"#), "{dom}");
    let row = format!(
        r#"<tr data-method="tools/call"><td>tools/call</td><td>6</td><td>1</td><td>{}</td>"#,
        p50(&calls["p50_ms"])
    );
    assert!(dom.contains(&row), "{row} in {dom}");
    assert!(dom.contains(r#"<tr data-method="tools/list"><td>tools/list</td><td>1</td><td>0</td>"#), "{dom}");
    assert!(dom.contains("<polyline id=\"line\"") && !dom.contains("points=\"\""), "the sparkline is drawn: {dom}");
    s.stop().await;
}

/// The page's rendering of a p50 in ms (as its script formats it).
fn p50(v: &Value) -> String {
    match v.as_f64() {
        None => "–".into(),
        Some(v) if v >= 1.0 => format!("{v:.0}"),
        Some(v) => format!("{v:.2}"),
    }
}

#[actix_rt::test]
async fn the_status_page_is_off_by_default() {
    let s = TestServer::everything();
    let res = client().get(s.url.replace("/mcp", "/status")).send().await.unwrap();
    assert_eq!(res.status(), 404);
    s.stop().await;
}
