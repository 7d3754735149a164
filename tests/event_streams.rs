//! `events/stream` and the long `events/poll` over real loopback HTTP (and
//! a stream over stdio): what a stream sends and in which order, every
//! notification tagged with the stream's id, heartbeats as notifications
//! (never SSE comments) that move the cursor on, a gap and a failure the
//! stream survives, the end of a subscription with `terminated` and the
//! final result, the caps on streams, a stream outliving the request
//! timeout, and a long poll that answers as soon as an occurrence comes.

use crate::common;

use std::sync::Arc;
use std::time::{Duration, Instant};

use actix_mcp::prelude::*;
use common::*;
use serde_json::Value;

/// Which mail to hear of.
#[derive(Deserialize, JsonSchema)]
struct Inbox {
    /// Only mail from this sender.
    from: Option<String>,
}

/// A mail that arrived.
#[derive(Serialize, JsonSchema)]
struct Mail {
    from: String,
}

fn mail_type() -> EventType {
    let delivery = [Delivery::Poll, Delivery::Push];
    EventType::matching::<Inbox, Mail>("mail", "A mail arrived", &delivery, |inbox, data| {
        inbox.from.as_deref().is_none_or(|from| data.get("from").and_then(Value::as_str) == Some(from))
    })
}

fn start_with(edit: impl FnOnce(&mut Config), event_type: EventType) -> (TestServer, Arc<Catalog>, EventSource) {
    let catalog = Arc::new(Catalog::new());
    let source = catalog.add_event_type(event_type).unwrap();
    let mut config = test_config();
    edit(&mut config);
    (TestServer::start(catalog.clone(), config), catalog, source)
}

fn mail(from: &str) -> Mail {
    Mail { from: from.into() }
}

fn stream_request(id: i64, params: Value) -> Value {
    request(json!(id), "events/stream", params)
}

/// Opens a stream, or returns the JSON error it was refused with.
async fn open(url: &str, body: &Value) -> Result<SseReader, Value> {
    let mut req = client().post(url).json(body);
    for (k, v) in standard_headers(body) {
        req = req.header(k, v);
    }
    let resp = req.send().await.expect("request sent");
    if resp.headers()["content-type"].to_str().unwrap().starts_with("text/event-stream") {
        return Ok(SseReader::from_response(resp));
    }
    Err(resp.json().await.expect("a JSON error"))
}

/// The next message, which must be a notification of `method` tagged with
/// the stream's id `id`; returns its params.
async fn expect(stream: &mut SseReader, id: i64, method: &str) -> Value {
    let message = stream.next().await.unwrap_or_else(|| panic!("the stream ended before {method}"));
    assert_eq!(message["method"], format!("notifications/events/{method}"), "{message}");
    assert_eq!(message["params"]["_meta"]["io.modelcontextprotocol/subscriptionId"], json!(id), "{message}");
    message["params"].clone()
}

#[actix_rt::test]
async fn a_stream_sends_active_then_what_matches_and_ends_with_terminated_and_the_final_result() {
    let (srv, catalog, source) = start_with(|_| {}, mail_type());
    let mut stream =
        SseReader::open(&srv.url, &stream_request(41, json!({"name": "mail", "arguments": {"from": "ann"}}))).await;
    let active = expect(&mut stream, 41, "active").await;
    assert!(active["cursor"].is_string() && active["truncated"] == false, "{active}");
    source.emit(mail("bob")).unwrap();
    source.emit(mail("ann")).unwrap();
    let event = expect(&mut stream, 41, "event").await;
    assert_eq!((&event["name"], &event["data"]["from"]), (&json!("mail"), &json!("ann")), "{event}");
    assert!(event["eventId"].is_string() && event["cursor"].is_string(), "{event}");
    catalog.remove_event_type("mail").unwrap();
    let ended = expect(&mut stream, 41, "terminated").await;
    assert_eq!((&ended["error"]["code"], &ended["error"]["data"]), (&json!(-32011), &json!({"kind": "event"})));
    let last = stream.next().await.expect("the final result");
    assert_eq!(last["id"], 41, "{last}");
    let result = last["result"].as_object().unwrap();
    assert_eq!(result["_meta"]["io.modelcontextprotocol/subscriptionId"], 41, "{last}");
    assert!(result.keys().all(|k| k == "_meta" || k == "resultType"), "only _meta and resultType: {last}");
    assert_eq!(stream.next().await, None, "the server closes the stream after the final result");
    srv.stop().await;
}

#[actix_rt::test]
async fn a_quiet_stream_heartbeats_with_a_cursor_that_moves_past_what_it_skipped_and_sends_no_comments() {
    // SSE keep-alive comments every 100 ms on other streams (test_config).
    let (srv, _catalog, source) = start_with(|c| c.events.heartbeat_ms = 300, mail_type());
    let body = stream_request(7, json!({"name": "mail", "arguments": {"from": "ann"}}));
    let mut stream = SseReader::open(&srv.url, &body).await;
    let active = expect(&mut stream, 7, "active").await;
    let first = expect(&mut stream, 7, "heartbeat").await;
    assert_eq!(first["cursor"], active["cursor"], "nothing happened: the cursor stays");
    // Mail from others keeps coming; none reaches this stream, and the
    // heartbeat is still due on time, its cursor past what it skipped.
    let noise = {
        let source = source.clone();
        actix_rt::spawn(async move {
            loop {
                source.emit(mail("bob")).unwrap();
                actix_rt::time::sleep(Duration::from_millis(20)).await;
            }
        })
    };
    let moved = expect(&mut stream, 7, "heartbeat").await;
    assert_ne!(moved["cursor"], first["cursor"], "{moved}");
    noise.abort();
    let raw = stream.raw_until("heartbeat").await;
    assert!(!raw.lines().any(|l| l.starts_with(':')), "no SSE comments on an events stream: {raw}");
    srv.stop().await;
}

#[actix_rt::test]
async fn a_gap_resends_active_truncated_and_a_failure_is_an_error_the_stream_survives() {
    let (srv, _catalog, source) = start_with(|_| {}, mail_type());
    let mut stream = SseReader::open(&srv.url, &stream_request(3, json!({"name": "mail"}))).await;
    let active = expect(&mut stream, 3, "active").await;
    source.lose();
    let again = expect(&mut stream, 3, "active").await;
    assert_eq!(again["truncated"], true, "{again}");
    assert_ne!(again["cursor"], active["cursor"], "a fresh cursor past the loss");
    source.fail(ErrorData::internal("the mail server is down"));
    let error = expect(&mut stream, 3, "error").await;
    assert_eq!(error["error"]["message"], "the mail server is down", "{error}");
    source.emit(mail("ann")).unwrap();
    let event = expect(&mut stream, 3, "event").await;
    assert_eq!(event["data"]["from"], "ann");
    srv.stop().await;
}

#[actix_rt::test]
async fn a_stream_from_a_cursor_replays_what_followed_it_and_a_termination_ends_only_open_streams() {
    let (srv, _catalog, source) = start_with(|_| {}, mail_type());
    let start = post(&srv.url, &request(json!(1), "events/poll", json!({"name": "mail"}))).await;
    let cursor = start.response()["result"]["cursor"].clone();
    source.emit(mail("ann")).unwrap();
    source.emit(mail("bob")).unwrap();
    let mut stream = SseReader::open(&srv.url, &stream_request(5, json!({"name": "mail", "cursor": cursor}))).await;
    let active = expect(&mut stream, 5, "active").await;
    assert_eq!((&active["cursor"], &active["truncated"]), (&cursor, &json!(false)), "{active}");
    assert_eq!(expect(&mut stream, 5, "event").await["data"]["from"], "ann");
    assert_eq!(expect(&mut stream, 5, "event").await["data"]["from"], "bob");
    source.terminate(EventError::Forbidden("access revoked".into()));
    let ended = expect(&mut stream, 5, "terminated").await;
    assert_eq!(ended["error"]["code"], -32012, "{ended}");
    assert_eq!(stream.next().await.expect("the final result")["id"], 5);
    // The type stays served: a new stream opens and hears what comes.
    let mut next = SseReader::open(&srv.url, &stream_request(6, json!({"name": "mail"}))).await;
    expect(&mut next, 6, "active").await;
    source.emit(mail("cy")).unwrap();
    assert_eq!(expect(&mut next, 6, "event").await["data"]["from"], "cy");
    srv.stop().await;
}

#[actix_rt::test]
async fn streams_are_capped_per_type_and_per_server_with_32013_and_a_closed_stream_frees_its_place() {
    let edit = |c: &mut Config| {
        c.events.max_streams = 2;
        c.events.heartbeat_ms = 200;
    };
    let (srv, catalog, _source) = start_with(edit, mail_type().max_streams(1));
    catalog.add_event_type(EventType::new::<Inbox, Mail>("other", "Other", &[Delivery::Push])).unwrap();
    let mut first = SseReader::open(&srv.url, &stream_request(1, json!({"name": "mail"}))).await;
    expect(&mut first, 1, "active").await;
    let refused = open(&srv.url, &stream_request(2, json!({"name": "mail"}))).await.err().expect("refused");
    assert_eq!(refused["error"]["code"], -32013, "{refused}");
    assert_eq!(refused["error"]["data"], json!({"limit": "subscriptions", "max": 1}));
    let mut second = SseReader::open(&srv.url, &stream_request(3, json!({"name": "other"}))).await;
    expect(&mut second, 3, "active").await;
    let full = open(&srv.url, &stream_request(4, json!({"name": "other"}))).await.err().expect("refused");
    assert_eq!(full["error"]["data"], json!({"limit": "subscriptions", "max": 2}), "{full}");
    drop(first);
    // The server notices the closed stream when it next writes to it, at
    // the latest on its heartbeat: wait for the place to come back.
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        match open(&srv.url, &stream_request(5, json!({"name": "mail"}))).await {
            Ok(mut again) => {
                expect(&mut again, 5, "active").await;
                break;
            }
            Err(refusal) => assert!(Instant::now() < deadline, "the closed stream's place never came back: {refusal}"),
        };
        actix_rt::time::sleep(Duration::from_millis(50)).await;
    }
    srv.stop().await;
}

#[actix_rt::test]
async fn a_stream_outlives_the_request_timeout() {
    let (srv, _catalog, source) = start_with(
        |c| {
            c.request.timeout_ms = 300;
            c.events.heartbeat_ms = 200;
        },
        mail_type(),
    );
    let mut stream = SseReader::open(&srv.url, &stream_request(9, json!({"name": "mail"}))).await;
    expect(&mut stream, 9, "active").await;
    for _ in 0..5 {
        expect(&mut stream, 9, "heartbeat").await;
    }
    source.emit(mail("ann")).unwrap();
    assert_eq!(expect(&mut stream, 9, "event").await["data"]["from"], "ann", "open past 5 timeouts");
    srv.stop().await;
}

async fn poll(url: &str, params: Value) -> Value {
    let reply = post(url, &request(json!(1), "events/poll", params)).await;
    reply.response().get("result").cloned().unwrap_or_else(|| panic!("{}", reply.raw))
}

#[actix_rt::test]
async fn a_long_poll_answers_as_soon_as_a_matching_occurrence_comes_and_quiet_at_its_timeout() {
    let (srv, _catalog, source) = start_with(|_| {}, mail_type());
    let start = poll(&srv.url, json!({"name": "mail"})).await;
    let held = json!({"name": "mail", "arguments": {"from": "ann"}, "cursor": start["cursor"], "timeoutMs": 20_000});
    let began = Instant::now();
    let url = srv.url.clone();
    let mut answer = actix_rt::spawn(async move { poll(&url, held).await });
    // Mail from bob does not answer it; mail from ann does, long before
    // the poll's 20 s.
    source.emit(mail("bob")).unwrap();
    let result = loop {
        source.emit(mail("ann")).unwrap();
        match actix_rt::time::timeout(Duration::from_millis(100), &mut answer).await {
            Ok(result) => break result.unwrap(),
            Err(_) => assert!(began.elapsed() < Duration::from_secs(10), "the poll was not woken"),
        }
    };
    let events = result["events"].as_array().unwrap();
    assert!(!events.is_empty() && events.iter().all(|e| e["data"]["from"] == "ann"), "{result}");
    let quiet_from =
        json!({"name": "mail", "cursor": result["cursor"], "arguments": {"from": "nobody"}, "timeoutMs": 300});
    let began = Instant::now();
    let quiet = poll(&srv.url, quiet_from).await;
    assert!(began.elapsed() >= Duration::from_millis(300), "held for its timeoutMs");
    assert_eq!((quiet["events"].as_array().unwrap().len(), &quiet["truncated"]), (0, &json!(false)), "{quiet}");
    srv.stop().await;
}

#[actix_rt::test]
async fn a_long_poll_is_held_no_longer_than_the_server_allows_and_a_removal_ends_it() {
    let (srv, catalog, _source) = start_with(|c| c.events.max_poll_wait_ms = 200, mail_type());
    let start = poll(&srv.url, json!({"name": "mail"})).await;
    let long = json!({"name": "mail", "cursor": start["cursor"], "timeoutMs": u64::MAX});
    let quiet = poll(&srv.url, long.clone()).await;
    assert_eq!(quiet["events"], json!([]), "answered empty at the server's 200 ms: {quiet}");
    srv.stop().await;

    let (srv, catalog2, _source) = start_with(|_| {}, mail_type());
    drop(catalog);
    // Another type keeps the extension declared once `mail` is gone.
    catalog2.add_event_type(EventType::new::<Inbox, Mail>("other", "Other", &[Delivery::Poll])).unwrap();
    let start = poll(&srv.url, json!({"name": "mail"})).await;
    let url = srv.url.clone();
    let held = json!({"name": "mail", "cursor": start["cursor"], "timeoutMs": 20_000});
    let mut answer = actix_rt::spawn(async move { post(&url, &request(json!(1), "events/poll", held)).await });
    // Removed while held (or before: then the poll finds no type at all).
    catalog2.remove_event_type("mail").unwrap();
    let reply = actix_rt::time::timeout(Duration::from_secs(10), &mut answer).await.expect("answered").unwrap();
    assert_eq!(reply.error_code(), Some(-32011), "{}", reply.raw);
    srv.stop().await;
}

#[actix_rt::test]
async fn over_stdio_a_stream_is_tagged_and_stops_at_notifications_cancelled() {
    let mut child = StdioChild::spawn(&[]);
    let open = request(json!(5), "events/stream", json!({"name": "clock.tick"}));
    child.send(&open).await;
    let active = child.recv().await;
    assert_eq!(active["method"], "notifications/events/active", "{active}");
    assert_eq!(active["params"]["_meta"]["io.modelcontextprotocol/subscriptionId"], 5);
    let tick = child.recv().await;
    assert_eq!(
        (&tick["method"], &tick["params"]["name"]),
        (&json!("notifications/events/event"), &json!("clock.tick"))
    );
    let cancel = json!({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 5}});
    child.send(&cancel).await;
    // Ticks come every second: over the next two and a half, none of the
    // cancelled stream's arrives after the first answer to a later request.
    child.send(&request(json!(6), "events/list", json!({}))).await;
    let before = child.recv_until_id(&json!(6)).await;
    assert!(before.iter().all(|m| m.get("id").is_none() || m["id"] == 6), "{before:?}");
    let until = Instant::now() + Duration::from_millis(2500);
    let mut id = 7;
    while Instant::now() < until {
        actix_rt::time::sleep(Duration::from_millis(100)).await;
        child.send(&request(json!(id), "events/list", json!({}))).await;
        let messages = child.recv_until_id(&json!(id)).await;
        assert_eq!(messages.len(), 1, "only the answer, nothing of the cancelled stream: {messages:?}");
        id += 1;
    }
    child.close().await;
}

#[actix_rt::test]
async fn a_client_that_reads_nothing_holds_its_place_and_hears_of_the_gap_when_it_reads_again() {
    let edit = |c: &mut Config| c.request.outbound_buffer = 4;
    let bounded = mail_type().max_streams(1).history(20, Duration::from_secs(60));
    let (srv, _catalog, source) = start_with(edit, bounded);
    // A client that sends its request and reads nothing of the answer.
    let open_body = stream_request(1, json!({"name": "mail"}));
    let body = serde_json::to_vec(&open_body).unwrap();
    let address = srv.url.trim_start_matches("http://").split('/').next().unwrap().to_owned();
    let mut silent = tokio::net::TcpStream::connect(&address).await.unwrap();
    let mut head = format!("POST /mcp HTTP/1.1\r\nHost: {address}\r\nContent-Length: {}\r\n", body.len());
    for (k, v) in standard_headers(&open_body) {
        head.push_str(&format!("{k}: {v}\r\n"));
    }
    head.push_str("\r\n");
    tokio::io::AsyncWriteExt::write_all(&mut silent, &[head.as_bytes(), &body].concat()).await.unwrap();
    let deadline = Instant::now() + Duration::from_secs(10);
    while open(&srv.url, &stream_request(2, json!({"name": "mail"}))).await.is_ok() {
        assert!(Instant::now() < deadline, "the silent client's stream never opened");
    }
    // Far more than the socket buffers, the 4 queued messages and the
    // 20 of the history hold: the stream waits, and keeps its place.
    let page = "x".repeat(60 * 1024);
    for _ in 0..400 {
        source.emit(json!({"from": "bulk", "page": page})).unwrap();
    }
    assert!(open(&srv.url, &stream_request(3, json!({"name": "mail"}))).await.is_err(), "the place is held");
    // Reading again, the client drains what waited, is told of the gap,
    // and hears what comes next.
    source.emit(mail("after")).unwrap();
    let mut seen = Vec::new();
    let mut chunk = vec![0u8; 1 << 16];
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        let text = String::from_utf8_lossy(&seen);
        if text.contains(r#""truncated":true"#) && text.contains(r#""from":"after""#) {
            break;
        }
        let left = deadline.saturating_duration_since(Instant::now());
        let read = actix_rt::time::timeout(left, tokio::io::AsyncReadExt::read(&mut silent, &mut chunk));
        let n = read.await.expect("the gap and the next occurrence within 20 s").unwrap();
        assert!(n > 0, "the stream ended: {}", String::from_utf8_lossy(&seen[seen.len().saturating_sub(500)..]));
        seen.extend_from_slice(&chunk[..n]);
    }
    srv.stop().await;
}

#[actix_rt::test]
async fn at_shutdown_a_stream_ends_with_its_final_result_and_the_server_waits_for_it() {
    let (srv, _catalog, _source) = start_with(|_| {}, mail_type());
    let mut stream = SseReader::open(&srv.url, &stream_request(12, json!({"name": "mail"}))).await;
    expect(&mut stream, 12, "active").await;
    let open = srv.server.shutdown().await;
    assert_eq!(open, 1, "the stream was open");
    let last = stream.next().await.expect("the final result");
    assert_eq!(
        (&last["id"], &last["result"]["_meta"]["io.modelcontextprotocol/subscriptionId"]),
        (&json!(12), &json!(12))
    );
    assert!(last["error"].is_null(), "a result, not an error: {last}");
    assert_eq!(stream.next().await, None);
    srv.stop().await;
}
