//! [`Listing`]: one page of a catalog map's listed definitions, with the
//! narrowest caching hints among the page's items.

use std::collections::BTreeMap;
use std::ops::Bound;

use mcp_protocol::model::CacheHints;
use mcp_protocol::model::{prompts, resources, tools};
use mcp_protocol::pagination::{decode_cursor, encode_cursor, Page};
use mcp_protocol::ProtocolError;

use super::Catalog;

/// A page of listed definitions and the caching hints of the items in it.
#[derive(Debug, Clone, PartialEq)]
pub struct Listing<T> {
    /// The page.
    pub page: Page<T>,
    /// The shortest TTL and the narrowest scope among the page's items' own hints.
    pub cache: Option<CacheHints>,
}

pub(super) fn page_of<T, D: Clone>(
    map: &BTreeMap<String, T>,
    cursor: Option<&str>,
    page_size: usize,
    listed: impl Fn(&T) -> bool,
    def: impl Fn(&T) -> &D,
    cache: impl Fn(&T) -> Option<CacheHints>,
) -> Result<Listing<D>, ProtocolError> {
    let after = cursor.map(decode_cursor).transpose()?;
    let range = match &after {
        Some(k) => map.range::<String, _>((Bound::Excluded(k), Bound::Unbounded)),
        None => map.range::<String, _>(..),
    };
    let page_size = page_size.max(1);
    let mut items = Vec::new();
    let mut hints: Option<CacheHints> = None;
    let mut next_cursor = None;
    let mut last_key: Option<&String> = None;
    for (key, item) in range.filter(|(_, item)| listed(item)) {
        if items.len() == page_size {
            next_cursor = last_key.map(|k| encode_cursor(k));
            break;
        }
        if let Some(h) = cache(item) {
            hints = Some(match hints {
                None => h,
                Some(prev) => CacheHints::new(prev.ttl_ms.min(h.ttl_ms), prev.cache_scope.max(h.cache_scope)),
            });
        }
        items.push(def(item).clone());
        last_key = Some(key);
    }
    Ok(Listing { page: Page { items, next_cursor }, cache: hints })
}

impl Catalog {
    /// A page of listed tools.
    pub fn list_tools(&self, cursor: Option<&str>, page_size: usize) -> Result<Listing<tools::Tool>, ProtocolError> {
        self.list_tools_for(cursor, page_size, &|_| true)
    }

    /// A page of the listed tools whose scopes pass `visible` (the
    /// caller's token grants them).
    pub fn list_tools_for(
        &self,
        cursor: Option<&str>,
        page_size: usize,
        visible: &dyn Fn(&[String]) -> bool,
    ) -> Result<Listing<tools::Tool>, ProtocolError> {
        self.list_tools_where(cursor, page_size, &|t| visible(&t.scopes))
    }

    /// A page of the listed tools that pass `keep` (the caller's scopes,
    /// whether it may see app-only tools).
    pub fn list_tools_where(
        &self,
        cursor: Option<&str>,
        page_size: usize,
        keep: &dyn Fn(&super::Tool) -> bool,
    ) -> Result<Listing<tools::Tool>, ProtocolError> {
        page_of(&self.read().tools, cursor, page_size, |t| t.listed && keep(t), |t| &t.def, |t| t.cache)
    }

    /// A page of listed resources.
    pub fn list_resources(
        &self,
        cursor: Option<&str>,
        page_size: usize,
    ) -> Result<Listing<resources::Resource>, ProtocolError> {
        self.list_resources_where(cursor, page_size, &|_| true)
    }

    /// A page of the listed resources that `keep` keeps.
    pub fn list_resources_where(
        &self,
        cursor: Option<&str>,
        page_size: usize,
        keep: &dyn Fn(&super::Resource) -> bool,
    ) -> Result<Listing<resources::Resource>, ProtocolError> {
        page_of(&self.read().resources, cursor, page_size, |r| r.listed && keep(r), |r| &r.def, |r| r.cache)
    }

    /// A page of resource templates.
    pub fn list_templates(
        &self,
        cursor: Option<&str>,
        page_size: usize,
    ) -> Result<Listing<resources::ResourceTemplate>, ProtocolError> {
        self.list_templates_where(cursor, page_size, &|_| true)
    }

    /// A page of the resource templates that `keep` keeps.
    pub fn list_templates_where(
        &self,
        cursor: Option<&str>,
        page_size: usize,
        keep: &dyn Fn(&super::ResourceTemplate) -> bool,
    ) -> Result<Listing<resources::ResourceTemplate>, ProtocolError> {
        page_of(&self.read().templates, cursor, page_size, |t| keep(t), |t| &t.def, |t| t.cache)
    }

    /// A page of listed prompts.
    pub fn list_prompts(
        &self,
        cursor: Option<&str>,
        page_size: usize,
    ) -> Result<Listing<prompts::Prompt>, ProtocolError> {
        self.list_prompts_where(cursor, page_size, &|_| true)
    }

    /// A page of the listed prompts that `keep` keeps.
    pub fn list_prompts_where(
        &self,
        cursor: Option<&str>,
        page_size: usize,
        keep: &dyn Fn(&super::Prompt) -> bool,
    ) -> Result<Listing<prompts::Prompt>, ProtocolError> {
        page_of(&self.read().prompts, cursor, page_size, |p| p.listed && keep(p), |p| &p.def, |p| p.cache)
    }
}
