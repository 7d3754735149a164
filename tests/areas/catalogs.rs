//! The catalogs: the `fs` catalog and its boundaries, Skills, MCP Apps and Events.
//!
//! One test binary of the area (`cargo test -p actix-mcp --test catalogs`); each
//! file in `tests/` is one of its modules, sharing `tests/common/`.

#[path = "../common/mod.rs"]
mod common;

#[path = "../apps.rs"]
mod apps;
#[path = "../event_streams.rs"]
mod event_streams;
#[path = "../events.rs"]
mod events;
#[path = "../events_conformance/mod.rs"]
mod events_conformance;
#[path = "../events_hostile.rs"]
mod events_hostile;
#[path = "../fs_boundaries.rs"]
mod fs_boundaries;
#[path = "../fs_catalog.rs"]
mod fs_catalog;
#[path = "../skills.rs"]
mod skills;
#[path = "../webhooks.rs"]
mod webhooks;
