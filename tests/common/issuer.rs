//! A tiny authorization server on loopback for the tests that need an
//! issuer to misbehave: RFC 8414 metadata, a JWK set that can answer, fail
//! (503) or hang, and an RFC 7662 introspection endpoint whose answers the
//! test sets. It signs ES256 tokens with a key made at start and counts
//! every request it gets, by path.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use actix_web::{web, App, HttpResponse, HttpServer};
use base64::Engine;
use jsonwebtoken::{encode, Algorithm, EncodingKey, Header};
use serde_json::{json, Value};

/// How the key set answers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Keys {
    /// The key set with the signing key.
    Serve,
    /// 503.
    Fail,
    /// No answer for a minute.
    Hang,
}

#[derive(Debug)]
struct State {
    keys: Keys,
    /// The introspection answer for each token (`{"active": false}` for others).
    introspection: BTreeMap<String, Value>,
    requests: BTreeMap<String, usize>,
}

/// A running issuer.
pub struct Issuer {
    /// Its identifier (`http://127.0.0.1:PORT`).
    pub url: String,
    kid: String,
    pem: String,
    state: Arc<Mutex<State>>,
    handle: actix_web::dev::ServerHandle,
}

fn b64(bytes: &[u8]) -> String {
    base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(bytes)
}

impl Issuer {
    /// Starts one on a free loopback port, in the current actix system.
    pub fn start() -> Self {
        let key = rcgen::KeyPair::generate().expect("a P-256 key");
        let raw = key.public_key_raw();
        assert_eq!((raw.len(), raw[0]), (65, 4), "an uncompressed P-256 point");
        let kid = format!("k-{}", &b64(&raw[1..7]));
        let jwk = json!({"kty": "EC", "crv": "P-256", "x": b64(&raw[1..33]), "y": b64(&raw[33..65]),
            "kid": kid, "alg": "ES256", "use": "sig"});
        let state = Arc::new(Mutex::new(State {
            keys: Keys::Serve,
            introspection: BTreeMap::new(),
            requests: BTreeMap::new(),
        }));
        let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("a loopback port");
        let url = format!("http://{}", listener.local_addr().unwrap());
        let data = web::Data::new((state.clone(), url.clone(), jwk));
        let server = HttpServer::new(move || {
            App::new()
                .app_data(data.clone())
                .route("/.well-known/oauth-authorization-server", web::get().to(metadata))
                .route("/jwks", web::get().to(jwks))
                .route("/introspect", web::post().to(introspect))
        })
        .workers(1)
        .disable_signals()
        .listen(listener)
        .expect("listen")
        .run();
        let handle = server.handle();
        actix_rt::spawn(server);
        Issuer { url, kid, pem: key.serialize_pem(), state, handle }
    }

    /// How the key set answers from now on.
    pub fn set_keys(&self, keys: Keys) {
        self.state.lock().unwrap().keys = keys;
    }

    /// Introspection answers `answer` for `token` from now on.
    pub fn introspects(&self, token: &str, answer: Value) {
        self.state.lock().unwrap().introspection.insert(token.to_owned(), answer);
    }

    /// Requests received at `path` so far.
    pub fn requests(&self, path: &str) -> usize {
        self.state.lock().unwrap().requests.get(path).copied().unwrap_or(0)
    }

    /// A token signed with this issuer's key, with `claims` (`iss` is set
    /// to this issuer unless `claims` has one), typed `typ`.
    pub fn mint_typed(&self, claims: Value, typ: Option<&str>) -> String {
        self.mint_with(claims, typ, &self.kid)
    }

    /// A token typed `at+jwt` (RFC 9068).
    pub fn mint(&self, claims: Value) -> String {
        self.mint_typed(claims, Some("at+jwt"))
    }

    /// A token under key id `kid` (which the key set may not know).
    pub fn mint_with(&self, mut claims: Value, typ: Option<&str>, kid: &str) -> String {
        claims.as_object_mut().unwrap().entry("iss").or_insert_with(|| json!(self.url));
        let mut header = Header::new(Algorithm::ES256);
        header.kid = Some(kid.to_owned());
        header.typ = typ.map(str::to_owned);
        encode(&header, &claims, &EncodingKey::from_ec_pem(self.pem.as_bytes()).unwrap()).unwrap()
    }

    /// The introspection endpoint.
    pub fn introspection_endpoint(&self) -> String {
        format!("{}/introspect", self.url)
    }

    /// Stops it.
    pub async fn stop(&self) {
        self.handle.stop(false).await;
    }
}

type Data = web::Data<(Arc<Mutex<State>>, String, Value)>;

fn count(data: &Data, path: &str) {
    *data.0.lock().unwrap().requests.entry(path.to_owned()).or_default() += 1;
}

async fn metadata(data: Data) -> HttpResponse {
    count(&data, "metadata");
    let url = &data.1;
    HttpResponse::Ok().json(json!({"issuer": url, "jwks_uri": format!("{url}/jwks"),
        "introspection_endpoint": format!("{url}/introspect")}))
}

async fn jwks(data: Data) -> HttpResponse {
    count(&data, "jwks");
    let keys = data.0.lock().unwrap().keys;
    match keys {
        Keys::Serve => HttpResponse::Ok().json(json!({"keys": [data.2]})),
        Keys::Fail => HttpResponse::ServiceUnavailable().body("the key store is down (internal detail 7f3a)"),
        Keys::Hang => {
            tokio::time::sleep(Duration::from_secs(60)).await;
            HttpResponse::ServiceUnavailable().finish()
        }
    }
}

async fn introspect(data: Data, form: web::Form<BTreeMap<String, String>>) -> HttpResponse {
    count(&data, "introspect");
    let token = form.get("token").cloned().unwrap_or_default();
    let answer = data.0.lock().unwrap().introspection.get(&token).cloned();
    HttpResponse::Ok().json(answer.unwrap_or_else(|| json!({"active": false})))
}
