//! Webhook subscriptions (`events/subscribe`, `events/unsubscribe`), sans-IO:
//! their params, the subscription key and the id derived from it, the
//! client's `whsec_` secret, the Standard Webhooks signature every delivery
//! carries, and the control bodies (`gap`, `terminated`, `verification`).
//!
//! A delivery is an HTTP POST of a JSON body with the headers
//! `webhook-id`, `webhook-timestamp`, `webhook-signature` and
//! `X-MCP-Subscription-Id`; the signature is
//! `v1,` + Base64(HMAC-SHA256(key, id + "." + timestamp + "." + body)),
//! `key` being the bytes the secret's Base64 after `whsec_` decodes to.
//!
//! ```
//! use mcp_protocol::events::webhook::{sign, Secret};
//!
//! let secret = Secret::parse("whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw").unwrap();
//! let signature = sign(&[&secret], "msg_p5jXN8AQM9LWM0D4loKWxJek", 1614265330, br#"{"test": 2432232314}"#);
//! assert_eq!(signature, "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=");
//! ```

use base64::Engine;
use serde::{Deserialize, Deserializer};
use serde_json::{json, Map, Value};

use super::params::Subscription;
use super::EventError;

/// The header naming the subscription a delivery belongs to.
pub const SUBSCRIPTION_ID_HEADER: &str = "X-MCP-Subscription-Id";
/// The header carrying the delivery's id (an event's `eventId`).
pub const ID_HEADER: &str = "webhook-id";
/// The header carrying the attempt's time, in Unix seconds.
pub const TIMESTAMP_HEADER: &str = "webhook-timestamp";
/// The header carrying the signatures.
pub const SIGNATURE_HEADER: &str = "webhook-signature";

/// A client's webhook secret: `whsec_` and the Base64 of 24 to 64 bytes.
#[derive(Clone, PartialEq, Eq)]
pub struct Secret(Vec<u8>);

impl std::fmt::Debug for Secret {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Secret(..)")
    }
}

impl Secret {
    /// Reads `whsec_<base64>`; says what is wrong otherwise (the value
    /// itself is never repeated).
    pub fn parse(text: &str) -> Result<Self, String> {
        let Some(encoded) = text.strip_prefix("whsec_") else {
            return Err("delivery.secret must start with whsec_".into());
        };
        let key = base64::engine::general_purpose::STANDARD
            .decode(encoded)
            .map_err(|_| "delivery.secret: what follows whsec_ must be Base64".to_owned())?;
        if !(24..=64).contains(&key.len()) {
            return Err(format!("delivery.secret must encode 24 to 64 bytes, not {}", key.len()));
        }
        Ok(Secret(key))
    }

    /// The key bytes.
    pub fn key(&self) -> &[u8] {
        &self.0
    }
}

/// The `webhook-signature` value for one attempt: one `v1,` signature per
/// secret (a rotated secret is signed with beside the new one for a
/// while), separated by spaces.
pub fn sign(secrets: &[&Secret], id: &str, timestamp: u64, body: &[u8]) -> String {
    let timestamp = timestamp.to_string();
    let signatures = secrets.iter().map(|secret| {
        let mut mac = hmac_sha256::HMAC::new(secret.key());
        mac.update(id.as_bytes());
        mac.update(b".");
        mac.update(timestamp.as_bytes());
        mac.update(b".");
        mac.update(body);
        format!("v1,{}", base64::engine::general_purpose::STANDARD.encode(mac.finalize()))
    });
    signatures.collect::<Vec<_>>().join(" ")
}

/// How long the client would like the subscription kept.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Ttl {
    /// `ttlMs` absent: the server's default.
    Default,
    /// `ttlMs: null`: no expiry, if the server grants it.
    Forever,
    /// This many milliseconds (the server may grant less).
    Ms(u64),
}

/// `events/subscribe` params: a subscription delivered to a callback.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(try_from = "SubscribeWire")]
pub struct SubscribeParams {
    /// What is subscribed to, and from where (`cursor`, `maxAgeMs`).
    pub subscription: Subscription,
    /// The callback: an `https` URL.
    pub url: String,
    /// What deliveries are signed with.
    pub secret: Secret,
    /// The lifetime asked for.
    pub ttl: Ttl,
}

/// `events/unsubscribe` params: the key of the subscription to end.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(try_from = "UnsubscribeWire")]
pub struct UnsubscribeParams {
    /// The event type.
    pub name: String,
    /// The subscription's arguments.
    pub arguments: Map<String, Value>,
    /// The callback it delivers to.
    pub url: String,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct SubscribeWire {
    name: String,
    #[serde(default, deserialize_with = "super::params::null_as_empty")]
    arguments: Map<String, Value>,
    delivery: DeliveryWire,
    #[serde(default)]
    cursor: Option<String>,
    #[serde(default)]
    max_age_ms: Option<u64>,
    #[serde(default, deserialize_with = "present")]
    ttl_ms: Option<Option<u64>>,
}

#[derive(Deserialize)]
struct DeliveryWire {
    #[serde(default)]
    mode: Option<String>,
    url: String,
    #[serde(default)]
    secret: Option<String>,
}

#[derive(Deserialize)]
struct UnsubscribeWire {
    name: String,
    #[serde(default, deserialize_with = "super::params::null_as_empty")]
    arguments: Map<String, Value>,
    delivery: DeliveryWire,
}

/// `Some(None)` for an explicit null, `None` (by `default`) when absent; any
/// number is a suggestion, clamped (the design has no refusal of a TTL):
/// below 0 is 0, past 2^64-1 (or fractional) is rounded into range.
fn present<'de, D: Deserializer<'de>>(deserializer: D) -> Result<Option<Option<u64>>, D::Error> {
    match Option::<serde_json::Number>::deserialize(deserializer)? {
        None => Ok(Some(None)),
        Some(n) => Ok(Some(Some(match (n.as_u64(), n.as_f64()) {
            (Some(ms), _) => ms,
            // `as` saturates: negative is 0, too large is u64::MAX.
            (None, Some(ms)) => ms as u64,
            (None, None) => 0,
        }))),
    }
}

impl DeliveryWire {
    fn url(&self) -> Result<String, String> {
        if let Some(mode) = self.mode.as_deref().filter(|m| *m != "webhook") {
            return Err(format!("delivery.mode must be \"webhook\", not {mode:?}"));
        }
        let scheme = self.url.split_once("://").map(|(scheme, _)| scheme);
        if !scheme.is_some_and(|s| s.eq_ignore_ascii_case("https")) {
            return Err("delivery.url must be an https:// URL".into());
        }
        Ok(self.url.clone())
    }
}

impl TryFrom<SubscribeWire> for SubscribeParams {
    type Error = String;

    fn try_from(w: SubscribeWire) -> Result<Self, String> {
        if w.name.is_empty() {
            return Err("name must name an event type".into());
        }
        let url = w.delivery.url()?;
        let secret = w.delivery.secret.as_deref().ok_or("delivery.secret is required (whsec_…)")?;
        let ttl = match w.ttl_ms {
            None => Ttl::Default,
            Some(None) => Ttl::Forever,
            Some(Some(ms)) => Ttl::Ms(ms),
        };
        let subscription =
            Subscription { name: w.name, arguments: w.arguments, cursor: w.cursor, max_age_ms: w.max_age_ms };
        Ok(SubscribeParams { subscription, url, secret: Secret::parse(secret)?, ttl })
    }
}

impl TryFrom<UnsubscribeWire> for UnsubscribeParams {
    type Error = String;

    fn try_from(w: UnsubscribeWire) -> Result<Self, String> {
        let url = w.delivery.url()?;
        Ok(UnsubscribeParams { name: w.name, arguments: w.arguments, url })
    }
}

impl SubscribeParams {
    /// Reads `events/subscribe` params; what does not fit is `-32602`
    /// naming the member.
    pub fn from_params(params: Option<&Value>) -> Result<Self, EventError> {
        super::params::read(params)
    }
}

impl UnsubscribeParams {
    /// Reads `events/unsubscribe` params; what does not fit is `-32602`
    /// naming the member.
    pub fn from_params(params: Option<&Value>) -> Result<Self, EventError> {
        super::params::read(params)
    }
}

/// A subscription's id, derived from its key — the principal, the callback,
/// the event type and the arguments (compared as canonical JSON: members in
/// order of their names) — so that the same key always names the same
/// subscription, across refreshes, instances and restarts: `sub_` and 16
/// hex digits of a SHA-256 over the key.
pub fn subscription_id(principal: &str, url: &str, name: &str, arguments: &Map<String, Value>) -> String {
    // Each part is a JSON string or object: the key cannot be read two ways.
    let key = canonical(&json!([principal, url, name, arguments]));
    let digest = hmac_sha256::Hash::hash(key.as_bytes());
    let hex: String = digest[..8].iter().map(|b| format!("{b:02x}")).collect();
    format!("sub_{hex}")
}

/// `value` as JSON text with every object's members in order of their
/// names, whatever order they were read in.
fn canonical(value: &Value) -> String {
    match value {
        Value::Object(members) => {
            let mut sorted: Vec<(&String, &Value)> = members.iter().collect();
            sorted.sort_by(|a, b| a.0.cmp(b.0));
            let inner: Vec<String> =
                sorted.iter().map(|(k, v)| format!("{}:{}", Value::String((*k).clone()), canonical(v))).collect();
            format!("{{{}}}", inner.join(","))
        }
        Value::Array(items) => format!("[{}]", items.iter().map(canonical).collect::<Vec<_>>().join(",")),
        other => other.to_string(),
    }
}

/// The body of a `gap` control delivery: occurrences were skipped; the
/// client continues from `cursor`.
pub fn gap_body(cursor: &str) -> Value {
    json!({"type": "gap", "cursor": cursor})
}

/// The body of a `terminated` control delivery: the subscription ended.
pub fn terminated_body(why: &EventError) -> Value {
    let error = why.to_error_data();
    let mut body = json!({"type": "terminated", "error": {"code": error.code.0, "message": error.message}});
    if let Some(data) = error.data {
        body["error"]["data"] = data;
    }
    body
}

/// The body of a `verification` control delivery: the callback proves it
/// wants deliveries by answering `{"challenge": <the same>}`.
pub fn verification_body(challenge: &str) -> Value {
    json!({"type": "verification", "challenge": challenge})
}

/// Whether a callback's answer to a verification echoes `challenge`
/// (compared in constant time).
pub fn echoes_challenge(answer: &[u8], challenge: &str) -> bool {
    let Ok(Value::Object(answer)) = serde_json::from_slice::<Value>(answer) else {
        return false;
    };
    let Some(Value::String(echo)) = answer.get("challenge") else {
        return false;
    };
    let (a, b) = (echo.as_bytes(), challenge.as_bytes());
    a.len() == b.len() && a.iter().zip(b).fold(0u8, |diff, (x, y)| diff | (x ^ y)) == 0
}

#[cfg(test)]
mod tests {
    use super::*;

    fn secret32() -> String {
        format!("whsec_{}", base64::engine::general_purpose::STANDARD.encode([7u8; 32]))
    }

    #[test]
    fn a_subscribe_reads_its_members_and_tells_absent_ttl_from_null() {
        let p = SubscribeParams::from_params(Some(&json!({"name": "e", "arguments": {"a": 1},
            "delivery": {"mode": "webhook", "url": "https://h.example/x", "secret": secret32()},
            "cursor": "c", "ttlMs": 60000})))
        .unwrap();
        assert_eq!(
            (p.subscription.name.as_str(), p.url.as_str(), p.ttl),
            ("e", "https://h.example/x", Ttl::Ms(60_000))
        );
        assert_eq!(p.secret.key(), &[7u8; 32]);
        let bare = json!({"name": "e", "delivery": {"url": "HTTPS://h.example/", "secret": secret32()}});
        assert_eq!(SubscribeParams::from_params(Some(&bare)).unwrap().ttl, Ttl::Default);
        let forever = json!({"name": "e", "ttlMs": null, "delivery": {"url": "https://h/", "secret": secret32()}});
        assert_eq!(SubscribeParams::from_params(Some(&forever)).unwrap().ttl, Ttl::Forever);
        // Any number is a suggestion to clamp, never a refusal.
        for (ttl, read) in [(json!(-5), 0), (json!(1e20), u64::MAX), (json!(1.5), 1), (json!(0), 0)] {
            let p = json!({"name": "e", "ttlMs": ttl, "delivery": {"url": "https://h/", "secret": secret32()}});
            assert_eq!(SubscribeParams::from_params(Some(&p)).unwrap().ttl, Ttl::Ms(read), "{ttl}");
        }
    }

    #[test]
    fn each_misfit_is_invalid_params_naming_the_member() {
        let good = secret32();
        let short = format!("whsec_{}", base64::engine::general_purpose::STANDARD.encode([1u8; 23]));
        let long = format!("whsec_{}", base64::engine::general_purpose::STANDARD.encode([1u8; 65]));
        let cases = [
            (json!({"name": "e", "delivery": {"url": "http://h/", "secret": good}}), "delivery.url"),
            (json!({"name": "e", "delivery": {"url": "h.example", "secret": good}}), "delivery.url"),
            (json!({"name": "e", "delivery": {"url": "https://h/"}}), "delivery.secret"),
            (json!({"name": "e", "delivery": {"url": "https://h/", "secret": "sk_abc"}}), "whsec_"),
            (json!({"name": "e", "delivery": {"url": "https://h/", "secret": "whsec_!!"}}), "Base64"),
            (json!({"name": "e", "delivery": {"url": "https://h/", "secret": short}}), "24 to 64"),
            (json!({"name": "e", "delivery": {"url": "https://h/", "secret": long}}), "24 to 64"),
            (json!({"name": "e", "delivery": {"mode": "push", "url": "https://h/", "secret": good}}), "delivery.mode"),
            (json!({"name": "e", "ttlMs": "soon", "delivery": {"url": "https://h/", "secret": good}}), "ttlMs"),
            (json!({"name": "e"}), "delivery"),
            (json!({"delivery": {"url": "https://h/", "secret": good}}), "name"),
        ];
        for (params, names) in cases {
            let error = SubscribeParams::from_params(Some(&params)).unwrap_err();
            assert_eq!(error.code().0, -32602, "{params}");
            assert!(error.to_string().contains(names), "{error} should name {names}");
            assert!(!error.to_string().contains(&good[6..]), "the secret is never repeated: {error}");
        }
        let un =
            UnsubscribeParams::from_params(Some(&json!({"name": "e", "delivery": {"url": "https://h/"}}))).unwrap();
        assert_eq!((un.name.as_str(), un.url.as_str(), un.arguments.len()), ("e", "https://h/", 0));
        assert!(UnsubscribeParams::from_params(Some(&json!({"name": "e", "delivery": {"url": "ftp://h/"}}))).is_err());
    }

    #[test]
    fn the_id_is_the_keys_and_changes_with_each_part() {
        let args = json!({"b": 1, "a": 2}).as_object().unwrap().clone();
        let id = subscription_id("ann", "https://h/x", "e", &args);
        assert!(id.starts_with("sub_") && id.len() == 20, "{id}");
        let reordered: Map<String, Value> = serde_json::from_str(r#"{"a": 2, "b": 1}"#).unwrap();
        assert_eq!(subscription_id("ann", "https://h/x", "e", &reordered), id, "canonical arguments");
        let nested = |text: &str| serde_json::from_str::<Map<String, Value>>(text).unwrap();
        assert_eq!(
            subscription_id("ann", "u", "e", &nested(r#"{"f": {"y": [1, {"q": 1, "p": 2}], "x": null}}"#)),
            subscription_id("ann", "u", "e", &nested(r#"{"f": {"x": null, "y": [1, {"p": 2, "q": 1}]}}"#)),
            "nested members too"
        );
        let other_args = json!({"a": 3}).as_object().unwrap().clone();
        for other in [
            subscription_id("bob", "https://h/x", "e", &args),
            subscription_id("ann", "https://h/y", "e", &args),
            subscription_id("ann", "https://h/x", "f", &args),
            subscription_id("ann", "https://h/x", "e", &other_args),
        ] {
            assert_ne!(other, id);
        }
    }

    #[test]
    fn signatures_follow_standard_webhooks_and_rotation_signs_twice() {
        // Standard Webhooks' own example (its specification's test vector).
        let secret = Secret::parse("whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw").unwrap();
        let one = sign(&[&secret], "msg_p5jXN8AQM9LWM0D4loKWxJek", 1_614_265_330, br#"{"test": 2432232314}"#);
        assert_eq!(one, "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=");
        let old = Secret::parse(&secret32()).unwrap();
        let two = sign(&[&secret, &old], "msg_p5jXN8AQM9LWM0D4loKWxJek", 1_614_265_330, br#"{"test": 2432232314}"#);
        let parts: Vec<&str> = two.split(' ').collect();
        assert_eq!(parts.len(), 2);
        assert_eq!(parts[0], one);
        assert!(parts[1].starts_with("v1,") && parts[1] != one);
    }

    #[test]
    fn control_bodies_have_a_type_and_the_challenge_must_be_echoed_exactly() {
        assert_eq!(gap_body("c1"), json!({"type": "gap", "cursor": "c1"}));
        let ended = terminated_body(&EventError::UnknownEvent("e".into()));
        assert_eq!(ended["type"], "terminated");
        assert_eq!(
            (ended["error"]["code"].as_i64(), &ended["error"]["data"]),
            (Some(-32011), &json!({"kind": "event"}))
        );
        assert_eq!(verification_body("n1"), json!({"type": "verification", "challenge": "n1"}));
        assert!(echoes_challenge(br#"{"challenge":"n1"}"#, "n1"));
        for wrong in [&br#"{"challenge":"n2"}"#[..], br#"{"challenge":"n1x"}"#, b"n1", br#"{"challenge":1}"#, b""] {
            assert!(!echoes_challenge(wrong, "n1"), "{}", String::from_utf8_lossy(wrong));
        }
    }
}
