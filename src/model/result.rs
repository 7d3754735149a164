//! Fields every 2026-07-28 result shares: `resultType`, and the caching hints
//! `ttlMs` / `cacheScope` of cacheable results.

use serde::{Deserialize, Serialize};

/// `resultType`: how the client should read the result.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum ResultType {
    /// The request completed.
    #[default]
    Complete,
    /// The server needs client input first (MRTR).
    InputRequired,
}

/// `cacheScope`: who may reuse a cached result. Ordered from widest to
/// narrowest, so `max` picks the stricter of two scopes.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum CacheScope {
    /// No user-specific data: shared caches may reuse it.
    #[default]
    Public,
    /// Reusable only within the same authorization context.
    Private,
}

/// The caching hints of a cacheable result.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CacheHints {
    /// How long, in milliseconds, the result may be considered fresh.
    pub ttl_ms: u64,
    /// Who may cache it.
    pub cache_scope: CacheScope,
}

impl CacheHints {
    /// Hints with a TTL and a scope.
    pub const fn new(ttl_ms: u64, cache_scope: CacheScope) -> Self {
        CacheHints { ttl_ms, cache_scope }
    }
}

impl Default for CacheHints {
    /// Immediately stale and public: safe for catalogs that change at runtime.
    fn default() -> Self {
        CacheHints::new(0, CacheScope::Public)
    }
}
