//! # Events (the Triggers & Events extension)
//!
//! A server that has something to tell — a mail arrived, a build finished,
//! a price crossed a line — declares **event types**, and clients subscribe
//! to them instead of calling a tool in a loop. The extension is
//! `io.modelcontextprotocol/events`; it is declared in `server/discover`
//! (`capabilities.extensions["io.modelcontextprotocol/events"]`) as soon as
//! the catalog has an event type, and served on the stateless revisions
//! (`2026-07-28`, and its draft `DRAFT-2026-v1`) only: a legacy session is
//! not offered it and finds none of its methods (`-32601`).
//!
//! ## Trying it
//!
//! The built-in catalogs serve event types: `--catalog everything` has
//! `clock.tick` (poll, push and webhook, ticks once a second; `every` lets
//! through every n-th), `limited.tick` (push, two streams at most) and
//! `signal.fired` (poll, push and webhook, fired by the `fire_event` tool), and the
//! default `fs` catalog has `file.changed` (a served file created, changed
//! or removed; `under` a directory, `change` one kind). The command-line
//! client speaks the extension:
//!
//! ```text
//! actix-mcp --catalog everything &
//! actix-mcp client http://127.0.0.1:8080/mcp events list
//! actix-mcp client http://127.0.0.1:8080/mcp events watch clock.tick '{"every": 2}' --count 3
//! actix-mcp client http://127.0.0.1:8080/mcp events stream signal.fired --count 1 &
//! actix-mcp client http://127.0.0.1:8080/mcp call fire_event '{"message": "hello"}'
//! ```
//!
//! Over plain HTTP (curl) every request carries what the stateless
//! revision asks of any request — `params._meta` with
//! `io.modelcontextprotocol/protocolVersion`, `clientInfo` and
//! `clientCapabilities`, and the `MCP-Protocol-Version` and `Mcp-Method`
//! headers (the README's validation order lists each refusal); a poll the
//! server holds past `http.stream_after_ms` is answered as an SSE stream
//! whose one message is the result, as any request may be.
//!
//! ## Declaring an event type and emitting occurrences
//!
//! An event type is typed like a tool: its subscriptions' arguments are a
//! type `A` and its occurrences' data a type `P`, and their JSON Schemas are
//! what `events/list` shows as `inputSchema` and `payloadSchema`. A
//! predicate decides which occurrences a subscription's arguments let
//! through (it runs while the type's history is locked, so it must not emit
//! to the same type; one that panics matches nothing). Arguments `A` does
//! not know are refused only when `A` says so
//! (`#[serde(deny_unknown_fields)]`, which the schema then shows as
//! `additionalProperties: false`), as for a tool's. Adding the type
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
//! ## Emitting from a background task
//!
//! A source that lives outside any request — a poller of an upstream API, a
//! file watcher, a timer — holds a [`WeakEventSource`], so that it stops
//! once the catalog serving the type is gone. This is a complete server
//! whose event type ticks on its own once a second; clients poll it or
//! stream it:
//!
//! ```rust,no_run
//! use std::sync::Arc;
//! use std::time::Duration;
//!
//! use actix_mcp::prelude::*;
//!
//! /// Which ticks to hear of.
//! #[derive(Deserialize, JsonSchema)]
//! struct Ticks {
//!     /// Only every n-th tick.
//!     every: Option<u64>,
//! }
//!
//! /// One tick.
//! #[derive(Serialize, JsonSchema)]
//! struct Tick {
//!     n: u64,
//! }
//!
//! #[actix_web::main]
//! async fn main() -> std::io::Result<()> {
//!     let catalog = Catalog::new();
//!     let modes = [Delivery::Poll, Delivery::Push];
//!     let ticks = EventType::matching::<Ticks, Tick>("clock.tick", "A tick", &modes, |t, data| {
//!         let n = data.get("n").and_then(|n| n.as_u64()).unwrap_or(0);
//!         n % t.every.unwrap_or(1).max(1) == 0
//!     });
//!     let source = catalog.add_event_type(ticks).unwrap().downgrade();
//!     actix_rt::spawn(async move {
//!         for n in 1.. {
//!             actix_rt::time::sleep(Duration::from_secs(1)).await;
//!             let Some(source) = source.upgrade() else { return };
//!             source.emit(Tick { n }).unwrap();
//!         }
//!     });
//!     let server = McpServer::builder(server_info!()).catalog(Arc::new(catalog)).build().unwrap();
//!     serve_http(server).await
//! }
//! ```
//!
//! Besides occurrences, a source tells its subscribers three things:
//! [`EventSource::lose`] (occurrences were lost — an upstream dropped some:
//! a poll from before answers `truncated`, each stream sends `active` again
//! with `truncated: true`), [`EventSource::fail`] (a failure the
//! subscriptions survive — each stream sends `notifications/events/error`
//! and stays open), and [`EventSource::terminate`] (the subscriptions end:
//! access revoked, a schema changed in place — each stream sends
//! `notifications/events/terminated` and its final result).
//! [`Catalog::remove_event_type`] ends a type's streams the same way with
//! `-32011` (`{"kind": "event"}`), and adding or removing a type tells the
//! listen streams that opted into `eventsListChanged`.
//!
//! ## What a subscriber gets
//!
//! - `events/list` lists the types in pages, like `tools/list`.
//! - `events/poll` (`name`, `arguments`, `cursor`, `maxAgeMs`, `maxEvents`,
//!   `timeoutMs`) answers with the occurrences after the cursor that the
//!   arguments let through: `cursor: null` (or none) starts from now and
//!   returns nothing, at once; the answer's `cursor` is where to poll from
//!   next, and it moves on even when nothing matched; `maxEvents` (capped
//!   by the type's [`EventType::max_batch`], 100 unless set) with
//!   `hasMore: true` when more wait; `maxAgeMs` skips what is older;
//!   `nextPollMs` is the type's [`EventType::next_poll`] (5 s unless set).
//!   When nothing is there yet, a poll with `timeoutMs` is held open and
//!   answered as soon as a matching occurrence comes, or with `events: []`
//!   at its timeout — at most `events.max_poll_wait_ms` (30 s) and 1 s
//!   under `request.timeout_ms`; without `timeoutMs` it waits
//!   `events.default_poll_wait_ms` (0: it answers at once).
//! - `events/stream` (`name`, `arguments`, `cursor`, `maxAgeMs`) answers
//!   with a stream of its own (SSE on HTTP, lines on stdout over stdio):
//!   `notifications/events/active` first (`cursor`, `truncated`), then each
//!   matching occurrence as `notifications/events/event` with its cursor,
//!   `notifications/events/heartbeat` with the stream's position after
//!   `events.heartbeat_ms` (15 s) without a message — a notification, never
//!   an SSE comment, and its cursor moves past what the arguments skipped.
//!   Every notification carries the stream's request id as
//!   `_meta["io.modelcontextprotocol/subscriptionId"]`, its JSON type kept.
//!   The client ends a stream by closing it (HTTP) or with
//!   `notifications/cancelled` (stdio); the server ends it with
//!   `terminated` and a final result (`{"_meta": …}`), or, when it shuts
//!   down, with the final result alone (when listen streams get their
//!   completion): the client resumes from its cursor, elsewhere. Streams are not
//!   bounded by `request.timeout_ms` nor counted against
//!   `stdio.max_in_flight`; `events.max_streams` (10,000) and a type's
//!   [`EventType::max_streams`] cap them (`-32013`,
//!   `{"limit": "subscriptions", "max": …}`), and so does
//!   `events.max_streams_per_caller` per caller when set
//!   (`{"limit": "subscriptions_per_caller", …}`). A client that reads slowly
//!   paces its stream: at most `request.outbound_buffer` messages wait for
//!   it (each at most the type's [`EventType::max_payload`], 64 KiB unless
//!   set), the history moves on meanwhile, and when it reads again what it
//!   missed is a gap (`active` with `truncated: true`). A failure reported
//!   while a stream is still sending the last one may reach it as one
//!   `error`.
//! - Each type keeps its last [`EventType::history`] occurrences (1,000 for
//!   an hour unless set) for replay. Whatever a poll or a stream cannot
//!   replay — dropped by those bounds, older than its `maxAgeMs`, lost
//!   ([`EventSource::lose`]), or a cursor this server did not issue
//!   (another instance, a restart) — is reported as `truncated: true` with
//!   a fresh cursor, never as an error.
//! - Refusals follow the design's table: an unknown type is `-32011` with
//!   `data: {"kind": "event"}`, a type that does not offer the mode
//!   `-32014` with `data: {"feature": "deliveryMode", "value": "poll"}`
//!   (or `"push"`), too many streams `-32013`, and params or arguments that
//!   do not fit `-32602` naming the field. A stream that is refused gets
//!   the error as a plain JSON response: no stream is opened.
//!
//! ## Webhooks
//!
//! A type that lists [`Delivery::Webhook`] can be subscribed to with
//! `events/subscribe` (the `webhooks` feature; in `full`): the server then
//! POSTs each matching occurrence to the subscriber's callback, whether or
//! not the subscriber is connected.
//!
//! ```json
//! {"jsonrpc": "2.0", "id": 2, "method": "events/subscribe", "params": {
//!   "name": "clock.tick", "arguments": {"every": 5},
//!   "delivery": {"mode": "webhook", "url": "https://hooks.example.com/mcp",
//!                "secret": "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"},
//!   "cursor": null, "ttlMs": 3600000}}
//! ```
//!
//! - Webhook subscriptions need an authenticated caller: with `auth.mode`
//!   on, a request without credentials is refused before any method (401);
//!   with it off, `events/subscribe` and `events/unsubscribe` answer
//!   `-32012`. The subscription is the caller's: its key is
//!   (principal, callback URL, event type, arguments), and its `id`
//!   (`sub_` and 16 hex digits) is derived from the key, so the same key
//!   always names the same subscription. The `id` is never accepted as
//!   input.
//! - The callback must be an `https` URL without credentials (a fragment
//!   is dropped), the secret `whsec_` and the Base64 of 24 to 64 bytes
//!   (otherwise `-32602` naming the member). Before its first
//!   delivery the callback is challenged: it receives a signed
//!   `{"type": "verification", "challenge": "…"}` and must answer 2xx with
//!   `{"challenge": "…"}` (the same). A callback that answers otherwise is
//!   refused with `-32015` and `data.reason` `challenge_failed`; one that
//!   cannot be reached with `connection_refused`, `timeout` or `tls_error`;
//!   one that answers an error status (or a redirect, never followed) with
//!   `http_4xx` or `http_5xx`. A callback URL that answered is not
//!   challenged again for the same caller for
//!   `events.webhooks.verified_ttl_ms` (a day). At most
//!   `events.webhooks.max_challenges` (64) callbacks are challenged at once
//!   (`-32013`, `{"limit": "webhook_challenges"}` past them); caps on
//!   subscriptions: `max_subscriptions` (10,000) and
//!   `max_subscriptions_per_caller` (100).
//! - The answer: `{"id", "refreshBefore", "cursor", "truncated"}`. The
//!   lifetime granted is the suggested `ttlMs` (any number; never refused)
//!   clamped to
//!   `events.webhooks.min_ttl_ms`..`max_ttl_ms` (a minute to a day;
//!   `default_ttl_ms`, 30 minutes, without one); `ttlMs: null` (no expiry)
//!   gets `max_ttl_ms` — subscriptions are not kept across a restart. Subscribing again with
//!   the same key before `refreshBefore` refreshes it: the same `id`, the
//!   new secret (the old one still signs beside it for
//!   `secret_grace_ms`, 10 minutes), the new lifetime, delivery resumed if
//!   it was suspended, and `deliveryStatus` (`active`, `lastDeliveryAt`,
//!   `lastError`, `failedSince`) in the answer — as it stood before this
//!   refresh (`active: false`: it was suspended, and resumes now). `events/unsubscribe`
//!   (`name`, `arguments`, `delivery.url`) ends it; a key not held is
//!   `-32011` with `data: {"kind": "subscription"}`.
//! - Each delivery is a POST of the occurrence (`eventId`, `name`,
//!   `timestamp`, `data`, and `cursor`: the position at or before which
//!   everything was delivered or abandoned, safe to persist) with the
//!   Standard Webhooks headers `webhook-id` (the `eventId`),
//!   `webhook-timestamp` and `webhook-signature` (`v1,` and the Base64 of
//!   HMAC-SHA256 over `id.timestamp.body` with the secret's bytes), and
//!   `X-MCP-Subscription-Id`. Control bodies have a `type`: `gap` (with the
//!   cursor delivery continues from), `terminated` (with the `error` that
//!   ended the subscription), `verification`; their `webhook-id` is
//!   `msg_<type>_<random>`.
//! - An attempt that fails is retried on its own (1 s, 4 s, 16 s by
//!   default: `retry_base_ms` times 4 each time, `max_attempts` 4 in all,
//!   within `retry_window_ms`) without holding later occurrences back; each
//!   attempt is signed for its own time. A 410 or a 413 is never retried.
//!   An occurrence given up on is not announced (no `gap` body): the
//!   `cursor` of later deliveries moves past it.
//!   Redirects are never followed. A body waiting for another attempt is
//!   held within `max_held_bytes` (64 MiB) server-wide. When at least
//!   `suspend_min_attempts`
//!   attempts within `suspend_window_ms` (an hour, successes included)
//!   failed at `suspend_failure_percent` or more, delivery is suspended
//!   until the next refresh; what the history
//!   no longer holds by then is a `gap`.
//! - Callbacks are resolved at each connection, and an address that is not
//!   publicly routable — loopback, private, link-local, shared, metadata,
//!   documentation, multicast, or an IPv6 form of one — is refused
//!   (`-32015`, `connection_refused`, with the same sentence as a name that
//!   does not resolve), unless the callback's origin is in
//!   `events.webhooks.allow_origins` (a receiver on a private network; it
//!   is still challenged). `allowed_ca_file` names the CA bundle trusted
//!   for those origins only.
//! - A server's `actix_mcp::webhooks::Webhooks` handle is in the catalog's shared state
//!   (`ctx.state::<Webhooks>()` in a tool) when the catalog served event
//!   types at start: `Webhooks::terminate` ends a subscription (say, its
//!   caller's access was revoked), `Webhooks::gap` tells a callback of a
//!   gap, `Webhooks::state` says whether it is active or suspended.
//!   Removing the event type, or [`EventSource::terminate`], ends every
//!   subscription of it with a `terminated` body. The everything catalog's
//!   `events_conformance_*` controls (but the read-only `_quota`) act only
//!   with `events.test_controls = true`: they let any caller end every
//!   subscription of a type or allow a callback origin.
//!
//! ## Several instances
//!
//! With `events.history = "redis"` (or `"auto"`, the default, with
//! `hub.backend = "redis"`), each event type's history is one Redis
//! stream, `{hub.redis_channel_prefix}:events:{name}`, shared by every
//! instance: what a source emits on any instance is added to it, and every
//! instance mirrors it in the same order, at the same positions. A cursor
//! minted on one instance reads on another, a stream on one hears what is
//! emitted on another, and an instance started later replays what came
//! before it (within the type's [`EventType::history`]); a poll or stream
//! waits (at most 5 s) until its instance has read the shared history. An
//! occurrence emitted with the source's own id
//! ([`EventSource::emit_with_id`]) that was added already within
//! `hub.dedup_ms` (by any instance) is not added again — a source they all
//! observe, like the `fs` catalog's shared directory (0: no such check).
//! A cursor from an instance that read further reads as "nothing yet" on
//! one that has not (within 10 s of its clock), not as a gap. [`EventSource::emit`]
//! then returns the occurrence without its cursor (the stream places it a
//! moment later) and refuses once `events.history_queue` (1,024)
//! occurrences wait to be added. What could not be added or read while
//! Redis was out of reach is a gap (`truncated`) on that instance. Event
//! types added after the server started keep their history on their
//! instance.
//!
//! ## Not yet
//!
//! Webhook subscriptions shared across instances (today each instance
//! keeps and delivers its own), and the gateway's passing through of its
//! upstreams' event types.
//!
//! [`EventSource`]: crate::catalog::EventSource
//! [`WeakEventSource`]: crate::catalog::WeakEventSource
//! [`EventSource::lose`]: crate::catalog::EventSource::lose
//! [`EventSource::fail`]: crate::catalog::EventSource::fail
//! [`EventSource::terminate`]: crate::catalog::EventSource::terminate
//! [`Catalog::remove_event_type`]: crate::catalog::Catalog::remove_event_type
//! [`EventType::max_streams`]: crate::catalog::EventType::max_streams
//! [`EventType::max_payload`]: crate::catalog::EventType::max_payload
//! [`EventSource::emit`]: crate::catalog::EventSource::emit
//! [`EventSource::emit_with_id`]: crate::catalog::EventSource::emit_with_id
//! [`Catalog::add_event_type`]: crate::catalog::Catalog::add_event_type
//! [`EventType::max_batch`]: crate::catalog::EventType::max_batch
//! [`EventType::next_poll`]: crate::catalog::EventType::next_poll
//! [`EventType::history`]: crate::catalog::EventType::history
//! [`Delivery::Webhook`]: crate::prelude::Delivery::Webhook
