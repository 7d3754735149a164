//! # Running several instances
//!
//!
//! Requests need nothing from earlier requests, so any request can go to any
//! instance behind a plain round-robin load balancer — no sticky sessions. What
//! must travel between instances is the hub's events: a change observed on
//! instance A (a tool added, a resource updated by a tool call that landed on
//! A, a file changed) must reach listen streams held open on B, C…; and a
//! multi round-trip retry may land on another instance than the round before.
//! Clients of the `initialize` era keep a session; with it in Redis every
//! instance serves it too ("Legacy sessions on any instance" below), so no
//! client needs a sticky balancer.
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
//!   and session write wait until a replica holds it (Redis `WAIT`), so a task
//!   acknowledged to a client survives the master's death; a write fewer
//!   replicas acknowledged in time still succeeds and is counted in
//!   `mcp_server_redis_wait_short_total`. `/readyz` and `/status.json` show
//!   `redis`: the master now, the failovers seen and when the last was.
//!   `tests/sentinel.rs` kills the master of a real master, replica and
//!   sentinel behind two instances: both follow the promoted replica (in
//!   about 2.5 s here), a listen stream opened before the kill hears the next
//!   change, and a task written before it is still there.
//! - Legacy sessions on any instance: `legacy.store = "redis"` (the default
//!   with `hub.backend = "redis"`; `"memory"` keeps each session in the
//!   instance that opened it, which then needs a sticky balancer). A session
//!   is one Redis hash, `{prefix}:session:{id}`, expiring after
//!   `legacy.idle_timeout_ms` without use: what `initialize` settled (version,
//!   client info and capabilities, the caller that opened it), the log level,
//!   one field per subscribed resource. `initialize` writes it before the
//!   client hears the id (with `min_replicas`, it waits for a replica); the
//!   first message of the session on another instance reads it (one round
//!   trip) and that instance keeps a copy — an actor, as on one instance.
//!   `logging/setLevel`, `resources/subscribe` and `unsubscribe` are
//!   written through before the client hears the answer (a Lua script per
//!   change, so that changes made at once on two instances both stand),
//!   each raising the session's revision (`rev` in the hash), and told to
//!   every instance. Each later message of the session on an instance that
//!   holds a copy costs one round trip, before it is served: a Lua script
//!   marks the use (the idle time starts again) and returns the whole
//!   session only when `rev` is not the copy's, which then takes it (its
//!   GET stream's filter included) first. So whatever another instance
//!   answered shows on the next message anywhere — a level set on B applies
//!   to the next call on A, a resource subscribed on B is delivered on A's
//!   GET stream when the next call on A updates it — even when the letter
//!   telling A is late or was lost (the bus drops letters past
//!   `redis.bus_buffer`). A GET stream, wherever it is held, also follows
//!   the letters: it delivers the updates of what was subscribed anywhere
//!   (the updates themselves travel through the hub, wherever the change
//!   happened). `DELETE` on any instance removes the session and tells every
//!   instance: its id answers 404 everywhere (an instance that missed the
//!   letter finds the session gone at its next message) and its GET streams
//!   end.
//! - What belongs to a running request travels on a small addressed bus:
//!   each instance listens on its inbox (`{prefix}:inbox:{name}`) and on
//!   `{prefix}:all`. A question the server asks the client mid-call
//!   (`elicitation/create`, `sampling/createMessage`, `roots/list`) carries
//!   the asking instance's name in its id (`srv-{name}-{n}`), so the client's
//!   answer, landing on any instance, is sent to that inbox and the call
//!   completes; an answer for an instance that is gone is refused with HTTP
//!   410 and says so. `notifications/cancelled` landing where the request
//!   does not run goes to every instance, and the one running it cancels it
//!   (its stream ends without a result, as on one instance); `tasks/cancel`
//!   reaches the instance running the task the same way. Letters waiting to
//!   be handled are bounded by `redis.bus_buffer` (1024; past it the newest
//!   are dropped, counted in `mcp_server_bus_dropped_total`); sending one is
//!   bounded by `redis.bus_timeout_ms` (1000), as are a session's reads and
//!   writes. While Redis is unreachable, opening a session (`initialize`)
//!   and a session's first message on an instance that holds no copy
//!   answer 503 "the session store is unavailable" at once; messages of
//!   sessions an instance already holds go on, served by its copy as it is.
//!   `tests/legacy_round_robin.rs` runs the official TypeScript client and
//!   the Python SDK client (legacy mode), 200 full flows each — list, a call
//!   with progress, an elicitation answered mid-call, subscribe and the
//!   update on the GET stream, cancel, ping, `DELETE` — behind the shipped
//!   nginx config over three instances with no stickiness: none fails; then
//!   one instance is SIGKILLed mid-run, and only requests in flight on it
//!   fail (each with the client's error), every session going on on the
//!   others. `tests/legacy_cluster.rs` checks each of the above message by
//!   message.
//! - Every instance needs the same `mrtr.key` (or `ACTIX_MCP_MRTR_KEY`), so
//!   `requestState` issued by one verifies on another. To change the key
//!   without losing a flow in progress, list keys instead (`mrtr.keys`,
//!   `ACTIX_MCP_MRTR_KEYS`; the first signs, every one verifies, and each
//!   state names its key) and roll in three steps, each through the whole
//!   fleet: `[old, new]`, then `[new, old]`, then, once `mrtr.state_ttl_ms`
//!   has passed, `[new]` (`tests/mrtr.rs` runs a flow across the instances
//!   of every two neighbouring steps, both ways; `tests/mrtr_rotation.rs`
//!   rolls both steps through three running instances, restarted one by one
//!   while flows cross them: over 500 flows, none fails).
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
//! # Three instances, no single point of failure
//!
//! `config/cluster-sentinel.toml` is one instance of it: the hub, tasks,
//! legacy sessions and quotas in Redis through three Sentinels
//! (`config/sentinel.conf`, quorum 2), `min_replicas = 1`. `config/scale-out.sh`
//! starts it all on one machine — a master and a replica, three Sentinels,
//! three instances with one `requestState` key, nginx from
//! `config/nginx.conf` round robin over the three — then opens a legacy
//! session through the balancer, sees each instance serve it, kills the
//! master and sees every instance follow the promoted replica with the
//! session still served (`tests/scale_out_guide.rs` runs it as written,
//! every port moved):
//!
//! ```sh
//! cargo build --release --features full && bash config/scale-out.sh    # KEEP=1 leaves it running
//! ```
//!
//! What survives which failure:
//!
//! | What fails | What clients see |
//! |---|---|
//! | An instance (crash, SIGKILL) | Requests in flight on it fail (the balancer answers 502, or the connection drops); listen and GET streams held on it end and the clients open them again elsewhere. Every session, task and quota count goes on on the others. |
//! | An instance stopped (SIGTERM) | Nothing: it drains (`/readyz` 503 while it still serves), then stops; see "Rolling restarts". |
//! | The Redis master, with Sentinel | For the seconds until the sentinels promote the replica (about 2.5 s with `down-after-milliseconds 1000`): what needs Redis answers at once with an error (task creation and reads 500 "the task store is unavailable", a session's first message on an instance 503, quotas as `quotas_fail` says); calls, lists and sessions already held go on. Then every instance uses the promoted replica; listen streams stay open and get the resync's `list_changed`; every task and session acknowledged with `min_replicas = 1` is there. |
//! | Redis, without Sentinel | As during the gap above, until it is back. |
//! | The balancer | Everything: run two (DNS, a floating address) — outside this project. |
//!
//! `tests/sentinel.rs` measures the master's death under load (4 callers on
//! two instances, calls and task creations, a listen stream on each, a
//! session): both instances on the promoted replica 2.6 s after the kill; of
//! 566 calls none failed; 52 tasks acknowledged, all kept; 91 task
//! creations refused (each saying the task store is unavailable) during the
//! gap; a change made after it reached both listen streams.
//!
//! What sessions in Redis cost is measured by `benches/legacy_store.sh`:
//! legacy `tools/call` with `legacy.store = "redis"` beside `"memory"`
//! (wrk, interleaved rounds) — with Redis, each message of a session costs
//! the one round trip of the revision check above — and the first message
//! of a session on an instance that does not hold it yet (its one read).
//! The figures are in the benchmark docs (`benches/README.md`).
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
