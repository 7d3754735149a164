//! [`TokenCache`]: validated tokens and their identities until they
//! expire, so that a token costs one map lookup after its first use.
//! Bounded: when full, expired entries go first, then the entry that
//! expires soonest.

use std::collections::hash_map::RandomState;
use std::collections::HashMap;
use std::hash::{BuildHasher, Hasher};
use std::sync::{Arc, Mutex};

use crate::facts::identity::Identity;

/// Tokens already validated.
#[derive(Debug)]
pub(super) struct TokenCache {
    map: Mutex<HashMap<Box<str>, Entry, TailHash>>,
    capacity: usize,
}

/// Hashes a token by its length and last 32 bytes (a JWT's signature, an
/// opaque token's randomness) with a per-process random key: a lookup costs
/// a short hash instead of one over the whole (often kilobyte) token, and
/// equality is still checked on the whole token. Only validated tokens are
/// stored, so no one can fill a bucket with made-up collisions.
#[derive(Debug, Clone, Default)]
struct TailHash(RandomState);

impl BuildHasher for TailHash {
    type Hasher = Tail;

    fn build_hasher(&self) -> Tail {
        Tail(self.0.build_hasher())
    }
}

struct Tail(std::collections::hash_map::DefaultHasher);

impl Hasher for Tail {
    fn write(&mut self, bytes: &[u8]) {
        self.0.write_usize(bytes.len());
        self.0.write(&bytes[bytes.len().saturating_sub(32)..]);
    }

    fn finish(&self) -> u64 {
        self.0.finish()
    }
}

#[derive(Debug, Clone)]
struct Entry {
    identity: Arc<Identity>,
    /// Seconds since the epoch after which the entry is not used.
    until: u64,
}

impl TokenCache {
    /// A cache of at most `capacity` tokens.
    pub(super) fn new(capacity: usize) -> Self {
        TokenCache { map: Mutex::new(HashMap::default()), capacity: capacity.max(1) }
    }

    /// The identity of `token` if it was validated and is still good at `now`.
    pub(super) fn get(&self, token: &str, now: u64) -> Option<Arc<Identity>> {
        let map = self.map.lock().unwrap_or_else(|e| e.into_inner());
        map.get(token).filter(|e| now < e.until).map(|e| e.identity.clone())
    }

    /// Remembers `token` until `until` (seconds since the epoch).
    pub(super) fn put(&self, token: &str, identity: Arc<Identity>, until: u64, now: u64) {
        if until <= now {
            return;
        }
        let mut map = self.map.lock().unwrap_or_else(|e| e.into_inner());
        if map.len() >= self.capacity && !map.contains_key(token) {
            map.retain(|_, e| now < e.until);
            if map.len() >= self.capacity {
                let soonest = map.iter().min_by_key(|(_, e)| e.until).map(|(k, _)| k.clone());
                if let Some(k) = soonest {
                    map.remove(&k);
                }
            }
        }
        map.insert(token.into(), Entry { identity, until });
    }

    /// How many tokens are remembered.
    #[cfg(test)]
    pub(super) fn len(&self) -> usize {
        self.map.lock().unwrap().len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn until_expiry_and_bounded() {
        let c = TokenCache::new(2);
        let id = Arc::new(Identity::new("alice"));
        c.put("t1", id.clone(), 100, 10);
        assert_eq!(c.get("t1", 99).unwrap().subject, "alice");
        assert!(c.get("t1", 100).is_none());
        c.put("t2", id.clone(), 50, 10);
        c.put("t3", id.clone(), 200, 10);
        assert_eq!(c.len(), 2);
        // t2 expired soonest and made room.
        assert!(c.get("t2", 20).is_none());
        assert!(c.get("t1", 20).is_some() && c.get("t3", 20).is_some());
        c.put("t4", id, 5, 10);
        assert!(c.get("t4", 1).is_none(), "an already expired token is not remembered");
    }
}
