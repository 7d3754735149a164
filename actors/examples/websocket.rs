//! MCP over WebSocket: a whole transport in one small driver. Each text
//! frame the client sends is one JSON-RPC message and each message the
//! server sends is one text frame; the `StreamConnection` actor does the
//! rest, as it does for stdio (routing through the intake, requests, listen
//! streams, a legacy session, cancellation, the in-flight cap, the drain
//! when the client leaves). Frames are bounded by `stdio.max_line_bytes`.
//!
//! ```sh
//! cargo run -p actix-mcp --example websocket
//! # then send JSON-RPC text frames to ws://127.0.0.1:8090/ws
//! ```

use actix::{Actor, AsyncContext};
use actix_mcp::channels::outbound;
use actix_mcp::prelude::*;
use actix_mcp::transport::stream::{Inbound, StreamConnection};
use actix_web::{web, App, HttpRequest, HttpResponse, HttpServer};
use actix_ws::AggregatedMessage;
use futures::future::ready;
use futures::StreamExt;

/// The example's MCP server: one tool.
pub fn server() -> McpServerBuilder {
    McpServer::builder(server_info!())
        .tool(Tool::new("shout", "Upper-cases its text", |t: Text, _ctx| async move { Ok(t.text.to_uppercase()) }))
}

/// The `shout` tool's arguments.
#[derive(Deserialize, JsonSchema)]
pub struct Text {
    /// What to shout.
    pub text: String,
}

/// Upgrades the request to a WebSocket carrying MCP messages.
pub async fn websocket(
    req: HttpRequest,
    body: web::Payload,
    server: web::Data<McpServer>,
) -> actix_web::Result<HttpResponse> {
    let (response, mut session, frames) = actix_ws::handle(&req, body)?;
    let limits = &server.config().stdio;
    let max = limits.max_line_bytes;
    // Input: each text (or binary) message, until the client closes, a frame
    // breaks a limit, or the connection fails.
    let inbound = frames
        .max_frame_size(max)
        .aggregate_continuations()
        .max_continuation_size(max)
        .take_while(|frame| ready(matches!(frame, Ok(m) if !matches!(m, AggregatedMessage::Close(_)))))
        .filter_map(|frame| {
            ready(match frame {
                Ok(AggregatedMessage::Text(text)) => Some(Inbound::Message(text.as_bytes().to_vec())),
                Ok(AggregatedMessage::Binary(bytes)) => Some(Inbound::Message(bytes.to_vec())),
                _ => None,
            })
        });
    // Output: one writer, one text frame per message, then a close.
    let (writer, mut messages) = outbound::channel(limits.writer_buffer);
    let server = server.get_ref().clone();
    StreamConnection::create(move |ctx| {
        ctx.add_stream(inbound);
        StreamConnection::new(server, "websocket", writer)
    });
    actix_rt::spawn(async move {
        while let Some(message) = messages.recv().await {
            let text = String::from_utf8_lossy(message.bytes()).into_owned();
            if session.text(text).await.is_err() {
                return;
            }
        }
        let _ = session.close(None).await;
    });
    Ok(response)
}

#[actix_web::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mcp = server().build()?;
    eprintln!("listening on ws://127.0.0.1:8090/ws");
    HttpServer::new(move || App::new().app_data(web::Data::new(mcp.clone())).route("/ws", web::get().to(websocket)))
        .bind(("127.0.0.1", 8090))?
        .run()
        .await?;
    Ok(())
}
