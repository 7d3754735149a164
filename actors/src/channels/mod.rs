//! The channels and messages actors talk through without naming each
//! other: a request's [`outbound`] channel (its notifications and answer, in
//! order), the [`control`] messages several actors share (close, cancel,
//! abort, change a filter), and the [`sink`] a listener writes to.

pub mod control;
pub mod outbound;
pub mod sink;
