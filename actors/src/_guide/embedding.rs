//! # Embedding in an existing actix-web app
//!
//!
//! `transport::http::configure(server)` registers the endpoint on any `App`; see
//! `actors/examples/embed.rs` (`cargo run -p actix-mcp --example embed`). The
//! library leaves the allocator to the program (the `actix-mcp` binary uses
//! jemalloc); with glibc's, `hub.memory_trim_ms` returns the memory of closed
//! streams to the system.
//!
//! ```rust,no_run
//! use actix_mcp::prelude::*;
//! use actix_web::{web, App, HttpServer};
//!
//! #[actix_web::main]
//! async fn main() -> Result<(), Box<dyn std::error::Error>> {
//!     let mut config = Config::default();
//!     config.http.path = "/api/mcp".into();
//!     let mcp = McpServer::builder(server_info!()).config(config).build()?;
//!     HttpServer::new(move || {
//!         App::new()
//!             .route("/health", web::get().to(|| async { "ok" }))
//!             .configure(actix_mcp::transport::http::configure(mcp.clone()))
//!     })
//!     .bind(("127.0.0.1", 8090))?
//!     .run()
//!     .await?;
//!     Ok(())
//! }
//! ```
//!
//! Your own actors use the hub directly: `server.notifier()` is a
//! `Recipient<Publish>` for changes they observe (to every listener, on every
//! instance), and `server.subscribe(filter, recipient)` registers a
//! `Recipient<HubEvent>` as a listener — bounded by its mailbox, closed as
//! lagging when it falls behind, like a stream (`actors/examples/actor_bridge.rs`).
