//! Authorization against issuers that misbehave, and tokens a hostile
//! client makes: a tiny loopback issuer (`common::issuer`) whose key set
//! fails or hangs, whose introspection answers what the test says, and
//! which signs whatever claims the test asks for. Each test is one finding
//! of a security review: tokens without audience, subject or with a wrong
//! `typ`; fractional dates; audiences with a fragment or user part; the
//! issuer hammered while its key set fails; bodies read before the token;
//! identities of two issuers; and what the operator is told of refusals.

use crate::common;

use std::time::Duration;

use actix_mcp::prelude::*;
use common::issuer::{Issuer, Keys};
use common::logs::Logs;
use common::*;
use serde_json::{json, Value};
use tokio::io::{AsyncReadExt, AsyncWriteExt};

const RESOURCE: &str = "http://mcp.test/mcp";

fn now() -> f64 {
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_secs_f64()
}

fn config(issuers: &[&Issuer]) -> Config {
    let mut c = test_config();
    c.auth.mode = actix_mcp::config::AuthMode::Oauth;
    c.auth.resource = RESOURCE.into();
    c.auth.issuers = issuers.iter().map(|i| i.url.clone()).collect();
    c.auth.required_scopes = vec!["mcp".into()];
    c.auth.leeway_secs = 0;
    c.auth.fetch_timeout_ms = 500;
    c.metrics.enabled = true;
    c.status.enabled = true;
    c
}

/// Good claims: for this resource, for an hour, with the `mcp` scope.
fn claims(sub: &str) -> Value {
    json!({"sub": sub, "aud": RESOURCE, "scope": "mcp", "exp": now() as u64 + 3600, "iat": now() as u64})
}

fn serve(config: Config, logs: &Logs) -> TestServer {
    let long_job = Tool::no_args("long_job", "Runs as a task for a while", |ctx| async move {
        ctx.begin_task().await;
        ctx.sleep(Duration::from_secs(30)).await?;
        Ok("done")
    })
    .with_task_support(TaskSupport::Required);
    let whoami = |ctx: RequestContext| async move {
        let id = ctx.auth().expect("a caller");
        Ok(format!("{} {}", id.issuer.clone().unwrap_or_default(), id.subject))
    };
    let server = McpServer::builder(server_info!())
        .config(config)
        .logger(logs.logger())
        .tool(Tool::no_args("whoami", "The caller", whoami))
        .tool(long_job)
        .build()
        .expect("a valid server");
    TestServer::serve(server)
}

async fn call_as(url: &str, token: &str) -> Reply {
    let body = request(json!(1), "tools/call", json!({"name": "whoami", "arguments": {}}));
    post_with(url, &body, |h| set(h, "Authorization", &format!("Bearer {token}"))).await
}

fn challenge(r: &Reply) -> String {
    r.headers.get("www-authenticate").map(|v| v.to_str().unwrap().to_owned()).unwrap_or_default()
}

fn assert_refused(r: &Reply, why: &str) {
    assert_eq!(r.status, 401, "{why}: {}", r.raw);
    assert!(challenge(r).contains("error=\"invalid_token\""), "{why}: {}", challenge(r));
}

/// Finding 1: an introspected token must name this server in `aud`, like a JWT.
#[actix_rt::test]
async fn every_token_must_name_this_server_as_its_audience() {
    let issuer = Issuer::start();
    let mut c = config(&[&issuer]);
    c.auth.introspection.endpoint = issuer.introspection_endpoint();
    let s = serve(c, &Logs::default());
    // An introspected token from a trusted issuer, active, without `aud`:
    // a token meant for another API does not open this server.
    issuer.introspects("opaque-no-aud", json!({"active": true, "sub": "alice", "iss": issuer.url, "scope": "mcp"}));
    assert_refused(&call_as(&s.url, "opaque-no-aud").await, "introspected without aud");
    issuer.introspects(
        "opaque-other",
        json!({"active": true, "sub": "alice", "scope": "mcp", "aud": "https://other.example/api"}),
    );
    assert_refused(&call_as(&s.url, "opaque-other").await, "introspected for another API");
    issuer.introspects("opaque-ok", json!({"active": true, "sub": "alice", "scope": "mcp", "aud": RESOURCE}));
    let ok = call_as(&s.url, "opaque-ok").await;
    assert_eq!(ok.status, 200, "{}", ok.raw);
    // Without `iss`, the introspection endpoint vouches for the caller.
    let who = ok.response()["result"]["content"][0]["text"].as_str().unwrap().to_owned();
    assert_eq!(who, format!("{} alice", issuer.introspection_endpoint()));
    // JWTs likewise.
    let mut no_aud = claims("alice");
    no_aud.as_object_mut().unwrap().remove("aud");
    assert_refused(&call_as(&s.url, &issuer.mint(no_aud)).await, "a JWT without aud");
    assert_eq!(call_as(&s.url, &issuer.mint(claims("alice"))).await.status, 200);
    s.stop().await;
    issuer.stop().await;
}

/// Finding 11: RFC 8707 — a resource URI has no fragment, and a user part
/// names another resource.
#[actix_rt::test]
async fn an_audience_with_a_fragment_or_a_user_part_is_another_resource() {
    let issuer = Issuer::start();
    let s = serve(config(&[&issuer]), &Logs::default());
    for aud in
        ["http://mcp.test/mcp#frag", "http://mcp.test/mcp#", "http://eve@mcp.test/mcp", "http://eve:x@mcp.test/mcp"]
    {
        let mut c = claims("alice");
        c["aud"] = json!(aud);
        assert_refused(&call_as(&s.url, &issuer.mint(c)).await, aud);
    }
    assert_eq!(call_as(&s.url, &issuer.mint(claims("alice"))).await.status, 200);
    s.stop().await;
    issuer.stop().await;
}

/// Finding 7: a token naming no caller gets no shared, empty identity.
#[actix_rt::test]
async fn a_token_must_name_its_caller() {
    let issuer = Issuer::start();
    let s = serve(config(&[&issuer]), &Logs::default());
    // Neither `sub` nor `client_id`: no shared empty identity.
    let mut nobody = claims("x");
    nobody.as_object_mut().unwrap().remove("sub");
    assert_refused(&call_as(&s.url, &issuer.mint(nobody.clone())).await, "no subject");
    nobody["sub"] = json!("");
    assert_refused(&call_as(&s.url, &issuer.mint(nobody.clone())).await, "an empty subject");
    // A client-credentials token without `sub` is its client's.
    nobody.as_object_mut().unwrap().remove("sub");
    nobody["client_id"] = json!("batch-job");
    let r = call_as(&s.url, &issuer.mint(nobody)).await;
    assert_eq!(r.response()["result"]["content"][0]["text"], format!("{} batch-job", issuer.url), "{}", r.raw);
    s.stop().await;
    issuer.stop().await;
}

/// Finding 13: `typ` — `at+jwt` always; untyped or `JWT` only while
/// `auth.require_typ` is off; another type (an ID token's) never.
#[actix_rt::test]
async fn a_token_must_be_an_access_token() {
    let issuer = Issuer::start();
    let s = serve(config(&[&issuer]), &Logs::default());
    for (typ, status) in [(Some("at+jwt"), 200), (Some("application/at+jwt"), 200), (None, 200), (Some("JWT"), 200)] {
        assert_eq!(call_as(&s.url, &issuer.mint_typed(claims("alice"), typ)).await.status, status, "typ {typ:?}");
    }
    assert_refused(&call_as(&s.url, &issuer.mint_typed(claims("alice"), Some("id_token+jwt"))).await, "an ID token");
    s.stop().await;

    let mut strict = config(&[&issuer]);
    strict.auth.require_typ = true;
    let s = serve(strict, &Logs::default());
    assert_refused(&call_as(&s.url, &issuer.mint_typed(claims("alice"), None)).await, "untyped, typ required");
    assert_refused(&call_as(&s.url, &issuer.mint_typed(claims("alice"), Some("JWT"))).await, "JWT, typ required");
    assert_eq!(call_as(&s.url, &issuer.mint(claims("alice"))).await.status, 200);
    s.stop().await;
    issuer.stop().await;
}

/// Finding 8: RFC 7519 NumericDates with fractions, in JWTs and
/// introspection answers.
#[actix_rt::test]
async fn fractional_dates_expire() {
    let issuer = Issuer::start();
    let mut c = config(&[&issuer]);
    c.auth.introspection.endpoint = issuer.introspection_endpoint();
    let s = serve(c, &Logs::default());
    // RFC 7519 NumericDates may have fractions: accepted, and a listen
    // stream opened with the token ends at its expiry.
    let mut short = claims("alice");
    let short_exp = now().floor() + 2.5;
    short["exp"] = json!(short_exp);
    let token = issuer.mint(short);
    assert_eq!(call_as(&s.url, &token).await.status, 200);
    let listen = request(json!(0), "subscriptions/listen", json!({"notifications": {"toolsListChanged": true}}));
    let bearer = format!("Bearer {token}");
    let mut stream = SseReader::open_with(&s.url, &listen, &[("Authorization", &bearer)]).await;
    assert_eq!(stream.next().await.unwrap()["method"], "notifications/subscriptions/acknowledged");
    let last = stream.next().await.expect("the completion result at expiry");
    assert_eq!(last["id"], 0, "{last}");
    assert!(stream.next().await.is_none(), "the stream ends");
    // Past its fractional expiry the token is refused.
    while now() < short_exp {
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert_refused(&call_as(&s.url, &token).await, "expired with a fraction");
    let mut past = claims("alice");
    past["exp"] = json!(now() - 0.5);
    assert_refused(&call_as(&s.url, &issuer.mint(past)).await, "exp half a second ago");
    let mut later = claims("alice");
    later["nbf"] = json!(now() + 60.5);
    assert_refused(&call_as(&s.url, &issuer.mint(later)).await, "nbf in the future");
    // An introspection answer's dates are NumericDates too.
    let answer = json!({"active": true, "sub": "alice", "aud": RESOURCE, "scope": "mcp", "exp": now() - 0.5});
    issuer.introspects("opaque-expired", answer);
    assert_refused(&call_as(&s.url, "opaque-expired").await, "an introspected exp half a second ago");
    s.stop().await;
    issuer.stop().await;
}

/// Finding 4: while the key set fails, tokens do not make the server ask
/// the issuer again and again; the status page shows the key set's health.
#[actix_rt::test]
async fn a_failing_key_set_is_not_hammered() {
    let issuer = Issuer::start();
    issuer.set_keys(Keys::Fail);
    let logs = Logs::default();
    let s = serve(config(&[&issuer]), &logs);
    // 300 forged tokens with made-up key ids while the key set answers 503.
    let mut refused = Vec::new();
    let started = std::time::Instant::now();
    for i in 0..300 {
        let token = issuer.mint_with(claims("mallory"), Some("at+jwt"), &format!("forged-{i}"));
        refused.push(call_as(&s.url, &token).await);
    }
    assert!(refused.iter().all(|r| r.status == 503), "{:?}", refused.iter().map(|r| r.status).collect::<Vec<_>>());
    // The metadata once; the key set once, then after the back-off (1 s,
    // 2 s, …): the loop above takes well under the 7 s that 3 more
    // attempts would need.
    assert_eq!(issuer.requests("metadata"), 1, "discovered once");
    let fetches = issuer.requests("jwks");
    assert!((1..=3).contains(&fetches), "{fetches} key set fetches for 300 tokens");
    // The operator is told, at warn, rate-limited: at most 10 lines in each
    // second the loop took (however slow the machine), far fewer than 300.
    let seconds = started.elapsed().as_secs() + 1;
    let warned = logs.with_msg("authorization unavailable");
    let most = (10 * seconds).min(200) as usize;
    assert!(!warned.is_empty() && warned.len() <= most, "{} warnings in {seconds} s", warned.len());
    assert_eq!(warned[0].level, slog::Level::Warning);
    // The status page shows the key set's health.
    let status: Value = client().get(s.url.replace("/mcp", "/status.json")).send().await.unwrap().json().await.unwrap();
    let health = &status["auth"]["issuers"][0];
    assert_eq!((health["issuer"].as_str(), health["healthy"].as_bool()), (Some(issuer.url.as_str()), Some(false)));
    assert!(health["failures"].as_u64().unwrap() >= 1 && health["last_error"].as_str().unwrap().contains("503"));

    // The issuer comes back: after the back-off, keys are fetched and good tokens pass.
    issuer.set_keys(Keys::Serve);
    let token = issuer.mint(claims("alice"));
    let deadline = tokio::time::Instant::now() + Duration::from_secs(20);
    while call_as(&s.url, &token).await.status != 200 {
        assert!(tokio::time::Instant::now() < deadline, "the issuer's keys are fetched again after the back-off");
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    let status: Value = client().get(s.url.replace("/mcp", "/status.json")).send().await.unwrap().json().await.unwrap();
    assert_eq!(status["auth"]["issuers"][0]["healthy"], true, "{status}");
    s.stop().await;
    issuer.stop().await;
}

/// Finding 10: a client is told the issuer could not be asked, and nothing
/// of the issuer's address or error; the operator's log has them.
#[actix_rt::test]
async fn an_unreachable_issuer_is_described_to_the_operator_only() {
    let issuer = Issuer::start();
    issuer.set_keys(Keys::Fail);
    let logs = Logs::default();
    let s = serve(config(&[&issuer]), &logs);
    let r = call_as(&s.url, &issuer.mint(claims("alice"))).await;
    assert_eq!(r.status, 503, "{}", r.raw);
    assert_eq!(
        r.response()["error"]["message"],
        "Unavailable: authorization unavailable: the token cannot be checked right now; try again later"
    );
    assert!(!r.raw.contains(&issuer.url) && !r.raw.contains("7f3a"), "{}", r.raw);
    assert!(!challenge(&r).contains(&issuer.url) && !challenge(&r).contains("7f3a"), "{}", challenge(&r));
    let warned = logs.with_msg("authorization unavailable");
    assert_eq!(warned.len(), 1, "{}", logs.text());
    assert!(warned[0].get("detail").contains(&issuer.url) && warned[0].get("detail").contains("503"));
    s.stop().await;
    issuer.stop().await;
}

/// Finding 4: one fetch in flight; concurrent requests wait on it.
#[actix_rt::test]
async fn a_hanging_key_set_is_asked_once_by_concurrent_requests() {
    let issuer = Issuer::start();
    issuer.set_keys(Keys::Hang);
    let s = serve(config(&[&issuer]), &Logs::default());
    let token = issuer.mint(claims("alice"));
    let calls = (0..20).map(|_| call_as(&s.url, &token));
    let answers = futures::future::join_all(calls).await;
    assert!(answers.iter().all(|r| r.status == 503), "{:?}", answers.iter().map(|r| r.status).collect::<Vec<_>>());
    assert_eq!(issuer.requests("jwks"), 1, "one fetch in flight; the others waited on it");
    s.stop().await;
    issuer.stop().await;
}

/// Finding 5: authentication from the head, before a byte of the body.
#[actix_rt::test]
async fn the_token_is_checked_before_the_body_is_read() {
    let issuer = Issuer::start();
    let mut c = config(&[&issuer]);
    c.http.max_body_bytes = 8 * 1024 * 1024;
    // A body that never comes would be waited for this long.
    c.http.body_timeout_ms = 60_000;
    let s = serve(c, &Logs::default());
    let addr = s.url.trim_start_matches("http://").split('/').next().unwrap().to_owned();
    // 4 MiB announced, not a byte sent, no credentials: 401 at once.
    let mut socket = tokio::net::TcpStream::connect(&addr).await.unwrap();
    let head = format!(
        "POST /mcp HTTP/1.1\r\nHost: {addr}\r\nContent-Type: application/json\r\nContent-Length: 4194304\r\n\r\n"
    );
    socket.write_all(head.as_bytes()).await.unwrap();
    let mut answer = vec![0u8; 4096];
    let n = tokio::time::timeout(Duration::from_secs(10), socket.read(&mut answer))
        .await
        .expect("an answer before the body (the body timeout is 60 s)")
        .unwrap();
    let text = String::from_utf8_lossy(&answer[..n]);
    assert!(text.starts_with("HTTP/1.1 401"), "{text}");
    assert!(text.to_ascii_lowercase().contains("www-authenticate: bearer resource_metadata="), "{text}");
    s.stop().await;
    issuer.stop().await;
}

/// Finding 6: the identity's key is (issuer, subject).
#[actix_rt::test]
async fn the_same_subject_from_two_issuers_is_two_callers() {
    let (one, two) = (Issuer::start(), Issuer::start());
    let s = serve(config(&[&one, &two]), &Logs::default());
    let (alice_one, alice_two) = (one.mint(claims("alice")), two.mint(claims("alice")));
    let start = with_tasks(1, "tools/call", json!({"name": "long_job", "arguments": {}}));
    let created = post_with(&s.url, &start, |h| set(h, "Authorization", &format!("Bearer {alice_one}"))).await;
    let task = created.response()["result"]["taskId"].as_str().expect("a task").to_owned();
    let get = with_tasks(2, "tasks/get", json!({"taskId": task}));
    let mine = post_with(&s.url, &get, |h| set(h, "Authorization", &format!("Bearer {alice_one}"))).await;
    assert_eq!(mine.response()["result"]["status"], "working", "{}", mine.raw);
    let theirs = post_with(&s.url, &get, |h| set(h, "Authorization", &format!("Bearer {alice_two}"))).await;
    assert_eq!(theirs.error_code(), Some(-32602), "another issuer's alice sees an unknown task: {}", theirs.raw);
    // And each is told who it is.
    let who = |r: Reply| r.response()["result"]["content"][0]["text"].as_str().unwrap().to_owned();
    assert_eq!(who(call_as(&s.url, &alice_one).await), format!("{} alice", one.url));
    assert_eq!(who(call_as(&s.url, &alice_two).await), format!("{} alice", two.url));
    s.stop().await;
    one.stop().await;
    two.stop().await;
}

/// Finding 12: refusals are logged (rate-limited) and counted.
#[actix_rt::test]
async fn refusals_are_logged_and_counted_without_token_material() {
    let issuer = Issuer::start();
    let logs = Logs::default();
    // Scraped without credentials, so that the scrapes are not refusals too.
    let mut c = config(&[&issuer]);
    c.metrics.public = true;
    let s = serve(c, &logs);
    let metrics_url = s.url.replace("/mcp", "/metrics");
    let count = |text: &str, reason: &str| -> f64 {
        let series = format!("mcp_server_auth_failures_total{{reason=\"{reason}\"}} ");
        text.lines().find_map(|l| l.strip_prefix(&series)).and_then(|v| v.trim().parse().ok()).unwrap_or(-1.0)
    };
    let before = client().get(&metrics_url).send().await.unwrap().text().await.unwrap();
    for reason in ["missing", "invalid_token", "invalid_request", "insufficient_scope", "unavailable"] {
        assert!(count(&before, reason) >= 0.0, "the {reason} series exists from the start:\n{before}");
    }
    let mut expired = claims("alice");
    expired["exp"] = json!(now() - 10.0);
    let mut stranger = claims("eve");
    stranger["iss"] = json!("https://untrusted.example");
    stranger["client_id"] = json!("eve-app");
    let tokens = [issuer.mint(expired), issuer.mint(stranger)];
    for token in &tokens {
        assert_refused(&call_as(&s.url, token).await, "refused");
    }
    let body = request(json!(1), "tools/call", json!({"name": "whoami", "arguments": {}}));
    assert_eq!(post(&s.url, &body).await.status, 401);
    let after = client().get(&metrics_url).send().await.unwrap().text().await.unwrap();
    assert!(count(&after, "invalid_token") >= count(&before, "invalid_token") + 2.0, "{after}");
    assert!(count(&after, "missing") >= count(&before, "missing") + 1.0, "{after}");
    let lines = logs.with_msg("refused by authorization");
    assert_eq!(lines.len(), 3, "{}", logs.text());
    assert!(lines.iter().all(|l| l.level == slog::Level::Info));
    assert_eq!((lines[0].get("reason"), lines[0].get("issuer")), ("invalid_token", issuer.url.as_str()));
    assert!(lines[0].get("why").contains("expired"), "{:?}", lines[0]);
    assert_eq!((lines[1].get("issuer"), lines[1].get("client_id")), ("https://untrusted.example", "eve-app"));
    assert_eq!(lines[2].get("reason"), "missing");
    let text = logs.text();
    for token in &tokens {
        let signature = token.rsplit('.').next().unwrap();
        assert!(!text.contains(token.as_str()) && !text.contains(signature), "no token material in the log");
    }
    // A flood is logged at most ten lines a second, and counted whole.
    let flood_started = std::time::Instant::now();
    for _ in 0..50 {
        post(&s.url, &body).await;
    }
    let seconds = flood_started.elapsed().as_secs() as usize + 2;
    let logged = logs.with_msg("refused by authorization").len() - 3;
    assert!(logged <= 10 * seconds, "{logged} lines in at most {seconds} windows of a second");
    if seconds < 5 {
        assert!(logged < 50, "some of the flood's lines were left out");
    }
    let flood = client().get(&metrics_url).send().await.unwrap().text().await.unwrap();
    assert!(count(&flood, "missing") >= count(&after, "missing") + 50.0, "{flood}");
    s.stop().await;
    issuer.stop().await;
}
