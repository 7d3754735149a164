//! [`StateSealer`]: seals and opens the `requestState` of multi round-trip
//! requests with the server's keys. It owns them: the configured ones
//! (`mrtr.key`, or `mrtr.keys` to rotate: the first signs, each verifies;
//! shared by every instance behind a load balancer) or one generated for
//! this process, about which it warns once, at its first sealing.

use std::sync::Arc;

use mcp_protocol::request_state::{Binding, StateKey, StateKeys, StatePayload};
use mcp_protocol::ProtocolError;

use crate::config::{ConfigError, MrtrConfig};
use crate::facts::clock::{Clock, SystemClock};

/// Seals and opens `requestState` tokens.
pub(crate) struct StateSealer {
    keys: StateKeys,
    ttl_ms: u64,
    generated: bool,
    clock: Arc<dyn Clock>,
    /// Told once, at the first sealing, that the key is this process's own.
    log: slog::Logger,
    warned: std::sync::Once,
}

impl std::fmt::Debug for StateSealer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("StateSealer").field("ttl_ms", &self.ttl_ms).field("generated", &self.generated).finish()
    }
}

impl StateSealer {
    /// The sealer `config` describes; a malformed key is an error, a missing
    /// one is generated.
    pub(crate) fn from_config(config: &MrtrConfig) -> Result<Self, ConfigError> {
        let keys = config.decoded_keys()?;
        if keys.is_empty() {
            return Ok(Self::generate(config.state_ttl_ms));
        }
        let keys = keys.into_iter().map(StateKey::new).collect::<Result<Vec<_>, _>>();
        let keys = keys.and_then(StateKeys::new).map_err(|e| ConfigError(format!("mrtr: {e}")))?;
        Ok(StateSealer { generated: false, ..Self::with_keys(keys, config.state_ttl_ms) })
    }

    /// A sealer with a random key of this process.
    pub(crate) fn generate(ttl_ms: u64) -> Self {
        let mut k = uuid::Uuid::new_v4().as_bytes().to_vec();
        k.extend_from_slice(uuid::Uuid::new_v4().as_bytes());
        let key = StateKey::new(k).expect("32 random bytes are a valid key");
        StateSealer { generated: true, ..Self::with_keys(StateKeys::one(key), ttl_ms) }
    }

    fn with_keys(keys: StateKeys, ttl_ms: u64) -> Self {
        StateSealer {
            keys,
            ttl_ms,
            generated: false,
            clock: Arc::new(SystemClock),
            log: crate::telemetry::logging::discard(),
            warned: std::sync::Once::new(),
        }
    }

    /// This sealer warning `log`, at its first sealing, when its key was
    /// generated (multi round-trip requests then work against this process
    /// only). Servers that never ask for input never see the warning.
    pub(crate) fn with_logger(mut self, log: slog::Logger) -> Self {
        self.log = log;
        self
    }

    /// This sealer reading time from `clock` (expiry of the tokens it seals
    /// and opens).
    pub(crate) fn with_clock(mut self, clock: Arc<dyn Clock>) -> Self {
        self.clock = clock;
        self
    }

    /// Opens and verifies a token bound to `binding`.
    pub(crate) fn open(&self, token: &str, binding: &Binding) -> Result<StatePayload, ProtocolError> {
        self.keys.open(token, binding, self.clock.now_ms()).map_err(ProtocolError::from)
    }

    /// A fresh payload for `binding`, valid for the configured time.
    pub(crate) fn payload(&self, binding: &Binding) -> StatePayload {
        StatePayload::new(binding, self.ttl_ms, self.clock.now_ms(), uuid::Uuid::new_v4().simple().to_string())
    }

    /// Seals a payload into a token.
    pub(crate) fn seal(&self, payload: &StatePayload) -> String {
        if self.generated {
            self.warned.call_once(|| {
                slog::warn!(
                    self.log,
                    "no mrtr.key configured: requestState is signed with a per-process key, \
                    so multi round-trip requests only work against this single instance"
                );
            });
        }
        self.keys.seal(payload)
    }
}
