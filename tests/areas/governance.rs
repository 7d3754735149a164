//! Governance: the audit log, Cedar policies, quotas, pins and reloading
//! them.
//!
//! One test binary of the area (`cargo test -p actix-mcp --test governance`); each
//! file in `tests/` is one of its modules, sharing `tests/common/`.

#[path = "../common/mod.rs"]
mod common;

#[path = "../audit.rs"]
mod audit;
#[path = "../pins.rs"]
mod pins;
#[path = "../policy.rs"]
mod policy;
#[path = "../quotas.rs"]
mod quotas;
#[path = "../reload.rs"]
mod reload;
