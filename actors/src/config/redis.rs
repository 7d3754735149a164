//! `[redis]`: where Redis is — one URL, or Redis Sentinel naming the master
//! — for everything that uses it (the hub, the task store, the legacy
//! sessions, the quotas), and
//! how many replicas a write waits for.

use serde::{Deserialize, Serialize};

use super::error::ConfigError;

/// `[redis]`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct RedisConfig {
    /// `redis://HOST:PORT/`. Default: `""`, `hub.redis_url` (setting both
    /// is an error).
    pub url: String,
    /// Redis Sentinel: the sentinels (`HOST:PORT`) to ask for the master
    /// named `master`; on a failover every instance follows the promoted
    /// replica. Default: `[]` (not with `url`).
    pub sentinels: Vec<String>,
    /// The master's name at the sentinels (needed with `sentinels`).
    pub master: String,
    /// Task and session writes wait until this many replicas hold them (`WAIT`), at most
    /// `wait_timeout_ms`; a write fewer acknowledged still succeeds and is
    /// counted (`mcp_server_redis_wait_short_total`). Default: 0, no wait.
    pub min_replicas: u32,
    /// How long a write waits for its replicas, in ms. Default: 1000.
    pub wait_timeout_ms: u64,
    /// Letters from other instances (answers to the server's questions,
    /// cancellations, session changes) waiting to be handled; past this the
    /// newest are dropped and counted (`mcp_server_bus_dropped_total`).
    /// Default: 1024.
    pub bus_buffer: usize,
    /// How long sending a letter to another instance, or a session's read
    /// or write, may take, in ms. Default: 1000.
    pub bus_timeout_ms: u64,
}

impl Default for RedisConfig {
    fn default() -> Self {
        RedisConfig {
            url: String::new(),
            sentinels: Vec::new(),
            master: String::new(),
            min_replicas: 0,
            wait_timeout_ms: 1000,
            bus_buffer: 1024,
            bus_timeout_ms: 1000,
        }
    }
}

/// Where Redis is.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum RedisTarget {
    /// One server, at this URL.
    Url(String),
    /// The master `master` that these sentinels (`HOST:PORT`) name.
    Sentinel {
        /// The sentinels.
        sentinels: Vec<String>,
        /// The master's name.
        master: String,
    },
}

impl From<&str> for RedisTarget {
    fn from(url: &str) -> Self {
        RedisTarget::Url(url.to_owned())
    }
}

impl std::fmt::Display for RedisTarget {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            RedisTarget::Url(url) => write!(f, "{url}"),
            RedisTarget::Sentinel { sentinels, master } => write!(f, "master {master:?} of {}", sentinels.join(", ")),
        }
    }
}

impl super::Config {
    /// Where Redis is: `[redis]` (a URL or sentinels), else `hub.redis_url`.
    pub fn redis_target(&self) -> RedisTarget {
        let r = &self.redis;
        if !r.sentinels.is_empty() {
            return RedisTarget::Sentinel { sentinels: r.sentinels.clone(), master: r.master.clone() };
        }
        RedisTarget::Url(if r.url.is_empty() { self.hub.redis_url.clone() } else { r.url.clone() })
    }
}

/// Checks `[redis]` against `hub.redis_url` (`default_url`: its default).
pub(super) fn validate(r: &RedisConfig, hub_url: &str, default_url: &str) -> Result<(), ConfigError> {
    if !r.url.is_empty() && hub_url != default_url {
        return Err(ConfigError(format!(
            "hub.redis_url ({hub_url:?}) and redis.url ({:?}) are both set: keep redis.url",
            r.url
        )));
    }
    if !r.sentinels.is_empty() {
        if !r.url.is_empty() {
            return Err(ConfigError("redis.url and redis.sentinels are both set: keep one".into()));
        }
        if r.master.is_empty() {
            return Err(ConfigError("redis.sentinels needs redis.master, the master's name at the sentinels".into()));
        }
        for s in &r.sentinels {
            let port = s.rsplit_once(':').and_then(|(host, port)| (!host.is_empty()).then_some(port));
            if port.and_then(|p| p.parse::<u16>().ok()).is_none() {
                return Err(ConfigError(format!("redis.sentinels: {s:?} is not HOST:PORT")));
            }
        }
    } else if !r.master.is_empty() {
        return Err(ConfigError("redis.master is set without redis.sentinels".into()));
    }
    for (key, value) in [("wait_timeout_ms", r.wait_timeout_ms), ("bus_timeout_ms", r.bus_timeout_ms)] {
        if value == 0 {
            return Err(ConfigError(format!("redis.{key} must be at least 1")));
        }
    }
    if r.bus_buffer == 0 {
        return Err(ConfigError("redis.bus_buffer must be at least 1".into()));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_place_for_redis() {
        let default = "redis://127.0.0.1:6379/";
        let ok = |r: &RedisConfig, hub: &str| validate(r, hub, default);
        assert!(ok(&RedisConfig::default(), "redis://other:1/").is_ok(), "hub.redis_url alone keeps working");
        let url = RedisConfig { url: "redis://r:1/".into(), ..Default::default() };
        assert!(ok(&url, default).is_ok());
        let e = ok(&url, "redis://other:1/").unwrap_err().0;
        assert!(e.contains("hub.redis_url") && e.contains("redis.url"), "{e}");
        let sentinel = RedisConfig {
            sentinels: vec!["s1:26379".into(), "[::1]:26380".into()],
            master: "m".into(),
            ..Default::default()
        };
        assert!(ok(&sentinel, default).is_ok());
        for (bad, says) in [
            (RedisConfig { master: String::new(), ..sentinel.clone() }, "needs redis.master"),
            (RedisConfig { url: "redis://r:1/".into(), ..sentinel.clone() }, "both set"),
            (RedisConfig { sentinels: vec!["s1".into()], ..sentinel.clone() }, "HOST:PORT"),
            (RedisConfig { master: "m".into(), ..Default::default() }, "without redis.sentinels"),
        ] {
            let e = ok(&bad, default).unwrap_err().0;
            assert!(e.contains(says), "{e}");
        }
    }
}
