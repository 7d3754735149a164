//! The result envelope: `resultType`, caching hints and `_meta.serverInfo`
//! on every result, pages with their `nextCursor`.

use mcp_protocol::meta::SERVER_INFO_KEY;
use mcp_protocol::model::CacheHints;
use mcp_protocol::pagination::Page;
use serde::Serialize;
use serde_json::{json, Map, Value};

use super::McpService;
use crate::catalog::error::HandlerError;

impl McpService {
    /// Finishes a result, or passes an `InputRequiredResult` through.
    pub(super) fn complete_with<T: Serialize>(
        &self,
        out: Result<T, Value>,
        cache: Option<CacheHints>,
    ) -> Result<Value, HandlerError> {
        match out {
            Ok(result) => self.finish(&result, cache),
            Err(input_required) => Ok(input_required),
        }
    }

    pub(super) fn finish_page<T: Serialize>(
        &self,
        key: &str,
        page: Page<T>,
        cache: Option<CacheHints>,
    ) -> Result<Value, HandlerError> {
        let mut m = Map::new();
        m.insert(key.to_owned(), serde_json::to_value(page.items).map_err(internal)?);
        if let Some(c) = page.next_cursor {
            m.insert("nextCursor".into(), Value::String(c));
        }
        self.finish(&m, cache)
    }

    /// Adds `resultType`, caching hints and `_meta.serverInfo` to a result.
    pub(super) fn finish<T: Serialize>(&self, result: &T, cache: Option<CacheHints>) -> Result<Value, HandlerError> {
        let mut value = serde_json::to_value(result).map_err(internal)?;
        let m = value.as_object_mut().ok_or_else(|| HandlerError::internal("result is not an object"))?;
        m.entry("resultType").or_insert_with(|| Value::String("complete".into()));
        if let Some(c) = cache {
            m.insert("ttlMs".into(), json!(c.ttl_ms));
            m.insert("cacheScope".into(), json!(c.cache_scope));
        }
        match m.get_mut("_meta").and_then(Value::as_object_mut) {
            Some(meta) => {
                meta.insert(SERVER_INFO_KEY.into(), self.result_meta[SERVER_INFO_KEY].clone());
            }
            None => {
                m.insert("_meta".into(), self.result_meta.clone());
            }
        }
        Ok(value)
    }
}

fn internal(e: serde_json::Error) -> HandlerError {
    HandlerError::internal(format!("could not encode the result: {e}"))
}
