//! # Running several instances
//!
//!
//! Requests need nothing from earlier requests, so any request can go to any
//! instance behind a plain round-robin load balancer — no sticky sessions. What
//! must travel between instances is the hub's events: a change observed on
//! instance A (a tool added, a resource updated by a tool call that landed on
//! A, a file changed) must reach listen streams held open on B, C…; and a
//! multi round-trip retry may land on another instance than the round before.
//!
//! ```text
//!                    ┌──────────────┐
//!  clients ── nginx ─┤ actix-mcp #1 ├──┐
//!   (round robin,    ├──────────────┤  ├── Redis pub/sub ({prefix}:events)
//!    unbuffered SSE) │ actix-mcp #2 ├──┘
//!                    └──────────────┘
//! ```
//!
//! - `hub.backend = "redis"` (see `config/cluster.toml`): each instance publishes
//!   its local events once, as compact versioned JSON tagged with its origin, and
//!   delivers events from Redis to its local listeners only; its own events are
//!   never delivered twice. When every instance watches the same source (one
//!   shared directory), each observation carries a key (the file's modification
//!   time and size) and each listener still gets each change once.
//! - Redis outage: local delivery continues and no request fails; the
//!   subscriber reconnects with backoff (100 ms to 5 s), and once back every local
//!   listener receives the list_changed notifications it opted into (a
//!   conservative resync, so no change is silently missed). Outages and resyncs
//!   are logged.
//! - Every instance needs the same `mrtr.key` (or `ACTIX_MCP_MRTR_KEY`), so
//!   `requestState` issued by one verifies on another.
//! - With authorization on, every instance needs the same `http.public_url`:
//!   the balancer's URL, which OAuth clients compare with the
//!   protected-resource metadata and tokens name as their audience. Without
//!   it each instance would advertise its own backend address;
//!   `auth.mode = "oauth"` refuses to start without it (or `auth.resource`),
//!   and the start line prints the resource each instance advertises.
//! - `config/nginx.conf` is a load balancer configuration that keeps SSE
//!   unbuffered (`proxy_buffering off`, long read timeouts); actix-mcp also sends
//!   `X-Accel-Buffering: no` on every stream.
//!
//! ```sh
//! redis-server --port 6379 &
//! ACTIX_MCP_MRTR_KEY="$(head -c 32 /dev/urandom | base64)" sh -c '
//!   actix-mcp serve --config config/cluster.toml --bind 127.0.0.1:8081 &
//!   actix-mcp serve --config config/cluster.toml --bind 127.0.0.1:8082 &
//!   wait' &
//! nginx -c "$PWD/config/nginx.conf"
//! ```
//!
//! `tests/cluster.rs` runs exactly this with real `redis-server`, `nginx` and
//! binaries on loopback; `cargo bench --bench cluster_latency` measures
//! cross-instance notification latency.
