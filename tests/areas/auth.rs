//! Authorization against a real authorization server and misbehaving issuers,
//! and the operator's walkthrough.
//!
//! One test binary of the area (`cargo test -p actix-mcp --test auth`); each
//! file in `tests/` is one of its modules, sharing `tests/common/`.

#[path = "../common/mod.rs"]
mod common;

#[path = "../auth.rs"]
mod auth;
#[path = "../auth_issuers.rs"]
mod auth_issuers;
#[path = "../walkthrough.rs"]
mod walkthrough;
