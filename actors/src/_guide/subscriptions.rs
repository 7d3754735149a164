//! # Subscriptions: change notifications on listen streams
//!
//!
//! `subscriptions/listen` with `params.notifications` (`toolsListChanged`,
//! `promptsListChanged`, `resourcesListChanged`, `resourceSubscriptions: [uri…]`)
//! opens a stream whose first message is
//! `notifications/subscriptions/acknowledged` with the honoured filter; every
//! message on it carries `_meta["io.modelcontextprotocol/subscriptionId"]`, the
//! listen request's id with its JSON type (and digits) preserved. On HTTP the
//! reply is an SSE stream that stays open (`X-Accel-Buffering: no`, keep-alive
//! comments every `hub.keep_alive_ms`, sent from the hub's one timer rather than
//! a timer per stream); closing it ends the subscription at once. On stdio a listen may be sent at any time, deliveries interleave on the
//! one writer, and `notifications/cancelled` for the listen id ends it. Progress
//! and log notifications never go on a listen stream.
//!
//! Sources of events: catalog changes (adding or removing a listed tool, prompt,
//! resource or template publishes the matching `list_changed`), and
//! `McpServer::notify_resource_updated(uri)` / `Catalog::notify_resource_updated(uri)`,
//! which reach only the subscriptions whose `resourceSubscriptions` contain that
//! URI.
//!
//! A `SubscriptionHub` actor (on an arbiter of its own) owns the pure routing
//! table (`mcp_protocol::subscription::SubscriptionTable`: kind → listeners,
//! URI → listeners) and fans events out to one `ListenerActor` per
//! subscription. A listener runs on the worker that served its listen request
//! and holds only a sink: on HTTP a single-threaded queue of ready-framed SSE
//! events read by its response, on stdio the shared writer. Each thread that
//! runs listeners has one `Relay` actor: for every event the hub sends each
//! relay one message with the ids of its listeners that want it, and the relay
//! hands the event to them directly, 512 at a time before it lets the streams it
//! woke write (so the first clients read while later ones are still being
//! served), and the next event only after this one reached every target, so
//! each listener receives events in order. A thread is thus woken once per
//! event, not once per listener, and over HTTP/2 the frames of one event leave
//! in one write per connection. An idle stream costs about 11.5 KiB of server
//! memory, of which a bare actix-web SSE response with its connection is
//! 10.6 KiB (see `benches/README.md`). Events pass through a `HubBackend`
//! seam; the in-process backend is the default.
//!
//! **HTTP/2.** Built with `--features h2c` and run with `--h2c` (`http.h2c`),
//! the server also accepts HTTP/2 without TLS (prior knowledge) on the same
//! port, so that a load balancer can carry thousands of listen streams over a few
//! connections; 50,000 streams over 64 connections take about 6 KiB each, and
//! an event reaches 10,000 of them within 27–40 ms (p99; `benches/README.md`),
//! where HTTP/1.1 needs a socket write per stream. It is off by default because
//! HTTP/2 support makes each HTTP/1.1 connection's state about 1.8 KiB larger
//! (13.3 instead of 11.5 KiB per idle HTTP/1.1 listen stream). On HTTP/2 a client's reset of an idle stream is noticed
//! at the stream's next write (actix-http reads resets only when sending), so
//! such a subscription is freed within `hub.keep_alive_ms`.
//!
//! **Fan-out policy.** Routing never blocks and memory stays bounded: the hub
//! hands each event to a thread's relay with `try_send` into its bounded
//! mailbox (`hub.relay_mailbox`), and each listener pushes into its own bounded
//! sink (`hub.listener_buffer`). A subscriber that lets its sink fill has
//! fallen behind: its subscription is closed (HTTP: the stream ends; stdio:
//! `notifications/cancelled` for its listen id with a reason), counted in the
//! hub's `lagged` statistic, and the others are not slowed. If a relay's mailbox
//! is full, its whole thread is not keeping up, and the listeners the event was
//! for are closed and counted the same way. Such a client re-sends
//! `subscriptions/listen`. A stream carries the events routed after its
//! acknowledgement. At most `hub.max_listeners` subscriptions are
//! open; more are refused with HTTP 503 (checked against the hub's published
//! occupancy, so the stream starts without a round trip to the hub; the rare
//! listen that loses a race for the last place gets its JSON-RPC error as the
//! stream's only event).
//!
//! **Graceful shutdown.** At SIGINT/SIGTERM (or `McpServer::shutdown()`), every
//! open subscription receives its completion result
//! `{"resultType":"complete","_meta":{"io.modelcontextprotocol/subscriptionId":…}}`
//! as the response to its listen request, then its stream closes; the process
//! waits at most `hub.drain_ms` for that, then stops.
