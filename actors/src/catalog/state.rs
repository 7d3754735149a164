//! [`StateMap`]: application state shared with every handler, one value per
//! type (`Catalog::set_state`, `RequestContext::state`).

use std::any::{Any, TypeId};
use std::collections::HashMap;
use std::sync::{Arc, RwLock};

/// One shared value per type.
#[derive(Default)]
pub(crate) struct StateMap(RwLock<HashMap<TypeId, Arc<dyn Any + Send + Sync>>>);

impl StateMap {
    /// Sets the value of type `S` (replacing an earlier one).
    pub(crate) fn set<S: Send + Sync + 'static>(&self, value: S) {
        self.0.write().unwrap_or_else(|p| p.into_inner()).insert(TypeId::of::<S>(), Arc::new(value));
    }

    /// Whether no value is set.
    pub(crate) fn is_empty(&self) -> bool {
        self.0.read().unwrap_or_else(|p| p.into_inner()).is_empty()
    }

    /// The value of type `S`, if one was set.
    pub(crate) fn get<S: Send + Sync + 'static>(&self) -> Option<Arc<S>> {
        let any = self.0.read().unwrap_or_else(|p| p.into_inner()).get(&TypeId::of::<S>())?.clone();
        any.downcast::<S>().ok()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_value_per_type() {
        let m = StateMap::default();
        assert!(m.get::<u32>().is_none());
        m.set(7u32);
        m.set(String::from("x"));
        m.set(8u32);
        assert_eq!(*m.get::<u32>().unwrap(), 8);
        assert_eq!(m.get::<String>().unwrap().as_str(), "x");
    }
}
