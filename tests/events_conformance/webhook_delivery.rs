//! The `events-webhook-delivery` scenario: the address guard, the challenge,
//! deliveries' headers and signatures, retries, 410 and 413, redirects, and
//! the control bodies. The suite's receiver is plain HTTP on loopback; this
//! one is HTTPS (its CA trusted for allowed origins only), since this server
//! posts to `https` callbacks only. The suite sleeps fixed windows to see
//! what arrives; here each wait ends as soon as what it waits for arrives,
//! and the windows that prove an absence are the suite's own, shortened to
//! this server's retry timing (a retry comes 1 s after a failure).
//!
//! The signature row checks the suite's formula in Rust, and every delivery
//! of the run again with the `standardwebhooks` package (Python).

use std::sync::atomic::AtomicUsize;

use super::common::receiver::{Behaviour, Received, Receiver, WRONG_CHALLENGE_ECHO};
use super::*;

const DELIVERY_WAIT: Duration = Duration::from_secs(20);
/// How long repeats are awaited: past the first retry of a failure.
const SETTLE: Duration = Duration::from_millis(2500);
const CANARY_WAIT: Duration = Duration::from_secs(3);
const ENVELOPE_WAIT: Duration = Duration::from_secs(5);
const LAST_ERROR_CATEGORIES: [&str; 4] = ["challenge_failed", "connection_refused", "timeout", "tls_error"];
const BODY_CEILING_BYTES: usize = 262_144;

struct Run<'a> {
    url: &'a str,
    receiver: &'a Receiver,
    name: String,
    args: Value,
    secret: String,
    key: Vec<u8>,
}

impl Run<'_> {
    fn callback(&self, path: &str) -> String {
        format!("{}{path}", self.receiver.ip_origin)
    }

    async fn subscribe(&self, callback: &str) -> Result<Value, RpcError> {
        let delivery = json!({"mode": "webhook", "url": callback, "secret": self.secret});
        let params = json!({"name": self.name, "arguments": self.args, "delivery": delivery, "cursor": null,
            "ttlMs": 3_600_000});
        call(self.url, "events/subscribe", params).await
    }

    async fn release(&self, callback: &str) {
        let params =
            json!({"name": self.name, "arguments": self.args, "delivery": {"mode": "webhook", "url": callback}});
        let _ = call(self.url, "events/unsubscribe", params).await;
    }

    /// The suite's formula: `v1,` + Base64(HMAC-SHA256(key, id.timestamp.body)).
    fn signed(&self, d: &Received) -> bool {
        use base64::Engine;
        let (Some(id), Some(signatures)) = (d.header("webhook-id"), d.header("webhook-signature")) else {
            return false;
        };
        let timestamp = d.header("webhook-timestamp").unwrap_or_default();
        let mut mac = hmac_sha256::HMAC::new(&self.key);
        mac.update(format!("{id}.{timestamp}.").as_bytes());
        mac.update(&d.body);
        let expected = format!("v1,{}", base64::engine::general_purpose::STANDARD.encode(mac.finalize()));
        signatures.split_whitespace().any(|s| s == expected)
    }
}

fn stamp() -> u128 {
    SystemTime::now().duration_since(UNIX_EPOCH).unwrap_or_default().as_millis()
}

/// A TCP listener on loopback that counts the connections it accepts.
struct Canary {
    port: u16,
    connections: Arc<AtomicUsize>,
}

fn start_canary() -> Canary {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    listener.set_nonblocking(true).unwrap();
    let port = listener.local_addr().unwrap().port();
    let connections = Arc::new(AtomicUsize::new(0));
    let counted = connections.clone();
    let listener = tokio::net::TcpListener::from_std(listener).unwrap();
    actix_rt::spawn(async move {
        while listener.accept().await.is_ok() {
            counted.fetch_add(1, Ordering::SeqCst);
        }
    });
    Canary { port, connections }
}

pub(super) async fn delivery_scenario(url: &str, receiver: &Receiver) -> Vec<Check> {
    let descriptors = match delivery_catalog(url, DELIVERY_IDS, "webhook").await {
        Ok(descriptors) => descriptors,
        Err(rows) => return rows,
    };
    let (target, name) = match delivery_target(&descriptors, "webhook") {
        Ok(found) => found,
        Err(reason) => return untestable_all(DELIVERY_IDS, &reason, Failure),
    };
    let Some(args) = minimal_arguments(target) else {
        return untestable_all(DELIVERY_IDS, "Required `inputSchema` properties the harness cannot satisfy.", Failure);
    };
    let key: Vec<u8> = (0..4).flat_map(|_| random().to_le_bytes()).collect();
    let secret = {
        use base64::Engine;
        format!("whsec_{}", base64::engine::general_purpose::STANDARD.encode(&key))
    };
    let run = Run { url, receiver, name, args, secret, key };
    let mut checks = vec![canary_check(&run).await];
    let path = format!("/wk/hook-{}", stamp());
    let main = run.callback(&path);
    let mut subscribed = run.subscribe(&main).await;
    let mut lifted = false;
    if let Err(e) = &subscribed {
        checks.push(check("sep-9999-ssrf-validate-callback-url", Success, format!("refused: {e}")));
        let origin = json!({"origin": receiver.ip_origin});
        lifted = ask_control(url, "events_conformance_allow_callback_origin", origin).await.is_some();
        if lifted {
            subscribed = run.subscribe(&main).await;
        }
    }
    let subscription = match subscribed {
        Ok(result) => result["id"].as_str().map(str::to_owned),
        Err(e) => {
            let reason = format!("The server still refused {main} ({e}), so nothing could be delivered.");
            let rest: Vec<&str> = DELIVERY_IDS.iter().copied().filter(|id| !id.starts_with("sep-9999-ssrf")).collect();
            checks.extend(untestable_all(&rest[1..], &reason, Failure));
            checks.push(untestable("sep-9999-ssrf-validate-at-delivery-time", &reason, Failure));
            checks.push(untestable("sep-9999-ssrf-no-redirects", &reason, Failure));
            return dedupe(checks);
        }
    };
    let rows = delivered(&run, &path, subscription.as_deref(), lifted).await;
    checks.extend(rows);
    run.release(&main).await;
    dedupe(checks)
}

/// `sep-9999-ssrf-reject-non-routable`: an `https://127.0.0.1` callback is
/// refused without a connection to it.
async fn canary_check(run: &Run<'_>) -> Check {
    let id = "sep-9999-ssrf-reject-non-routable";
    let canary = start_canary();
    let probe = format!("https://127.0.0.1:{}/ssrf-probe-{}", canary.port, stamp());
    let accepted = run.subscribe(&probe).await.is_ok();
    if accepted {
        let deadline = Instant::now() + CANARY_WAIT;
        while canary.connections.load(Ordering::SeqCst) == 0 && Instant::now() < deadline {
            run.receiver.wait_for("/never", Duration::from_millis(100), |_| false).await;
        }
        run.release(&probe).await;
    }
    match (canary.connections.load(Ordering::SeqCst), accepted) {
        (0, false) => pass(id),
        (0, true) => check(id, Warning, "The loopback canary was accepted and nothing connected to it."),
        (_, _) => check(id, Failure, "The server connected to a loopback canary."),
    }
}

async fn delivered(run: &Run<'_>, path: &str, subscription: Option<&str>, lifted: bool) -> Vec<Check> {
    let mut checks = Vec::new();
    // The challenge arrived during the subscribe; the first occurrence
    // follows within the type's second.
    let first = run.receiver.wait_for(path, DELIVERY_WAIT, |r| r.iter().any(|d| !d.is_challenge())).await;
    if lifted {
        let reason = "This origin was permitted through `events_conformance_allow_callback_origin`, so a delivery to \
                      it is not evidence either way.";
        checks.push(check("sep-9999-ssrf-validate-at-delivery-time", Skipped, reason));
    } else if !first.is_empty() {
        checks.push(check("sep-9999-ssrf-validate-callback-url", Failure, "The server POSTed to a loopback address."));
    }
    checks.push(untestable("sep-9999-ssrf-validate-at-delivery-time", "Needs a DNS answer that changes.", Failure));
    if first.is_empty() {
        let reason = format!("Nothing arrived at {path} within {DELIVERY_WAIT:?} of subscribing.");
        checks.extend(untestable_all(&DELIVERY_IDS[1..], &reason, Failure));
        return checks;
    }
    let all = run.receiver.received(path);
    checks.extend(verification_rows(&all));
    let endpoint_failure = wrong_challenge(run, &all, &mut checks).await;
    checks.extend(residual_verification(endpoint_failure.as_ref()));
    checks.push(callback_error_row(endpoint_failure.as_ref()));
    checks.extend(transport_rows(&all, subscription));
    checks.push(signature_row(run, &all));
    checks.push(redirect_row(run).await);
    checks.extend(retry_rows(run).await);
    for (id, kind, status) in [
        ("sep-9999-delivery-410-non-retryable", "gone", 410),
        ("sep-9999-delivery-413-non-retryable", "too-large", 413),
    ] {
        checks.push(non_retryable(run, id, kind, status).await);
    }
    checks.extend(envelope_rows(run, path, subscription).await);
    checks
}

fn verification_rows(all: &[Received]) -> Vec<Check> {
    let events: Vec<&Received> = all.iter().filter(|d| d.json()["eventId"].is_string()).collect();
    let Some(verification) = all.iter().find(|d| d.is_challenge()) else {
        let status = if events.is_empty() { Warning } else { Failure };
        return vec![
            check("sep-9999-verification-required-before-delivery", status, "Delivered without a challenge."),
            untestable("sep-9999-verification-challenge-echo", "No challenge arrived.", Failure),
        ];
    };
    let before = events.first().is_none_or(|e| verification.at <= e.at);
    vec![
        if before {
            pass("sep-9999-verification-required-before-delivery")
        } else {
            check("sep-9999-verification-required-before-delivery", Failure, "An event came before the challenge.")
        },
        if verification.json()["challenge"].is_string() {
            pass("sep-9999-verification-challenge-echo")
        } else {
            check("sep-9999-verification-challenge-echo", Failure, "The challenge has no string `challenge`.")
        },
    ]
}

/// `sep-9999-verification-failure-error`: a callback echoing the wrong
/// challenge is refused with `-32015 challenge_failed`. The error, kept.
async fn wrong_challenge(run: &Run<'_>, all: &[Received], checks: &mut Vec<Check>) -> Option<RpcError> {
    let id = "sep-9999-verification-failure-error";
    if !all.iter().any(Received::is_challenge) {
        checks.push(untestable(id, "No challenge arrived on the main path.", Failure));
        return None;
    }
    let path = format!("/wrong-challenge-{}", stamp());
    run.receiver.behave(&path, Behaviour::WrongChallenge);
    let callback = run.callback(&path);
    match run.subscribe(&callback).await {
        Err(e) => {
            let ok = e.code == -32015 && e.data["reason"] == "challenge_failed";
            checks.push(if ok { pass(id) } else { check(id, Failure, format!("Answered {e} {}.", e.data)) });
            Some(e)
        }
        Ok(_) => {
            let got = run
                .receiver
                .wait_for(&path, DELIVERY_WAIT, |r| r.iter().any(|d| d.json()["eventId"].is_string()))
                .await;
            let delivered = got.iter().any(|d| d.json()["eventId"].is_string());
            let status = if delivered { Failure } else { Warning };
            checks.push(check(id, status, "A callback that echoed the wrong challenge was accepted."));
            run.release(&callback).await;
            None
        }
    }
}

fn residual_verification(endpoint_failure: Option<&RpcError>) -> Vec<Check> {
    let mut checks =
        vec![untestable("sep-9999-verification-uses-ssrf-hardened-path", "Needs a redirecting challenge.", Warning)];
    let reason = "Needs a second principal, a server restart, or a key-discovery origin the harness does not control.";
    for id in [
        "sep-9999-verification-cached-per-principal-url",
        "sep-9999-verification-persisted-for-no-expiry",
        "sep-9999-server-identity-key-discovery",
    ] {
        checks.push(untestable(id, reason, Warning));
    }
    let raw = "sep-9999-verification-no-raw-endpoint-responses";
    checks.push(match endpoint_failure {
        None => untestable(raw, "No callback failed verification.", Warning),
        Some(e) if json!({"message": e.message, "data": e.data}).to_string().contains(WRONG_CHALLENGE_ECHO) => {
            check(raw, Failure, "The error repeats the callback's answer.")
        }
        Some(_) => pass(raw),
    });
    checks
}

fn callback_error_row(endpoint_failure: Option<&RpcError>) -> Check {
    let id = "sep-9999-error-callback-endpoint-error";
    match endpoint_failure {
        None => untestable(id, "No callback failed verification or connection during this run.", Failure),
        Some(e) if e.code != -32015 => check(id, Failure, format!("Answered {e}, not -32015.")),
        Some(e) if LAST_ERROR_CATEGORIES.iter().any(|c| e.data["reason"] == *c) => pass(id),
        Some(e) => check(id, Warning, format!("`data.reason` is {}.", e.data["reason"])),
    }
}

fn transport_rows(all: &[Received], subscription: Option<&str>) -> Vec<Check> {
    let graded: Vec<&Received> = all.iter().filter(|d| d.status != 302).collect();
    let every = |id: &str, ok: &dyn Fn(&Received) -> bool, why: &str| {
        if graded.iter().all(|d| ok(d)) {
            pass(id)
        } else {
            check(id, Failure, why.to_owned())
        }
    };
    vec![
        every(
            "sep-9999-delivery-post-json",
            &|d| d.header("content-type").unwrap_or_default().contains("application/json"),
            "A delivery is not application/json.",
        ),
        every(
            "sep-9999-delivery-standard-webhooks-headers",
            &|d| ["webhook-id", "webhook-timestamp", "webhook-signature"].iter().all(|h| d.header(h).is_some()),
            "A delivery lacks a Standard Webhooks header.",
        ),
        every(
            "sep-9999-delivery-subscription-id-header",
            &|d| d.header("x-mcp-subscription-id").is_some_and(|h| subscription.is_none_or(|s| s == h)),
            "A delivery's X-MCP-Subscription-Id is missing or another subscription's.",
        ),
        every("sep-9999-delivery-body-size", &|d| d.body.len() <= BODY_CEILING_BYTES, "A body passed 256 KiB."),
        untestable("sep-9999-delivery-status-last-error-category", "`deliveryStatus` is optional.", Warning),
        untestable("sep-9999-delivery-dual-sign-on-rotation", "Needs a secret rotation mid-delivery.", Warning),
    ]
}

/// The suite's formula on every signed delivery of the main path; then
/// `standardwebhooks` on the same deliveries.
fn signature_row(run: &Run<'_>, all: &[Received]) -> Check {
    let id = "sep-9999-delivery-signature-formula";
    let signed: Vec<Received> = all
        .iter()
        .filter(|d| d.header("webhook-signature").is_some() && d.header("webhook-id").is_some())
        .cloned()
        .collect();
    if signed.is_empty() {
        return untestable(id, "Nothing signed arrived.", Failure);
    }
    if let Some(bad) = signed.iter().find(|d| !run.signed(d)) {
        return check(id, Failure, format!("A delivery's signature does not verify: {:?}", bad.header("webhook-id")));
    }
    let test = "events_conformance::events_webhook_delivery_scenario";
    if let Some(verdicts) = common::receiver::standard_webhooks_verify(test, &run.secret, &signed)
        && let Some(refused) = verdicts.iter().find(|v| *v != "ok")
    {
        return check(id, Failure, format!("standardwebhooks refuses a delivery: {refused}"));
    }
    pass(id)
}

async fn redirect_row(run: &Run<'_>) -> Check {
    let id = "sep-9999-ssrf-no-redirects";
    let (from, to) = (format!("/redirect-{}", stamp()), format!("/redirect-target-{}", stamp()));
    run.receiver.behave(&from, Behaviour::Redirect(run.callback(&to)));
    let callback = run.callback(&from);
    if let Err(e) = run.subscribe(&callback).await {
        return untestable(id, &format!("Subscribing the redirecting callback answered {e}."), Failure);
    }
    let got = run.receiver.wait_for(&from, DELIVERY_WAIT, |r| r.iter().any(|d| d.status == 302)).await;
    let row = if !got.iter().any(|d| d.status == 302) {
        untestable(id, "No delivery reached the redirecting path.", Failure)
    } else if !run.receiver.wait_for(&to, SETTLE, |r| !r.is_empty()).await.is_empty() {
        check(id, Failure, "The server followed a 302.")
    } else {
        pass(id)
    };
    run.release(&callback).await;
    row
}

async fn retry_rows(run: &Run<'_>) -> Vec<Check> {
    let (regenerates, bounded) = ("sep-9999-delivery-retry-regenerates-signature", "sep-9999-delivery-retries-bounded");
    let path = format!("/flaky-{}", stamp());
    run.receiver.behave(&path, Behaviour::FailFirst { failures: 2, status: 503 });
    let callback = run.callback(&path);
    if let Err(e) = run.subscribe(&callback).await {
        let reason = format!("Subscribing the flaky callback answered {e}.");
        return vec![untestable(regenerates, &reason, Failure), untestable(bounded, &reason, Failure)];
    }
    // The first delivery fails twice, then is accepted: wait for that.
    let accepted_retry = |r: &[Received]| r.iter().any(|d| !d.is_challenge() && d.status == 200);
    run.receiver.wait_for(&path, DELIVERY_WAIT, accepted_retry).await;
    let attempts = run.receiver.received(&path);
    run.release(&callback).await;
    let mut groups: Vec<(String, Vec<&Received>)> = Vec::new();
    for d in &attempts {
        let key = d.header("webhook-id").unwrap_or_default().to_owned();
        match groups.iter_mut().find(|(k, _)| *k == key) {
            Some((_, group)) => group.push(d),
            None => groups.push((key, vec![d])),
        }
    }
    let Some((_, retried)) = groups.into_iter().find(|(_, g)| g.len() > 1) else {
        let reason = "No delivery was retried.";
        return vec![untestable(regenerates, reason, Warning), untestable(bounded, reason, Warning)];
    };
    let stamps: Vec<&str> = retried.iter().map(|d| d.header("webhook-timestamp").unwrap_or_default()).collect();
    let spaced: Vec<_> =
        retried.windows(2).filter(|p| p[1].at.saturating_sub(p[0].at) >= Duration::from_secs(1)).collect();
    let reused = spaced.iter().any(|p| p[0].header("webhook-timestamp") == p[1].header("webhook-timestamp"));
    let distinct = stamps.iter().collect::<BTreeSet<_>>().len() == stamps.len();
    vec![
        if reused {
            check(regenerates, Failure, "A retry reused the timestamp and signature.")
        } else if !spaced.is_empty() || distinct {
            pass(regenerates)
        } else {
            check(regenerates, Warning, "Every retry came within 1 s.")
        },
        if retried.len() <= 6 { pass(bounded) } else { check(bounded, Warning, "More than 6 attempts.") },
    ]
}

async fn non_retryable(run: &Run<'_>, id: &str, kind: &str, status: u16) -> Check {
    let path = format!("/{kind}-{}", stamp());
    run.receiver.behave(&path, Behaviour::Status(status));
    let callback = run.callback(&path);
    if let Err(e) = run.subscribe(&callback).await {
        return untestable(id, &format!("Subscribing answered {e}."), Failure);
    }
    let got = run.receiver.wait_for(&path, DELIVERY_WAIT, |r| r.iter().any(|d| !d.is_challenge())).await;
    let row = match got.iter().find(|d| !d.is_challenge()).and_then(|d| d.header("webhook-id")).map(str::to_owned) {
        None => untestable(id, "Nothing was delivered.", Failure),
        Some(first) => {
            // A retry would come 1 s after the refusal.
            let repeated =
                |r: &[Received]| r.iter().filter(|d| d.header("webhook-id") == Some(first.as_str())).count() > 1;
            let after = run.receiver.wait_for(&path, SETTLE, repeated).await;
            if repeated(&after) {
                check(id, Failure, format!("A {status} was retried."))
            } else {
                pass(id)
            }
        }
    };
    run.release(&callback).await;
    row
}

async fn envelope_rows(run: &Run<'_>, path: &str, subscription: Option<&str>) -> Vec<Check> {
    let mut sent = Vec::new();
    for (tool, kind) in
        [("events_conformance_webhook_gap", "gap"), ("events_conformance_webhook_terminate", "terminated")]
    {
        let outcome = match subscription {
            _ if !has_control(run.url, tool).await => "absent",
            None => "refused",
            Some(id) => match ask_control(run.url, tool, json!({"id": id})).await {
                None => "refused",
                Some(_) => {
                    run.receiver
                        .wait_for(path, ENVELOPE_WAIT, |r| r.iter().any(|d| d.kind().as_deref() == Some(kind)))
                        .await;
                    "sent"
                }
            },
        };
        sent.push(outcome);
    }
    let all = run.receiver.received(path);
    let envelopes: Vec<&Received> = all.iter().filter(|d| d.kind().is_some()).collect();
    let events: Vec<&Received> = all.iter().filter(|d| d.kind().is_none() && d.json()["eventId"].is_string()).collect();
    let none = "No control envelope arrived during the run.";
    let first_of = |kind: &str| all.iter().find(|d| d.kind().as_deref() == Some(kind)).map(Received::json);
    vec![
        if envelopes.is_empty() && events.is_empty() {
            untestable("sep-9999-envelope-type-discriminator", "Nothing arrived.", Failure)
        } else if events.iter().all(|d| is_iso8601(&d.json()["timestamp"])) {
            pass("sep-9999-envelope-type-discriminator")
        } else {
            check("sep-9999-envelope-type-discriminator", Failure, "An event without an ISO 8601 timestamp.")
        },
        if envelopes.is_empty() {
            untestable("sep-9999-envelope-signed-like-deliveries", none, Failure)
        } else if envelopes
            .iter()
            .all(|d| d.header("webhook-signature").is_some() && d.header("x-mcp-subscription-id").is_some())
        {
            pass("sep-9999-envelope-signed-like-deliveries")
        } else {
            check("sep-9999-envelope-signed-like-deliveries", Failure, "An envelope is not signed and headed.")
        },
        if envelopes.is_empty() {
            untestable("sep-9999-envelope-webhook-id-format", none, Failure)
        } else if envelopes.iter().all(|d| envelope_id_ok(d.header("webhook-id").unwrap_or_default())) {
            pass("sep-9999-envelope-webhook-id-format")
        } else {
            check(
                "sep-9999-envelope-webhook-id-format",
                Warning,
                "An envelope's webhook-id is not msg_<type>_<random>.",
            )
        },
        match (first_of("gap"), sent[0]) {
            (Some(gap), _) if gap["cursor"].is_string() => pass("sep-9999-envelope-gap"),
            (Some(_), _) => check("sep-9999-envelope-gap", Warning, "The gap body has no string cursor."),
            (None, "sent") => check("sep-9999-envelope-gap", Warning, "The gap control answered, nothing arrived."),
            (None, _) => untestable("sep-9999-envelope-gap", "The gap control is absent or refused.", Warning),
        },
        match (first_of("terminated"), sent[1]) {
            (Some(end), _) if end["error"].is_object() => pass("sep-9999-envelope-terminated"),
            (Some(_), _) => check("sep-9999-envelope-terminated", Warning, "The terminated body has no error object."),
            (None, "sent") => {
                check("sep-9999-envelope-terminated", Failure, "The terminate control answered, nothing arrived.")
            }
            (None, _) => {
                untestable("sep-9999-envelope-terminated", "The terminate control is absent or refused.", Warning)
            }
        },
    ]
}

/// `/^msg_[a-z]+_.+/i`.
fn envelope_id_ok(id: &str) -> bool {
    let Some(rest) = id.get(..4).filter(|p| p.eq_ignore_ascii_case("msg_")).map(|_| &id[4..]) else { return false };
    let letters = rest.bytes().take_while(u8::is_ascii_alphabetic).count();
    letters > 0 && rest.as_bytes().get(letters) == Some(&b'_') && rest.len() > letters + 1
}
