//! An upstream's items in the catalog: what it lists, under the names this
//! server gives them (tools and prompts prefixed, resources and templates
//! under their own URIs), kept equal to its lists as they change and taken
//! out while it is down.

use std::collections::BTreeMap;
use std::sync::Arc;

use mcp_protocol::model::prompts::Prompt;
use mcp_protocol::model::resources::{Resource, ResourceTemplate};
use mcp_protocol::model::tools::Tool;
use mcp_protocol::model::CacheHints;
use mcp_protocol::ErrorCode;
use slog::{warn, Logger};

use super::claims::Claims;
use super::forward::{self, Link};
use super::names::Names;
use super::pins::Pins;
use crate::catalog::Catalog;
use crate::client::{Client, ClientError};
use crate::config::UpstreamConfig;

/// Everything an upstream lists, with each list's caching hints.
#[derive(Debug, Default)]
pub(crate) struct Lists {
    pub(crate) tools: Vec<Tool>,
    pub(crate) prompts: Vec<Prompt>,
    pub(crate) resources: Vec<Resource>,
    pub(crate) templates: Vec<ResourceTemplate>,
    /// Of `tools/list`, `prompts/list`, `resources/list`,
    /// `resources/templates/list` (a legacy upstream gives none).
    pub(crate) hints: [Option<CacheHints>; 4],
}

/// Every list of `client`'s server; a list it does not offer is empty.
pub(crate) async fn list(client: &Client) -> Result<Lists, ClientError> {
    fn offered<T>(listed: Result<Vec<T>, ClientError>) -> Result<Vec<T>, ClientError> {
        match listed {
            Err(ClientError::Protocol(e)) if e.code == ErrorCode::METHOD_NOT_FOUND => Ok(Vec::new()),
            other => other,
        }
    }
    let caps = client.server().capabilities;
    let (tools, prompts, resources) = (caps.tools.is_some(), caps.prompts.is_some(), caps.resources.is_some());
    let mut lists = Lists {
        tools: if tools { offered(client.list_tools().await)? } else { Vec::new() },
        prompts: if prompts { offered(client.list_prompts().await)? } else { Vec::new() },
        resources: if resources { offered(client.list_resources().await)? } else { Vec::new() },
        templates: if resources { offered(client.list_resource_templates().await)? } else { Vec::new() },
        hints: [None; 4],
    };
    let methods = ["tools/list", "prompts/list", "resources/list", "resources/templates/list"];
    lists.hints = methods.map(|m| client.list_hints(m));
    Ok(lists)
}

/// What one upstream has in the catalog, and how its names are made.
pub(crate) struct Mirror {
    /// The upstream's name.
    name: String,
    /// Which upstream serves which URI.
    claims: Arc<Claims>,
    /// How its tools and prompts are named, and which tools are served.
    names: Names,
    /// Before its URIs.
    uri_prefix: String,
    scopes: Vec<String>,
    /// What is served, by name or URI: the upstream's definition as it was
    /// put in the catalog (an unchanged one is left alone).
    tools: Served,
    prompts: Served,
    resources: Served,
    templates: Served,
    /// The pins of `gateway.pins`, when set.
    pins: Option<Arc<Pins>>,
    /// Items refused (hidden characters, or changed since pinned), by
    /// `kind:name as served`: why.
    refused: BTreeMap<String, String>,
}

/// Served items: name or URI → the upstream's definition.
type Served = BTreeMap<String, serde_json::Value>;

/// One of an upstream's lists and its caching hints.
type Listed<T> = (Vec<T>, Option<CacheHints>);

/// Why an upstream's item is not served: the local catalog has its name.
const LOCAL: &str = "the local catalog serves that name";

impl Mirror {
    pub(crate) fn new(config: &UpstreamConfig, names: Names, claims: Arc<Claims>, pins: Option<Arc<Pins>>) -> Self {
        Mirror {
            name: config.name.clone(),
            claims,
            names,
            uri_prefix: config.uri_prefix.clone(),
            scopes: config.scopes.clone(),
            tools: Served::new(),
            prompts: Served::new(),
            resources: Served::new(),
            templates: Served::new(),
            pins,
            refused: BTreeMap::new(),
        }
    }

    /// Makes the catalog hold exactly `lists` for this upstream, forwarding
    /// through `link`; one list-changed event per kind that changed (an
    /// item whose definition did not change is not touched). A URI another
    /// upstream (or the local catalog) serves is left to it; the conflicts
    /// with other upstreams, as sentences naming both.
    pub(crate) fn sync(&mut self, catalog: &Catalog, link: &Arc<Link>, lists: Lists, log: &Logger) -> Vec<String> {
        let Lists { mut tools, mut prompts, mut resources, mut templates, hints } = lists;
        let [tool_h, prompt_h, resource_h, template_h] = hints;
        self.refused.clear();
        let names = self.names.clone();
        // Only the tools the filters let through are screened (and pinned).
        tools.retain(|t| names.allows_tool(&t.name));
        self.screen_all("tool", &mut tools, |t: &Tool| (t.name.clone(), names.served(&t.name)));
        self.screen_all("prompt", &mut prompts, |p: &Prompt| (p.name.clone(), names.served(&p.name)));
        let up = self.uri_prefix.clone();
        self.screen_all("resource", &mut resources, |r: &Resource| (r.uri.clone(), format!("{up}{}", r.uri)));
        self.screen_all("template", &mut templates, |t: &ResourceTemplate| {
            (t.uri_template.clone(), format!("{up}{}", t.uri_template))
        });
        for (item, why) in &self.refused {
            warn!(log, "upstream item not served"; "item" => item, "why" => why);
            crate::telemetry::upstream_refused_item(&self.name);
        }
        catalog.batch_mirrored(|c| {
            self.sync_named(c, link, (tools, tool_h), (prompts, prompt_h), log);
            self.sync_uris(c, link, (resources, resource_h), (templates, template_h), log)
        })
    }

    /// Leaves out of `defs` each definition that carries a hidden
    /// character, or (with pins) differs from its pin, noting why under
    /// `kind:served` (`names` gives the upstream's own name and the served one).
    fn screen_all<D: serde::Serialize>(
        &mut self,
        kind: &str,
        defs: &mut Vec<D>,
        names: impl Fn(&D) -> (String, String),
    ) {
        let (upstream, pins, refused) = (&self.name, &self.pins, &mut self.refused);
        defs.retain(|d| {
            let Ok(value) = serde_json::to_value(d) else { return false };
            let (own, served) = names(d);
            let why = match super::pins::hidden_character(&value) {
                Some((member, c)) => Err(format!(
                    "its {member} carries a hidden character (U+{:04X}); such a definition is never served",
                    c as u32
                )),
                None => pins.as_ref().map_or(Ok(()), |p| p.screen(upstream, &format!("{kind}:{own}"), &value)),
            };
            match why {
                Ok(()) => true,
                Err(why) => {
                    refused.insert(format!("{kind}:{served}"), format!("upstream {upstream}: {why}"));
                    false
                }
            }
        });
    }

    /// Screens the next listings against `pins` (a reload read them again).
    pub(crate) fn set_pins(&mut self, pins: Option<Arc<Pins>>) {
        self.pins = pins;
    }

    /// Items refused, by `kind:name as served`: why (for the status page).
    pub(crate) fn refused(&self) -> &BTreeMap<String, String> {
        &self.refused
    }

    /// Tools and prompts, under their served names (the tools are those the
    /// filters let through, as `sync` left them): each name not in another
    /// upstream's namespace and not the local catalog's (an item this mirror
    /// put is replaced).
    fn sync_named(
        &mut self,
        c: &Catalog,
        link: &Arc<Link>,
        tools: Listed<Tool>,
        prompts: Listed<Prompt>,
        log: &Logger,
    ) {
        let ((tools, tool_hints), (prompts, prompt_hints)) = (tools, prompts);
        let (scopes, names, failed) = (&self.scopes, &self.names, |e: crate::catalog::CatalogError| e.to_string());
        let (held, served) = (&self.tools, |d: &Tool| names.served(&d.name));
        let tools = put_each("tool", tools, held, tool_hints, log, served, |d, served| {
            may_claim(names, served, held.contains_key(served), |n| c.holds_tool(n))?;
            let tool = forward::tool(link, d, served.to_owned()).with_scopes(scopes.clone());
            c.replace_tool(cached(tool, tool_hints, |t, h| t.with_cache(h))).map(drop).map_err(failed)
        });
        let (held, served) = (&self.prompts, |d: &Prompt| names.served(&d.name));
        let prompts = put_each("prompt", prompts, held, prompt_hints, log, served, |d, served| {
            may_claim(names, served, held.contains_key(served), |n| c.holds_prompt(n))?;
            let prompt = forward::prompt(link, d, served.to_owned()).with_scopes(scopes.clone());
            c.replace_prompt(cached(prompt, prompt_hints, |p, h| p.with_cache(h))).map(drop).map_err(failed)
        });
        self.tools = retire(&self.tools, tools, |n| drop(c.remove_tool(n)));
        self.prompts = retire(&self.prompts, prompts, |n| drop(c.remove_prompt(n)));
    }

    /// Resources and templates, under their served URIs, each claimed for
    /// this upstream; the conflicts with other upstreams.
    fn sync_uris(
        &mut self,
        c: &Catalog,
        link: &Arc<Link>,
        resources: Listed<Resource>,
        templates: Listed<ResourceTemplate>,
        log: &Logger,
    ) -> Vec<String> {
        let ((resources, resource_hints), (templates, template_hints)) = (resources, templates);
        let mut conflicts = Vec::new();
        let (me, claims, up) = (self.name.clone(), self.claims.clone(), self.uri_prefix.clone());
        let mut claim = |kind: &str, uri: &str| {
            claims.claim(uri, &me).map_err(|other| {
                let why = format!(
                    "the resource {kind} {uri} is served by upstreams {other} and {me} (give one a uri_prefix)"
                );
                conflicts.push(why.clone());
                why
            })
        };
        // A claim whose item is not served after all is given up again.
        let unclaim_on_err = |put: Result<(), String>, uri: &str| put.inspect_err(|_| claims.release(uri, &me));
        let (scopes, failed) = (&self.scopes, |e: crate::catalog::CatalogError| e.to_string());
        let taken = "another upstream or the local catalog serves it".to_owned();
        let (held, uri) = (&self.resources, |d: &Resource| format!("{up}{}", d.uri));
        let put_resource = |d: Resource, uri: &str| {
            if c.resource(uri).is_some() && !held.contains_key(uri) {
                return Err(taken.clone());
            }
            let r = forward::resource(link, d, uri.to_owned()).with_scopes(scopes.clone());
            c.replace_resource(cached(r, resource_hints, |r, h| r.with_cache(h))).map(drop).map_err(failed)
        };
        let resources = put_each("resource", resources, held, resource_hints, log, uri, |d, uri| {
            claim("URI", uri)?;
            unclaim_on_err(put_resource(d, uri), uri)
        });
        let (held, uri) = (&self.templates, |d: &ResourceTemplate| format!("{up}{}", d.uri_template));
        let put_template = |d: ResourceTemplate, uri: &str| {
            if c.template(uri).is_some() && !held.contains_key(uri) {
                return Err(taken.clone());
            }
            let t = forward::template(link, d, uri).ok_or("only RFC 6570 level-1 templates are matched")?;
            c.replace_template(cached(t.with_scopes(scopes.clone()), template_hints, |t, h| t.with_cache(h)));
            Ok(())
        };
        let templates = put_each("template", templates, held, template_hints, log, uri, |d, uri| {
            claim("template", uri)?;
            unclaim_on_err(put_template(d, uri), uri)
        });
        let release = |u: &str| self.claims.release(u, &self.name);
        self.resources = retire(&self.resources, resources, |u| {
            c.remove_resource(u);
            release(u);
        });
        self.templates = retire(&self.templates, templates, |u| {
            c.remove_template(u);
            release(u);
        });
        conflicts
    }

    /// The upstream's own URI of `served` (without the prefix).
    pub(crate) fn own_uri<'a>(&self, served: &'a str) -> &'a str {
        served.strip_prefix(self.uri_prefix.as_str()).unwrap_or(served)
    }

    /// The URI this server gives the upstream's `own` URI.
    pub(crate) fn served_uri(&self, own: &str) -> String {
        format!("{}{own}", self.uri_prefix)
    }

    /// Takes every item of this upstream out of the catalog.
    pub(crate) fn clear(&mut self, catalog: &Catalog) {
        catalog.batch_mirrored(|c| {
            for n in std::mem::take(&mut self.tools).keys() {
                c.remove_tool(n);
            }
            for n in std::mem::take(&mut self.prompts).keys() {
                c.remove_prompt(n);
            }
            for u in std::mem::take(&mut self.resources).keys() {
                c.remove_resource(u);
                self.claims.release(u, &self.name);
            }
            for u in std::mem::take(&mut self.templates).keys() {
                c.remove_template(u);
                self.claims.release(u, &self.name);
            }
        });
    }

    /// Whether `catalog` reads `uri` from this upstream: one of its
    /// resources, or (no resource having that URI) the template it matches
    /// first is one of its.
    pub(crate) fn owns_uri(&self, catalog: &Catalog, uri: &str) -> bool {
        self.resources.contains_key(uri)
            || (catalog.resource(uri).is_none()
                && catalog.match_template(uri).is_some_and(|(t, _)| self.templates.contains_key(t.uri_template())))
    }

    /// How many items of this upstream are served.
    pub(crate) fn count(&self) -> usize {
        self.tools.len() + self.prompts.len() + self.resources.len() + self.templates.len()
    }
}

/// `item` with the upstream list's caching `hints`, when it gave some.
fn cached<T>(item: T, hints: Option<CacheHints>, with: impl FnOnce(T, CacheHints) -> T) -> T {
    match hints {
        Some(h) => with(item, h),
        None => item,
    }
}

/// Puts each of `defs` in the catalog with `put`, under its `key`, unless
/// `before` served the same definition (with the same list `hints`) under it; what is now served (one
/// refused is logged and left out).
fn put_each<D: serde::Serialize>(
    kind: &str,
    defs: Vec<D>,
    before: &Served,
    hints: Option<CacheHints>,
    log: &Logger,
    key: impl Fn(&D) -> String,
    mut put: impl FnMut(D, &str) -> Result<(), String>,
) -> Served {
    let mut served = Served::new();
    for def in defs {
        let k = key(&def);
        // Its definition and the list's hints: a change of either puts it again.
        let seen = serde_json::json!([def, hints.map(|h| (h.ttl_ms, h.cache_scope))]);
        if before.get(&k) == Some(&seen) {
            served.insert(k, seen);
            continue;
        }
        match put(def, &k) {
            Ok(()) => {
                served.insert(k, seen);
            }
            Err(why) => warn!(log, "upstream item not served"; "kind" => kind, "name" => &k, "why" => why),
        }
    }
    served
}

/// What is now served; `remove` is called for each one served before and
/// not now.
fn retire(before: &Served, now: Served, mut remove: impl FnMut(&str)) -> Served {
    for gone in before.keys().filter(|k| !now.contains_key(*k)) {
        remove(gone);
    }
    now
}
/// Whether an upstream may serve an item as `served`: a name inside its own
/// namespace, and not one the local catalog has (`ours`: the upstream serves
/// it already, so the catalog's copy is its own).
fn may_claim(names: &Names, served: &str, ours: bool, local: impl FnOnce(&str) -> bool) -> Result<(), String> {
    names.trespasses(served).map_or(Ok(()), Err)?;
    if !ours && local(served) {
        return Err(LOCAL.into());
    }
    Ok(())
}
