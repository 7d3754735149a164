//! Guides: how to use the server and the library, topic by topic, with
//! examples the test suite compiles and runs. Documentation only (like
//! clap's `_tutorial`): nothing here is code to call.
//!
//! | guide | for |
//! |---|---|
//! | [`configuration`] | where settings come from, every limit, the command line |
//! | [`handlers`] | tools, resources, prompts, shared state, asking the client for input |
//! | [`subscriptions`] | `subscriptions/listen`, the hub, fan-out policy, HTTP/2, shutdown |
//! | [`legacy_clients`] | clients that open with `initialize` (dual-era sessions) |
//! | [`authorization`] | OAuth 2.1 resource server, API keys, your own authenticator, scopes |
//! | [`tasks`] | long-running calls as tasks (the Tasks extension) |
//! | [`extensions`] | views next to tool results (MCP Apps) and Agent Skills (Skills) |
//! | [`events`] | event types clients subscribe to (the Triggers & Events extension) |
//! | [`scaling_out`] | several instances behind a load balancer, over Redis |
//! | [`operating`] | health, metrics, the status page, trace context, OpenTelemetry, logs |
//! | [`embedding`] | mounting the endpoint in your own actix-web app, your actors and the hub |
//! | `client` (feature `client`) | calling any MCP server (HTTP or stdio, either era) from your code or the command line |
//! | `gateway` (feature `gateway`) | putting existing MCP servers (stdio or HTTP, either era) behind this one |
//!
//! Performance figures, the load harness, fuzzing and the soak are in the
//! repository's `benches/README.md`; how to work on the project (the CI
//! recipe, the conformance runner, the layers of the code) in
//! `CONTRIBUTING.md`.

pub mod authorization;
#[cfg(feature = "client")]
#[cfg_attr(docsrs, doc(cfg(feature = "client")))]
pub mod client;
pub mod configuration;
pub mod embedding;
pub mod events;
pub mod extensions;
#[cfg(feature = "gateway")]
#[cfg_attr(docsrs, doc(cfg(feature = "gateway")))]
pub mod gateway;
pub mod handlers;
pub mod legacy_clients;
pub mod operating;
pub mod scaling_out;
pub mod subscriptions;
pub mod tasks;
