//! Which resource URIs some listener wants: the subscription hub tells the
//! catalog when a URI gains its first subscriber and when it loses its last
//! ([`Catalog::interest`]), and the catalog tells whoever asked (a gateway
//! opens an upstream subscription only while a listener wants that URI).

use std::sync::Arc;

use super::Catalog;

/// Told `(uri, true)` when some listener of this instance starts wanting
/// `resources/updated` for `uri`, `(uri, false)` when none does any more.
/// Called from the hub's thread: keep it cheap and non-blocking.
pub type Interest = Arc<dyn Fn(&str, bool) + Send + Sync>;

impl Catalog {
    /// Adds a function told when the set of subscribed URIs changes.
    pub fn on_interest(&self, interest: Interest) {
        self.interest.rcu(|all| all.iter().cloned().chain([interest.clone()]).collect::<Vec<_>>());
    }

    /// `uri` is now wanted by some listener (`true`) or by none (`false`);
    /// called by the subscription hub.
    pub fn interest(&self, uri: &str, wanted: bool) {
        for f in self.interest.load().iter() {
            f(uri, wanted);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Mutex;

    #[test]
    fn every_interested_function_is_told() {
        let catalog = Catalog::new();
        let seen = Arc::new(Mutex::new(Vec::new()));
        for n in 0..2 {
            let seen = seen.clone();
            catalog.on_interest(Arc::new(move |uri, wanted| seen.lock().unwrap().push((n, uri.to_owned(), wanted))));
        }
        catalog.interest("x://1", true);
        catalog.interest("x://1", false);
        let seen = seen.lock().unwrap().clone();
        assert_eq!(
            seen,
            [
                (0, "x://1".into(), true),
                (1, "x://1".into(), true),
                (0, "x://1".into(), false),
                (1, "x://1".into(), false)
            ]
        );
    }
}
