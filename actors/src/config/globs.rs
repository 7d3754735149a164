//! The glob lists of the configuration (`[fs]` include and exclude, an
//! upstream's `allow_tools` and `deny_tools`, a quota's `tools`), each built
//! into one matcher.

use globset::{Glob, GlobSet, GlobSetBuilder};

/// `patterns` as one matcher; an invalid glob is an error naming it.
pub(crate) fn glob_set(patterns: &[String]) -> Result<GlobSet, String> {
    let mut set = GlobSetBuilder::new();
    for p in patterns {
        set.add(Glob::new(p).map_err(|e| format!("glob {p:?}: {e}"))?);
    }
    set.build().map_err(|e| e.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_matcher_for_a_list_and_an_invalid_glob_named() {
        let set = glob_set(&["a*".into(), "b?".into()]).unwrap();
        assert!(set.is_match("abc") && set.is_match("bc") && !set.is_match("c"));
        assert!(!glob_set(&[]).unwrap().is_match("a"));
        assert!(glob_set(&["a[b".into()]).unwrap_err().contains("\"a[b\""));
    }
}
