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
//! them); if the server does not know it, the `initialize` handshake at
//! `2025-11-25`, accepting `2025-06-18` and `2025-03-26` if the server
//! answers with them. [`ClientOptions::pin`](crate::client::ClientOptions::pin)
//! speaks one version only. [`Client::server`](crate::client::Client::server)
//! says what was chosen, with the server's identity, capabilities and
//! instructions.
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
//!   Closing the client closes the child's stdin and kills it if it has not
//!   exited two seconds later.
//!
//! ## Calls
//!
//! `list_tools`, `list_resources`, `list_resource_templates`, `list_prompts`
//! (all pages), `call_tool` (a result with `isError` is
//! [`ClientError::Tool`](crate::client::ClientError::Tool)), `call::<T>`
//! (the structured content, or the text as JSON, read as `T`),
//! `read_resource`, `get_prompt`, `complete`, `discover`, and `request` for
//! any other method. [`RequestOptions`](crate::client::RequestOptions) adds
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
//! program would do differently: `Transport`, `Protocol` (the JSON-RPC code
//! and data), `Tool`, `Auth` (the status and the `WWW-Authenticate`
//! challenge), `Input`, `Timeout`, `Cancelled`. Each displays as a sentence.
//!
//! ## Credentials
//!
//! Over HTTP, a [`TokenProvider`](crate::client::auth::TokenProvider) gives
//! the bearer token of each request and is told when the server refuses one
//! (401 or 403 with its challenge), so it can fetch a new one: the client
//! then tries once more. [`ClientOptions::bearer`](crate::client::ClientOptions::bearer)
//! sends a fixed token.
//!
//! ## As an actor
//!
//! [`Client::start`](crate::client::Client::start) gives an
//! `Addr<ClientActor>`; send it [`Call`](crate::client::Call)s (or hand out
//! its `Recipient<Call>`). Stopping the actor closes the connection.
//!
//! ## From the command line
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
//! token, `--header` any header, `--timeout-ms` limits each request.
//!
//! ## Conformance
//!
//! `actors/examples/conformance_client.rs` is the client as the official
//! conformance suite drives it; CI runs every client scenario of the suite
//! that does not concern authorization, at each revision it applies to, and
//! fails on any failed, warned or skipped check.
