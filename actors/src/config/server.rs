//! `[server]`, `[cache]` and `[catalog]`: what the server says about itself
//! and what it serves.

use serde::{Deserialize, Serialize};

/// `[server]`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct ServerConfig {
    /// Name in `serverInfo`. Default: `actix-mcp`.
    pub name: String,
    /// Version in `serverInfo`. Default: this crate's version.
    pub version: String,
    /// `instructions` of `server/discover`. Default: a one-line description.
    pub instructions: String,
    /// Protocol versions served, newest first. Stateless versions
    /// (`2026-07-28`, `DRAFT-2026-v1`) are served per request; legacy versions
    /// (`2025-11-25`, `2025-06-18`, `2025-03-26`) after an `initialize`
    /// handshake, in a session. Default: all five (dual-era). Drop the legacy
    /// ones for a modern-only server (then `initialize` is answered with an
    /// error naming the supported versions); keep only legacy ones for an
    /// initialize-era server (a stateless request is then refused with
    /// `UnsupportedProtocolVersion` naming them).
    pub versions: Vec<String>,
    /// Items per page of the list methods. Default: 100 (large enough for
    /// most catalogs in one page; bounded so a huge catalog cannot make one
    /// response unbounded).
    pub page_size: usize,
}

impl Default for ServerConfig {
    fn default() -> Self {
        ServerConfig {
            name: "actix-mcp".into(),
            version: env!("CARGO_PKG_VERSION").into(),
            instructions: "An MCP server built on actix-mcp.".into(),
            versions: ["2026-07-28", "DRAFT-2026-v1", "2025-11-25", "2025-06-18", "2025-03-26"]
                .into_iter()
                .map(String::from)
                .collect(),
            page_size: 100,
        }
    }
}

/// `[cache]`: defaults for items without their own hints.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct CacheConfig {
    /// `ttlMs` of list results. Default: 0 (catalogs may change at runtime).
    pub list_ttl_ms: u64,
    /// `ttlMs` of `resources/read` and `server/discover`. Default: 0.
    pub read_ttl_ms: u64,
    /// `cacheScope`: `public` or `private`. Default: `public`.
    #[serde(deserialize_with = "cache_scope")]
    pub scope: mcp_protocol::model::CacheScope,
}

/// Reads `cache.scope`; a wrong word is refused naming the setting, as
/// every other word setting's is.
fn cache_scope<'de, D: serde::Deserializer<'de>>(d: D) -> Result<mcp_protocol::model::CacheScope, D::Error> {
    use mcp_protocol::model::CacheScope;
    super::choices::setting(d, "cache.scope", &["public", "private"], |word| match word {
        "public" => Some(CacheScope::Public),
        "private" => Some(CacheScope::Private),
        _ => None,
    })
}

impl Default for CacheConfig {
    fn default() -> Self {
        CacheConfig { list_ttl_ms: 0, read_ttl_ms: 0, scope: mcp_protocol::model::CacheScope::Public }
    }
}

/// `[catalog]`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct CatalogConfig {
    /// Built-in catalog: `fs` (a read-only, live catalog of `fs.root`),
    /// `everything` (the conformance fixture) or `none`. Default: empty,
    /// which is `fs`, or `none` when `[[upstreams]]` are configured.
    pub name: String,
}
