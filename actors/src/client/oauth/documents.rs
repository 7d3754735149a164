//! The JSON documents an OAuth client reads: authorization server metadata
//! (RFC 8414), protected resource metadata (RFC 9728), token responses
//! (RFC 6749) and registration responses (RFC 7591). Each is read
//! leniently: a member of the wrong type reads as absent, as an unknown
//! one is ignored, so one odd member does not cost the document.

use serde::de::DeserializeOwned;
use serde::Deserialize;

use crate::client::error::lenient;

/// Authorization server metadata (what this client uses of it).
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default)]
pub(super) struct ServerMetadata {
    #[serde(deserialize_with = "lenient")]
    pub(super) issuer: Option<String>,
    #[serde(deserialize_with = "lenient")]
    pub(super) authorization_endpoint: Option<String>,
    #[serde(deserialize_with = "lenient")]
    pub(super) token_endpoint: Option<String>,
    #[serde(deserialize_with = "lenient")]
    pub(super) registration_endpoint: Option<String>,
    #[serde(deserialize_with = "lenient")]
    pub(super) scopes_supported: Option<Vec<String>>,
    #[serde(deserialize_with = "lenient")]
    pub(super) token_endpoint_auth_methods_supported: Option<Vec<String>>,
    #[serde(deserialize_with = "lenient")]
    pub(super) dpop_signing_alg_values_supported: Option<Vec<String>>,
    #[serde(deserialize_with = "lenient")]
    pub(super) client_id_metadata_document_supported: Option<bool>,
    #[serde(deserialize_with = "lenient")]
    pub(super) authorization_response_iss_parameter_supported: Option<bool>,
}

/// A document from a body: `None` unless it is a JSON object.
pub(super) fn read<T: DeserializeOwned>(body: &[u8]) -> Option<T> {
    let first = body.iter().find(|b| !b.is_ascii_whitespace());
    (first == Some(&b'{')).then(|| serde_json::from_slice(body).ok()).flatten()
}

/// Whether a metadata list names `value`.
pub(super) fn lists(list: &Option<Vec<String>>, value: &str) -> bool {
    list.as_ref().is_some_and(|l| l.iter().any(|v| v == value))
}

/// Protected resource metadata.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default)]
pub(super) struct ResourceMetadata {
    #[serde(deserialize_with = "lenient")]
    pub(super) resource: Option<String>,
    #[serde(deserialize_with = "lenient")]
    pub(super) authorization_servers: Option<Vec<String>>,
    #[serde(deserialize_with = "lenient")]
    pub(super) scopes_supported: Option<Vec<String>>,
}

/// A token endpoint's answer: the tokens, or its error code.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default)]
pub(super) struct TokenResponse {
    #[serde(deserialize_with = "lenient")]
    pub(super) access_token: Option<String>,
    #[serde(deserialize_with = "lenient")]
    pub(super) token_type: Option<String>,
    #[serde(deserialize_with = "lenient")]
    pub(super) refresh_token: Option<String>,
    #[serde(deserialize_with = "lenient")]
    pub(super) expires_in: Option<u64>,
    #[serde(deserialize_with = "lenient")]
    pub(super) error: Option<String>,
}

/// A registration endpoint's answer.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default)]
pub(super) struct RegistrationResponse {
    #[serde(deserialize_with = "lenient")]
    pub(super) client_id: Option<String>,
    #[serde(deserialize_with = "lenient")]
    pub(super) client_secret: Option<String>,
    #[serde(deserialize_with = "lenient")]
    pub(super) token_endpoint_auth_method: Option<String>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_an_object_is_a_document() {
        assert!(read::<ResourceMetadata>(b"[1]").is_none());
        assert!(read::<ResourceMetadata>(b"not json").is_none());
        assert!(read::<ResourceMetadata>(b" {\"resource\": \"r\"}").is_some_and(|r| r.resource.is_some()));
    }

    #[test]
    fn an_odd_member_reads_as_absent() {
        let m: ServerMetadata = serde_json::from_str(
            r#"{"issuer": "https://a", "token_endpoint": 5, "scopes_supported": ["x", "offline_access"],
                "authorization_response_iss_parameter_supported": true, "other": {}}"#,
        )
        .unwrap();
        assert_eq!((m.issuer.as_deref(), m.token_endpoint), (Some("https://a"), None));
        assert!(lists(&m.scopes_supported, "offline_access") && !lists(&m.dpop_signing_alg_values_supported, "ES256"));
        assert_eq!(m.authorization_response_iss_parameter_supported, Some(true));
        let t: TokenResponse = serde_json::from_str(r#"{"error": "use_dpop_nonce", "expires_in": "soon"}"#).unwrap();
        assert_eq!((t.error.as_deref(), t.expires_in, t.access_token), (Some("use_dpop_nonce"), None, None));
        let r: ResourceMetadata = serde_json::from_str(r#"{"authorization_servers": ["https://a", 7]}"#).unwrap();
        assert!(r.authorization_servers.is_none(), "a list with a member of the wrong type reads as absent");
    }
}
