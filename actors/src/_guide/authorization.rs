//! # Authorization
//!
//!
//! Off by default (`auth.mode = "none"`), so a local server needs nothing. On
//! a network, the server is an OAuth 2.1 resource server as the MCP
//! authorization spec asks — a few lines of configuration against any issuer
//! that publishes RFC 8414 or OpenID Connect metadata (`config/auth.toml`):
//!
//! ```toml
//! [http]
//! bind = "0.0.0.0:8443"
//! public_url = "https://mcp.example.com/mcp"   # the canonical URI tokens must name in `aud`
//!
//! [http.tls]
//! cert = "/etc/actix-mcp/fullchain.pem"
//! key = "/etc/actix-mcp/privkey.pem"
//!
//! [auth]
//! mode = "oauth"
//! issuers = ["https://id.example.com"]
//! required_scopes = ["mcp"]
//! ```
//!
//! (or `ACTIX_MCP_AUTH_MODE=oauth ACTIX_MCP_AUTH_ISSUERS=https://id.example.com
//! ACTIX_MCP_PUBLIC_URL=https://mcp.example.com/mcp …`). OAuth needs
//! `http.public_url` (or `auth.resource`): the URL clients reach the server
//! at, which tokens name and the metadata advertises; without it the server
//! refuses to start, since behind a proxy or with several instances the bind
//! address is not that URL. The start line prints the resource advertised
//! and the issuers trusted.
//! With auth on, the server refuses to start on a non-loopback address without
//! `[http.tls]` unless `http.behind_tls_proxy = true` says a proxy terminates
//! TLS: tokens must not travel in the clear.
//!
//! What a client does (the spec's discovery flow): its first request gets
//! `401` with a challenge naming the Protected Resource Metadata (RFC 9728);
//! the metadata names the authorization server; the client reads that
//! server's metadata, obtains a token with `resource=<canonical URI>` (RFC
//! 8707), and sends `Authorization: Bearer <token>` on every request.
//!
//! ```text
//! $ curl -i http://127.0.0.1:8080/mcp -H 'Content-Type: application/json' \
//!     -H 'Accept: application/json, text/event-stream' \
//!     -d '{"jsonrpc":"2.0","id":1,"method":"server/discover","params":{}}'
//! HTTP/1.1 401 Unauthorized
//! www-authenticate: Bearer resource_metadata="http://127.0.0.1:8080/.well-known/oauth-protected-resource/mcp", scope="mcp"
//! content-type: application/json
//!
//! {"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"Unauthorized: authorization required: send Authorization: Bearer <token>"}}
//!
//! $ curl http://127.0.0.1:8080/.well-known/oauth-protected-resource/mcp
//! {"authorization_servers":["https://id.example.com"],"bearer_methods_supported":["header"],"resource":"http://127.0.0.1:8080/mcp","scopes_supported":["mcp"]}
//! ```
//!
//! - **Token validation** (OAuth 2.1 §5.2), from the request's head before a
//!   byte of its body is read (a request without valid credentials costs no
//!   body buffer): `Authorization: Bearer` only (a token in the query string
//!   gets 400); JWT signatures against the issuer's key set, discovered once
//!   from its metadata (or `auth.jwks_uri`), cached, and refetched on an
//!   unknown `kid` at most once per `auth.jwks_min_refresh_secs` (made-up key
//!   ids cannot hammer the issuer); a failed fetch backs off (1 s, doubling up
//!   to `auth.jwks_min_refresh_secs`) with one fetch in flight that concurrent
//!   requests wait on, so an issuer that is down is not hammered either;
//!   asymmetric algorithms only (`none` and HMAC never); `typ` `at+jwt` (RFC
//!   9068) — untyped or `JWT` pass too unless `auth.require_typ = true`, any
//!   other type (an ID token's) never; `iss` a trusted issuer; `aud`
//!   containing the canonical URI (scheme and host compared
//!   case-insensitively; an audience with a fragment or a user part is another
//!   resource, RFC 8707); `exp`, `nbf` and `iat` as RFC 7519 NumericDates
//!   (fractions included) with `auth.leeway_secs`. Opaque tokens go to RFC 7662
//!   introspection (`[auth.introspection]`), asked at every use so that
//!   revocation takes effect at once; the answer passes the same checks — its
//!   `aud` must name this server (an answer without `aud` is refused: a token
//!   meant for another API must not open this one). Valid JWTs are cached
//!   until they expire (`auth.token_cache`), so a token costs a map lookup
//!   after its first use. Tokens are never logged, and a handler never sees
//!   the `Authorization` header.
//! - **Who the caller is** (the identity key): the token's issuer and subject
//!   together — `sub`, or for a client-credentials token without one its
//!   `client_id`; a token naming neither is refused, never given an empty
//!   identity. Everything bound to a caller is bound to that pair: tasks,
//!   legacy sessions, `requestState`, and the task notifications of a listen
//!   stream, so `sub: "alice"` from one trusted issuer is not the other's
//!   alice (`Identity::key()` in your own code). An introspection answer
//!   without `iss` is vouched for by the introspection endpoint.
//! - **Refusals**: 401 with `error="invalid_token"` and a description for a
//!   missing-audience, expired, not-yet-valid, badly signed, untrusted or revoked
//!   token; 403 with `error="insufficient_scope"` and every scope the operation
//!   needs (step-up) for a valid token that lacks one; 503 when the issuer
//!   cannot be asked, with a generic message (its address and error go to the
//!   log only). The body is a JSON-RPC error (with the request's id for a 403;
//!   a 401 is answered before the body is read, so its id is `null`). The
//!   metadata is served at `/.well-known/oauth-protected-resource` and its
//!   path-inserted form, also by the embedding helper, and never lists
//!   `offline_access`.
//! - **What the operator sees**: every refusal is counted in
//!   `mcp_server_auth_failures_total{reason}` (`missing`, `invalid_token`,
//!   `invalid_request`, `insufficient_scope`, `unavailable`; every series from
//!   0 at start) and logged — at info for a refused token (`reason`, `why`,
//!   the `issuer` and `client_id` the token names, the `subject` of a known
//!   caller; never token material), at warn with the `detail` when an issuer
//!   could not be asked — at most ten lines a second of each kind, the next
//!   line written counting those left out (`left_out`). `/status` shows each
//!   issuer's key set: keys held, their age, failures in a row, the last error.
//! - **Scopes per item**: `Tool::new(…).with_scopes(["admin"])` (also resources,
//!   templates, prompts) adds to `auth.required_scopes`; `[auth.scope_implies]`
//!   makes a broader scope imply narrower ones. The binary's own catalogs
//!   take theirs from configuration: `[auth.item_scopes]` gives `tools` and
//!   `prompts` by name and `resources` by URI glob (`*` within a segment,
//!   `**` across them; matched against templates' URI templates too), added
//!   to an item's own, also for items added later. `tools/list`, `resources/list`
//!   and `prompts/list` show a caller only what its token may use (those pages
//!   are `cacheScope: "private"`).
//! - **Identity for handlers**: `ctx.auth()` gives subject, issuer, client id,
//!   scopes and every validated claim.
//! - **Everywhere a request comes from**: a listen stream is authorized when
//!   opened (its resource subscriptions need read scopes) and ends with its
//!   completion result when the token expires, as at shutdown; a legacy session
//!   belongs to the caller that opened it (another token gets 404);
//!   `requestState` is bound to the caller, so it cannot be replayed by another
//!   user; a task is its creator's, and its notifications reach only its
//!   creator's listen streams (another caller naming its id in `taskIds` gets
//!   what an unknown id gets: nothing). stdio does not use any of this: the
//!   spec has stdio take credentials from the environment.
//! - **Tasks per caller**: `tasks.max_tasks_per_subject` (default 100) bounds
//!   each authenticated caller's unexpired tasks, so one caller cannot fill
//!   `tasks.max_tasks` for everyone. Past either limit a tool that may run as a
//!   task is answered in the call, and one that must is refused with -32000
//!   (HTTP 429, `data.reason` `caller_share` or `store`): load, to retry later,
//!   not a fault.
//! - **The Host guard and probes**: the status page, its data and `/metrics`
//!   on the main port check `Host` and `Origin` like the MCP endpoint
//!   (`http.allowed_hosts`, `http.allowed_origins`: a DNS-rebinding page reads
//!   nothing); `/healthz` and `/readyz` answer any host, so a kubelet's probe
//!   (which names the pod's address) passes as it is. A scraper names an
//!   allowed host (or scrape `metrics.bind`, a listener of its own). With
//!   authorization on, `/metrics` on the main port also needs credentials
//!   that grant `metrics.scope` (default `metrics`), unless `metrics.public`.
//! - **Other authenticators**: `auth.mode = "api_key"` with `[[auth.api_keys]]`
//!   (SHA-256 digests or environment variables, each with a subject and scopes)
//!   for internal deployments; or your own type implementing
//!   `actix_mcp::auth::Authenticator` (request head → identity or error), given
//!   to `McpServer::builder(…).authenticator(…)`.
//!
//! `tests/auth.rs` runs all of this against a real authorization server,
//! oidc-provider (npm), started on loopback by `tests/auth/server.mjs`: tokens
//! from the client-credentials grant with resource indicators, every way a
//! token can be wrong (minted by the test where the issuer would not mint
//! them), key rotation at the issuer, revoked opaque tokens, step-up, list
//! filtering, a listen stream outliving its 3-second token, subject-bound
//! sessions and `requestState`, and two instances behind nginx accepting the
//! same token; plus API keys, a custom authenticator and TLS.
//! `tests/auth_issuers.rs` adds a tiny issuer of its own on loopback whose key
//! set fails or hangs and whose introspection answers what the test says
//! (tokens without audience or subject, fractional dates, a flood of forged
//! tokens while the key set is down, two issuers' alices), and
//! `tests/task_owners.rs` the task shares and task listens among callers.
