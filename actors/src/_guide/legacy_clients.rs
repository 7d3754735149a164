//! # Legacy clients (dual-era)
//!
//!
//! Most MCP clients in use still open with `initialize`. The same endpoint serves
//! them: an `initialize` without stateless `_meta` selects legacy semantics for
//! the negotiated version (`2025-11-25`, `2025-06-18` or `2025-03-26`; an unknown
//! version gets the newest), scoped to an HTTP session (`Mcp-Session-Id`, 32 hex
//! digits of a random UUID) or to the stdio process. The stateless path keeps no
//! session state at all; each legacy session is an actor of its own (its state,
//! its running requests, its pending server-to-client requests and its stream),
//! found through a registry actor; it expires on its own timer after
//! `legacy.idle_timeout_ms` without messages (default 30 min), and sessions are
//! capped at `legacy.max_sessions` (default 10,000). A full table lets a new
//! `initialize` evict the session unused the longest once that one has been
//! unused for `legacy.evict_idle_ms` (default 1 min), and answers 503 otherwise:
//! anonymous `initialize` calls that fill the table lock nobody out for long,
//! while sessions in use keep their place.
//!
//! - `notifications/initialized`, `ping`, `logging/setLevel`, `DELETE` to end
//!   the session (its id then answers 404), the HTTP GET stream for the session's
//!   notifications, `resources/subscribe` / `unsubscribe`. A legacy session's GET
//!   stream is just another listener of the subscription hub: it receives every
//!   list change and the updates of its subscribed resources (untagged, as that
//!   era expects).
//! - Server-to-client requests (`sampling/createMessage`, `elicitation/create`,
//!   `roots/list`) go out on the request's SSE stream and the client POSTs the
//!   answers — driven by the same handler API as multi round-trip requests, so
//!   one tool implementation (`ctx.elicit`, `ctx.sample`, `ctx.list_roots`)
//!   serves both eras: statelessly it answers an `InputRequiredResult`, in a
//!   legacy session the server asks the client directly and runs the handler
//!   again with the answers.
//! - Legacy results carry no `resultType`, `ttlMs` or `cacheScope`; a missing
//!   resource is `-32002`.
//! - Several instances: with `legacy.store = "redis"` (the default when
//!   `hub.backend = "redis"`) every instance serves every session — no
//!   sticky sessions at the balancer. See "Legacy sessions on any instance"
//!   in the scaling-out guide. With `"memory"` a session lives in the
//!   instance that opened it, and its id answers 404 elsewhere.
//! - A server configured modern-only (`server.versions` without the 2025-*
//!   versions) answers `initialize` with an error naming its supported versions,
//!   the only diagnostic a legacy client has.
//!
//! CI runs both conformance sets, `2026-07-28` and `2025-11-25`, at the same time
//! against one server process.
