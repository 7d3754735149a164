//! The ceiling for `mcp-load call`: a raw actix-web handler that parses the
//! JSON-RPC body and echoes `params.arguments.text` in a `tools/call`-shaped
//! reply, with none of MCP's validation or per-request actors. For
//! `mcp-load listen` it answers `subscriptions/listen` with the smallest SSE
//! stream actix-web makes: the acknowledgement, then nothing (no keep-alive,
//! no subscription state): the floor for memory per idle stream.
//!
//! With `--fanout` it is instead the floor of a delivery for `mcp-load
//! fanout`: each listen stream's body reads from a channel, and a
//! `tools/call` of `test_trigger_resource_update` (or
//! `test_trigger_tool_change`) sends one `notifications/resources/updated`
//! (or `tools/list_changed`) event, the same bytes for every stream, down
//! every open stream's channel — no filter, no subscription id, no hub.
//! Without it the handlers above are untouched by any of this.
//!
//! `echo-baseline [ADDR:PORT] [--fanout] [--h2c]` (default
//! `127.0.0.1:8090`, workers = 1); `--h2c` also accepts HTTP/2 without TLS,
//! for the HTTP/2 floor of `benches/scale.sh`.

use std::cell::RefCell;

use actix_web::{web, App, HttpResponse, HttpServer};
use futures::channel::mpsc;
use futures::StreamExt;
use mcp_load::echo::echo_reply;
use mcp_load::triggers::{acknowledgement, notification_of};
use serde_json::{json, Value};

thread_local! {
    /// `--fanout`: the open streams' senders (one worker: every stream is on this thread).
    static STREAMS: RefCell<Vec<mpsc::UnboundedSender<web::Bytes>>> = const { RefCell::new(Vec::new()) };
}

/// The acknowledgement, then an open stream that never sends again.
fn idle_stream(id: &Value) -> HttpResponse {
    let first = web::Bytes::from(format!("data: {}\n\n", acknowledgement(id)));
    let stream = futures::stream::once(async move { Ok::<_, std::convert::Infallible>(first) })
        .chain(futures::stream::pending());
    HttpResponse::Ok().content_type("text/event-stream").streaming(stream)
}

/// `--fanout`: the acknowledgement, then whatever a trigger sends.
fn fed_stream(id: &Value) -> HttpResponse {
    let first = web::Bytes::from(format!("data: {}\n\n", acknowledgement(id)));
    let (tx, rx) = mpsc::unbounded();
    STREAMS.with(|s| s.borrow_mut().push(tx));
    let stream = futures::stream::once(async move { first }).chain(rx).map(Ok::<_, std::convert::Infallible>);
    HttpResponse::Ok().content_type("text/event-stream").streaming(stream)
}

/// `--fanout`: sends `event` down every open stream's channel and forgets
/// closed streams; how many streams it went to.
fn fan_out(event: &Value) -> usize {
    let frame = web::Bytes::from(format!("data: {event}\n\n"));
    STREAMS.with(|s| {
        let mut streams = s.borrow_mut();
        streams.retain(|tx| tx.unbounded_send(frame.clone()).is_ok());
        streams.len()
    })
}

/// `--fanout`: listen streams fed by triggers, and the two trigger tools.
async fn fanout(body: web::Bytes) -> HttpResponse {
    let Ok(v) = serde_json::from_slice::<Value>(&body) else {
        return HttpResponse::BadRequest().finish();
    };
    if v["method"] == "subscriptions/listen" {
        return fed_stream(&v["id"]);
    }
    let Some(event) = notification_of(v["params"]["name"].as_str().unwrap_or_default(), &v["params"]["arguments"])
    else {
        let error = json!({"jsonrpc": "2.0", "id": v["id"], "error": {"code": -32601, "message": "only the fan-out triggers are served with --fanout"}});
        return HttpResponse::NotFound().json(error);
    };
    let sent = fan_out(&event);
    let text = format!("notified {sent} streams");
    let reply = json!({"jsonrpc": "2.0", "id": v["id"], "result": {"content": [{"type": "text", "text": text}], "resultType": "complete"}});
    HttpResponse::Ok().json(reply)
}

async fn echo(body: web::Bytes) -> HttpResponse {
    let Ok(v) = serde_json::from_slice::<Value>(&body) else {
        return HttpResponse::BadRequest().finish();
    };
    if v["method"] == "subscriptions/listen" {
        return idle_stream(&v["id"]);
    }
    HttpResponse::Ok().content_type("application/json").body(echo_reply(&v))
}

#[actix_web::main]
async fn main() -> std::io::Result<()> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let fanout_mode = args.iter().any(|a| a == "--fanout");
    let h2c = args.iter().any(|a| a == "--h2c");
    let addr = args.iter().find(|a| !a.starts_with("--")).cloned().unwrap_or_else(|| "127.0.0.1:8090".into());
    let server = HttpServer::new(move || {
        let handler = if fanout_mode { web::post().to(fanout) } else { web::post().to(echo) };
        App::new().route("/mcp", handler)
    })
    .workers(1);
    let server = if h2c { server.bind_auto_h2c(&addr)? } else { server.bind(&addr)? };
    for a in server.addrs() {
        eprintln!("listening on http://{a}/mcp");
    }
    server.run().await
}
