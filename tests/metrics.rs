//! Metrics scraped by a real Prometheus: the release binary serves
//! `/metrics`, Prometheus (Debian's package) scrapes it every second, the
//! test makes calls and opens and closes listen streams, then asks
//! Prometheus' HTTP API for the series and checks them against what it did.

use crate::common;

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

    // A success has no error_type; Prometheus matches an absent label as "".
    let ok = "mcp_server_operation_duration_seconds_count{mcp_method_name=\"tools/call\",error_type=\"\"}";
    prom.expect(ok, 8.0).await;
    let failed = "mcp_server_operation_duration_seconds_count{mcp_method_name=\"tools/call\",error_type=\"-32602\",rpc_response_status_code=\"-32602\"}";
    prom.expect(failed, 1.0).await;
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

/// The series of an exposition: name, labels, value.
fn parsed(text: &str) -> Vec<(String, std::collections::BTreeMap<String, String>, f64)> {
    text.lines()
        .filter(|l| !l.starts_with('#') && !l.trim().is_empty())
        .map(|l| {
            let (head, value) = l.rsplit_once(' ').unwrap();
            let (name, labels) = head.split_once('{').map_or((head, ""), |(n, rest)| (n, rest.trim_end_matches('}')));
            let labels = labels
                .split("\",")
                .filter(|p| !p.is_empty())
                .map(|p| {
                    let (k, v) = p.split_once("=\"").unwrap();
                    (k.to_owned(), v.trim_end_matches('"').to_owned())
                })
                .collect();
            (name.to_owned(), labels, value.parse().unwrap())
        })
        .collect()
}

/// The value of the series `name` whose labels are exactly `labels` (0 when absent).
fn value_of(text: &str, name: &str, labels: &[(&str, &str)]) -> f64 {
    let want: std::collections::BTreeMap<String, String> =
        labels.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect();
    parsed(text).into_iter().find(|(n, l, _)| n == name && *l == want).map_or(0.0, |(_, _, v)| v)
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
    let call = [
        ("mcp_method_name", "tools/call"),
        ("mcp_protocol_version", "2026-07-28"),
        ("network_transport", "tcp"),
        ("gen_ai_operation_name", "execute_tool"),
    ];
    let count = |extra: &[(&str, &str)]| {
        let labels: Vec<(&str, &str)> = call.iter().chain(extra).copied().collect();
        value_of(&text, "mcp_server_operation_duration_seconds_count", &labels)
    };
    assert_eq!(count(&[("gen_ai_tool_name", "echo")]), 3.0, "{text}");
    // An unknown name never becomes a label value.
    let unknown = [("gen_ai_tool_name", "_other"), ("error_type", "-32602"), ("rpc_response_status_code", "-32602")];
    assert_eq!(count(&unknown), 1.0, "{text}");
    assert!(!text.contains("no_such_tool"));
    assert_eq!(series(&text, "mcp_server_http_request_bytes_total"), bytes_in as f64);
    assert_eq!(series(&text, "mcp_server_http_response_bytes_total"), bytes_out as f64, "{text}");
}

/// The exposition follows the OpenTelemetry MCP semantic conventions: the
/// operation histogram carries only the conventions' attributes (no
/// `outcome`), a tool result with `isError: true` is `error_type="tool_error"`,
/// requests refused before any handler are operations too, HTTP statuses
/// are exact, and series of fixed labels exist at 0 before their first event.
#[actix_rt::test]
async fn the_exposition_follows_the_opentelemetry_mcp_conventions() {
    let server = HttpChild::spawn(&["--catalog", "everything"]).await;
    let metrics = server.url.trim_end_matches("/mcp").to_owned() + "/metrics";
    let scrape = || {
        let metrics = metrics.clone();
        async move { client().get(&metrics).send().await.unwrap().text().await.unwrap() }
    };
    // Before any event, the series an alert would watch exist, at 0.
    let text = scrape().await;
    let exists_at_zero = |name: &str, labels: &[(&str, &str)]| {
        let want: std::collections::BTreeMap<String, String> =
            labels.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect();
        assert!(
            parsed(&text).iter().any(|(n, l, v)| n == name && *l == want && *v == 0.0),
            "{name}{labels:?} at 0 in:\n{text}"
        );
    };
    exists_at_zero("mcp_server_mrtr_rounds_total", &[("event", "issued")]);
    exists_at_zero("mcp_server_listen_streams_closed_total", &[("reason", "lag")]);
    exists_at_zero("mcp_server_listen_streams_closed_total", &[("reason", "token_expiry")]);
    exists_at_zero("mcp_server_lagged_subscribers_total", &[]);
    exists_at_zero("mcp_server_cancellations_total", &[]);
    exists_at_zero("mcp_server_timeouts_total", &[]);

    assert_eq!(post(&server.url, &call(1, "echo", json!({"text": "x"}))).await.status, 200);
    let failing = post(&server.url, &call(2, "test_error_handling", json!({}))).await;
    assert_eq!(failing.response()["result"]["isError"], true);
    let unknown = post(&server.url, &request(json!(3), "no/such", json!({}))).await;
    assert_eq!(unknown.error_code(), Some(-32601));
    let mut bare = request(json!(4), "tools/list", json!({}));
    bare["params"].as_object_mut().unwrap().remove("_meta");
    assert_eq!(post(&server.url, &bare).await.status, 400);

    let text = scrape().await;
    let ops: Vec<_> =
        parsed(&text).into_iter().filter(|(n, _, _)| n == "mcp_server_operation_duration_seconds_count").collect();
    let allowed = [
        "mcp_method_name",
        "mcp_protocol_version",
        "network_transport",
        "error_type",
        "rpc_response_status_code",
        "gen_ai_operation_name",
        "gen_ai_tool_name",
    ];
    for (_, labels, _) in &ops {
        for k in labels.keys() {
            assert!(allowed.contains(&k.as_str()), "{k} is not an attribute of the conventions: {labels:?}");
        }
        assert!(labels.contains_key("mcp_method_name") && labels["network_transport"] == "tcp", "{labels:?}");
    }
    let find = |want: &[(&str, &str)]| {
        ops.iter()
            .filter(|(_, l, _)| want.iter().all(|(k, v)| l.get(*k).map(String::as_str) == Some(*v)))
            .map(|(_, l, v)| (l.clone(), *v))
            .collect::<Vec<_>>()
    };
    let tool_error = find(&[("mcp_method_name", "tools/call"), ("error_type", "tool_error")]);
    assert_eq!(tool_error.len(), 1, "{ops:?}");
    assert_eq!(tool_error[0].1, 1.0);
    assert!(!tool_error[0].0.contains_key("rpc_response_status_code"), "a tool error is a result: {tool_error:?}");
    assert_eq!(tool_error[0].0["gen_ai_operation_name"], "execute_tool");
    let ok = find(&[("mcp_method_name", "tools/call"), ("mcp_protocol_version", "2026-07-28")]);
    assert!(ok.iter().any(|(l, v)| !l.contains_key("error_type") && *v == 1.0), "{ok:?}");
    // Refused before any handler: an unknown method, and a request without `_meta`.
    let refused =
        find(&[("mcp_method_name", "_OTHER"), ("error_type", "-32601"), ("rpc_response_status_code", "-32601")]);
    assert_eq!(refused.iter().map(|(_, v)| v).sum::<f64>(), 1.0, "{ops:?}");
    let no_meta = find(&[("mcp_method_name", "tools/list"), ("error_type", "-32602")]);
    assert_eq!(no_meta.iter().map(|(_, v)| v).sum::<f64>(), 1.0, "{ops:?}");
    // HTTP statuses are exact codes.
    for (n, l, _) in parsed(&text) {
        if n == "mcp_server_http_responses_total" {
            let status = &l["status"];
            assert!(status.len() == 3 && status.bytes().all(|b| b.is_ascii_digit()), "status {status}");
        }
    }
    assert_eq!(value_of(&text, "mcp_server_http_responses_total", &[("status", "404")]), 1.0, "{text}");
}
