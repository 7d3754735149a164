//! What a validated token's claims must say, and the [`Identity`] they make:
//! the audience must contain the server's canonical URI (scheme and host
//! compared case-insensitively, a trailing slash aside, no fragment or user
//! part), the times (`exp`, `nbf`, `iat`) are RFC 7519 NumericDates (any
//! JSON number, fractions included), the caller must be named (`sub`, or a
//! client-credentials token's `client_id`), and scopes come from `scope`
//! (space-separated) or `scp` (a list or a string).

use serde_json::{Map, Value};

use super::AuthError;
use crate::facts::identity::Identity;

/// Whether `aud` (a string or a list of strings) names `resource`.
pub(super) fn audience_matches(aud: Option<&Value>, resource: &url::Url) -> bool {
    let names = |s: &str| same_resource(s, resource);
    match aud {
        Some(Value::String(s)) => names(s),
        Some(Value::Array(list)) => list.iter().filter_map(Value::as_str).any(names),
        _ => false,
    }
}

/// The audience check every token passes, JWT or introspected: an absent
/// audience is refused like a wrong one (a token meant for another API must
/// not open this server; RFC 8707, the authorization spec's audience binding).
pub(super) fn check_audience(claims: &Map<String, Value>, resource: &url::Url) -> Result<(), AuthError> {
    match claims.get("aud") {
        None => Err(AuthError::invalid(format!("the token names no audience; it must name {resource}"))),
        aud if audience_matches(aud, resource) => Ok(()),
        _ => Err(AuthError::invalid(format!("the token's audience does not include {resource}"))),
    }
}

/// `text` and `resource` name the same resource (RFC 8707 §2): URL parsing
/// lowercases scheme and host and drops a default port; the path must be
/// equal but for a trailing slash, the query equal; a URI with a fragment
/// is no resource indicator, and one with a user part names another resource.
pub(super) fn same_resource(text: &str, resource: &url::Url) -> bool {
    let Ok(u) = url::Url::parse(text) else { return false };
    u.fragment().is_none()
        && u.username().is_empty()
        && u.password().is_none()
        && u.scheme() == resource.scheme()
        && u.host() == resource.host()
        && u.port_or_known_default() == resource.port_or_known_default()
        && u.path().trim_end_matches('/') == resource.path().trim_end_matches('/')
        && u.query() == resource.query()
}

/// A NumericDate claim (RFC 7519 §2: seconds since the epoch, any JSON
/// number): `Ok(None)` when absent, an error when it is not a number.
pub(super) fn numeric_date(claims: &Map<String, Value>, name: &str) -> Result<Option<f64>, AuthError> {
    match claims.get(name) {
        None => Ok(None),
        Some(v) => v
            .as_f64()
            .filter(|d| d.is_finite())
            .map(Some)
            .ok_or_else(|| AuthError::invalid(format!("the {name} claim is not a NumericDate"))),
    }
}

/// Checks `exp` (required when `exp_required`), `nbf` and `iat` against
/// `now` with `leeway` seconds of clock skew. A fractional `exp` expires at
/// its fraction: `now` must be strictly before it.
pub(super) fn check_times(
    claims: &Map<String, Value>,
    now: f64,
    leeway: u64,
    exp_required: bool,
) -> Result<(), AuthError> {
    let leeway = leeway as f64;
    match numeric_date(claims, "exp")? {
        Some(exp) if now >= exp + leeway => return Err(AuthError::invalid("the token has expired")),
        None if exp_required => return Err(AuthError::invalid("the token has no exp claim")),
        _ => {}
    }
    if numeric_date(claims, "nbf")?.is_some_and(|nbf| nbf > now + leeway) {
        return Err(AuthError::invalid("the token is not valid yet (nbf)"));
    }
    // `iat` only has to be a date; a token issued "in the future" beyond
    // the skew is refused as not valid yet.
    if numeric_date(claims, "iat")?.is_some_and(|iat| iat > now + leeway) {
        return Err(AuthError::invalid("the token was issued in the future (iat)"));
    }
    Ok(())
}

/// The identity a token's (or introspection answer's) claims describe, as
/// vouched for by `issuer` (the trusted issuer's identifier, or the
/// introspection endpoint for an answer without `iss`). The caller is its
/// `sub`; a token without one (a client-credentials grant) is its
/// `client_id`'s; a token naming neither is refused, never given an empty,
/// shared identity.
pub(super) fn identity_of(claims: Map<String, Value>, issuer: &str) -> Result<Identity, AuthError> {
    let text = |k: &str| claims.get(k).and_then(Value::as_str).filter(|s| !s.is_empty()).map(str::to_owned);
    let subject = text("sub")
        .or_else(|| text("client_id"))
        .ok_or_else(|| AuthError::invalid("the token names no subject (sub) and no client_id"))?;
    let scopes = match claims.get("scope").or_else(|| claims.get("scp")) {
        Some(Value::String(s)) => s.split_ascii_whitespace().map(str::to_owned).collect(),
        Some(Value::Array(list)) => list.iter().filter_map(Value::as_str).map(str::to_owned).collect(),
        _ => Vec::new(),
    };
    // The cache and a listen stream's end use whole seconds: a fractional
    // expiry is rounded down, never extended.
    let expires_at = numeric_date(&claims, "exp")?.map(|exp| exp.floor().max(0.0) as u64);
    Ok(Identity {
        subject,
        client_id: text("client_id").or_else(|| text("azp")),
        issuer: Some(issuer.to_owned()),
        scopes,
        expires_at,
        claims,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn obj(v: Value) -> Map<String, Value> {
        v.as_object().unwrap().clone()
    }

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
    fn a_fragment_or_a_user_part_is_another_resource() {
        let r = url::Url::parse("https://mcp.example.com/mcp").unwrap();
        assert!(!audience_matches(Some(&json!("https://mcp.example.com/mcp#x")), &r));
        assert!(!audience_matches(Some(&json!("https://mcp.example.com/mcp#")), &r));
        assert!(!audience_matches(Some(&json!("https://eve@mcp.example.com/mcp")), &r));
        assert!(!audience_matches(Some(&json!("https://eve:pw@mcp.example.com/mcp")), &r));
    }

    #[test]
    fn an_absent_audience_is_refused() {
        let r = url::Url::parse("https://mcp.example.com/mcp").unwrap();
        assert!(check_audience(&obj(json!({"sub": "a"})), &r).is_err());
        assert!(check_audience(&obj(json!({"aud": "https://other.example/api"})), &r).is_err());
        assert!(check_audience(&obj(json!({"aud": "https://mcp.example.com/mcp"})), &r).is_ok());
    }

    #[test]
    fn numeric_dates_may_have_fractions() {
        let now = 1_000.0;
        assert!(check_times(&obj(json!({"exp": 1_000.5})), now, 0, true).is_ok());
        assert!(check_times(&obj(json!({"exp": 1_000.5})), 1_000.5, 0, true).is_err());
        assert!(check_times(&obj(json!({"exp": 999.9})), now, 0, true).is_err());
        assert!(check_times(&obj(json!({"exp": "1001"})), now, 0, true).is_err());
        assert!(check_times(&obj(json!({})), now, 0, true).is_err());
        assert!(check_times(&obj(json!({})), now, 0, false).is_ok());
        assert!(check_times(&obj(json!({"exp": 2_000, "nbf": 1_000.5})), now, 0, true).is_err());
        assert!(check_times(&obj(json!({"exp": 2_000, "nbf": 1_000.5})), now, 1, true).is_ok());
        assert!(check_times(&obj(json!({"exp": 2_000, "iat": 1_100})), now, 30, true).is_err());
        let id = identity_of(obj(json!({"sub": "a", "exp": 1_000.9})), "https://id").unwrap();
        assert_eq!(id.expires_at, Some(1_000), "rounded down, never extended");
    }

    #[test]
    fn identity_from_claims() {
        let claims = json!({"sub": "u1", "azp": "app", "iss": "https://id/", "scp": ["a", "b"], "exp": 99});
        let id = identity_of(obj(claims), "https://id").unwrap();
        assert_eq!((id.subject.as_str(), id.client_id.as_deref()), ("u1", Some("app")));
        assert_eq!(id.issuer.as_deref(), Some("https://id"), "the trusted issuer's own identifier");
        assert_eq!((id.scopes, id.expires_at), (vec!["a".to_string(), "b".to_string()], Some(99)));
        let id = identity_of(obj(json!({"client_id": "svc", "scope": "x y"})), "https://id").unwrap();
        assert_eq!((id.subject.as_str(), id.scopes.len()), ("svc", 2));
    }

    #[test]
    fn a_token_naming_nobody_is_refused() {
        assert!(identity_of(obj(json!({"scope": "x"})), "https://id").is_err());
        assert!(identity_of(obj(json!({"sub": "", "client_id": ""})), "https://id").is_err());
    }
}
