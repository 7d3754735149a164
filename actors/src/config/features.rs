//! What a configuration needs of the build: a setting whose cargo feature
//! this build lacks is refused at start with a sentence naming the feature,
//! never ignored.

use super::{AuthMode, Config, ConfigError, HubBackend};

/// The error for `what`, which needs the cargo feature `feature`.
pub fn needs_feature(what: &str, feature: &str) -> ConfigError {
    ConfigError(format!(
        "{what} needs the `{feature}` feature of actix-mcp, which this build lacks \
         (build with --features {feature}, or with --features full for every one)"
    ))
}

/// The settings of `config` and the feature each needs, those this build
/// lacks first.
fn needed(config: &Config) -> Vec<(&'static str, &'static str, bool)> {
    vec![
        ("hub.backend = \"redis\"", "redis", config.hub.backend == HubBackend::Redis),
        ("tasks in Redis (tasks.store)", "redis", config.tasks.enabled && config.tasks.in_redis(config.hub.backend)),
        ("legacy sessions in Redis (legacy.store)", "redis", config.legacy.in_redis(config.hub.backend)),
        ("event histories in Redis (events.history)", "redis", config.events.history_in_redis(config.hub.backend)),
        ("auth.mode = \"oauth\"", "oauth", config.auth.mode == AuthMode::Oauth),
        ("[[upstreams]]", "gateway", !config.upstreams.is_empty()),
        ("http.tls", "tls", config.http.tls.enabled()),
        ("http.h2c", "h2c", config.http.h2c),
        ("metrics.enabled = true", "metrics", config.metrics.enabled),
        ("policy.file", "policy", config.policy.enabled()),
    ]
}

/// Each cargo feature of actix-mcp and whether this build has it.
pub const FEATURES: [(&str, bool); 12] = [
    ("fs", cfg!(feature = "fs")),
    ("redis", cfg!(feature = "redis")),
    ("oauth", cfg!(feature = "oauth")),
    ("client", cfg!(feature = "client")),
    ("gateway", cfg!(feature = "gateway")),
    ("tls", cfg!(feature = "tls")),
    ("metrics", cfg!(feature = "metrics")),
    ("otel", cfg!(feature = "otel")),
    ("h2c", cfg!(feature = "h2c")),
    ("config-file", cfg!(feature = "config-file")),
    ("cli", cfg!(feature = "cli")),
    ("policy", cfg!(feature = "policy")),
];

/// Whether this build has the cargo feature `name`.
pub fn built_with(name: &str) -> bool {
    FEATURES.iter().any(|(feature, on)| *feature == name && *on)
}

/// Refuses a setting whose feature this build lacks.
pub(super) fn validate(config: &Config) -> Result<(), ConfigError> {
    match needed(config).into_iter().find(|(_, feature, set)| *set && !built_with(feature)) {
        Some((what, feature, _)) => Err(needs_feature(what, feature)),
        None => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_setting_needing_a_missing_feature_names_it() {
        let mut config = Config::default();
        config.hub.backend = HubBackend::Redis;
        config.metrics.enabled = cfg!(feature = "metrics");
        let result = validate(&config);
        if cfg!(feature = "redis") {
            assert!(result.is_ok(), "{result:?}");
        } else {
            let e = result.unwrap_err().0;
            assert!(e.contains("`redis` feature") && e.contains("hub.backend"), "{e}");
        }
    }

    #[test]
    fn the_default_configuration_needs_no_feature() {
        assert!(validate(&Config::default()).is_ok());
    }
}
