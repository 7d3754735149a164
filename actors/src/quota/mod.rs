//! Quotas (`[[quotas]]`): at most `limit` `tools/call`s per `per_secs`
//! seconds for each caller, caller and tool, tool or upstream. A call is
//! counted against every quota whose `tools` globs match it, or against
//! none when one of them is at its limit; such a call is refused (-32000,
//! `data.reason = "quota"`, HTTP 429 with `Retry-After`) before its
//! handler runs. A counter's window starts with the first call it counts.
//!
//! The counters live in this process ([`memory`]) or, when the hub is on
//! Redis, in Redis ([`redis`], one script per call: exact across
//! instances). While they cannot count a call, `quotas_fail` decides.

mod memory;
#[cfg(feature = "redis")]
mod redis;

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use futures::future::BoxFuture;
use globset::GlobSet;
use mcp_protocol::{ErrorCode, ErrorData};
use metrics::{counter, Counter};
use serde_json::json;
use slog::{info, warn, Logger};

use crate::config::{glob_set, Config, QuotaBy, QuotaConfig, QuotasFail};

/// The `decision` label values of [`DECISIONS`].
const DECISION_LABELS: [&str; 4] = ["allow", "quota", "fail_open", "fail_closed"];
/// Calls counted by each quota, by `quota` and `decision`.
pub(crate) const DECISIONS: &str = "mcp_server_quota_decisions_total";

impl std::fmt::Debug for Quotas {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let names: Vec<&str> = self.rules.iter().map(|r| r.name.as_str()).collect();
        f.debug_struct("Quotas").field("quotas", &names).field("fail", &self.fail).finish_non_exhaustive()
    }
}

/// One counter a call is counted against: its key (`quota\nwhat`), the
/// quota's limit and window.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Slot {
    pub(crate) key: String,
    pub(crate) limit: u64,
    pub(crate) window: Duration,
}

/// What the counters said of a call.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Count {
    /// Counted in every slot.
    Allowed,
    /// Slot `index` is at its limit for `retry_after` more; nothing counted.
    Over { index: usize, retry_after: Duration },
}

/// Where the counters live.
pub(crate) trait Counters: Send + Sync {
    /// Counts one call in every slot, unless one is at its limit.
    fn count(&self, slots: Vec<Slot>) -> BoxFuture<'static, Result<Count, String>>;
}

/// One `[[quotas]]` table, ready to match calls.
struct Rule {
    name: String,
    limit: u64,
    window: Duration,
    by: QuotaBy,
    /// `None`: every tool.
    tools: Option<GlobSet>,
    /// By [`DECISION_LABELS`] index.
    decisions: Vec<Counter>,
}

/// The quotas of `[[quotas]]` and their counters.
pub(crate) struct Quotas {
    rules: Vec<Rule>,
    /// Kept across reloads: a quota's count goes on under its name.
    counters: Arc<dyn Counters>,
    fail: QuotasFail,
    /// The counters failed last time (logged once per outage).
    down: AtomicBool,
    log: Logger,
}

/// A call over a quota (or refused while the counters are unreachable
/// with `quotas_fail = "closed"`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Exceeded {
    /// The quota's name.
    pub(crate) quota: String,
    /// Whole seconds until the call may be made again (at least 1).
    pub(crate) retry_after_secs: u32,
    /// Refused because the counters could not be reached.
    pub(crate) unavailable: bool,
}

impl Exceeded {
    /// The JSON-RPC error: -32000 with `data.reason = "quota"`,
    /// `data.quota` and `data.retryAfterSecs`.
    pub(crate) fn error_data(&self) -> ErrorData {
        let message = if self.unavailable {
            format!("Quota {:?} cannot be counted now; retry after {} s", self.quota, self.retry_after_secs)
        } else {
            format!("Quota {:?} exceeded; retry after {} s", self.quota, self.retry_after_secs)
        };
        let data = json!({ "reason": "quota", "quota": self.quota, "retryAfterSecs": self.retry_after_secs });
        ErrorData::new(ErrorCode::SERVER_BUSY, message).with_data(data)
    }
}

impl Quotas {
    /// The quotas `config` sets (`None`: none), counted in Redis when the
    /// hub is (`hub.backend = "redis"`), else in memory — in the counters of
    /// `previous` when a reload replaces it, so that counts go on.
    pub(crate) fn from_config(
        config: &Config,
        previous: Option<&Quotas>,
        log: &Logger,
    ) -> Result<Option<Quotas>, String> {
        if config.quotas.is_empty() {
            return Ok(None);
        }
        let rules = config.quotas.iter().map(Rule::new).collect::<Result<_, _>>()?;
        let counters = match previous {
            Some(p) => p.counters.clone(),
            None => counters(config)?,
        };
        Ok(Some(Quotas {
            rules,
            counters,
            fail: config.quotas_fail,
            down: AtomicBool::new(false),
            log: log.new(slog::o!("component" => "quotas")),
        }))
    }

    /// The counters a `tools/call` of `tool` (as served; forwarded to
    /// `upstream`, `""` for a local tool) by `caller` is counted against;
    /// `None` when no quota applies to it.
    pub(crate) fn charge(self: &Arc<Self>, caller: &str, tool: &str, upstream: &str) -> Option<Charge> {
        let mut applies = Vec::new();
        for (i, rule) in self.rules.iter().enumerate() {
            if !rule.tools.as_ref().is_none_or(|g| g.is_match(tool)) {
                continue;
            }
            let what = match rule.by {
                QuotaBy::Upstream if upstream.is_empty() => continue,
                QuotaBy::Upstream => upstream.to_owned(),
                QuotaBy::Tool => tool.to_owned(),
                QuotaBy::CallerTool => format!("{caller}\n{tool}"),
                _ => caller.to_owned(),
            };
            let slot = Slot { key: format!("{}\n{what}", rule.name), limit: rule.limit, window: rule.window };
            applies.push((i, slot));
        }
        (!applies.is_empty()).then(|| Charge { quotas: self.clone(), applies })
    }

    /// Counts the call of `charge`: `Err` when it is refused.
    async fn settle(self: Arc<Self>, applies: Vec<(usize, Slot)>) -> Result<(), Exceeded> {
        let (rules, slots): (Vec<usize>, Vec<Slot>) = applies.into_iter().unzip();
        let counted = self.counters.count(slots).await;
        let decide = |label: usize| rules.iter().for_each(|&r| self.rules[r].decisions[label].increment(1));
        match counted {
            Ok(count) => {
                if self.down.swap(false, Ordering::Relaxed) {
                    info!(self.log, "the quota counters count again");
                }
                match count {
                    Count::Allowed => {
                        decide(0);
                        Ok(())
                    }
                    Count::Over { index, retry_after } => {
                        let rule = &self.rules[rules[index]];
                        rule.decisions[1].increment(1);
                        let secs = retry_after.as_millis().div_ceil(1000).clamp(1, u32::MAX as u128) as u32;
                        Err(Exceeded { quota: rule.name.clone(), retry_after_secs: secs, unavailable: false })
                    }
                }
            }
            Err(e) => {
                if !self.down.swap(true, Ordering::Relaxed) {
                    warn!(self.log, "the quota counters cannot count calls"; "error" => e,
                        "quotas_fail" => self.fail.as_str());
                }
                if self.fail == QuotasFail::Closed {
                    decide(3);
                    let quota = self.rules[rules[0]].name.clone();
                    return Err(Exceeded { quota, retry_after_secs: 1, unavailable: true });
                }
                decide(2);
                Ok(())
            }
        }
    }
}

/// The counters of one call, to be counted before its handler runs.
pub(crate) struct Charge {
    quotas: Arc<Quotas>,
    /// The quotas that apply (by index) and their slots.
    applies: Vec<(usize, Slot)>,
}

impl Charge {
    /// Counts the call: `Err` when it is refused.
    pub(crate) fn settle(self) -> BoxFuture<'static, Result<(), Exceeded>> {
        Box::pin(self.quotas.settle(self.applies))
    }
}

impl Rule {
    fn new(q: &QuotaConfig) -> Result<Rule, String> {
        let tools = (!q.tools.is_empty()).then(|| glob_set(&q.tools)).transpose();
        let tools = tools.map_err(|e| format!("quotas: {:?}: {e}", q.name))?;
        // The series exist from the start, at 0 (and keep their counts
        // across reloads).
        let decisions = DECISION_LABELS
            .iter()
            .map(|d| {
                let c = counter!(DECISIONS, "quota" => q.name.clone(), "decision" => *d);
                c.increment(0);
                c
            })
            .collect();
        let window = Duration::from_secs(q.per_secs);
        Ok(Rule { name: q.name.clone(), limit: q.limit, window, by: q.by, tools, decisions })
    }
}

/// The counters `config` asks for.
fn counters(config: &Config) -> Result<Arc<dyn Counters>, String> {
    #[cfg(feature = "redis")]
    if config.hub.backend == crate::config::HubBackend::Redis {
        let timeout = Duration::from_millis(config.quotas_timeout_ms);
        let counters = redis::RedisCounters::new(&config.redis_target(), &config.hub.redis_channel_prefix, timeout)?;
        return Ok(Arc::new(counters));
    }
    Ok(Arc::new(memory::MemoryCounters::new(config.quotas_max_keys)))
}

#[cfg(test)]
mod tests;
