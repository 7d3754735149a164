//! The library as applications use it: the builder, embedding in an actix-web
//! app, the lean build, the examples, a newcomer's programs, MCP Apps in a
//! real browser.
//!
//! One test binary of the area (`cargo test -p actix-mcp --test library`); each
//! file in `tests/` is one of its modules, sharing `tests/common/`.

#[path = "../common/mod.rs"]
mod common;

#[path = "../apps_browser.rs"]
mod apps_browser;
#[path = "../builder.rs"]
mod builder;
#[path = "../embed_lean.rs"]
mod embed_lean;
#[path = "../embedding.rs"]
mod embedding;
#[path = "../examples.rs"]
mod examples;
#[path = "../newcomer.rs"]
mod newcomer;
#[path = "../team_notes.rs"]
mod team_notes;
