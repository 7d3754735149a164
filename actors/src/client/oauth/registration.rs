//! The client's identity at an authorization server: pre-registered, its
//! client ID metadata document, or dynamic registration (RFC 7591), and
//! how it authenticates at the token endpoint.

use serde_json::json;

use super::documents::RegistrationResponse;

use super::flow::{refused, Flow, Registration, State};
use super::ClientSecret;
use crate::client::error::ClientError;

/// Token endpoint authentication methods this client can use, preferred first.
const METHODS: [&str; 3] = ["client_secret_basic", "client_secret_post", "none"];

impl Flow {
    /// The token endpoint authentication method to use: the first the
    /// server supports of those this client can (RFC 8414's default is
    /// `client_secret_basic`).
    pub(super) fn method(&self, state: &State, has_secret: bool) -> String {
        let listed = state.meta.as_ref().and_then(|m| m.token_endpoint_auth_methods_supported.as_ref());
        let supported: Vec<&str> = match listed {
            Some(l) => l.iter().map(String::as_str).collect(),
            None => vec!["client_secret_basic"],
        };
        METHODS
            .iter()
            .find(|m| supported.contains(m) && (has_secret || **m == "none"))
            .or_else(|| METHODS.iter().find(|m| supported.contains(m)))
            .unwrap_or(&"client_secret_basic")
            .to_string()
    }

    /// The client's identity at the current issuer: kept, pre-registered,
    /// its metadata document URL, or registered now.
    pub(super) async fn registration(
        &self,
        state: &mut State,
        redirect_uri: &str,
    ) -> Result<Registration, ClientError> {
        if let Some(r) = state.clients.get(&state.issuer) {
            return Ok(r.clone());
        }
        let r = if let Some((id, secret)) = &self.pre_registered {
            let method = self.method(state, secret.is_some());
            Registration { client_id: id.clone(), secret: secret.clone().map(ClientSecret::Secret), method }
        } else if let (Some(url), true) = (
            &self.metadata_url,
            state.meta.as_ref().is_some_and(|m| m.client_id_metadata_document_supported == Some(true)),
        ) {
            Registration { client_id: url.clone(), secret: None, method: "none".into() }
        } else {
            self.register(state, redirect_uri).await?
        };
        state.clients.insert(state.issuer.clone(), r.clone());
        Ok(r)
    }

    /// Dynamic client registration (RFC 7591).
    async fn register(&self, state: &State, redirect_uri: &str) -> Result<Registration, ClientError> {
        let endpoint = match &state.meta {
            Some(m) => m.registration_endpoint.clone().ok_or_else(|| {
                refused("the authorization server offers no registration, and no client was configured for it")
            })?,
            None => self.endpoint(state, |m| &m.registration_endpoint, "registration_endpoint", "/register")?,
        };
        let method = self.method(state, true);
        let mut body = json!({
            "client_name": self.client_name,
            "redirect_uris": [redirect_uri],
            "grant_types": ["authorization_code", "refresh_token"],
            "response_types": ["code"],
            "token_endpoint_auth_method": method,
            "application_type": application_type(redirect_uri),
        });
        if let Some(s) = &state.scope {
            body["scope"] = json!(s);
        }
        let resp = self.http.post(&endpoint).json(&body).send().await;
        let resp = resp.map_err(|e| refused(format!("registering at {endpoint}: {e}")))?;
        let status = resp.status().as_u16();
        let doc: RegistrationResponse = resp.json().await.unwrap_or_default();
        let Some(client_id) = doc.client_id.filter(|_| status == 200 || status == 201) else {
            return Err(refused(format!("registering at {endpoint} failed (HTTP {status})")));
        };
        let secret = doc.client_secret.map(ClientSecret::Secret);
        let method = doc.token_endpoint_auth_method.unwrap_or(method);
        Ok(Registration { client_id, secret, method })
    }
}

/// `native` for an app that receives its redirect on this machine or
/// through a scheme of its own, `web` otherwise (OpenID Connect
/// registration, as the MCP authorization spec asks).
fn application_type(redirect_uri: &str) -> &'static str {
    match url::Url::parse(redirect_uri) {
        Ok(u) if !matches!(u.scheme(), "http" | "https") => "native",
        Ok(u) if matches!(u.host_str(), Some("localhost" | "127.0.0.1" | "[::1]")) => "native",
        _ => "web",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn loopback_and_private_scheme_redirects_are_native_apps() {
        assert_eq!(application_type("http://localhost:3000/callback"), "native");
        assert_eq!(application_type("http://127.0.0.1:8976/cb"), "native");
        assert_eq!(application_type("com.example.app:/oauth"), "native");
        assert_eq!(application_type("https://app.example.com/cb"), "web");
    }
}
