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
//! That app stops as actix-web does by itself: at SIGTERM it stops
//! accepting at once and waits for the requests running, listen streams
//! among them, until its shutdown timeout. It has none of the drain the
//! `actix-mcp` binary does (`/readyz` failing while requests are still
//! served), and its listen streams get no completion result; see
//! "Shutting down as the binary does" below for the one call that gives it
//! both.
//!
//! ## What `configure()` mounts
//!
//! `configure(server)` registers two parts, each at the path the
//! configuration names, from the root of the `App` (or the scope) it is
//! given:
//!
//! | route | mounted when | who may call it |
//! |---|---|---|
//! | `http.path` (`/mcp`), every method | always | as `[auth]` says, behind the `Host`/`Origin` guard (`http.allowed_hosts`, `http.allowed_origins`) |
//! | `/.well-known/oauth-protected-resource` and its path-inserted forms, `GET`/`HEAD` | authorization is on | anyone |
//! | `health.liveness_path` (`/healthz`), `health.readiness_path` (`/readyz`), `GET` | `health.enabled` (default: on) | anyone: no `Host`/`Origin` check, no authorization |
//! | `metrics.path` (`/metrics`), `GET` | `metrics.enabled` (default: on with the `metrics` feature) and `metrics.bind` empty | behind the `Host`/`Origin` guard; with authorization on, credentials granting `metrics.scope` unless `metrics.public`; **with it off, anyone who reaches the port** |
//! | `status.path` (`/status`) and `{status.path}.json`, `GET` | `status.enabled` (default: off) | loopback clients unless `status.allow_remote`, behind the guard |
//!
//! actix-web answers a path with the route registered first, and neither
//! side is told of a clash: an application's own `/metrics` registered
//! after `configure()` is never reached, one registered before hides the
//! server's. Each part can be mounted on its own instead —
//! [`configure_endpoint`](crate::transport::http::configure_endpoint) (the
//! first two rows) and
//! [`configure_operations`](crate::transport::http::configure_operations)
//! (the other three) — so the operational routes can go under a prefix,
//! behind the application's own middleware, or nowhere; or change their
//! paths (`health.*_path`, `metrics.path`) or turn them off
//! (`health.enabled`, `metrics.enabled`) in the configuration.
//!
//! ```rust,no_run
//! use actix_mcp::prelude::*;
//! use actix_mcp::transport::http::{configure_endpoint, configure_operations};
//! use actix_web::{web, App, HttpServer};
//!
//! #[actix_web::main]
//! async fn main() -> Result<(), Box<dyn std::error::Error>> {
//!     let mcp = McpServer::builder(server_info!()).build()?;
//!     HttpServer::new(move || {
//!         App::new()
//!             // The application's own metrics keep their path.
//!             .route("/metrics", web::get().to(|| async { "app_requests_total 7\n" }))
//!             .configure(configure_endpoint(mcp.clone()))
//!             // /internal/mcp/metrics, /internal/mcp/healthz, /internal/mcp/readyz
//!             .service(web::scope("/internal/mcp").configure(configure_operations(mcp.clone())))
//!     })
//!     .bind(("127.0.0.1", 8090))?
//!     .run()
//!     .await?;
//!     Ok(())
//! }
//! ```
//!
//! ## Metrics on a port of their own: `metrics.bind`
//!
//! With `metrics.bind = "127.0.0.1:9100"` the exposition is served on a
//! listener of its own, not on the application's port: `configure()` then
//! mounts no `/metrics`. The server starts that listener when it is built
//! (`build()`, `McpServer::new`), embedded or not, so an embedded server
//! has it as the binary does; an address it cannot listen on fails the
//! build with an error naming `metrics.bind`.
//! [`McpServer::metrics_addrs`](crate::McpServer::metrics_addrs) says where
//! it listens (a port of 0 is chosen by the system). It stops at the end
//! of [`run_until`](crate::transport::http::run_until) (below), else with
//! the actix system.
//!
//! ## Shutting down as the binary does: the drain at SIGTERM
//!
//! [`run_until`](crate::transport::http::run_until) runs your `HttpServer`
//! and, when the future it is given resolves (for the process's signals,
//! [`shutdown_signal`](crate::server::shutdown_signal)), shuts it down as
//! the binary does:
//!
//! 1. at SIGTERM, for `shutdown.drain_ms`, `/readyz` answers 503 (the load
//!    balancer takes the instance out) while every request that still
//!    arrives is served, the MCP ones with `Connection: close`; a second
//!    signal cuts it short, and SIGINT (Ctrl-C) skips it;
//! 2. every `subscriptions/listen` stream gets its completion result, and
//!    the gateway's upstreams end with the server (not restarted, not
//!    logged as down);
//! 3. the `HttpServer` stops accepting; running requests get
//!    `http.shutdown_timeout_secs`, less half a second, then those still
//!    running answer -32603 "server shutting down";
//! 4. the `metrics.bind` listener stops; `run_until` returns.
//!
//! Build the `HttpServer` with `.disable_signals()` — otherwise actix-web
//! acts on SIGINT and SIGTERM itself and stops at once, without the drain
//! — and with the same shutdown timeout:
//!
//! ```rust,no_run
//! use actix_mcp::prelude::*;
//! use actix_mcp::server::shutdown_signal;
//! use actix_mcp::transport::http::{configure, run_until};
//! use actix_web::{web, App, HttpServer};
//!
//! #[actix_web::main]
//! async fn main() -> Result<(), Box<dyn std::error::Error>> {
//!     let mut config = Config::default();
//!     // Longer than the load balancer takes to see /readyz fail.
//!     config.shutdown.drain_ms = 10_000;
//!     let mcp = McpServer::builder(server_info!()).config(config).build()?;
//!     let app = mcp.clone();
//!     let http = HttpServer::new(move || {
//!         App::new()
//!             .route("/hello", web::get().to(|| async { "hello" }))
//!             .configure(configure(app.clone()))
//!     })
//!     .disable_signals()
//!     .shutdown_timeout(mcp.config().http.shutdown_timeout_secs)
//!     .h1_allow_half_closed(false)
//!     .bind(("127.0.0.1", 8090))?
//!     .run();
//!     run_until(mcp, http, shutdown_signal()).await?;
//!     Ok(())
//! }
//! ```
//!
//! An application whose shutdown does more (other servers, its own
//! queues) calls the pieces itself, in this order:
//! [`McpServer::begin_draining`](crate::McpServer::begin_draining) (`/readyz`
//! 503), then after its drain
//! [`McpServer::shutdown`](crate::McpServer::shutdown) (the completion
//! results), `ServerHandle::stop(true)`, and, if requests are still running
//! near its deadline,
//! [`McpServer::abort_requests`](crate::McpServer::abort_requests).
//!
//! ## Reloading
//!
//! [`McpServer::reload`](crate::McpServer::reload) applies a new
//! configuration's policy, quotas, upstreams and pins while the server
//! serves; [`reload_on_hangup`](crate::server::reload_on_hangup) does it at
//! each SIGHUP with a loader of your own (spawn it with
//! `actix_rt::spawn(reload_on_hangup(mcp.clone(), load))`). What the
//! builder set in code is read into each reloaded configuration as it was
//! into the first: upstreams given with
//! [`upstream()`](crate::builder::McpServerBuilder::upstream) keep running
//! whatever the reloaded file lists (a file naming one of them too is
//! refused, as at build), and a file that does not name the server keeps
//! the builder's `serverInfo` and instructions — a SIGHUP meant to change
//! the policy changes only the policy.
//!
//! ## Your own actors and the hub
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
//! feature. The default ones are what a first run of the program uses — `fs`,
//! `tls`, `metrics` and `cli` (214 crates by `cargo tree -e normal`, against
//! 334 with every feature) — and `full` turns on every one (what the tests,
//! CI and the benchmarks build):
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
//! | `config-file` | TOML configuration files (`Config::from_file`, `config_file`), as the program reads them | +6 |
//! | `cli`     | what only the program needs: its command line (clap), jemalloc; implies `config-file` | +21 |
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
//! normal`) against 334 with every feature. An embedder's first build — an
//! actix-web application on actix-mcp without default features, in debug,
//! from an empty target directory (`LEAN=1 bash benches/first-build.sh`) —
//! compiles 163 crates in 122 s of CPU time (2.0 CPU-minutes), 67 s on a
//! 2-core machine; the library with every feature took 251 s there (249 s
//! before the features existed, when every embedder paid for all of it).
//! `actors/examples/embed_lean.rs` is such an application; the
//! package `tests/lean` builds it as an embedder would (actix-mcp without
//! default features, `cargo build --target-dir target/lean -p
//! actix-mcp-lean`) and `tests/embed_lean.rs` calls its tool over HTTP.
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
