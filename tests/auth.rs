//! Authorization against a real authorization server (oidc-provider on
//! loopback): the server as an OAuth 2.1 resource server — token
//! validation with every way a token can be wrong, key rotation, opaque
//! tokens through introspection, scopes per tool with step-up challenges
//! and list filtering, listen streams ending at token expiry, legacy
//! sessions and `requestState` bound to their subject, two instances
//! behind nginx — plus API keys, a custom authenticator and TLS, which need
//! no authorization server.

use crate::common;

use std::sync::Arc;
use std::time::Duration;

use actix_mcp::auth::{AuthError, Authenticator};
use actix_mcp::facts::head::{Head, Header as HeadHeader};

use actix_mcp::prelude::*;
use base64::Engine;
use common::auth_server::AuthServer;
use common::*;
use jsonwebtoken::{encode, Algorithm, EncodingKey, Header};
use serde_json::{json, Value};

const RESOURCE: &str = "http://mcp.test/mcp";

#[derive(Deserialize, JsonSchema)]
struct Text {
    text: String,
}

/// A server with an open tool, an `admin` tool, a tool that tells who is
/// calling, a tool that asks the client, and a resource needing `files:read`.
fn builder(config: Config) -> McpServerBuilder {
    let whoami = |ctx: RequestContext| async move {
        let id = ctx.auth().expect("an authenticated caller");
        // The server consumed the token: it is not among the headers a handler sees.
        assert!(ctx.headers().is_some_and(|h| h.get("authorization").is_none()));
        Ok(format!("{} {}", id.subject, id.scopes.join(",")))
    };
    let confirm = |ctx: RequestContext| async move {
        let schema = json!({"type": "object", "properties": {"ok": {"type": "boolean"}}});
        let answer = ctx.elicit("confirm", "Sure?", schema)?;
        Ok(format!("{:?}", answer.action))
    };
    McpServer::builder(server_info!())
        .config(config)
        .tool(Tool::new("echo", "Echoes", |t: Text, _ctx| async move { Ok(t.text) }))
        .tool(Tool::no_args("admin_reset", "Resets everything", |_ctx| async { Ok("reset") }).with_scopes(["admin"]))
        .tool(Tool::no_args("whoami", "The caller", whoami))
        .tool(Tool::no_args("confirm", "Asks first", confirm))
        .tool(
            Tool::no_args("long_job", "Runs as a task for a while", |ctx| async move {
                ctx.begin_task().await;
                ctx.sleep(Duration::from_secs(30)).await?;
                Ok("done")
            })
            .with_task_support(TaskSupport::Required),
        )
        .resource(Resource::text("file:///secret.txt", "secret", "text/plain", "s3cret").with_scopes(["files:read"]))
}

fn oauth_config(issuer: &str) -> Config {
    let mut c = test_config();
    c.auth.mode = actix_mcp::config::AuthMode::Oauth;
    c.auth.resource = RESOURCE.into();
    c.auth.issuers = vec![issuer.to_owned()];
    c.auth.required_scopes = vec!["mcp".into()];
    c.auth.leeway_secs = 0;
    c.mrtr.key = base64::engine::general_purpose::STANDARD.encode([7u8; 32]);
    c
}

fn server(config: Config) -> TestServer {
    TestServer::serve(builder(config).build().expect("a valid server"))
}

fn call(id: i64, name: &str, args: Value) -> Value {
    request(json!(id), "tools/call", json!({"name": name, "arguments": args}))
}

async fn post_as(url: &str, token: &str, body: &Value) -> Reply {
    post_with(url, body, |h| set(h, "Authorization", &format!("Bearer {token}"))).await
}

fn challenge(r: &Reply) -> String {
    r.headers.get("www-authenticate").map(|v| v.to_str().unwrap().to_owned()).unwrap_or_default()
}

/// Asserts a 401 for a presented token: the challenge with the metadata
/// URL and `error="invalid_token"`, a JSON-RPC error without an id.
fn assert_invalid(r: &Reply, why: &str) {
    assert_eq!(r.status, 401, "{why}: {}", r.raw);
    let c = challenge(r);
    assert!(
        c.starts_with("Bearer resource_metadata=\"http://mcp.test/.well-known/oauth-protected-resource/mcp\""),
        "{why}: {c}"
    );
    assert!(c.contains("error=\"invalid_token\"") && c.contains("scope=\"mcp\""), "{why}: {c}");
    // Refused from the request's head, before its body (and id) is read.
    assert_eq!(r.response()["id"], Value::Null, "{why}: {}", r.raw);
    assert_eq!(r.error_code(), Some(-32600), "{why}");
}

fn now() -> u64 {
    actix_mcp::auth::now_secs()
}

/// A token signed by `pem` (RS256) with key id `kid` and `claims`.
fn mint(pem: &str, kid: &str, claims: Value) -> String {
    let mut header = Header::new(Algorithm::RS256);
    header.kid = Some(kid.to_owned());
    encode(&header, &claims, &EncodingKey::from_rsa_pem(pem.as_bytes()).unwrap()).unwrap()
}

fn b64(v: &Value) -> String {
    base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(serde_json::to_vec(v).unwrap())
}

#[actix_rt::test]
async fn tokens_are_validated_as_oauth_2_1_asks() {
    let Some(auth) = AuthServer::start("auth::tokens_are_validated_as_oauth_2_1_asks").await else { return };
    let s = server(oauth_config(&auth.issuer));
    let body = call(1, "echo", json!({"text": "hi"}));

    // A valid token from the authorization server, for this resource.
    let token = auth.token("alice", RESOURCE, "mcp").await;
    let r = post_as(&s.url, &token, &body).await;
    assert_eq!((r.status, r.response()["result"]["content"][0]["text"].as_str()), (200, Some("hi")), "{}", r.raw);
    // Scheme and host compare case-insensitively.
    let upper = auth.token("alice", "HTTP://MCP.TEST/mcp", "mcp").await;
    assert_eq!(post_as(&s.url, &upper, &body).await.status, 200);

    // No token: 401 with a bare challenge naming the metadata and scopes.
    let r = post(&s.url, &body).await;
    assert_eq!(r.status, 401);
    let c = challenge(&r);
    assert!(c.contains("resource_metadata=") && c.contains("scope=\"mcp\"") && !c.contains("error="), "{c}");

    // Tokens the server must refuse, each with its reason.
    let keys = auth.hook("keys").await;
    let (pem, kid) = (keys["private_pem"].as_str().unwrap(), keys["kid"].as_str().unwrap());
    let claims = |edit: &dyn Fn(&mut Value)| {
        let mut c = json!({"iss": auth.issuer, "sub": "mallory", "aud": RESOURCE, "scope": "mcp",
                           "iat": now(), "exp": now() + 300});
        edit(&mut c);
        c
    };
    assert_eq!(post_as(&s.url, &mint(pem, kid, claims(&|_| {})), &body).await.status, 200, "the minted control token");
    let other_resource = auth.token("alice", "https://another-resource.example.com/mcp", "mcp").await;
    let public_pem = keys["public_pem"].as_str().unwrap();
    let hs256 = encode(
        &Header { kid: Some(kid.to_owned()), ..Header::new(Algorithm::HS256) },
        &claims(&|_| {}),
        &EncodingKey::from_secret(public_pem.as_bytes()).unwrap(),
    )
    .unwrap();
    let none = format!("{}.{}.", b64(&json!({"alg": "none", "typ": "JWT"})), b64(&claims(&|_| {})));
    let refused = [
        ("malformed", "abc.def.ghi".to_owned()),
        ("not a JWT and no introspection", "opaque-but-unknown".to_owned()),
        ("expired", mint(pem, kid, claims(&|c| c["exp"] = json!(now() - 600)))),
        ("not yet valid", mint(pem, kid, claims(&|c| c["nbf"] = json!(now() + 600)))),
        ("wrong audience", other_resource),
        ("no audience", mint(pem, kid, claims(&|c| drop(c.as_object_mut().unwrap().remove("aud"))))),
        ("wrong issuer", mint(pem, kid, claims(&|c| c["iss"] = json!("http://127.0.0.1:9/")))),
        ("untrusted key", mint(keys["untrusted_pem"].as_str().unwrap(), kid, claims(&|_| {}))),
        ("alg none", none),
        ("HS256 with the public key", hs256),
        ("no exp", mint(pem, kid, claims(&|c| drop(c.as_object_mut().unwrap().remove("exp"))))),
    ];
    for (why, token) in &refused {
        assert_invalid(&post_as(&s.url, token, &body).await, why);
    }
    // A malformed token is named so, with no detail of the parser that failed.
    let r = post_as(&s.url, "abc.def.ghi", &body).await;
    assert_eq!(r.response()["error"]["message"], "Unauthorized: invalid token: malformed token", "{}", r.raw);
    assert!(challenge(&r).ends_with("error_description=\"invalid token: malformed token\""), "{}", challenge(&r));

    // A token in the query string is refused (400), not read.
    let r = post_with(&format!("{}?access_token={token}", s.url), &body, |_| {}).await;
    assert_eq!(r.status, 400, "{}", r.raw);
    assert!(challenge(&r).contains("error=\"invalid_request\""));

    // The handler sees who calls.
    let r = post_as(&s.url, &token, &call(2, "whoami", json!({}))).await;
    assert_eq!(r.response()["result"]["content"][0]["text"], "alice mcp", "{}", r.raw);
    s.stop().await;
}

#[actix_rt::test]
async fn rotated_keys_are_fetched_and_unknown_key_ids_are_rate_limited() {
    let Some(auth) = AuthServer::start("auth::rotated_keys").await else { return };
    let mut config = oauth_config(&auth.issuer);
    config.auth.jwks_min_refresh_secs = 1;
    let s = server(config);
    let body = call(1, "echo", json!({"text": "hi"}));
    let first = auth.token("alice", RESOURCE, "mcp").await;
    assert_eq!(post_as(&s.url, &first, &body).await.status, 200);
    let fetched = auth.hook("stats").await["jwks"].as_u64().unwrap();
    assert_eq!(fetched, 1);

    // A flood of tokens with made-up key ids: at most one refetch per second.
    let keys = auth.hook("keys").await;
    let pem = keys["private_pem"].as_str().unwrap();
    let claims = json!({"iss": auth.issuer, "sub": "m", "aud": RESOURCE, "scope": "mcp", "exp": now() + 60});
    let flood = std::time::Instant::now();
    for i in 0..30 {
        let r = post_as(&s.url, &mint(pem, &format!("made-up-{i}"), claims.clone()), &body).await;
        assert_eq!(r.status, 401);
    }
    let after_flood = auth.hook("stats").await["jwks"].as_u64().unwrap();
    // One refetch per started second of the flood (a loaded machine may
    // take longer than a second over 30 requests).
    let seconds = flood.elapsed().as_secs() + 1;
    assert!(after_flood <= fetched + seconds, "{after_flood} key-set fetches after 30 unknown key ids in {seconds} s");

    // The issuer rotates its key: a token signed with the new key is
    // accepted once the refresh interval allows a refetch, without restart.
    let rotated = auth.hook("rotate").await;
    assert_ne!(rotated["kid"], keys["kid"]);
    tokio::time::sleep(Duration::from_millis(1100)).await;
    let second = auth.token("alice", RESOURCE, "mcp").await;
    let r = post_as(&s.url, &second, &body).await;
    assert_eq!(r.status, 200, "{}", r.raw);
    // The first token stays valid from the cache (its key is gone at the issuer).
    assert_eq!(post_as(&s.url, &first, &body).await.status, 200);
    s.stop().await;
}

#[actix_rt::test]
async fn opaque_tokens_are_introspected_and_revocation_takes_effect() {
    let Some(auth) = AuthServer::start("auth::opaque_tokens").await else { return };
    let mut config = oauth_config(&auth.issuer);
    config.auth.introspection.endpoint = format!("{}/token/introspection", auth.issuer);
    config.auth.introspection.client_id = "rs".into();
    config.auth.introspection.client_secret = "rs-secret".into();
    let s = server(config);
    let token = auth.token("opaque", RESOURCE, "mcp").await;
    assert_eq!(token.matches('.').count(), 0, "an opaque token: {token}");
    let r = post_as(&s.url, &token, &call(1, "whoami", json!({}))).await;
    assert_eq!(r.response()["result"]["content"][0]["text"], "opaque mcp", "{}", r.raw);
    auth.revoke("opaque", &token).await;
    assert_invalid(&post_as(&s.url, &token, &call(1, "whoami", json!({}))).await, "revoked");
    // An opaque token for another resource: introspection names its audience.
    let other = auth.token("opaque", "https://another-resource.example.com/mcp", "mcp").await;
    assert_invalid(&post_as(&s.url, &other, &call(1, "whoami", json!({}))).await, "other audience");
    s.stop().await;
}

#[actix_rt::test]
async fn scopes_per_tool_step_up_and_list_filtering() {
    let Some(auth) = AuthServer::start("auth::scopes").await else { return };
    let mut config = oauth_config(&auth.issuer);
    config.auth.scope_implies.insert("files".into(), vec!["files:read".into(), "files:write".into()]);
    let s = server(config);
    let plain = auth.token("alice", RESOURCE, "mcp").await;
    let admin = auth.token("alice", RESOURCE, "mcp admin").await;

    // Insufficient scope for one tool: 403 with the step-up challenge…
    let r = post_as(&s.url, &plain, &call(1, "admin_reset", json!({}))).await;
    assert_eq!(r.status, 403, "{}", r.raw);
    let c = challenge(&r);
    assert!(c.contains("error=\"insufficient_scope\""), "{c}");
    assert!(c.contains("scope=\"mcp admin\""), "every scope the operation needs: {c}");
    assert!(c.contains("resource_metadata=\"http://mcp.test/.well-known/oauth-protected-resource/mcp\""), "{c}");
    assert_eq!(r.response()["id"], 1);
    // …while another tool works, and the broader token passes.
    assert_eq!(post_as(&s.url, &plain, &call(2, "echo", json!({"text": "x"}))).await.status, 200);
    let r = post_as(&s.url, &admin, &call(3, "admin_reset", json!({}))).await;
    assert_eq!((r.status, r.response()["result"]["content"][0]["text"].as_str()), (200, Some("reset")));

    // A token without the required scope is refused everywhere (403).
    let none = auth.token("alice", RESOURCE, "files:read").await;
    let r = post_as(&s.url, &none, &request(json!(4), "server/discover", json!({}))).await;
    assert_eq!(r.status, 403, "{}", r.raw);

    // Lists show only what the token may use; such pages are private.
    let names = |r: &Reply, key: &str, field: &str| -> Vec<String> {
        r.response()["result"][key].as_array().unwrap().iter().map(|t| t[field].as_str().unwrap().to_owned()).collect()
    };
    let r = post_as(&s.url, &plain, &request(json!(5), "tools/list", json!({}))).await;
    assert!(!names(&r, "tools", "name").contains(&"admin_reset".to_owned()), "{}", r.raw);
    assert!(names(&r, "tools", "name").contains(&"echo".to_owned()));
    assert_eq!(r.response()["result"]["cacheScope"], "private", "{}", r.raw);
    let r = post_as(&s.url, &admin, &request(json!(6), "tools/list", json!({}))).await;
    assert!(names(&r, "tools", "name").contains(&"admin_reset".to_owned()));
    let r = post_as(&s.url, &plain, &request(json!(7), "resources/list", json!({}))).await;
    assert!(names(&r, "resources", "uri").is_empty(), "{}", r.raw);
    // The hierarchy: `files` implies `files:read`.
    let files = auth.token("alice", RESOURCE, "mcp files:read").await;
    let r = post_as(&s.url, &files, &request(json!(8), "resources/list", json!({}))).await;
    assert_eq!(names(&r, "resources", "uri"), ["file:///secret.txt"]);
    let read = request(json!(9), "resources/read", json!({"uri": "file:///secret.txt"}));
    assert_eq!(post_as(&s.url, &plain, &read).await.status, 403);
    assert_eq!(post_as(&s.url, &files, &read).await.status, 200);

    // The protected-resource metadata, at the root and path-inserted, without a token.
    let base = s.url.trim_end_matches("/mcp");
    for path in ["/.well-known/oauth-protected-resource", "/.well-known/oauth-protected-resource/mcp"] {
        let res = client().get(format!("{base}{path}")).send().await.unwrap();
        assert_eq!(res.status(), 200, "{path}");
        let doc: Value = res.json().await.unwrap();
        assert_eq!(doc["resource"], RESOURCE);
        assert_eq!(doc["authorization_servers"], json!([auth.issuer]));
        assert_eq!(doc["bearer_methods_supported"], json!(["header"]));
        let scopes: Vec<&str> =
            doc["scopes_supported"].as_array().unwrap().iter().map(|s| s.as_str().unwrap()).collect();
        assert!(scopes.contains(&"mcp") && scopes.contains(&"admin") && scopes.contains(&"files:read"), "{doc}");
        assert!(!scopes.contains(&"offline_access"));
    }
    s.stop().await;
}

#[actix_rt::test]
async fn listen_streams_end_when_the_token_expires() {
    let Some(auth) = AuthServer::start("auth::listen_expiry").await else { return };
    let s = server(oauth_config(&auth.issuer));
    let token = auth.token("short", RESOURCE, "mcp").await;
    let listen = request(json!(0), "subscriptions/listen", json!({"notifications": {"toolsListChanged": true}}));
    let bearer = format!("Bearer {token}");
    let started = std::time::Instant::now();
    let mut stream = SseReader::open_with(&s.url, &listen, &[("Authorization", &bearer)]).await;
    assert_eq!(stream.next().await.unwrap()["method"], "notifications/subscriptions/acknowledged");
    // The completion result, as at shutdown, once the 3-second token expires.
    let last = stream.next().await.expect("the completion result");
    assert_eq!(last["id"], 0, "{last}");
    assert!(last.get("result").is_some(), "{last}");
    let lived = started.elapsed();
    assert!(lived >= Duration::from_secs(1) && lived < Duration::from_secs(10), "{lived:?}");
    assert!(stream.next().await.is_none(), "the stream ends");
    // A listen stream asking for a resource the token may not read: 403.
    let guarded = request(
        json!(1),
        "subscriptions/listen",
        json!({"notifications": {"resourceSubscriptions": ["file:///secret.txt"]}}),
    );
    let plain = auth.token("alice", RESOURCE, "mcp").await;
    assert_eq!(post_as(&s.url, &plain, &guarded).await.status, 403);
    s.stop().await;
}

#[actix_rt::test]
async fn legacy_sessions_and_request_state_belong_to_their_subject() {
    let Some(auth) = AuthServer::start("auth::subject_binding").await else { return };
    let s = server(oauth_config(&auth.issuer));
    let alice = auth.token("alice", RESOURCE, "mcp").await;
    let bob = auth.token("bob", RESOURCE, "mcp").await;

    // A legacy session opened by alice is not found for bob.
    let init = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}});
    let opened = post_as(&s.url, &alice, &init).await;
    assert_eq!(opened.status, 200, "{}", opened.raw);
    let sid = opened.headers.get("mcp-session-id").unwrap().to_str().unwrap().to_owned();
    let list = json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list"});
    let in_session = |token: &str| {
        let (token, sid, list) = (token.to_owned(), sid.clone(), list.clone());
        let url = s.url.clone();
        async move {
            post_raw(
                &url,
                &[
                    ("Content-Type".into(), "application/json".into()),
                    ("Accept".into(), "application/json, text/event-stream".into()),
                    ("Mcp-Session-Id".into(), sid),
                    ("MCP-Protocol-Version".into(), "2025-11-25".into()),
                    ("Authorization".into(), format!("Bearer {token}")),
                ],
                serde_json::to_vec(&list).unwrap(),
            )
            .await
        }
    };
    assert_eq!(in_session(&alice).await.status, 200);
    assert_eq!(in_session(&bob).await.status, 404);

    // A requestState issued to alice fails for bob, and works for alice.
    let caps = json!({"elicitation": {}});
    let ask = |extra: Value| {
        let mut params = json!({"name": "confirm", "arguments": {}, "_meta": meta_with(caps.clone())});
        for (k, v) in extra.as_object().unwrap() {
            params[k] = v.clone();
        }
        json!({"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": params})
    };
    let first = post_as(&s.url, &alice, &ask(json!({}))).await;
    let state = first.response()["result"]["requestState"].clone();
    assert!(state.is_string(), "{}", first.raw);
    let answer =
        json!({"inputResponses": {"confirm": {"action": "accept", "content": {"ok": true}}}, "requestState": state});
    let replayed = post_as(&s.url, &bob, &ask(answer.clone())).await;
    assert_eq!(replayed.error_code(), Some(-32602), "{}", replayed.raw);
    let own = post_as(&s.url, &alice, &ask(answer)).await;
    assert_eq!(own.response()["result"]["content"][0]["text"], "Accept", "{}", own.raw);
    s.stop().await;
}

#[actix_rt::test]
async fn a_task_belongs_to_the_subject_that_created_it() {
    let Some(auth) = AuthServer::start("auth::task_owner").await else { return };
    let s = server(oauth_config(&auth.issuer));
    let alice = auth.token("alice", RESOURCE, "mcp").await;
    let bob = auth.token("bob", RESOURCE, "mcp").await;
    let caps = json!({"extensions": {"io.modelcontextprotocol/tasks": {}}});
    let start = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
        "params": {"name": "long_job", "arguments": {}, "_meta": meta_with(caps.clone())}});
    let created = post_as(&s.url, &alice, &start).await;
    let id = created.response()["result"]["taskId"].as_str().expect("a task").to_owned();
    let on_task = |n: i64, method: &str, task: &str| json!({"jsonrpc": "2.0", "id": n, "method": method, "params": {"taskId": task, "_meta": meta_with(caps.clone())}});
    // Bob gets exactly what an unknown id gets, for every method.
    let unknown = post_as(&s.url, &bob, &on_task(2, "tasks/get", "00000000-0000-4000-8000-000000000000")).await;
    let unknown_message =
        unknown.response()["error"]["message"].as_str().unwrap().replace("00000000-0000-4000-8000-000000000000", "");
    for (n, method) in [(3, "tasks/get"), (4, "tasks/cancel"), (5, "tasks/update")] {
        let r = post_as(&s.url, &bob, &on_task(n, method, &id)).await;
        assert_eq!(r.error_code(), Some(-32602), "{method}: {}", r.raw);
        assert_eq!(r.response()["error"]["message"].as_str().unwrap().replace(&id, ""), unknown_message);
    }
    // Without a token: refused before any task is looked up.
    assert_eq!(post(&s.url, &on_task(6, "tasks/get", &id)).await.status, 401);
    // Alice sees it, and her cancel (bob's did nothing) ends it.
    let mine = post_as(&s.url, &alice, &on_task(7, "tasks/get", &id)).await;
    assert_eq!(mine.response()["result"]["status"], "working", "{}", mine.raw);
    post_as(&s.url, &alice, &on_task(8, "tasks/cancel", &id)).await;
    let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
    while post_as(&s.url, &alice, &on_task(9, "tasks/get", &id)).await.response()["result"]["status"] != "cancelled" {
        assert!(tokio::time::Instant::now() < deadline, "alice's cancel ends the task");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    s.stop().await;
}

#[actix_rt::test]
async fn two_instances_behind_nginx_accept_the_same_token() {
    let Some(auth) = AuthServer::start("auth::behind_nginx").await else { return };
    let Some(_) = external("auth::behind_nginx", &["nginx"]) else { return };
    let instance = |name: &str| {
        let mut config = oauth_config(&auth.issuer);
        config.server.name = name.into();
        let server = builder(config).build().unwrap();
        TestServer::serve(server)
    };
    let (a, b) = (instance("node-a"), instance("node-b"));
    let host = |u: &str| u.trim_start_matches("http://").trim_end_matches("/mcp").to_string();
    let lb = nginx::Nginx::start(&[&host(&a.url), &host(&b.url)]).await;
    let token = auth.token("alice", RESOURCE, "mcp").await;
    let mut served_by = std::collections::BTreeSet::new();
    for i in 0..6 {
        let r = post_as(&lb.url, &token, &request(json!(i), "server/discover", json!({}))).await;
        assert_eq!(r.status, 200, "{}", r.raw);
        served_by.insert(r.response()["result"]["_meta"]["io.modelcontextprotocol/serverInfo"]["name"].to_string());
    }
    for i in 0..2 {
        assert_eq!(post(&lb.url, &request(json!(i), "server/discover", json!({}))).await.status, 401);
    }
    assert_eq!(served_by.len(), 2, "both instances answered: {served_by:?}");
    let doc: Value = client()
        .get(lb.url.replace("/mcp", "/.well-known/oauth-protected-resource/mcp"))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(doc["resource"], RESOURCE);
    a.stop().await;
    b.stop().await;
}

#[actix_rt::test]
async fn api_keys() {
    let mut config = test_config();
    config.auth.mode = actix_mcp::config::AuthMode::ApiKey;
    config.auth.api_keys = vec![actix_mcp::config::ApiKeyConfig {
        // printf %s ci-key | sha256sum
        sha256: "a6d0a2e1c2c3df0bbd57d2b1a4bcd6c3e0ddfb2bd6b0d8c1de8d8d3e0c2c0d6f".into(),
        subject: "ci".into(),
        scopes: vec!["mcp".into()],
        ..Default::default()
    }];
    // The digest above is not of any key used here: every key is refused.
    let s = server(config.clone());
    assert_eq!(post_as(&s.url, "ci-key", &call(1, "echo", json!({"text": "x"}))).await.status, 401);
    s.stop().await;

    use sha2::Digest;
    let digest = sha2::Sha256::digest(b"ci-key");
    config.auth.api_keys[0].sha256 = digest.iter().map(|b| format!("{b:02x}")).collect();
    let s = server(config);
    let r = post_as(&s.url, "ci-key", &call(1, "whoami", json!({}))).await;
    assert_eq!(r.response()["result"]["content"][0]["text"], "ci mcp", "{}", r.raw);
    assert_eq!(post_as(&s.url, "other-key", &call(2, "whoami", json!({}))).await.status, 401);
    assert_eq!(post(&s.url, &call(3, "whoami", json!({}))).await.status, 401);
    s.stop().await;
}

/// An embedder's own authenticator: a header names the tenant.
struct TenantHeader;

impl Authenticator for TenantHeader {
    fn authenticate<'a>(
        &'a self,
        head: &'a Head<'a>,
    ) -> futures::future::LocalBoxFuture<'a, Result<Arc<Identity>, AuthError>> {
        let found = match head.header(HeadHeader::Named("x-tenant")).ok().flatten() {
            Some(b"acme") => Ok(Arc::new(Identity::new("acme").with_scopes(["mcp", "admin"]))),
            Some(_) => Err(AuthError::invalid("unknown tenant")),
            None => Err(AuthError::Missing),
        };
        Box::pin(std::future::ready(found))
    }
}

#[actix_rt::test]
async fn a_custom_authenticator() {
    let server = builder(test_config()).authenticator(TenantHeader).build().unwrap();
    let s = TestServer::serve(server);
    let body = call(1, "whoami", json!({}));
    let r = post_with(&s.url, &body, |h| set(h, "X-Tenant", "acme")).await;
    assert_eq!(r.response()["result"]["content"][0]["text"], "acme mcp,admin", "{}", r.raw);
    assert_eq!(post_with(&s.url, &body, |h| set(h, "X-Tenant", "evil")).await.status, 401);
    assert_eq!(post(&s.url, &body).await.status, 401);
    s.stop().await;
}

#[actix_rt::test]
async fn tls() {
    let cert = rcgen::generate_simple_self_signed(vec!["localhost".to_string()]).unwrap();
    let dir = tempfile::Builder::new().prefix("actix-mcp-tls-").tempdir().unwrap();
    let (cert_path, key_path) = (dir.path().join("cert.pem"), dir.path().join("key.pem"));
    std::fs::write(&cert_path, cert.cert.pem()).unwrap();
    std::fs::write(&key_path, cert.key_pair.serialize_pem()).unwrap();
    let mut config = test_config();
    config.http.tls.cert = cert_path.display().to_string();
    config.http.tls.key = key_path.display().to_string();
    let server = builder(config).build().unwrap();
    let (http, addrs) = actix_mcp::transport::http::bind(server).expect("bind with TLS");
    let handle = http.handle();
    actix_rt::spawn(http);
    let url = format!("https://localhost:{}/mcp", addrs[0].port());
    let client = reqwest::Client::builder()
        .add_root_certificate(reqwest::Certificate::from_pem(cert.cert.pem().as_bytes()).unwrap())
        .build()
        .unwrap();
    let body = call(1, "echo", json!({"text": "over tls"}));
    let mut req = client.post(&url).body(serde_json::to_vec(&body).unwrap());
    for (k, v) in standard_headers(&body) {
        req = req.header(k, v);
    }
    let res = req.send().await.expect("an HTTPS answer");
    assert_eq!(res.status(), 200);
    let v: Value = res.json().await.unwrap();
    assert_eq!(v["result"]["content"][0]["text"], "over tls");
    // Plain HTTP to the TLS port gets no HTTP answer at all: the handshake
    // fails and the connection is closed (at once, not by a time limit).
    match client.post(url.replace("https://", "http://")).body("{}").send().await {
        Err(e) => assert!(!e.is_timeout() && e.status().is_none(), "{e}"),
        Ok(res) => panic!("plain HTTP to the TLS port was answered with HTTP {}", res.status()),
    }
    handle.stop(false).await;
}

/// With authorization on, `/metrics` on the main port is not public: no
/// credentials get 401 with a challenge, credentials without
/// `metrics.scope` 403, credentials with it the exposition; with
/// `metrics.public` anyone reads it.
#[actix_rt::test]
async fn metrics_on_the_main_port_need_the_metrics_scope() {
    use sha2::Digest;
    let hex = |key: &str| sha2::Sha256::digest(key.as_bytes()).iter().map(|b| format!("{b:02x}")).collect::<String>();
    let key = |sha256: String, subject: &str, scopes: &[&str]| actix_mcp::config::ApiKeyConfig {
        sha256,
        subject: subject.into(),
        scopes: scopes.iter().map(|s| s.to_string()).collect(),
        ..Default::default()
    };
    let mut config = test_config();
    config.auth.mode = actix_mcp::config::AuthMode::ApiKey;
    config.auth.api_keys =
        vec![key(hex("client-key"), "client", &["mcp"]), key(hex("scraper-key"), "scraper", &["mcp", "metrics"])];
    let s = server(config.clone());
    let url = s.url.replace("/mcp", "/metrics");
    let get = |token: Option<&str>| {
        let mut r = client().get(&url);
        if let Some(t) = token {
            r = r.bearer_auth(t);
        }
        r.send()
    };
    let anonymous = get(None).await.unwrap();
    assert_eq!(anonymous.status(), 401);
    assert!(anonymous.headers().contains_key("www-authenticate"));
    assert_eq!(get(Some("client-key")).await.unwrap().status(), 403);
    let scraped = get(Some("scraper-key")).await.unwrap();
    assert_eq!(scraped.status(), 200);
    assert!(scraped.text().await.unwrap().contains("mcp_server_"));
    s.stop().await;

    config.metrics.public = true;
    let s = server(config);
    let url = s.url.replace("/mcp", "/metrics");
    assert_eq!(client().get(&url).send().await.unwrap().status(), 200);
    s.stop().await;
}

/// `[auth.item_scopes]` gives the binary's own catalogs scopes: a tool by
/// name and files by URI pattern. A caller without them does not see the
/// items in lists and is refused 403 when it uses them; one with them is
/// served.
#[actix_rt::test]
async fn item_scopes_from_configuration_guard_the_binarys_catalog() {
    use sha2::Digest;
    let hex = |key: &str| sha2::Sha256::digest(key.as_bytes()).iter().map(|b| format!("{b:02x}")).collect::<String>();
    let root = tempfile::tempdir().unwrap();
    std::fs::create_dir(root.path().join("secret")).unwrap();
    std::fs::write(root.path().join("secret/key.txt"), "k3y").unwrap();
    std::fs::write(root.path().join("readme.txt"), "hello").unwrap();
    let toml = format!(
        "[auth]\nmode = \"api_key\"\n\
         [[auth.api_keys]]\nsha256 = \"{}\"\nsubject = \"reader\"\nscopes = [\"mcp\"]\n\
         [[auth.api_keys]]\nsha256 = \"{}\"\nsubject = \"admin\"\nscopes = [\"mcp\", \"files:secret\", \"search\"]\n\
         [auth.item_scopes.tools]\nsearch = [\"search\"]\n\
         [auth.item_scopes.resources]\n\"file:///**/secret/*\" = [\"files:secret\"]\n",
        hex("reader-key"),
        hex("admin-key")
    );
    let config = ConfigFile::new("item-scopes", &toml);
    let root_arg = root.path().to_str().unwrap();
    let served = HttpChild::spawn(&["--catalog", "fs", "--root", root_arg, "--config", config.path()]).await;
    let url = served.url.clone();
    let list = |token: &'static str, method: &'static str, key: &'static str| {
        let url = url.clone();
        async move {
            let r = post_as(&url, token, &request(json!(1), method, json!({}))).await;
            let items = r.response()["result"][key].as_array().cloned().unwrap_or_default();
            items.iter().map(|i| i["name"].as_str().unwrap_or_default().to_owned()).collect::<Vec<_>>()
        }
    };
    let admin_files = post_as(&url, "admin-key", &request(json!(1), "resources/list", json!({}))).await;
    let uri_of = |name: &str| {
        admin_files.response()["result"]["resources"]
            .as_array()
            .unwrap()
            .iter()
            .find(|r| r["uri"].as_str().unwrap().ends_with(name))
            .map(|r| r["uri"].as_str().unwrap().to_owned())
            .unwrap_or_else(|| panic!("{name} among {}", admin_files.raw))
    };
    let (secret, readme) = (uri_of("secret/key.txt"), uri_of("readme.txt"));
    let read = |token: &'static str, uri: String| {
        let url = url.clone();
        async move { post_as(&url, token, &request(json!(2), "resources/read", json!({"uri": uri}))).await.status }
    };
    // The reader: no search tool, no secret file, 403 when it uses them.
    assert!(!list("reader-key", "tools/list", "tools").await.contains(&"search".to_owned()));
    assert!(list("reader-key", "tools/list", "tools").await.contains(&"read_file".to_owned()));
    let search = request(json!(3), "tools/call", json!({"name": "search", "arguments": {"query": "k3y"}}));
    assert_eq!(post_as(&url, "reader-key", &search).await.status, 403);
    assert_eq!(read("reader-key", secret.clone()).await, 403);
    assert_eq!(read("reader-key", readme.clone()).await, 200);
    // The admin holds both scopes.
    assert!(list("admin-key", "tools/list", "tools").await.contains(&"search".to_owned()));
    assert_eq!(post_as(&url, "admin-key", &search).await.status, 200);
    assert_eq!(read("admin-key", secret).await, 200);
    drop(served);
}

/// Two `actix-mcp serve` instances with OAuth behind the shipped nginx
/// config, each told the balancer's URL (`http.public_url`): the whole
/// discovery a client walks — 401 with the metadata URL, the metadata,
/// a token for the resource it names, the call — names the public URL on
/// every instance, never a backend address; a token bound to a backend
/// address is refused by both.
#[actix_rt::test]
async fn the_oauth_flow_through_nginx_names_the_public_url_on_every_instance() {
    let test = "auth::the_oauth_flow_through_nginx_names_the_public_url_on_every_instance";
    let Some(auth) = AuthServer::start(test).await else { return };
    let Some(_) = external(test, &["nginx"]) else { return };
    let (port_a, port_b) = (free_fixed_port(), free_fixed_port());
    let lb = nginx::ShippedNginx::start(&[(port_a, true), (port_b, true)]).await;
    let public = lb.url("/mcp");
    let config = |name: &str| {
        let toml = format!(
            "[server]\nname = \"{name}\"\n[http]\npublic_url = \"{public}\"\n[catalog]\nname = \"everything\"\n\
             [auth]\nmode = \"oauth\"\nissuers = [\"{}\"]\nrequired_scopes = [\"mcp\"]\n",
            auth.issuer
        );
        ConfigFile::new(&format!("oauth-lb-{name}"), &toml)
    };
    let (config_a, config_b) = (config("node-a"), config("node-b"));
    let mut a = HttpChild::spawn_at(&format!("127.0.0.1:{port_a}"), &["--config", config_a.path()]).await;
    let _b = HttpChild::spawn_at(&format!("127.0.0.1:{port_b}"), &["--config", config_b.path()]).await;
    // Each instance says at start which resource it advertises.
    let line = a.stderr_until("authorization").await;
    assert!(line.contains(&public), "{line}");

    // 1. Without a token: 401 naming the balancer's metadata URL, from either instance.
    let metadata = lb.url("/.well-known/oauth-protected-resource/mcp");
    for i in 0..4 {
        let r = post(&public, &request(json!(i), "server/discover", json!({}))).await;
        assert_eq!(r.status, 401, "{}", r.raw);
        assert!(challenge(&r).contains(&format!("resource_metadata=\"{metadata}\"")), "{}", challenge(&r));
    }
    // 2. The metadata, from either instance: the public resource and the issuer.
    for _ in 0..4 {
        let doc: Value = client().get(&metadata).send().await.unwrap().json().await.unwrap();
        assert_eq!(doc["resource"], public.as_str(), "{doc}");
        assert_eq!(doc["authorization_servers"], json!([auth.issuer]), "{doc}");
    }
    // 3. A token for that resource, 4. the calls: served by both instances.
    let token = auth.token("alice", &public, "mcp").await;
    let mut served_by = std::collections::BTreeSet::new();
    for i in 0..6 {
        let r = post_as(&public, &token, &call(i, "echo", json!({"text": "hi"}))).await;
        assert_eq!(r.status, 200, "{}", r.raw);
        served_by.insert(r.response()["result"]["_meta"]["io.modelcontextprotocol/serverInfo"]["name"].to_string());
    }
    assert_eq!(served_by.len(), 2, "both instances served the token: {served_by:?}");
    // A token bound to one instance's own address is another resource's.
    let backend = format!("http://127.0.0.1:{port_a}/mcp");
    let wrong = auth.token("alice", &backend, "mcp").await;
    for i in 0..2 {
        let r = post_as(&public, &wrong, &call(10 + i, "echo", json!({"text": "hi"}))).await;
        assert_eq!(r.status, 401, "{}", r.raw);
    }
}
