//! The ceiling for `mcp-load call`: a raw actix-web handler that parses the
//! JSON-RPC body and echoes `params.arguments.text` in a `tools/call`-shaped
//! reply, with none of MCP's validation or per-request actors.
//!
//! `echo-baseline [ADDR:PORT]` (default `127.0.0.1:8090`, workers = 1).

use actix_web::{web, App, HttpResponse, HttpServer};
use serde_json::{json, Value};

async fn echo(body: web::Bytes) -> HttpResponse {
    let Ok(v) = serde_json::from_slice::<Value>(&body) else {
        return HttpResponse::BadRequest().finish();
    };
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
