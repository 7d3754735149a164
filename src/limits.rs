//! Default bounds on what a server may send a client: the largest message
//! read and how far a listing is followed. The client and the gateway's
//! upstream settings start from these.

/// The largest message a client reads by default: 64 MiB.
pub const DEFAULT_MAX_MESSAGE_BYTES: usize = 64 * 1024 * 1024;
/// The most pages one listing follows by default.
pub const DEFAULT_MAX_LIST_PAGES: usize = 10_000;
/// The most items one listing collects by default.
pub const DEFAULT_MAX_LIST_ITEMS: usize = 100_000;
