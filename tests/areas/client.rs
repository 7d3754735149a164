//! The client against this project's server, against servers written to
//! misbehave and against other SDKs' servers; the in-process test client.
//!
//! One test binary of the area (`cargo test -p actix-mcp --test client`); each
//! file in `tests/` is one of its modules, sharing `tests/common/`.

#[path = "../common/mod.rs"]
mod common;

#[path = "../client.rs"]
mod client;
#[path = "../client_limits.rs"]
mod client_limits;
#[path = "../client_real_servers.rs"]
mod client_real_servers;
#[path = "../test_client.rs"]
mod test_client;
