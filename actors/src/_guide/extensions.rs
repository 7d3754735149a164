//! # Views and skills (the MCP Apps and Skills extensions)
//!
//! Two official extensions, each declared in `server/discover` (and in a
//! legacy `initialize` result) as soon as the catalog has something for it.
//!
//! ## MCP Apps: a view next to a tool's result
//!
//! A **view** is a `ui://` resource of MIME type `text/html;profile=mcp-app`
//! whose contents are a whole HTML document. Hosts that render views
//! (Claude, ChatGPT, VS Code, Goose, MCPJam, …) read it, put it in a
//! sandboxed iframe and show it with the result of the tools linked to it.
//! Everything the view does reaches the server as ordinary `tools/call` and
//! `resources/read` requests the host makes on its behalf.
//!
//! ```rust
//! use actix_mcp::prelude::*;
//!
//! const CHART: &str = r#"<svg id="chart" width="300" height="100"></svg>
//! <script>
//!   mcpApp.onToolResult(({ structuredContent: s }) => {
//!     chart.innerHTML = s.values.map((v, i) =>
//!       `<rect x="${i * 20}" y="${100 - v}" width="16" height="${v}"/>`).join("");
//!   });
//!   mcpApp.connect();
//! </script>"#;
//!
//! # fn main() -> Result<(), BuildError> {
//! let server = McpServer::builder(server_info!())
//!     .view(View::page("ui://stats/chart", "Chart", "Chart", CHART).prefers_border(true))
//!     .tool(
//!         Tool::no_args("stats", "This week's numbers", |_ctx| async {
//!             // The text is what a client without views (and the model) reads;
//!             // the structured content is what the view draws.
//!             Ok(CallToolResult::text("Mon 12, Tue 40, Wed 33")
//!                 .with_structured(json!({"values": [12, 40, 33]})))
//!         })
//!         .with_view("ui://stats/chart"),
//!     );
//! # let _ = server; Ok(()) }
//! ```
//!
//! - **The view's HTML.** [`View::new`](crate::catalog::View::new) takes a
//!   whole document (a string, `include_str!`), and
//!   [`View::from_file`](crate::catalog::View::from_file) a file read on each
//!   read. [`View::page`](crate::catalog::View::page) wraps an HTML fragment
//!   in a document that defines `window.mcpApp`, a small script that speaks
//!   the view side of the protocol (`onToolInput`, `onToolResult`,
//!   `callTool`, `connect`); a view built with the official
//!   `@modelcontextprotocol/ext-apps` `App` class uses `View::new` with its
//!   bundle instead.
//! - **`_meta.ui`.** The CSP domain lists
//!   ([`connect_domains`](crate::catalog::View::connect_domains),
//!   `resource_domains`, `frame_domains`, `base_uri_domains`; none by default,
//!   which hosts read as "no network"),
//!   [`permissions`](crate::catalog::View::permissions) (camera, microphone,
//!   geolocation, clipboard write), a dedicated
//!   [`domain`](crate::catalog::View::domain) and
//!   [`prefers_border`](crate::catalog::View::prefers_border) travel on the
//!   `resources/read` contents and on the `resources/list` entry. A view
//!   [`unlisted`](crate::catalog::View::unlisted) stays out of
//!   `resources/list` (hosts find it through the tools) and is still read by
//!   URI. Reads carry `ttlMs`/`cacheScope` like any read, so hosts cache
//!   views; [`with_cache`](crate::catalog::View::with_cache) sets a view's own.
//! - **Linking a tool.** [`Tool::with_view`](crate::catalog::Tool::with_view)
//!   writes `_meta.ui.resourceUri` and the older flat `_meta["ui/resourceUri"]`
//!   that hosts still read. `build()` refuses a link to a URI the catalog
//!   has no view at, a non-`ui://` URI, and a view that is not an HTML
//!   document, naming the item.
//! - **Who calls a tool.** [`Tool::with_visibility`](crate::catalog::Tool::with_visibility)
//!   writes `_meta.ui.visibility`: `[Visibility::Model, Visibility::App]` by
//!   default; `[Visibility::App]` makes the tool **app-only**, for the
//!   view's own buttons. Hosts hide app-only tools from the model; this
//!   server also leaves them out of `tools/list` for clients that render no
//!   views (they did not declare the extension with
//!   `mimeTypes: ["text/html;profile=mcp-app"]`), and refuses them such a
//!   call with -32021
//!   (MissingRequiredClientCapability, naming the extension in
//!   `data.requiredCapabilities`; -32003 on `DRAFT-2026-v1`).
//! - **What the caller renders.** [`RequestContext::ui`](crate::RequestContext::ui)
//!   is the client's declaration (`clientCapabilities.extensions
//!   ["io.modelcontextprotocol/ui"]`, with the MIME types it renders), and
//!   [`RequestContext::renders_views`](crate::RequestContext::renders_views)
//!   answers the usual question, for a handler that words its text
//!   differently when a view shows the data.
//! - **Scopes** apply to views (`with_scopes`) and app-only tools as to any
//!   resource or tool; both eras and every transport serve them.
//!
//! The binary's `fs` catalog ships a **file browser** view: `list_dir` and
//! `search` are linked to `ui://fs/browser`, where a person browses the
//! served directory, previews a file (the app-only `preview_file`, inside
//! the jail and size caps like every tool of the catalog) and searches. The
//! `everything` catalog has a small counter view for tests.
//! `tests/apps_browser.rs` renders both in headless Chromium with the
//! official `AppBridge`; its screenshot of the file browser is
//! `actors/src/_guide/file-browser.png` in the repository.
//!
//! ## Skills: Agent Skills as resources
//!
//! A **skill** is a directory with a `SKILL.md` whose YAML frontmatter
//! holds at least `name` and `description` (the Agent Skills format). Each
//! of its files is served as `skill://<skill-path>/<file>`, where the last
//! segment of the skill path is the frontmatter `name` and earlier segments
//! are a prefix of your choosing. The server declares
//! `io.modelcontextprotocol/skills` with `directoryRead: true` and answers:
//!
//! - `skills/list` (paginated; an entry is never split across pages; with
//!   `ttlMs`/`cacheScope`): each skill's `SKILL.md` URI, its frontmatter as
//!   written (every field) and every one of its files as
//!   `{uri, digest, size}`, the digest being `sha256:` and the hex SHA-256
//!   of the bytes served;
//! - `skills/get {uri}`: one entry, for a skill listed or not; -32602 for a
//!   URI that names no skill served to this caller;
//! - `resources/directory/read {uri, cursor?}`: the direct children of a
//!   directory under `skill://` (files with their metadata, subdirectories as
//!   `inode/directory` resources), paginated; -32602 for anything else.
//!
//! Files are read with plain `resources/read`; a `SKILL.md` is listed with
//! its skill's `name` and `description` and `text/markdown`.
//!
//! **Serving a directory of skills with the binary** takes two lines: put
//! the skills under `skills/` in the served root, and start the server.
//!
//! ```text
//! mkdir -p skills/acme/report && printf -- '---\nname: report\ndescription: Writes the weekly report\n---\n' > skills/acme/report/SKILL.md
//! actix-mcp serve --root .            # skill://acme/report/SKILL.md; --skills DIR picks another directory
//! ```
//!
//! `fs.skills` (default `skills`, relative to `fs.root`; `""` turns it off)
//! is served when it exists at start. Every directory under it with a
//! `SKILL.md` is a skill (nested skills too: the outer skill's entry lists
//! the inner one's files as well). The rules of every served file apply —
//! the jail, `fs.exclude`, `fs.max_file_bytes`, the symlink rules — and a
//! skill whose frontmatter is missing or invalid, whose `name` is not its
//! directory's name, with a file over the size cap, or over the extension's
//! limits (512 files, 16 MiB), or whose frontmatter nests deeper than
//! `fs.max_frontmatter_depth` (64) is not served; the log says why, once.
//! Digests are kept per file with its modification time, size, inode and
//! status-change time (so a copy that keeps size and mtime — `cp -p`,
//! `rsync -t`, `tar x` — still reads as a change), and listing a
//! directory of thousands of files reads only what changed; the watcher
//! rescans after a change, so the next `skills/list` or `skills/get` has
//! the new digest, and `resources/updated` (a changed file) or
//! `resources/list_changed` (a file added or removed) go to the listeners
//! that asked, as for any file.
//!
//! **In code**, a server ships the skill that teaches an agent its tools:
//!
//! ```rust
//! use actix_mcp::prelude::*;
//!
//! # fn main() -> Result<(), BuildError> {
//! let server = McpServer::builder(server_info!()).skill(
//!     Skill::from_files("acme/report", [
//!         ("SKILL.md", "---\nname: report\ndescription: Writes the weekly report\n---\nCall `report`.\n"),
//!         ("templates/week.md", "# Week {n}\n"),
//!     ])?
//!     .with_scopes(["reports:read"]),
//! );
//! # let _ = server; Ok(()) }
//! ```
//!
//! `Skill::from_files` takes `(path, bytes)` pairs (`include_str!`,
//! `include_bytes!`, or generated), `Skill::from_dir`
//! (feature `fs`; or the builder's `skill_dir`) reads a directory once — a relative path
//! is relative to the working directory the program runs in, so a skill
//! shipped with a crate is named from `env!("CARGO_MANIFEST_DIR")` or
//! embedded — and
//! [`Skill::under`](crate::catalog::Skill::under) adds a prefix. A
//! tree of skills shipped beside a program (`skills/<group>/<name>/SKILL.md`
//! …) is best served by the `fs` catalog, which watches it; in code, one
//! `skill_dir` per skill directory. A
//! catalog changed at runtime replaces a skill with
//! [`Catalog::replace_skill`](crate::catalog::Catalog::replace_skill), which
//! publishes what changed. With authorization on, a skill's scopes decide
//! who lists, gets and reads it.
