//! How an upstream's tool and prompt names are served: its own name behind
//! its *head* (prefix and separator), its tools filtered by `allow_tools`
//! and `deny_tools`, and never a name in another upstream's namespace.
//!
//! The configuration refuses a head that starts another (the same prefix
//! twice, `hx` beside `hx__good`), so two prefixed upstreams can never serve
//! one name. The one upstream without a prefix has the empty head, which
//! starts every other: a name of it that starts with another upstream's
//! head is left out (`good__echo` is upstream `good`'s to serve), whatever
//! order the upstreams come up in. The local catalog keeps its own names:
//! an upstream's item whose name it holds is left out too (the mirror puts
//! new items with `add_*`, which never replaces).

use globset::GlobSet;

use crate::config::{glob_set, GatewayConfig, UpstreamConfig};

/// One upstream's names.
#[derive(Debug, Clone)]
pub(crate) struct Names {
    /// Its prefix and the separator (empty: no prefix).
    head: String,
    /// The heads of the other upstreams that are longer than this one's
    /// and start with it: the namespaces its names may not enter.
    others: Vec<String>,
    allow: Option<GlobSet>,
    deny: Option<GlobSet>,
}

/// The head of an upstream: its prefix and the separator, or nothing.
pub(crate) fn head(up: &UpstreamConfig, separator: &str) -> String {
    match up.prefix() {
        "" => String::new(),
        prefix => format!("{prefix}{separator}"),
    }
}

fn globs(patterns: &[String]) -> Option<GlobSet> {
    // Checked when the configuration was loaded.
    (!patterns.is_empty()).then(|| glob_set(patterns).ok()).flatten()
}

impl Names {
    /// The names of `up`, among `all` the gateway's upstreams.
    pub(crate) fn new(up: &UpstreamConfig, all: &[UpstreamConfig], gateway: &GatewayConfig) -> Self {
        let head = head(up, &gateway.separator);
        let others = all
            .iter()
            .filter(|o| o.name != up.name)
            .map(|o| self::head(o, &gateway.separator))
            // Only a longer head that starts with this one can take its names.
            .filter(|h| h.len() > head.len() && h.starts_with(&head))
            .collect();
        Names { head, others, allow: globs(&up.allow_tools), deny: globs(&up.deny_tools) }
    }

    /// Whether `other` serves the same names in the same namespace (its
    /// head, and the longer heads of the others; the globs come from the
    /// upstream's own configuration).
    pub(crate) fn same_namespace(&self, other: &Names) -> bool {
        self.head == other.head && self.others == other.others
    }

    /// Its head (prefix and separator; empty for none).
    pub(crate) fn head(&self) -> &str {
        &self.head
    }

    /// The name this server gives the upstream's `own` name.
    pub(crate) fn served(&self, own: &str) -> String {
        format!("{}{own}", self.head)
    }

    /// Whether its tool `own` passes `allow_tools` and `deny_tools`.
    pub(crate) fn allows_tool(&self, own: &str) -> bool {
        self.allow.as_ref().is_none_or(|a| a.is_match(own)) && !self.deny.as_ref().is_some_and(|d| d.is_match(own))
    }

    /// Why `served` may not be served for this upstream: it is in another
    /// upstream's namespace.
    pub(crate) fn trespasses(&self, served: &str) -> Option<String> {
        let other = self.others.iter().find(|h| served.starts_with(h.as_str()))?;
        Some(format!("{other}… names belong to another upstream"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn up(name: &str, prefix: Option<&str>) -> UpstreamConfig {
        UpstreamConfig { name: name.into(), command: "x".into(), prefix: prefix.map(Into::into), ..Default::default() }
    }

    #[test]
    fn names_are_prefixed_and_tools_filtered() {
        let fs = UpstreamConfig {
            allow_tools: vec!["read_*".into(), "list_*".into()],
            deny_tools: vec!["read_secret*".into()],
            ..up("fs", None)
        };
        let g = GatewayConfig::default();
        let n = Names::new(&fs, std::slice::from_ref(&fs), &g);
        assert_eq!(n.served("read_file"), "fs__read_file");
        assert!(n.allows_tool("read_file") && n.allows_tool("list_dir"));
        assert!(!n.allows_tool("write_file") && !n.allows_tool("read_secrets"));
        let bare = up("bare", Some(""));
        assert_eq!(Names::new(&bare, std::slice::from_ref(&bare), &g).served("read_file"), "read_file");
    }

    #[test]
    fn an_upstream_without_a_prefix_stays_out_of_the_others_namespaces() {
        let all = [up("evil", Some("")), up("good", None), up("x", Some("ex"))];
        let g = GatewayConfig::default();
        let evil = Names::new(&all[0], &all, &g);
        assert!(evil.trespasses("good__echo").is_some_and(|why| why.contains("good__")));
        assert!(evil.trespasses("ex__echo").is_some());
        assert_eq!(evil.trespasses("echo"), None);
        assert_eq!(evil.trespasses("goodecho"), None);
        // A prefixed upstream's names start with its own head only.
        assert_eq!(Names::new(&all[1], &all, &g).trespasses("good__ex__echo"), None);
    }
}
