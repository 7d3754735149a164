//! `[events.webhooks]`: how webhook subscriptions (`events/subscribe`) are
//! granted and delivered — lifetimes, caps, retries, suspension, and the
//! callback origins an operator lets past the address guard.

use serde::{Deserialize, Serialize};

use super::ConfigError;

/// `[events.webhooks]`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct WebhooksConfig {
    /// The lifetime granted when a subscribe suggests none (`ttlMs`
    /// absent), in ms. Default: 1800000 (30 min).
    pub default_ttl_ms: u64,
    /// The shortest lifetime granted: a shorter suggestion is raised to
    /// it. Default: 60000.
    pub min_ttl_ms: u64,
    /// The longest lifetime granted: a longer suggestion, or `ttlMs: null`
    /// (no expiry, which this server does not grant), gets this.
    /// Default: 86400000 (a day).
    pub max_ttl_ms: u64,
    /// At most this many webhook subscriptions on this server; one more is
    /// `-32013` (`{"limit":"webhook_subscriptions"}`). Default: 10000.
    pub max_subscriptions: usize,
    /// At most this many per principal; one more is `-32013`
    /// (`{"limit":"webhook_subscriptions_per_caller"}`). Default: 100.
    pub max_subscriptions_per_caller: usize,
    /// A delivery (or verification) not answered within this many ms is
    /// a failure (`timeout`). Default: 5000.
    pub timeout_ms: u64,
    /// Attempts per occurrence, the first included; then it is abandoned.
    /// Default: 4.
    pub max_attempts: u32,
    /// The wait before the first retry, in ms; each next one waits four
    /// times longer (1 s, 4 s, 16 s by default). Default: 1000.
    pub retry_base_ms: u64,
    /// An occurrence not delivered within this many ms of its first
    /// attempt is abandoned, whatever attempts remain. Default: 900000
    /// (15 min).
    pub retry_window_ms: u64,
    /// At most this many occurrences wait for a retry per subscription;
    /// past it the oldest is abandoned (and the watermark moves past it).
    /// Default: 1000.
    pub max_pending: usize,
    /// The largest body posted, in bytes; a larger occurrence is abandoned
    /// and counted. Default: 262144 (the design's 256 KiB).
    pub max_body_bytes: usize,
    /// At most this many bytes of a verification answer are read. A
    /// delivery's answer is never read. Default: 4096.
    pub max_answer_bytes: usize,
    /// Delivery is suspended (`deliveryStatus.active: false`) once at
    /// least this many attempts in `suspend_window_ms` failed at a rate of
    /// `suspend_failure_percent` or more; the next refresh resumes it.
    /// Default: 100.
    pub suspend_min_attempts: u32,
    /// See `suspend_min_attempts`. Default: 95.
    pub suspend_failure_percent: u8,
    /// See `suspend_min_attempts`. Default: 3600000 (an hour).
    pub suspend_window_ms: u64,
    /// After a refresh replaces the secret, deliveries are signed with the
    /// old one too for this many ms. Default: 600000 (10 min).
    pub secret_grace_ms: u64,
    /// At most this many bytes of bodies are held, server-wide, for a later
    /// attempt (retries, and what a suspended subscription read); an
    /// occurrence with no room is abandoned. Default: 67108864 (64 MiB).
    pub max_held_bytes: usize,
    /// At most this many callbacks are being challenged at once; one more
    /// subscribe is `-32013` (`{"limit":"webhook_challenges"}`). Default: 64.
    pub max_challenges: usize,
    /// The longest callback URL, in bytes; a longer one is `-32602`.
    /// Default: 2048.
    pub max_url_bytes: usize,
    /// A callback that answered the verification challenge is not
    /// challenged again for the same principal within this many ms.
    /// Default: 86400000 (a day).
    pub verified_ttl_ms: u64,
    /// Callback origins (`https://host[:port]`, the port left out when
    /// 443) allowed past the address guard, which otherwise refuses
    /// loopback, private, link-local, shared and metadata addresses,
    /// resolved at each delivery. An allowed origin is still challenged
    /// before its first delivery. Default: none.
    pub allow_origins: Vec<String>,
    /// A PEM file of certificate authorities trusted for the allowed
    /// origins (a private receiver's own CA), besides the public roots;
    /// never for any other callback. "" = the public roots only.
    pub allowed_ca_file: String,
}

impl Default for WebhooksConfig {
    fn default() -> Self {
        WebhooksConfig {
            default_ttl_ms: 1_800_000,
            min_ttl_ms: 60_000,
            max_ttl_ms: 86_400_000,
            max_subscriptions: 10_000,
            max_subscriptions_per_caller: 100,
            timeout_ms: 5_000,
            max_attempts: 4,
            retry_base_ms: 1_000,
            retry_window_ms: 900_000,
            max_pending: 1_000,
            max_body_bytes: 256 * 1024,
            max_answer_bytes: 4096,
            suspend_min_attempts: 100,
            suspend_failure_percent: 95,
            suspend_window_ms: 3_600_000,
            secret_grace_ms: 600_000,
            verified_ttl_ms: 86_400_000,
            max_held_bytes: 64 * 1024 * 1024,
            max_challenges: 64,
            max_url_bytes: 2048,
            allow_origins: Vec::new(),
            allowed_ca_file: String::new(),
        }
    }
}

impl WebhooksConfig {
    /// Lifetimes in order, something to attempt, origins that are origins.
    pub(super) fn validate(&self) -> Result<(), ConfigError> {
        let fail = |why: String| Err(ConfigError(format!("events.webhooks.{why}")));
        if !(self.min_ttl_ms <= self.default_ttl_ms && self.default_ttl_ms <= self.max_ttl_ms) || self.min_ttl_ms == 0 {
            return fail("min_ttl_ms <= default_ttl_ms <= max_ttl_ms must hold, and min_ttl_ms be at least 1".into());
        }
        if [
            self.max_attempts as usize,
            self.timeout_ms as usize,
            self.max_pending,
            self.max_challenges,
            self.max_url_bytes,
        ]
        .contains(&0)
        {
            return fail(
                "max_attempts, timeout_ms, max_pending, max_challenges and max_url_bytes must be at least 1".into(),
            );
        }
        if !(1..=100).contains(&self.suspend_failure_percent) {
            return fail(format!("suspend_failure_percent must be 1..=100, not {}", self.suspend_failure_percent));
        }
        for allowed in &self.allow_origins {
            if origin_of(allowed).as_deref() != Some(allowed.trim_end_matches('/')) {
                return fail(format!(
                    "allow_origins: {allowed:?} is not an https origin (https://host[:port], no path)"
                ));
            }
        }
        if !self.allowed_ca_file.is_empty() && std::fs::metadata(&self.allowed_ca_file).is_err() {
            return fail(format!("allowed_ca_file: cannot read {:?}", self.allowed_ca_file));
        }
        Ok(())
    }
}

/// The origin of an `https` URL as `https://host[:port]` (the port left out
/// when it is 443); `None` for anything else.
pub(crate) fn origin_of(url: &str) -> Option<String> {
    let url = url::Url::parse(url).ok()?;
    if url.scheme() != "https" {
        return None;
    }
    let host = match url.host()? {
        url::Host::Ipv6(ip) => format!("[{ip}]"),
        host => host.to_string(),
    };
    Some(match url.port() {
        Some(port) => format!("https://{host}:{port}"),
        None => format!("https://{host}"),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lifetimes_out_of_order_and_origins_with_paths_are_refused() {
        assert!(WebhooksConfig::default().validate().is_ok());
        let inverted = WebhooksConfig { min_ttl_ms: 10, default_ttl_ms: 5, ..Default::default() };
        assert!(inverted.validate().unwrap_err().0.contains("min_ttl_ms"));
        assert!(WebhooksConfig { max_attempts: 0, ..Default::default() }.validate().is_err());
        assert!(WebhooksConfig { suspend_failure_percent: 0, ..Default::default() }.validate().is_err());
        assert!(WebhooksConfig { max_url_bytes: 0, ..Default::default() }.validate().is_err());
        for bad in ["http://localhost:9", "https://h.example/hooks", "localhost:9"] {
            let c = WebhooksConfig { allow_origins: vec![bad.into()], ..Default::default() };
            assert!(c.validate().unwrap_err().0.contains("allow_origins"), "{bad}");
        }
        let good = WebhooksConfig { allow_origins: vec!["https://localhost:8443".into()], ..Default::default() };
        assert!(good.validate().is_ok());
        let missing = WebhooksConfig { allowed_ca_file: "/nonexistent/ca.pem".into(), ..Default::default() };
        assert!(missing.validate().unwrap_err().0.contains("allowed_ca_file"));
    }

    #[test]
    fn an_origin_is_scheme_host_and_a_port_that_is_not_443() {
        assert_eq!(origin_of("https://H.example:443/x?y").as_deref(), Some("https://h.example"));
        assert_eq!(origin_of("https://127.0.0.1:8443/hooks").as_deref(), Some("https://127.0.0.1:8443"));
        assert_eq!(origin_of("https://[::1]:9/").as_deref(), Some("https://[::1]:9"));
        assert_eq!(origin_of("http://h.example/"), None);
    }
}
