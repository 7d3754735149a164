//! # mcp-protocol: the sans-IO core of actix-mcp
//!
//! This crate holds everything about the Model Context Protocol that can be
//! said without a socket, a clock or a runtime: the JSON-RPC envelope, the
//! per-request `_meta` of the stateless revision `2026-07-28` (and the seed
//! draft `DRAFT-2026-v1`), version profiles and their error codes, the one
//! enum of client requests, and the wire model split by spec chapter.
//!
//! **Contract:** no I/O, no clock, no actix, tokio or slog. Functions take
//! bytes or values and return values or [`ProtocolError`]s; the caller (the
//! `actix-mcp` crate) owns sockets, time and logging. CI checks this with
//! `cargo tree -p mcp-protocol -e normal`.
//!
//! # Layout
//! - [`jsonrpc`]: request ids, decoding a message, encoding responses and notifications.
//! - [`error`]: wire [`ErrorData`] and the Rust [`ProtocolError`] that maps onto it.
//! - [`version`]: supported protocol versions and their error-code profiles.
//! - [`legacy`]: the `initialize` era (2025-*): negotiation, its methods, one session's state.
//! - [`meta`]: the per-request `_meta` and its validation order.
//! - [`request`]: [`ClientRequest`], one variant per method.
//! - [`header`]: the `Mcp-Name` / `Mcp-Param-*` header value encoding.
//! - [`pagination`]: opaque cursors over ordered lists.
//! - [`raw_object`]: JSON objects kept as text until a typed parse (`params`, tool arguments).
//! - [`model`]: wire types by spec chapter.
//! - [`request_state`]: the integrity-protected `requestState` of multi round-trip requests.
//! - [`uri_template`]: RFC 6570 level-1 URI templates, parsed and matched.
//! - [`lines`]: newline-delimited messages of bounded length (the stdio framing).
//! - [`digest`]: SHA-256 as lowercase hex (bindings, the audit log, pinned definitions).
//! - [`events`]: the Triggers & Events extension: event types, subscriptions, occurrences, cursors over a bounded history.
//! - [`subscription`]: listen filters, events, the routing table and listen-stream encoders.
//! - [`client`]: the client side: era negotiation, one decode of what a server sends, requests encoded per era.
//!
//! ```
//! use mcp_protocol::{jsonrpc, ClientRequest, RequestMeta, ProtocolVersion};
//!
//! let line = br#"{"jsonrpc":"2.0","id":7,"method":"tools/list","params":{"_meta":{
//!     "io.modelcontextprotocol/protocolVersion":"2026-07-28",
//!     "io.modelcontextprotocol/clientCapabilities":{}}}}"#;
//! let jsonrpc::Incoming::Request(req) = jsonrpc::decode(line).unwrap() else { panic!() };
//! let meta = RequestMeta::from_params(req.params.as_ref(), None, ProtocolVersion::ALL).unwrap();
//! assert_eq!(meta.version, ProtocolVersion::V2026_07_28);
//! let call = ClientRequest::from_parts(&req.method, req.params.as_ref()).unwrap();
//! assert_eq!(call.method(), "tools/list");
//! ```

#![forbid(unsafe_code)]

pub mod apps;
pub mod client;
pub mod decode;
pub mod digest;
pub mod error;
pub mod events;
pub mod header;
pub mod header_params;
pub mod jsonrpc;
pub mod legacy;
pub mod limits;
pub mod lines;
pub mod meta;
pub mod model;
pub mod outgoing;
pub mod pagination;
pub mod params;
mod params_split;
pub mod raw_object;
pub mod request;
pub mod request_id;
pub mod request_state;
pub mod skills;
pub mod subscription;
pub mod tasks;
pub mod trace;
pub mod uri_template;
pub mod version;

pub use decode::{decode, Expect, Message};
pub use error::{ErrorCode, ErrorData, ErrorProfile, ProtocolError};
pub use jsonrpc::RequestId;
pub use meta::RequestMeta;
pub use raw_object::RawObject;
pub use request::ClientRequest;
pub use version::ProtocolVersion;
