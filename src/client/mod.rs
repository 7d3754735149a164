//! The client's side of the protocol, without any I/O: the era a
//! connection speaks and how it is chosen ([`Negotiation`], a state machine
//! over the answers of `server/discover` and `initialize`), one decode of
//! what a server sends ([`ServerMessage`]), requests encoded with what
//! their era needs ([`Session`]), and what an answer means
//! ([`Answer`]: the result, input the server needs, or a task).
//!
//! A driver owns the sockets, the clock and the handlers: it sends what
//! these types encode, feeds back what arrives, and acts on what they say.
//! `actix-mcp`'s client drives it over Streamable HTTP and stdio; its
//! gateway and in-process test client use the same encoders.
//!
//! ```
//! use mcp_protocol::client::{Answer, Negotiation, Step};
//! use mcp_protocol::model::Implementation;
//!
//! let (mut negotiation, first) = Negotiation::auto();
//! let Step::Ask { method, .. } = first else { panic!() };
//! assert_eq!(method, "server/discover");
//! let discovered = serde_json::json!({"resultType": "complete",
//!     "supportedVersions": ["2026-07-28"], "capabilities": {"tools": {}}});
//! let Step::Done { era, server } = negotiation.answered(Ok(discovered)) else { panic!() };
//! assert!(era.is_stateless());
//! assert!(server.capabilities.tools.is_some());
//! # let _ = (Implementation::new("a", "1"), Answer::Complete(serde_json::Value::Null));
//! ```

mod answer;
mod era;
mod message;
mod negotiation;
mod server_info;
mod session;

pub use answer::{Answer, Asked};
pub use era::Spoken;
pub use message::ServerMessage;
pub use negotiation::{Failure, Negotiation, Step};
pub use server_info::ServerInfo;
pub use session::{Encoded, Marks, Session};
