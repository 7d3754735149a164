//! The MCP Events conformance scenarios `events-discovery`, `events-poll`,
//! `events-push`, `events-webhook` and `events-webhook-delivery`
//! (modelcontextprotocol/conformance, extension
//! `io.modelcontextprotocol/events`), re-graded against the everything
//! catalog over real HTTP on loopback: the scenarios' requests in their
//! order, and their check ids with the same SUCCESS / FAILURE / WARNING /
//! SKIPPED rules. A row a scenario cannot exercise is "untestable": a
//! FAILURE or a WARNING, as the suite grades it.
//!
//! Each test asserts that its scenario emits exactly its ids, that no row
//! fails, and that only the rows the suite cannot drive against a conformant
//! server (or that do not apply to this one) are other than SUCCESS.

use crate::common;

use std::collections::BTreeSet;
use std::hash::BuildHasher;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use futures::StreamExt;
use serde_json::{json, Map, Value};

use self::discovery::discovery_scenario;
use self::poll::poll_scenario;
use self::push::push_scenario;
use self::webhook::webhook_scenario;
use self::webhook_delivery::delivery_scenario;
use self::Status::{Failure, Skipped, Success, Warning};

mod discovery;
mod poll;
mod push;
mod stream;
mod webhook;
mod webhook_delivery;

const EVENTS_EXTENSION: &str = "io.modelcontextprotocol/events";
const SUBSCRIPTION_ID: &str = "io.modelcontextprotocol/subscriptionId";

const METHOD_NOT_FOUND: i64 = -32601;
const INVALID_PARAMS: i64 = -32602;
const NOT_FOUND: i64 = -32011;
const RESOURCE_EXHAUSTED: i64 = -32013;
const UNSUPPORTED: i64 = -32014;

const ACTIVE: &str = "notifications/events/active";
const EVENT: &str = "notifications/events/event";
const HEARTBEAT: &str = "notifications/events/heartbeat";
const ERROR: &str = "notifications/events/error";
const TERMINATED: &str = "notifications/events/terminated";

const YIELD_ERROR: &str = "events_conformance_yield_error";
const YIELD_GAP: &str = "events_conformance_yield_gap";
const TERMINATE: &str = "events_conformance_terminate";
const QUOTA: &str = "events_conformance_quota";

/// How often the test servers heartbeat a stream that delivered nothing.
const HEARTBEAT_MS: u64 = 300;
/// The `events/list` page size of the discovery and poll servers: two of the
/// catalog's three event types on the first page, so the list paginates.
const LIST_PAGE: usize = 2;
/// How long the main push stream is watched (the suite's default is 35 s,
/// for a server that may heartbeat only every 30 s; these heartbeat every
/// 300 ms).
const WATCH_MS: u64 = 3000;
const ACTIVE_MS: u64 = 3000;
const TERMINATE_MS: u64 = 5000;
/// The 30 s heartbeat SHOULD, with the suite's 2 s of tolerance.
const HEARTBEAT_LIMIT_MS: u64 = 32_000;
const OCCURRENCE_WAIT_MS: u64 = 6000;
const MAX_AGE_PROBE_MS: u64 = 300_000;

const NOT_OFFERED: &str =
    "Server does not declare the `events` capability and does not implement `events/list`; the extension is optional.";

/// The row the suite's runner appends to every scenario: each message that
/// went through an ordinary request fits the draft's wire schema.
const WIRE_ROW: &str = "wire-schema-valid";

const DISCOVERY_IDS: &[&str] = &[
    WIRE_ROW,
    "sep-9999-capability-events-object",
    "sep-9999-capability-list-changed-flag",
    "sep-9999-capability-empty-settings",
    "sep-9999-fallback-method-not-found",
    "sep-9999-list-implemented",
    "sep-9999-list-pagination",
    "sep-9999-descriptor-name",
    "sep-9999-descriptor-description",
    "sep-9999-descriptor-delivery-subset",
    "sep-9999-descriptor-input-schema",
    "sep-9999-descriptor-payload-schema",
    "sep-9999-descriptor-meta",
    "sep-9999-error-not-found",
    "sep-9999-error-server-range",
];

const DESCRIPTOR_IDS: &[&str] = &[
    "sep-9999-descriptor-name",
    "sep-9999-descriptor-description",
    "sep-9999-descriptor-delivery-subset",
    "sep-9999-descriptor-input-schema",
    "sep-9999-descriptor-payload-schema",
    "sep-9999-descriptor-meta",
];

/// The rows of a conformant events server that normally do not apply: it
/// declares the extension (so the fallback is moot) and `{}` or
/// `{"listChanged": …}` (so one of the two settings rows is moot).
const DISCOVERY_TOLERATED: &[&str] = &[
    "sep-9999-capability-list-changed-flag",
    "sep-9999-capability-empty-settings",
    "sep-9999-fallback-method-not-found",
];

const POLL_IDS: &[&str] = &[
    WIRE_ROW,
    "sep-9999-poll-implemented",
    "sep-9999-poll-bootstraps-subscription",
    "sep-9999-poll-events-array",
    "sep-9999-poll-response-cursor",
    "sep-9999-poll-next-poll-ms",
    "sep-9999-poll-has-more",
    "sep-9999-poll-next-poll-ms-ignored-when-has-more",
    "sep-9999-cursor-null-starts-from-now",
    "sep-9999-cursor-opaque",
    "sep-9999-poll-stateless-request",
    "sep-9999-cursor-advances-when-quiet",
    "sep-9999-cursor-consistency",
    "sep-9999-cursor-absent-equals-null",
    "sep-9999-poll-max-events-cap",
    "sep-9999-max-age-ms-floor",
    "sep-9999-truncated-poll-never-an-error",
    "sep-9999-truncated-returns-fresh-cursor",
    "sep-9999-max-age-ms-sets-truncated",
    "sep-9999-replay-ceiling-sets-truncated",
    "sep-9999-truncated-false-when-no-replay",
    "sep-9999-max-age-ms-ignored-when-cursor-null",
    "sep-9999-occurrence-event-id",
    "sep-9999-occurrence-name",
    "sep-9999-occurrence-timestamp",
    "sep-9999-occurrence-data",
    "sep-9999-occurrence-cursor-optional",
    "sep-9999-occurrence-meta-ungoverned",
    "sep-9999-occurrence-event-id-from-upstream",
    "sep-9999-poll-errors-are-jsonrpc",
    "sep-9999-removal-poll-not-found",
    "sep-9999-poll-one-subscription-per-request",
    "sep-9999-poll-invalid-arguments",
    "sep-9999-error-invalid-params",
    "sep-9999-poll-mode-unsupported",
];

const OCCURRENCE_IDS: &[&str] = &[
    "sep-9999-occurrence-event-id",
    "sep-9999-occurrence-name",
    "sep-9999-occurrence-timestamp",
    "sep-9999-occurrence-data",
    "sep-9999-occurrence-cursor-optional",
    "sep-9999-occurrence-meta-ungoverned",
    "sep-9999-occurrence-event-id-from-upstream",
];

/// What a poll cannot provoke from outside: a backlog (`hasMore: true`) and a
/// stale cursor (`truncated: true`); and the no-replay rule, which does not
/// apply to a type with replay.
const POLL_TOLERATED: &[&str] = &[
    "sep-9999-poll-next-poll-ms-ignored-when-has-more",
    "sep-9999-truncated-returns-fresh-cursor",
    "sep-9999-max-age-ms-sets-truncated",
    "sep-9999-replay-ceiling-sets-truncated",
    "sep-9999-truncated-false-when-no-replay",
];

const PUSH_IDS: &[&str] = &[
    WIRE_ROW,
    "sep-9999-stream-implemented",
    "sep-9999-stream-active-confirmation",
    "sep-9999-stream-subscription-id-meta",
    "sep-9999-stream-carries-only-event-notifications",
    "sep-9999-stream-event-notification",
    "sep-9999-stream-error-is-recoverable",
    "sep-9999-stream-terminated-ends-subscription",
    "sep-9999-stream-gap-resends-active",
    "sep-9999-stream-heartbeat-required",
    "sep-9999-stream-heartbeat-carries-cursor",
    "sep-9999-stream-heartbeat-interval",
    "sep-9999-stream-heartbeat-not-sse-comment",
    "sep-9999-stream-cancel-stops-delivery",
    "sep-9999-stream-final-result-shape",
    "sep-9999-stream-final-result-timing",
    "sep-9999-stream-exempt-from-concurrency-cap",
    "sep-9999-error-resource-exhausted",
    "sep-9999-stream-error-before-open",
];

const STREAM_IMPLEMENTED: &str = "sep-9999-stream-implemented";
const STREAM_TERMINATED: &str = "sep-9999-stream-terminated-ends-subscription";
const FINAL_SHAPE: &str = "sep-9999-stream-final-result-shape";
const FINAL_TIMING: &str = "sep-9999-stream-final-result-timing";
const RESOURCE_ROW: &str = "sep-9999-error-resource-exhausted";

#[actix_rt::test]
async fn events_discovery_scenario() {
    let srv = common::TestServer::everything_with(|c| {
        c.events.heartbeat_ms = HEARTBEAT_MS;
        c.server.page_size = LIST_PAGE;
    });
    let mut checks = discovery_scenario(&srv.url).await;
    checks.push(wire_check());
    srv.stop().await;
    grade("events-discovery", checks, DISCOVERY_IDS, DISCOVERY_TOLERATED);
}

#[actix_rt::test]
async fn events_poll_scenario() {
    let srv = common::TestServer::everything_with(|c| {
        c.events.heartbeat_ms = HEARTBEAT_MS;
        c.server.page_size = LIST_PAGE;
    });
    let mut checks = poll_scenario(&srv.url).await;
    checks.push(wire_check());
    srv.stop().await;
    grade("events-poll", checks, POLL_IDS, POLL_TOLERATED);
}

#[actix_rt::test]
async fn events_push_scenario() {
    // The default page size: the suite reads one page of `tools/list` to find
    // its diagnostic controls.
    let srv = common::TestServer::everything_with(|c| {
        c.events.heartbeat_ms = HEARTBEAT_MS;
        c.events.test_controls = true;
    });
    let mut checks = push_scenario(&srv.url).await;
    checks.push(wire_check());
    srv.stop().await;
    grade("events-push", checks, PUSH_IDS, &[]);
}

const WEBHOOK_IDS: &[&str] = &[
    WIRE_ROW,
    "sep-9999-subscribe-webhook-only",
    "sep-9999-subscribe-secret-required",
    "sep-9999-subscribe-secret-format",
    "sep-9999-subscribe-secret-rejected",
    "sep-9999-subscribe-url-https-required",
    "sep-9999-subscribe-url-non-https-rejected",
    "sep-9999-subscribe-auth-required",
    "sep-9999-subscribe-key-composition",
    "sep-9999-subscribe-key-immutable",
    "sep-9999-subscribe-idempotent-upsert",
    "sep-9999-subscribe-id-derived",
    "sep-9999-subscribe-id-not-an-input",
    "sep-9999-subscribe-refresh-replaces-secret",
    "sep-9999-subscribe-refresh-reactivates",
    "sep-9999-subscribe-response-cursor",
    "sep-9999-subscribe-response-truncated",
    "sep-9999-subscribe-cross-tenant-isolation",
    "sep-9999-ttl-refresh-before-lte-suggestion",
    "sep-9999-ttl-no-rejection-path",
    "sep-9999-ttl-null-only-when-requested",
    "sep-9999-ttl-omitted-means-default",
    "sep-9999-ttl-long-grant-retained",
    "sep-9999-ttl-no-expiry-persisted",
    "sep-9999-ttl-no-expiry-gc-terminated",
    "sep-9999-unsubscribe-by-key",
    "sep-9999-unsubscribe-unknown-not-found",
    "sep-9999-error-unsupported",
];

/// What the scenario's version cannot grade over the wire and reports as a
/// WARNING: a restart mid-run, a delivery signed with the new secret, a
/// suspension (the delivery scenario and tests/webhooks.rs grade the
/// second and the third against this server).
const WEBHOOK_TOLERATED: &[&str] = &[
    "sep-9999-subscribe-refresh-replaces-secret",
    "sep-9999-subscribe-refresh-reactivates",
    "sep-9999-ttl-long-grant-retained",
    "sep-9999-ttl-no-expiry-persisted",
    "sep-9999-ttl-no-expiry-gc-terminated",
];

const DELIVERY_IDS: &[&str] = &[
    WIRE_ROW,
    "sep-9999-delivery-post-json",
    "sep-9999-delivery-standard-webhooks-headers",
    "sep-9999-delivery-subscription-id-header",
    "sep-9999-delivery-signature-formula",
    "sep-9999-delivery-retry-regenerates-signature",
    "sep-9999-delivery-dual-sign-on-rotation",
    "sep-9999-delivery-body-size",
    "sep-9999-delivery-413-non-retryable",
    "sep-9999-delivery-410-non-retryable",
    "sep-9999-delivery-retries-bounded",
    "sep-9999-delivery-status-last-error-category",
    "sep-9999-verification-required-before-delivery",
    "sep-9999-verification-challenge-echo",
    "sep-9999-verification-failure-error",
    "sep-9999-verification-cached-per-principal-url",
    "sep-9999-verification-persisted-for-no-expiry",
    "sep-9999-verification-uses-ssrf-hardened-path",
    "sep-9999-verification-no-raw-endpoint-responses",
    "sep-9999-server-identity-key-discovery",
    "sep-9999-ssrf-validate-callback-url",
    "sep-9999-ssrf-reject-non-routable",
    "sep-9999-ssrf-validate-at-delivery-time",
    "sep-9999-ssrf-no-redirects",
    "sep-9999-envelope-type-discriminator",
    "sep-9999-envelope-signed-like-deliveries",
    "sep-9999-envelope-webhook-id-format",
    "sep-9999-envelope-gap",
    "sep-9999-envelope-terminated",
    "sep-9999-error-callback-endpoint-error",
];

/// What the scenario reports untestable for every server (a second
/// principal, a restart, key discovery, a rotation, a failure category in
/// the optional status), and the delivery-time row it SKIPs once the
/// control allowed the receiver's origin. tests/webhooks.rs attacks the
/// rotation, the categories, the per-principal cache and the address guard
/// at each connection against this server.
const DELIVERY_TOLERATED: &[&str] = &[
    "sep-9999-delivery-dual-sign-on-rotation",
    "sep-9999-delivery-status-last-error-category",
    "sep-9999-verification-cached-per-principal-url",
    "sep-9999-verification-persisted-for-no-expiry",
    "sep-9999-verification-uses-ssrf-hardened-path",
    "sep-9999-server-identity-key-discovery",
    "sep-9999-ssrf-validate-at-delivery-time",
];

/// The API keys of the webhook scenarios' two principals (webhooks need
/// one): the run's own, and another for the rows about tenants.
const RUN_KEY: &str = "conformance-run-key";
const OTHER_KEY: &str = "conformance-other-key";

/// The everything catalog with two principals by API key, and the private
/// CA of `receiver` trusted for the origins its controls allow.
fn webhook_server(receiver: &common::receiver::Receiver) -> common::TestServer {
    use sha2::Digest;
    let key = |key: &str, subject: &str| actix_mcp::config::ApiKeyConfig {
        sha256: sha2::Sha256::digest(key.as_bytes()).iter().map(|b| format!("{b:02x}")).collect(),
        subject: subject.into(),
        ..Default::default()
    };
    let ca = receiver.ca_file.to_string_lossy().into_owned();
    common::TestServer::everything_with(move |c| {
        c.events.heartbeat_ms = HEARTBEAT_MS;
        c.auth.mode = actix_mcp::config::AuthMode::ApiKey;
        c.auth.api_keys = vec![key(RUN_KEY, "conformance"), key(OTHER_KEY, "tenant-b")];
        c.events.webhooks.allowed_ca_file = ca;
        c.events.test_controls = true;
    })
}

#[actix_rt::test]
async fn events_webhook_scenario() {
    let receiver = common::receiver::Receiver::start();
    let srv = webhook_server(&receiver);
    BEARER.with(|b| *b.borrow_mut() = Some(RUN_KEY.to_owned()));
    let mut checks = webhook_scenario(&srv.url, &receiver).await;
    checks.push(wire_check());
    srv.stop().await;
    receiver.stop().await;
    grade("events-webhook", checks, WEBHOOK_IDS, WEBHOOK_TOLERATED);
}

#[actix_rt::test]
async fn events_webhook_delivery_scenario() {
    let receiver = common::receiver::Receiver::start();
    let srv = webhook_server(&receiver);
    BEARER.with(|b| *b.borrow_mut() = Some(RUN_KEY.to_owned()));
    let mut checks = delivery_scenario(&srv.url, &receiver).await;
    checks.push(wire_check());
    srv.stop().await;
    receiver.stop().await;
    grade("events-webhook-delivery", checks, DELIVERY_IDS, DELIVERY_TOLERATED);
}

// ---------------------------------------------------------------- checks

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Status {
    Success,
    Failure,
    Warning,
    Skipped,
}

impl Status {
    fn label(self) -> &'static str {
        match self {
            Success => "SUCCESS",
            Failure => "FAILURE",
            Warning => "WARNING",
            Skipped => "SKIPPED",
        }
    }
}

/// One graded row, as the suite reports it.
#[derive(Clone, Debug)]
struct Check {
    id: String,
    status: Status,
    message: String,
    untestable: bool,
}

fn check(id: &str, status: Status, message: impl Into<String>) -> Check {
    Check { id: id.to_owned(), status, message: message.into(), untestable: false }
}

fn pass(id: &str) -> Check {
    check(id, Success, "")
}

/// A row whose prerequisite is missing: `status` is FAILURE or WARNING.
fn untestable(id: &str, reason: &str, status: Status) -> Check {
    Check { untestable: true, ..check(id, status, format!("Not testable: {reason}")) }
}

fn untestable_all(ids: &[&str], reason: &str, status: Status) -> Vec<Check> {
    ids.iter().map(|id| untestable(id, reason, status)).collect()
}

fn skip_all(ids: &[&str], reason: &str) -> Vec<Check> {
    ids.iter().map(|id| check(id, Skipped, reason)).collect()
}

/// Keeps the first row of each id, as the push scenario does.
fn dedupe(checks: Vec<Check>) -> Vec<Check> {
    let mut seen = BTreeSet::new();
    checks.into_iter().filter(|c| seen.insert(c.id.clone())).collect()
}

fn line(c: &Check) -> String {
    match (c.status, c.untestable) {
        (Success, _) => format!("{} {}", c.status.label(), c.id),
        (_, true) => format!("{} {} (untestable): {}", c.status.label(), c.id, c.message),
        (_, false) => format!("{} {}: {}", c.status.label(), c.id, c.message),
    }
}

/// Prints the rows, then asserts: exactly `expected` was emitted, once each;
/// nothing failed; and only `tolerated` rows are WARNING or SKIPPED.
fn grade(scenario: &str, checks: Vec<Check>, expected: &[&str], tolerated: &[&str]) {
    println!("{scenario}:");
    for c in &checks {
        println!("  {}", line(c));
    }
    let emitted: BTreeSet<&str> = checks.iter().map(|c| c.id.as_str()).collect();
    let wanted: BTreeSet<&str> = expected.iter().copied().collect();
    assert_eq!(wanted.len(), expected.len(), "{scenario}: the expected ids are distinct");
    assert_eq!(emitted.len(), checks.len(), "{scenario}: an id was emitted twice");
    assert_eq!(emitted, wanted, "{scenario}: the emitted check ids");
    let failed: Vec<String> = checks.iter().filter(|c| c.status == Failure).map(line).collect();
    assert!(failed.is_empty(), "{scenario}: failed rows:\n{}", failed.join("\n"));
    let allowed = |c: &Check| tolerated.contains(&c.id.as_str()) && matches!(c.status, Warning | Skipped);
    let unexpected: Vec<String> = checks.iter().filter(|c| c.status != Success && !allowed(c)).map(line).collect();
    assert!(unexpected.is_empty(), "{scenario}: rows that should be SUCCESS:\n{}", unexpected.join("\n"));
}

// ------------------------------------------------------------- the wire

/// A JSON-RPC error answered to a request.
#[derive(Clone, Debug)]
struct RpcError {
    code: i64,
    message: String,
    data: Value,
}

impl RpcError {
    fn from_error(error: &Value) -> Self {
        RpcError {
            code: error["code"].as_i64().unwrap_or_default(),
            message: error["message"].as_str().unwrap_or_default().to_owned(),
            data: error["data"].clone(),
        }
    }
}

impl std::fmt::Display for RpcError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} {}", self.code, self.message)
    }
}

/// JSON-RPC ids of ordinary requests: one counter from 1, as the suite's.
static NEXT_ID: AtomicU64 = AtomicU64::new(1);

fn random() -> u64 {
    std::collections::hash_map::RandomState::new().hash_one(NEXT_ID.load(Ordering::Relaxed))
}

/// `conformance.nonexistent.` and 8 base-36 characters.
fn unknown_event_name() -> String {
    const DIGITS: &[u8] = b"0123456789abcdefghijklmnopqrstuvwxyz";
    let mut n = random();
    let suffix: String = (0..8)
        .map(|_| {
            let digit = DIGITS[(n % 36) as usize] as char;
            n /= 36;
            digit
        })
        .collect();
    format!("conformance.nonexistent.{suffix}")
}

/// The suite's request `_meta`: its client capabilities, sent as they are.
fn suite_meta() -> Value {
    common::meta_with(json!({"sampling": {}, "elicitation": {}, "roots": {"listChanged": true}}))
}

fn with_meta(mut params: Value) -> Value {
    params.as_object_mut().expect("params are an object").entry("_meta").or_insert_with(suite_meta);
    params
}

/// One stateless request: its result, or the JSON-RPC error it was answered
/// with. A reply with neither ends the test, as it aborts the suite.
async fn call(url: &str, method: &str, params: Value) -> Result<Value, RpcError> {
    let id = json!(NEXT_ID.fetch_add(1, Ordering::Relaxed));
    let body = common::request(id.clone(), method, with_meta(params));
    let bearer = BEARER.with(|b| b.borrow().clone());
    let reply = common::post_with(url, &body, |h| {
        if let Some(key) = bearer {
            common::set(h, "Authorization", &format!("Bearer {key}"));
        }
    })
    .await;
    for message in &reply.messages {
        wire_problems(method, message).into_iter().for_each(|p| WIRE.with(|w| w.borrow_mut().push(p)));
    }
    // A request on a response stream is refused by the suite's client.
    if let Some(request) = reply.messages.iter().find(|m| m.get("method").is_some() && m.get("id").is_some()) {
        let message = format!("a server request on the response stream: {request}");
        return Err(RpcError { code: -32600, message, data: Value::Null });
    }
    let answer = reply
        .messages
        .iter()
        .find(|m| m.get("id") == Some(&id) && m.get("method").is_none())
        .unwrap_or_else(|| panic!("{method}: no response to id {id}: {}", reply.raw));
    if answer["error"]["code"].is_number() {
        return Err(RpcError::from_error(&answer["error"]));
    }
    match answer.get("result") {
        Some(result) => Ok(result.clone()),
        None => panic!("{method}: a response with neither result nor error: {answer}"),
    }
}

thread_local! {
    /// The credential every request of this test's thread carries (the
    /// run's one principal), if any.
    static BEARER: std::cell::RefCell<Option<String>> = const { std::cell::RefCell::new(None) };
    /// What the wire check found wrong so far, on this test's thread (each
    /// scenario runs on its own).
    static WIRE: std::cell::RefCell<Vec<String>> = const { std::cell::RefCell::new(Vec::new()) };
}

/// What in `message` (answering or sent during a `method` request) the
/// draft's wire schema refuses: a result without `resultType`, and the
/// members `server/discover`, `tools/list` and `tools/call` results need;
/// a message without `jsonrpc`, params that are not an object.
fn wire_problems(method: &str, message: &Value) -> Vec<String> {
    let mut problems = Vec::new();
    if message["jsonrpc"] != "2.0" {
        problems.push(format!("{method}: a message without jsonrpc 2.0: {message}"));
    }
    if message.get("params").is_some_and(|p| !p.is_object()) {
        problems.push(format!("{method}: params that are not an object: {message}"));
    }
    let Some(result) = message.get("result") else { return problems };
    let needed: &[&str] = match method {
        "server/discover" => &["resultType", "supportedVersions", "capabilities", "ttlMs", "cacheScope"],
        "tools/list" => &["resultType", "tools", "ttlMs", "cacheScope"],
        "tools/call" => &["resultType", "content"],
        _ => &["resultType"],
    };
    for member in needed {
        if result.get(*member).is_none() {
            problems.push(format!("{method}: a result without {member}"));
        }
    }
    problems
}

/// The wire row: SUCCESS when nothing was found wrong on this thread.
fn wire_check() -> Check {
    let problems = WIRE.with(|w| std::mem::take(&mut *w.borrow_mut()));
    match problems.first() {
        None => pass(WIRE_ROW),
        Some(first) => check(WIRE_ROW, Failure, format!("{} invalid message(s), first: {first}", problems.len())),
    }
}

async fn poll(url: &str, params: Value) -> Result<Value, RpcError> {
    call(url, "events/poll", params).await
}

/// `server/discover`: whether `capabilities.extensions` has the events key,
/// and the value it maps to.
async fn declared_events(url: &str) -> (bool, Value) {
    let discovered = call(url, "server/discover", json!({})).await.expect("server/discover answers");
    match discovered["capabilities"]["extensions"].get(EVENTS_EXTENSION) {
        Some(value) => (true, value.clone()),
        None => (false, Value::Null),
    }
}

struct ListPage {
    result: Value,
    descriptors: Vec<Value>,
}

async fn list_page(url: &str, cursor: Option<&str>) -> Result<ListPage, RpcError> {
    let params = cursor.map_or_else(|| json!({}), |c| json!({ "cursor": c }));
    let result = call(url, "events/list", params).await?;
    let descriptors = result["events"].as_array().cloned().unwrap_or_default();
    Ok(ListPage { result, descriptors })
}

/// Every page of `events/list`: until `nextCursor` is not a non-empty
/// string, repeats, or 20 pages were read.
async fn list_all(url: &str) -> Result<Vec<Value>, RpcError> {
    let (mut all, mut seen, mut cursor) = (Vec::new(), BTreeSet::new(), None::<String>);
    for _ in 0..20 {
        let page = list_page(url, cursor.as_deref()).await?;
        all.extend(page.descriptors);
        match page.result["nextCursor"].as_str() {
            Some(next) if !next.is_empty() && seen.insert(next.to_owned()) => cursor = Some(next.to_owned()),
            _ => break,
        }
    }
    Ok(all)
}

async fn has_control(url: &str, tool: &str) -> bool {
    let listed = call(url, "tools/list", json!({})).await;
    listed.is_ok_and(|r| r["tools"].as_array().is_some_and(|tools| tools.iter().any(|t| t["name"] == tool)))
}

/// Whether the control ran: any result counts, even `isError`.
async fn fire_control(url: &str, tool: &str, name: &str) -> bool {
    call(url, "tools/call", json!({"name": tool, "arguments": {"name": name}})).await.is_ok()
}

/// The control's first text content, unless it errs.
async fn ask_control(url: &str, tool: &str, args: Value) -> Option<String> {
    let result = call(url, "tools/call", json!({"name": tool, "arguments": args})).await.ok()?;
    if result["isError"] == true {
        return None;
    }
    let text = result["content"].as_array()?.iter().find(|c| c["type"] == "text")?;
    text["text"].as_str().map(str::to_owned)
}

// ---------------------------------------------------------- descriptors

fn delivery_modes(descriptor: &Value) -> Vec<&str> {
    descriptor["delivery"].as_array().map(|modes| modes.iter().filter_map(Value::as_str).collect()).unwrap_or_default()
}

fn descriptor_name(descriptor: &Value) -> Option<&str> {
    descriptor["name"].as_str().filter(|n| !n.is_empty())
}

fn first_supporting<'a>(descriptors: &'a [Value], mode: &str) -> Option<&'a Value> {
    descriptors.iter().find(|d| delivery_modes(d).contains(&mode))
}

/// Values for the `required` properties only, from the schema itself;
/// `None` when one cannot be built.
fn minimal_arguments(descriptor: &Value) -> Option<Value> {
    let Some(schema) = descriptor.get("inputSchema").and_then(Value::as_object) else {
        return Some(json!({}));
    };
    let required = schema.get("required").and_then(Value::as_array).cloned().unwrap_or_default();
    let properties = schema.get("properties").cloned().unwrap_or(Value::Null);
    let mut args = Map::new();
    for key in &required {
        let key = key.as_str()?;
        args.insert(key.to_owned(), schema_value(&properties[key])?);
    }
    Some(Value::Object(args))
}

fn schema_value(property: &Value) -> Option<Value> {
    let property = property.as_object()?;
    for key in ["default", "const"] {
        if let Some(value) = property.get(key) {
            return Some(value.clone());
        }
    }
    for key in ["enum", "examples"] {
        if let Some(first) = property.get(key).and_then(Value::as_array).and_then(|values| values.first()) {
            return Some(first.clone());
        }
    }
    match property.get("type").and_then(Value::as_str) {
        Some("integer" | "number") => {
            Some(property.get("minimum").filter(|m| m.is_number()).cloned().unwrap_or(json!(1)))
        }
        Some("string") => Some(json!("mcp-conformance")),
        Some("boolean") => Some(json!(false)),
        _ => None,
    }
}

/// A string, null or absent.
fn cursor_ok(value: &Value) -> bool {
    value.is_null() || value.is_string()
}

fn describe(value: Option<&Value>) -> &'static str {
    match value {
        None => "absent",
        Some(Value::Null) => "null",
        Some(Value::Array(_)) => "an array",
        Some(Value::Object(_)) => "an object",
        Some(Value::String(_)) => "a string",
        Some(Value::Number(_)) => "a number",
        Some(Value::Bool(_)) => "a boolean",
    }
}

/// A string starting `YYYY-MM-DDT` that `Date.parse` reads: a date, `HH:mm`,
/// optional seconds and fraction, then nothing, `Z` or `±HH:mm`.
fn is_iso8601(value: &Value) -> bool {
    let Some(text) = value.as_str() else { return false };
    let b = text.as_bytes();
    let date = number(b, 0, 4).is_some()
        && b.get(4) == Some(&b'-')
        && number(b, 5, 2).is_some_and(|month| (1..=12).contains(&month))
        && b.get(7) == Some(&b'-')
        && number(b, 8, 2).is_some_and(|day| (1..=31).contains(&day))
        && b.get(10) == Some(&b'T');
    date && time_parses(&b[11..])
}

/// The digits `b[at..at + len]` as a number, when they all are digits.
fn number(b: &[u8], at: usize, len: usize) -> Option<u32> {
    let digits = b.get(at..at + len)?;
    digits.iter().all(u8::is_ascii_digit).then(|| digits.iter().fold(0, |n, d| n * 10 + u32::from(*d - b'0')))
}

fn time_parses(t: &[u8]) -> bool {
    let clock =
        number(t, 0, 2).is_some_and(|h| h <= 24) && t.get(2) == Some(&b':') && number(t, 3, 2).is_some_and(|m| m <= 59);
    if !clock {
        return false;
    }
    let mut rest = &t[5..];
    if rest.first() == Some(&b':') {
        if number(rest, 1, 2).is_none_or(|s| s > 59) {
            return false;
        }
        rest = &rest[3..];
        if rest.first() == Some(&b'.') {
            let digits = rest[1..].iter().take_while(|d| d.is_ascii_digit()).count();
            if digits == 0 {
                return false;
            }
            rest = &rest[1 + digits..];
        }
    }
    let offset = rest.len() == 6
        && matches!(rest[0], b'+' | b'-')
        && number(rest, 1, 2).is_some_and(|h| h <= 23)
        && rest[3] == b':'
        && number(rest, 4, 2).is_some_and(|m| m <= 59);
    rest.is_empty() || rest == b"Z" || offset
}

/// SUCCESS, or `severity` naming the first item `problem` finds fault with.
fn first_offender(
    id: &str,
    items: &[Value],
    severity: Status,
    label: fn(&Value, usize) -> String,
    problem: impl Fn(&Value) -> Option<String>,
) -> Check {
    items
        .iter()
        .enumerate()
        .find_map(|(i, item)| problem(item).map(|p| check(id, severity, format!("{}: {p}", label(item, i)))))
        .unwrap_or_else(|| pass(id))
}

fn descriptor_label(descriptor: &Value, i: usize) -> String {
    descriptor_name(descriptor).map_or_else(|| format!("events[{i}]"), |name| format!("`{name}`"))
}

fn occurrence_label(event: &Value, i: usize) -> String {
    event["eventId"].as_str().map_or_else(|| format!("events[{i}]"), |id| format!("`{id}`"))
}

fn meta_problem(item: &Value) -> Option<String> {
    let meta = item.get("_meta").filter(|m| !m.is_object())?;
    Some(format!("`_meta` is {}, expected an object when present.", describe(Some(meta))))
}

/// `events/list` (every page) for a delivery scenario, or the rows it emits
/// when there is no catalog to work from.
async fn delivery_catalog(url: &str, ids: &[&str], mode: &str) -> Result<Vec<Value>, Vec<Check>> {
    let (declared, _) = declared_events(url).await;
    match list_all(url).await {
        Ok(descriptors) => Ok(descriptors),
        Err(e) if !declared && e.code == METHOD_NOT_FOUND => Err(skip_all(ids, NOT_OFFERED)),
        Err(e) => {
            let reason = format!(
                "`events/list` failed ({e}), so no {mode}-capable event type could be discovered. \
                 See the events-discovery scenario."
            );
            Err(untestable_all(ids, &reason, Failure))
        }
    }
}

/// The first descriptor offering `mode` and its name, or why there is none.
fn delivery_target<'a>(descriptors: &'a [Value], mode: &str) -> Result<(&'a Value, String), String> {
    let method = match mode {
        "poll" => "events/poll",
        "push" => "events/stream",
        _ => "events/subscribe",
    };
    match first_supporting(descriptors, mode).and_then(|d| descriptor_name(d).map(|name| (d, name.to_owned()))) {
        Some(found) => Ok(found),
        None if descriptors.is_empty() => {
            Err(format!("`events/list` returned an empty catalog, so no {mode}-capable event type could be exercised."))
        }
        None => Err(format!(
            "No event type advertises `{mode}` delivery, so `{method}` could not be exercised. \
             {mode} is optional per event type."
        )),
    }
}

#[test]
fn the_wire_check_finds_what_the_draft_schema_refuses() {
    let ok = json!({"jsonrpc": "2.0", "id": 1, "result": {"resultType": "complete", "events": []}});
    assert!(wire_problems("events/list", &ok).is_empty());
    let bare = json!({"jsonrpc": "2.0", "id": 1, "result": {"events": []}});
    assert_eq!(wire_problems("events/list", &bare).len(), 1, "no resultType");
    let discover = json!({"jsonrpc": "2.0", "id": 1, "result": {"resultType": "complete", "capabilities": {}}});
    assert_eq!(wire_problems("server/discover", &discover).len(), 3, "supportedVersions, ttlMs, cacheScope");
    let odd = json!({"method": "notifications/x", "params": []});
    assert_eq!(wire_problems("events/poll", &odd).len(), 2, "no jsonrpc, params not an object");
}
