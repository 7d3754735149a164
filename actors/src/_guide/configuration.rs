//! # Configuration
//!
//! Where settings come from, every limit, and the command line. `config/default.toml` is the reference: every key, commented.
//!
//!
//! `config/default.toml` lists every key with its default; it equals
//! `Config::default()` (a test checks it), which is what the binary uses when no
//! file is given. Precedence: defaults < `--config FILE` < `ACTIX_MCP_*`
//! environment (`ACTIX_MCP_BIND`, `ACTIX_MCP_PATH`, `ACTIX_MCP_CATALOG`,
//! `ACTIX_MCP_ROOT`, `ACTIX_MCP_MRTR_KEY`, `ACTIX_MCP_MRTR_KEYS` (comma-separated),
//! `ACTIX_MCP_HUB_BACKEND`, `ACTIX_MCP_REDIS_URL`, `ACTIX_MCP_REDIS_SENTINELS`
//! (comma-separated), `ACTIX_MCP_REDIS_MASTER`, `ACTIX_MCP_LOG_LEVEL`, `ACTIX_MCP_LOG_FORMAT`, `ACTIX_MCP_MAX_BODY_BYTES`,
//! `ACTIX_MCP_REQUEST_TIMEOUT_MS`, `ACTIX_MCP_WORKERS`, `ACTIX_MCP_H2C`,
//! `ACTIX_MCP_MAX_CONNECTIONS`, `ACTIX_MCP_PUBLIC_URL`, `ACTIX_MCP_DRAIN_MS`, `ACTIX_MCP_TLS_CERT`,
//! `ACTIX_MCP_TLS_KEY`, `ACTIX_MCP_BEHIND_TLS_PROXY`, `ACTIX_MCP_AUTH_MODE`,
//! `ACTIX_MCP_AUTH_RESOURCE`, `ACTIX_MCP_AUTH_ISSUERS` and
//! `ACTIX_MCP_AUTH_REQUIRED_SCOPES` (comma-separated), `ACTIX_MCP_AUTH_JWKS_URI`,
//! `ACTIX_MCP_AUTH_INTROSPECTION_ENDPOINT`, `ACTIX_MCP_AUTH_INTROSPECTION_CLIENT_ID`,
//! `ACTIX_MCP_AUTH_INTROSPECTION_SECRET`, `ACTIX_MCP_REQUIRE_BACKEND`,
//! `ACTIX_MCP_METRICS`, `ACTIX_MCP_METRICS_BIND`, `ACTIX_MCP_OTEL_ENDPOINT`, `ACTIX_MCP_STATUS`,
//! `ACTIX_MCP_AUDIT_FILE`, `ACTIX_MCP_POLICY_FILE`, `ACTIX_MCP_POLICY_MODE`,
//! `ACTIX_MCP_QUOTAS_FAIL`, `ACTIX_MCP_TASKS_STORE`, `ACTIX_MCP_LEGACY_STORE`) < flags. SIGHUP reads them all again and applies
//! the upstreams, the policy, the quotas and the pins (see "Reload" in the
//! operating guide); every other setting takes effect at the next start.
//!
//! **Paths.** In a file, a relative path of the files the server keeps
//! beside its configuration — `policy.file`, `policy.schema`, `audit.file`,
//! `gateway.pins` — is relative to the file's directory, so
//! `actix-mcp --config /etc/actix-mcp/server.toml` with `audit.file =
//! "audit.jsonl"` writes `/etc/actix-mcp/audit.jsonl` wherever it is started
//! from. Every other path (`fs.root`, `http.tls.cert` and `key`, an
//! upstream's `command`, `cwd` and `bearer_file`), and any path given by an
//! `ACTIX_MCP_*` variable or a flag, is relative to the working directory,
//! as is every path of `Config::from_toml` (no file).
//!
//! **Words.** A setting that takes one of a few words (`auth.mode`,
//! `hub.backend`, `log.format`, `cache.scope`, `tasks.store`,
//! `legacy.store`, `audit.when_full`, `policy.mode`, `quotas_fail`,
//! `[[quotas]] by`) refuses any other value with the same sentence from a
//! file, a variable or a flag, naming the setting and its words:
//! `auth.mode must be one of "none", "oauth", "api_key", not "OAuth"`.
//!
//! **Embedding.** Reading a file (`Config::from_file`, `Config::from_toml`)
//! needs the `config-file` cargo feature (toml alone), which `cli`
//! includes: an application built without `cli` reads the same files.
//!
//! ```text
//! actix-mcp [serve] [--config FILE] [--bind ADDR:PORT] [--h2c] [--catalog fs|everything] [--root DIR] [--log-level L] [--log-format term|json]
//! actix-mcp stdio   [--config FILE] [--catalog fs|everything] [--root DIR] [--log-level L] [--log-format term|json]
//! ```
//!
//! `--bind 127.0.0.1:0` picks a free port; the server prints
//! `listening on http://127.0.0.1:PORT/mcp` (`https://` with `[http.tls]`) on
//! one stderr line. Logs (slog,
//! terminal or JSON) always go to stderr; on stdio, stdout carries only MCP
//! messages. Every limit is explicit: `http.max_body_bytes` (413),
//! `http.body_timeout_ms` (a body still incomplete then: 408),
//! `http.max_connections` (per worker),
//! `stdio.max_line_bytes`, `request.timeout_ms`, `request.outbound_buffer`
//! (per-request backpressure), `request.mailbox`, `stdio.writer_buffer`,
//! `stdio.max_in_flight` (at the cap no more input is read until a request
//! ends: back-pressure, nothing dropped),
//! `hub.max_listeners` (lowered at start to what the open-files limit can hold, unless HTTP/2 may carry the streams),
//! `hub.listener_buffer`, `hub.max_resource_subscriptions` and
//! `hub.max_uri_bytes` (per listen stream; -32602 beyond), `hub.relay_mailbox`,
//! `hub.mailbox`, `hub.dedup_ms`, `fs.max_file_bytes`, `fs.max_files`, `fs.search_max_results`,
//! `mrtr.state_ttl_ms`, `legacy.max_sessions`, `legacy.evict_idle_ms`, `legacy.idle_timeout_ms`,
//! `legacy.input_timeout_ms`, `legacy.max_input_rounds`, `redis.bus_buffer` and
//! `redis.bus_timeout_ms` (letters between instances), `auth.token_cache`,
//! `auth.fetch_timeout_ms`, `auth.jwks_min_refresh_secs`, `log.slow_ms`.
//! The default HTTP binding is loopback with a `Host`/`Origin` allow-list of the
//! loopback names (403 otherwise) against DNS rebinding; set `http.allowed_hosts`
//! and `http.allowed_origins` when serving other names. A repeated `Host`,
//! `Origin` or `Mcp-*` header is refused (a proxy could read another copy than
//! the server does), and so is an encoded body (`Content-Encoding` other than
//! `identity`: 415).
//!
//! A handler that panics is answered with -32603 and logged with the request's
//! id and method; the server carries on. At SIGTERM, listen streams get their
//! completion result, running requests get `http.shutdown_timeout_secs` (stdio:
//! `stdio.drain_ms`) to finish, and those still running then answer -32603
//! "server shutting down" before their stream closes.
//!
//! The built-in catalog `everything` is the fixture the conformance suite drives
//! (`--catalog everything`).
