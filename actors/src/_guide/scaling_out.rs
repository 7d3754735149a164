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
//!   What needs Redis answers at once while it is unreachable: a task
//!   request with the task store in Redis gets -32603 "the task store is
//!   unavailable: Redis: …" (HTTP 500) without waiting (the first use after
//!   the outage waits at most 500 ms to connect; for a second after a
//!   failure, each use fails at once, then one tries again), and a quota
//!   counted in Redis follows `quotas_fail`; what does not need it (calls,
//!   lists, local delivery) goes on.
//! - Redis in one place: `[redis] url` (or the older `hub.redis_url`, not
//!   both) serves the hub, the task store and the quotas alike. For no
//!   single point of failure, run Redis Sentinel and name it instead:
//!   `[redis] sentinels = ["10.0.0.5:26379", "10.0.0.6:26379"]`, `master =
//!   "mymaster"`. Every instance asks the sentinels for the master twice a
//!   second; when they name another node (a failover), the next use of Redis
//!   connects to it, the subscription moves with it, and the listeners get
//!   the resync above for what the gap may have held — listen streams stay
//!   open. `min_replicas = 1` (with `wait_timeout_ms`, 1000) makes every task
//!   write wait until a replica holds it (Redis `WAIT`), so a task
//!   acknowledged to a client survives the master's death; a write fewer
//!   replicas acknowledged in time still succeeds and is counted in
//!   `mcp_server_redis_wait_short_total`. `/readyz` and `/status.json` show
//!   `redis`: the master now, the failovers seen and when the last was.
//!   `tests/sentinel.rs` kills the master of a real master, replica and
//!   sentinel behind two instances: both follow the promoted replica (in
//!   about 2.5 s here), a listen stream opened before the kill hears the next
//!   change, and a task written before it is still there.
//! - Every instance needs the same `mrtr.key` (or `ACTIX_MCP_MRTR_KEY`), so
//!   `requestState` issued by one verifies on another. To change the key
//!   without losing a flow in progress, list keys instead (`mrtr.keys`,
//!   `ACTIX_MCP_MRTR_KEYS`; the first signs, every one verifies, and each
//!   state names its key) and roll in three steps, each through the whole
//!   fleet: `[old, new]`, then `[new, old]`, then, once `mrtr.state_ttl_ms`
//!   has passed, `[new]` (`tests/mrtr.rs` runs a flow across the instances
//!   of every two neighbouring steps, both ways).
//! - With authorization on, every instance needs the same `http.public_url`:
//!   the balancer's URL, which OAuth clients compare with the
//!   protected-resource metadata and tokens name as their audience. Without
//!   it each instance would advertise its own backend address;
//!   `auth.mode = "oauth"` refuses to start without it (or `auth.resource`),
//!   and the start line prints the resource each instance advertises.
//! - `config/nginx.conf` is the load balancer's configuration: round robin,
//!   SSE unbuffered (`proxy_buffering off`, long read timeouts; actix-mcp also
//!   sends `X-Accel-Buffering: no` on every stream), `Host` with its port and
//!   `X-Forwarded-*` passed on, the probes and the metadata passed
//!   deliberately and `/metrics` not at all (scrape each instance). As
//!   shipped it runs unprivileged from the repository, on loopback, writing
//!   its pid file, logs and temporary files under its prefix only; the lines
//!   marked `production:` say what to change.
//!
//! ```sh
//! redis-server --port 6379 &
//! ACTIX_MCP_MRTR_KEY="$(head -c 32 /dev/urandom | base64)" sh -c '
//!   actix-mcp serve --config config/cluster.toml --bind 127.0.0.1:8081 &
//!   actix-mcp serve --config config/cluster.toml --bind 127.0.0.1:8082 &
//!   wait' &
//! mkdir -p target/nginx/logs
//! nginx -p "$PWD/target/nginx" -c "$PWD/config/nginx.conf" -e logs/error.log
//! ```
//!
//! **Rolling restarts.** At SIGTERM an instance drains for
//! `shutdown.drain_ms` (default 5 s): `/readyz` answers 503 while every
//! request that still arrives is served, with `Connection: close` so that
//! the balancer's kept-alive connections are retired. Then it stops
//! accepting, listen streams get their completion result (clients listen
//! again, through the balancer, on another instance), running requests get
//! `http.shutdown_timeout_secs`, and it exits 0. A balancer that probes
//! `/readyz` (Kubernetes, HAProxy's `option httpchk`, Envoy) takes the
//! instance out of rotation by itself; set `drain_ms` above its probe
//! period. nginx (open source) does not probe: take an instance whose
//! `/readyz` answers 503 out of its list (`down`) and `nginx -s reload`,
//! and put it back when `/readyz` answers 200 — what an ingress controller
//! does. `tests/load_balancer.rs` restarts one of two instances this way
//! under load, with the shipped `config/nginx.conf`, and no request fails.
//! SIGINT (Ctrl-C) skips the drain.
//!
//! `tests/cluster.rs` runs exactly this with real `redis-server`, `nginx` and
//! binaries on loopback; `cargo bench --bench cluster_latency` measures
//! cross-instance notification latency.
//!
//! # End to end: TLS, OAuth, two instances, Redis, nginx, Prometheus
//!
//! `config/walkthrough.sh` sets all of it up on one machine, the way an
//! operator does, and checks each step: a certificate for the balancer;
//! Redis; two instances of `config/cluster.toml` with OAuth, the balancer's
//! URL as `http.public_url`, `http.behind_tls_proxy` (nginx terminates
//! TLS) and each its own metrics listener; `config/nginx.conf` with its
//! `production:` lines for TLS; Prometheus scraping both instances. Then it
//! walks a client through the balancer — the 401 naming the metadata URL,
//! the metadata naming the public resource, a token from your
//! authorization server for that resource, the calls — and asks
//! Prometheus whether it saw both instances and the calls:
//!
//! ```sh
//! ISSUER=https://auth.example.com CLIENT_ID=… CLIENT_SECRET=… bash config/walkthrough.sh
//! ```
//!
//! `tests/walkthrough.rs` runs the script as written against a real
//! authorization server (oidc-provider), with real nginx, Redis and
//! Prometheus, every port moved to a free one. The script is
//! [`config/walkthrough.sh` in the repository](https://github.com/actix-mcp/actix-mcp/blob/main/config/walkthrough.sh).
