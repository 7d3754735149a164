//! Webhook subscriptions (`events/subscribe`, `events/unsubscribe`) over
//! real loopback HTTP, delivered to a real HTTPS receiver whose origin is
//! allowed past the address guard: the challenge before any delivery,
//! deliveries signed per Standard Webhooks (checked by the independent
//! `standardwebhooks` package), refresh (same id, the secret rotated and
//! both signing for a while), unsubscribe, retries (a 5xx retried with a
//! fresh signature, 410 and 413 never, attempts bounded), suspension and
//! reactivation, the lifetimes granted, the caps, and the refusals: no
//! principal, no webhook mode, callbacks that are not public (127.0.0.1,
//! [::1], 169.254.169.254, a name resolving to loopback), a redirect, a
//! wrong or endless challenge answer, a callback that never answers.

use crate::common;

use std::sync::Arc;
use std::time::Duration;

use actix_mcp::prelude::*;
use actix_mcp::protocol::tasks::iso8601;
use actix_mcp::webhooks::{SubscriptionState, Webhooks};
use base64::Engine;
use common::receiver::{standard_webhooks_verify, Behaviour, Received, Receiver};
use common::*;
use serde_json::{json, Value};

/// What a mail subscription is narrowed by.
#[derive(Deserialize, JsonSchema)]
struct Inbox {
    /// Only mail from this sender.
    from: Option<String>,
}

/// A mail that arrived.
#[derive(Serialize, JsonSchema)]
struct Mail {
    from: String,
}

const ANN: &str = "ann-key";
const BOB: &str = "bob-key";
const WAIT: Duration = Duration::from_secs(10);

fn key(key: &str, subject: &str) -> actix_mcp::config::ApiKeyConfig {
    use sha2::Digest;
    let digest = sha2::Sha256::digest(key.as_bytes());
    actix_mcp::config::ApiKeyConfig {
        sha256: digest.iter().map(|b| format!("{b:02x}")).collect(),
        subject: subject.into(),
        ..Default::default()
    }
}

fn secret(byte: u8) -> String {
    format!("whsec_{}", base64::engine::general_purpose::STANDARD.encode([byte; 32]))
}

struct Setup {
    server: TestServer,
    catalog: Arc<Catalog>,
    mail: EventSource,
    receiver: Receiver,
}

/// A server with `mail` (poll, webhook) and `pulse` (push), callers `ann`
/// and `bob` by API key, the receiver's origin allowed (and its CA
/// trusted), retries quick; `edit` changes the rest. The receiver's paths:
/// `/ok/` accepts, `/wrong/` misanswers the challenge, `/flood/` answers it
/// endlessly, `/silent/` never answers, `/gone/`, `/big/`, `/fail/` answer
/// deliveries 410, 413, 500, `/flaky/` fails the first delivery (500),
/// `/redirect/` redirects to `/ok/x`, `/stall/` never answers a delivery.
fn setup(edit: impl FnOnce(&mut Config)) -> Setup {
    let receiver = Receiver::start();
    let redirect_to = format!("{}/ok/x", receiver.origin);
    for (prefix, behaviour) in [
        ("/wrong/", Behaviour::WrongChallenge),
        ("/flood/", Behaviour::Flood),
        ("/silent/", Behaviour::Silent),
        ("/gone/", Behaviour::Status(410)),
        ("/big/", Behaviour::Status(413)),
        ("/fail/", Behaviour::Status(500)),
        ("/flaky/", Behaviour::FailFirst { failures: 1, status: 500 }),
        ("/redirect/", Behaviour::Redirect(redirect_to)),
        ("/stall/", Behaviour::Stall),
    ] {
        receiver.behave(prefix, behaviour);
    }
    let catalog = Arc::new(Catalog::new());
    let mail = catalog
        .add_event_type(EventType::matching::<Inbox, Mail>(
            "mail",
            "A mail arrived",
            &[Delivery::Poll, Delivery::Webhook],
            |inbox, data| inbox.from.as_deref().is_none_or(|f| data.get("from").and_then(Value::as_str) == Some(f)),
        ))
        .unwrap();
    catalog.add_event_type(EventType::new::<Inbox, Mail>("pulse", "Pushed only", &[Delivery::Push])).unwrap();
    let mut config = test_config();
    config.auth.mode = actix_mcp::config::AuthMode::ApiKey;
    config.auth.api_keys = vec![key(ANN, "ann"), key(BOB, "bob")];
    let w = &mut config.events.webhooks;
    w.allow_origins = vec![receiver.origin.clone()];
    w.allowed_ca_file = receiver.ca_file.to_string_lossy().into_owned();
    w.retry_base_ms = 100;
    w.max_attempts = 3;
    w.timeout_ms = 1000;
    edit(&mut config);
    Setup { server: TestServer::start(catalog.clone(), config), catalog, mail, receiver }
}

async fn call(url: &str, token: Option<&str>, method: &str, params: Value) -> Value {
    let body = request(json!(1), method, params);
    let reply = post_with(url, &body, |h| {
        if let Some(token) = token {
            set(h, "Authorization", &format!("Bearer {token}"));
        }
    })
    .await;
    reply.response().clone()
}

fn subscribe_params(name: &str, url: &str, secret: &str) -> Value {
    json!({"name": name, "arguments": {}, "delivery": {"mode": "webhook", "url": url, "secret": secret}, "cursor": null})
}

async fn subscribe(s: &Setup, token: &str, url: &str, secret: &str) -> Value {
    call(&s.server.url, Some(token), "events/subscribe", subscribe_params("mail", url, secret)).await
}

fn is_event(r: &Received) -> bool {
    r.kind().is_none()
}

fn events(received: &[Received]) -> Vec<&Received> {
    received.iter().filter(|r| is_event(r)).collect()
}

#[actix_rt::test]
async fn a_callback_is_challenged_then_gets_each_occurrence_signed_and_headed() {
    let s = setup(|_| {});
    let url = format!("{}/ok/main", s.receiver.origin);
    let answer = subscribe(&s, ANN, &url, &secret(1)).await;
    let result = &answer["result"];
    let id = result["id"].as_str().unwrap_or_else(|| panic!("{answer}")).to_owned();
    assert!(id.starts_with("sub_"), "{answer}");
    assert!(result["cursor"].is_string() && result["truncated"] == false, "{answer}");
    assert_eq!(result["resultType"], "complete");
    let challenged = s.receiver.received("/ok/main");
    assert_eq!(challenged.len(), 1, "exactly the challenge before the answer");
    assert_eq!(challenged[0].kind().as_deref(), Some("verification"));
    assert!(challenged[0].header("webhook-id").is_some_and(|i| i.starts_with("msg_verification_")));

    for from in ["a@x", "b@x"] {
        s.mail.emit(Mail { from: from.into() }).unwrap();
    }
    let got = s.receiver.wait_for("/ok/main", WAIT, |r| events(r).len() >= 2).await;
    let delivered = events(&got);
    assert_eq!(delivered.len(), 2, "{got:?}");
    for d in &delivered {
        let body = d.json();
        assert_eq!(d.header("content-type"), Some("application/json"));
        assert_eq!(d.header("webhook-id"), body["eventId"].as_str(), "webhook-id is the eventId");
        assert_eq!(d.header("x-mcp-subscription-id"), Some(id.as_str()));
        assert!(d.header("webhook-timestamp").and_then(|t| t.parse::<u64>().ok()).is_some());
        assert!(body.get("type").is_none() && body["name"] == "mail" && body["timestamp"].is_string(), "{body}");
        assert!(body["cursor"].is_string(), "a watermark the client may persist: {body}");
    }
    assert_eq!(delivered[0].json()["data"]["from"], "a@x", "in order");
    // The watermark never passes what is not yet settled: the first
    // delivery carries the position before it.
    assert_eq!(delivered[0].json()["cursor"], result["cursor"]);
    let test = "webhooks::a_callback_is_challenged_then_gets_each_occurrence_signed_and_headed";
    if let Some(checked) = standard_webhooks_verify(test, &secret(1), &got) {
        assert_eq!(checked, vec!["ok"; got.len()], "standardwebhooks verifies every delivery");
        let forged = Received { body: b"{\"forged\":true}".to_vec(), ..got[1].clone() };
        let refused = standard_webhooks_verify(test, &secret(1), &[forged]).unwrap();
        assert_ne!(refused[0], "ok", "the independent check can fail");
    }
    s.server.stop().await;
    s.receiver.stop().await;
}

#[actix_rt::test]
async fn a_refresh_keeps_the_id_signs_with_both_secrets_and_unsubscribe_ends_delivery() {
    let s = setup(|_| {});
    let (a, b) = (format!("{}/ok/a", s.receiver.origin), format!("{}/ok/b", s.receiver.origin));
    let first = subscribe(&s, ANN, &a, &secret(1)).await;
    subscribe(&s, ANN, &a, &secret(2)).await;
    let again = subscribe(&s, ANN, &a, &secret(5)).await;
    assert_eq!(again["result"]["id"], first["result"]["id"], "{again}");
    assert_eq!(again["result"]["deliveryStatus"]["active"], true, "{again}");
    assert_eq!(s.receiver.received("/ok/a").len(), 1, "a refresh is not challenged again");
    // Another principal's subscription of the same callback is another one.
    let bobs = subscribe(&s, BOB, &a, &secret(3)).await;
    assert_ne!(bobs["result"]["id"], first["result"]["id"], "{bobs}");
    let other_url = subscribe(&s, ANN, &b, &secret(1)).await;
    assert_ne!(other_url["result"]["id"], first["result"]["id"]);

    s.mail.emit(Mail { from: "rotated@x".into() }).unwrap();
    let got = s.receiver.wait_for("/ok/a", WAIT, |r| events(r).len() >= 2).await;
    let anns = events(&got)
        .into_iter()
        .filter(|d| d.header("x-mcp-subscription-id") == first["result"]["id"].as_str())
        .cloned()
        .collect::<Vec<_>>();
    assert_eq!(anns.len(), 1, "{got:?}");
    let signatures = anns[0].header("webhook-signature").unwrap();
    assert_eq!(signatures.split(' ').count(), 3, "the new and both replaced secrets sign in their grace: {signatures}");
    let test = "webhooks::a_refresh_keeps_the_id_signs_with_both_secrets_and_unsubscribe_ends_delivery";
    for key in [secret(1), secret(2), secret(5)] {
        if let Some(checked) = standard_webhooks_verify(test, &key, &anns) {
            assert_eq!(checked, ["ok"], "each secret verifies the delivery");
        }
    }

    let unsubscribe = json!({"name": "mail", "arguments": {}, "delivery": {"url": a}});
    let done = call(&s.server.url, Some(ANN), "events/unsubscribe", unsubscribe.clone()).await;
    assert_eq!(done["result"]["resultType"], "complete", "{done}");
    let gone = call(&s.server.url, Some(ANN), "events/unsubscribe", unsubscribe).await;
    assert_eq!(
        (gone["error"]["code"].as_i64(), &gone["error"]["data"]),
        (Some(-32011), &json!({"kind": "subscription"}))
    );
    let before = events(&s.receiver.received("/ok/a")).len();
    s.mail.emit(Mail { from: "after@x".into() }).unwrap();
    // Bob's subscription of the same callback still hears it; Ann's does not.
    let after =
        s.receiver.wait_for("/ok/a", WAIT, |r| events(r).iter().any(|d| d.json()["data"]["from"] == "after@x")).await;
    let after_ids: Vec<_> = events(&after)[before..].iter().map(|d| d.header("x-mcp-subscription-id")).collect();
    assert_eq!(after_ids, [bobs["result"]["id"].as_str()], "only bob's subscription delivers");
    s.server.stop().await;
    s.receiver.stop().await;
}

#[actix_rt::test]
async fn a_failing_callback_is_retried_freshly_signed_410_and_413_never_and_attempts_are_bounded() {
    let s = setup(|_| {});
    let origin = s.receiver.origin.clone();
    for path in ["flaky", "gone", "big", "fail"] {
        let answer = subscribe(&s, ANN, &format!("{origin}/{path}/x"), &secret(1)).await;
        assert!(answer["result"]["id"].is_string(), "{path}: {answer}");
    }
    let emitted = s.mail.emit(Mail { from: "r@x".into() }).unwrap();
    let id = emitted.event_id.as_str();
    let of_id = |r: &[Received]| r.iter().filter(|d| d.header("webhook-id") == Some(id)).count();
    let flaky = s.receiver.wait_for("/flaky/", WAIT, |r| of_id(r) >= 2).await;
    let attempts: Vec<_> = flaky.iter().filter(|d| d.header("webhook-id") == Some(id)).collect();
    assert_eq!(attempts.len(), 2, "one failure, one retry accepted");
    assert_eq!(attempts[0].body, attempts[1].body, "the same body");
    let failing = s.receiver.wait_for("/fail/", WAIT, |r| of_id(r) >= 3).await;
    assert_eq!(of_id(&failing), 3, "max_attempts attempts");
    // The subscription's status tells the category, never the answer.
    let refreshed = subscribe(&s, ANN, &format!("{origin}/fail/x"), &secret(1)).await;
    let status = &refreshed["result"]["deliveryStatus"];
    assert_eq!(status["lastError"], "http_5xx", "{refreshed}");
    assert!(status["failedSince"].is_string(), "{refreshed}");
    // 410 and 413 were each attempted once; by now a retry would have come.
    assert_eq!(of_id(&s.receiver.received("/gone/")), 1);
    assert_eq!(of_id(&s.receiver.received("/big/")), 1);
    let test = "webhooks::a_failing_callback_is_retried_freshly_signed_410_and_413_never_and_attempts_are_bounded";
    let attempts: Vec<Received> = attempts.into_iter().cloned().collect();
    if let Some(checked) = standard_webhooks_verify(test, &secret(1), &attempts) {
        assert_eq!(checked, ["ok", "ok"], "each attempt is signed for its own time");
    }
    s.server.stop().await;
    s.receiver.stop().await;
}

#[actix_rt::test]
async fn too_many_failures_suspend_delivery_until_the_next_refresh() {
    let s = setup(|c| {
        let w = &mut c.events.webhooks;
        (w.suspend_min_attempts, w.suspend_failure_percent, w.max_attempts) = (2, 100, 1);
    });
    let url = format!("{}/fail/s", s.receiver.origin);
    let subscribed = subscribe(&s, ANN, &url, &secret(1)).await;
    let id = subscribed["result"]["id"].as_str().unwrap_or_else(|| panic!("{subscribed}")).to_owned();
    for n in 0..2 {
        s.mail.emit(Mail { from: format!("{n}@x") }).unwrap();
    }
    s.receiver.wait_for("/fail/s", WAIT, |r| events(r).len() >= 2).await;
    // The second failure suspends (the server's handle says so, as the
    // catalog's tools see it): a third occurrence is not attempted.
    let webhooks = s.catalog.state::<Webhooks>().expect("the server shares its webhooks with the catalog");
    let mut state = None;
    for _ in 0..200 {
        state = webhooks.state(&id).await;
        if state == Some(SubscriptionState::Suspended) {
            break;
        }
        s.receiver.wait_for("/never", Duration::from_millis(20), |_| false).await;
    }
    assert_eq!(state, Some(SubscriptionState::Suspended));
    s.mail.emit(Mail { from: "held@x".into() }).unwrap();
    // An active subscription would post it within milliseconds.
    let held = s.receiver.wait_for("/fail/s", Duration::from_millis(1500), |r| events(r).len() > 2).await;
    assert_eq!(events(&held).len(), 2, "nothing delivered while suspended");
    let refreshed = subscribe(&s, ANN, &url, &secret(1)).await;
    assert_eq!(refreshed["result"]["deliveryStatus"]["active"], false, "{refreshed}");
    // The refresh resumed delivery: the held occurrence is attempted now.
    let resumed = s.receiver.wait_for("/fail/s", WAIT, |r| events(r).len() >= 3).await;
    assert_eq!(events(&resumed)[2].json()["data"]["from"], "held@x");
    s.server.stop().await;
    s.receiver.stop().await;
}

#[actix_rt::test]
async fn lifetimes_are_clamped_never_unbounded_and_caps_refuse_with_their_limit() {
    let s = setup(|c| c.events.webhooks.max_subscriptions_per_caller = 3);
    let origin = s.receiver.origin.clone();
    // ISO 8601 times of one format compare as strings.
    let now = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_millis() as u64;
    let granted = |answer: &Value, (low, high): (u64, u64)| {
        let at = answer["result"]["refreshBefore"].as_str().unwrap_or_else(|| panic!("{answer}")).to_owned();
        let (low, high) = (iso8601(now + low), iso8601(now + high));
        assert!(low <= at && at <= high, "{at} is not within {low}..{high}: {answer}");
    };
    let ttl = |ms: Value, path: &str| {
        let mut p = subscribe_params("mail", &format!("{origin}/ok/{path}"), &secret(1));
        p["ttlMs"] = ms;
        p
    };
    let default = call(&s.server.url, Some(ANN), "events/subscribe", ttl(json!(null), "t0")).await;
    // ttlMs null is granted max_ttl_ms, never null (nothing outlives a restart).
    granted(&default, (86_390_000, 86_410_000));
    let short = call(&s.server.url, Some(ANN), "events/subscribe", ttl(json!(1), "t1")).await;
    granted(&short, (50_000, 70_000)); // raised to min_ttl_ms
    let mut absent = ttl(json!(0), "t2");
    absent.as_object_mut().unwrap().remove("ttlMs");
    let absent = call(&s.server.url, Some(ANN), "events/subscribe", absent).await;
    granted(&absent, (1_790_000, 1_810_000)); // default_ttl_ms
                                              // Any number is a suggestion: 1e20 is clamped to max_ttl_ms like null.
    let huge = call(&s.server.url, Some(BOB), "events/subscribe", ttl(json!(1e20), "t9")).await;
    granted(&huge, (86_390_000, 86_410_000));
    let full = call(&s.server.url, Some(ANN), "events/subscribe", ttl(json!(2_592_000_000u64), "t3")).await;
    assert_eq!(full["error"]["code"], -32013, "{full}");
    assert_eq!(full["error"]["data"], json!({"limit": "webhook_subscriptions_per_caller", "max": 3}));
    // Another caller has its own room; a refresh needs none.
    assert!(call(&s.server.url, Some(BOB), "events/subscribe", ttl(json!(1), "t3")).await["result"]["id"].is_string());
    assert!(call(&s.server.url, Some(ANN), "events/subscribe", ttl(json!(1), "t1")).await["result"]["id"].is_string());
    s.server.stop().await;
    s.receiver.stop().await;
}

#[actix_rt::test]
async fn what_cannot_be_subscribed_is_refused_with_the_designs_codes() {
    let s = setup(|_| {});
    let ok = format!("{}/ok/r", s.receiver.origin);
    let url = &s.server.url;
    // No principal: webhooks need one.
    let mut anonymous = test_config();
    anonymous.events.webhooks.allow_origins = vec![s.receiver.origin.clone()];
    let catalog = Arc::new(Catalog::new());
    catalog.add_event_type(EventType::new::<Inbox, Mail>("mail", "m", &[Delivery::Webhook])).unwrap();
    let open = TestServer::start(catalog, anonymous);
    for (method, params) in [
        ("events/subscribe", subscribe_params("mail", &ok, &secret(1))),
        ("events/unsubscribe", json!({"name": "mail", "delivery": {"url": ok}})),
    ] {
        let refused = call(&open.url, None, method, params).await;
        assert_eq!(refused["error"]["code"], -32012, "{method}: {refused}");
    }
    open.stop().await;
    let cases = [
        (
            subscribe_params("pulse", &ok, &secret(1)),
            -32014,
            Some(json!({"feature": "deliveryMode", "value": "webhook"})),
        ),
        (subscribe_params("nope", &ok, &secret(1)), -32011, Some(json!({"kind": "event"}))),
        (subscribe_params("mail", &ok.replace("https:", "http:"), &secret(1)), -32602, None),
        (subscribe_params("mail", &ok, "whsec_AAAAAAAAAAA="), -32602, None),
        (json!({"name": "mail", "arguments": {"from": 7}, "delivery": {"url": ok, "secret": secret(1)}}), -32602, None),
        (subscribe_params("mail", &ok.replace("https://", "https://user:pw@"), &secret(1)), -32602, None),
    ];
    for (params, code, data) in cases {
        let refused = call(url, Some(ANN), "events/subscribe", params.clone()).await;
        assert_eq!(refused["error"]["code"], code, "{params}: {refused}");
        if let Some(data) = data {
            assert_eq!(refused["error"]["data"], data, "{refused}");
        }
    }
    assert!(s.receiver.received("/ok/r").is_empty(), "no refused subscription reached the callback");
    // An unknown type's unsubscribe names the type, not a derived id.
    let unknown = call(url, Some(ANN), "events/unsubscribe", json!({"name": "nope", "delivery": {"url": ok}})).await;
    assert_eq!(unknown["error"]["data"], json!({"kind": "event"}), "{unknown}");
    // A fragment is never sent: it names the same subscription.
    let plain = subscribe(&s, ANN, &ok, &secret(1)).await;
    let fragment = subscribe(&s, ANN, &format!("{ok}#x"), &secret(1)).await;
    assert_eq!(plain["result"]["id"], fragment["result"]["id"], "{fragment}");
    s.server.stop().await;
    s.receiver.stop().await;
}

#[actix_rt::test]
async fn callbacks_that_are_not_public_redirect_or_misanswer_are_refused_without_delivery() {
    let s = setup(|c| c.events.webhooks.max_answer_bytes = 1024);
    let port = s.receiver.ip_origin.rsplit(':').next().unwrap().to_owned();
    let origin = s.receiver.origin.clone();
    let code_reason =
        |v: &Value| (v["error"]["code"].as_i64(), v["error"]["data"]["reason"].as_str().map(str::to_owned));
    let refused = [
        // Loopback by address, v4 and v6, and the metadata address: never
        // dialled (the receiver listens on 127.0.0.1 and records nothing).
        (format!("https://127.0.0.1:{port}/ok/ip"), "connection_refused"),
        // The same address spelled as one number, in hex, shortened, or as
        // a name with a trailing dot.
        (format!("https://2130706433:{port}/ok/ip"), "connection_refused"),
        (format!("https://0x7f.1:{port}/ok/ip"), "connection_refused"),
        (format!("https://127.1:{port}/ok/ip"), "connection_refused"),
        (format!("https://localhost.:{port}/ok/ip"), "connection_refused"),
        (format!("https://[::ffff:7f00:1]:{port}/ok/ip"), "connection_refused"),
        (format!("https://[::1]:{port}/ok/v6"), "connection_refused"),
        ("https://169.254.169.254/latest/meta-data/".to_owned(), "connection_refused"),
        (format!("https://[::ffff:127.0.0.1]:{port}/ok/mapped"), "connection_refused"),
        // Allowed origin, misbehaving callbacks.
        (format!("{origin}/wrong/x"), "challenge_failed"),
        (format!("{origin}/flood/x"), "challenge_failed"),
        (format!("{origin}/silent/x"), "timeout"),
    ];
    for (callback, reason) in &refused {
        let answer = subscribe(&s, ANN, callback, &secret(1)).await;
        assert_eq!(code_reason(&answer), (Some(-32015), Some(reason.to_string())), "{callback}: {answer}");
        let message = answer["error"]["message"].as_str().unwrap_or_default();
        assert!(!message.contains(common::receiver::WRONG_CHALLENGE_ECHO), "the answer is never repeated: {message}");
    }
    // localhost resolves to loopback: refused unless its origin is allowed
    // (it is here, as https://localhost:PORT; the same host on another
    // port is not).
    let other_port = format!("https://localhost:{}/ok/p", free_port());
    let answer = subscribe(&s, ANN, &other_port, &secret(1)).await;
    assert_eq!(code_reason(&answer), (Some(-32015), Some("connection_refused".into())), "{answer}");
    let message = answer["error"]["message"].as_str().unwrap_or_default().to_owned();
    assert!(message.contains("does not resolve to a publicly routable address"), "{answer}");
    // A name that does not resolve reads the same: nothing is learnt of
    // which private names exist.
    let unknown = subscribe(&s, ANN, &format!("https://no-such-host.invalid:{port}/p"), &secret(1)).await;
    let unknown = unknown["error"]["message"].as_str().unwrap_or_default().replace("no-such-host.invalid", "H");
    assert_eq!(unknown, message.replace("localhost", "H"));
    for path in ["/ok/ip", "/ok/v6", "/ok/mapped", "/ok/p"] {
        assert!(s.receiver.received(path).is_empty(), "{path} was reached");
    }
    // A callback that answers its deliveries 302 is never followed: each
    // attempt is a failure (retried), and the target hears nothing.
    let redirect = format!("{origin}/redirect/x");
    assert!(subscribe(&s, ANN, &redirect, &secret(1)).await["result"]["id"].is_string());
    s.mail.emit(Mail { from: "r@x".into() }).unwrap();
    let redirected =
        s.receiver.wait_for("/redirect/x", WAIT, |r| r.iter().filter(|d| d.status == 302).count() >= 3).await;
    assert_eq!(redirected.iter().filter(|d| d.status == 302).count(), 3, "max_attempts attempts, each redirected");
    assert!(s.receiver.received("/ok/x").is_empty(), "the redirect was followed");
    let status = subscribe(&s, ANN, &redirect, &secret(1)).await;
    assert_eq!(status["result"]["deliveryStatus"]["lastError"], "http_4xx", "{status}");
    s.server.stop().await;
    s.receiver.stop().await;
}

#[actix_rt::test]
async fn an_unsubscribe_stops_a_delivery_under_way_and_a_termination_spares_the_next_subscription() {
    let s = setup(|c| c.events.webhooks.timeout_ms = 1000);
    let (stall, ok) = (format!("{}/stall/u", s.receiver.origin), format!("{}/ok/w", s.receiver.origin));
    subscribe(&s, ANN, &stall, &secret(1)).await;
    subscribe(&s, ANN, &ok, &secret(1)).await;
    s.mail.emit(Mail { from: "1@x".into() }).unwrap();
    s.receiver.wait_for("/stall/u", WAIT, |r| events(r).len() == 1).await;
    let unsubscribe = json!({"name": "mail", "arguments": {}, "delivery": {"url": stall}});
    assert!(call(&s.server.url, Some(ANN), "events/unsubscribe", unsubscribe).await["result"].is_object());
    // The post under way is abandoned, and nothing follows it: no retry
    // after its timeout (1 s, then 100 ms), no later occurrence.
    s.mail.emit(Mail { from: "2@x".into() }).unwrap();
    s.receiver.wait_for("/ok/w", WAIT, |r| events(r).len() >= 2).await;
    let after = s.receiver.wait_for("/stall/u", Duration::from_millis(2500), |r| r.len() > 2).await;
    assert_eq!(events(&after).len(), 1, "{after:?}");

    // A subscription ended by the server, then made again with the same
    // key: the new one stays once the old one's `terminated` is sent.
    let webhooks = s.catalog.state::<Webhooks>().unwrap();
    let id = subscribe(&s, ANN, &ok, &secret(1)).await["result"]["id"].as_str().unwrap().to_owned();
    assert!(webhooks.terminate(&id, actix_mcp::protocol::events::EventError::Forbidden("revoked".into())).await);
    let again = subscribe(&s, ANN, &ok, &secret(2)).await;
    assert_eq!(again["result"]["id"], id, "the same key, the same id");
    assert!(again["result"].get("deliveryStatus").is_none(), "a new subscription, not a refresh: {again}");
    let ended =
        s.receiver.wait_for("/ok/w", WAIT, |r| r.iter().any(|d| d.kind().as_deref() == Some("terminated"))).await;
    let terminated = ended.iter().find(|d| d.kind().as_deref() == Some("terminated")).unwrap().json();
    assert_eq!(terminated["error"]["code"], -32012, "{terminated}");
    assert_eq!(webhooks.state(&id).await, Some(SubscriptionState::Active));
    s.mail.emit(Mail { from: "3@x".into() }).unwrap();
    let got = s.receiver.wait_for("/ok/w", WAIT, |r| events(r).iter().any(|d| d.json()["data"]["from"] == "3@x")).await;
    assert!(events(&got).iter().any(|d| d.json()["data"]["from"] == "3@x"));
    s.server.stop().await;
    s.receiver.stop().await;
}

#[actix_rt::test]
async fn the_watermark_never_passes_an_occurrence_still_being_retried() {
    let s = setup(|_| {});
    // A cursor from before three occurrences: the subscription replays
    // them in one batch; the first fails once (retried), the others pass.
    let polled = call(&s.server.url, Some(ANN), "events/poll", json!({"name": "mail", "cursor": null})).await;
    let from = polled["result"]["cursor"].clone();
    for n in 1..=3 {
        s.mail.emit(Mail { from: format!("{n}@x") }).unwrap();
    }
    let mut params = subscribe_params("mail", &format!("{}/flaky/w", s.receiver.origin), &secret(1));
    params["cursor"] = from.clone();
    let answer = call(&s.server.url, Some(ANN), "events/subscribe", params).await;
    assert_eq!(answer["result"]["cursor"], from, "{answer}");
    let got =
        s.receiver.wait_for("/flaky/w", WAIT, |r| events(r).iter().filter(|d| d.status == 200).count() >= 3).await;
    let delivered = events(&got);
    let first_attempts: Vec<_> =
        delivered.iter().take(3).map(|d| (d.json()["data"]["from"].clone(), d.status)).collect();
    assert_eq!(first_attempts, [(json!("1@x"), 500), (json!("2@x"), 200), (json!("3@x"), 200)], "in order");
    for d in &delivered[1..3] {
        assert_eq!(d.json()["cursor"], from, "the first is unsettled: nothing past it is safe to persist");
    }
    s.server.stop().await;
    s.receiver.stop().await;
}

#[actix_rt::test]
async fn challenges_at_once_are_capped_and_the_test_controls_are_off_by_default() {
    let s = setup(|c| (c.events.webhooks.max_challenges, c.events.webhooks.timeout_ms) = (1, 2000));
    let silent = format!("{}/silent/c", s.receiver.origin);
    let ok = format!("{}/ok/c", s.receiver.origin);
    let key = secret(1);
    let hanging = subscribe(&s, ANN, &silent, &key);
    let second = async {
        // Once the first challenge reached the receiver, the only place is taken.
        s.receiver.wait_for("/silent/c", WAIT, |r| !r.is_empty()).await;
        subscribe(&s, BOB, &ok, &secret(1)).await
    };
    let (first, second) = futures::join!(hanging, second);
    assert_eq!(first["error"]["data"]["reason"], "timeout", "{first}");
    assert_eq!(second["error"]["data"], json!({"limit": "webhook_challenges", "max": 1}), "{second}");
    // The place is given back.
    assert!(subscribe(&s, BOB, &ok, &secret(1)).await["result"]["id"].is_string());
    s.server.stop().await;
    s.receiver.stop().await;

    let everything = TestServer::everything();
    let allow = request(
        json!(1),
        "tools/call",
        json!({"name": "events_conformance_allow_callback_origin", "arguments": {"origin": "https://10.0.0.5"}}),
    );
    let refused = post(&everything.url, &allow).await;
    let result = &refused.response()["result"];
    assert_eq!(result["isError"], true, "{}", refused.raw);
    assert!(result["content"][0]["text"].as_str().unwrap_or_default().contains("test_controls"), "{}", refused.raw);
    // So is every control that acts on a type's subscriptions.
    for tool in ["events_conformance_terminate", "events_conformance_yield_gap", "events_conformance_yield_error"] {
        let body = request(json!(2), "tools/call", json!({"name": tool, "arguments": {"name": "clock.tick"}}));
        let answer = post(&everything.url, &body).await;
        assert_eq!(answer.response()["result"]["isError"], true, "{tool}: {}", answer.raw);
    }
    everything.stop().await;
}
