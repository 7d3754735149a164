//! # Events (the Triggers & Events extension)
//!
//! A server that has something to tell — a mail arrived, a build finished,
//! a price crossed a line — declares **event types**, and clients subscribe
//! to them instead of calling a tool in a loop. The extension is
//! `io.modelcontextprotocol/events`; it is declared in `server/discover`
//! (`capabilities.extensions["io.modelcontextprotocol/events"]`) as soon as
//! the catalog has an event type, and served on the stateless revision
//! (`2026-07-28`) only: a legacy session is not offered it and finds none of
//! its methods (`-32601`).
//!
//! ## Declaring an event type and emitting occurrences
//!
//! An event type is typed like a tool: its subscriptions' arguments are a
//! type `A` and its occurrences' data a type `P`, and their JSON Schemas are
//! what `events/list` shows as `inputSchema` and `payloadSchema`. A
//! predicate decides which occurrences a subscription's arguments let
//! through (it runs while the type's history is locked, so it must not emit
//! to the same type; one that panics matches nothing). Adding the type
//! returns its [`EventSource`]: emit through it from a handler, a background
//! task or anything else that holds a clone.
//!
//! ```rust
//! use actix_mcp::prelude::*;
//!
//! /// Which builds to hear of.
//! #[derive(Deserialize, JsonSchema)]
//! struct Builds {
//!     /// Only this branch's builds.
//!     branch: Option<String>,
//! }
//!
//! /// A build that finished.
//! #[derive(Serialize, JsonSchema)]
//! struct Finished {
//!     branch: String,
//!     passed: bool,
//! }
//!
//! let catalog = Catalog::new();
//! let builds = EventType::matching::<Builds, Finished>(
//!     "build.finished",
//!     "A CI build finished",
//!     &[Delivery::Poll],
//!     |builds, data| {
//!         let branch = data.get("branch").and_then(|b| b.as_str());
//!         builds.branch.is_none() || builds.branch.as_deref() == branch
//!     },
//! );
//! let source = catalog.add_event_type(builds).unwrap();
//! source.emit(Finished { branch: "main".into(), passed: true }).unwrap();
//! ```
//!
//! [`Catalog::add_event_type`] refuses, naming it, a type with an empty name
//! or description, no delivery mode or one listed twice, arguments or a
//! payload that are not JSON objects (`()`, a `String`), and a name already
//! taken. [`EventSource::emit`] gives each occurrence a fresh id and the
//! current time; [`EventSource::emit_with_id`] keeps the id your source
//! already has, so a subscriber recognises an occurrence it saw before.
//!
//! ## What a subscriber gets
//!
//! - `events/list` lists the types in pages, like `tools/list`.
//! - `events/poll` (`name`, `arguments`, `cursor`, `maxAgeMs`, `maxEvents`)
//!   answers at once with the occurrences after the cursor that the
//!   arguments let through: `cursor: null` (or none) starts from now and
//!   returns nothing; the answer's `cursor` is where to poll from next, and
//!   it moves on even when nothing matched; `maxEvents` (capped by the
//!   type's [`EventType::max_batch`], 100 unless set) with `hasMore: true`
//!   when more wait; `maxAgeMs` skips what is older; `nextPollMs` is the
//!   type's [`EventType::next_poll`] (5 s unless set).
//! - Each type keeps its last [`EventType::history`] occurrences (1,000 for
//!   an hour unless set) for replay. Whatever a poll cannot replay — dropped
//!   by those bounds, older than its `maxAgeMs`, or a cursor this server did
//!   not issue (another instance, a restart) — is reported as
//!   `truncated: true` with a fresh cursor, never as an error.
//! - Refusals follow the design's table: an unknown type is `-32011` with
//!   `data: {"kind": "event"}`, a type that does not offer polling `-32014`
//!   with `data: {"feature": "deliveryMode", "value": "poll"}`, and params
//!   or arguments that do not fit `-32602` naming the field.
//!
//! ## Not yet
//!
//! Push streams (`events/stream`), webhooks (`events/subscribe`), long
//! polls (`timeoutMs` is read, and the answer still comes at once, which
//! the design allows), `notifications/events/list_changed`, histories shared
//! across instances, the gateway's passing through of its upstreams' event
//! types, and policies over event types.
//!
//! [`EventSource`]: crate::catalog::EventSource
//! [`EventSource::emit`]: crate::catalog::EventSource::emit
//! [`EventSource::emit_with_id`]: crate::catalog::EventSource::emit_with_id
//! [`Catalog::add_event_type`]: crate::catalog::Catalog::add_event_type
//! [`EventType::max_batch`]: crate::catalog::EventType::max_batch
//! [`EventType::next_poll`]: crate::catalog::EventType::next_poll
//! [`EventType::history`]: crate::catalog::EventType::history
