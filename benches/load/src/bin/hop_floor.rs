//! The floor of a gateway hop, for `benches/gateway.sh`: a raw actix-web
//! handler in front of a stdio MCP server (its child) that does nothing a
//! proxy could skip. `POST /mcp` writes the request's body to the child as
//! one line and answers with the line the child writes back — no parsing,
//! no id mapping, one call at a time (the floor holds at one call in
//! flight). `POST /local` answers a `tools/call` itself (the echo of
//! `echo-baseline`: `params.arguments.text` back) and passes anything else
//! to the child, so that the same process serves a call where it arrives:
//! `/mcp` less `/local` is what forwarding a call costs at the least (one
//! more sleep and wake-up, a pipe write and read, less a small JSON parse).
//!
//! `hop-floor ADDR:PORT COMMAND LINE…` (one worker; the command is run by
//! `sh -c`).

use std::process::Stdio;

use actix_web::{web, App, HttpResponse, HttpServer};
use mcp_load::echo::echo_reply;
use serde_json::Value;
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use tokio::process::{Child, ChildStdin, ChildStdout, Command};
use tokio::sync::Mutex;

/// The child and its pipes, opened on the worker's runtime at its first call.
#[derive(Default)]
struct Upstream {
    pipes: Mutex<Option<(Child, ChildStdin, BufReader<ChildStdout>)>>,
    command: String,
}

impl Upstream {
    /// The child's answer to `body` (one line each way).
    async fn forward(&self, body: &[u8]) -> std::io::Result<Vec<u8>> {
        let mut pipes = self.pipes.lock().await;
        if pipes.is_none() {
            let mut child = Command::new("sh")
                .args(["-c", &self.command])
                .stdin(Stdio::piped())
                .stdout(Stdio::piped())
                .kill_on_drop(true)
                .spawn()?;
            let (stdin, stdout) = (child.stdin.take(), child.stdout.take());
            let (Some(stdin), Some(stdout)) = (stdin, stdout) else {
                return Err(std::io::Error::other("the child has no pipes"));
            };
            *pipes = Some((child, stdin, BufReader::new(stdout)));
        }
        let Some((_, stdin, stdout)) = pipes.as_mut() else { unreachable!("opened above") };
        let mut line = Vec::with_capacity(body.len() + 1);
        line.extend_from_slice(body);
        line.push(b'\n');
        stdin.write_all(&line).await?;
        let mut answer = Vec::new();
        loop {
            answer.clear();
            if stdout.read_until(b'\n', &mut answer).await? == 0 {
                return Err(std::io::Error::other("the child closed its output"));
            }
            // A notification of no request (a log line) is not the answer.
            if !answer.starts_with(b"{\"jsonrpc\":\"2.0\",\"method\"") {
                return Ok(answer);
            }
        }
    }
}

fn answered(result: std::io::Result<Vec<u8>>) -> HttpResponse {
    match result {
        Ok(line) => HttpResponse::Ok().content_type("application/json").body(line),
        Err(e) => HttpResponse::BadGateway().body(e.to_string()),
    }
}

async fn forward(body: web::Bytes, upstream: web::Data<Upstream>) -> HttpResponse {
    answered(upstream.forward(&body).await)
}

async fn local(body: web::Bytes, upstream: web::Data<Upstream>) -> HttpResponse {
    let Ok(v) = serde_json::from_slice::<Value>(&body) else {
        return HttpResponse::BadRequest().finish();
    };
    if v["method"] != "tools/call" {
        return answered(upstream.forward(&body).await);
    }
    HttpResponse::Ok().content_type("application/json").body(echo_reply(&v))
}

#[actix_web::main]
async fn main() -> std::io::Result<()> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let (Some(addr), false) = (args.first(), args.len() < 2) else {
        eprintln!("usage: hop-floor ADDR:PORT COMMAND LINE…");
        std::process::exit(2);
    };
    let command = args[1..].join(" ");
    let upstream = web::Data::new(Upstream { pipes: Mutex::new(None), command });
    let server = HttpServer::new(move || {
        App::new()
            .app_data(upstream.clone())
            .route("/mcp", web::post().to(forward))
            .route("/local", web::post().to(local))
    })
    .workers(1)
    .bind(addr)?;
    for a in server.addrs() {
        eprintln!("listening on http://{a}/mcp");
    }
    server.run().await
}
