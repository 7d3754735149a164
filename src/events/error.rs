//! The extension's refusals: the design's codes `-32011`…`-32015`, each with
//! its typed `data`, and `-32602` for params that do not fit.

use serde_json::{json, Value};

use super::Delivery;
use crate::error::{ErrorCode, ErrorData};

/// Which schema of an event type changed incompatibly.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SchemaPart {
    /// The subscription arguments' schema.
    Input,
    /// The occurrences' `data` schema.
    Payload,
}

/// Why a webhook's callback could not be used (`lastError` and `-32015`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CallbackFailure {
    /// Nothing listened at the callback's address.
    ConnectionRefused,
    /// The callback did not answer in time.
    Timeout,
    /// The TLS handshake failed (certificate, protocol).
    TlsError,
    /// The callback answered 4xx.
    Http4xx,
    /// The callback answered 5xx.
    Http5xx,
    /// The callback did not answer the verification challenge as asked.
    ChallengeFailed,
}

impl CallbackFailure {
    /// The category as the wire spells it.
    pub fn as_str(self) -> &'static str {
        match self {
            CallbackFailure::ConnectionRefused => "connection_refused",
            CallbackFailure::Timeout => "timeout",
            CallbackFailure::TlsError => "tls_error",
            CallbackFailure::Http4xx => "http_4xx",
            CallbackFailure::Http5xx => "http_5xx",
            CallbackFailure::ChallengeFailed => "challenge_failed",
        }
    }
}

/// A refusal of an `events/*` request (or the end of a subscription).
#[derive(Debug, Clone, PartialEq)]
pub enum EventError {
    /// `-32011`, `kind: "event"`: no event type of this name.
    UnknownEvent(String),
    /// `-32011`, `kind: "subscription"`: no webhook subscription of this id.
    UnknownSubscription(String),
    /// `-32012`: the caller may not subscribe to this type (the reason).
    Forbidden(String),
    /// `-32013`: a limit of the server is reached: which (`subscriptions`,
    /// `streams`) and, when it is a number, its value.
    ResourceExhausted {
        /// What ran out.
        limit: &'static str,
        /// The limit's value.
        max: Option<u64>,
    },
    /// `-32014`: the type exists but does not offer this delivery mode.
    UnsupportedDelivery {
        /// The event type.
        name: String,
        /// The mode asked for.
        mode: Delivery,
    },
    /// `-32014`: the type's schema changed incompatibly (ends subscriptions).
    SchemaChanged(SchemaPart),
    /// `-32015`: the webhook's callback failed verification or delivery.
    CallbackEndpoint {
        /// The category.
        reason: CallbackFailure,
        /// What happened, for a person.
        detail: String,
    },
    /// `-32602`: the params do not fit (the sentence names the field in
    /// JSON terms).
    InvalidParams(String),
}

impl EventError {
    /// The JSON-RPC code.
    pub fn code(&self) -> ErrorCode {
        match self {
            EventError::UnknownEvent(_) | EventError::UnknownSubscription(_) => ErrorCode::EVENT_NOT_FOUND,
            EventError::Forbidden(_) => ErrorCode::EVENT_FORBIDDEN,
            EventError::ResourceExhausted { .. } => ErrorCode::EVENT_RESOURCE_EXHAUSTED,
            EventError::UnsupportedDelivery { .. } | EventError::SchemaChanged(_) => ErrorCode::EVENT_UNSUPPORTED,
            EventError::CallbackEndpoint { .. } => ErrorCode::EVENT_CALLBACK_ENDPOINT,
            EventError::InvalidParams(_) => ErrorCode::INVALID_PARAMS,
        }
    }

    /// The `data` the design gives this code.
    pub fn data(&self) -> Option<Value> {
        Some(match self {
            EventError::UnknownEvent(_) => json!({"kind": "event"}),
            EventError::UnknownSubscription(_) => json!({"kind": "subscription"}),
            EventError::Forbidden(reason) => json!({"reason": reason}),
            EventError::ResourceExhausted { limit, max: Some(max) } => json!({"limit": limit, "max": max}),
            EventError::ResourceExhausted { limit, max: None } => json!({"limit": limit}),
            EventError::UnsupportedDelivery { mode, .. } => json!({"feature": "deliveryMode", "value": mode.as_str()}),
            EventError::SchemaChanged(part) => {
                let feature = match part {
                    SchemaPart::Input => "inputSchema",
                    SchemaPart::Payload => "payloadSchema",
                };
                json!({"feature": feature, "reason": "schema_changed"})
            }
            EventError::CallbackEndpoint { reason, .. } => json!({"reason": reason.as_str()}),
            EventError::InvalidParams(_) => return None,
        })
    }

    /// The error as the wire carries it: the code, a sentence, the data.
    pub fn to_error_data(&self) -> ErrorData {
        let error = ErrorData::new(self.code(), self.to_string());
        match self.data() {
            Some(data) => error.with_data(data),
            None => error,
        }
    }
}

impl std::fmt::Display for EventError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            EventError::UnknownEvent(name) => write!(f, "no event type named `{name}`"),
            EventError::UnknownSubscription(id) => write!(f, "no event subscription `{id}`"),
            EventError::Forbidden(reason) => write!(f, "forbidden: {reason}"),
            EventError::ResourceExhausted { limit, max: Some(max) } => write!(f, "too many {limit} (at most {max})"),
            EventError::ResourceExhausted { limit, max: None } => write!(f, "too many {limit}"),
            EventError::UnsupportedDelivery { name, mode } => {
                write!(f, "event type `{name}` does not offer {} delivery", mode.as_str())
            }
            EventError::SchemaChanged(SchemaPart::Input) => f.write_str("the event type's inputSchema changed"),
            EventError::SchemaChanged(SchemaPart::Payload) => f.write_str("the event type's payloadSchema changed"),
            EventError::CallbackEndpoint { reason, detail } => {
                write!(f, "the callback failed ({}): {detail}", reason.as_str())
            }
            EventError::InvalidParams(why) => f.write_str(why),
        }
    }
}

impl std::error::Error for EventError {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_refusal_has_the_designs_code_and_data() {
        let cases = [
            (EventError::UnknownEvent("x".into()), -32011, json!({"kind": "event"})),
            (EventError::UnknownSubscription("s".into()), -32011, json!({"kind": "subscription"})),
            (EventError::Forbidden("revoked".into()), -32012, json!({"reason": "revoked"})),
            (
                EventError::ResourceExhausted { limit: "subscriptions", max: Some(3) },
                -32013,
                json!({"limit": "subscriptions", "max": 3}),
            ),
            (
                EventError::UnsupportedDelivery { name: "x".into(), mode: Delivery::Poll },
                -32014,
                json!({"feature": "deliveryMode", "value": "poll"}),
            ),
            (
                EventError::SchemaChanged(SchemaPart::Payload),
                -32014,
                json!({"feature": "payloadSchema", "reason": "schema_changed"}),
            ),
            (
                EventError::CallbackEndpoint { reason: CallbackFailure::ChallengeFailed, detail: "wrong".into() },
                -32015,
                json!({"reason": "challenge_failed"}),
            ),
        ];
        for (error, code, data) in cases {
            let wire = error.to_error_data();
            assert_eq!(wire.code.0, code, "{error}");
            assert_eq!(wire.data, Some(data), "{error}");
            assert!(!wire.message.is_empty());
        }
        let invalid = EventError::InvalidParams("`name` is required".into()).to_error_data();
        assert_eq!((invalid.code.0, invalid.data), (-32602, None));
    }
}
