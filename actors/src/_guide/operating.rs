//! # Operating it: health, metrics, status, traces, logs, the audit log, reloads
//!
//! A whole deployment to operate — TLS at nginx, OAuth, two instances over
//! Redis, Prometheus scraping each instance's metrics listener — is set up
//! and checked step by step by `config/walkthrough.sh` (see the end of the
//! scaling-out guide, [`super::scaling_out`]); `tests/walkthrough.rs` runs it.
//!
//! **Health.** `GET /healthz` answers 200 while the process answers; `GET
//! /readyz` answers 200 when the instance should get traffic and 503 with the
//! reasons when it should not — from SIGTERM on (through the drain of
//! `shutdown.drain_ms`, while requests are still served, and the shutdown
//! that follows; see "Rolling restarts" in the scaling-out guide), while the hub is at
//! `hub.max_listeners`, and, with `hub.backend = "redis"` and
//! `hub.require_backend = true`, while Redis is unreachable. Both are on the
//! main port (`[health]` sets the paths), mounted by `configure()` too, and
//! skip the Origin check and authorization.
//!
//! **Reload.** SIGHUP makes the binary read its configuration again — the
//! `--config` file, the `ACTIX_MCP_*` environment and its flags, as at
//! start — and apply what can change while it serves: `[[upstreams]]`
//! (an unchanged upstream goes on untouched; a removed or changed one
//! leaves the lists at once, finishes its calls in flight, then stops; an
//! added or changed one starts), `[policy]`, `[[quotas]]` and `quotas_fail`
//! (counts go on), and `gateway.pins` (re-read, and every upstream's items
//! screened again: what `actix-mcp gateway approve` approved is served).
//! Each request keeps the policy and quotas it started with. A reload that
//! changes what a list may show sends that list's `list_changed` (a policy
//! change: all three lists; an upstream: the lists its items were in). A
//! file that does not load — TOML, a setting out of range, Cedar that does
//! not parse or validate, a pins file that is not one — is refused whole:
//! the server logs `SIGHUP: reload refused; the running configuration is
//! kept` at ERROR with why, and goes on as it was. Every other setting
//! takes effect at the next start (a reload that changes one logs the
//! settings at WARN). The status data (`/status.json`) shows `config`:
//! `generation` (1 at start, +1 per applied reload), `last_reload_unix` and
//! `last_reload_error`. An embedder calls `McpServer::reload(config)`, or
//! runs `actix_mcp::server::reload_on_hangup` with its own loader.
//! `tests/reload.rs` changes the policy, a quota and the upstreams of a
//! running binary while a call to a changed upstream is in flight (it
//! finishes), refuses three broken files, and runs a hundred reloads under
//! load with no call failing.
//!
//! **Metrics.** `GET /metrics` is the Prometheus text format (`[metrics]`,
//! on by default). `metrics.bind = "127.0.0.1:9100"` serves it on a listener
//! of its own instead — recommended when the main port faces the internet:
//! the scraper then reaches it on an internal address, and nothing about the
//! server's traffic is public. With authorization on, `/metrics` on the main
//! port is not public either: the scraper presents credentials that grant
//! `metrics.scope` (`metrics` by default; 401 without credentials, 403
//! without the scope), unless `metrics.public = true`. A scrape
//! configuration:
//!
//! ```yaml
//! scrape_configs:
//!   - job_name: actix-mcp
//!     scrape_interval: 15s
//!     static_configs:
//!       - targets: ["10.0.0.5:8080"]   # or metrics.bind's address
//! ```
//!
//! | series | type | labels |
//! |---|---|---|
//! | `mcp_server_operation_duration_seconds` | histogram | `mcp_method_name` (`_OTHER` for an unknown method), `mcp_protocol_version`, `network_transport` (`tcp`, `pipe`); when it failed `error_type` (the JSON-RPC code, `tool_error` for a result with `isError: true`, `timeout`, `cancelled`) and, when the response carries one, `rpc_response_status_code`; `gen_ai_operation_name="execute_tool"` on `tools/call`; with `metrics.tool_labels = true`, `gen_ai_tool_name` |
//! | `mcp_server_requests_in_flight` | gauge | |
//! | `mcp_server_request_actors_started_total` | counter | |
//! | `mcp_server_cancellations_total`, `mcp_server_timeouts_total` | counter | |
//! | `mcp_server_mrtr_rounds_total` | counter | `event` (`issued`, `completed`, `refused`) |
//! | `mcp_server_listen_streams_open` | gauge | |
//! | `mcp_server_listen_streams_opened_total` | counter | |
//! | `mcp_server_listen_streams_closed_total` | counter | `reason` (`client`, `lag`, `shutdown`, `token_expiry`) |
//! | `mcp_server_lagged_subscribers_total` | counter | |
//! | `mcp_server_notifications_delivered_total`, `mcp_server_notifications_dropped_total` | counter | |
//! | `mcp_server_notification_delivery_seconds` | histogram | (event routed by the hub → written by the relay) |
//! | `mcp_server_relay_mailbox_full_total` | counter | |
//! | `mcp_server_http_responses_total` | counter | `status` (the exact code) |
//! | `mcp_server_http_request_bytes_total`, `mcp_server_http_response_bytes_total` | counter | (response bytes count SSE streams as they are written) |
//! | `mcp_server_legacy_sessions_open` | gauge | |
//! | `mcp_server_redis_connected` | gauge | |
//! | `mcp_server_redis_reconnects_total`, `_resyncs_total`, `_events_published_total`, `_events_received_total`, `_events_deduplicated_total` | counter | |
//! | `mcp_server_redis_wait_short_total` | counter | (with `redis.min_replicas`: task and session writes fewer replicas acknowledged in time) |
//! | `mcp_server_bus_dropped_total` | counter | (with legacy sessions in Redis: letters from other instances dropped because `redis.bus_buffer` was full) |
//! | `mcp_client_operation_duration_seconds` | histogram | a gateway's requests to its upstreams: `upstream`, `mcp_method_name`, `error_type` (empty on success; the JSON-RPC code, `tool_error`, `timeout`, `cancelled`, `transport`) |
//! | `mcp_gateway_upstream_restarts_total` | counter | `upstream` |
//! | `mcp_gateway_upstream_up` | gauge | `upstream` (1 up, 0 not) |
//! | `mcp_gateway_items_refused_total` | counter | `upstream`: items not served for a hidden character or a definition changed since pinned (see the gateway guide) |
//! | `mcp_server_policy_decisions_total` | counter | `decision` (`allow`, `deny`, `shadow_deny`): each call's decision under `[policy]` (see the gateway guide) |
//! | `mcp_server_quota_decisions_total` | counter | `quota`, `decision` (`allow`, `quota`, `fail_open`, `fail_closed`): the calls each `[[quotas]]` table counted or refused (see the gateway guide) |
//! | `mcp_server_audit_records_total`, `mcp_server_audit_dropped_total`, `mcp_server_audit_queue_full_total` | counter | (with `[audit]`: records written, lost, and those that found the queue full) |
//!
//! The duration histogram follows the OpenTelemetry MCP semantic conventions
//! (`mcp.server.operation.duration` with `mcp.method.name`,
//! `mcp.protocol.version`, `network.transport`, `error.type`,
//! `rpc.response.status_code`, `gen_ai.operation.name`, `gen_ai.tool.name`);
//! so do the spans. Requests refused before any handler ran (an unknown
//! method, a missing `_meta`, credentials refused) are operations too, with
//! their error. Series with a fixed set of labels (the counters above, each
//! `event` and `reason`) exist from the start at 0, so an alert on a rate
//! never waits for a first event. Label values are bounded: never tool arguments,
//! ids or URIs, and tool names only with `metrics.tool_labels = true` — then
//! only names the catalog holds (a call of an unknown name is labelled
//! `_other`), since whoever registers tools decides how many there are. p99 by method: `histogram_quantile(0.99, sum by (le,
//! mcp_method_name) (rate(mcp_server_operation_duration_seconds_bucket[5m])))`.
//! `tests/metrics.rs` runs a real Prometheus (Debian's package) scraping the
//! binary every second and checks the series against what the test did.
//!
//! **Status page.** With `status.enabled = true` (or `ACTIX_MCP_STATUS=true`),
//! `/status` is one HTML page with no external assets and no build step —
//! uptime, version, request rate, requests, errors and p50/p99 by method,
//! open listen streams, lagged subscribers, legacy sessions and the Redis
//! link, with a sparkline of the last five minutes — refreshing itself every
//! 2 s from `/status.json`. It answers loopback clients only unless
//! `status.allow_remote = true`. `tests/status.rs` loads it in headless
//! Chromium and checks that it shows what the JSON says, with no console
//! error. Under `mcp-load mixed`:
//!
//! A screenshot of it under that load is in the repository at
//! `actors/docs/status.png`.
//!
//! **Trace context.** W3C `traceparent`, `tracestate` and `baggage` are read
//! from the HTTP headers and from `_meta` (the 2026-07-28 spec reserves those
//! keys there; `_meta` wins for its request). A malformed value is ignored,
//! never an error. The trace id is on every log line of the request,
//! handlers read the context with `ctx.trace_context()`, and the progress and
//! log notifications the request sends carry it in their `_meta` — as do the
//! hub's list-changed and resource-updated notifications for a change the
//! request made (through Redis to the other instances too).
//!
//! **OpenTelemetry.** Built with the `otel` feature
//! (`cargo run --release -p actix-mcp --features otel -- serve …`), the
//! server exports one span per request and one per listen stream over
//! OTLP/HTTP (protobuf) to a collector named by `otel.endpoint` (its base
//! URL: spans go to `/v1/traces` under it; `ACTIX_MCP_OTEL_ENDPOINT`) or by
//! the standard `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT` /
//! `OTEL_EXPORTER_OTLP_ENDPOINT`; with none, nothing is exported. Spans follow
//! the MCP semantic conventions: kind `SERVER`, named `{mcp.method.name}
//! {target}` (`tools/call get_weather`, `prompts/get summarize`, else the
//! method), with `mcp.method.name`, `mcp.protocol.version`,
//! `jsonrpc.request.id`, `network.transport` (`tcp`, `pipe` for stdio),
//! `gen_ai.tool.name` and `gen_ai.operation.name = execute_tool`,
//! `gen_ai.prompt.name`, `mcp.resource.uri`, and on failure `error.type`,
//! `rpc.response.status_code` and an error status. A request's span is a
//! child of the caller's `traceparent`, and what the handler sends on
//! (progress, logs, hub notifications) names that span as its parent. A
//! listen stream's span ends with the stream and records
//! `mcp.subscription.close_reason`. Spans are batched off the request path
//! and flushed at shutdown. Pointing it at a local collector:
//!
//! ```sh
//! otelcol --config collector.yaml &        # an OTLP receiver on :4318
//! ACTIX_MCP_OTEL_ENDPOINT=http://127.0.0.1:4318 \
//!   cargo run --release -p actix-mcp --features otel -- serve
//! ```
//!
//! `tests/otel.rs` starts an OTLP/HTTP receiver, decodes what arrives with
//! `opentelemetry-proto` and checks names, parents and attributes. The spans
//! are made by the request actor rather than by an HTTP middleware
//! (`opentelemetry-instrumentation-actix-web`): an MCP operation is one
//! JSON-RPC request, which stdio carries too, and a listen stream outlives
//! the HTTP exchange's handler.
//!
//! **Logs.** One INFO line at start (addresses, catalog, versions, backend,
//! auth, TLS, metrics); requests at DEBUG; cancellations and client
//! disconnects at DEBUG; requests slower than `log.slow_ms` (1 s) at INFO with
//! method, duration and outcome. Never a token, never an argument value.
//!
//! **Audit log.** `[audit] file = "/var/log/actix-mcp/audit.jsonl"` records
//! every `tools/call`, `resources/read`, `prompts/get`, `events/poll` and
//! `events/stream` (local or through
//! the gateway, in both eras) as one JSON line, with nothing of the
//! arguments but their digest:
//!
//! ```text
//! {"seq":41,"time":"2026-12-05T10:00:00.123Z","caller":"anonymous","method":"tools/call","name":"git__log",
//!  "upstream":"git","decision":"allow","outcome":"ok","duration_ms":12,
//!  "arguments_sha256":"5f3c…","prev":"9a1e…"}
//! ```
//!
//! `caller` is the caller's identity key (issuer and subject; `anonymous`
//! with authorization off), `name` the tool or prompt name or the resource
//! URI as called, `upstream` the upstream serving the item (`""` for local
//! items), `decision` `allow`, `deny` for a call `[policy]` refused, or
//! `quota` for one a `[[quotas]]` table refused, `outcome` `ok`, `error`, `tool_error` or `cancelled`,
//! `arguments_sha256` the SHA-256 of the `arguments` bytes as received (of
//! `{}` when absent: the same arguments sent with other spacing digest
//! differently), and `prev` the SHA-256 of the previous line's bytes (64
//! zeros for `seq` 1). Each request hands its record to a bounded queue
//! (`audit.queue`, 4096) that one thread writes: with `when_full = "block"`
//! (the default) no record is lost — the worker thread ending a call waits
//! while the disk is that far behind, and the other requests on that worker
//! wait with it; with `"drop"` nothing waits and the record is counted as
//! dropped. Lines are
//! written as they come and fsync'd every `audit.sync_ms` (1000; 0: each
//! line). Past `audit.max_bytes` (64 MiB) the file is renamed `FILE.SEQ`,
//! `SEQ` being its first record, and a new `FILE` goes on with the chain; a
//! restarted server continues the chain of the file it finds — or, when
//! `FILE` is missing or empty (a stop right after a rotation), of the
//! rotated `FILE.SEQ` with the highest `SEQ` — and refuses to start on one
//! whose last line is cut short or is not a record. A `FILE` the server
//! created and never wrote to is removed when it stops, so a start that
//! failed (a policy file that does not load, say) leaves no empty file.
//!
//! `actix-mcp audit verify FILE…` walks the chain — rotated files first, by
//! `SEQ`, the live file last — and exits 0 printing `N records intact` and
//! the head (`head: seq S sha256 H`), or 1 printing the line where the chain
//! first breaks — the line altered, inserted or removed, when one was; when
//! several lines in a row were altered, the first break shows only that the
//! line it names or the one before it was. A file it cannot read (missing,
//! unreadable) is not called altered: it exits 2 naming the file.
//!
//! ```sh
//! actix-mcp audit verify $(ls /var/log/actix-mcp/audit.jsonl.* | sort -t. -k3 -n) /var/log/actix-mcp/audit.jsonl
//! # 1000 records intact
//! # head: seq 1000 sha256 4c2d…
//! ```
//!
//! The first record must be `seq` 1, with a `prev` of 64 zeros: lines (or
//! whole files) removed from the start are named at line 1 (`altered: FILE
//! line 1: the first record has seq 3, not 1: the records before it (seq 1
//! to 2) are missing`). Files that continue a log whose earlier files were
//! deleted (retention) or are kept elsewhere are verified after the head
//! those files ended with: `audit verify --after SEQ:SHA256 FILE…`, the
//! head as an earlier `verify` printed it or as the server logged it at the
//! rotation (`audit log rotated`, `seq` and `head_sha256`); the first
//! record must then be `seq` S+1 with that SHA-256 as its `prev`.
//! Embedders call the same checks: `actix_mcp::audit::verify(&files)` and
//! `actix_mcp::audit::verify_after(&head, &files)` return the
//! [`Intact`](crate::audit::Intact) chain (records, head `seq` and SHA-256)
//! or where it is [`Broken`](crate::audit::Broken) (file, line, why).
//!
//! A chain alone cannot see its *last* line changed or removed (nothing
//! follows it). Anchor the head elsewhere: the server logs it at INFO when
//! the log opens, at each rotation and when it closes (`audit log closed`,
//! with `seq` and `head_sha256`), so a log shipper that keeps the server's
//! log apart from the audit file keeps the anchors; or record `verify`'s
//! head periodically in a system the writer of the audit file cannot
//! change. The line of an anchored `seq` must still hash to the anchored
//! value (`grep '^{"seq":S,' FILE | tr -d '\n' | sha256sum`); with the
//! chain intact, nothing up to it changed.
//! `tests/audit.rs` makes 1,000 calls against the binary, verifies the
//! 1,000 records, flips bytes in one line and checks that `verify` names
//! it, removes a log's first lines and checks that `verify` names line 1
//! (and that `--after` the head of the lines removed verifies the rest),
//! rotates a log across files through the gateway, and checks that a
//! build that failed left no audit file.
