//! One OAuth client's state and steps: discovery, the client's identity at
//! the authorization server, the grant, refresh and step-up.

use std::collections::HashMap;
use std::sync::Arc;

use base64::Engine;
use hmac_sha256::Hash;
use serde::de::DeserializeOwned;

use super::challenge::Challenge;
use super::discovery::{canonical_resource, origin_of, resource_covers, resource_metadata_urls, server_metadata_urls};
use super::documents::{lists, read, ResourceMetadata, ServerMetadata};
use super::dpop::DpopKey;
use super::grant::{self, ClientAuth, Tokens};
use super::{ClientSecret, Grant};
use crate::client::error::ClientError;

pub(super) fn refused(message: impl Into<String>) -> ClientError {
    ClientError::Auth { status: 401, challenge: None, message: message.into() }
}

/// The client's identity at one authorization server.
#[derive(Clone)]
pub(super) struct Registration {
    pub(super) client_id: String,
    pub(super) secret: Option<ClientSecret>,
    pub(super) method: String,
}

/// What discovery found, and what was obtained, per issuer.
#[derive(Default)]
pub(super) struct State {
    /// The authorization server in use (`""`: a 2025-03-26 server without
    /// resource metadata, whose origin is its authorization server).
    pub(super) issuer: String,
    /// Its metadata, if it publishes any.
    pub(super) meta: Option<ServerMetadata>,
    /// The `resource` parameter (RFC 8707), when resource metadata was found.
    pub(super) resource: Option<String>,
    /// The scopes asked for so far.
    pub(super) scope: Option<String>,
    /// Step-ups since the last full authorization.
    pub(super) step_ups: u32,
    pub(super) clients: HashMap<String, Registration>,
    pub(super) tokens: HashMap<String, Tokens>,
    /// The DPoP key, once an authorization server supports DPoP.
    pub(super) dpop: Option<Arc<DpopKey>>,
    /// The last DPoP nonces of the authorization server and of the resource.
    pub(super) as_nonce: Option<String>,
    pub(super) rs_nonce: Option<String>,
}

/// An OAuth client for one MCP server.
pub(crate) struct Flow {
    pub(crate) server_url: String,
    pub(super) client_name: String,
    grant: Grant,
    pub(crate) pre_registered: Option<(String, Option<String>)>,
    pub(crate) metadata_url: Option<String>,
    pub(crate) max_step_ups: u32,
    pub(super) http: reqwest::Client,
    state: tokio::sync::Mutex<State>,
}

impl Flow {
    pub(crate) fn new(server_url: &str, client_name: &str, grant: Grant) -> Self {
        Flow {
            server_url: server_url.to_owned(),
            client_name: client_name.to_owned(),
            grant,
            pre_registered: None,
            metadata_url: None,
            max_step_ups: 2,
            http: reqwest::Client::builder()
                .redirect(reqwest::redirect::Policy::none())
                .build()
                .expect("an HTTP client"),
            state: tokio::sync::Mutex::new(State::default()),
        }
    }

    /// The tokens of the current issuer, refreshed if they expired.
    async fn current(&self, state: &mut State) -> Option<Tokens> {
        let key = state.issuer.clone();
        let tokens = state.tokens.get(&key).cloned()?;
        if !tokens.expired() {
            return Some(tokens);
        }
        state.tokens.remove(&key);
        // A refused refresh means a new authorization, at the next 401.
        let t = self.refresh(state, tokens.refresh.as_deref()?).await.ok()?;
        state.tokens.insert(key, t.clone());
        Some(t)
    }

    /// The access token for the current issuer, refreshed if it expired.
    pub(crate) async fn current_token(&self) -> Result<Option<String>, ClientError> {
        let mut state = self.state.lock().await;
        Ok(self.current(&mut state).await.map(|t| t.access))
    }

    /// The headers that present the token with one request: `Bearer`, or
    /// `DPoP` with a fresh proof for the request's method and URL.
    pub(crate) async fn authorization(&self, method: &str, url: &str) -> Result<Vec<(String, String)>, ClientError> {
        let mut state = self.state.lock().await;
        let Some(tokens) = self.current(&mut state).await else { return Ok(Vec::new()) };
        match (&state.dpop, tokens.dpop) {
            (Some(key), true) => {
                let proof = key.proof(method, url, state.rs_nonce.as_deref(), Some(&tokens.access)).map_err(refused)?;
                Ok(vec![("Authorization".into(), format!("DPoP {}", tokens.access)), ("DPoP".into(), proof)])
            }
            _ => Ok(vec![("Authorization".into(), format!("Bearer {}", tokens.access))]),
        }
    }

    /// The server refused a token: authorize (401) or step the scopes up
    /// (403 `insufficient_scope`); `Ok(true)` to try the request again.
    pub(crate) async fn refused(
        &self,
        status: u16,
        challenge: Challenge,
        dpop_nonce: Option<String>,
    ) -> Result<bool, ClientError> {
        let mut state = self.state.lock().await;
        let had_token = state.tokens.contains_key(&state.issuer);
        if dpop_nonce.is_some() {
            state.rs_nonce = dpop_nonce;
        }
        match (status, challenge.error.as_deref()) {
            // The resource wants its nonce in the proof: the same token again.
            (401, Some("use_dpop_nonce")) if had_token && state.dpop.is_some() => Ok(true),
            (401, _) => {
                state.step_ups = 0;
                self.authorize(&mut state, &challenge, false).await?;
                Ok(true)
            }
            (403, Some("insufficient_scope")) if state.step_ups < self.max_step_ups => {
                state.step_ups += 1;
                self.authorize(&mut state, &challenge, true).await?;
                Ok(true)
            }
            _ => Ok(false),
        }
    }

    async fn authorize(&self, state: &mut State, challenge: &Challenge, step_up: bool) -> Result<(), ClientError> {
        let prm_scopes = self.discover(state, challenge).await?;
        let wanted = challenge.scope.clone().or(prm_scopes);
        let mut scope = if step_up { union(state.scope.as_deref(), wanted.as_deref()) } else { wanted };
        let offers_offline = state.meta.as_ref().is_some_and(|m| lists(&m.scopes_supported, "offline_access"));
        if let (Some(s), true, Grant::AuthorizationCode { .. }) = (&scope, offers_offline, &self.grant)
            && !s.split(' ').any(|x| x == "offline_access")
        {
            scope = Some(format!("{s} offline_access"));
        }
        state.scope = scope;
        let tokens = match &self.grant {
            Grant::ClientCredentials { client_id, secret } => {
                let method = self.method(state, true);
                let auth = ClientAuth::of(client_id, Some(secret), &method);
                let mut form = vec![("grant_type".to_owned(), "client_credentials".to_owned())];
                self.scope_and_resource(state, &mut form);
                self.token_request(state, &auth, form).await?
            }
            Grant::JwtBearer { client_id, secret, assertion } => {
                let method = self.method(state, secret.is_some());
                let auth = ClientAuth::of(client_id, secret.as_ref(), &method);
                let resource = state.resource.clone().unwrap_or_else(|| canonical_resource(&self.server_url));
                let jwt = assertion(state.issuer.clone(), resource).await.map_err(refused)?;
                let mut form = vec![
                    ("grant_type".to_owned(), "urn:ietf:params:oauth:grant-type:jwt-bearer".to_owned()),
                    ("assertion".to_owned(), jwt),
                ];
                self.scope_and_resource(state, &mut form);
                self.token_request(state, &auth, form).await?
            }
            Grant::AuthorizationCode { .. } => self.code_grant(state).await?,
        };
        state.tokens.insert(state.issuer.clone(), tokens);
        Ok(())
    }

    /// Finds the authorization server and its metadata; returns the
    /// resource metadata's scopes.
    async fn discover(&self, state: &mut State, challenge: &Challenge) -> Result<Option<String>, ClientError> {
        let (issuer, prm_scopes) = self.resource_metadata(state, challenge).await?;
        state.meta = None;
        for url in server_metadata_urls(issuer.as_deref(), &self.server_url) {
            let Some(meta) = self.get_json::<ServerMetadata>(&url).await? else { continue };
            let named = meta.issuer.as_deref().unwrap_or_default();
            if let Some(expected) = &issuer
                && named != expected
            {
                return Err(refused(format!(
                    "the authorization server metadata at {url} names the issuer {named:?}, not {expected:?}"
                )));
            }
            state.meta = Some(meta);
            break;
        }
        state.issuer = match (&issuer, &state.meta) {
            (Some(i), _) => i.clone(),
            (None, _) => String::new(),
        };
        if issuer.is_some() && state.meta.is_none() {
            return Err(refused(format!("no authorization server metadata for {}", state.issuer)));
        }
        let offers_dpop = state.meta.as_ref().is_some_and(|m| lists(&m.dpop_signing_alg_values_supported, "ES256"));
        if offers_dpop && state.dpop.is_none() {
            state.dpop = Some(Arc::new(DpopKey::generate().map_err(refused)?));
        }
        Ok(prm_scopes)
    }

    /// The resource metadata (RFC 9728): sets the `resource` parameter;
    /// returns the authorization server's issuer and the scopes it lists
    /// (nothing for a server without resource metadata).
    async fn resource_metadata(
        &self,
        state: &mut State,
        challenge: &Challenge,
    ) -> Result<(Option<String>, Option<String>), ClientError> {
        let mut prm = None;
        for url in resource_metadata_urls(challenge.resource_metadata.as_deref(), &self.server_url) {
            if let Some(doc) = self.get_json::<ResourceMetadata>(&url).await? {
                prm = Some(doc);
                break;
            }
        }
        let Some(doc) = prm else {
            state.resource = None;
            return Ok((None, None));
        };
        if let Some(resource) = doc.resource.as_deref() {
            if !resource_covers(resource, &self.server_url) {
                return Err(refused(format!(
                    "the resource metadata names the resource {resource}, not {}",
                    self.server_url
                )));
            }
            state.resource = Some(resource.to_owned());
        } else {
            state.resource = Some(canonical_resource(&self.server_url));
        }
        let scopes = doc.scopes_supported.map(|s| s.join(" "));
        let first = doc.authorization_servers.and_then(|a| a.into_iter().next());
        let issuer = first.ok_or_else(|| refused("the resource metadata names no authorization server"))?;
        Ok((Some(issuer), scopes))
    }

    /// A JSON document by GET; `None` for a 4xx answer or a body that is
    /// not a JSON object.
    async fn get_json<T: DeserializeOwned>(&self, url: &str) -> Result<Option<T>, ClientError> {
        let resp = self.http.get(url).header("Accept", "application/json").send().await;
        let Ok(resp) = resp else { return Ok(None) };
        if !resp.status().is_success() {
            return Ok(None);
        }
        Ok(resp.bytes().await.ok().and_then(|body| read(&body)))
    }

    /// An endpoint from the metadata; without metadata (2025-03-26), the
    /// default path at the server's origin.
    pub(super) fn endpoint(
        &self,
        state: &State,
        key: fn(&ServerMetadata) -> &Option<String>,
        name: &str,
        default_path: &str,
    ) -> Result<String, ClientError> {
        if let Some(meta) = &state.meta {
            return key(meta)
                .clone()
                .ok_or_else(|| refused(format!("the authorization server metadata has no {name}")));
        }
        let u = url::Url::parse(&self.server_url).map_err(|e| refused(e.to_string()))?;
        Ok(format!("{}{default_path}", origin_of(&u)))
    }

    fn scope_and_resource(&self, state: &State, form: &mut Vec<(String, String)>) {
        if let Some(s) = &state.scope {
            form.push(("scope".into(), s.clone()));
        }
        if let Some(r) = &state.resource {
            form.push(("resource".into(), r.clone()));
        }
    }

    /// A token request at the current authorization server (with a DPoP
    /// proof when it supports DPoP).
    async fn token_request(
        &self,
        state: &mut State,
        auth: &ClientAuth,
        form: Vec<(String, String)>,
    ) -> Result<Tokens, ClientError> {
        let endpoint = self.endpoint(state, |m| &m.token_endpoint, "token_endpoint", "/token")?;
        let key = state.dpop.clone();
        grant::request(&self.http, &endpoint, &state.issuer, auth, form, key.as_deref(), &mut state.as_nonce).await
    }

    /// The authorization code grant with PKCE (S256), `state` and the
    /// issuer check of RFC 9207.
    async fn code_grant(&self, state: &mut State) -> Result<Tokens, ClientError> {
        let Grant::AuthorizationCode { redirect_uri, handler } = &self.grant else { unreachable!("a code grant") };
        let reg = self.registration(state, redirect_uri).await?;
        let verifier = format!("{}{}", uuid::Uuid::new_v4().simple(), uuid::Uuid::new_v4().simple());
        let challenge = base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(Hash::hash(verifier.as_bytes()));
        let nonce = uuid::Uuid::new_v4().simple().to_string();
        let mut url = url::Url::parse(&self.endpoint(
            state,
            |m| &m.authorization_endpoint,
            "authorization_endpoint",
            "/authorize",
        )?)
        .map_err(|e| refused(format!("the authorization endpoint is not a URL: {e}")))?;
        {
            let mut q = url.query_pairs_mut();
            q.append_pair("response_type", "code")
                .append_pair("client_id", &reg.client_id)
                .append_pair("redirect_uri", redirect_uri)
                .append_pair("code_challenge", &challenge)
                .append_pair("code_challenge_method", "S256")
                .append_pair("state", &nonce);
            if let Some(s) = &state.scope {
                q.append_pair("scope", s);
            }
            if let Some(r) = &state.resource {
                q.append_pair("resource", r);
            }
        }
        let response = handler(url.to_string()).await.map_err(refused)?;
        if response.state.as_deref() != Some(nonce.as_str()) {
            return Err(refused("the authorization response's state is not the one sent"));
        }
        self.check_iss(state, response.iss.as_deref())?;
        let mut form = vec![
            ("grant_type".to_owned(), "authorization_code".to_owned()),
            ("code".to_owned(), response.code),
            ("redirect_uri".to_owned(), redirect_uri.clone()),
            ("code_verifier".to_owned(), verifier),
        ];
        if let Some(r) = &state.resource {
            form.push(("resource".into(), r.clone()));
        }
        let auth = ClientAuth::of(&reg.client_id, reg.secret.as_ref(), &reg.method);
        self.token_request(state, &auth, form).await
    }

    /// RFC 9207: an `iss` in the response must be the issuer's, exactly; a
    /// missing one is refused when the server said it sends it.
    fn check_iss(&self, state: &State, iss: Option<&str>) -> Result<(), ClientError> {
        let expected = state.meta.as_ref().and_then(|m| m.issuer.as_deref());
        let advertised =
            state.meta.as_ref().and_then(|m| m.authorization_response_iss_parameter_supported) == Some(true);
        match (iss, expected) {
            (Some(got), Some(want)) if got == want => Ok(()),
            (Some(got), want) => Err(refused(format!(
                "the authorization response names the issuer {got:?}, not {:?}",
                want.unwrap_or_default()
            ))),
            (None, _) if advertised => Err(refused("the authorization response lacks the iss its server promised")),
            (None, _) => Ok(()),
        }
    }

    async fn refresh(&self, state: &mut State, refresh_token: &str) -> Result<Tokens, ClientError> {
        let reg = match (&self.grant, state.clients.get(&state.issuer)) {
            (_, Some(r)) => r.clone(),
            (Grant::ClientCredentials { client_id, secret }, None) => Registration {
                client_id: client_id.clone(),
                secret: Some(secret.clone()),
                method: self.method(state, true),
            },
            (Grant::JwtBearer { client_id, secret, .. }, None) => Registration {
                client_id: client_id.clone(),
                secret: secret.clone(),
                method: self.method(state, secret.is_some()),
            },
            (Grant::AuthorizationCode { .. }, None) => return Err(refused("no client to refresh with")),
        };
        let mut form = vec![
            ("grant_type".to_owned(), "refresh_token".to_owned()),
            ("refresh_token".to_owned(), refresh_token.to_owned()),
        ];
        if let Some(r) = &state.resource {
            form.push(("resource".into(), r.clone()));
        }
        let auth = ClientAuth::of(&reg.client_id, reg.secret.as_ref(), &reg.method);
        let mut tokens = self.token_request(state, &auth, form).await?;
        tokens.refresh = tokens.refresh.or(Some(refresh_token.to_owned()));
        Ok(tokens)
    }
}

/// Two scope strings merged, the first's order kept, no duplicates.
fn union(first: Option<&str>, second: Option<&str>) -> Option<String> {
    let mut out: Vec<&str> = Vec::new();
    for s in first.into_iter().chain(second).flat_map(|s| s.split(' ')).filter(|s| !s.is_empty()) {
        if !out.contains(&s) {
            out.push(s);
        }
    }
    (!out.is_empty()).then(|| out.join(" "))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scopes_merge_in_order_without_duplicates() {
        assert_eq!(union(Some("a b"), Some("b c")).as_deref(), Some("a b c"));
        assert_eq!(union(None, Some("x")).as_deref(), Some("x"));
        assert_eq!(union(None, None), None);
    }
}
