//! Requests to the token endpoint: the client's authentication there
//! (`client_secret_basic`, `client_secret_post`, `none`, `private_key_jwt`)
//! and the tokens that come back.

use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use super::documents::TokenResponse;
use base64::Engine;

use super::dpop::DpopKey;
use super::ClientSecret;
use crate::client::error::ClientError;

/// How the client authenticates at the token endpoint.
#[derive(Clone)]
pub(crate) enum ClientAuth {
    /// HTTP Basic with the id and secret.
    Basic(String, String),
    /// The id and secret in the form.
    Post(String, String),
    /// The id alone (a public client).
    Public(String),
    /// A JWT assertion signed with the client's key.
    Jwt { client_id: String, pem: String, algorithm: String },
}

impl ClientAuth {
    /// The authentication of a client with this id, secret and registered
    /// method.
    pub(crate) fn of(client_id: &str, secret: Option<&ClientSecret>, method: &str) -> Self {
        let id = client_id.to_owned();
        match (secret, method) {
            (Some(ClientSecret::PrivateKeyJwt { pem, algorithm }), _) => {
                ClientAuth::Jwt { client_id: id, pem: pem.clone(), algorithm: algorithm.clone() }
            }
            (Some(ClientSecret::Secret(s)), "client_secret_post") => ClientAuth::Post(id, s.clone()),
            (Some(ClientSecret::Secret(s)), _) => ClientAuth::Basic(id, s.clone()),
            (None, _) => ClientAuth::Public(id),
        }
    }
}

/// Tokens from the token endpoint.
#[derive(Debug, Clone)]
pub(crate) struct Tokens {
    pub(crate) access: String,
    pub(crate) refresh: Option<String>,
    pub(crate) expires: Option<Instant>,
    /// Bound to the client's DPoP key (`token_type: DPoP`).
    pub(crate) dpop: bool,
}

impl Tokens {
    /// Whether the access token is past (or within 10 s of) its expiry.
    pub(crate) fn expired(&self) -> bool {
        self.expires.is_some_and(|e| Instant::now() + Duration::from_secs(10) >= e)
    }
}

fn refused(message: String) -> ClientError {
    ClientError::Auth { status: 401, challenge: None, message }
}

/// POSTs `form` to the token endpoint with the client's authentication
/// (a JWT assertion is addressed to `issuer`, or to the endpoint when the
/// server has no issuer). With a DPoP key, each attempt carries a proof,
/// and a `use_dpop_nonce` refusal is retried once with the server's nonce
/// (kept in `nonce` for the next request).
pub(crate) async fn request(
    http: &reqwest::Client,
    endpoint: &str,
    issuer: &str,
    auth: &ClientAuth,
    mut form: Vec<(String, String)>,
    dpop: Option<&DpopKey>,
    nonce: &mut Option<String>,
) -> Result<Tokens, ClientError> {
    let basic = authenticate(auth, &mut form, issuer, endpoint)?;
    let body = url::form_urlencoded::Serializer::new(String::new()).extend_pairs(&form).finish();
    let mut attempts = 0;
    loop {
        attempts += 1;
        let mut req = http
            .post(endpoint)
            .header("Accept", "application/json")
            .header("Content-Type", "application/x-www-form-urlencoded");
        if let Some(b) = &basic {
            req = req.header("Authorization", b);
        }
        if let Some(key) = dpop {
            req = req.header("DPoP", key.proof("POST", endpoint, nonce.as_deref(), None).map_err(refused)?);
        }
        let resp = req
            .body(body.clone())
            .send()
            .await
            .map_err(|e| refused(format!("requesting a token from {endpoint}: {e}")))?;
        let status = resp.status().as_u16();
        let fresh_nonce = resp.headers().get("dpop-nonce").and_then(|v| v.to_str().ok()).map(str::to_owned);
        let answer: TokenResponse = resp.json().await.unwrap_or_default();
        let error = answer.error.as_deref().unwrap_or("no error code");
        if dpop.is_some() && error == "use_dpop_nonce" && fresh_nonce.is_some() && attempts < 2 {
            *nonce = fresh_nonce;
            continue;
        }
        if fresh_nonce.is_some() {
            *nonce = fresh_nonce;
        }
        if !(200..300).contains(&status) {
            return Err(refused(format!("the token endpoint {endpoint} answered HTTP {status} ({error})")));
        }
        let Some(access) = answer.access_token else {
            return Err(refused(format!("the token endpoint {endpoint} answered without an access_token")));
        };
        let dpop_bound = answer.token_type.as_deref().unwrap_or("Bearer").eq_ignore_ascii_case("dpop");
        return Ok(Tokens {
            access,
            refresh: answer.refresh_token,
            expires: answer.expires_in.map(|s| Instant::now() + Duration::from_secs(s)),
            dpop: dpop.is_some() && dpop_bound,
        });
    }
}

/// Applies the client's authentication to a token request: the form's
/// fields, or the `Authorization: Basic` value returned.
fn authenticate(
    auth: &ClientAuth,
    form: &mut Vec<(String, String)>,
    issuer: &str,
    endpoint: &str,
) -> Result<Option<String>, ClientError> {
    match auth {
        ClientAuth::Basic(id, secret) => {
            let enc = |s: &str| url::form_urlencoded::byte_serialize(s.as_bytes()).collect::<String>();
            let pair = format!("{}:{}", enc(id), enc(secret));
            return Ok(Some(format!("Basic {}", base64::engine::general_purpose::STANDARD.encode(pair))));
        }
        ClientAuth::Post(id, secret) => {
            form.push(("client_id".into(), id.clone()));
            form.push(("client_secret".into(), secret.clone()));
        }
        ClientAuth::Public(id) => form.push(("client_id".into(), id.clone())),
        ClientAuth::Jwt { client_id, pem, algorithm } => {
            form.push(("client_id".into(), client_id.clone()));
            form.push((
                "client_assertion_type".into(),
                "urn:ietf:params:oauth:client-assertion-type:jwt-bearer".into(),
            ));
            let audience = if issuer.is_empty() { endpoint } else { issuer };
            form.push(("client_assertion".into(), assertion(client_id, pem, algorithm, audience)?));
        }
    }
    Ok(None)
}

/// A `private_key_jwt` assertion (RFC 7523): issued by and about the
/// client, for the authorization server, valid for five minutes.
fn assertion(client_id: &str, pem: &str, algorithm: &str, audience: &str) -> Result<String, ClientError> {
    let alg: jsonwebtoken::Algorithm =
        algorithm.parse().map_err(|_| refused(format!("unknown JWT algorithm {algorithm}")))?;
    let key = match algorithm {
        a if a.starts_with("ES") => jsonwebtoken::EncodingKey::from_ec_pem(pem.as_bytes()),
        a if a.starts_with("Ed") => jsonwebtoken::EncodingKey::from_ed_pem(pem.as_bytes()),
        _ => jsonwebtoken::EncodingKey::from_rsa_pem(pem.as_bytes()),
    }
    .map_err(|e| refused(format!("the client's private key does not load: {e}")))?;
    let now = SystemTime::now().duration_since(UNIX_EPOCH).unwrap_or_default().as_secs();
    let claims = serde_json::json!({
        "iss": client_id, "sub": client_id, "aud": audience,
        "iat": now, "exp": now + 300, "jti": uuid::Uuid::new_v4().to_string(),
    });
    jsonwebtoken::encode(&jsonwebtoken::Header::new(alg), &claims, &key)
        .map_err(|e| refused(format!("signing the client assertion: {e}")))
}

/// RFC 8693 token exchange at an identity provider: the user's ID token
/// for an identity assertion (ID-JAG) for `audience` and `resource`.
pub(crate) async fn exchange_id_token(
    endpoint: &str,
    client_id: &str,
    id_token: &str,
    audience: &str,
    resource: &str,
) -> Result<String, String> {
    let form = [
        ("grant_type", "urn:ietf:params:oauth:grant-type:token-exchange"),
        ("requested_token_type", "urn:ietf:params:oauth:token-type:id-jag"),
        ("subject_token", id_token),
        ("subject_token_type", "urn:ietf:params:oauth:token-type:id_token"),
        ("audience", audience),
        ("resource", resource),
        ("client_id", client_id),
    ];
    let body = url::form_urlencoded::Serializer::new(String::new()).extend_pairs(form).finish();
    let resp = reqwest::Client::new()
        .post(endpoint)
        .header("Content-Type", "application/x-www-form-urlencoded")
        .header("Accept", "application/json")
        .body(body)
        .send()
        .await
        .map_err(|e| format!("the token exchange at {endpoint} failed: {e}"))?;
    let status = resp.status().as_u16();
    let answer: TokenResponse = resp.json().await.unwrap_or_default();
    match answer.access_token {
        Some(t) if (200..300).contains(&status) => Ok(t),
        _ => Err(format!(
            "the identity provider {endpoint} answered the token exchange with HTTP {status} ({})",
            answer.error.as_deref().unwrap_or("no error code")
        )),
    }
}
