//! The params of `events/poll` and `events/stream`: one subscription (a
//! type's name and arguments) and where to start reading it.

use serde::{Deserialize, Deserializer};
use serde_json::{Map, Value};

use super::EventError;

/// One subscription: an event type, the arguments that narrow it, and
/// where to start.
#[derive(Debug, Clone, PartialEq)]
pub struct Subscription {
    /// The event type's name (not empty).
    pub name: String,
    /// The arguments (checked against the type's `inputSchema`); `{}` when
    /// absent or null.
    pub arguments: Map<String, Value>,
    /// Where to start: `None` (null or absent) is from now.
    pub cursor: Option<String>,
    /// Skip what is older than this many milliseconds (ignored from now).
    pub max_age_ms: Option<u64>,
}

/// `events/poll` params.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(try_from = "Wire")]
pub struct PollParams {
    /// What is polled, and from where.
    pub subscription: Subscription,
    /// At most this many occurrences in the answer (at least 1; a server
    /// caps it at its own batch size).
    pub max_events: Option<u64>,
    /// A long poll: the client waits up to this many milliseconds for an
    /// occurrence; a server may answer sooner (with nothing), and absent,
    /// answers at once.
    pub timeout_ms: Option<u64>,
}

/// `events/stream` params (a poll's `maxEvents` and `timeoutMs`, if sent,
/// mean nothing to a stream and are ignored, whatever they hold).
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(try_from = "StreamWire")]
pub struct StreamParams {
    /// What is streamed, and from where.
    pub subscription: Subscription,
}

/// The members both methods' params are read from, with their JSON names
/// (so that a misfit is reported at its path).
#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Wire {
    name: String,
    #[serde(default, deserialize_with = "null_as_empty")]
    arguments: Map<String, Value>,
    #[serde(default)]
    cursor: Option<String>,
    #[serde(default)]
    max_age_ms: Option<u64>,
    #[serde(default)]
    max_events: Option<u64>,
    #[serde(default)]
    timeout_ms: Option<u64>,
}

impl TryFrom<Wire> for PollParams {
    type Error = String;

    fn try_from(wire: Wire) -> Result<Self, String> {
        if wire.max_events == Some(0) {
            return Err("maxEvents must be at least 1".into());
        }
        let (max_events, timeout_ms) = (wire.max_events, wire.timeout_ms);
        Ok(PollParams { subscription: Subscription::try_from(wire)?, max_events, timeout_ms })
    }
}

/// A stream's members: a poll's without `maxEvents` and `timeoutMs`.
#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct StreamWire {
    name: String,
    #[serde(default, deserialize_with = "null_as_empty")]
    arguments: Map<String, Value>,
    #[serde(default)]
    cursor: Option<String>,
    #[serde(default)]
    max_age_ms: Option<u64>,
}

impl TryFrom<StreamWire> for StreamParams {
    type Error = String;

    fn try_from(w: StreamWire) -> Result<Self, String> {
        let wire = Wire {
            name: w.name,
            arguments: w.arguments,
            cursor: w.cursor,
            max_age_ms: w.max_age_ms,
            max_events: None,
            timeout_ms: None,
        };
        Ok(StreamParams { subscription: Subscription::try_from(wire)? })
    }
}

impl TryFrom<Wire> for Subscription {
    type Error = String;

    fn try_from(wire: Wire) -> Result<Self, String> {
        if wire.name.is_empty() {
            return Err("name must name an event type".into());
        }
        Ok(Subscription {
            name: wire.name,
            arguments: wire.arguments,
            cursor: wire.cursor,
            max_age_ms: wire.max_age_ms,
        })
    }
}

impl PollParams {
    /// Reads `events/poll` params; a field that does not fit is `-32602`
    /// naming it.
    pub fn from_params(params: Option<&Value>) -> Result<Self, EventError> {
        read(params)
    }
}

impl StreamParams {
    /// Reads `events/stream` params; a field that does not fit is `-32602`
    /// naming it.
    pub fn from_params(params: Option<&Value>) -> Result<Self, EventError> {
        read(params)
    }
}

pub(super) fn read<T: for<'de> Deserialize<'de>>(params: Option<&Value>) -> Result<T, EventError> {
    let Some(params @ Value::Object(_)) = params else {
        return Err(EventError::InvalidParams("params must be an object naming the event type (name)".into()));
    };
    serde_path_to_error::deserialize(params).map_err(|e| {
        let path = e.path().to_string();
        let why = e.inner().to_string();
        EventError::InvalidParams(match path.as_str() {
            "" | "." => why,
            _ => format!("{path}: {why}"),
        })
    })
}

pub(super) fn null_as_empty<'de, D: Deserializer<'de>>(deserializer: D) -> Result<Map<String, Value>, D::Error> {
    Ok(Option::<Map<String, Value>>::deserialize(deserializer)?.unwrap_or_default())
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn a_poll_reads_every_field_and_absent_is_null() {
        let p = PollParams::from_params(Some(&json!({"name": "e", "arguments": {"a": 1}, "cursor": "c",
            "maxAgeMs": 300000, "maxEvents": 5, "timeoutMs": 1000})))
        .unwrap();
        assert_eq!(p.subscription.name, "e");
        assert_eq!(p.subscription.arguments["a"], 1);
        assert_eq!(p.subscription.cursor.as_deref(), Some("c"));
        assert_eq!((p.subscription.max_age_ms, p.max_events, p.timeout_ms), (Some(300_000), Some(5), Some(1000)));
        for bare in [json!({"name": "e"}), json!({"name": "e", "cursor": null, "arguments": null})] {
            let p = PollParams::from_params(Some(&bare)).unwrap();
            assert_eq!((p.subscription.cursor, p.subscription.arguments.len()), (None, 0));
        }
    }

    #[test]
    fn each_misfit_is_invalid_params_naming_the_field() {
        let cases = [
            (json!({"arguments": {}, "cursor": null}), "name"),
            (json!({"name": ""}), "name"),
            (json!({"name": 3}), "name"),
            (json!({"name": "e", "arguments": []}), "arguments"),
            (json!({"name": "e", "cursor": 42}), "cursor"),
            (json!({"name": "e", "maxAgeMs": -1}), "maxAgeMs"),
            (json!({"name": "e", "maxEvents": 0}), "maxEvents"),
            (json!({"name": "e", "maxEvents": 1.5}), "maxEvents"),
            (json!({"name": "e", "timeoutMs": "soon"}), "timeoutMs"),
            (json!([]), "params"),
        ];
        for (params, names) in cases {
            let error = PollParams::from_params(Some(&params)).unwrap_err();
            assert_eq!(error.code().0, -32602, "{params}");
            assert!(error.to_string().contains(names), "{error} should name {names}");
        }
        assert!(StreamParams::from_params(None).is_err());
        assert!(StreamParams::from_params(Some(&json!({"name": "e", "cursor": null}))).is_ok());
        // A poll's members mean nothing to a stream, whatever they hold.
        let odd = json!({"name": "e", "timeoutMs": -1, "maxEvents": "many"});
        assert_eq!(StreamParams::from_params(Some(&odd)).unwrap().subscription.name, "e");
        let misfit = StreamParams::from_params(Some(&json!({"name": "e", "maxAgeMs": -1}))).unwrap_err();
        assert!(misfit.to_string().contains("maxAgeMs"), "{misfit}");
    }
}
