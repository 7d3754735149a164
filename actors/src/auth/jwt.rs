//! What a validated token's claims must say, and the [`Identity`] they make:
//! the audience must contain the server's canonical URI (scheme and host
//! compared case-insensitively, a trailing slash aside), scopes come from
//! `scope` (space-separated) or `scp` (a list or a string).

use serde_json::{Map, Value};

use crate::identity::Identity;

/// Whether `aud` (a string or a list of strings) names `resource`.
pub(super) fn audience_matches(aud: Option<&Value>, resource: &url::Url) -> bool {
    let names = |s: &str| same_resource(s, resource);
    match aud {
        Some(Value::String(s)) => names(s),
        Some(Value::Array(list)) => list.iter().filter_map(Value::as_str).any(names),
        _ => false,
    }
}

/// `text` and `resource` name the same resource: URL parsing lowercases
/// scheme and host and drops a default port; the path must be equal but
/// for a trailing slash.
pub(super) fn same_resource(text: &str, resource: &url::Url) -> bool {
    let Ok(u) = url::Url::parse(text) else { return false };
    u.scheme() == resource.scheme()
        && u.host() == resource.host()
        && u.port_or_known_default() == resource.port_or_known_default()
        && u.path().trim_end_matches('/') == resource.path().trim_end_matches('/')
        && u.query() == resource.query()
}

/// The identity a token's (or introspection answer's) claims describe.
pub(super) fn identity_of(claims: Map<String, Value>) -> Identity {
    let text = |k: &str| claims.get(k).and_then(Value::as_str).map(str::to_owned);
    let scopes = match claims.get("scope").or_else(|| claims.get("scp")) {
        Some(Value::String(s)) => s.split_ascii_whitespace().map(str::to_owned).collect(),
        Some(Value::Array(list)) => list.iter().filter_map(Value::as_str).map(str::to_owned).collect(),
        _ => Vec::new(),
    };
    Identity {
        subject: text("sub").or_else(|| text("client_id")).unwrap_or_default(),
        client_id: text("client_id").or_else(|| text("azp")),
        issuer: text("iss"),
        scopes,
        expires_at: claims.get("exp").and_then(Value::as_u64),
        claims,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn audiences_compare_scheme_and_host_case_insensitively() {
        let r = url::Url::parse("https://mcp.example.com/mcp").unwrap();
        assert!(audience_matches(Some(&json!("HTTPS://MCP.Example.com/mcp")), &r));
        assert!(audience_matches(Some(&json!("https://mcp.example.com:443/mcp/")), &r));
        assert!(audience_matches(Some(&json!(["other", "https://mcp.example.com/mcp"])), &r));
        assert!(!audience_matches(Some(&json!("https://mcp.example.com/MCP")), &r));
        assert!(!audience_matches(Some(&json!("https://mcp.example.com")), &r));
        assert!(!audience_matches(Some(&json!("http://mcp.example.com/mcp")), &r));
        assert!(!audience_matches(None, &r));
    }

    #[test]
    fn identity_from_claims() {
        let claims = json!({"sub": "u1", "azp": "app", "iss": "https://id", "scp": ["a", "b"], "exp": 99});
        let id = identity_of(claims.as_object().unwrap().clone());
        assert_eq!((id.subject.as_str(), id.client_id.as_deref()), ("u1", Some("app")));
        assert_eq!((id.scopes, id.expires_at), (vec!["a".to_string(), "b".to_string()], Some(99)));
        let id = identity_of(json!({"client_id": "svc", "scope": "x y"}).as_object().unwrap().clone());
        assert_eq!((id.subject.as_str(), id.scopes.len()), ("svc", 2));
    }
}
