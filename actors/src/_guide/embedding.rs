//! # Embedding in an existing actix-web app
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
//!
//! ## Pay for what you use: the features
//!
//! The core is always there: the builder, the catalog, the request actors,
//! the intake, the hub with its in-memory backend, Streamable HTTP + SSE and
//! stdio, legacy sessions, tasks in memory, MCP Apps views, Skills and the
//! in-process [`test`](crate::test) client. Everything else is a cargo
//! feature, all of them on by default (so `cargo run` and the binary are
//! whole):
//!
//! | feature   | what it adds                                                    | crates it brings |
//! |-----------|-----------------------------------------------------------------|------------------|
//! | `fs`      | the `fs` catalog, `skill_dir`, `Skill::from_dir` (notify, walkdir, regex) | +6  |
//! | `redis`   | the hub and the task store across instances over Redis          | +7               |
//! | `oauth`   | an OAuth 2.1 resource server: JWT and introspection (`auth.mode = "oauth"`) | +77 |
//! | `client`  | the MCP client (`actix_mcp::client`, `actix-mcp client`)      | +77              |
//! | `gateway` | other MCP servers behind this one (`[[upstreams]]`); implies `client` | +77        |
//! | `tls`     | HTTPS served by the server itself (`http.tls`, rustls)          | +10              |
//! | `metrics` | the Prometheus exporter (`[metrics]`, `/metrics`)               | +17              |
//! | `otel`    | one OTLP span per request and per listen stream (`[otel]`)      | +31              |
//! | `h2c`     | HTTP/2 without TLS (`http.h2c`)                                 | +1               |
//! | `policy`  | Cedar policies deciding which calls each caller may make (`[policy]`) | +43        |
//! | `cli`     | what only the program needs: clap, TOML files, jemalloc         | +21              |
//!
//! ("crates it brings": `cargo tree -p actix-mcp --no-default-features
//! --features F -e normal`, distinct crates, less the core's 160; `oauth`
//! and `client` share most of theirs, reqwest and hyper.)
//!
//! `policy` brings `cedar-policy`, which turns on serde_json's
//! `preserve_order` for the whole build: JSON objects keep the order they
//! were read or built in (a gateway passes an upstream's key order on), and a
//! `serde_json::Value` is larger (72 bytes instead of 32). The request path
//! keeps what it moves small regardless (the client's capabilities travel
//! behind an `Arc`), so a stateless `tools/call` runs in as many
//! instructions with it as without (54,817 and 54,940 by
//! `benches/instructions.sh`; a legacy one about 1 % more); compare JSON by
//! value, not by its key order.
//!
//! An application that only wants MCP tools on its actix-web app takes the
//! core alone:
//!
//! ```toml
//! [dependencies]
//! actix-mcp = { version = "0.1", default-features = false }
//! # and what it needs of the rest, e.g.
//! # actix-mcp = { version = "0.1", default-features = false, features = ["oauth", "metrics"] }
//! ```
//!
//! That is 160 crates (`cargo tree -p actix-mcp --no-default-features -e
//! normal`) against 295 with every feature, and a clean debug build of the
//! library (empty target directory, 2 cores) of 89 s against 251 s
//! (249 s before the features existed, when every embedder paid for all
//! of it). `actors/examples/embed_lean.rs` is such an application;
//! `tests/embed_lean.rs` builds it with `--no-default-features` and calls its
//! tool over HTTP.
//!
//! No feature changes behaviour silently: a configuration that needs one the
//! build lacks (`hub.backend = "redis"` without `redis`, `auth.mode =
//! "oauth"` without `oauth`, `[[upstreams]]` without `gateway`, `http.tls`,
//! `http.h2c` or `metrics.enabled = true` without theirs) is refused when the
//! server is built, with a sentence naming the feature.
//! [`config::FEATURES`](crate::config::FEATURES) says which ones a build has.
//! `metrics.enabled` defaults to whether the build has `metrics`. The library
//! records its metrics through the `metrics` facade whatever the features, so
//! an application with its own recorder (any `metrics` exporter) gets them
//! without the `metrics` feature.
