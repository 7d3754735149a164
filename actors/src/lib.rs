#![doc = include_str!("../../README.md")]
//!
//! # Layout of this crate
//! From the edge inwards:
//! - [`transport`]: Streamable HTTP ([`transport::http`]: `configure`,
//!   `bind`, `serve`; `HttpError`), its SSE wire format
//!   ([`transport::sse`]), and stdio ([`transport::stdio`]: a connection
//!   actor per stream). Only these files name actix-web or stdin/stdout.
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
//! - [`config`], [`logging`], [`cli`]: typed configuration, the slog root
//!   logger, the command line.
//!
//! Dependencies point down only: transports → actors → `mcp_protocol`, and
//! no module imports, directly or through others, a module that imports it
//! back.

pub mod catalog;
pub mod catalogs;
pub mod cli;
pub mod config;
pub mod context;
pub mod era;
pub mod error;
pub mod hub;
pub mod intake;
pub mod legacy;
pub mod listener;
pub mod logging;
pub mod msg;
pub mod outbound;
pub mod redis_backend;
pub mod relay;
pub mod request;
pub mod server;
pub mod service;
pub mod sink;
pub mod transport;

pub use context::RequestContext;
pub use error::HandlerError;
pub use server::McpServer;
