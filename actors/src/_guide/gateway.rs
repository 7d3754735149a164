//! # Put your existing servers behind actix-mcp
//!
//! Most MCP servers in use are programs started over stdio (the npm and
//! PyPI reference servers, internal tools) or HTTP servers with sessions.
//! Served through actix-mcp as *upstreams*, they become one stateless
//! 2026-07-28 endpoint (and a legacy one, for old clients) with what this
//! server has: authorization and scopes, listen streams, metrics, several
//! instances behind a load balancer.
//!
//! ## Try it
//!
//! The commands below are run as written by the test suite
//! (`tests/gateway.rs`), with the port moved to a free one. The upstream here
//! is this project's own `stdio --catalog everything`; any command that
//! speaks MCP on stdin and stdout will do (`npx -y
//! @modelcontextprotocol/server-filesystem /srv/data`, `uvx mcp-server-git`).
//! The binary needs the `gateway` feature (`cargo install --features full
//! --path actors`, or `--features gateway`); without it `--upstream` is
//! refused at start, naming the feature.
//!
//! ```text
//! $ actix-mcp serve --bind 127.0.0.1:8080 --upstream "demo=actix-mcp stdio --catalog everything" &
//! $ actix-mcp client http://127.0.0.1:8080/mcp tools
//! → "name": "demo__echo"
//! $ actix-mcp client http://127.0.0.1:8080/mcp call demo__echo '{"text": "hello"}'
//! → "text": "hello"
//! $ actix-mcp client http://127.0.0.1:8080/mcp read test://static-text
//! → "uri": "test://static-text"
//! ```
//!
//! (`→` shows a line of the output; the client prints JSON.)
//!
//! `--upstream NAME=COMMAND` (or `NAME=URL` for a Streamable HTTP server)
//! may be given several times. With upstreams and no `--catalog`, only the
//! upstreams are served.
//!
//! ## Configured
//!
//! ```toml
//! [gateway]
//! separator = "__"              # tools and prompts are PREFIX__name
//!
//! [[upstreams]]
//! name = "files"
//! command = "npx"
//! args = ["-y", "@modelcontextprotocol/server-filesystem", "/srv/data"]
//! allow_tools = ["read_*", "list_*"]   # globs on the upstream's own names
//! scopes = ["files"]                   # needed for each of its items (auth on)
//!
//! [[upstreams]]
//! name = "crm"
//! url = "https://crm.internal/mcp"
//! bearer_env = "CRM_TOKEN"             # or bearer_file; never the caller's token
//! prefix = ""                          # at most one upstream without a prefix
//! timeout_ms = 30000
//! required = false
//! ```
//!
//! Every key is in `config/default.toml`, with its default.
//!
//! ## From code
//!
//! The builder starts the upstreams of its configuration (`[[upstreams]]`
//! in `config_file`, or `config.upstreams`) and those added with
//! `.upstream(…)`, beside your own tools; `/readyz` waits for the required
//! ones, and a stdio server reads its input once their first start settled:
//!
//! ```rust,no_run
//! use actix_mcp::config::UpstreamConfig;
//! use actix_mcp::prelude::*;
//!
//! fn main() -> Result<(), Box<dyn std::error::Error>> {
//!     let mut git = UpstreamConfig::parse_flag("git=uvx mcp-server-git --repository .")?;
//!     git.allow_tools = vec!["git_status".into(), "git_log".into()];
//!     McpServer::builder(server_info!())
//!         .tool(Tool::no_args("ping", "Answers pong", |_ctx| async { Ok("pong") }))
//!         .upstream(git)
//!         .upstream(UpstreamConfig::parse_flag("docs=http://127.0.0.1:9000/mcp")?)
//!         .run_http("127.0.0.1:8080")?;
//!     Ok(())
//! }
//! ```
//!
//! ## What happens to an upstream
//!
//! One [`crate::gateway::Upstream`] actor per upstream starts the command
//! (or connects to the URL) with [`crate::client`], learns its era (a
//! stateless server by `server/discover`, else the `initialize` handshake),
//! lists everything it offers and serves it from the shared catalog: tools
//! and prompts as `PREFIX__name`, resources and templates under their own
//! URIs, or under `uri_prefix` + their URI when the upstream has one. Two
//! upstreams serving the same URI or template is a start-up error naming
//! both (the process exits; give one of them a `uri_prefix`); a URI that
//! another upstream takes later — when it lists again, or when it first
//! comes up after failed starts — is logged and left out, and the gateway
//! serves on. A tool an upstream does not list but answers is callable by
//! its prefixed name all the same, within its filters.
//!
//! **What an upstream may claim.** Each upstream has its namespace,
//! `PREFIX` + separator: a prefix that begins another's (`hx` and `hx__good`,
//! two upstreams with the same prefix, or one without a prefix beside
//! another) would let two upstreams serve one name, and is refused at start
//! naming both. An upstream's item whose name falls in another upstream's
//! namespace, or that a local tool or prompt already has, is left out and
//! logged (`upstream item not served`): the local catalog always wins. A
//! tool whose `inputSchema` is not a JSON Schema object is left out the
//! same way. `allow_tools` / `deny_tools` decide calls as well as lists: a
//! name they leave out is answered exactly as an unknown tool and never
//! reaches the upstream. An upstream may announce `resources/updated` only
//! for URIs it serves; any other is dropped. A stateless upstream's is also
//! counted (`mcp_gateway_forged_notifications_total{upstream}`) and logged
//! at most once a second; a legacy upstream's session passes on only the
//! updates of URIs the gateway subscribed to, so the others never reach it.
//!
//! **What an upstream may send.** Each message it sends — a stdio line, an
//! HTTP body, an SSE event — is at most `max_message_bytes` (64 MiB); a
//! listing is followed for at most `max_list_pages` pages (10,000) and
//! `max_list_items` items (100,000); every request, the handshake included,
//! is bounded by `timeout_ms`. Past any of these the upstream is marked down
//! with a reason naming the limit and started again after the backoff; a
//! stdio line that is not JSON (invalid UTF-8 included) is skipped. An HTTP
//! upstream whose connections are refused (a server shutting down) is
//! marked down at once, and its listen stream is closed so that it can
//! finish stopping. While an upstream is down a call of one of its names is
//! answered `Unknown tool: NAME (upstream X is down since …: why; last up
//! …)`, and an upstream's own errors name the item as the caller called it.
//!
//! At the upstream's `list_changed` the gateway lists again and its own
//! listeners hear one `list_changed` per kind that changed (an item whose
//! definition is the same is left alone). A listener that subscribes to one
//! of an upstream's resources (`subscriptions/listen` with
//! `resourceSubscriptions`, or a legacy session's `resources/subscribe`)
//! makes the gateway subscribe to it upstream — once per URI, however many
//! listeners want it, and only while one does — and each
//! `notifications/resources/updated` the upstream sends reaches every such
//! listener. When the process ends (or an HTTP
//! upstream's listen stream closes) its items leave the catalog, calls in
//! flight fail with an error naming it, and it is started again after 500 ms,
//! doubling per failure in a row up to 30 s (`gateway.restart_*`).
//!
//! ## Per call
//!
//! - **Progress and log messages** of the upstream call go down to the caller
//!   (logs at the caller's own level).
//! - **Cancellation** goes up: a caller that closes its stream or sends
//!   `notifications/cancelled` cancels the upstream request (timed as
//!   `error_type="cancelled"`).
//! - **Completion** of a prompt's arguments or a template's variables is
//!   asked of the upstream that owns it, under its own name there.
//! - **Tasks**: a caller that declares the Tasks extension gets a task of
//!   the gateway for an upstream call that runs past `tasks.task_after_ms`;
//!   the upstream call goes on behind it, and `tasks/get` gives its result.
//! - **Caching hints** (`ttlMs`, `cacheScope`) are the upstream's: a list
//!   page carries the shortest TTL and narrowest scope of the upstream lists
//!   its items came from, a read carries the upstream read's (a legacy
//!   upstream gives none: the gateway's `[cache]` settings apply to its
//!   lists, and its reads are stale at once).
//! - **Capabilities**: the gateway declares elicitation, sampling and roots
//!   to the upstream, and each request names its caller's own in `_meta`; a
//!   stateless upstream reads them per request, and so does an actix-mcp
//!   legacy upstream (narrowing its session's set for that request). An
//!   upstream's "missing capability" or "resource not found" error is given
//!   in the caller's era's code.
//! - **Input** an upstream asks for (a legacy server's `elicitation/create`,
//!   `sampling/createMessage`, `roots/list`, or a stateless server's
//!   `InputRequiredResult`) is asked of the caller: a stateless caller gets an
//!   `InputRequiredResult` under the same keys (when the upstream names them),
//!   and the upstream request waits; the caller's retry carries the answers
//!   back (the waiting request's id travels sealed in `requestState`). A
//!   legacy caller is asked in its session. A request nobody comes back for is
//!   cancelled after `gateway.input_wait_ms`.
//! - **Threads**: a stdio upstream's pipes are read and written on one of the
//!   HTTP workers' threads (the upstreams spread over the workers), so a call
//!   that arrives on that worker never leaves its thread — with one worker
//!   (`http.workers = 1`), none does; a call taken by another worker crosses
//!   to it and back. That saves about a fifth of the gateway's CPU per
//!   forwarded call (`benches/gateway.sh`).
//!
//! ## Definitions it will not serve: hidden characters, pins
//!
//! An upstream's tool descriptions reach the model that decides what to
//! call, so a server that changes them is changing the model's instructions
//! ("tool poisoning"; a "rug pull" when it happens after the tool was
//! approved). Two guards, both on every listing of the upstream:
//!
//! - **Hidden characters.** A definition with a character a reader does not
//!   see — Unicode tag characters (U+E0000–U+E007F), bidirectional controls
//!   (U+202A–U+202E, U+2066–U+2069, U+200E, U+200F, U+061C), zero-width
//!   characters (U+200B–U+200D, U+2060, U+FEFF, U+180E) — anywhere in it
//!   (its description, its schemas' descriptions, its title) is never served,
//!   whatever else is configured.
//! - **Pins.** With `gateway.pins = "/var/lib/actix-mcp/pins.json"`, each
//!   item's definition (every member: description, schemas, annotations…)
//!   is pinned at its first sight, by the SHA-256 of each member (keys in
//!   order, so a re-ordered schema is no change). A later definition that
//!   differs is quarantined: the item is not listed, and the definition seen
//!   waits in the file for approval. Approving makes what was seen the pin:
//!
//! ```sh
//! actix-mcp gateway approve --pins /var/lib/actix-mcp/pins.json git/log   # one item (the upstream's own name or URI)
//! actix-mcp gateway approve --pins /var/lib/actix-mcp/pins.json --all git # everything of git that waits
//! ```
//!
//! and a reload (SIGHUP) or a restart serves it (the pins are read again).
//! An application embedding the gateway approves the same way with
//! [`approve_pins`](crate::gateway::approve_pins)`(pins_file, upstream,
//! Some(name))` (`None`: everything of the upstream that waits), then
//! [`McpServer::reload`](crate::McpServer::reload); it checks an audit log
//! with [`audit::verify`](crate::audit::verify). Refused items are
//! not listed; a call of a refused tool by name is answered -32602 with why
//! (`Tool git__log is not served: upstream git: its description changed since
//! it was pinned; approve it with …`) and never reaches the upstream; a
//! refused prompt or resource is unknown. Each refusal is logged at WARN
//! (`upstream item not served`, the item and why), counted in
//! `mcp_gateway_items_refused_total{upstream}` at each listing that refuses
//! it, and shown on the status page (the upstream's `refused`, with why). A
//! pins file that is not JSON stops the server at start. `tests/pins.rs` runs
//! an upstream whose tool's description asks for secrets after a call, and
//! one whose description hides tag characters.
//!
//! ## Who may call what: policies
//!
//! `allow_tools`/`deny_tools` decide per upstream for everyone. To decide
//! per caller, write [Cedar](https://www.cedarpolicy.com) policies
//! (`[policy]`, cargo feature `policy`, not in the default build: `--features policy` or `full`). One decision
//! serves the list and the call, for local items and upstream ones alike, in
//! both eras: a caller is shown exactly the items it may call, read or get,
//! and a call it may not make is answered as for an item that does not
//! exist (`-32602 Unknown tool: …` or `Unknown prompt: …`, the era's
//! resource-not-found for a read), so a policy cannot be probed.
//!
//! ```toml
//! [policy]
//! file = "/etc/actix-mcp/policy.cedar"
//! mode = "enforce"        # or "shadow": refuse nothing, log and count each would-be denial
//! schema = ""             # "": the built-in schema, config/policy.cedarschema
//! ```
//!
//! ```text
//! // Anyone may use read-only tools and the docs prompt; the ops scope may do everything.
//! permit(principal, action == Action::"tools/call", resource) when { resource.read_only };
//! permit(principal, action == Action::"prompts/get", resource == Prompt::"docs");
//! permit(principal, action, resource) when { principal.scopes.contains("ops") };
//! // Nothing of the scratch upstream for anonymous callers, and nothing destructive from it for anyone.
//! forbid(principal, action, resource is Tool) when { resource.upstream == "scratch" && (principal.anonymous || resource.destructive) };
//! ```
//!
//! | entity | id | attributes |
//! |---|---|---|
//! | principal `Caller` | the identity key (issuer and subject), `"anonymous"` with authorization off | `issuer`, `subject`, `client_id` (`""` when absent), `scopes` (a set), `anonymous` |
//! | action | `"tools/call"`, `"resources/read"`, `"prompts/get"`, `"events/subscribe"` (a poll or a stream of an event type; `events/list` shows a type exactly when it is permitted, and a refused one is answered `-32011` as an unknown type) | |
//! | resource `Tool` | the name as served (`git__log`) | `upstream` (`""` for local tools), `read_only`, `destructive` (the annotations' hints, false when absent) |
//! | resource `Resource` | the URI; a template's URI template (`"notes://{title}"`) | `upstream`, `template` (the URI template a read resolves through, a template's own for a template, `""` for a URI read on its own) |
//! | resource `Prompt` | the name as served | `upstream` |
//! | resource `Event` | the event type's name | `upstream` |
//!
//! What no `permit` allows is denied; a `forbid` wins over any `permit`.
//! A read whose URI no listed resource has but a template matches (the
//! first that matches, as the read resolves) is let through only when the
//! policies permit it both as that template — the decision that lists the
//! template — and as the URI, whose entity is a member of the template's.
//! The URI is decided as the template reads it, percent-escapes decoded (a
//! template hands its handler each variable decoded): a rule on
//! `notes://secret` holds for `notes://%73ecret` too. So `resource in Resource::"notes://{title}"` names the template and every
//! URI read through it, `resource == …` the template alone; a `forbid` on a
//! template hides it and refuses every read through it, and nothing is read
//! through a template the caller is not shown:
//!
//! ```text
//! // Every note may be read, but one; the drafts template is hidden and none of it read.
//! permit(principal, action == Action::"resources/read", resource in Resource::"notes://{title}");
//! forbid(principal, action == Action::"resources/read", resource == Resource::"notes://secret");
//! forbid(principal, action == Action::"resources/read", resource == Resource::"drafts://{title}");
//! ```
//!
//! Policies are validated against the schema at start, strictly: a policy
//! naming an attribute or type the schema lacks (`resource.owner`, or
//! `resource.read_only` where the resource may be a `Prompt` — scope such a
//! rule with `action == Action::"tools/call"` or `resource is Tool`) stops the
//! server with the validator's message, as does a file that is not Cedar.
//! Each call's decision is counted in
//! `mcp_server_policy_decisions_total{decision}` (`allow`, `deny`,
//! `shadow_deny`; lists are not counted), and recorded as the audit log's
//! `decision` (see the operating guide). In shadow mode each call the policy
//! would deny is logged at WARN (`policy: shadow`, the action, the name) and
//! served. `tests/policy.rs` checks a table of callers, actions and items
//! through the local catalog and a stdio upstream in both eras, shadow mode,
//! the schema check, a template's policy deciding the reads through it, and,
//! for random policies and catalogs, that a tool is listed exactly when its
//! call is let through.
//!
//! ## How many calls: quotas
//!
//! A `[[quotas]]` table limits `tools/call`s — of every tool, or of those
//! its `tools` globs match (over the names as served) — to `limit` per
//! `per_secs` seconds, counted per caller, per caller and tool, per tool or
//! per upstream (`by`; local tools are not counted by an `upstream` quota).
//! A counter's window starts with the first call it counts and ends
//! `per_secs` later; then the count starts again. A call is counted by every
//! quota that applies to it, or by none when one of them is at its limit.
//!
//! ```toml
//! quotas_fail = "open"     # top-level keys, before the first [section]
//!
//! [[quotas]]
//! name = "per-caller"      # the `quota` label and `data.quota`
//! limit = 600
//! per_secs = 60
//! by = "caller"            # "caller" | "caller+tool" | "tool" | "upstream"
//!
//! [[quotas]]
//! name = "search-api"
//! limit = 100
//! per_secs = 3600
//! by = "upstream"
//! tools = ["search__*"]
//! ```
//!
//! A call over a quota is refused before it runs (and before it reaches an
//! upstream), in both eras alike: HTTP 429 with `Retry-After` (whole
//! seconds until the counter's window ends) and a JSON-RPC error the
//! client can act on:
//!
//! ```text
//! {"jsonrpc":"2.0","id":4,"error":{"code":-32000,"message":"Quota \"per-caller\" exceeded; retry after 42 s",
//!  "data":{"reason":"quota","quota":"per-caller","retryAfterSecs":42}}}
//! ```
//!
//! With `hub.backend = "redis"` the counters are in Redis (at the hub's
//! `redis_url`, under its prefix), and one script checks and counts every
//! quota of a call at once, so a limit holds exactly however the calls are
//! spread across instances; otherwise each instance counts its own, in
//! memory (at most `quotas_max_keys` counters, 100,000; ended windows are
//! swept to make room). While the counters cannot count a call — Redis
//! unreachable or slower than `quotas_timeout_ms` (100), or the memory
//! counters full — `quotas_fail` decides: `open` (the default) serves the
//! call uncounted, `closed` refuses it as over its quota (`Retry-After: 1`,
//! message "cannot be counted now"); the first failure and the recovery are
//! logged. Policies decide first: a call a policy denies is not counted.
//! Each quota's decisions are counted in
//! `mcp_server_quota_decisions_total{quota, decision}` (`allow`, `quota`,
//! `fail_open`, `fail_closed`), and a refused call's audit record says
//! `"decision":"quota"`. `tests/quotas.rs` checks the refusal in both eras
//! against the binary, and 1,000 calls spread over two instances sharing
//! one Redis, of which exactly the limit, 100, are served; then Redis is
//! stopped and each `quotas_fail` does what it says.
//!
//! ## Beside other gateways
//!
//! What each gateway offers for governing calls, as its own documentation
//! describes it (read in December 2026; "—" where the pages read describe
//! nothing of the kind):
//!
//! | | actix-mcp | agentgateway | ToolHive | ContextForge | FastMCP proxy | mcp-proxy |
//! |---|---|---|---|---|---|---|
//! | per-caller policy on calls | Cedar (`[policy]`), schema-validated at start, shadow mode | CEL rules (`mcpAuthorization`) on tool, resource and prompt names and JWT claims | Cedar (`call_tool`, `get_prompt`, `read_resource`), HTTP PDP | plugins (Cedar, OPA, a unified PDP) on the pre-invoke hooks | middleware written in Python | — |
//! | a denied item hidden from lists | yes, one decision for list and call | yes ("filtered in the list request") | yes (list responses filtered) | — | what the middleware does | — |
//! | quotas | `[[quotas]]`: per caller, caller+tool, tool, upstream; fixed window | `localRateLimit` (token bucket, per instance) | — | Rate Limiter plugin (fixed window, in memory, by user, tenant, tool) | `RateLimitingMiddleware` (token bucket or sliding window, in process) | — |
//! | quotas exact across replicas | one Redis script | `remoteRateLimit` through an Envoy rate-limit service | — | — (in memory) | — | — |
//! | when the shared store is down | `quotas_fail = open \| closed` | `failureMode: failOpen \| failClosed` | — | — | — | — |
//! | audit log | JSON lines, hash-chained, `audit verify`, rotation | — | audit events per MCP operation (JSON) | audit trails (plugins) | what the middleware does | — |
//! | tamper evidence | SHA-256 chain and a verifier | — | — | — | — | — |
//! | pinned tool definitions (rug pulls) | `gateway.pins`, approve, quarantine | — | — | — | — | — |
//! | hidden characters refused | always | — | — | — | — | — |
//! | reload without restart | SIGHUP: upstreams, policy, quotas, pins | the configuration file is watched (or xDS) | — | plugins' configuration, hot reload | — | — |
//!
//! Sources: agentgateway.dev (MCP authorization, rate limiting, local
//! configuration), the ToolHive documentation (authorization policy
//! reference, audit logging), the ContextForge documentation and plugin
//! manifests (plugin framework, rate limiter, Cedar, OPA), gofastmcp.com
//! (middleware, rate limiting) and mcp-proxy's README (a transport bridge:
//! stdio to SSE or Streamable HTTP and back).
//!
//! ## Operations
//!
//! `/readyz` answers 503 ("a required upstream is not up") while an upstream
//! with `required = true` (the default) is not up, so a load balancer sends
//! no traffic to an instance that cannot serve it. The status page's data
//! (`/status.json`, `[status] enabled = true`) lists each upstream: its state
//! (`starting`, `up` with its version, `down` with the reason), restarts,
//! items served, how long its last start took, the resources it is
//! subscribed to, and the requests forwarded to it (finished, failed, mean
//! latency). Calls to upstream items
//! are counted and timed like local ones, under their served names, and the
//! requests to each upstream as an MCP client's
//! (`mcp_client_operation_duration_seconds` by `upstream`, method and error
//! type), with `mcp_gateway_upstream_restarts_total` and
//! `mcp_gateway_upstream_up` (the operating guide lists every series).
//!
//! ## Behind a load balancer
//!
//! A request waiting for its caller's input lives in the instance that
//! started it, so the retry must reach that instance: route `tools/call` by
//! `Mcp-Name` (the tool's name) as `config/nginx.conf` does, and give every
//! instance the same `mrtr.key`. A task lives in one instance too (with the
//! memory store; `tasks.id_prefix` routes `tasks/*` to it).
//!
//! Each instance starts its own copy of a stdio upstream (and its own
//! connection to an HTTP one). Every copy sees the upstream's changes, so an
//! upstream's events — `list_changed` after its lists change, and
//! `resources/updated` — go to the listeners of the instance whose copy saw
//! them, and never through Redis: each listener hears each event once, from
//! its own instance (`tests/cluster.rs` runs two gateways over one Redis,
//! each with its own copy of a filesystem server on one directory).
//! Changes an instance makes itself still reach every instance's listeners.
//!
//! ## Legacy stdio upstreams
//!
//! Over stdio, the 2025 revisions do not say which request a server's
//! request belongs to. An actix-mcp upstream says it (`_meta`
//! `actix-mcp/relatedRequestId`, declared as an experimental capability);
//! with any other legacy stdio server the gateway sends the requests that may
//! ask for input one at a time, so that the question is known to be theirs.
//!
//! ## Not yet
//!
//! An upstream's own tasks are not passed through: the gateway calls its
//! upstreams without the Tasks extension, so a tool an upstream runs only as
//! a task is refused by that upstream (-32021, given to the caller).
