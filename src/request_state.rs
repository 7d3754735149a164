//! `requestState` for multi round-trip requests: an opaque string the client
//! echoes back, treated as attacker-controlled. It is the id of the key that
//! signed it, a base64url JSON payload and an HMAC-SHA256 tag over both
//! (`kid.payload.tag`), bound to the method, the tool/prompt name or URI,
//! and a digest of the arguments, with an expiry. Anything that fails
//! verification is refused before a handler runs. No server memory is
//! involved: any instance holding the key can continue a flow another
//! instance started. [`StateKeys`] rotates keys: the first signs, every one
//! verifies, and the id in the state says which.
//!
//! ```
//! use mcp_protocol::request_state::{open, seal, Binding, StateKey, StatePayload};
//!
//! let key = StateKey::new(vec![7; 32]).unwrap();
//! let binding = Binding::new("tools/call", "greet", None);
//! let payload = StatePayload::new(&binding, 60_000, 1_000, "nonce-1".into());
//! let token = seal(&payload, &key);
//! assert_eq!(open(&token, &key, &binding, 2_000).unwrap(), payload);
//! assert!(open(&format!("{token}-TAMPERED"), &key, &binding, 2_000).is_err());
//! ```

use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use base64::Engine;
use hmac_sha256::{Hash, HMAC};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::error::ProtocolError;

const VERSION: u8 = 1;

/// The secret that authenticates states. At least 32 bytes.
#[derive(Clone)]
pub struct StateKey(Vec<u8>);

impl std::fmt::Debug for StateKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("StateKey(..)")
    }
}

impl StateKey {
    /// A key from raw bytes; shorter than 32 bytes is refused.
    pub fn new(bytes: Vec<u8>) -> Result<Self, String> {
        if bytes.len() < 32 {
            return Err(format!("a requestState key needs at least 32 bytes, got {}", bytes.len()));
        }
        Ok(StateKey(bytes))
    }

    /// The key's id in the states it signs: eight hex digits of the SHA-256
    /// of its bytes (it names the key without telling anything of it).
    pub fn id(&self) -> String {
        Hash::hash(&self.0)[..4].iter().map(|b| format!("{b:02x}")).collect()
    }
}

/// The keys of a rotation: the first signs new states, every one verifies
/// the states it signed (found by the id each state carries).
#[derive(Debug, Clone)]
pub struct StateKeys {
    /// Each key with its id; the first signs.
    keys: Vec<(String, StateKey)>,
}

impl StateKeys {
    /// The keys, the signing one first; none, or two with one id, is refused.
    pub fn new(keys: Vec<StateKey>) -> Result<Self, String> {
        if keys.is_empty() {
            return Err("at least one requestState key is needed".into());
        }
        let keys: Vec<(String, StateKey)> = keys.into_iter().map(|k| (k.id(), k)).collect();
        for (i, (id, _)) in keys.iter().enumerate() {
            if keys[..i].iter().any(|(other, _)| other == id) {
                return Err(format!("the requestState keys hold one key twice (id {id})"));
            }
        }
        Ok(StateKeys { keys })
    }

    /// One key, signing and verifying.
    pub fn one(key: StateKey) -> Self {
        StateKeys { keys: vec![(key.id(), key)] }
    }

    /// The id of the signing key.
    pub fn signing_id(&self) -> &str {
        &self.keys[0].0
    }

    /// Seals `payload` with the signing key: `kid.payload.tag`, the tag
    /// over `kid.payload`.
    pub fn seal(&self, payload: &StatePayload) -> String {
        let (id, key) = &self.keys[0];
        let body = URL_SAFE_NO_PAD.encode(serde_json::to_vec(payload).expect("payloads serialize"));
        let signed = format!("{id}.{body}");
        let tag = URL_SAFE_NO_PAD.encode(mac(key, signed.as_bytes()).finalize());
        format!("{signed}.{tag}")
    }

    /// Verifies a state for `binding` at `now_ms` with the key its id names
    /// (a state without an id, `payload.tag` as sealed before ids, with the
    /// signing key) and returns its payload.
    pub fn open(&self, token: &str, binding: &Binding, now_ms: u64) -> Result<StatePayload, StateError> {
        let (signed, tag) = token.rsplit_once('.').ok_or(StateError::Malformed)?;
        let (key, body) = match signed.split_once('.') {
            Some((id, body)) => (&self.keys.iter().find(|(k, _)| k == id).ok_or(StateError::BadSignature)?.1, body),
            None => (&self.keys[0].1, signed),
        };
        let tag = URL_SAFE_NO_PAD.decode(tag).map_err(|_| StateError::Malformed)?;
        // Compared in constant time.
        let tag: [u8; 32] = tag.try_into().map_err(|_| StateError::BadSignature)?;
        if !mac(key, signed.as_bytes()).finalize_verify(&tag) {
            return Err(StateError::BadSignature);
        }
        let json = URL_SAFE_NO_PAD.decode(body).map_err(|_| StateError::Malformed)?;
        let payload: StatePayload = serde_json::from_slice(&json).map_err(|_| StateError::Malformed)?;
        if payload.v != VERSION {
            return Err(StateError::Malformed);
        }
        if payload.m != binding.method || payload.n != binding.name || payload.a != binding.args_digest {
            return Err(StateError::WrongRequest);
        }
        if now_ms >= payload.exp {
            return Err(StateError::Expired);
        }
        Ok(payload)
    }
}

/// What a state is bound to: the request it may continue.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Binding {
    /// The method (`tools/call`, `prompts/get`, `resources/read`).
    pub method: String,
    /// The tool or prompt name, or the resource URI.
    pub name: String,
    /// Hex SHA-256 of the canonical JSON of the arguments.
    pub args_digest: String,
}

impl Binding {
    /// Binds to a method, a name and arguments (absent = `{}`).
    pub fn new(method: &str, name: &str, args: Option<&Map<String, Value>>) -> Self {
        // serde_json's Map is ordered by key, so this encoding is canonical.
        let canonical = match args {
            Some(a) => serde_json::to_string(a).unwrap_or_default(),
            None => "{}".to_owned(),
        };
        let digest = Hash::hash(canonical.as_bytes());
        Binding { method: method.to_owned(), name: name.to_owned(), args_digest: crate::digest::hex(&digest) }
    }

    /// This binding, also bound to the authenticated `subject` (when there
    /// is one): a state issued to one subject fails verification for any
    /// other, so it cannot be replayed across users.
    #[must_use]
    pub fn for_subject(mut self, subject: Option<&str>) -> Self {
        if let Some(subject) = subject {
            let mut h = Hash::new();
            h.update(self.args_digest.as_bytes());
            h.update([0u8]);
            h.update(subject.as_bytes());
            self.args_digest = crate::digest::hex(&h.finalize());
        }
        self
    }
}

/// The authenticated content of a state.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StatePayload {
    /// Format version.
    pub v: u8,
    /// Bound method.
    pub m: String,
    /// Bound name or URI.
    pub n: String,
    /// Bound argument digest.
    pub a: String,
    /// Expiry, milliseconds since the Unix epoch.
    pub exp: u64,
    /// Makes every issued state distinct.
    pub nonce: String,
    /// Which round issued it (1 for the first input request).
    pub round: u32,
    /// Input responses gathered in earlier rounds, by key.
    #[serde(default, skip_serializing_if = "Map::is_empty")]
    pub responses: Map<String, Value>,
    /// The handler's own state.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub state: Option<Value>,
}

impl StatePayload {
    /// A first-round payload for `binding`, valid for `ttl_ms` from `now_ms`.
    pub fn new(binding: &Binding, ttl_ms: u64, now_ms: u64, nonce: String) -> Self {
        StatePayload {
            v: VERSION,
            m: binding.method.clone(),
            n: binding.name.clone(),
            a: binding.args_digest.clone(),
            exp: now_ms.saturating_add(ttl_ms),
            nonce,
            round: 1,
            responses: Map::new(),
            state: None,
        }
    }
}

/// Why a state was refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum StateError {
    /// Not of the form `payload.tag`, or undecodable.
    Malformed,
    /// The tag does not authenticate the payload.
    BadSignature,
    /// Issued for another method, name or arguments.
    WrongRequest,
    /// Past its expiry.
    Expired,
}

impl From<StateError> for ProtocolError {
    fn from(e: StateError) -> Self {
        let why = match e {
            StateError::Malformed => "is malformed",
            StateError::BadSignature => "failed verification",
            StateError::WrongRequest => "was issued for a different request",
            StateError::Expired => "has expired",
        };
        ProtocolError::InvalidParams(format!("requestState {why}; retry the original request without it"))
    }
}

fn mac(key: &StateKey, data: &[u8]) -> HMAC {
    let mut m = HMAC::new(&key.0);
    m.update(data);
    m
}

/// Seals a payload into a state string with one key.
pub fn seal(payload: &StatePayload, key: &StateKey) -> String {
    StateKeys::one(key.clone()).seal(payload)
}

/// Verifies a state string sealed with `key` for `binding` at `now_ms` and
/// returns its payload.
pub fn open(token: &str, key: &StateKey, binding: &Binding, now_ms: u64) -> Result<StatePayload, StateError> {
    StateKeys::one(key.clone()).open(token, binding, now_ms)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn key() -> StateKey {
        StateKey::new((0u8..32).collect()).unwrap()
    }

    fn sealed() -> (String, Binding) {
        let args = json!({"city": "Paris"}).as_object().cloned();
        let b = Binding::new("tools/call", "weather", args.as_ref());
        let mut p = StatePayload::new(&b, 1000, 10_000, "n1".into());
        p.responses.insert("step1".into(), json!({"action": "accept", "content": {"name": "Alice"}}));
        p.state = Some(json!({"count": 1}));
        (seal(&p, &key()), b)
    }

    #[test]
    fn bound_to_the_subject() {
        let b = || Binding::new("tools/call", "weather", None);
        let p = StatePayload::new(&b().for_subject(Some("alice")), 1000, 10_000, "n".into());
        let token = seal(&p, &key());
        assert!(open(&token, &key(), &b().for_subject(Some("alice")), 10_001).is_ok());
        assert_eq!(open(&token, &key(), &b().for_subject(Some("bob")), 10_001), Err(StateError::WrongRequest));
        assert_eq!(open(&token, &key(), &b(), 10_001), Err(StateError::WrongRequest));
        assert_eq!(b().for_subject(None), b());
    }

    #[test]
    fn the_first_key_signs_every_key_verifies_and_the_id_picks_it() {
        let (old, new) = (key(), StateKey::new(vec![9; 32]).unwrap());
        let b = Binding::new("tools/call", "weather", None);
        let p = StatePayload::new(&b, 1000, 10_000, "n".into());
        let by_old = seal(&p, &old);
        assert!(by_old.starts_with(&format!("{}.", old.id())), "{by_old}");
        // Rolling: old signs, new verifies too; then new signs, old verifies too.
        let both = StateKeys::new(vec![new.clone(), old.clone()]).unwrap();
        assert_eq!(both.open(&by_old, &b, 10_001).unwrap(), p);
        let by_new = both.seal(&p);
        assert_eq!(StateKeys::new(vec![old.clone(), new.clone()]).unwrap().open(&by_new, &b, 10_001).unwrap(), p);
        // A key no longer held: refused, as is an id swapped for another key's.
        assert_eq!(open(&by_new, &old, &b, 10_001), Err(StateError::BadSignature));
        let swapped = by_new.replacen(&new.id(), &old.id(), 1);
        assert_eq!(both.open(&swapped, &b, 10_001), Err(StateError::BadSignature));
        // A state sealed before ids (`payload.tag`) opens with the signing key.
        let body = URL_SAFE_NO_PAD.encode(serde_json::to_vec(&p).unwrap());
        let tag = URL_SAFE_NO_PAD.encode(mac(&old, body.as_bytes()).finalize());
        assert_eq!(open(&format!("{body}.{tag}"), &old, &b, 10_001).unwrap(), p);
        assert!(StateKeys::new(vec![]).is_err());
        assert!(StateKeys::new(vec![old.clone(), old]).unwrap_err().contains("twice"));
    }

    #[test]
    fn round_trips() {
        let (t, b) = sealed();
        let p = open(&t, &key(), &b, 10_500).unwrap();
        assert_eq!(p.responses["step1"]["content"]["name"], "Alice");
        assert_eq!(p.state, Some(json!({"count": 1})));
    }

    #[test]
    fn every_kind_of_tampering_is_refused() {
        let (t, b) = sealed();
        let k = key();
        // flip each byte in turn (payload and tag)
        for i in 0..t.len() {
            let mut bytes = t.clone().into_bytes();
            bytes[i] = if bytes[i] == b'A' { b'B' } else { b'A' };
            let flipped = String::from_utf8(bytes).unwrap();
            if flipped != t {
                assert!(open(&flipped, &k, &b, 10_500).is_err(), "byte {i} flipped was accepted");
            }
        }
        for bad in
            [&t[..t.len() - 1], &t[..t.len() / 2], &t[1..], "", ".", "abc", &format!("{t}-TAMPERED"), &format!("{t}A")]
        {
            assert!(open(bad, &k, &b, 10_500).is_err(), "{bad:?} was accepted");
        }
        // another tool, other arguments, another method
        let other_tool = Binding::new("tools/call", "other", json!({"city": "Paris"}).as_object());
        assert_eq!(open(&t, &k, &other_tool, 10_500), Err(StateError::WrongRequest));
        let other_args = Binding::new("tools/call", "weather", json!({"city": "Rome"}).as_object());
        assert_eq!(open(&t, &k, &other_args, 10_500), Err(StateError::WrongRequest));
        let other_method = Binding::new("prompts/get", "weather", json!({"city": "Paris"}).as_object());
        assert_eq!(open(&t, &k, &other_method, 10_500), Err(StateError::WrongRequest));
        // replay after expiry
        assert_eq!(open(&t, &k, &b, 11_000), Err(StateError::Expired));
        // another key
        let k2 = StateKey::new(vec![9; 32]).unwrap();
        assert_eq!(open(&t, &k2, &b, 10_500), Err(StateError::BadSignature));
    }

    #[test]
    fn short_keys_are_refused() {
        assert!(StateKey::new(vec![1; 16]).is_err());
    }
}
