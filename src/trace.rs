//! W3C Trace Context (`traceparent`, `tracestate`) and W3C Baggage, as
//! carried in HTTP headers or, in 2026-07-28, in a request's `_meta` under
//! the reserved keys `traceparent`, `tracestate` and `baggage`. A malformed
//! value is ignored (never an error), as the Trace Context spec asks.

use serde_json::{Map, Value};

/// The longest `tracestate` kept (the spec's limit is 512 characters).
const MAX_TRACESTATE: usize = 512;
/// The longest `baggage` kept (the spec's limit is 8192 bytes).
const MAX_BAGGAGE: usize = 8192;

/// A request's trace context.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct TraceContext {
    /// The validated `traceparent` (`00-<trace id>-<parent id>-<flags>`).
    pub traceparent: String,
    /// `tracestate`, when sent and well-formed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tracestate: Option<String>,
    /// `baggage`, when sent and well-formed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub baggage: Option<String>,
}

impl TraceContext {
    /// A context from the three values, or `None` when `traceparent` is
    /// absent or malformed (the other two are then meaningless); a
    /// malformed `tracestate` or `baggage` is dropped on its own.
    pub fn from_parts(traceparent: Option<&str>, tracestate: Option<&str>, baggage: Option<&str>) -> Option<Self> {
        let traceparent = traceparent.map(str::trim).filter(|t| valid_traceparent(t))?;
        Some(TraceContext {
            traceparent: traceparent.to_owned(),
            tracestate: tracestate.map(str::trim).filter(|t| valid_tracestate(t)).map(str::to_owned),
            baggage: baggage.map(str::trim).filter(|b| valid_baggage(b)).map(str::to_owned),
        })
    }

    /// The context in a request's `_meta`, if any.
    pub fn from_meta(meta: &Map<String, Value>) -> Option<Self> {
        let text = |k: &str| meta.get(k).and_then(Value::as_str);
        Self::from_parts(text("traceparent"), text("tracestate"), text("baggage"))
    }

    /// The 32 hex digits of the trace id.
    pub fn trace_id(&self) -> &str {
        &self.traceparent[3..35]
    }

    /// The 16 hex digits of the parent (caller's span) id.
    pub fn parent_id(&self) -> &str {
        &self.traceparent[36..52]
    }

    /// Whether the caller sampled the trace (flag `01`).
    pub fn sampled(&self) -> bool {
        u8::from_str_radix(&self.traceparent[53..55], 16).is_ok_and(|f| f & 1 == 1)
    }

    /// The three keys for a notification's `_meta`.
    pub fn to_meta(&self) -> Map<String, Value> {
        let mut m = Map::new();
        m.insert("traceparent".into(), Value::String(self.traceparent.clone()));
        if let Some(s) = &self.tracestate {
            m.insert("tracestate".into(), Value::String(s.clone()));
        }
        if let Some(b) = &self.baggage {
            m.insert("baggage".into(), Value::String(b.clone()));
        }
        m
    }
}

fn lower_hex(s: &str) -> bool {
    s.bytes().all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
}

/// `version-traceid-parentid-flags`: version `00` is exactly 55
/// characters; a later version may append `-…` fields; version `ff`, an
/// all-zero trace id or parent id are invalid.
fn valid_traceparent(t: &str) -> bool {
    let b = t.as_bytes();
    if b.len() < 55 || b[2] != b'-' || b[35] != b'-' || b[52] != b'-' {
        return false;
    }
    let (version, trace_id, parent_id, flags) = (&t[0..2], &t[3..35], &t[36..52], &t[53..55]);
    if !(lower_hex(version) && lower_hex(trace_id) && lower_hex(parent_id) && lower_hex(flags)) || version == "ff" {
        return false;
    }
    if trace_id.bytes().all(|c| c == b'0') || parent_id.bytes().all(|c| c == b'0') {
        return false;
    }
    match version {
        "00" => b.len() == 55,
        _ => b.len() == 55 || b[55] == b'-',
    }
}

/// Comma-separated `key=value` members, at most 32, printable ASCII.
fn valid_tracestate(t: &str) -> bool {
    !t.is_empty()
        && t.len() <= MAX_TRACESTATE
        && t.split(',').count() <= 32
        && t.split(',').map(str::trim).filter(|m| !m.is_empty()).all(|m| {
            m.split_once('=').is_some_and(|(k, v)| !k.is_empty() && !v.is_empty())
                && m.bytes().all(|c| (0x20..0x7f).contains(&c))
        })
}

/// Comma-separated `key=value` members (properties after `;`), printable ASCII.
fn valid_baggage(b: &str) -> bool {
    !b.is_empty()
        && b.len() <= MAX_BAGGAGE
        && b.bytes().all(|c| (0x20..0x7f).contains(&c))
        && b.split(',')
            .all(|m| m.split(';').next().and_then(|kv| kv.split_once('=')).is_some_and(|(k, _)| !k.trim().is_empty()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    const TP: &str = "00-0af7651916cd43dd8448eb211c80319c-00f067aa0ba902b7-01";

    #[test]
    fn valid_and_malformed_traceparents() {
        let t = TraceContext::from_parts(Some(TP), Some("congo=t61rcWkgMzE"), Some("userId=alice")).unwrap();
        assert_eq!(
            (t.trace_id(), t.parent_id(), t.sampled()),
            ("0af7651916cd43dd8448eb211c80319c", "00f067aa0ba902b7", true)
        );
        assert_eq!(t.to_meta()["tracestate"], "congo=t61rcWkgMzE");
        for bad in [
            "",
            "00-0af7651916cd43dd8448eb211c80319c-00f067aa0ba902b7",
            "00-0AF7651916CD43DD8448EB211C80319C-00f067aa0ba902b7-01",
            "00-00000000000000000000000000000000-00f067aa0ba902b7-01",
            "00-0af7651916cd43dd8448eb211c80319c-0000000000000000-01",
            "ff-0af7651916cd43dd8448eb211c80319c-00f067aa0ba902b7-01",
            "00-0af7651916cd43dd8448eb211c80319c-00f067aa0ba902b7-01-extra",
            "0x-0af7651916cd43dd8448eb211c80319c-00f067aa0ba902b7-01",
        ] {
            assert_eq!(TraceContext::from_parts(Some(bad), None, None), None, "{bad:?}");
        }
        // A later version may carry more fields.
        assert!(TraceContext::from_parts(Some(&format!("01{}-more", &TP[2..])), None, None).is_some());
        // A malformed tracestate or baggage is dropped alone.
        let t = TraceContext::from_parts(Some(TP), Some("no-equals-sign"), Some("=x")).unwrap();
        assert_eq!((t.tracestate, t.baggage), (None, None));
    }

    #[test]
    fn from_meta() {
        let meta = json!({"traceparent": TP, "baggage": "k=v;p=1,k2=v2"});
        let t = TraceContext::from_meta(meta.as_object().unwrap()).unwrap();
        assert_eq!(t.baggage.as_deref(), Some("k=v;p=1,k2=v2"));
        assert_eq!(TraceContext::from_meta(json!({"traceparent": 7}).as_object().unwrap()), None);
    }
}
