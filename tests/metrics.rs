//! Metrics scraped by a real Prometheus: the release binary serves
//! `/metrics`, Prometheus (Debian's package) scrapes it every second, the
//! test makes calls and opens and closes listen streams, then asks
//! Prometheus' HTTP API for the series and checks them against what it did.

mod common;

use std::time::Duration;

use common::nginx::{quiet, wait_for_port};
use common::*;
use serde_json::{json, Value};

struct Prometheus {
    _child: tokio::process::Child,
    api: String,
    /// Its configuration and data, removed with it.
    _dir: tempfile::TempDir,
}

impl Prometheus {
    async fn start(target: &str) -> Self {
        let port = free_port();
        let temp = tempfile::Builder::new().prefix("actix-mcp-prometheus-").tempdir().unwrap();
        let dir = temp.path();
        let conf = format!(
            "global:\n  scrape_interval: 1s\n  evaluation_interval: 1s\nscrape_configs:\n  - job_name: mcp\n    \
             metrics_path: /metrics\n    static_configs:\n      - targets: ['{target}']\n"
        );
        std::fs::write(dir.join("prometheus.yml"), conf).unwrap();
        let child = quiet(
            "prometheus",
            &[
                &format!("--config.file={}", dir.join("prometheus.yml").display()),
                &format!("--storage.tsdb.path={}", dir.join("data").display()),
                &format!("--web.listen-address=127.0.0.1:{port}"),
            ],
        )
        .spawn()
        .expect("prometheus starts");
        wait_for_port(port, "prometheus").await;
        Prometheus { _child: child, api: format!("http://127.0.0.1:{port}/api/v1/query"), _dir: temp }
    }

    /// The value of an instant query with one result (`None`: no result yet).
    async fn value(&self, query: &str) -> Option<f64> {
        let res = client().get(&self.api).query(&[("query", query)]).send().await.ok()?;
        let body: Value = res.json().await.ok()?;
        let result = body["data"]["result"].as_array()?;
        result.first()?["value"][1].as_str()?.parse().ok()
    }

    /// Waits (up to 30 s) until `query` gives `want`.
    async fn expect(&self, query: &str, want: f64) {
        let until = tokio::time::Instant::now() + Duration::from_secs(30);
        let mut last = None;
        while tokio::time::Instant::now() < until {
            last = self.value(query).await;
            if last == Some(want) {
                return;
            }
            tokio::time::sleep(Duration::from_millis(250)).await;
        }
        panic!("{query}: want {want}, Prometheus says {last:?}");
    }
}

fn call(id: i64, tool: &str, args: Value) -> Value {
    request(json!(id), "tools/call", json!({"name": tool, "arguments": args}))
}

#[actix_rt::test]
async fn prometheus_scrapes_what_the_server_did() {
    let Some(_) = external("metrics::prometheus_scrapes_what_the_server_did", &["prometheus"]) else { return };
    let server = HttpChild::spawn(&["--catalog", "everything"]).await;
    let target = server.url.trim_start_matches("http://").trim_end_matches("/mcp").to_owned();
    let prom = Prometheus::start(&target).await;
    prom.expect("up{job=\"mcp\"}", 1.0).await;

    for i in 0..7 {
        let r = post(&server.url, &call(i, "echo", json!({"text": "x"}))).await;
        assert_eq!(r.status, 200);
    }
    // An unknown tool: an error outcome, counted apart.
    let r = post(&server.url, &call(100, "no_such_tool", json!({}))).await;
    assert_eq!(r.error_code(), Some(-32602));

    // Two listen streams, a notification, then both closed by the client.
    let listen = request(json!(0), "subscriptions/listen", json!({"notifications": {"toolsListChanged": true}}));
    let mut a = SseReader::open(&server.url, &listen).await;
    let mut b = SseReader::open(&server.url, &listen).await;
    for s in [&mut a, &mut b] {
        assert_eq!(s.next().await.unwrap()["method"], "notifications/subscriptions/acknowledged");
    }
    prom.expect("mcp_server_listen_streams_open", 2.0).await;
    post(&server.url, &call(200, "test_trigger_tool_change", json!({}))).await;
    for s in [&mut a, &mut b] {
        assert_eq!(s.next().await.unwrap()["method"], "notifications/tools/list_changed");
    }
    drop((a, b));

    let ok = "mcp_server_operation_duration_seconds_count{mcp_method_name=\"tools/call\",outcome=\"ok\"}";
    prom.expect(ok, 8.0).await;
    prom.expect("mcp_server_operation_duration_seconds_count{mcp_method_name=\"tools/call\",outcome=\"-32602\"}", 1.0)
        .await;
    prom.expect("mcp_server_listen_streams_open", 0.0).await;
    prom.expect("mcp_server_listen_streams_opened_total", 2.0).await;
    prom.expect("mcp_server_listen_streams_closed_total{reason=\"client\"}", 2.0).await;
    prom.expect("mcp_server_requests_in_flight", 0.0).await;
    // The list change reached both streams; each relay timed its delivery.
    prom.expect("mcp_server_notifications_delivered_total", 2.0).await;
    prom.expect("mcp_server_notifications_dropped_total", 0.0).await;
    let batches = prom.value("mcp_server_notification_delivery_seconds_count").await.unwrap_or(0.0);
    assert!((1.0..=2.0).contains(&batches), "{batches} timed deliveries (one per worker holding a stream)");
    // 7 echo, the trigger and the 2 streams answered 200; the unknown tool 400.
    prom.expect("mcp_server_http_responses_total{status=\"200\"}", 10.0).await;
    prom.expect("mcp_server_http_responses_total{status=\"400\"}", 1.0).await;
    // p99 from the histogram is a real duration.
    let p99 = prom
        .value("histogram_quantile(0.99, sum by (le) (mcp_server_operation_duration_seconds_bucket{mcp_method_name=\"tools/call\"}))")
        .await
        .expect("a p99");
    assert!(p99 > 0.0 && p99 < 1.0, "p99 {p99}");
}

/// The value of one series in a text exposition (0 when absent).
fn series(text: &str, name_and_labels: &str) -> f64 {
    text.lines()
        .filter(|l| !l.starts_with('#'))
        .find_map(|l| l.strip_prefix(name_and_labels).and_then(|rest| rest.strip_prefix(' ')))
        .map_or(0.0, |v| v.trim().parse().unwrap())
}

#[actix_rt::test]
async fn tool_labels_name_only_catalog_tools_and_bytes_are_counted_both_ways() {
    let config = ConfigFile::new("metrics-tool-labels", "[metrics]\ntool_labels = true\n");
    let server = HttpChild::spawn(&["--catalog", "everything", "--config", config.path()]).await;
    let (mut bytes_in, mut bytes_out) = (0, 0);
    for (i, tool) in ["echo", "echo", "echo", "no_such_tool"].iter().enumerate() {
        let body = call(i as i64, tool, json!({"text": "x"}));
        let r = post(&server.url, &body).await;
        bytes_in += serde_json::to_vec(&body).unwrap().len();
        bytes_out += r.raw.len();
    }
    let metrics = server.url.trim_end_matches("/mcp").to_owned() + "/metrics";
    let text = client().get(&metrics).send().await.unwrap().text().await.unwrap();
    let count = |labels: &str| series(&text, &format!("mcp_server_operation_duration_seconds_count{{{labels}}}"));
    let v = "mcp_protocol_version=\"2026-07-28\"";
    assert_eq!(count(&format!("mcp_method_name=\"tools/call\",outcome=\"ok\",{v},gen_ai_tool_name=\"echo\"")), 3.0);
    // An unknown name never becomes a label value.
    assert_eq!(
        count(&format!("mcp_method_name=\"tools/call\",outcome=\"-32602\",{v},gen_ai_tool_name=\"_other\"")),
        1.0,
        "{text}"
    );
    assert!(!text.contains("no_such_tool"));
    assert_eq!(series(&text, "mcp_server_http_request_bytes_total"), bytes_in as f64);
    assert_eq!(series(&text, "mcp_server_http_response_bytes_total"), bytes_out as f64, "{text}");
}
