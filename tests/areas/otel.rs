//! OpenTelemetry spans. Alone in its process: the span exporter is the
//! process's, installed by the first server that starts.
//!
//! One test binary of the area (`cargo test -p actix-mcp --test otel`); each
//! file in `tests/` is one of its modules, sharing `tests/common/`.

#[path = "../common/mod.rs"]
mod common;

#[path = "../otel.rs"]
mod otel;
