//! The client against this project's server, against servers written to
//! misbehave and against other SDKs' servers; its OAuth client against
//! authorization servers of the tests' own; the in-process test client.
//!
//! One test binary of the area (`cargo test -p actix-mcp --test client`); each
//! file in `tests/` is one of its modules, sharing `tests/common/`.

#[path = "../common/mod.rs"]
mod common;

#[path = "../client.rs"]
mod client;
#[path = "../client_events.rs"]
mod client_events;
#[path = "../client_limits.rs"]
mod client_limits;
#[path = "../client_oauth.rs"]
mod client_oauth;
#[path = "../client_real_servers.rs"]
mod client_real_servers;
#[path = "../test_client.rs"]
mod test_client;
