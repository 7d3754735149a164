//! A server for the **stateless Model Context Protocol** (revision
//! `2026-07-28`, plus the legacy `initialize`-era revisions for the clients
//! that still need them) on [actix](https://actix.rs): every request carries
//! its protocol version, client capabilities and identity in `_meta`, so any
//! request can be served by any instance behind a plain load balancer. Each
//! request runs in its own actor; a subscription hub actor fans change
//! notifications out to listener actors behind SSE streams or stdout.
//!
//! # Start here
//!
//! `use actix_mcp::prelude::*;` brings everything a server needs. The types
//! you touch:
//!
//! - [`McpServer::builder`] → [`McpServerBuilder`](builder::McpServerBuilder):
//!   name the server ([`server_info!`]), add [`Tool`](catalog::Tool)s,
//!   [`Resource`](catalog::Resource)s, [`ResourceTemplate`](catalog::ResourceTemplate)s and
//!   [`Prompt`](catalog::Prompt)s, shared state, then `run_http(addr)` /
//!   `run_stdio()` (a program) or `build()` (inside your actix app).
//! - [`RequestContext`]: what a handler sees besides its arguments —
//!   progress and log notifications, cancellation, asking the client for
//!   input, shared state, headers, extensions and the caller's identity.
//! - [`HandlerError`]: a protocol error; a failure the model should see is a
//!   tool result with `isError` (return a `Result` whose `Err` is `Display`).
//! - Embedding in an existing actix-web app:
//!   [`transport::http::configure`]; your own actors talk to the
//!   subscription hub through [`McpServer::notifier`] and
//!   [`McpServer::subscribe`].
//! - Testing without sockets: [`test::TestClient`].
//! - Authorization (`[auth]`): OAuth 2.1 bearer tokens, API keys or your
//!   own [`auth::Authenticator`]; handlers read the caller with
//!   [`RequestContext::auth`]; items ask for scopes with `with_scopes`.
//!
//! [`protocol`] is the `mcp-protocol` crate (wire types, errors, versions);
//! `schemars`, `serde` and `serde_json` are re-exported so their versions
//! match this crate's.
//!
//! # Guides
//!
//! [`_guide`] has a page per topic, with examples the tests compile and run:
//! [configuration](_guide::configuration), [tools, resources, prompts and
//! input from the client](_guide::handlers),
//! [subscriptions](_guide::subscriptions), [legacy clients](_guide::legacy_clients),
//! [authorization](_guide::authorization), [tasks](_guide::tasks),
//! [several instances](_guide::scaling_out), [operating it](_guide::operating)
//! and [embedding](_guide::embedding).
//!
//! A complete server:
//!
//! ```no_run
//! use actix_mcp::prelude::*;
//!
//! /// Adds two numbers.
//! #[derive(Deserialize, JsonSchema)]
//! struct Add {
//!     a: f64,
//!     b: f64,
//! }
//!
//! fn main() -> Result<(), BuildError> {
//!     McpServer::builder(server_info!())
//!         .tool(Tool::new("add", "", |x: Add, _ctx| async move { Ok(format!("{}", x.a + x.b)) }))
//!         .run()
//! }
//! ```
//!
//! # Layout of this crate
//! From the edge inwards:
//! - [`transport`]: Streamable HTTP ([`transport::http`]: `configure`,
//!   `bind`, `serve`; `HttpError`), its SSE wire format
//!   ([`transport::sse`]), and stdio ([`transport::stdio`]: a connection
//!   actor per stream). Only these files name actix-web or stdin/stdout,
//!   besides [`auth`], whose authenticators read an HTTP request head.
//! - [`intake`]: the one dispatcher: each incoming message becomes a
//!   [`intake::Route`], and the era is decided there.
//! - [`server`]: [`McpServer`], the service, the hub and the sessions, with
//!   the entry points that start the actors of a route. It names no transport.
//! - [`request`]: the per-request actor; [`era`]: the era it serves in;
//!   [`context`]: what a handler sees of its request; [`outbound`]: a
//!   request's channel back to its transport.
//! - [`service`]: request semantics over the catalog, one file per method
//!   family, and the `requestState` sealer.
//! - [`hub`], [`relay`], [`listener`], [`sink`]: the subscription hub, its
//!   delivery arm on each thread, the listener actors and where they write;
//!   [`redis_backend`] carries hub events between instances.
//! - [`legacy`]: sessions of clients that open with `initialize` (dual-era),
//!   as actors.
//! - [`msg`]: control messages several actors share.
//! - [`catalog`]: the handler API (tools, resources, templates, prompts,
//!   completions); [`catalogs`]: the built-in catalogs (`fs`, `everything`).
//! - [`auth`]: authorization of HTTP requests — authenticators, scope
//!   policy, protected-resource metadata.
//! - [`config`], [`logging`], [`cli`]: typed configuration, the slog root
//!   logger, the command line; [`clock`]: where token expiry reads time.
//!
//! Dependencies point down only: transports → actors → `mcp_protocol`, and
//! no module imports, directly or through others, a module that imports it
//! back.

pub mod _guide;
pub mod auth;
pub mod bridge;
pub mod build_error;
pub mod builder;
pub mod catalog;
pub mod catalogs;
pub mod clock;
pub mod config;
pub mod context;
pub mod error;
pub mod extensions;
pub mod facts;
pub mod hub;
pub mod identity;
pub mod logging;
pub mod prelude;
pub mod request_headers;
pub mod runner;
pub mod server;
pub mod tasks;
pub mod telemetry;
pub mod test;
pub mod trace_scope;
pub mod transport;

// The machinery under the embedding API: public for the binary, the
// project's tests and benches, not for applications.
#[doc(hidden)]
pub mod cli;
#[doc(hidden)]
pub mod era;
#[doc(hidden)]
pub mod intake;
#[doc(hidden)]
pub mod legacy;
#[doc(hidden)]
pub mod listener;
#[doc(hidden)]
pub mod msg;
#[doc(hidden)]
pub mod outbound;
#[doc(hidden)]
pub mod redis_backend;
mod redis_subscription;
#[doc(hidden)]
pub mod relay;
#[doc(hidden)]
pub mod request;
#[doc(hidden)]
pub mod service;
#[doc(hidden)]
pub mod sink;

pub use mcp_protocol as protocol;
pub use schemars;
pub use serde;
pub use serde_json;

pub use context::RequestContext;
pub use error::HandlerError;
pub use server::McpServer;
