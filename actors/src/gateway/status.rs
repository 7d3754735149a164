//! Where an upstream stands, as the status page and readiness see it.

use std::time::{Duration, SystemTime};

/// Where an upstream stands.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum UpstreamState {
    /// Being started or connected to.
    Starting,
    /// Serving, in this protocol version.
    Up {
        /// The version spoken with it.
        version: String,
    },
    /// Lost or never reached; started again after a backoff.
    Down {
        /// Why, as a sentence.
        reason: String,
    },
}

/// What the gateway shows of one upstream (its `/status` row).
#[derive(Debug, Clone)]
pub struct UpstreamStatus {
    /// The configured name.
    pub name: String,
    /// Whether readiness waits for it.
    pub required: bool,
    /// Where it stands.
    pub state: UpstreamState,
    /// Since when it stands there.
    pub since: SystemTime,
    /// When it was last up (`None`: never, since this process started).
    pub last_up: Option<SystemTime>,
    /// How many times it was started again.
    pub restarts: u64,
    /// How many of its items are served.
    pub items: usize,
    /// How long its last connection took to start and list.
    pub connect_time: Option<Duration>,
    /// How many of its resources it is subscribed to (one per URI a
    /// listener of this instance wants).
    pub subscriptions: usize,
    /// Requests forwarded to it that finished (since start).
    pub calls: u64,
    /// Of those, how many failed (an error, a tool error, cancelled).
    pub errors: u64,
    /// Their time together (mean latency: `call_time / calls`).
    pub call_time: Duration,
    /// Its items not served, by `kind:name as served`, and why: a hidden
    /// character, or a definition changed since it was pinned (`gateway.pins`).
    pub refused: std::collections::BTreeMap<String, String>,
}

impl UpstreamStatus {
    /// The status of upstream `name` before its first start.
    pub(crate) fn new(name: &str, required: bool) -> Self {
        UpstreamStatus {
            name: name.to_owned(),
            required,
            state: UpstreamState::Starting,
            since: SystemTime::now(),
            last_up: None,
            restarts: 0,
            items: 0,
            connect_time: None,
            subscriptions: 0,
            calls: 0,
            errors: 0,
            call_time: Duration::ZERO,
            refused: Default::default(),
        }
    }

    /// Moves it to `state` (now).
    pub(crate) fn enter(&mut self, state: UpstreamState) {
        let now = SystemTime::now();
        if matches!(self.state, UpstreamState::Up { .. }) || matches!(state, UpstreamState::Up { .. }) {
            self.last_up = Some(now);
        }
        self.state = state;
        self.since = now;
    }

    /// Where it stands, in words for a caller of one of its items that is
    /// not served now: `upstream NAME is down since TIME: WHY; last up TIME`.
    pub(crate) fn unavailable(&self) -> String {
        let at = |t: SystemTime| {
            let ms = t.duration_since(SystemTime::UNIX_EPOCH).map_or(0, |d| d.as_millis() as u64);
            mcp_protocol::tasks::iso8601(ms)
        };
        let (name, since) = (&self.name, at(self.since));
        let now = match &self.state {
            UpstreamState::Starting => format!("upstream {name} is starting (since {since})"),
            UpstreamState::Down { reason } => format!("upstream {name} is down since {since}: {reason}"),
            UpstreamState::Up { .. } => format!("upstream {name} is up but not connected"),
        };
        match self.last_up {
            Some(t) => format!("{now}; last up {}", at(t)),
            None => format!("{now}; never up since this gateway started"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_unavailable_upstream_says_where_it_stands_and_when_it_was_up() {
        let mut s = UpstreamStatus::new("py", true);
        assert!(s.unavailable().starts_with("upstream py is starting (since "), "{}", s.unavailable());
        assert!(s.unavailable().ends_with("never up since this gateway started"));
        s.enter(UpstreamState::Up { version: "2026-07-28".into() });
        s.enter(UpstreamState::Down { reason: "its process exited".into() });
        let said = s.unavailable();
        assert!(
            said.starts_with("upstream py is down since 20") && said.contains(": its process exited; last up 20"),
            "{said}"
        );
    }
}
