//! The OAuth client (`actix_mcp::client::oauth`) against an MCP server and
//! authorization servers of the tests' own, on loopback: the server names
//! its authorization server in its resource metadata and takes the tokens
//! that server issued; each authorization server keeps every request it
//! gets (its metadata, registrations, authorization requests, token
//! requests) and can misbehave (name another issuer, redirect back with a
//! forged `state` or `iss`, or with a refusal). The user is played by a
//! redirect handler that asks for the authorization URL and reads the
//! redirect it answers with, as a browser would be sent.

use std::collections::{BTreeMap, HashMap};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use actix_mcp::client::oauth::{identity_assertion, AuthorizationResponse, ClientSecret, OAuth};
use actix_mcp::client::{Client, ClientError, ClientOptions};
use actix_web::http::StatusCode;
use actix_web::{web, App, HttpRequest, HttpResponse, HttpServer};
use base64::Engine;
use serde_json::{json, Value};
use sha2::Digest;

/// Where the authorization server sends the user back (nothing listens
/// there: the redirect handler reads the redirect instead of following it).
const REDIRECT_URI: &str = "http://127.0.0.1:8976/callback";

/// The PKCE S256 challenge of a verifier (RFC 7636 §4.2).
fn s256(verifier: &str) -> String {
    base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(&sha2::Sha256::digest(verifier.as_bytes())[..])
}

/// How an authorization server redirects the user back from `/authorize`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
enum Redirect {
    /// With a code, the `state` the client sent and its own issuer as `iss`.
    #[default]
    Honest,
    /// With a `state` the client did not send.
    ForgedState,
    /// With another issuer as `iss`.
    ForeignIss,
    /// Without `iss`, though its metadata promises one.
    NoIss,
    /// With `error=access_denied` (the user said no), once; honest after.
    DenyOnce,
}

/// One request an authorization server received: its endpoint
/// (`metadata`, `register`, `authorize`, `token`) and its parameters (the
/// query of an authorization request, the form of a token request, the
/// members of a registration).
#[derive(Debug, Clone)]
struct Received {
    endpoint: &'static str,
    params: BTreeMap<String, String>,
}

/// What an authorization code was issued for.
#[derive(Debug)]
struct Code {
    client_id: String,
    challenge: String,
    method: String,
    redirect_uri: String,
    resource: Option<String>,
}

#[derive(Debug, Default)]
struct AsState {
    /// The issuer its metadata names (`None`: its own URL, as it should).
    claims: Option<String>,
    redirect: Redirect,
    /// `expires_in` of the tokens it issues, except those of a refresh
    /// (an hour).
    lifetime: u64,
    /// The codes not yet redeemed, and how many were issued.
    codes: HashMap<String, Code>,
    codes_issued: usize,
    /// Every access token it issued, in order.
    issued: Vec<String>,
    refresh_tokens: Vec<String>,
    registered: usize,
    received: Vec<Received>,
}

/// An authorization server's identity and state, shared with its handlers.
#[derive(Debug)]
struct AsShared {
    /// What its codes, clients and tokens are named after (`a-token-1`).
    name: &'static str,
    /// Its issuer identifier (`http://127.0.0.1:PORT`).
    url: String,
    state: Mutex<AsState>,
}

impl AsShared {
    /// Whether it issued `token`.
    fn issued(&self, token: &str) -> bool {
        self.state.lock().unwrap().issued.iter().any(|t| t == token)
    }
}

/// An authorization server on a loopback port: RFC 8414 metadata (which
/// promises RFC 9207's `iss` and S256), dynamic registration (public
/// clients), the authorization endpoint (redirecting back at once, as a
/// user who consents) and the token endpoint (any grant; a code only with
/// the verifier of its challenge, its client, redirect URI and resource).
struct FakeAs {
    shared: Arc<AsShared>,
    handle: actix_web::dev::ServerHandle,
}

impl FakeAs {
    fn start(name: &'static str) -> Self {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let url = format!("http://{}", listener.local_addr().unwrap());
        let state = AsState { lifetime: 3600, ..Default::default() };
        let shared = Arc::new(AsShared { name, url, state: Mutex::new(state) });
        let data = web::Data::from(shared.clone());
        let server = HttpServer::new(move || {
            App::new()
                .app_data(data.clone())
                .route("/.well-known/oauth-authorization-server", web::get().to(as_metadata))
                .route("/register", web::post().to(as_register))
                .route("/authorize", web::get().to(as_authorize))
                .route("/token", web::post().to(as_token))
        })
        .workers(1)
        .disable_signals()
        .listen(listener)
        .unwrap()
        .run();
        let handle = server.handle();
        actix_rt::spawn(server);
        FakeAs { shared, handle }
    }

    fn url(&self) -> &str {
        &self.shared.url
    }

    fn with(&self, edit: impl FnOnce(&mut AsState)) {
        edit(&mut self.shared.state.lock().unwrap());
    }

    /// Every request received so far, in order.
    fn received(&self) -> Vec<Received> {
        self.shared.state.lock().unwrap().received.clone()
    }

    /// The endpoints of the requests received since the first `from`.
    fn endpoints_since(&self, from: usize) -> Vec<&'static str> {
        self.received()[from..].iter().map(|r| r.endpoint).collect()
    }

    /// The parameters of each request received at `endpoint`, in order.
    fn at(&self, endpoint: &str) -> Vec<BTreeMap<String, String>> {
        self.received().into_iter().filter(|r| r.endpoint == endpoint).map(|r| r.params).collect()
    }

    async fn stop(self) {
        self.handle.stop(false).await;
    }
}

fn received(data: &AsShared, endpoint: &'static str, params: BTreeMap<String, String>) {
    data.state.lock().unwrap().received.push(Received { endpoint, params });
}

async fn as_metadata(data: web::Data<AsShared>) -> HttpResponse {
    received(&data, "metadata", BTreeMap::new());
    let url = &data.url;
    let issuer = data.state.lock().unwrap().claims.clone().unwrap_or_else(|| url.clone());
    HttpResponse::Ok().json(json!({
        "issuer": issuer,
        "authorization_endpoint": format!("{url}/authorize"),
        "token_endpoint": format!("{url}/token"),
        "registration_endpoint": format!("{url}/register"),
        "response_types_supported": ["code"],
        "code_challenge_methods_supported": ["S256"],
        "token_endpoint_auth_methods_supported": ["none"],
        "authorization_response_iss_parameter_supported": true,
    }))
}

async fn as_register(data: web::Data<AsShared>, body: web::Json<Value>) -> HttpResponse {
    let body = body.into_inner();
    let members = body.as_object().cloned().unwrap_or_default();
    let params = members.into_iter().map(|(k, v)| (k, v.as_str().map_or_else(|| v.to_string(), str::to_owned)));
    received(&data, "register", params.collect());
    let mut state = data.state.lock().unwrap();
    state.registered += 1;
    let client_id = format!("{}-client-{}", data.name, state.registered);
    HttpResponse::Created().json(json!({"client_id": client_id, "token_endpoint_auth_method": "none",
        "redirect_uris": body["redirect_uris"]}))
}

async fn as_authorize(data: web::Data<AsShared>, query: web::Query<BTreeMap<String, String>>) -> HttpResponse {
    let query = query.into_inner();
    received(&data, "authorize", query.clone());
    let get = |k: &str| query.get(k).cloned().unwrap_or_default();
    let Ok(mut back) = url::Url::parse(&get("redirect_uri")) else {
        return HttpResponse::BadRequest().body("redirect_uri is not a URL");
    };
    let mut state = data.state.lock().unwrap();
    let mode = state.redirect;
    if mode == Redirect::DenyOnce {
        state.redirect = Redirect::Honest;
        back.query_pairs_mut()
            .append_pair("error", "access_denied")
            .append_pair("error_description", "the user said no")
            .append_pair("state", &get("state"))
            .append_pair("iss", &data.url);
    } else {
        state.codes_issued += 1;
        let code = format!("{}-code-{}", data.name, state.codes_issued);
        let issued = Code {
            client_id: get("client_id"),
            challenge: get("code_challenge"),
            method: get("code_challenge_method"),
            redirect_uri: get("redirect_uri"),
            resource: query.get("resource").cloned(),
        };
        state.codes.insert(code.clone(), issued);
        let sent_state = match mode {
            Redirect::ForgedState => "forged-state".to_owned(),
            _ => get("state"),
        };
        let mut pairs = back.query_pairs_mut();
        pairs.append_pair("code", &code).append_pair("state", &sent_state);
        match mode {
            Redirect::ForeignIss => {
                pairs.append_pair("iss", "https://impostor.example");
            }
            Redirect::NoIss => {}
            _ => {
                pairs.append_pair("iss", &data.url);
            }
        }
    }
    HttpResponse::Found().insert_header(("Location", back.to_string())).finish()
}

async fn as_token(data: web::Data<AsShared>, form: web::Form<BTreeMap<String, String>>) -> HttpResponse {
    let form = form.into_inner();
    received(&data, "token", form.clone());
    let get = |k: &str| form.get(k).map(String::as_str);
    let mut state = data.state.lock().unwrap();
    let lifetime = match get("grant_type").unwrap_or_default() {
        "authorization_code" => {
            // A code is redeemed once, by the verifier of its S256
            // challenge, for its client, redirect URI and resource.
            let code = get("code").and_then(|c| state.codes.remove(c));
            let redeemed = code.is_some_and(|c| {
                c.method == "S256"
                    && get("code_verifier").is_some_and(|v| s256(v) == c.challenge)
                    && get("client_id") == Some(c.client_id.as_str())
                    && get("redirect_uri") == Some(c.redirect_uri.as_str())
                    && get("resource") == c.resource.as_deref()
            });
            if !redeemed {
                return HttpResponse::BadRequest().json(json!({"error": "invalid_grant"}));
            }
            state.lifetime
        }
        "refresh_token" => {
            let known = get("refresh_token").is_some_and(|r| state.refresh_tokens.iter().any(|t| t == r));
            if !known {
                return HttpResponse::BadRequest().json(json!({"error": "invalid_grant"}));
            }
            3600
        }
        _ => state.lifetime,
    };
    let n = state.issued.len() + 1;
    let (access, refresh) = (format!("{}-token-{n}", data.name), format!("{}-refresh-{n}", data.name));
    state.issued.push(access.clone());
    state.refresh_tokens.push(refresh.clone());
    HttpResponse::Ok().json(json!({"access_token": access, "token_type": "Bearer", "expires_in": lifetime,
        "refresh_token": refresh}))
}

#[derive(Debug)]
struct ResourceState {
    /// The authorization server its resource metadata names, the only one
    /// whose tokens it takes.
    names: Arc<AsShared>,
    /// Tokens it no longer takes.
    revoked: Vec<String>,
    /// Whether `tools/call` wants a scope no token has: 403
    /// `insufficient_scope` (for `notes:write`), every time.
    wants_more_scope: bool,
    /// Every POST: its JSON-RPC method and the bearer token it carried
    /// (`none`), as `"METHOD TOKEN"`.
    posts: Vec<String>,
}

#[derive(Debug)]
struct ResourceShared {
    /// `http://127.0.0.1:PORT`.
    origin: String,
    state: Mutex<ResourceState>,
}

/// A stateless MCP server guarded by OAuth on a loopback port: its
/// resource metadata (RFC 9728) at the path-aware well-known URL, named in
/// every challenge, lists the `notes:read` scope and one authorization
/// server; it takes that server's tokens only, and answers
/// `server/discover` and `tools/call` (`done`).
struct FakeResource {
    /// The MCP endpoint, `http://127.0.0.1:PORT/mcp`: the resource.
    url: String,
    shared: Arc<ResourceShared>,
    handle: actix_web::dev::ServerHandle,
}

impl FakeResource {
    fn start(names: &FakeAs) -> Self {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let origin = format!("http://{}", listener.local_addr().unwrap());
        let state = ResourceState {
            names: names.shared.clone(),
            revoked: Vec::new(),
            wants_more_scope: false,
            posts: Vec::new(),
        };
        let shared = Arc::new(ResourceShared { origin: origin.clone(), state: Mutex::new(state) });
        let data = web::Data::from(shared.clone());
        let server = HttpServer::new(move || {
            App::new()
                .app_data(data.clone())
                .route("/mcp", web::post().to(resource_post))
                .route("/.well-known/oauth-protected-resource/mcp", web::get().to(resource_metadata))
        })
        .workers(1)
        .disable_signals()
        .listen(listener)
        .unwrap()
        .run();
        let handle = server.handle();
        actix_rt::spawn(server);
        FakeResource { url: format!("{origin}/mcp"), shared, handle }
    }

    fn with(&self, edit: impl FnOnce(&mut ResourceState)) {
        edit(&mut self.shared.state.lock().unwrap());
    }

    /// From now on its metadata names `auth`, whose tokens alone it takes.
    fn names(&self, auth: &FakeAs) {
        self.with(|s| s.names = auth.shared.clone());
    }

    /// Every token issued so far is taken no more.
    fn revoke_all(&self) {
        let issued = self.shared.state.lock().unwrap().names.state.lock().unwrap().issued.clone();
        self.with(|s| s.revoked.extend(issued));
    }

    /// Every POST so far, as `"METHOD TOKEN"`.
    fn posts(&self) -> Vec<String> {
        self.shared.state.lock().unwrap().posts.clone()
    }

    /// How many POSTs of `method` so far.
    fn count(&self, method: &str) -> usize {
        self.posts().iter().filter(|p| p.split(' ').next() == Some(method)).count()
    }

    async fn stop(self) {
        self.handle.stop(false).await;
    }
}

async fn resource_metadata(data: web::Data<ResourceShared>) -> HttpResponse {
    let names = data.state.lock().unwrap().names.url.clone();
    HttpResponse::Ok().json(json!({"resource": format!("{}/mcp", data.origin), "authorization_servers": [names],
        "scopes_supported": ["notes:read"]}))
}

async fn resource_post(data: web::Data<ResourceShared>, req: HttpRequest, body: web::Bytes) -> HttpResponse {
    let request: Value = serde_json::from_slice(&body).unwrap_or(Value::Null);
    let method = request["method"].as_str().unwrap_or_default().to_owned();
    let authorization = req.headers().get("authorization").and_then(|v| v.to_str().ok());
    let token = authorization.and_then(|v| v.strip_prefix("Bearer ")).map(str::to_owned);
    let mut state = data.state.lock().unwrap();
    state.posts.push(format!("{method} {}", token.as_deref().unwrap_or("none")));
    let prm = format!("{}/.well-known/oauth-protected-resource/mcp", data.origin);
    let taken = token.as_deref().is_some_and(|t| !state.revoked.iter().any(|r| r == t) && state.names.issued(t));
    if !taken {
        let error = if token.is_some() { r#"error="invalid_token", "# } else { "" };
        return refusal(401, format!(r#"Bearer {error}resource_metadata="{prm}""#), &request);
    }
    if method == "tools/call" && state.wants_more_scope {
        let challenge = format!(r#"Bearer error="insufficient_scope", scope="notes:write", resource_metadata="{prm}""#);
        return refusal(403, challenge, &request);
    }
    let result = match method.as_str() {
        "server/discover" => json!({"resultType": "complete", "supportedVersions": ["2026-07-28"],
            "capabilities": {"tools": {}}, "ttlMs": 0, "cacheScope": "public"}),
        "tools/call" => json!({"resultType": "complete", "content": [{"type": "text", "text": "done"}]}),
        _ => json!({}),
    };
    match request.get("id") {
        None => HttpResponse::Accepted().finish(),
        Some(id) => HttpResponse::Ok().json(json!({"jsonrpc": "2.0", "id": id, "result": result})),
    }
}

/// A refusal of the credentials: `status` with its challenge and a
/// JSON-RPC error.
fn refusal(status: u16, challenge: String, request: &Value) -> HttpResponse {
    let error = json!({"jsonrpc": "2.0", "id": request["id"], "error": {"code": -32001, "message": "unauthorized"}});
    HttpResponse::build(StatusCode::from_u16(status).unwrap())
        .insert_header(("WWW-Authenticate", challenge))
        .json(error)
}

/// Plays the user: asks for the authorization URL and reads the redirect
/// it answers with.
async fn follow_redirect(url: String) -> Result<AuthorizationResponse, String> {
    let http =
        reqwest::Client::builder().redirect(reqwest::redirect::Policy::none()).build().map_err(|e| e.to_string())?;
    let resp = http.get(&url).send().await.map_err(|e| e.to_string())?;
    let location = resp.headers().get("location").and_then(|v| v.to_str().ok()).map(str::to_owned);
    let location = location.ok_or_else(|| format!("no redirect from {url} (HTTP {})", resp.status()))?;
    AuthorizationResponse::from_redirect(&location)
}

/// The authorization code grant for `resource`, the user played by [`follow_redirect`].
fn code_grant(resource: &str) -> OAuth {
    OAuth::authorization_code(resource, "oauth-test", REDIRECT_URI, follow_redirect)
}

fn options(oauth: OAuth) -> ClientOptions {
    ClientOptions::new("oauth-test", "1").timeout(Duration::from_secs(20)).token_provider(oauth)
}

/// The message of the credentials error `outcome` must be.
fn auth_error<T>(outcome: Result<T, ClientError>) -> String {
    match outcome {
        Err(ClientError::Auth { message, .. }) => message,
        Err(other) => panic!("a credentials error, not {other}"),
        Ok(_) => panic!("a credentials error, not an answer"),
    }
}

/// The client guide: the authorization server's metadata is read, "whose
/// `issuer` must be the one the resource named". The resource names its
/// authorization server, whose metadata names another issuer — another
/// server, then the same URL with a trailing slash (RFC 8414 §3.3: the
/// identical string): the connection fails naming both, and nothing more
/// is asked of that server (no registration, no authorization, no token).
/// Once its metadata names the issuer the resource named, the same client
/// connects.
#[actix_rt::test]
async fn the_authorization_server_must_be_the_issuer_the_resource_named() {
    let auth = FakeAs::start("a");
    let resource = FakeResource::start(&auth);
    for claimed in ["https://impostor.example".to_owned(), format!("{}/", auth.url())] {
        auth.with(|s| s.claims = Some(claimed.clone()));
        let (asked, posted) = (auth.received().len(), resource.posts().len());
        let message = auth_error(Client::connect(&resource.url, options(code_grant(&resource.url))).await);
        assert!(message.contains(&format!("names the issuer {claimed:?}, not {:?}", auth.url())), "{message}");
        assert_eq!(auth.endpoints_since(asked), ["metadata"], "nothing asked of a server that is not the issuer named");
        assert_eq!(resource.posts()[posted..], ["server/discover none"], "the request is not sent again");
    }
    auth.with(|s| s.claims = None);
    let client = Client::connect(&resource.url, options(code_grant(&resource.url))).await.unwrap();
    client.call_tool("notes", json!({})).await.unwrap();
    resource.stop().await;
    auth.stop().await;
}

/// The client guide: the authorization code grant runs "with PKCE (S256)
/// and `state`", and "The `resource` parameter (RFC 8707) goes with every
/// authorization and token request". The authorization request asks for
/// `code_challenge_method=S256`, its `code_challenge` the S256 of the
/// `code_verifier` then sent with the code (43 to 128 unreserved
/// characters, RFC 7636 §4.1), and a `state`; the code's token expires at
/// once, so the next request refreshes it first: the authorization request,
/// the code's token request and the refresh each name the resource — the
/// MCP endpoint, as its metadata says. The expired token is never presented.
#[actix_rt::test]
async fn the_code_grant_uses_pkce_s256_and_state_and_names_the_resource_every_time() {
    let auth = FakeAs::start("a");
    // Expired on arrival (the client refreshes within 10 s of expiry).
    auth.with(|s| s.lifetime = 1);
    let resource = FakeResource::start(&auth);
    let client = Client::connect(&resource.url, options(code_grant(&resource.url))).await.unwrap();
    client.call_tool("notes", json!({})).await.unwrap();
    assert_eq!(auth.endpoints_since(0), ["metadata", "register", "authorize", "token", "token"]);
    let (authorizations, tokens) = (auth.at("authorize"), auth.at("token"));
    let (authorize, code, refresh) = (&authorizations[0], &tokens[0], &tokens[1]);
    assert_eq!(authorize["response_type"], "code");
    for params in [authorize, code] {
        assert_eq!(params["client_id"], "a-client-1", "{params:?}");
        assert_eq!(params["redirect_uri"], REDIRECT_URI, "{params:?}");
    }
    // PKCE, S256.
    assert_eq!(authorize["code_challenge_method"], "S256");
    let verifier = &code["code_verifier"];
    let unreserved = verifier.bytes().all(|b| b.is_ascii_alphanumeric() || b"-._~".contains(&b));
    assert!((43..=128).contains(&verifier.len()) && unreserved, "a verifier of RFC 7636: {verifier:?}");
    assert_eq!(authorize["code_challenge"], s256(verifier), "the challenge is the S256 of the verifier sent");
    assert!(authorize.get("state").is_some_and(|s| !s.is_empty()), "a state: {authorize:?}");
    assert_eq!((code["grant_type"].as_str(), code["code"].as_str()), ("authorization_code", "a-code-1"));
    assert_eq!((refresh["grant_type"].as_str(), refresh["refresh_token"].as_str()), ("refresh_token", "a-refresh-1"));
    for (what, params) in [("authorization", authorize), ("code's token", code), ("refresh", refresh)] {
        assert_eq!(params.get("resource"), Some(&resource.url), "the {what} request names the resource: {params:?}");
    }
    // The code's token, expired, was refreshed before the retry: never presented.
    assert_eq!(resource.posts(), ["server/discover none", "server/discover a-token-2", "tools/call a-token-2"]);
    resource.stop().await;
    auth.stop().await;
}

/// The client guide: the code grant checks its `state` and "RFC 9207's
/// `iss`". The authorization server redirects back with a `state` the
/// client did not send, then with another issuer's `iss`, then with no
/// `iss` though its metadata promises one: each connection fails saying
/// why, and the code is never redeemed (no token request). Redirected back
/// honestly, the client connects.
#[actix_rt::test]
async fn a_redirect_with_a_forged_state_or_issuer_is_refused() {
    let auth = FakeAs::start("a");
    let resource = FakeResource::start(&auth);
    let cases = [
        (Redirect::ForgedState, "the authorization response's state is not the one sent".to_owned()),
        (Redirect::ForeignIss, format!("names the issuer \"https://impostor.example\", not {:?}", auth.url())),
        (Redirect::NoIss, "lacks the iss its server promised".to_owned()),
    ];
    for (redirect, why) in cases {
        auth.with(|s| s.redirect = redirect);
        let asked = auth.received().len();
        let message = auth_error(Client::connect(&resource.url, options(code_grant(&resource.url))).await);
        assert!(message.contains(&why), "{redirect:?}: {message}");
        assert_eq!(
            auth.endpoints_since(asked),
            ["metadata", "register", "authorize"],
            "{redirect:?}: no token request"
        );
    }
    auth.with(|s| s.redirect = Redirect::Honest);
    let client = Client::connect(&resource.url, options(code_grant(&resource.url))).await.unwrap();
    client.call_tool("notes", json!({})).await.unwrap();
    assert_eq!(auth.at("token").len(), 1, "the honest redirect's code alone was redeemed");
    resource.stop().await;
    auth.stop().await;
}

/// The client guide: "The `resource` parameter (RFC 8707) goes with every
/// authorization and token request" — of the other grants too: client
/// credentials, the JWT-bearer grant (whose assertion source is asked for
/// one for the issuer and the resource), and the enterprise identity
/// assertion, whose token exchange at the identity provider names the
/// resource as well. Each token request names the MCP endpoint.
#[actix_rt::test]
async fn the_resource_goes_with_the_token_requests_of_every_grant() {
    let auth = FakeAs::start("a");
    let idp = FakeAs::start("idp");
    let resource = FakeResource::start(&auth);
    let url = resource.url.clone();

    let machine = OAuth::client_credentials(&url, "machine", ClientSecret::Secret("machine-secret".into()));
    Client::connect(&url, options(machine)).await.unwrap().call_tool("notes", json!({})).await.unwrap();

    let asked: Arc<Mutex<Vec<(String, String)>>> = Arc::default();
    let log = asked.clone();
    let workload = OAuth::jwt_bearer(&url, "workload", None, move |issuer: String, audience: String| {
        log.lock().unwrap().push((issuer, audience));
        async { Ok::<String, String>("workload-assertion".to_owned()) }
    });
    Client::connect(&url, options(workload)).await.unwrap().call_tool("notes", json!({})).await.unwrap();
    assert_eq!(*asked.lock().unwrap(), [(auth.url().to_owned(), url.clone())]);

    let exchange = identity_assertion(&format!("{}/token", idp.url()), "idp-client", "alice-id-token");
    let enterprise = OAuth::jwt_bearer(&url, "enterprise-app", None, exchange);
    Client::connect(&url, options(enterprise)).await.unwrap().call_tool("notes", json!({})).await.unwrap();

    let grants: Vec<(String, Option<String>)> =
        auth.at("token").into_iter().map(|f| (f["grant_type"].clone(), f.get("resource").cloned())).collect();
    let named = |grant: &str| (grant.to_owned(), Some(url.clone()));
    let jwt_bearer = "urn:ietf:params:oauth:grant-type:jwt-bearer";
    assert_eq!(grants, [named("client_credentials"), named(jwt_bearer), named(jwt_bearer)]);
    let assertions: Vec<String> = auth.at("token").into_iter().filter_map(|f| f.get("assertion").cloned()).collect();
    assert_eq!(assertions, ["workload-assertion", "idp-token-1"], "the exchanged assertion is the one presented");
    let exchanged = idp.at("token");
    assert_eq!(exchanged.len(), 1);
    assert_eq!(exchanged[0]["grant_type"], "urn:ietf:params:oauth:grant-type:token-exchange");
    assert_eq!(
        (exchanged[0].get("resource"), exchanged[0].get("audience")),
        (Some(&url), Some(&auth.url().to_owned()))
    );
    resource.stop().await;
    auth.stop().await;
    idp.stop().await;
}

/// Expects the refusal of a call for want of scope: 403 with its challenge.
fn insufficient_scope<T>(outcome: Result<T, ClientError>) {
    match outcome {
        Err(ClientError::Auth { status: 403, challenge: Some(c), .. }) if c.contains("insufficient_scope") => {}
        Err(other) => panic!("the 403 insufficient_scope refusal, not {other}"),
        Ok(_) => panic!("the 403 insufficient_scope refusal, not an answer"),
    }
}

/// The client guide: a 403 `insufficient_scope` "re-authorizes with the
/// union of the old and the challenged scopes, at most `max_step_ups`
/// times in a row". A server that refuses every call for want of scope,
/// counted at the authorization server: by default (2) a call is
/// re-authorized twice — asking for the union, each time with a state and
/// a PKCE challenge of its own — then fails with the refusal, after three
/// tries (fewer than the four the client's own bound of retries allows);
/// a second call, still in a row, is not re-authorized at all. With
/// `max_step_ups(1)`, once. A full authorization (the server refusing a
/// token with 401) starts the count over.
#[actix_rt::test]
async fn a_step_up_reauthorizes_at_most_max_step_ups_times_in_a_row() {
    let auth = FakeAs::start("a");
    let resource = FakeResource::start(&auth);
    resource.with(|s| s.wants_more_scope = true);

    let client = Client::connect(&resource.url, options(code_grant(&resource.url))).await.unwrap();
    assert_eq!(auth.at("authorize").len(), 1, "the first authorization");
    insufficient_scope(client.call_tool("notes", json!({})).await);
    let authorizations = auth.at("authorize");
    assert_eq!(authorizations.len(), 3, "two step-ups (max_step_ups 2), not more");
    assert_eq!(resource.count("tools/call"), 3, "the call, then once after each step-up");
    let scopes: Vec<&str> = authorizations.iter().map(|q| q["scope"].as_str()).collect();
    assert_eq!(scopes, ["notes:read", "notes:read notes:write", "notes:read notes:write"]);
    let distinct = |key: &str| authorizations.iter().map(|q| &q[key]).collect::<std::collections::BTreeSet<_>>().len();
    assert_eq!((distinct("state"), distinct("code_challenge")), (3, 3), "a state and a challenge per authorization");
    insufficient_scope(client.call_tool("notes", json!({})).await);
    assert_eq!(auth.at("authorize").len(), 3, "no step-up for the next refusal in a row");
    assert_eq!(resource.count("tools/call"), 4);

    // max_step_ups(1): one step-up.
    let (authorized, called) = (auth.at("authorize").len(), resource.count("tools/call"));
    let once = Client::connect(&resource.url, options(code_grant(&resource.url).max_step_ups(1))).await.unwrap();
    insufficient_scope(once.call_tool("notes", json!({})).await);
    assert_eq!(auth.at("authorize").len() - authorized, 2, "its first authorization and one step-up");
    assert_eq!(resource.count("tools/call") - called, 2);
    // Its token refused (401): authorized in full again, then one step-up again.
    resource.revoke_all();
    let (authorized, called) = (auth.at("authorize").len(), resource.count("tools/call"));
    insufficient_scope(once.call_tool("notes", json!({})).await);
    assert_eq!(auth.at("authorize").len() - authorized, 2, "a full authorization, then one step-up");
    assert_eq!(resource.count("tools/call") - called, 3, "refused with 401, then twice with 403");
    resource.stop().await;
    auth.stop().await;
}

/// The client guide: "registrations and tokens are kept per issuer, so a
/// resource that moves to another authorization server gets a
/// registration there". A resource authorized at A moves to B (whose
/// first authorization the user refuses), then back to A: A's token is not
/// presented once the resource names B (the request after the refusal
/// carries none), B registers the client once and A once — back at A, the
/// client is A's first registration again — and each authorization and
/// token request at a server names the client registered there.
#[actix_rt::test]
async fn registrations_and_tokens_are_kept_per_issuer() {
    let (a, b) = (FakeAs::start("a"), FakeAs::start("b"));
    let resource = FakeResource::start(&a);
    let client = Client::connect(&resource.url, options(code_grant(&resource.url))).await.unwrap();
    client.call_tool("notes", json!({})).await.unwrap();

    resource.names(&b);
    b.with(|s| s.redirect = Redirect::DenyOnce);
    let message = auth_error(client.call_tool("notes", json!({})).await);
    assert!(message.contains("access_denied"), "{message}");
    client.call_tool("notes", json!({})).await.unwrap();

    resource.names(&a);
    client.call_tool("notes", json!({})).await.unwrap();

    assert_eq!(
        resource.posts(),
        [
            "server/discover none",
            "server/discover a-token-1",
            "tools/call a-token-1",
            // Moved to B: A's token refused, B's authorization refused by the user.
            "tools/call a-token-1",
            // B's issuer has no token yet: A's is not presented.
            "tools/call none",
            "tools/call b-token-1",
            // Back to A: B's token refused, A's new one taken.
            "tools/call b-token-1",
            "tools/call a-token-2",
        ]
    );
    let endpoints = |auth: &FakeAs| auth.endpoints_since(0);
    assert_eq!(endpoints(&a), ["metadata", "register", "authorize", "token", "metadata", "authorize", "token"]);
    assert_eq!(endpoints(&b), ["metadata", "register", "authorize", "metadata", "authorize", "token"]);
    for (auth, client_id) in [(&a, "a-client-1"), (&b, "b-client-1")] {
        let requests = auth.at("authorize").into_iter().chain(auth.at("token"));
        for params in requests {
            assert_eq!(params.get("client_id").map(String::as_str), Some(client_id), "{params:?}");
        }
    }
    resource.stop().await;
    a.stop().await;
    b.stop().await;
}
