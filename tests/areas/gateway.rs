//! The gateway: its own upstreams, other SDKs' servers behind it, hostile
//! upstreams and its bounds on them.
//!
//! One test binary of the area (`cargo test -p actix-mcp --test gateway`); each
//! file in `tests/` is one of its modules, sharing `tests/common/`.

#[path = "../common/mod.rs"]
mod common;

#[path = "../gateway.rs"]
mod gateway;
#[path = "../gateway_real_servers.rs"]
mod gateway_real_servers;
#[path = "../hostile_upstream_limits.rs"]
mod hostile_upstream_limits;
#[path = "../hostile_upstreams.rs"]
mod hostile_upstreams;
