//! Which upstream serves each resource URI and URI template. Two upstreams
//! may not serve the same one: found when an upstream is first listed, it
//! is a start-up error naming both (one of them takes a `uri_prefix`);
//! found later, the second claim is left out and logged.

use std::collections::HashMap;
use std::sync::Mutex;

/// URI (or template) → the upstream serving it.
#[derive(Default)]
pub(crate) struct Claims {
    by_uri: Mutex<HashMap<String, String>>,
}

impl Claims {
    /// Claims `uri` for `upstream`; the other upstream's name when it holds it.
    pub(crate) fn claim(&self, uri: &str, upstream: &str) -> Result<(), String> {
        let mut by_uri = self.by_uri.lock().expect("claims lock");
        match by_uri.get(uri) {
            Some(owner) if owner != upstream => Err(owner.clone()),
            Some(_) => Ok(()),
            None => {
                by_uri.insert(uri.to_owned(), upstream.to_owned());
                Ok(())
            }
        }
    }

    /// Gives `uri` up, if `upstream` holds it.
    pub(crate) fn release(&self, uri: &str, upstream: &str) {
        let mut by_uri = self.by_uri.lock().expect("claims lock");
        if by_uri.get(uri).is_some_and(|owner| owner == upstream) {
            by_uri.remove(uri);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_uri_has_one_owner_until_it_gives_it_up() {
        let claims = Claims::default();
        assert_eq!(claims.claim("x://1", "a"), Ok(()));
        assert_eq!(claims.claim("x://1", "a"), Ok(()));
        assert_eq!(claims.claim("x://1", "b"), Err("a".into()));
        claims.release("x://1", "b");
        assert_eq!(claims.claim("x://1", "b"), Err("a".into()));
        claims.release("x://1", "a");
        assert_eq!(claims.claim("x://1", "b"), Ok(()));
    }
}
