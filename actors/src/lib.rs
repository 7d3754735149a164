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
//! The top-level modules are layers; each imports only those below it (CI
//! checks it), from the top down:
//! - [`builder`]: [`McpServerBuilder`](builder::McpServerBuilder), the
//!   embedding API, and the runner the binary uses.
//! - [`transport`]: Streamable HTTP ([`transport::http`]: `configure`,
//!   `bind`, `serve`; `HttpError`), its SSE wire format
//!   ([`transport::sse`]), and connections that carry whole messages in
//!   order ([`transport::stream`]: a connection actor each), of which stdio
//!   ([`transport::stdio`]) is one. Only these files, and the in-process [`test`](mod@test)
//!   client, name actix-web or stdin/stdout: authentication and the
//!   intake read a request's transport-neutral [`facts::Head`].
//! - [`server`]: [`McpServer`], the service, the hub and the sessions, with
//!   the entry points that start the actors of a route. It names no transport.
//! - `pipeline` (internal): from a message's bytes to its answer — the
//!   intake (the one sans-IO pipeline every transport drives: decoding,
//!   the era, scopes, admission, refusals with their status), legacy
//!   sessions, the request actor (one per call) and the service (request
//!   semantics over the catalog, one file per method family).
//! - [`tasks`]: the Tasks extension — task records, their stores and actors.
//! - [`auth`]: authorization — authenticators, scope policy,
//!   protected-resource metadata.
//! - [`hub`]: the subscription hub, its delivery arm on each thread, the
//!   listener actors, the bridge to your own actors, and Redis between
//!   instances.
//! - [`catalog`]: the handler API (tools, resources, templates, prompts,
//!   completions), the [`RequestContext`] a handler sees and the
//!   [`HandlerError`] it returns; [`catalogs`]: the built-in catalogs (`fs`,
//!   `everything`).
//! - [`channels`]: a request's outbound channel, the control messages
//!   several actors share, and the sink a listener writes to.
//! - [`facts`]: what a request is served with besides its message — the
//!   caller's identity, its headers, middleware extensions — and the clock.
//! - [`telemetry`]: metrics, spans, the status page and the slog root
//!   logger; [`audit`]: the tamper-evident log of calls; [`policy`]: which
//!   calls a caller may make (Cedar); [`config`]: typed configuration and
//!   the command line.
//!
//! Dependencies point down only: transports → actors → `mcp_protocol`, and
//! no module imports, directly or through others, a module that imports it
//! back.

#![cfg_attr(docsrs, feature(doc_cfg))]

pub mod _guide;
pub mod audit;
pub mod auth;
pub mod builder;
pub mod catalog;
pub mod catalogs;
pub mod channels;
#[cfg(feature = "client")]
#[cfg_attr(docsrs, doc(cfg(feature = "client")))]
pub mod client;
pub mod config;
pub mod facts;
#[cfg(feature = "gateway")]
#[cfg_attr(docsrs, doc(cfg(feature = "gateway")))]
pub mod gateway;
pub mod hub;
mod pipeline;
pub mod policy;
pub mod prelude;
mod quota;
pub mod server;
pub mod tasks;
pub mod telemetry;
pub mod test;
pub mod transport;
#[cfg(feature = "webhooks")]
#[cfg_attr(docsrs, doc(cfg(feature = "webhooks")))]
pub mod webhooks;

pub use mcp_protocol as protocol;
pub use schemars;
pub use serde;
pub use serde_json;

pub use catalog::context::RequestContext;
pub use catalog::error::HandlerError;
pub use server::McpServer;
