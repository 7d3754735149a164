//! Legacy sessions, multi round-trip requests, tasks and listen streams over
//! real HTTP.
//!
//! One test binary of the area (`cargo test -p actix-mcp --test sessions`); each
//! file in `tests/` is one of its modules, sharing `tests/common/`.

#[path = "../common/mod.rs"]
mod common;

#[path = "../legacy.rs"]
mod legacy;
#[path = "../mrtr.rs"]
mod mrtr;
#[path = "../mrtr_rotation.rs"]
mod mrtr_rotation;
#[path = "../subscriptions_http.rs"]
mod subscriptions_http;
#[path = "../task_owners.rs"]
mod task_owners;
#[path = "../tasks.rs"]
mod tasks;
