//! The OAuth 2.1 client of the MCP authorization spec, as a
//! [`TokenProvider`]: when the server refuses a request (401), it finds the
//! resource's authorization server (RFC 9728, then RFC 8414 / OpenID
//! metadata), gets a client identity there (pre-registered, a client ID
//! metadata document, or dynamic registration), runs the authorization code
//! grant with PKCE through your redirect handler — or the client
//! credentials grant, for machines — and retries with the token. A 403
//! `insufficient_scope` steps the scopes up (a bounded number of times);
//! tokens are refreshed; registrations and tokens are kept per issuer.
//!
//! ```no_run
//! use actix_mcp::client::oauth::{AuthorizationResponse, OAuth};
//! use actix_mcp::client::{Client, ClientOptions};
//!
//! # async fn run() -> Result<(), actix_mcp::client::ClientError> {
//! let url = "https://mcp.example.com/mcp";
//! let oauth = OAuth::authorization_code(url, "my-agent", "http://127.0.0.1:8976/callback", |authorize_url: String| async move {
//!     // Open `authorize_url` in a browser, wait for the redirect, then:
//!     # let redirected = String::new();
//!     AuthorizationResponse::from_redirect(&redirected)
//! });
//! let client = Client::connect(url, ClientOptions::new("my-agent", "1.0").token_provider(oauth)).await?;
//! # Ok(()) }
//! ```

mod challenge;
mod discovery;
mod documents;
mod dpop;
mod flow;
mod grant;
mod registration;

use std::future::Future;
use std::sync::Arc;

use futures::future::BoxFuture;

pub use challenge::Challenge;

use super::auth::{Refusal, TokenProvider};
use super::error::ClientError;
use flow::Flow;

/// What the authorization server sent back to the redirect URI.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AuthorizationResponse {
    /// The authorization code.
    pub code: String,
    /// The `state` echoed back.
    pub state: Option<String>,
    /// The issuer (RFC 9207), when the server sends it.
    pub iss: Option<String>,
}

impl AuthorizationResponse {
    /// Reads the query of the URL the browser was redirected to; an
    /// `error` there is returned as the error.
    pub fn from_redirect(url: &str) -> Result<Self, String> {
        let parsed = url::Url::parse(url).map_err(|e| format!("the redirect {url:?} is not a URL: {e}"))?;
        let get = |k: &str| parsed.query_pairs().find(|(n, _)| n == k).map(|(_, v)| v.into_owned());
        if let Some(e) = get("error") {
            return Err(format!(
                "the authorization server refused: {e} {}",
                get("error_description").unwrap_or_default()
            ));
        }
        let code = get("code").ok_or_else(|| format!("the redirect {url:?} has no code"))?;
        Ok(AuthorizationResponse { code, state: get("state"), iss: get("iss") })
    }
}

/// Takes the user to the authorization URL and returns what came back to
/// the redirect URI.
pub type RedirectHandler =
    Arc<dyn Fn(String) -> BoxFuture<'static, Result<AuthorizationResponse, String>> + Send + Sync>;

/// How the client proves who it is at the token endpoint, for the client
/// credentials grant.
#[derive(Clone)]
pub enum ClientSecret {
    /// A shared secret (`client_secret_basic`).
    Secret(String),
    /// A private key signing a JWT assertion (`private_key_jwt`), PEM, with
    /// its algorithm (`ES256`, `RS256`, …).
    PrivateKeyJwt {
        /// The key, PEM.
        pem: String,
        /// The JWS algorithm.
        algorithm: String,
    },
}

/// Gives the assertion of a JWT-bearer grant for an authorization server
/// (its issuer, the assertion's audience) and a resource.
pub type AssertionSource = Arc<dyn Fn(String, String) -> BoxFuture<'static, Result<String, String>> + Send + Sync>;

/// Which grant obtains the tokens.
#[derive(Clone)]
pub(crate) enum Grant {
    AuthorizationCode { redirect_uri: String, handler: RedirectHandler },
    ClientCredentials { client_id: String, secret: ClientSecret },
    JwtBearer { client_id: String, secret: Option<ClientSecret>, assertion: AssertionSource },
}

/// The OAuth client: give it to [`ClientOptions::token_provider`](super::ClientOptions::token_provider).
#[derive(Clone)]
pub struct OAuth {
    flow: Arc<Flow>,
}

impl OAuth {
    /// The authorization code grant with PKCE for `server_url`:
    /// `redirect` takes the user to the authorization URL and returns the
    /// response that came back to `redirect_uri`.
    pub fn authorization_code<F, Fut>(server_url: &str, client_name: &str, redirect_uri: &str, redirect: F) -> Self
    where
        F: Fn(String) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<AuthorizationResponse, String>> + Send + 'static,
    {
        let handler: RedirectHandler = Arc::new(move |u| Box::pin(redirect(u)));
        let grant = Grant::AuthorizationCode { redirect_uri: redirect_uri.to_owned(), handler };
        OAuth { flow: Arc::new(Flow::new(server_url, client_name, grant)) }
    }

    /// The client credentials grant (a machine acting for itself).
    pub fn client_credentials(server_url: &str, client_id: &str, secret: ClientSecret) -> Self {
        let grant = Grant::ClientCredentials { client_id: client_id.to_owned(), secret };
        OAuth { flow: Arc::new(Flow::new(server_url, client_id, grant)) }
    }

    /// The JWT-bearer grant (RFC 7523): an assertion from elsewhere — a
    /// workload's identity token (workload identity federation), or an
    /// identity assertion from the enterprise's identity provider
    /// ([`identity_assertion`], enterprise-managed authorization) — is
    /// exchanged for an access token. `assertion` is asked for one with the
    /// authorization server's issuer and the resource; `secret`
    /// authenticates the client where it has one.
    pub fn jwt_bearer<F, Fut>(server_url: &str, client_id: &str, secret: Option<ClientSecret>, assertion: F) -> Self
    where
        F: Fn(String, String) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<String, String>> + Send + 'static,
    {
        let assertion: AssertionSource = Arc::new(move |issuer, resource| Box::pin(assertion(issuer, resource)));
        let grant = Grant::JwtBearer { client_id: client_id.to_owned(), secret, assertion };
        OAuth { flow: Arc::new(Flow::new(server_url, client_id, grant)) }
    }

    fn with(mut self, edit: impl FnOnce(&mut Flow)) -> Self {
        edit(Arc::get_mut(&mut self.flow).expect("configured before use"));
        self
    }

    /// A client registered beforehand at the authorization server.
    #[must_use]
    pub fn pre_registered(self, client_id: &str, client_secret: Option<&str>) -> Self {
        let (id, secret) = (client_id.to_owned(), client_secret.map(str::to_owned));
        self.with(|f| f.pre_registered = Some((id, secret)))
    }

    /// The HTTPS URL of this client's metadata document, used as its client
    /// ID where the server supports it (instead of registering).
    #[must_use]
    pub fn client_metadata_url(self, url: &str) -> Self {
        let url = url.to_owned();
        self.with(|f| f.metadata_url = Some(url))
    }

    /// How many times a 403 `insufficient_scope` may step the scopes up
    /// between full authorizations (a 401's starts the count over) before
    /// the request fails (default 2).
    #[must_use]
    pub fn max_step_ups(self, n: u32) -> Self {
        self.with(|f| f.max_step_ups = n)
    }
}

/// Enterprise-managed authorization (SEP-990): an assertion source for
/// [`OAuth::jwt_bearer`] that exchanges the user's ID token at the
/// enterprise identity provider's token endpoint (RFC 8693) for an identity
/// assertion (ID-JAG) addressed to the authorization server and the resource.
pub fn identity_assertion(
    idp_token_endpoint: &str,
    idp_client_id: &str,
    id_token: &str,
) -> impl Fn(String, String) -> BoxFuture<'static, Result<String, String>> + Send + Sync + 'static + use<> {
    let (endpoint, client_id, id_token) =
        (idp_token_endpoint.to_owned(), idp_client_id.to_owned(), id_token.to_owned());
    move |audience: String, resource: String| {
        let (endpoint, client_id, id_token) = (endpoint.clone(), client_id.clone(), id_token.clone());
        Box::pin(async move { grant::exchange_id_token(&endpoint, &client_id, &id_token, &audience, &resource).await })
    }
}

impl TokenProvider for OAuth {
    fn token(&self) -> BoxFuture<'static, Result<Option<String>, ClientError>> {
        let flow = self.flow.clone();
        Box::pin(async move { flow.current_token().await })
    }

    fn authorization(&self, method: &str, url: &str) -> BoxFuture<'static, Result<Vec<(String, String)>, ClientError>> {
        let (flow, method, url) = (self.flow.clone(), method.to_owned(), url.to_owned());
        Box::pin(async move { flow.authorization(&method, &url).await })
    }

    fn refused(&self, refusal: Refusal) -> BoxFuture<'static, Result<bool, ClientError>> {
        let flow = self.flow.clone();
        Box::pin(async move {
            let challenge = Challenge::parse(refusal.challenge.as_deref().unwrap_or(""));
            flow.refused(refusal.status, challenge, refusal.dpop_nonce).await
        })
    }
}

impl std::fmt::Debug for OAuth {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("OAuth").field("server_url", &self.flow.server_url).finish_non_exhaustive()
    }
}
