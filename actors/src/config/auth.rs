//! `[auth]`: authorization of HTTP requests (OAuth 2.1 resource server, or
//! static API keys). Off by default; stdio never uses it (the spec has stdio
//! take credentials from the environment).

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::error::ConfigError;
use super::AuthMode;

/// `[auth]`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct AuthConfig {
    /// `none` (default: every request is served, as on loopback), `oauth`
    /// (bearer tokens from the trusted issuers, validated as OAuth 2.1 §5.2
    /// asks) or `api_key` (bearer keys listed in `auth.api_keys`).
    pub mode: AuthMode,
    /// The server's canonical URI (RFC 8707 resource indicator): tokens
    /// must name it in `aud`. Empty (default): `http.public_url`, else
    /// `http://BIND/PATH` (`https` with TLS).
    pub resource: String,
    /// Trusted token issuers. Each one's metadata comes from its
    /// `/.well-known/oauth-authorization-server` (or
    /// `/.well-known/openid-configuration`), fetched when first needed.
    pub issuers: Vec<String>,
    /// The issuers' key set, when it should not be discovered (one issuer).
    /// Empty (default): `jwks_uri` of the issuer's metadata.
    pub jwks_uri: String,
    /// Scopes every request needs. Scopes of a tool, resource or prompt
    /// add to these for the requests that use it. Default: none.
    pub required_scopes: Vec<String>,
    /// Further scopes to advertise in the protected-resource metadata
    /// (besides the required ones and those of catalog items). Default: none.
    pub scopes_supported: Vec<String>,
    /// Scope hierarchy: a granted scope (key) implies the scopes listed
    /// (transitively), e.g. `files = ["files:read", "files:write"]`.
    pub scope_implies: BTreeMap<String, Vec<String>>,
    /// Accepted JWS algorithms; only asymmetric ones can be named (`none`
    /// and HMAC never, so a public key cannot be used as an HMAC secret).
    /// Default: RS256, RS384, RS512, PS256, PS384, PS512, ES256, ES384, EdDSA.
    pub algorithms: Vec<String>,
    /// Clock skew tolerated on `exp`, `nbf` and `iat`, in seconds. Default: 30.
    pub leeway_secs: u64,
    /// Accept only JWTs typed `at+jwt` (RFC 9068 access tokens). Off
    /// (default): a JWT without `typ`, or typed `JWT`, passes too, since
    /// many issuers do not type their access tokens; a token typed as
    /// anything else (an ID token, a logout token) never does.
    pub require_typ: bool,
    /// Validated tokens remembered (until they expire) so that a token
    /// costs a map lookup after its first use. Default: 10000.
    pub token_cache: usize,
    /// A token with an unknown key id refetches the issuer's key set at
    /// most once per this many seconds (a flood of made-up key ids cannot
    /// hammer the issuer). Default: 30.
    pub jwks_min_refresh_secs: u64,
    /// Key sets are refetched after this many seconds anyway. Default: 3600.
    pub jwks_max_age_secs: u64,
    /// Timeout of each request to an issuer (metadata, keys,
    /// introspection), in ms. Default: 5000.
    pub fetch_timeout_ms: u64,
    /// RFC 7662 token introspection, for opaque (non-JWT) tokens.
    pub introspection: IntrospectionConfig,
    /// `mode = "api_key"`: the accepted keys.
    pub api_keys: Vec<ApiKeyConfig>,
    /// Scopes of catalog items set here rather than in code.
    pub item_scopes: ItemScopesConfig,
}

/// `[auth.item_scopes]`: scopes a caller needs for catalog items, for
/// catalogs built without code (the binary's `fs` and `everything`), added
/// to those an item asks for itself (`with_scopes`).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct ItemScopesConfig {
    /// By tool name, e.g. `write_file = ["files:write"]`.
    pub tools: BTreeMap<String, Vec<String>>,
    /// By prompt name.
    pub prompts: BTreeMap<String, Vec<String>>,
    /// By resource URI glob (`*` within a path segment, `**` across them),
    /// also matched against resource templates' URI templates, e.g.
    /// `"file:///srv/docs/private/**" = ["docs:private"]`.
    pub resources: BTreeMap<String, Vec<String>>,
}

impl ItemScopesConfig {
    /// Each resource pattern as a glob (`*` within a path segment, `**`
    /// across them) with its scopes; an error names a pattern that is not one.
    pub fn resource_globs(&self) -> Result<Vec<(globset::Glob, &[String])>, ConfigError> {
        let glob = |pattern: &str| globset::GlobBuilder::new(pattern).literal_separator(true).build();
        self.resources
            .iter()
            .map(|(pattern, scopes)| {
                let glob = glob(pattern)
                    .map_err(|e| ConfigError(format!("auth.item_scopes.resources: pattern {pattern:?}: {e}")))?;
                Ok((glob, scopes.as_slice()))
            })
            .collect()
    }

    /// Each resource pattern must be a glob.
    pub fn validate(&self) -> Result<(), ConfigError> {
        self.resource_globs().map(drop)
    }
}

/// `[auth.introspection]`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct IntrospectionConfig {
    /// The introspection endpoint. Empty (default): opaque tokens are refused.
    pub endpoint: String,
    /// Client id for HTTP Basic authentication at the endpoint.
    pub client_id: String,
    /// Client secret (or set `ACTIX_MCP_AUTH_INTROSPECTION_SECRET`).
    pub client_secret: String,
}

/// One `[[auth.api_keys]]` entry.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct ApiKeyConfig {
    /// Hex SHA-256 of the key (`printf %s KEY | sha256sum`): the key itself
    /// need not be stored in the file.
    pub sha256: String,
    /// Or: the environment variable holding the key.
    pub env: String,
    /// The subject requests with this key act as.
    pub subject: String,
    /// The scopes the key grants.
    pub scopes: Vec<String>,
}

/// The algorithms accepted by default: every asymmetric one.
pub const ASYMMETRIC_ALGORITHMS: [&str; 9] =
    ["RS256", "RS384", "RS512", "PS256", "PS384", "PS512", "ES256", "ES384", "EdDSA"];

impl Default for AuthConfig {
    fn default() -> Self {
        AuthConfig {
            mode: AuthMode::None,
            resource: String::new(),
            issuers: Vec::new(),
            jwks_uri: String::new(),
            required_scopes: Vec::new(),
            scopes_supported: Vec::new(),
            scope_implies: BTreeMap::new(),
            algorithms: ASYMMETRIC_ALGORITHMS.iter().map(|a| a.to_string()).collect(),
            leeway_secs: 30,
            require_typ: false,
            token_cache: 10_000,
            jwks_min_refresh_secs: 30,
            jwks_max_age_secs: 3600,
            fetch_timeout_ms: 5000,
            introspection: IntrospectionConfig::default(),
            api_keys: Vec::new(),
            item_scopes: ItemScopesConfig::default(),
        }
    }
}

impl AuthConfig {
    /// Whether requests are authorized at all.
    pub fn enabled(&self) -> bool {
        self.mode != AuthMode::None
    }

    /// Checks what the types cannot.
    pub fn validate(&self) -> Result<(), ConfigError> {
        self.item_scopes.validate()?;
        match self.mode {
            AuthMode::None => return Ok(()),
            AuthMode::Oauth => {
                if self.issuers.is_empty() {
                    return Err(ConfigError("auth.mode = \"oauth\" needs at least one auth.issuers entry".into()));
                }
                for issuer in self.issuers.iter().chain([&self.jwks_uri, &self.introspection.endpoint]) {
                    if !issuer.is_empty() {
                        check_issuer_url(issuer)?;
                    }
                }
            }
            AuthMode::ApiKey => {
                if self.api_keys.is_empty() {
                    return Err(ConfigError("auth.mode = \"api_key\" needs at least one auth.api_keys entry".into()));
                }
                for (i, k) in self.api_keys.iter().enumerate() {
                    let valid_hash = k.sha256.len() == 64 && k.sha256.bytes().all(|b| b.is_ascii_hexdigit());
                    if (k.sha256.is_empty()) == (k.env.is_empty()) || (!k.sha256.is_empty() && !valid_hash) {
                        return Err(ConfigError(format!(
                            "auth.api_keys[{i}] needs exactly one of sha256 (64 hex digits) or env"
                        )));
                    }
                    if k.subject.is_empty() {
                        return Err(ConfigError(format!("auth.api_keys[{i}].subject must not be empty")));
                    }
                }
            }
        }
        for alg in &self.algorithms {
            if !ASYMMETRIC_ALGORITHMS.contains(&alg.as_str()) {
                return Err(ConfigError(format!(
                    "auth.algorithms: {alg:?} is not accepted (asymmetric only: {})",
                    ASYMMETRIC_ALGORITHMS.join(", ")
                )));
            }
        }
        if self.algorithms.is_empty() {
            return Err(ConfigError("auth.algorithms must name at least one algorithm".into()));
        }
        if !self.resource.is_empty() {
            url::Url::parse(&self.resource)
                .map_err(|e| ConfigError(format!("auth.resource {:?}: {e}", self.resource)))?;
        }
        for (name, value) in [
            ("auth.token_cache", self.token_cache as u64),
            ("auth.fetch_timeout_ms", self.fetch_timeout_ms),
            ("auth.jwks_max_age_secs", self.jwks_max_age_secs),
        ] {
            if value == 0 {
                return Err(ConfigError(format!("{name} must be at least 1")));
            }
        }
        Ok(())
    }
}

/// Issuer endpoints are HTTPS; plain HTTP only on a loopback host (a
/// development or test issuer).
fn check_issuer_url(text: &str) -> Result<(), ConfigError> {
    let url = url::Url::parse(text).map_err(|e| ConfigError(format!("auth: {text:?} is not a URL: {e}")))?;
    let loopback = match url.host() {
        Some(url::Host::Domain(d)) => d.eq_ignore_ascii_case("localhost"),
        Some(url::Host::Ipv4(a)) => a.is_loopback(),
        Some(url::Host::Ipv6(a)) => a.is_loopback(),
        None => false,
    };
    match url.scheme() {
        "https" => Ok(()),
        "http" if loopback => Ok(()),
        _ => Err(ConfigError(format!("auth: {text:?} must be https (plain http only on a loopback host)"))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn modes_and_their_requirements() {
        assert!(AuthConfig::default().validate().is_ok());
        let mut c = AuthConfig { mode: AuthMode::Oauth, ..AuthConfig::default() };
        assert!(c.validate().unwrap_err().0.contains("issuers"));
        c.issuers = vec!["http://id.example.com".into()];
        assert!(c.validate().unwrap_err().0.contains("https"));
        c.issuers = vec!["http://127.0.0.1:9000".into()];
        assert!(c.validate().is_ok());
        c.algorithms = vec!["HS256".into()];
        assert!(c.validate().unwrap_err().0.contains("HS256"));
        let mut k = AuthConfig { mode: AuthMode::ApiKey, ..AuthConfig::default() };
        assert!(k.validate().is_err());
        k.api_keys = vec![ApiKeyConfig { sha256: "ab".into(), subject: "ci".into(), ..ApiKeyConfig::default() }];
        assert!(k.validate().is_err());
        k.api_keys[0].sha256 = "a".repeat(64);
        assert!(k.validate().is_ok());
        assert!("basic".parse::<AuthMode>().is_err());
    }
}
