//! [`RedisSessions`]: legacy sessions in Redis, so that every instance
//! serves every session. A session is one hash at `{prefix}:session:{id}`
//! expiring after `legacy.idle_timeout_ms` without use: `init` (what
//! `initialize` settled and who opened it, as JSON), `rev` (the revision),
//! `level` (set by `logging/setLevel`) and one `sub:{uri}` per subscribed
//! resource, so that changes made at once on two instances both stand (a
//! Lua script applies one, raises `rev` and reads the whole back, only
//! while the session exists). Another script marks each use and reads the
//! whole back only when `rev` is not the copy's. Writes wait for
//! `redis.min_replicas`. What instances tell each other about a session
//! travels on the [`Bus`] as small JSON letters.

use std::sync::Arc;
use std::time::Duration;

use actix::Recipient;
use futures::future::{BoxFuture, FutureExt};
use mcp_protocol::jsonrpc::Response;
use mcp_protocol::legacy::SessionState;
use mcp_protocol::model::logging::LoggingLevel;
use mcp_protocol::{ProtocolVersion, RequestId};
use serde_json::{json, Value};
use slog::{warn, Logger};
use tokio::sync::mpsc;

use super::dispatch::StateChange;
use super::registry::Deliver;
use super::store::{Checked, Remote, Revised, SessionStore, StoreError, Stored};
use crate::config::Config;
use crate::hub::bus::{Bus, BusError};
use crate::hub::redis_link::{replicated, RedisLink};

/// Applies one change (ARGV: the field, its value or "" to delete it, the
/// idle time in ms) to a session that exists, raises its revision, and
/// reads it back.
const CHANGE: &str = include_str!("change.lua");

/// Marks a use of a session (ARGV: the idle time in ms, the copy's
/// revision): nil when it is gone, nothing when it is at the copy's
/// revision, else the whole session.
const CHECK: &str = r"
if redis.call('PEXPIRE', KEYS[1], ARGV[1]) == 0 then return false end
if tonumber(redis.call('HGET', KEYS[1], 'rev') or '0') == tonumber(ARGV[2]) then return {} end
return redis.call('HGETALL', KEYS[1])";

/// Legacy sessions in Redis.
pub(crate) struct RedisSessions {
    link: RedisLink,
    /// Writes: `link` itself, or a connection of their own when they wait
    /// for replicas (a `WAIT` holds its connection; the check before each
    /// message must not queue behind it).
    writes: RedisLink,
    bus: Bus,
    prefix: String,
    idle_ms: u64,
    wait: Option<(u32, u64)>,
}

impl RedisSessions {
    /// The store `[redis]` and `[legacy]` of `config` describe.
    pub(crate) fn from_config(config: &Config) -> Result<Self, String> {
        let target = config.redis_target();
        let timeout = Duration::from_millis(config.redis.bus_timeout_ms);
        let link = RedisLink::open(&target, timeout).map_err(|e| format!("Redis {target}: {e}"))?;
        let prefix = config.hub.redis_channel_prefix.clone();
        let r = &config.redis;
        let wait = (r.min_replicas > 0).then_some((r.min_replicas, r.wait_timeout_ms));
        Ok(RedisSessions {
            bus: Bus::new(link.clone(), &prefix),
            writes: if wait.is_some() { link.another() } else { link.clone() },
            link,
            prefix,
            idle_ms: config.legacy.idle_timeout_ms.max(1),
            wait,
        })
    }

    fn key(&self, id: &str) -> String {
        format!("{}:session:{id}", self.prefix)
    }

    /// Listens on the bus, handing what other instances say to `deliver`
    /// one at a time (the letters waiting meanwhile are at most `buffer`).
    pub(crate) fn start(&self, buffer: usize, deliver: Recipient<Deliver>, log: &Logger) {
        let (tx, mut rx) = mpsc::channel::<Vec<u8>>(buffer);
        self.bus.start(tx, log);
        let log = log.clone();
        actix_rt::spawn(async move {
            while let Some(letter) = rx.recv().await {
                match decode(&letter) {
                    Ok(remote) => {
                        let _ = deliver.send(Deliver(remote)).await;
                    }
                    Err(e) => warn!(log, "ignoring a session letter"; "error" => e),
                }
            }
        });
    }

    /// Runs `work` on `link`: `self.link` for reads, `self.writes` for
    /// writes that may wait for replicas.
    fn on<T: Send + 'static>(
        link: &RedisLink,
        work: impl FnOnce(redis::aio::ConnectionManager) -> BoxFuture<'static, redis::RedisResult<T>>
            + Clone
            + Send
            + 'static,
    ) -> BoxFuture<'static, Result<T, StoreError>> {
        let done = link.with_connection(work);
        async move { done.await.map_err(|e| StoreError::Unavailable(format!("Redis: {e}"))) }.boxed()
    }

    fn tell(&self, letter: Value) -> BoxFuture<'static, Result<(), StoreError>> {
        let bus = self.bus.clone();
        async move { bus.broadcast(letter.to_string().as_bytes()).await.map_err(bus_error) }.boxed()
    }
}

fn bus_error(e: BusError) -> StoreError {
    match e {
        BusError::Gone(to) => StoreError::Gone(to),
        BusError::Unavailable(why) => StoreError::Unavailable(format!("Redis: {why}")),
    }
}

/// A stored session that does not parse.
fn unreadable(e: String) -> StoreError {
    StoreError::Unavailable(format!("a stored session is unreadable: {e}"))
}

/// The hash's fields for `stored`.
fn fields(stored: &Stored) -> Vec<(String, String)> {
    let s = &stored.state;
    let init = json!({
        "v": s.version.as_str(),
        "capabilities": &*s.client_capabilities,
        "clientInfo": s.client_info,
        "owner": stored.owner.as_deref(),
    });
    let mut out = vec![("init".to_owned(), init.to_string()), ("rev".to_owned(), stored.revision.to_string())];
    if let Some(level) = s.log_level {
        out.push(("level".to_owned(), level_word(level)));
    }
    out.extend(s.subscriptions.iter().map(|uri| (format!("sub:{uri}"), "1".to_owned())));
    out
}

fn level_word(level: LoggingLevel) -> String {
    serde_json::to_value(level).ok().and_then(|v| v.as_str().map(str::to_owned)).unwrap_or_default()
}

/// The session the hash's `fields` hold.
fn parse(fields: Vec<(String, String)>) -> Result<Stored, String> {
    let (mut init, mut level, mut subscriptions) = (None, None, std::collections::BTreeSet::new());
    let mut revision: u64 = 0;
    for (field, value) in fields {
        match field.as_str() {
            "init" => init = Some(serde_json::from_str::<Value>(&value).map_err(|e| format!("init: {e}"))?),
            "rev" => revision = value.parse::<u64>().map_err(|e| format!("rev: {e}"))?,
            "level" => level = Some(serde_json::from_value(Value::String(value)).map_err(|e| format!("level: {e}"))?),
            _ => {
                if let Some(uri) = field.strip_prefix("sub:") {
                    subscriptions.insert(uri.to_owned());
                }
            }
        }
    }
    let init = init.ok_or("no init field")?;
    let version = init["v"].as_str().and_then(ProtocolVersion::parse).ok_or("init.v is no version")?;
    let capabilities =
        serde_json::from_value(init["capabilities"].clone()).map_err(|e| format!("capabilities: {e}"))?;
    let state = SessionState {
        version,
        client_capabilities: Arc::new(capabilities),
        client_info: serde_json::from_value(init["clientInfo"].clone()).map_err(|e| format!("clientInfo: {e}"))?,
        log_level: level,
        subscriptions,
    };
    Ok(Stored { state, owner: init["owner"].as_str().map(Arc::from), revision })
}

/// The state and revision of a session read whole.
fn revised(stored: Stored) -> Revised {
    Revised { revision: stored.revision, state: stored.state }
}

/// A letter about `session` of `kind`, with `more` members.
fn letter(kind: &str, session: &str, more: Value) -> Value {
    let mut out = json!({"k": kind, "s": session});
    if let (Some(o), Value::Object(m)) = (out.as_object_mut(), more) {
        o.extend(m);
    }
    out
}

/// What a letter says.
fn decode(payload: &[u8]) -> Result<Remote, String> {
    let v: Value = serde_json::from_slice(payload).map_err(|e| e.to_string())?;
    let session = v["s"].as_str().ok_or("no session")?.to_owned();
    let id = || RequestId::from_value(&v["id"]).map_err(|e| e.to_string());
    Ok(match v["k"].as_str() {
        Some("answer") => {
            let outcome = match (v.get("result"), v.get("error")) {
                (Some(r), _) => Ok(r.clone()),
                (None, Some(e)) => Err(e.clone()),
                (None, None) => return Err("an answer without result or error".into()),
            };
            Remote::Answer { session, response: Response { id: id()?, outcome } }
        }
        Some("cancel") => Remote::Cancel { session, id: id()?, reason: v["reason"].as_str().map(str::to_owned) },
        Some("changed") => {
            let fields = serde_json::from_value(v["f"].clone()).map_err(|e| e.to_string())?;
            Remote::Changed { session, revised: revised(parse(fields)?) }
        }
        Some("ended") => Remote::Ended { session },
        other => return Err(format!("unknown kind {other:?}")),
    })
}

impl SessionStore for RedisSessions {
    fn instance(&self) -> &str {
        self.bus.me()
    }

    fn create(&self, id: &str, stored: &Stored) -> BoxFuture<'static, Result<(), StoreError>> {
        let (key, fields, idle, wait) = (self.key(id), fields(stored), self.idle_ms, self.wait);
        Self::on(&self.writes, move |mut con| {
            async move {
                redis::pipe()
                    .atomic()
                    .hset_multiple(&key, &fields)
                    .pexpire(&key, idle as i64)
                    .query_async::<()>(&mut con)
                    .await?;
                replicated(&mut con, wait).await;
                Ok(())
            }
            .boxed()
        })
    }

    fn load(&self, id: &str) -> BoxFuture<'static, Result<Option<Stored>, StoreError>> {
        let (key, idle) = (self.key(id), self.idle_ms);
        let read = Self::on(&self.link, move |mut con| {
            async move {
                let (fields, _): (Vec<(String, String)>, i64) =
                    redis::pipe().hgetall(&key).pexpire(&key, idle as i64).query_async(&mut con).await?;
                Ok(fields)
            }
            .boxed()
        });
        async move {
            let fields = read.await?;
            if fields.is_empty() {
                return Ok(None);
            }
            parse(fields).map(Some).map_err(unreadable)
        }
        .boxed()
    }

    fn change(&self, id: &str, change: &StateChange) -> BoxFuture<'static, Result<Option<Revised>, StoreError>> {
        let (field, value) = match change {
            StateChange::SetLevel(level) => ("level".to_owned(), level_word(*level)),
            StateChange::Subscribe(uri, on) => (format!("sub:{uri}"), if *on { "1".into() } else { String::new() }),
        };
        let (key, idle, wait) = (self.key(id), self.idle_ms, self.wait);
        let written = Self::on(&self.writes, move |mut con| {
            async move {
                let fields: Option<Vec<(String, String)>> = redis::cmd("EVAL")
                    .arg(CHANGE)
                    .arg(1)
                    .arg(&key)
                    .arg(field)
                    .arg(value)
                    .arg(idle)
                    .query_async(&mut con)
                    .await?;
                replicated(&mut con, wait).await;
                Ok(fields)
            }
            .boxed()
        });
        let (tell, session) = (self.bus.clone(), id.to_owned());
        async move {
            let Some(fields) = written.await? else { return Ok(None) };
            let note = letter("changed", &session, json!({ "f": fields }));
            let stored = parse(fields).map_err(unreadable)?;
            // The change stands even when the letter does not go: an
            // instance that misses it finds the new revision at the
            // session's next message there ([`SessionStore::check`]).
            let _ = tell.broadcast(note.to_string().as_bytes()).await;
            Ok(Some(revised(stored)))
        }
        .boxed()
    }

    fn check(&self, id: &str, known: u64) -> BoxFuture<'static, Result<Checked, StoreError>> {
        let (key, idle) = (self.key(id), self.idle_ms);
        let read = Self::on(&self.link, move |mut con| {
            async move {
                redis::cmd("EVAL")
                    .arg(CHECK)
                    .arg(1)
                    .arg(&key)
                    .arg(idle)
                    .arg(known)
                    .query_async::<Option<Vec<(String, String)>>>(&mut con)
                    .await
            }
            .boxed()
        });
        async move {
            Ok(match read.await? {
                None => Checked::Gone,
                Some(fields) if fields.is_empty() => Checked::Current,
                Some(fields) => Checked::Changed(revised(parse(fields).map_err(unreadable)?)),
            })
        }
        .boxed()
    }

    fn end(&self, id: &str) -> BoxFuture<'static, Result<bool, StoreError>> {
        let key = self.key(id);
        let deleted = Self::on(&self.link, move |mut con| {
            async move { redis::cmd("DEL").arg(&key).query_async::<i64>(&mut con).await.map(|n| n == 1) }.boxed()
        });
        let tell = self.tell(letter("ended", id, json!({})));
        async move {
            let was = deleted.await?;
            if was {
                tell.await?;
            }
            Ok(was)
        }
        .boxed()
    }

    fn answer(&self, session: &str, instance: &str, response: Response) -> BoxFuture<'static, Result<(), StoreError>> {
        let outcome = match response.outcome {
            Ok(result) => json!({ "result": result }),
            Err(error) => json!({ "error": error }),
        };
        let mut note = letter("answer", session, outcome);
        note["id"] = response.id.to_value();
        let (bus, to) = (self.bus.clone(), instance.to_owned());
        async move { bus.send(&to, note.to_string().into_bytes()).await.map_err(bus_error) }.boxed()
    }

    fn cancel(
        &self,
        session: &str,
        id: RequestId,
        reason: Option<String>,
    ) -> BoxFuture<'static, Result<(), StoreError>> {
        self.tell(letter("cancel", session, json!({ "id": id.to_value(), "reason": reason })))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn stored() -> Stored {
        let params = serde_json::from_value(json!({
            "protocolVersion": "2025-06-18", "capabilities": {"elicitation": {}},
            "clientInfo": {"name": "c", "version": "1"}
        }))
        .unwrap();
        let mut state = SessionState::new(ProtocolVersion::V2025_06_18, &params);
        state.log_level = Some(LoggingLevel::Warning);
        state.subscriptions.insert("demo://a".into());
        Stored { state, owner: Some("iss sub".into()), revision: 3 }
    }

    #[test]
    fn a_session_reads_back_as_written() {
        assert_eq!(parse(fields(&stored())).unwrap(), stored());
        assert!(parse(vec![("level".into(), "info".into())]).unwrap_err().contains("init"));
    }

    #[test]
    fn letters_read_back() {
        let answer = letter("answer", "s1", json!({"id": "srv-x-1", "result": {"action": "accept"}}));
        let Remote::Answer { session, response } = decode(answer.to_string().as_bytes()).unwrap() else { panic!() };
        assert_eq!((session.as_str(), response.outcome), ("s1", Ok(json!({"action": "accept"}))));
        let changed = letter("changed", "s1", json!({"f": fields(&stored())}));
        assert_eq!(
            decode(changed.to_string().as_bytes()).unwrap(),
            Remote::Changed { session: "s1".into(), revised: Revised { revision: 3, state: stored().state } }
        );
        let cancel = letter("cancel", "s1", json!({"id": 4, "reason": "bored"}));
        assert!(matches!(decode(cancel.to_string().as_bytes()).unwrap(),
            Remote::Cancel { id, reason: Some(r), .. } if id == RequestId::number(4) && r == "bored"));
        assert!(decode(br#"{"k": "what", "s": "s1"}"#).is_err());
    }
}
