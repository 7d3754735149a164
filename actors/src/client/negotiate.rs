//! Choosing the era: the protocol crate's [`Negotiation`] decides
//! (`server/discover` first, else the `initialize` handshake, or only what
//! the caller pinned); this drives it over the connection and, in a legacy
//! session, finishes the handshake. A `server/discover` result without
//! what the specification requires of one is refused, naming the member.

use std::sync::Arc;

use mcp_protocol::client::{Failure, Negotiation, Session, Spoken, Step};
use mcp_protocol::legacy::method as legacy;
use mcp_protocol::model::JsonObject;
use mcp_protocol::request::method::DISCOVER;
use serde_json::Value;

use super::connection::Inner;
use super::error::{decode_raw, ClientError};
use super::options::{RequestOptions, VersionChoice};
use super::transport::Conduit;

/// Learns the server's era and facts; the connection speaks it afterwards.
pub(crate) async fn negotiate(inner: &Arc<Inner>) -> Result<(), ClientError> {
    let pinned = match inner.options.version {
        VersionChoice::Pin(v) => Some(v),
        VersionChoice::Auto => None,
    };
    let (mut negotiation, mut step) = Negotiation::new(&inner.session, pinned);
    // The last error without a JSON-RPC answer, which stands if the
    // negotiation gives up on it.
    let mut unanswered = None;
    loop {
        match step {
            Step::Ask { era, method, params } => {
                let answer = match inner.round(era, method, &mut params.into(), &RequestOptions::default()).await {
                    Ok(result) => {
                        let result: Value = decode_raw(method, &result)?;
                        if method == DISCOVER {
                            discovered(&result)?;
                        }
                        Ok(result)
                    }
                    Err(ClientError::Protocol(e)) => Err(Some(e)),
                    // Credentials and time are not the era's to decide.
                    Err(e @ (ClientError::Auth { .. } | ClientError::Timeout(_))) => return Err(e),
                    Err(e) => {
                        unanswered = Some(e);
                        Err(None)
                    }
                };
                step = negotiation.answered(answer);
            }
            Step::Done { era, server } => {
                *inner.server.lock().expect("server lock") = *server;
                *inner.era.lock().expect("era lock") = Some(era);
                return match era {
                    Spoken::Legacy(v) => initialized(inner, v.as_str()).await,
                    Spoken::Stateless(_) => Ok(()),
                };
            }
            Step::Failed(Some(Failure::Refused(e))) => return Err(e.into()),
            Step::Failed(Some(Failure::Unspoken(why))) => return Err(ClientError::transport(why)),
            Step::Failed(None) => {
                return Err(unanswered.unwrap_or_else(|| ClientError::transport("the server did not answer")))
            }
        }
    }
}

/// A member a discover result requires: its name, what it must be (for
/// the error), and the test of that.
type Member = (&'static str, &'static str, fn(&Value) -> bool);

/// Refuses a `server/discover` result that lacks a member the
/// specification's `DiscoverResult` requires (`resultType`,
/// `supportedVersions`, `capabilities`, `ttlMs`, `cacheScope`) or has one
/// of the wrong type, naming it.
pub(crate) fn discovered(result: &Value) -> Result<(), ClientError> {
    let required: [Member; 5] = [
        ("resultType", "a string", Value::is_string),
        ("supportedVersions", "a non-empty array of strings", strings),
        ("capabilities", "an object", Value::is_object),
        ("ttlMs", "a non-negative integer", Value::is_u64),
        ("cacheScope", "\"public\" or \"private\"", |v| matches!(v.as_str(), Some("public" | "private"))),
    ];
    let what = DISCOVER;
    let Some(members) = result.as_object() else {
        return Err(ClientError::transport(format!("the answer to {what} is not an object")));
    };
    for (name, kind, fits) in required {
        match members.get(name) {
            None => {
                return Err(ClientError::transport(format!(
                    "the answer to {what} has no `{name}`, which the specification requires \
                     of a discover result"
                )))
            }
            Some(v) if !fits(v) => {
                return Err(ClientError::transport(format!("the answer to {what} has a `{name}` that is not {kind}")))
            }
            Some(_) => {}
        }
    }
    Ok(())
}

/// Whether `v` is a non-empty array of strings (a server that supports no
/// version has nothing to be spoken to in).
fn strings(v: &Value) -> bool {
    v.as_array().is_some_and(|a| !a.is_empty() && a.iter().all(Value::is_string))
}

/// The rest of a legacy handshake: the session's version on every request,
/// `notifications/initialized`, the session's GET stream, and the log level
/// (asked only of a server that declares logging; others may refuse it).
async fn initialized(inner: &Arc<Inner>, version: &str) -> Result<(), ClientError> {
    if let Conduit::Http(h) = &inner.transport {
        h.set_version(version);
    }
    inner.send_message(Session::initialized()).await;
    if let Conduit::Http(h) = &inner.transport {
        h.open_get_stream().await?;
    }
    let logs = inner.server.lock().expect("server lock").logs();
    if let Some(level) = inner.options.log_level.filter(|_| logs) {
        let params = JsonObject::from_iter([("level".to_owned(), serde_json::to_value(level).unwrap_or_default())]);
        let era = inner.era();
        inner.round(era, legacy::LOGGING_SET_LEVEL, &mut params.into(), &RequestOptions::default()).await?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_discover_result_names_what_it_lacks() {
        let whole = json!({"resultType": "complete", "supportedVersions": ["2026-07-28"], "capabilities": {},
                           "ttlMs": 0, "cacheScope": "public"});
        assert!(discovered(&whole).is_ok());
        let err = discovered(&json!({"x": "ok"})).unwrap_err().to_string();
        assert!(err.contains("no `resultType`") && err.contains("server/discover"), "{err}");
        let wrong = [
            ("supportedVersions", json!("2026-07-28")),
            ("supportedVersions", json!([])),
            ("capabilities", json!(["tools"])),
            ("ttlMs", json!(-1)),
            ("cacheScope", json!("all")),
        ];
        for (name, bad) in wrong {
            let mut r = whole.clone();
            r[name] = bad;
            let err = discovered(&r).unwrap_err().to_string();
            assert!(err.contains(&format!("`{name}`")), "{err}");
            r.as_object_mut().unwrap().remove(name);
            assert!(discovered(&r).unwrap_err().to_string().contains(&format!("no `{name}`")));
        }
        assert!(discovered(&json!([1])).is_err());
    }
}
