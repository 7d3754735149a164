//! # Defining tools, resources and prompts
//!
//!
//! Everything below comes with `use actix_mcp::prelude::*;`.
//!
//! - **Tools.** `Tool::new(name, description, |args: A, ctx| async { … })`
//!   derives the input schema from `A` (an empty description is taken from
//!   `A`'s doc comment); `Tool::no_args(name, description, |ctx| …)` takes
//!   none. A handler returns `Ok` of text (`String`, `&str`), `Json(value)`
//!   (structured content; the tool's `outputSchema` is derived from its type),
//!   content blocks, a `CallToolResult`, or a `Result<T, E: Display>` whose
//!   `Err` is a tool execution error (`isError: true`) the model can read.
//!   `Err(HandlerError)` is a protocol error. `.with_annotations(ToolAnnotations::read_only())`,
//!   `.with_meta(key, value)` (e.g. an MCP Apps `ui://` link), `.with_title(..)`.
//! - **Resources.** `Resource::text` / `Resource::blob` for fixed contents;
//!   `Resource::reading(uri, name, mime, |ctx| async { Ok(text_or_bytes) })`
//!   for computed ones (the URI and MIME type are filled in);
//!   `ResourceTemplate::new` for URI templates.
//! - **Prompts.** `Prompt::typed(name, description, |args: A, ctx| …)` declares
//!   its arguments from the fields of `A` (with their doc comments; `Option`
//!   fields are optional) and may return a `String` (one user message) or a
//!   `GetPromptResult`.
//! - **Shared state.** `.state(value)` on the builder (or `Catalog::set_state`),
//!   then `ctx.state::<T>()?` in any handler.
//! - **What a handler sees** (`RequestContext`): `progress`, `log`, `sleep`
//!   (ends early, with an error, when the request is cancelled),
//!   `is_cancelled`/`cancellation`, input from the client (below), `catalog()`
//!   to change the catalog, `headers()` (HTTP), `extension::<T>()` (values a
//!   middleware attached through `actix_mcp::facts::extensions::Extensions`) and
//!   `identity()`.
//! - **Registration** returns `Result`: `add_*` refuses a taken or invalid name
//!   (tool names: 1–128 of `A-Z a-z 0-9 _ - .`, as the specification says);
//!   `replace_*` replaces on purpose. The catalog can change at runtime
//!   (`add_*` / `remove_*` take `&self`), and listeners are told.
//!
//! ```rust
//! use actix_mcp::prelude::*;
//! use actix_mcp::protocol::model::logging::LoggingLevel;
//!
//! /// Greets someone.
//! #[derive(Deserialize, JsonSchema)]
//! struct Greet {
//!     /// Who to greet.
//!     name: String,
//! }
//!
//! let greet = Tool::new("greet", "", |args: Greet, ctx| async move {
//!     ctx.progress(1.0, Some(1.0), None).await; // sent only if the client asked
//!     ctx.log(LoggingLevel::Info, None, json!("greeting")).await;
//!     Ok(format!("Hello, {}!", args.name))
//! });
//! assert_eq!(greet.definition().description, "Greets someone.");
//! let catalog = Catalog::new();
//! catalog.add_tool(greet).unwrap();
//! assert!(catalog.add_tool(Tool::no_args("greet", "again", |_ctx| async { Ok("") })).is_err());
//! ```
//!
//! A **resource template** serves a family of URIs: each `{name}` matches
//! one path segment (no `/`), and the reader gets the values by name,
//! percent-decoded — a client expands `notes://{title}` with the title
//! `team sync` as `notes://team%20sync` (RFC 6570 §3.2.2), and the reader
//! sees `team sync`:
//!
//! ```rust
//! use actix_mcp::prelude::*;
//! use actix_mcp::test::{block_on, TestClient};
//!
//! let notes = ResourceTemplate::new("notes://{title}", "note", |uri, vars, _ctx| async move {
//!     let title = &vars["title"];
//!     Ok(vec![ResourceContents::text(uri, "text/markdown", format!("# {title}\n"))])
//! })
//! .unwrap()
//! .with_description("A team note, by title");
//! # block_on(async {
//! let server = McpServer::builder(server_info!()).template(notes).build().unwrap();
//! let client = TestClient::new(server).await;
//! let read = client.read("notes://team%20sync").await.unwrap();
//! assert_eq!(serde_json::to_value(&read).unwrap()[0]["text"], "# team sync\n");
//! # });
//! ```
//!
//!
//! ## Asking the client for input (multi round-trip requests)
//!
//!
//! A `tools/call`, `prompts/get` or `resources/read` handler asks for input
//! through its context; the server answers an `InputRequiredResult`, the client
//! retries with `inputResponses`, and the handler runs again and finds the answers:
//!
//! ```rust
//! use actix_mcp::catalog::Tool;
//! use mcp_protocol::model::tools::CallToolResult;
//! use serde_json::json;
//!
//! let tool = Tool::raw("book", "Books a table", json!({"type": "object"}), |_args, ctx| async move {
//!     let schema = json!({"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]});
//!     let who = ctx.elicit("who", "Name for the booking?", schema)?;      // round 1 asks, round 2 reads
//!     let ok = ctx.sample("check", "Is a table for 4 free tonight?", 50)?; // round 2 asks, round 3 reads
//!     Ok(CallToolResult::text(format!("Booked for {} ({})", who.string("name").unwrap_or("?"), ok.text().unwrap_or(""))))
//! });
//! ```
//!
//! `ctx.ask(key, request)` asks for several inputs at once (then
//! `return Err(ctx.input_required())`); `ctx.handler_state()` /
//! `ctx.set_handler_state(..)` carry the handler's own state between rounds.
//! Only input kinds the client declared in this request's `clientCapabilities`
//! are asked for; otherwise the request fails with MissingRequiredClientCapability.
//! Handlers run again on every retry, so what they do before their last question
//! must be repeatable.
//!
//! `requestState` is treated as attacker-controlled: it is an HMAC-SHA256-sealed
//! payload bound to the method, the tool/prompt name or URI and a digest of the
//! arguments, with an expiry (`mrtr.state_ttl_ms`), carrying the answers already
//! given and the handler state. Anything that fails verification is refused
//! with `-32602` before any handler runs, and each round issues a fresh state.
//! No server memory is involved, so any instance with the same `mrtr.key`
//! (base64, at least 32 bytes; or `ACTIX_MCP_MRTR_KEY`) can continue a flow.
//! Without a configured key each process generates one at start, which only
//! works for a single instance; a warning says so once, when a multi round-trip
//! request first needs it (servers that never ask for input never see it).
