//! The Streamable HTTP wire: bad input and its exact errors, validation,
//! streaming, h2c, hardening, health, trace context, the specification's
//! examples and property tests of the sans-IO core.
//!
//! One test binary of the area (`cargo test -p actix-mcp --test wire`); each
//! file in `tests/` is one of its modules, sharing `tests/common/`.

#[path = "../common/mod.rs"]
mod common;

#[path = "../bad_input.rs"]
mod bad_input;
#[path = "../h2c.rs"]
mod h2c;
#[path = "../hardening.rs"]
mod hardening;
#[path = "../health.rs"]
mod health;
#[path = "../http_streaming.rs"]
mod http_streaming;
#[path = "../http_validation.rs"]
mod http_validation;
#[path = "../properties.rs"]
mod properties;
#[path = "../spec_fixtures.rs"]
mod spec_fixtures;
#[path = "../trace.rs"]
mod trace;
