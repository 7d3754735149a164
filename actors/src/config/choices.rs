//! Settings that take one of a few words. Each is an enum, so that the
//! TOML parser, an `ACTIX_MCP_*` variable and a command-line flag all refuse
//! a word outside the list with the same sentence, naming the setting and
//! the valid words.

use serde::de::{Deserializer, Error, Visitor};
use serde::{Deserialize, Serialize};

use super::error::ConfigError;

/// Defines a setting enum: its variants with their words, `as_str`,
/// `Display`, `FromStr` and `Deserialize` (an error naming the setting and
/// the valid words) and `WORDS`.
macro_rules! choice {
    ($(#[$doc:meta])* $name:ident, $setting:literal, { $($(#[$vdoc:meta])* $variant:ident = $word:literal),+ $(,)? }) => {
        $(#[$doc])*
        #[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize)]
        #[non_exhaustive]
        pub enum $name {
            $($(#[$vdoc])* #[serde(rename = $word)] $variant,)+
        }

        impl $name {
            /// The words this setting accepts, in order.
            pub const WORDS: &'static [&'static str] = &[$($word),+];

            /// The word of this value, as written in the configuration.
            pub fn as_str(self) -> &'static str {
                match self {
                    $($name::$variant => $word,)+
                }
            }
        }

        impl std::fmt::Display for $name {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str(self.as_str())
            }
        }

        impl std::str::FromStr for $name {
            type Err = ConfigError;

            fn from_str(word: &str) -> Result<Self, ConfigError> {
                match word {
                    $($word => Ok($name::$variant),)+
                    other => Err(not_one_of($setting, other, Self::WORDS)),
                }
            }
        }

        impl<'de> Deserialize<'de> for $name {
            fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
                setting(d, $setting, Self::WORDS, |w| w.parse::<Self>().ok())
            }
        }
    };
}

/// Reads the word of `setting`: a string `parse` takes, else an error
/// naming the setting and its `words` (a value of another type too).
pub(super) fn setting<'de, D: Deserializer<'de>, T>(
    d: D,
    setting: &'static str,
    words: &'static [&'static str],
    parse: fn(&str) -> Option<T>,
) -> Result<T, D::Error> {
    d.deserialize_str(Word { setting, words, parse })
}

/// The visitor of [`setting`].
struct Word<T> {
    setting: &'static str,
    words: &'static [&'static str],
    parse: fn(&str) -> Option<T>,
}

impl<T> Visitor<'_> for Word<T> {
    type Value = T;

    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let list: Vec<String> = self.words.iter().map(|w| format!("{w:?}")).collect();
        write!(f, "{} as one of {}", self.setting, list.join(", "))
    }

    fn visit_str<E: Error>(self, word: &str) -> Result<T, E> {
        match (self.parse)(word) {
            Some(value) => Ok(value),
            None => Err(E::custom(not_one_of(self.setting, word, self.words).0)),
        }
    }
}

/// The error for `word`, which is not one of `words` for `setting`.
fn not_one_of(setting: &str, word: &str, words: &[&str]) -> ConfigError {
    let list: Vec<String> = words.iter().map(|w| format!("{w:?}")).collect();
    ConfigError(format!("{setting} must be one of {}, not {word:?}", list.join(", ")))
}

choice!(
    /// `auth.mode`: how HTTP requests are authorized.
    AuthMode, "auth.mode", {
        /// Every request is served (as on loopback). The default.
        #[default]
        None = "none",
        /// Bearer tokens from the trusted issuers (OAuth 2.1 resource server).
        Oauth = "oauth",
        /// Bearer keys listed in `auth.api_keys`.
        ApiKey = "api_key",
    }
);

choice!(
    /// `hub.backend`: where events travel between instances.
    HubBackend, "hub.backend", {
        /// This process only. The default.
        #[default]
        Memory = "memory",
        /// Redis pub/sub, for several instances.
        Redis = "redis",
    }
);

choice!(
    /// `log.format`: how log records are written on stderr.
    LogFormat, "log.format", {
        /// One human-readable line per record. The default.
        #[default]
        Term = "term",
        /// One JSON object per line.
        Json = "json",
    }
);

choice!(
    /// `tasks.store`: where tasks live.
    TasksStore, "tasks.store", {
        /// `redis` when `hub.backend = "redis"`, else `memory`. The default (`""`).
        #[default]
        Auto = "",
        /// This process.
        Memory = "memory",
        /// Redis: every instance answers for every task.
        Redis = "redis",
    }
);

choice!(
    /// `legacy.store`: where legacy sessions live.
    LegacyStore, "legacy.store", {
        /// `redis` when `hub.backend = "redis"`, else `memory`. The default (`""`).
        #[default]
        Auto = "",
        /// This process: a session is served by the instance that opened it.
        Memory = "memory",
        /// Redis: every instance serves every session.
        Redis = "redis",
    }
);

choice!(
    /// `audit.when_full`: what a call does when the audit log's queue is full
    /// (its writer is behind: a slow or full disk).
    AuditWhenFull, "audit.when_full", {
        /// Wait for room: no record is lost, calls slow down with the disk. The default.
        #[default]
        Block = "block",
        /// Drop the record and count it (`mcp_server_audit_dropped_total`):
        /// calls never wait, the log has gaps (its chain stays intact).
        Drop = "drop",
    }
);

choice!(
    /// `quotas_fail`: what a call that a quota applies to gets while the
    /// quota store (Redis, or the in-memory counters at `quotas_max_keys`)
    /// cannot count it.
    QuotasFail, "quotas_fail", {
        /// Let it through, uncounted (logged, counted as `fail_open`). The default.
        #[default]
        Open = "open",
        /// Refuse it as over its quota (counted as `fail_closed`).
        Closed = "closed",
    }
);

choice!(
    /// `[[quotas]] by`: what one counter of a quota counts.
    QuotaBy, "quotas.by", {
        /// Each caller's calls (`Caller::"<identity key>"`; `anonymous` with
        /// authorization off). The default.
        #[default]
        Caller = "caller",
        /// Each caller's calls of each tool.
        CallerTool = "caller+tool",
        /// Each tool's calls, by every caller together.
        Tool = "tool",
        /// The calls forwarded to each upstream (local tools are not counted).
        Upstream = "upstream",
    }
);

choice!(
    /// `policy.mode`: what a policy's denial does.
    PolicyMode, "policy.mode", {
        /// A denied call is refused (as for an unknown item) and a denied
        /// item left out of its list. The default.
        #[default]
        Enforce = "enforce",
        /// Nothing is refused; each call the policy would deny is logged at
        /// WARN and counted as `shadow_deny`. For trying a policy on live traffic.
        Shadow = "shadow",
    }
);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn words_round_trip_and_a_wrong_one_lists_the_valid_ones() {
        for word in AuthMode::WORDS {
            assert_eq!(word.parse::<AuthMode>().unwrap().as_str(), *word);
        }
        let e = "oath".parse::<AuthMode>().unwrap_err().0;
        assert_eq!(e, r#"auth.mode must be one of "none", "oauth", "api_key", not "oath""#);
        assert_eq!("".parse::<TasksStore>().unwrap(), TasksStore::Auto);
        assert_eq!(HubBackend::default(), HubBackend::Memory);
    }

    #[test]
    fn serde_uses_the_words() {
        #[derive(Deserialize)]
        struct Section {
            backend: HubBackend,
        }
        let s: Section = serde_json::from_str(r#"{"backend": "redis"}"#).unwrap();
        assert_eq!(s.backend, HubBackend::Redis);
        // A wrong word or type names the setting, as a variable's does.
        let e = serde_json::from_str::<Section>(r#"{"backend": "redsi"}"#).err().unwrap().to_string();
        assert!(e.starts_with(r#"hub.backend must be one of "memory", "redis", not "redsi""#), "{e}");
        let e = serde_json::from_str::<Section>(r#"{"backend": 1}"#).err().unwrap().to_string();
        assert!(e.contains(r#"expected hub.backend as one of "memory", "redis""#), "{e}");
        assert_eq!(serde_json::to_string(&LogFormat::Json).unwrap(), r#""json""#);
    }
}
