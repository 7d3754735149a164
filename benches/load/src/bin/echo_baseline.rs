//! The ceiling for `mcp-load call`: a raw actix-web handler that parses the
//! JSON-RPC body and echoes `params.arguments.text` in a `tools/call`-shaped
//! reply, with none of MCP's validation or per-request actors. For
//! `mcp-load listen` it answers `subscriptions/listen` with the smallest SSE
//! stream actix-web makes: the acknowledgement, then nothing (no keep-alive,
//! no subscription state): the floor for memory per idle stream.
//!
//! `echo-baseline [ADDR:PORT]` (default `127.0.0.1:8090`, workers = 1).

use actix_web::{web, App, HttpResponse, HttpServer};
use futures::StreamExt;
use serde_json::{json, Value};

/// The acknowledgement, then an open stream that never sends again.
fn idle_stream(id: &Value) -> HttpResponse {
    let ack = json!({"jsonrpc": "2.0", "method": "notifications/subscriptions/acknowledged", "params": {"_meta": {"io.modelcontextprotocol/subscriptionId": id}}});
    let first = web::Bytes::from(format!("data: {ack}\n\n"));
    let stream = futures::stream::once(async move { Ok::<_, std::convert::Infallible>(first) })
        .chain(futures::stream::pending());
    HttpResponse::Ok().content_type("text/event-stream").streaming(stream)
}

async fn echo(body: web::Bytes) -> HttpResponse {
    let Ok(v) = serde_json::from_slice::<Value>(&body) else {
        return HttpResponse::BadRequest().finish();
    };
    if v["method"] == "subscriptions/listen" {
        return idle_stream(&v["id"]);
    }
    let text = v["params"]["arguments"]["text"].as_str().unwrap_or_default();
    let reply = json!({"jsonrpc": "2.0", "id": v["id"], "result": {"content": [{"type": "text", "text": text}], "resultType": "complete"}});
    HttpResponse::Ok().content_type("application/json").body(serde_json::to_vec(&reply).unwrap_or_default())
}

#[actix_web::main]
async fn main() -> std::io::Result<()> {
    let addr = std::env::args().nth(1).unwrap_or_else(|| "127.0.0.1:8090".into());
    let server = HttpServer::new(|| App::new().route("/mcp", web::post().to(echo))).workers(1).bind(&addr)?;
    for a in server.addrs() {
        eprintln!("listening on http://{a}/mcp");
    }
    server.run().await
}
