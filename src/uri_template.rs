//! RFC 6570 level-1 URI templates such as `test://template/{id}/data`:
//! parsing one, and matching a URI against it.
//!
//! A client expands a template by percent-encoding each value (RFC 6570
//! §3.2.2), so `notes://{title}` with the title `team sync` is read as
//! `notes://team%20sync`; a match binds the value decoded
//! (`team sync`; `caf%C3%A9` is `café`, `a%2Fb` is `a/b`). A value whose
//! bytes are not UTF-8 once decoded matches nothing.

use std::collections::BTreeMap;

/// Variables bound by matching a URI against a template.
pub type TemplateVars = BTreeMap<String, String>;

#[derive(Debug, Clone, PartialEq, Eq)]
enum Part {
    Literal(String),
    Var(String),
}

/// A parsed level-1 URI template.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UriPattern {
    parts: Vec<Part>,
}

impl UriPattern {
    /// Parses `{name}` expressions between literals.
    pub fn parse(template: &str) -> Result<Self, String> {
        let mut parts = Vec::new();
        let mut rest = template;
        while let Some(open) = rest.find('{') {
            if open > 0 {
                parts.push(Part::Literal(rest[..open].to_owned()));
            }
            let close = rest[open..].find('}').ok_or_else(|| format!("unclosed '{{' in {template:?}"))? + open;
            let name = &rest[open + 1..close];
            if name.is_empty() || !name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') {
                return Err(format!("unsupported expression {{{name}}} in {template:?}"));
            }
            if matches!(parts.last(), Some(Part::Var(_))) {
                return Err(format!("adjacent expressions in {template:?}"));
            }
            parts.push(Part::Var(name.to_owned()));
            rest = &rest[close + 1..];
        }
        if !rest.is_empty() {
            parts.push(Part::Literal(rest.to_owned()));
        }
        Ok(UriPattern { parts })
    }

    /// Matches a URI; a variable matches one or more characters other than
    /// `/`, and is bound to its percent-decoded value.
    pub fn matches(&self, uri: &str) -> Option<TemplateVars> {
        let mut vars = TemplateVars::new();
        let mut rest = uri;
        let mut parts = self.parts.iter().peekable();
        while let Some(part) = parts.next() {
            match part {
                Part::Literal(l) => rest = rest.strip_prefix(l.as_str())?,
                Part::Var(name) => {
                    let end = match parts.peek() {
                        Some(Part::Literal(next)) => rest.find(next.as_str())?,
                        _ => rest.len(),
                    };
                    let value = &rest[..end];
                    if value.is_empty() || value.contains('/') {
                        return None;
                    }
                    let decoded = percent_encoding::percent_decode_str(value).decode_utf8().ok()?;
                    vars.insert(name.clone(), decoded.into_owned());
                    rest = &rest[end..];
                }
            }
        }
        rest.is_empty().then_some(vars)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn matches_level_one_templates() {
        let p = UriPattern::parse("test://template/{id}/data").unwrap();
        assert_eq!(p.matches("test://template/123/data").unwrap()["id"], "123");
        assert!(p.matches("test://template//data").is_none());
        assert!(p.matches("test://template/1/2/data").is_none());
        assert!(p.matches("test://template/123/datax").is_none());
        let p = UriPattern::parse("file:///{a}.{ext}").unwrap();
        let v = p.matches("file:///readme.md").unwrap();
        assert_eq!((v["a"].as_str(), v["ext"].as_str()), ("readme", "md"));
        assert!(UriPattern::parse("x://{a}{b}").is_err());
        assert!(UriPattern::parse("x://{a").is_err());
    }

    #[test]
    fn values_are_percent_decoded() {
        let p = UriPattern::parse("notes://{title}").unwrap();
        for (uri, title) in [
            ("notes://team%20sync", "team sync"),
            ("notes://caf%C3%A9", "café"),
            ("notes://a%2Fb", "a/b"),
            ("notes://100%", "100%"),
            ("notes://plain", "plain"),
        ] {
            assert_eq!(p.matches(uri).unwrap()["title"], title, "{uri}");
        }
        assert!(p.matches("notes://%FF").is_none(), "not UTF-8 once decoded");
    }
}
