//! The `actix-mcp` binary as a child process: its command line, stdio, listen
//! streams over stdio, Prometheus metrics and the status page (which counts
//! every server of its process, so no test here starts a server in the test
//! process).
//!
//! One test binary of the area (`cargo test -p actix-mcp --test binary`); each
//! file in `tests/` is one of its modules, sharing `tests/common/`.

#[path = "../common/mod.rs"]
mod common;

#[path = "../cli.rs"]
mod cli;
#[path = "../metrics.rs"]
mod metrics;
#[path = "../status.rs"]
mod status;
#[path = "../stdio.rs"]
mod stdio;
#[path = "../subscriptions_stdio.rs"]
mod subscriptions_stdio;
