//! `[gateway]` and `[[upstreams]]`: other MCP servers served through this
//! one, each reached over stdio (a command) or Streamable HTTP (a URL, any
//! era), their tools and prompts under a prefix.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::error::ConfigError;

use mcp_protocol::limits::{DEFAULT_MAX_LIST_ITEMS, DEFAULT_MAX_LIST_PAGES, DEFAULT_MAX_MESSAGE_BYTES};

/// `[gateway]`: what applies to every upstream.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct GatewayConfig {
    /// Between an upstream's prefix and an item's own name. Default `__`
    /// (many hosts refuse dots in tool names).
    pub separator: String,
    /// The first wait before an upstream that failed is started again;
    /// doubled after each failure in a row. Default 500 ms.
    pub restart_initial_ms: u64,
    /// The longest wait between restarts. Default 30 000 ms.
    pub restart_max_ms: u64,
    /// How long an upstream request that asked for input waits for its
    /// caller's retry (it is cancelled after). Default 300 000 ms.
    pub input_wait_ms: u64,
    /// A JSON file pinning each upstream item's definition at first sight:
    /// a later definition that differs is not served until approved
    /// (`actix-mcp gateway approve`). Default `""`: no pins (a definition
    /// with hidden characters is refused all the same).
    pub pins: String,
}

impl Default for GatewayConfig {
    fn default() -> Self {
        GatewayConfig {
            separator: "__".into(),
            restart_initial_ms: 500,
            restart_max_ms: 30_000,
            input_wait_ms: 300_000,
            pins: String::new(),
        }
    }
}

impl GatewayConfig {
    /// The wait before an upstream is started again after `failures`
    /// failures in a row: `restart_initial_ms`, doubled per failure after
    /// the first, at most `restart_max_ms`.
    pub fn restart_wait(&self, failures: u32) -> std::time::Duration {
        let doubled = self.restart_initial_ms.saturating_mul(1u64 << failures.saturating_sub(1).min(20));
        std::time::Duration::from_millis(doubled.min(self.restart_max_ms))
    }
}

/// One `[[upstreams]]` entry.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct UpstreamConfig {
    /// Its name: letters, digits, `-` and `_`; unique.
    pub name: String,
    /// stdio: the program to start (exactly one of `command` and `url`).
    pub command: String,
    /// stdio: its arguments.
    pub args: Vec<String>,
    /// stdio: variables added to its environment.
    pub env: BTreeMap<String, String>,
    /// stdio: its working directory (default: this process's).
    pub cwd: String,
    /// Streamable HTTP: the endpoint.
    pub url: String,
    /// Streamable HTTP: headers of every request.
    pub headers: BTreeMap<String, String>,
    /// Streamable HTTP: a bearer token read from this environment variable
    /// (upstream credentials never come from the downstream caller).
    pub bearer_env: String,
    /// Streamable HTTP: a bearer token read from this file (trimmed).
    pub bearer_file: String,
    /// Put before its tool and prompt names, with `gateway.separator`.
    /// Absent: the name; `""`: none (for at most one upstream).
    pub prefix: Option<String>,
    /// Put before its resource URIs and URI templates (default none): two
    /// upstreams serving the same URI is a start-up error unless one of
    /// them takes a prefix, such as `"docs+"`.
    pub uri_prefix: String,
    /// The time limit of each request to it. Default 60 000 ms.
    pub timeout_ms: u64,
    /// Whether readiness waits for it. Default true.
    pub required: bool,
    /// Its tools served, by glob on the upstream's own names (empty: all).
    pub allow_tools: Vec<String>,
    /// Its tools not served, by glob (applied after `allow_tools`).
    pub deny_tools: Vec<String>,
    /// Scopes a caller needs for every item of it (with `auth.mode` on).
    pub scopes: Vec<String>,
    /// The largest message read from it, in bytes (a stdio line, an HTTP
    /// body, one SSE event); a larger one fails its request unread (over
    /// stdio, the connection: the upstream is restarted). Default 64 MiB.
    pub max_message_bytes: usize,
    /// The most pages one of its listings is followed for. Default 10 000.
    pub max_list_pages: usize,
    /// The most items one of its listings collects. Default 100 000.
    pub max_list_items: usize,
}

impl Default for UpstreamConfig {
    fn default() -> Self {
        UpstreamConfig {
            name: String::new(),
            command: String::new(),
            args: Vec::new(),
            env: BTreeMap::new(),
            cwd: String::new(),
            url: String::new(),
            headers: BTreeMap::new(),
            bearer_env: String::new(),
            bearer_file: String::new(),
            prefix: None,
            uri_prefix: String::new(),
            timeout_ms: 60_000,
            required: true,
            allow_tools: Vec::new(),
            deny_tools: Vec::new(),
            scopes: Vec::new(),
            max_message_bytes: DEFAULT_MAX_MESSAGE_BYTES,
            max_list_pages: DEFAULT_MAX_LIST_PAGES,
            max_list_items: DEFAULT_MAX_LIST_ITEMS,
        }
    }
}

impl UpstreamConfig {
    /// Whether the upstream is a child process spoken to over stdio (it
    /// names a `command`), not a Streamable HTTP server (a `url`).
    pub fn is_stdio(&self) -> bool {
        self.url.is_empty()
    }

    /// An upstream from `NAME=COMMAND` or `NAME=URL` (`--upstream`): a value
    /// starting with `http://` or `https://` is a URL, anything else a
    /// command line split at whitespace.
    pub fn parse_flag(flag: &str) -> Result<Self, ConfigError> {
        let bad = || ConfigError(format!("--upstream {flag:?}: expected NAME=COMMAND or NAME=URL"));
        let (name, target) = flag.split_once('=').ok_or_else(bad)?;
        let target = target.trim();
        let mut up = UpstreamConfig { name: name.trim().to_owned(), ..Default::default() };
        if target.starts_with("http://") || target.starts_with("https://") {
            up.url = target.to_owned();
        } else {
            let mut words = target.split_whitespace().map(str::to_owned);
            up.command = words.next().ok_or_else(bad)?;
            up.args = words.collect();
        }
        Ok(up)
    }

    /// The prefix of its names (`""`: none).
    pub fn prefix(&self) -> &str {
        self.prefix.as_deref().unwrap_or(&self.name)
    }

    fn validate(&self) -> Result<(), ConfigError> {
        let name = &self.name;
        let err = |m: String| Err(ConfigError(format!("upstream {name:?}: {m}")));
        if name.is_empty() || !name.chars().all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_') {
            return err("a name of letters, digits, '-' and '_' is needed".into());
        }
        if self.command.is_empty() == self.url.is_empty() {
            return err("exactly one of command (stdio) and url (Streamable HTTP) is needed".into());
        }
        if !self.url.is_empty() {
            url::Url::parse(&self.url).map_err(|e| ConfigError(format!("upstream {name:?}: url: {e}")))?;
        }
        if !self.prefix().chars().all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_' || c == '.') {
            return err(format!("prefix {:?} may hold letters, digits, '-', '_' and '.' only", self.prefix()));
        }
        if self.timeout_ms == 0 {
            return err("timeout_ms must be at least 1".into());
        }
        if self.max_message_bytes == 0 || self.max_list_pages == 0 || self.max_list_items == 0 {
            return err("max_message_bytes, max_list_pages and max_list_items must be at least 1".into());
        }
        for glob in self.allow_tools.iter().chain(&self.deny_tools) {
            globset::Glob::new(glob).map_err(|e| ConfigError(format!("upstream {name:?}: {glob:?}: {e}")))?;
        }
        Ok(())
    }
}

/// Checks the upstreams together: each valid, names unique, at most one
/// without a prefix, a separator tool names allow.
pub(super) fn validate(gateway: &GatewayConfig, upstreams: &[UpstreamConfig]) -> Result<(), ConfigError> {
    let sep = &gateway.separator;
    if sep.is_empty() || !sep.chars().all(|c| c.is_ascii_alphanumeric() || "_-.".contains(c)) {
        return Err(ConfigError(format!("gateway.separator {sep:?}: one or more of letters, digits, '_', '-', '.'")));
    }
    if gateway.input_wait_ms == 0 {
        return Err(ConfigError("gateway.input_wait_ms must be at least 1".into()));
    }
    if gateway.restart_initial_ms == 0 || gateway.restart_max_ms < gateway.restart_initial_ms {
        return Err(ConfigError("gateway.restart_initial_ms must be at least 1 and at most restart_max_ms".into()));
    }
    let mut names = std::collections::BTreeSet::new();
    for up in upstreams {
        up.validate()?;
        if !names.insert(up.name.as_str()) {
            return Err(ConfigError(format!("two upstreams are named {:?}", up.name)));
        }
    }
    let bare: Vec<&str> = upstreams.iter().filter(|u| u.prefix().is_empty()).map(|u| u.name.as_str()).collect();
    if bare.len() > 1 {
        return Err(ConfigError(format!("upstreams {bare:?} all have an empty prefix; at most one may")));
    }
    // Names are served as PREFIX + separator + own name: where one such head
    // starts another, one served name could be either upstream's.
    let heads: Vec<(String, &str)> = upstreams
        .iter()
        .filter(|u| !u.prefix().is_empty())
        .map(|u| (format!("{}{sep}", u.prefix()), u.name.as_str()))
        .collect();
    for (i, (a, an)) in heads.iter().enumerate() {
        if let Some((b, bn)) =
            heads[i + 1..].iter().find(|(b, _)| a.starts_with(b.as_str()) || b.starts_with(a.as_str()))
        {
            return Err(ConfigError(format!(
                "upstreams {an:?} and {bn:?} serve names under {a:?} and {b:?}, and one of these starts the \
                 other, so one name could be either's; give one of them another prefix"
            )));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_flag_is_a_command_or_a_url() {
        let up = UpstreamConfig::parse_flag("fs=npx -y server-filesystem /tmp").unwrap();
        assert_eq!((up.name.as_str(), up.command.as_str()), ("fs", "npx"));
        assert_eq!(up.args, ["-y", "server-filesystem", "/tmp"]);
        let up = UpstreamConfig::parse_flag("remote=https://mcp.example.com/mcp").unwrap();
        assert_eq!(up.url, "https://mcp.example.com/mcp");
        assert!(UpstreamConfig::parse_flag("nothing").is_err());
        assert!(UpstreamConfig::parse_flag("x=").is_err());
    }

    #[test]
    fn the_restart_wait_doubles_up_to_its_limit() {
        let g = GatewayConfig { restart_initial_ms: 100, restart_max_ms: 1000, ..Default::default() };
        let waits: Vec<u128> = (1..=6).map(|f| g.restart_wait(f).as_millis()).collect();
        assert_eq!(waits, [100, 200, 400, 800, 1000, 1000]);
    }

    #[test]
    fn upstreams_are_checked_together() {
        let g = GatewayConfig::default();
        let up = |name: &str, prefix: Option<&str>| UpstreamConfig {
            name: name.into(),
            command: "x".into(),
            prefix: prefix.map(Into::into),
            ..Default::default()
        };
        assert!(validate(&g, &[up("a", None), up("b", Some(""))]).is_ok());
        let e = validate(&g, &[up("a", Some("")), up("b", Some(""))]).unwrap_err();
        assert!(e.0.contains("empty prefix"), "{e}");
        assert!(validate(&g, &[up("a", None), up("a", None)]).unwrap_err().0.contains("two upstreams"));
        let both = UpstreamConfig { url: "http://h/mcp".into(), ..up("a", None) };
        assert!(validate(&g, &[both]).unwrap_err().0.contains("exactly one"));
        // A prefix (with the separator) that starts another's, or the same twice.
        for (a, b) in [("hx", "hx__good"), ("hx_", "hx"), ("x", "x")] {
            let e = validate(&g, &[up("a", Some(a)), up("b", Some(b))]).unwrap_err();
            assert!(e.0.contains("\"a\" and \"b\"") && e.0.contains("another prefix"), "{e}");
        }
        assert!(validate(&g, &[up("a", Some("hx")), up("b", Some("hxgood"))]).is_ok());
        let sep = GatewayConfig { separator: "/".into(), ..g };
        assert!(validate(&sep, &[]).is_err());
    }
}
