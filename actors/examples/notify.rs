//! A resource that changes in the background: a task updates it every
//! second and tells the listeners (`subscriptions/listen` with
//! `resourceSubscriptions: ["clock://tick"]` get `notifications/resources/updated`).
//! `cargo run -p actix-mcp --example notify` serves HTTP on 127.0.0.1:8080.
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

use actix_mcp::prelude::*;

/// The resource's URI.
pub const TICK: &str = "clock://tick";

/// How many ticks so far.
#[derive(Default)]
pub struct Ticks(pub AtomicU64);

/// The server, for `main` and the tests.
pub fn server() -> McpServerBuilder {
    McpServer::builder(server_info!()).state(Ticks::default()).resource(Resource::reading(
        TICK,
        "tick",
        "text/plain",
        |ctx| async move { Ok(ctx.state::<Ticks>()?.0.load(Ordering::SeqCst).to_string()) },
    ))
}

/// Ticks every `period`: updates the state, then tells the listeners.
pub async fn tick(catalog: Arc<Catalog>, period: Duration) {
    let mut every = actix_rt::time::interval(period);
    every.tick().await;
    loop {
        every.tick().await;
        if let Some(ticks) = catalog.state::<Ticks>() {
            ticks.0.fetch_add(1, Ordering::SeqCst);
        }
        catalog.notify_resource_updated(TICK);
    }
}

#[actix_web::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let server = server().build()?;
    actix_rt::spawn(tick(server.catalog().clone(), Duration::from_secs(1)));
    serve_http(server).await?;
    Ok(())
}
