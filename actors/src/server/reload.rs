//! Reloading the configuration while serving ([`McpServer::reload`], and
//! [`reload_on_hangup`] for SIGHUP): the policy, the quotas, the upstreams
//! and the gateway's pins change in place; every other setting takes effect
//! at the next start (a reload that changes one says so in the log). A
//! configuration that does not load — TOML, Cedar, pins — is refused whole
//! and the running one kept. Requests in flight finish on what they started
//! with: each took the policy and quotas of its start, and an upstream's
//! calls in flight finish before its connection closes.
//!
//! What a [builder](crate::builder::McpServerBuilder) set in code is read
//! into every reloaded configuration as it was into the first
//! (`InCode`): its upstreams are kept, and its server name, version and
//! instructions stay unless the configuration sets them.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::SystemTime;

use mcp_protocol::subscription::Event;
use serde_json::{json, Value};
use slog::{error, info, warn};

use super::McpServer;
use crate::config::{Config, ConfigError, ServerConfig, UpstreamConfig};

/// The settings a reload applies; the rest wait for a restart.
const RELOADED: [&str; 4] = ["upstreams", "policy", "quotas", "quotas_fail"];

/// What a reload changed.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct Reloaded {
    /// The configuration's generation now (1 at start, +1 per reload).
    pub generation: u64,
    /// Whether the policy now decides differently (lists may show other
    /// items: their `list_changed` went out).
    pub policy_changed: bool,
    /// The upstreams started, stopped and restarted.
    #[cfg(feature = "gateway")]
    #[cfg_attr(docsrs, doc(cfg(feature = "gateway")))]
    pub upstreams: crate::gateway::FleetChange,
    /// Settings that changed but take effect at the next start.
    pub need_restart: Vec<String>,
}

/// What a builder set in code rather than in the configuration, read into
/// the configuration it builds with and into every reloaded one alike.
#[derive(Debug, Clone, Default)]
pub(crate) struct InCode {
    /// The upstreams given with `McpServerBuilder::upstream`: served after
    /// the configuration's, and never removed by a reload.
    pub(crate) upstreams: Vec<UpstreamConfig>,
    /// The builder's `serverInfo` (name, version): the server's, unless the
    /// configuration names the server.
    pub(crate) named: Option<(String, String)>,
    /// `McpServerBuilder::instructions`: the server's, unless the
    /// configuration sets them.
    pub(crate) instructions: Option<String>,
}

impl InCode {
    /// `config` with what was set in code: the name, version and
    /// instructions where `config` leaves them at their defaults, and the
    /// code's upstreams after its own. An upstream of `config` named as one
    /// given in code is an error naming it (the code's cannot be replaced).
    pub(crate) fn apply(&self, mut config: Config) -> Result<Config, ConfigError> {
        let defaults = ServerConfig::default();
        if let Some((name, version)) = self.named.as_ref().filter(|_| config.server.name == defaults.name) {
            config.server.name = name.clone();
            config.server.version = version.clone();
        }
        if let Some(text) = self.instructions.as_ref().filter(|_| config.server.instructions == defaults.instructions) {
            config.server.instructions = text.clone();
        }
        for up in &self.upstreams {
            if config.upstreams.iter().any(|u| u.name == up.name) {
                return Err(ConfigError(format!(
                    "upstream {:?} is given in code (McpServerBuilder::upstream); the configuration may not \
                     name it too: rename one of them",
                    up.name
                )));
            }
            config.upstreams.push(up.clone());
        }
        Ok(config)
    }
}

/// The configuration's generations: the one loaded last, how the last
/// reload went, and what the builder set in code.
pub(crate) struct Generations {
    generation: AtomicU64,
    last: Mutex<Last>,
    /// Read into every reloaded configuration.
    code: InCode,
}

struct Last {
    /// The configuration loaded last (for what a reload changes).
    config: Config,
    at: Option<SystemTime>,
    error: Option<String>,
}

impl Generations {
    /// Generation 1: `config`, as the server started with it.
    pub(crate) fn new(config: &Config) -> Generations {
        let last = Last { config: config.clone(), at: None, error: None };
        Generations { generation: AtomicU64::new(1), last: Mutex::new(last), code: InCode::default() }
    }

    fn last(&self) -> std::sync::MutexGuard<'_, Last> {
        self.last.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// A reload was tried now: refused with `error`, or applied.
    fn tried(&self, error: Option<String>) {
        let mut last = self.last();
        last.at = Some(SystemTime::now());
        last.error = error;
    }
}

impl McpServer {
    /// Applies `config`'s policy, quotas, upstreams and pins; every other
    /// setting takes effect at the next start (listed in
    /// [`Reloaded::need_restart`]). Refused whole, with the running
    /// configuration kept, when `config` does not validate or its policy,
    /// quotas or pins do not load.
    ///
    /// A server from the [builder](crate::builder::McpServerBuilder) reads
    /// what was set in code into `config` as it did at start: the upstreams
    /// given with `upstream()` are kept (`config`'s own are added, changed
    /// and removed around them; one `config` names as well is refused), and
    /// where `config` does not name the server, or leaves its instructions
    /// at their default, the builder's stay — so a reloaded file that
    /// changes only the policy changes only the policy.
    pub fn reload(&self, config: Config) -> Result<Reloaded, String> {
        let result = self.try_reload(config);
        self.inner.reloads.tried(result.as_ref().err().cloned());
        result
    }

    fn try_reload(&self, config: Config) -> Result<Reloaded, String> {
        let config = self.inner.reloads.code.apply(config).map_err(|e| e.0)?;
        config.validate().map_err(|e| e.0)?;
        let service = self.service();
        let log = self.logger();
        // Everything that can fail, before anything changes.
        let policy = crate::policy::Policy::load(&config.policy).map_err(|e| format!("policy.file: {e}"))?;
        let quotas = crate::quota::Quotas::from_config(&config, service.quotas().as_deref(), log)
            .map_err(|e| format!("quotas: {e}"))?;
        #[cfg(feature = "gateway")]
        let gateway = match self.gateway() {
            Some(g) => Some((g, crate::gateway::Gateway::prepare_reload(&config)?)),
            None if config.upstreams.is_empty() => None,
            None => return Err("upstreams: this server was built without a gateway; adding one needs a restart".into()),
        };
        let mut last = self.inner.reloads.last();
        let policy_changed = match (service.policy(), &policy) {
            (None, None) => false,
            (Some(old), Some(new)) => !old.same_as(new),
            _ => true,
        };
        if policy.is_some() {
            crate::telemetry::register_policy_decisions();
        }
        service.set_policy(policy.map(Arc::new));
        service.set_quotas(quotas.map(Arc::new));
        #[cfg(feature = "gateway")]
        let upstreams = gateway.map(|(g, r)| g.reload(r)).unwrap_or_default();
        if policy_changed {
            // What a caller may list may have changed, in every list.
            for event in [Event::ToolsListChanged, Event::PromptsListChanged, Event::ResourcesListChanged] {
                self.catalog().notify_list_changed(event);
            }
        }
        let need_restart = need_restart(&last.config, &config);
        let generation = self.inner.reloads.generation.fetch_add(1, Ordering::Relaxed) + 1;
        last.config = config;
        let reloaded = Reloaded {
            generation,
            policy_changed,
            #[cfg(feature = "gateway")]
            upstreams,
            need_restart,
        };
        info!(log, "configuration reloaded"; "generation" => generation, "policy_changed" => policy_changed,
            "changes" => format!("{reloaded:?}"));
        if !reloaded.need_restart.is_empty() {
            warn!(log, "settings changed that take effect at the next start";
                "settings" => reloaded.need_restart.join(", "));
        }
        Ok(reloaded)
    }

    /// This server reading `code` into every reloaded configuration (the
    /// builder gives what it set in code). Must be called before the server
    /// is cloned.
    pub(crate) fn with_code(mut self, code: InCode) -> Result<Self, super::build_error::BuildError> {
        self.inner_mut("with_code")?.reloads.code = code;
        Ok(self)
    }

    /// The configuration's generation (1 at start, +1 per reload) and how
    /// the last reload went, as the status page shows it.
    pub(crate) fn generation_json(&self) -> Value {
        let last = self.inner.reloads.last();
        let at = last.at.map(|t| time::OffsetDateTime::from(t).unix_timestamp());
        json!({
            "generation": self.inner.reloads.generation.load(Ordering::Relaxed),
            "last_reload_unix": at,
            "last_reload_error": last.error,
        })
    }
}

/// The top-level settings that differ between `old` and `new`, other than
/// those a reload applies (and `gateway.pins`, which it applies too).
fn need_restart(old: &Config, new: &Config) -> Vec<String> {
    let tree = |c: &Config| {
        let mut v = serde_json::to_value(c).unwrap_or_default();
        if let Some(pins) = v.pointer_mut("/gateway/pins") {
            *pins = Value::Null;
        }
        v
    };
    let (old, new) = (tree(old), tree(new));
    let (Some(old), Some(new)) = (old.as_object(), new.as_object()) else { return Vec::new() };
    new.iter()
        .filter(|(k, v)| !RELOADED.contains(&k.as_str()) && old.get(*k) != Some(*v))
        .map(|(k, _)| k.clone())
        .collect()
}

/// Reloads `server` with what `load` reads each time the process gets
/// SIGHUP (the binary reads its `--config` file, environment and flags
/// again); a configuration that does not load is logged at ERROR and the
/// running one kept. Returns at once where SIGHUP cannot be listened for.
pub async fn reload_on_hangup(server: McpServer, load: impl Fn() -> Result<Config, String>) {
    #[cfg(unix)]
    {
        use tokio::signal::unix::{signal, SignalKind};
        let mut hangups = match signal(SignalKind::hangup()) {
            Ok(s) => s,
            Err(e) => return error!(server.logger(), "SIGHUP cannot be listened for: no reloads"; "error" => %e),
        };
        while hangups.recv().await.is_some() {
            let log = server.logger().clone();
            let loaded = load().inspect_err(|e| server.inner.reloads.tried(Some(e.clone())));
            match loaded.and_then(|config| server.reload(config)) {
                Ok(r) => info!(log, "SIGHUP: reloaded"; "generation" => r.generation),
                Err(e) => error!(log, "SIGHUP: reload refused; the running configuration is kept"; "error" => e),
            }
        }
    }
    #[cfg(not(unix))]
    let _ = (server, load);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn what_a_reload_does_not_apply_is_named() {
        let old = Config::default();
        let mut new = Config { quotas_fail: crate::config::QuotasFail::Closed, ..Config::default() };
        new.gateway.pins = "p.json".into();
        new.policy.file = "x.cedar".into();
        assert!(need_restart(&old, &new).is_empty());
        new.http.bind = "127.0.0.1:9".into();
        new.log.level = "debug".into();
        new.quotas_max_keys = 5;
        assert_eq!(need_restart(&old, &new), ["http", "log", "quotas_max_keys"]);
    }

    #[test]
    fn what_was_set_in_code_is_read_into_a_reloaded_configuration() {
        let up = UpstreamConfig::parse_flag("time=http://127.0.0.1:9/mcp").unwrap();
        let code = InCode {
            upstreams: vec![up.clone()],
            named: Some(("weather".into(), "2.0.0".into())),
            instructions: Some("Ask about the weather.".into()),
        };
        let c = code.apply(Config::default()).unwrap();
        assert_eq!((c.server.name.as_str(), c.server.version.as_str()), ("weather", "2.0.0"));
        assert_eq!(c.server.instructions, "Ask about the weather.");
        assert_eq!(c.upstreams, std::slice::from_ref(&up));
        // What the configuration sets wins.
        let mut named = Config::default();
        named.server.name = "gw".into();
        named.server.instructions = "Other.".into();
        let c = code.apply(named).unwrap();
        assert_eq!((c.server.name.as_str(), c.server.instructions.as_str()), ("gw", "Other."));
        // An upstream given in code is not redefined by the configuration.
        let mut clash = Config::default();
        clash.upstreams.push(up);
        assert!(code.apply(clash).unwrap_err().0.contains("\"time\" is given in code"));
    }
}
