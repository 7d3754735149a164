//! # A client for any MCP server
//!
//! [`crate::client`] speaks to any MCP server, this one or another SDK's,
//! over Streamable HTTP or a stdio child process, in either era. The gateway
//! and the command line use it, and so can your actix application.
//!
//! ## Connecting
//!
//! ```no_run
//! use actix_mcp::client::{Client, ClientOptions, SubscriptionFilter};
//! use futures::StreamExt;
//!
//! # async fn run() -> Result<(), actix_mcp::client::ClientError> {
//! let options = ClientOptions::new("my-agent", "1.0");
//! let client = Client::connect("http://127.0.0.1:8080/mcp", options.clone()).await?;
//! // or a child process: Client::spawn(tokio::process::Command, options)
//! let local = Client::spawn_shell("actix-mcp stdio --catalog everything", options).await?;
//!
//! let tools = client.list_tools().await?; // every page
//! let sum: f64 = client.call("add", serde_json::json!({"a": 1, "b": 2})).await?;
//! let mut changes = client.listen(SubscriptionFilter { tools_list_changed: true, ..Default::default() }).await?;
//! while let Some(n) = changes.next().await {
//!     println!("{}", n.method);
//! }
//! # Ok(()) }
//! ```
//!
//! **The era** is learned at connection: `server/discover` at `2026-07-28`
//! first (a refusal naming the versions served is retried once at one of
//! them); if the server does not know it — an error, or no JSON-RPC answer
//! at all (a server of the older era may answer an unknown request with a
//! 404 or a page; the handshake's own error stands if it fails too) — the
//! `initialize` handshake at
//! `2025-11-25`, accepting `2025-06-18` and `2025-03-26` if the server
//! answers with them. [`ClientOptions::pin`](crate::client::ClientOptions::pin)
//! speaks one version only. [`Client::server`](crate::client::Client::server)
//! says what was chosen, with the server's identity, capabilities and
//! instructions. A `server/discover` result must carry what the
//! specification requires of one — `resultType`, `supportedVersions` (not
//! empty), `capabilities`, `ttlMs` and `cacheScope`, each of its type — or the
//! connection fails with a transport error naming the member.
//!
//! - **Stateless**: every request carries `_meta` (version, `clientInfo`,
//!   `clientCapabilities`, and the log level if set) and the standard headers:
//!   `MCP-Protocol-Version`, `Mcp-Method`, `Mcp-Name` (the tool, prompt or
//!   URI) and `Mcp-Param-*` for the arguments a tool's schema marks with
//!   `x-mcp-header` (Base64 where a header cannot carry the value). A tool
//!   whose annotations are invalid is left out of `list_tools`.
//! - **Legacy**: `initialize`, `notifications/initialized`, the
//!   `Mcp-Session-Id` on every request, the session's GET stream for
//!   messages of no request, and `DELETE` at [`close`](crate::client::Client::close).
//! - **stdio**: one line per message; responses find their request by id,
//!   progress by its token and listen deliveries by their subscription id.
//!   The child runs in a process group of its own; closing the client
//!   closes its stdin and kills the whole group if it has not exited two
//!   seconds later (so a server started through a shell goes too), and
//!   dropping the last clone kills it at once.
//!
//! ## Limits
//!
//! A server the client talks to may be anyone's, so what it reads is
//! bounded: each message — a stdio line, an HTTP body, an SSE event — is at
//! most `max_message_bytes` (64 MiB; past it the connection ends with an
//! error naming the limit, and the rest is not read); `list_*` follows at
//! most `max_list(pages, items)` (10,000 pages, 100,000 items) before it
//! gives up naming the bound; `timeout` bounds every request, the
//! handshake (`server/discover` or `initialize`) included. Over HTTP,
//! nothing that is not UTF-8 is read as if it were: a JSON body or an SSE
//! event (its data or `id:`) with invalid UTF-8 fails its request with a
//! transport error (naming the event and the request for SSE), and the
//! stream is not read further. A stdio line that is not JSON, invalid UTF-8
//! included, is skipped, as a server's stray output. SSE is parsed in one
//! pass, whatever an event's size. Every queue is bounded by
//! `max_queued_messages` (1,024): the messages of one request's answer
//! waiting to be read (an HTTP stream is read no faster than they are; over
//! stdio, whose one reader serves every request, a request that leaves that
//! many unread for its time limit fails naming the limit), the connection's
//! own messages, and the lines waiting for a stdio server's stdin.
//!
//! The protocol itself is the protocol crate's, without I/O
//! ([`mcp_protocol::client`](crate::protocol::client)): choosing the era is
//! a state machine ([`Negotiation`](crate::protocol::client::Negotiation))
//! fed the server's answers, every message a server sends is decoded once
//! into a [`ServerMessage`](crate::protocol::client::ServerMessage),
//! requests are stamped and encoded by a [`Session`](crate::protocol::client::Session),
//! and an [`Answer`](crate::protocol::client::Answer) says whether a result
//! is complete, needs input or became a task. This module is its drivers:
//! HTTP and stdio, the handlers, time limits and the actor.
//!
//! ## Calls
//!
//! `list_tools`, `list_resources`, `list_resource_templates`, `list_prompts`
//! (all pages), `call_tool` (a result with `isError` is
//! [`ClientError::Tool`](crate::client::ClientError::Tool)), `call::<T>`
//! (the structured content, or the text as JSON, read as `T`),
//! `read_resource`, `get_prompt`, `complete`, `discover`, and `request` for
//! any other method — its result as a JSON value, or read once into a type
//! of yours with [`request_as`](crate::client::Client::request_as), or as
//! the text the server sent with
//! [`request_raw`](crate::client::Client::request_raw) (to pass it on as it
//! is), whose params may carry members as the text they came in
//! ([`Params::with_raw`](crate::protocol::params::Params::with_raw): a proxy
//! forwards its caller's arguments without reading them).
//! [`RequestOptions`](crate::client::RequestOptions) adds
//! a progress callback (the client sends a `progressToken`), a log callback
//! and a time limit to one call. Dropping a call's future gives it up: over
//! stateless HTTP the stream closes, elsewhere `notifications/cancelled`
//! goes out.
//!
//! ## Input from the user, in both eras
//!
//! `on_elicit`, `on_sample` and `on_roots` declare the client's capabilities
//! and answer the server. Statelessly a call's `InputRequiredResult` is
//! answered and retried with `inputResponses` and the opaque `requestState`
//! (echoed byte for byte, left out when the server sent none), up to
//! `max_input_rounds` rounds; in a legacy session or over stdio the same
//! handlers answer the server's requests.
//!
//! ## Errors
//!
//! [`ClientError`](crate::client::ClientError) has one variant per thing a
//! program would do differently: `Transport`, `Protocol` (the server's
//! [`ErrorData`](crate::protocol::ErrorData): code, message and data), `Tool`, `Auth` (the status and the `WWW-Authenticate`
//! challenge), `Input`, `Timeout`, `Cancelled`. Each displays as a sentence.
//!
//! ## Tasks
//!
//! [`ClientOptions::tasks`](crate::client::ClientOptions::tasks) declares
//! the Tasks extension. A call the server makes a task is then followed to
//! its end: `tasks/get` at the task's `pollIntervalMs`, its `input_required`
//! questions answered by the same handlers through `tasks/update`, the
//! result returned as if the call had answered it (a failed task is its
//! error, a cancelled one [`ClientError::Cancelled`](crate::client::ClientError::Cancelled));
//! dropping the call sends `tasks/cancel`. One step at a time:
//! `request_task` (the [`Started`](crate::client::Started) task or result),
//! `get_task`, `update_task`, `cancel_task`, `follow_task`, and a listen
//! stream with `task_ids` for `notifications/tasks`.
//!
//! ## Credentials
//!
//! Over HTTP, a [`TokenProvider`](crate::client::auth::TokenProvider) gives
//! the bearer token of each request and is told when the server refuses one
//! (401 or 403 with its challenge), so it can fetch a new one: the client
//! then sends the request again, each time after a refusal the provider was
//! told of and agreed to retry, at most three times (a new token, then a
//! DPoP nonce, may each take one). [`ClientOptions::bearer`](crate::client::ClientOptions::bearer)
//! sends a fixed token.
//!
//! [`OAuth`](crate::client::oauth::OAuth) is the OAuth 2.1 client the MCP
//! authorization spec describes, as a token provider:
//!
//! - **Discovery**: the protected resource metadata (RFC 9728) named by the
//!   `WWW-Authenticate` challenge, else its path-aware and root well-known
//!   URLs; its `resource` must cover the server URL. Then the authorization
//!   server's metadata (RFC 8414, then OpenID Connect discovery, path-aware),
//!   whose `issuer` must be the one the resource named. A 2025-03-26 server
//!   without resource metadata is its own authorization server, with
//!   `/authorize`, `/token` and `/register` as fallbacks.
//! - **The client's identity**: a pre-registered client
//!   (`pre_registered`), else a client ID metadata document
//!   (`client_metadata_url`) where the server supports them, else dynamic
//!   registration (RFC 7591, with `application_type`); the token endpoint
//!   authentication is the first of `client_secret_basic`,
//!   `client_secret_post` and `none` the server supports.
//! - **Grants**: authorization code with PKCE (S256) and `state`, through
//!   your redirect handler, with RFC 9207's `iss` check; or client
//!   credentials for machines (`OAuth::client_credentials`, with a secret
//!   or a `private_key_jwt` assertion); or the JWT-bearer grant (RFC 7523,
//!   `OAuth::jwt_bearer`) with an assertion from elsewhere — a workload's
//!   identity token (workload identity federation), or an identity
//!   assertion the enterprise's identity provider gives for the user's ID
//!   token (`oauth::identity_assertion`, RFC 8693 token exchange:
//!   enterprise-managed authorization). The `resource` parameter (RFC 8707)
//!   goes with every authorization and token request.
//! - **DPoP** (RFC 9449): where the authorization server supports ES256
//!   proofs, the client makes a P-256 key of its own, sends a proof with
//!   each token request, presents the bound token as `Authorization: DPoP`
//!   with a fresh proof (its `ath` the token's hash) on every request, and
//!   retries with the nonce a server asks for (`use_dpop_nonce`).
//! - **Scopes**: the challenge's, else the resource metadata's
//!   `scopes_supported`, plus `offline_access` where the server offers it;
//!   a 403 `insufficient_scope` re-authorizes with the union of the old and
//!   the challenged scopes, at most `max_step_ups` times between full
//!   authorizations (a 401's starts the count over).
//! - **Refresh and issuers**: an expired token is refreshed; registrations
//!   and tokens are kept per issuer, so a resource that moves to another
//!   authorization server gets a registration there.
//!
//! ## As an actor
//!
//! [`Client::start`](crate::client::Client::start) gives an
//! `Addr<ClientActor>`; send it [`Call`](crate::client::Call)s (or hand out
//! its `Recipient<Call>`). Stopping the actor closes the connection.
//!
//! ## From the command line
//!
//! In a binary built with the `client` feature (`--features full`, or
//! `--features client`):
//!
//! ```text
//! actix-mcp client http://127.0.0.1:8080/mcp discover
//! actix-mcp client http://127.0.0.1:8080/mcp tools
//! actix-mcp client http://127.0.0.1:8080/mcp call echo '{"text": "hi"}'
//! actix-mcp client --stdio "actix-mcp stdio --catalog everything" read test://static-text
//! actix-mcp client http://127.0.0.1:8080/mcp --protocol-version 2025-11-25 prompt test_prompt_with_arguments '{"arg1": "a", "arg2": "b"}'
//! actix-mcp client http://127.0.0.1:8080/mcp listen --tools --resource test://static-text --count 1
//! ```
//!
//! Answers are JSON (pretty on a terminal, one line otherwise; `listen`
//! prints one line per notification); errors go to stderr as a sentence,
//! with exit status 1. `--token` (or `ACTIX_MCP_CLIENT_TOKEN`) sends a bearer
//! token, `--header` any header, `--timeout-ms` limits each request (the
//! handshake too), `--max-message-bytes` each message read.
//!
//! ## Conformance
//!
//! `actors/examples/conformance_client.rs` is the client as the official
//! conformance suite drives it; CI runs the suite's client scenarios, each
//! at every revision it applies to, and fails on any failed, warned or
//! skipped check: the scenarios of 2026-07-28
//! and 2025-11-25, every `auth/*` one of both (and the two 2025-03-26
//! ones), and the extension scenarios: client credentials (secret and
//! JWT), DPoP (with and without nonces), enterprise-managed authorization
//! and workload identity.
