//! [`Extensions`]: typed values a middleware attaches to a request for its
//! handler (one value per type), e.g. the caller's [`Identity`](crate::facts::identity::Identity).
//!
//! Over HTTP, an actix-web middleware inserts an `Extensions` into the
//! request's own extensions (`req.extensions_mut().insert(ext)`); the
//! endpoint moves it into the request context, where a handler reads it with
//! [`RequestContext::extension`](crate::RequestContext::extension).

use std::any::{Any, TypeId};
use std::collections::HashMap;
use std::sync::Arc;

/// Typed values attached to a request. Empty costs nothing; cloning shares.
#[derive(Clone, Default)]
pub struct Extensions {
    map: Option<Arc<HashMap<TypeId, Arc<dyn Any + Send + Sync>>>>,
}

impl std::fmt::Debug for Extensions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Extensions").field("len", &self.map.as_ref().map_or(0, |m| m.len())).finish()
    }
}

impl Extensions {
    /// No values.
    pub fn new() -> Self {
        Self::default()
    }

    /// Sets the value of type `T` (replacing an earlier one).
    pub fn insert<T: Send + Sync + 'static>(&mut self, value: T) {
        let map = self.map.get_or_insert_with(Default::default);
        Arc::make_mut(map).insert(TypeId::of::<T>(), Arc::new(value));
    }

    /// These extensions with `value` set.
    #[must_use]
    pub fn with<T: Send + Sync + 'static>(mut self, value: T) -> Self {
        self.insert(value);
        self
    }

    /// The value of type `T`, if any.
    pub fn get<T: Send + Sync + 'static>(&self) -> Option<&T> {
        self.map.as_ref()?.get(&TypeId::of::<T>())?.downcast_ref::<T>()
    }

    /// Whether no value is set.
    pub fn is_empty(&self) -> bool {
        self.map.as_ref().is_none_or(|m| m.is_empty())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_by_type_and_clones_that_do_not_see_later_changes() {
        let mut e = Extensions::new().with(7u8);
        assert!(!e.is_empty());
        let before = e.clone();
        e.insert(String::from("tenant-a"));
        assert_eq!(e.get::<u8>(), Some(&7));
        assert_eq!(e.get::<String>().map(String::as_str), Some("tenant-a"));
        assert_eq!(before.get::<String>(), None);
        assert!(Extensions::new().is_empty());
    }
}
