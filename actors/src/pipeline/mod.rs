//! From a parsed message to its answer: the [`intake`] admits or refuses it,
//! [`legacy`] sessions hold what the `initialize` era negotiated, one
//! [`request`] actor runs each call, and the [`service`] answers it from the
//! catalog; a [`watch`] records what happened to it.
//!
//! The machinery under the embedding API: public for the binary, the
//! project's tests and benches, not for applications.

pub(crate) mod intake;
pub(crate) mod legacy;
pub(crate) mod request;
pub(crate) mod service;
pub(crate) mod subject;
pub(crate) mod watch;
