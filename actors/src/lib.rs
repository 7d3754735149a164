#![doc = include_str!("../../README.md")]
//!
//! # Layout of this crate
//! - [`config`], [`logging`]: typed configuration and the slog root logger.
//! - [`catalog`]: the handler API (tools, resources, templates, prompts, completions).
//! - [`context`]: what a handler sees of its request.
//! - [`service`]: request semantics over the catalog (no transport).
//! - [`request`]: the per-request actor.
//! - [`hub`], [`relay`], [`listener`]: the subscription hub, its delivery arm
//!   on each thread, and the listener actors;
//!   [`redis_backend`] carries hub events between instances.
//! - [`intake`]: admission shared by the transports.
//! - [`legacy`]: sessions of clients that open with `initialize` (dual-era).
//! - [`transport`]: Streamable HTTP + SSE, stdio.
//! - [`server`]: the server value that ties these together.
//! - [`catalogs`]: built-in catalogs (`everything`).
//!
//! Dependencies point down only: transports → actors → `mcp_protocol`.

pub mod catalog;
pub mod catalogs;
pub mod cli;
pub mod config;
pub mod context;
pub mod error;
pub mod hub;
pub mod intake;
pub mod legacy;
pub mod listener;
pub mod logging;
pub mod outbound;
pub mod redis_backend;
pub mod relay;
pub mod request;
pub mod server;
pub mod service;
pub mod transport;

pub use context::RequestContext;
pub use error::HandlerError;
pub use server::McpServer;
