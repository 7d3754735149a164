//! # Long-running calls (the Tasks extension)
//!
//!
//! The server offers `io.modelcontextprotocol/tasks` in `server/discover`
//! (`tasks.enabled`, on by default). A tool that may take long declares it:
//!
//! ```rust
//! use std::time::Duration;
//! use actix_mcp::prelude::*;
//!
//! let export = Tool::no_args("export", "Exports every report", |ctx: RequestContext| async move {
//!     // A question here is a round of the call itself (InputRequiredResult).
//!     let ok = ctx.elicit("go", "Export everything?", json!({"type": "object",
//!         "properties": {"yes": {"type": "boolean"}}}))?;
//!     ctx.begin_task().await;                         // the client gets its CreateTaskResult now
//!     for part in 1..=10 {
//!         ctx.progress(part as f64, Some(10.0), Some(&format!("part {part} of 10"))).await; // statusMessage
//!         ctx.sleep(Duration::from_secs(3)).await?;    // tasks/cancel stops it here
//!     }
//!     Ok(format!("exported ({:?})", ok.action))
//! })
//! .with_task_support(TaskSupport::Optional);
//! ```
//!
//! - **When a call becomes a task.** `TaskSupport::Forbidden` (the default):
//!   never. `Optional`: when the client declared the extension on the request
//!   (`clientCapabilities.extensions["io.modelcontextprotocol/tasks"]`, the
//!   per-request `_meta` being what counts) and the handler calls
//!   `ctx.begin_task()` or is still running after `tasks.task_after_ms`
//!   (100 ms); a handler that answers sooner is answered in the call.
//!   `Required`: only as a task — a client that did not declare the extension
//!   gets -32021 with `data.requiredCapabilities`, and a handler that answers
//!   before the task began still answers through a task, created already
//!   finished. A client that did not declare the extension never gets a task,
//!   and its `tasks/*` requests are -32021.
//! - **Inside a task** the handler keeps its context: progress becomes the
//!   task's `statusMessage` (no progress or log notifications are sent), and
//!   `ctx.elicit` / `ctx.ask` move the task to `input_required` with its
//!   pending `inputRequests`. `tasks/update` answers them; a partial answer
//!   leaves only the unanswered keys pending, and once none is left the
//!   handler runs again with every answer (like a multi round-trip retry, so
//!   what it does before its last question must be repeatable; `begin_task`
//!   returns at once on a run inside a task). `tasks/cancel` fires the
//!   handler's cancellation token and the task settles `cancelled`; a task
//!   waiting for input is cancelled at once; a finished task is left as it is
//!   and the cancel still acknowledged. A result ends `completed` (a tool
//!   error too, with `isError`), a JSON-RPC error or a panic ends `failed`
//!   with `error`.
//! - **The store.** Tasks live in a `TaskStore`, bounded to `tasks.max_tasks`
//!   (10,000) unexpired tasks, and to `tasks.max_tasks_per_subject` (100) per
//!   authenticated caller, each readable until `ttlMs` (`tasks.ttl_ms`, 1 h)
//!   after its creation; past a bound a required task is refused with -32000
//!   (HTTP 429, `data.reason` `store` or `caller_share`: load, retry later) and
//!   an optional call is answered in it. A task is stored before its
//!   `CreateTaskResult` is sent. `MemoryStore` keeps them in the process (the
//!   default with the memory hub). `RedisStore` (`tasks.store = "redis"`, the
//!   default with `hub.backend = "redis"`) keeps each task as one JSON value
//!   expiring with its `ttlMs`, changed by compare-and-set, so any instance
//!   answers `tasks/get`, `tasks/update` and `tasks/cancel` for any task: a
//!   cancel reaches the instance running the handler over Redis pub/sub, an
//!   update that answers the last question resumes the handler on the
//!   instance that received it, status notifications cross instances through
//!   the hub, and the instance running a task renews a lease on it
//!   (`tasks.lease_ms`, 15 s) — a task whose instance died reads `failed` to
//!   whoever reads it next. `tests/cluster.rs` runs all of this with two
//!   binaries and a real redis-server, killing one mid-task.
//! - **Security.** Task ids are UUID v4 (122 random bits). With
//!   authorization on, a task belongs to the subject that created it: any
//!   other subject gets exactly the error of an unknown id, and every
//!   `tasks/*` request goes through authorization like any other.
//! - **Status notifications.** `subscriptions/listen` with
//!   `notifications.taskIds` (the extension declared) gets
//!   `notifications/tasks` carrying the whole task, as `tasks/get` would show
//!   it, at every change — through the hub, so across instances with Redis.
//! - **Routing.** Over HTTP, `Mcp-Name` must equal `params.taskId` on
//!   `tasks/*` (-32020 otherwise). With tasks in memory, each instance must
//!   answer for its own: give each a `tasks.id_prefix`
//!   (`ACTIX_MCP_TASK_ID_PREFIX`), so that ids read `PREFIX.<uuid>`, and let
//!   the balancer route `tasks/*` by `Mcp-Name`; `config/nginx.conf` has the
//!   commented configuration, and `tests/tasks.rs` runs it in a real nginx.
//!   With the Redis store any instance answers, and round robin is enough.
//!
//!
//! ## On the wire
//!
//! A call that became a task is answered with the task itself
//! (`resultType: "task"`):
//!
//! ```json
//! {"jsonrpc": "2.0", "id": 7, "result": {"resultType": "task",
//!   "taskId": "4f0e…", "status": "working", "createdAt": "2026-12-03T10:30:00.000Z",
//!   "lastUpdatedAt": "2026-12-03T10:30:00.000Z", "ttlMs": 3600000, "pollIntervalMs": 500}}
//! ```
//!
//! `tasks/get {"taskId": "4f0e…"}` (with `Mcp-Name: 4f0e…` over HTTP) shows
//! it as it stands — `status` one of `working`, `input_required` (with
//! `inputRequests` by key), `completed` (with `result`, the tool's
//! `CallToolResult`), `failed` (with `error`) or `cancelled`, and
//! `statusMessage` from the handler's progress:
//!
//! ```json
//! {"resultType": "complete", "taskId": "4f0e…", "status": "completed",
//!  "createdAt": "2026-12-03T10:30:00.000Z", "lastUpdatedAt": "2026-12-03T10:30:31.000Z",
//!  "ttlMs": 3600000, "pollIntervalMs": 500,
//!  "result": {"content": [{"type": "text", "text": "exported (Accept)"}]}}
//! ```
//!
//! `tasks/update {"taskId", "inputResponses": {KEY: answer}}` answers its
//! questions; `tasks/cancel {"taskId"}` cancels it.
//!
//! ## Testing a task
//!
//! The in-process [`TestClient`](crate::test::TestClient) declares the
//! extension with `with_tasks()`; `call` then follows a task to its end
//! (`tasks/get` at its `pollIntervalMs`, questions answered by the
//! `answering` callback through `tasks/update`) and returns the tool's
//! result. `request` sends any method with its headers (`Mcp-Name` too) and
//! returns the result as sent, to look at the task itself:
//!
//! ```rust
//! use actix_mcp::prelude::*;
//! use actix_mcp::test::{block_on, TestClient};
//!
//! # block_on(async {
//! let archive = Tool::no_args("archive", "Archives every note", |_ctx| async { Ok("archived") })
//!     .with_task_support(TaskSupport::Required);
//! let server = McpServer::builder(server_info!()).tool(archive).build().unwrap();
//! let client = TestClient::new(server).await.with_tasks();
//! let done = client.call("archive", json!({})).await.unwrap();
//! assert_eq!(done.content, vec![Content::text("archived")]);
//! let task = client.request("tools/call", json!({"name": "archive", "arguments": {}})).await.unwrap();
//! assert_eq!(task["resultType"], "task");
//! let now = client.request("tasks/get", json!({"taskId": task["taskId"]})).await.unwrap();
//! assert!(["working", "completed"].contains(&now["status"].as_str().unwrap()));
//! # });
//! ```
//!
//! All ten `tasks-*` scenarios of the conformance suite pass (one is skipped
//! by the suite itself); CI runs them with the rest.
