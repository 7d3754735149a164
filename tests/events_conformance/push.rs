//! The `events-push` scenario: the main stream, its notifications and
//! heartbeats, the controls, termination, the caps on streams.

use super::stream::{is_active, subscription, Note, Session};
use super::*;

/// Which diagnostic controls `tools/list` offered.
#[derive(Clone, Copy)]
struct Controls {
    error: bool,
    gap: bool,
    terminate: bool,
    quota: bool,
}

/// The push-capable type the scenario works on, and what it found out first.
struct PushRun {
    url: String,
    name: String,
    args: Value,
    descriptors: Vec<Value>,
    controls: Controls,
    /// The quota control's answer.
    quota: Option<String>,
}

pub(super) async fn push_scenario(url: &str) -> Vec<Check> {
    let descriptors = match delivery_catalog(url, PUSH_IDS, "push").await {
        Ok(descriptors) => descriptors,
        Err(rows) => return rows,
    };
    let (target, name) = match delivery_target(&descriptors, "push") {
        Ok(found) => found,
        Err(reason) => return untestable_all(PUSH_IDS, &reason, Failure),
    };
    let error = has_control(url, YIELD_ERROR).await;
    let gap = has_control(url, YIELD_GAP).await;
    let terminate = has_control(url, TERMINATE).await;
    let Some(args) = minimal_arguments(target) else {
        let reason = format!(
            "Event type `{name}` declares required `inputSchema` properties the harness cannot satisfy from the \
             schema, so no stream could be opened."
        );
        return untestable_all(PUSH_IDS, &reason, Failure);
    };
    let quota_listed = has_control(url, QUOTA).await;
    let quota = if quota_listed { ask_control(url, QUOTA, json!({})).await } else { None };
    let controls = Controls { error, gap, terminate, quota: quota_listed };
    let run = PushRun { url: url.to_owned(), name, args, descriptors, controls, quota };
    dedupe(stream_checks(&run).await)
}

/// The main stream, watched then cancelled; then the terminate path, the
/// quota, three concurrent streams and an unknown name.
async fn stream_checks(run: &PushRun) -> Vec<Check> {
    let mut main = Session::start(&run.url, subscription(&run.name, &run.args), ACTIVE_MS).await;
    if !main.is_sse() {
        return not_streamed(run, &main).await;
    }
    let mut checks = vec![pass(STREAM_IMPLEMENTED)];
    let active = main.wait_for(is_active, ACTIVE_MS).await;
    checks.push(active_check(active.as_ref()));
    if run.controls.error {
        fire_control(&run.url, YIELD_ERROR, &run.name).await;
    }
    if run.controls.gap {
        fire_control(&run.url, YIELD_GAP, &run.name).await;
    }
    main.settle(WATCH_MS).await;
    checks.extend(notification_checks(&main, run));
    checks.extend(heartbeat_checks(&main));
    checks.push(cancel_check(&mut main).await);
    checks.extend(final_result_checks(&main, false));
    checks.extend(terminate_checks(run).await);
    checks.extend(quota_check(run).await);
    checks.extend(concurrency_checks(run).await);
    checks.push(error_before_open_check(run).await);
    checks
}

async fn not_streamed(run: &PushRun, session: &Session) -> Vec<Check> {
    let message = match session.error() {
        Some(e) => format!(
            "Event type `{}` advertises `push` delivery but `events/stream` answered {e} instead of opening a stream.",
            run.name
        ),
        None => format!(
            "`events/stream` answered HTTP {} with content-type {}, expected an SSE stream.",
            session.status,
            session.content_type.as_deref().unwrap_or("absent")
        ),
    };
    let mut checks = vec![check(STREAM_IMPLEMENTED, Failure, message)];
    let others: Vec<&str> = PUSH_IDS.iter().copied().filter(|id| *id != STREAM_IMPLEMENTED).collect();
    let reason = format!("No stream was opened for `{}`, so nothing on it could be observed.", run.name);
    checks.extend(untestable_all(&others, &reason, Failure));
    checks.push(error_before_open_check(run).await);
    checks
}

fn active_check(active: Option<&Note>) -> Check {
    let id = "sep-9999-stream-active-confirmation";
    let Some(active) = active else {
        return check(id, Failure, format!("No `{ACTIVE}` arrived within {ACTIVE_MS}ms of the stream opening."));
    };
    let mut problems = Vec::new();
    if !cursor_ok(&active.params["cursor"]) {
        let described = describe(active.params.get("cursor"));
        problems.push(format!("`cursor` is {described}, expected a string or null"));
    }
    if let Some(truncated) = active.params.get("truncated").filter(|t| !t.is_boolean()) {
        problems.push(format!("`truncated` is {}, expected a boolean", describe(Some(truncated))));
    }
    if problems.is_empty() {
        pass(id)
    } else {
        check(id, Failure, problems.join("; "))
    }
}

/// What rode the main stream during the watch.
fn notification_checks(session: &Session, run: &PushRun) -> Vec<Check> {
    let notes = session.notes();
    let mut checks = vec![
        subscription_meta_check(&notes, session.request_id),
        carries_only_check(&notes),
        event_notification_check(&notes, &run.name),
        error_recoverable_check(&notes, session.is_open(), run),
    ];
    if notes.iter().any(|n| n.method == TERMINATED) {
        checks.push(pass(STREAM_TERMINATED));
    }
    checks.push(gap_check(&notes, run));
    checks
}

fn subscription_meta_check(notes: &[Note], request_id: u64) -> Check {
    let id = "sep-9999-stream-subscription-id-meta";
    if notes.is_empty() {
        let reason = "The stream delivered no notifications, so no message could be checked for the correlation id.";
        return untestable(id, reason, Failure);
    }
    let expected = json!(request_id);
    let missing = notes.iter().filter(|n| n.params["_meta"][SUBSCRIPTION_ID] != expected).count();
    if missing == 0 {
        pass(id)
    } else {
        let message =
            format!("{missing} of {} notification(s) did not carry `{SUBSCRIPTION_ID}` = {request_id}.", notes.len());
        check(id, Failure, message)
    }
}

fn carries_only_check(notes: &[Note]) -> Check {
    let id = "sep-9999-stream-carries-only-event-notifications";
    let foreign: BTreeSet<&str> =
        notes.iter().map(|n| n.method.as_str()).filter(|m| !m.starts_with("notifications/events/")).collect();
    if foreign.is_empty() {
        pass(id)
    } else {
        let methods: Vec<&str> = foreign.into_iter().collect();
        check(id, Failure, format!("Non-event messages rode the stream: {}.", methods.join(", ")))
    }
}

fn event_notification_check(notes: &[Note], name: &str) -> Check {
    let id = "sep-9999-stream-event-notification";
    let events: Vec<&Note> = notes.iter().filter(|n| n.method == EVENT).collect();
    if events.is_empty() {
        let reason = format!(
            "No event was delivered for `{name}` in {WATCH_MS}ms. The fixture needs an event type that emits while \
             the stream is open."
        );
        return untestable(id, &reason, Failure);
    }
    let malformed = |p: &Value| {
        !p["eventId"].is_string() || !p["name"].is_string() || !is_iso8601(&p["timestamp"]) || !p["data"].is_object()
    };
    let bad = events.iter().filter(|n| malformed(&n.params)).count();
    if bad == 0 {
        pass(id)
    } else {
        let message = format!(
            "{bad} of {} event notification(s) were not a valid EventOccurrence (eventId, name, timestamp and data \
             are required).",
            events.len()
        );
        check(id, Failure, message)
    }
}

fn error_recoverable_check(notes: &[Note], open: bool, run: &PushRun) -> Check {
    let id = "sep-9999-stream-error-is-recoverable";
    if !notes.iter().any(|n| n.method == ERROR) {
        let reason = if run.controls.error {
            format!(
                "The `{YIELD_ERROR}` control was called for `{}` but no `{ERROR}` arrived, so the recovery path \
                 could not be observed.",
                run.name
            )
        } else {
            format!(
                "No upstream failure occurred during the run, and the harness cannot provoke one over the protocol. \
                 Needs a fixture exposing the `{YIELD_ERROR}` control."
            )
        };
        return untestable(id, &reason, Failure);
    }
    if open {
        pass(id)
    } else {
        let message = "The stream closed after `notifications/events/error`, but only \
                       `notifications/events/terminated` ends a subscription.";
        check(id, Failure, message)
    }
}

fn gap_check(notes: &[Note], run: &PushRun) -> Check {
    let id = "sep-9999-stream-gap-resends-active";
    let resent = notes.iter().filter(|n| is_active(n)).skip(1).any(|n| n.params["truncated"] == true);
    if resent {
        return pass(id);
    }
    let reason = if run.controls.gap {
        format!(
            "The `{YIELD_GAP}` control was called for `{}` but no second `active` carrying `truncated: true` arrived.",
            run.name
        )
    } else {
        format!(
            "No retention gap occurred during the run, and the harness cannot force one from the client side. Needs \
             a fixture exposing the `{YIELD_GAP}` control."
        )
    };
    untestable(id, &reason, Warning)
}

/// The four heartbeat rows, off the same watch.
fn heartbeat_checks(session: &Session) -> Vec<Check> {
    let (required, not_comment) = ("sep-9999-stream-heartbeat-required", "sep-9999-stream-heartbeat-not-sse-comment");
    let notes = session.notes();
    let beats: Vec<&Note> = notes.iter().filter(|n| n.method == HEARTBEAT).collect();
    let comments = session.comments();
    let required_row = if !beats.is_empty() {
        pass(required)
    } else if WATCH_MS > 30_000 {
        let message =
            format!("No `{HEARTBEAT}` arrived in {WATCH_MS}ms, which outlasts the 30s cadence the document asks for.");
        check(required, Failure, message)
    } else {
        let reason = format!(
            "No heartbeat arrived, but the watch window was {WATCH_MS}ms and the document allows a 30s cadence, so \
             a conformant server could look identical. Re-run with EVENTS_PUSH_WATCH_MS above 30000."
        );
        untestable(required, &reason, Failure)
    };
    let mut checks = vec![required_row];
    checks.extend(heartbeat_content_checks(&beats));
    checks.push(match comments.first() {
        None => pass(not_comment),
        Some(first) => {
            let severity = if beats.is_empty() { Failure } else { Warning };
            let message = format!(
                "The stream carried {} SSE comment line(s) (e.g. {first:?}), which cannot carry cursor state.",
                comments.len()
            );
            check(not_comment, severity, message)
        }
    });
    checks
}

fn heartbeat_content_checks(beats: &[&Note]) -> Vec<Check> {
    let (carries, interval) = ("sep-9999-stream-heartbeat-carries-cursor", "sep-9999-stream-heartbeat-interval");
    if beats.is_empty() {
        let reason =
            format!("No heartbeat arrived in {WATCH_MS}ms, so its contents and cadence could not be observed.");
        return untestable_all(&[carries, interval], &reason, Failure);
    }
    let bad = beats.iter().filter(|b| !cursor_ok(&b.params["cursor"])).count();
    let carries_row = if bad == 0 {
        pass(carries)
    } else {
        check(carries, Failure, format!("{bad} heartbeat(s) carried a `cursor` that was neither a string nor null."))
    };
    let mut previous = 0;
    let worst = beats
        .iter()
        .map(|b| {
            let gap = b.at_ms.saturating_sub(previous);
            previous = b.at_ms;
            gap
        })
        .max()
        .unwrap_or_default();
    let interval_row = if worst <= HEARTBEAT_LIMIT_MS {
        pass(interval)
    } else {
        let message =
            format!("Longest silence was {worst}ms, over the 30s the document asks for (with 2000ms of tolerance).");
        check(interval, Warning, message)
    };
    vec![carries_row, interval_row]
}

async fn cancel_check(session: &mut Session) -> Check {
    let id = "sep-9999-stream-cancel-stops-delivery";
    let before = session.notes().len();
    session.cancel();
    tokio::time::sleep(Duration::from_millis(500)).await;
    let after = session.notes().len();
    if after == before {
        pass(id)
    } else {
        let message =
            format!("{} further notification(s) arrived after the request stream was aborted.", after - before);
        check(id, Failure, message)
    }
}

/// The final result, which only a server-ended stream writes; nothing when
/// there was none and `untestable_when_absent` is false.
fn final_result_checks(session: &Session, untestable_when_absent: bool) -> Vec<Check> {
    let Some(result) = session.final_frame().and_then(|frame| frame.get("result").cloned()) else {
        if !untestable_when_absent {
            return Vec::new();
        }
        let reason = "The server did not close the stream itself, so no final frame was sent.";
        return untestable_all(&[FINAL_SHAPE, FINAL_TIMING], reason, Warning);
    };
    let keys: Vec<String> = match result.as_object() {
        Some(fields) => fields.keys().filter(|k| !matches!(k.as_str(), "_meta" | "resultType")).cloned().collect(),
        None => vec!["<not an object>".to_owned()],
    };
    let shape = if keys.is_empty() {
        pass(FINAL_SHAPE)
    } else {
        let message = format!("The final result carried {}; it is defined to carry no information.", keys.join(", "));
        check(FINAL_SHAPE, Failure, message)
    };
    vec![shape, pass(FINAL_TIMING)]
}

fn terminate_untestable(reason: &str) -> Vec<Check> {
    let mut checks = untestable_all(&[STREAM_TERMINATED], reason, Failure);
    checks.extend(untestable_all(&[FINAL_SHAPE, FINAL_TIMING], reason, Warning));
    checks
}

/// The terminate control, fired on a second push type (never the main one).
async fn terminate_checks(run: &PushRun) -> Vec<Check> {
    if !run.controls.terminate {
        return terminate_untestable(&format!(
            "The subscription was not terminated during the run, and the harness cannot revoke one over the \
             protocol. Needs a fixture exposing the `{TERMINATE}` control."
        ));
    }
    let other_push =
        |d: &&Value| delivery_modes(d).contains(&"push") && descriptor_name(d).is_some_and(|n| n != run.name);
    let Some(spare) = run.descriptors.iter().find(other_push) else {
        return terminate_untestable(&format!(
            "Terminating an event type is one-shot for the life of the fixture, and `{}` is the only push-capable \
             type on offer, so terminating it would break every scenario after this one. Needs a second \
             push-capable type the run does not otherwise depend on.",
            run.name
        ));
    };
    let name = descriptor_name(spare).unwrap_or_default();
    let Some(args) = minimal_arguments(spare) else {
        return terminate_untestable(&format!(
            "Event type `{name}` declares required `inputSchema` properties the harness cannot satisfy, so no stream \
             could be opened to terminate."
        ));
    };
    terminate_spare(run, name, &args).await
}

async fn terminate_spare(run: &PushRun, spare: &str, args: &Value) -> Vec<Check> {
    let session = Session::start(&run.url, subscription(spare, args), ACTIVE_MS).await;
    if !session.is_sse() {
        return terminate_untestable(&format!(
            "`events/stream` did not open a stream for `{spare}`, so there was nothing to terminate."
        ));
    }
    session.wait_for(is_active, ACTIVE_MS).await;
    fire_control(&run.url, TERMINATE, spare).await;
    let terminated = session.wait_for(|n| n.method == TERMINATED, TERMINATE_MS).await;
    session.settle(500).await;
    let row = match terminated {
        Some(_) if session.is_open() => check(
            STREAM_TERMINATED,
            Failure,
            format!("`{TERMINATED}` arrived for `{spare}` but the stream stayed open."),
        ),
        Some(_) => pass(STREAM_TERMINATED),
        None => check(
            STREAM_TERMINATED,
            Failure,
            format!(
                "The `{TERMINATE}` control was called for `{spare}` but no `{TERMINATED}` arrived within \
                 {TERMINATE_MS}ms."
            ),
        ),
    };
    let mut checks = vec![row];
    checks.extend(final_result_checks(&session, true));
    checks
}

/// `{name, max}` of the quota control's answer.
fn parse_quota(text: &str) -> Option<(String, u64)> {
    let quota: Value = serde_json::from_str(text).ok()?;
    let name = quota["name"].as_str().filter(|n| !n.is_empty())?.to_owned();
    Some((name, quota["max"].as_u64()?))
}

/// The `-32013` row on the type the quota control names: streams opened one
/// at a time, up to `max + 1`, until one is refused.
async fn quota_check(run: &PushRun) -> Option<Check> {
    // Listed but not answering (an error, `isError`): malformed, as the suite reads it.
    let text = match run.quota.as_deref() {
        Some(text) => text,
        None if run.controls.quota => "",
        None => return None,
    };
    let Some((name, max)) = parse_quota(text) else {
        let reason =
            format!("The `{QUOTA}` control answered {text:?}, not `{{\"name\": <event type>, \"max\": <n>}}`.");
        return Some(untestable(RESOURCE_ROW, &reason, Failure));
    };
    let Some(descriptor) = run.descriptors.iter().find(|d| descriptor_name(d) == Some(name.as_str())) else {
        let reason = format!("The `{QUOTA}` control named `{name}`, which `events/list` does not offer.");
        return Some(untestable(RESOURCE_ROW, &reason, Failure));
    };
    let Some(args) = minimal_arguments(descriptor) else {
        let reason = format!(
            "Event type `{name}` declares required `inputSchema` properties the harness cannot satisfy, so its cap \
             could not be probed."
        );
        return Some(untestable(RESOURCE_ROW, &reason, Failure));
    };
    let (opened, refusal) = open_until_refused(&run.url, &name, &args, max).await;
    Some(match refusal {
        None => {
            let reason = format!(
                "`{name}` reports a cap of {max} streams, but {opened} streams opened on it without a refusal, so \
                 -32013 was never provoked."
            );
            untestable(RESOURCE_ROW, &reason, Failure)
        }
        Some(e) if e.code != RESOURCE_EXHAUSTED => {
            let message = format!(
                "Opening more than {max} streams on `{name}` was refused with {e}, expected -32013 ResourceExhausted."
            );
            check(RESOURCE_ROW, Failure, message)
        }
        Some(e) => exhausted_check(&e),
    })
}

/// How many streams opened before the first refusal, and that refusal.
async fn open_until_refused(url: &str, name: &str, args: &Value, max: u64) -> (usize, Option<RpcError>) {
    let mut sessions = Vec::new();
    for _ in 0..=max {
        let session = Session::start(url, subscription(name, args), ACTIVE_MS).await;
        if let Some(refusal) = session.error() {
            return (sessions.len(), Some(refusal));
        }
        sessions.push(session);
    }
    (sessions.len(), None)
}

/// A `-32013` refusal: SUCCESS when `data.limit` names the quota.
fn exhausted_check(refusal: &RpcError) -> Check {
    match refusal.data["limit"].as_str().filter(|limit| !limit.is_empty()) {
        Some(_) => pass(RESOURCE_ROW),
        None => {
            let message = format!(
                "-32013 ResourceExhausted carried no string `data.limit`, so a client cannot tell which quota it hit \
                 (data: {}).",
                refusal.data
            );
            check(RESOURCE_ROW, Warning, message)
        }
    }
}

/// Three streams on the main type held open at once.
async fn concurrency_checks(run: &PushRun) -> Vec<Check> {
    let exempt = "sep-9999-stream-exempt-from-concurrency-cap";
    let mut sessions = Vec::new();
    for _ in 0..3 {
        sessions.push(Session::start(&run.url, subscription(&run.name, &run.args), ACTIVE_MS).await);
    }
    let streamed = sessions.iter().filter(|s| s.is_sse()).map(|s| s.wait_for(is_active, ACTIVE_MS));
    let live = futures::future::join_all(streamed).await.iter().filter(|confirmed| confirmed.is_some()).count();
    let exempt_row = if live == sessions.len() {
        pass(exempt)
    } else {
        let message = format!(
            "Opened {} concurrent `events/stream` requests; only {live} confirmed with `{ACTIVE}`.",
            sessions.len()
        );
        check(exempt, Failure, message)
    };
    let refusal = sessions.iter().filter_map(Session::error).find(|e| e.code == RESOURCE_EXHAUSTED);
    let exhausted_row = match refusal {
        Some(refusal) => exhausted_check(&refusal),
        None => {
            let mut reason =
                "No stream was refused with -32013 ResourceExhausted, so the error was never provoked.".to_owned();
            if !run.controls.quota {
                reason
                    .push_str(&format!(" Needs a fixture exposing the `{QUOTA}` control naming a capped event type."));
            }
            untestable(RESOURCE_ROW, &reason, Failure)
        }
    };
    vec![exempt_row, exhausted_row]
}

/// A stream for a name the server does not have: an immediate error.
async fn error_before_open_check(run: &PushRun) -> Check {
    let id = "sep-9999-stream-error-before-open";
    let now = SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |d| d.as_millis());
    let unknown = format!("conformance.nonexistent.{now}");
    let session = Session::start(&run.url, subscription(&unknown, &run.args), 1000).await;
    match session.error() {
        None => check(
            id,
            Failure,
            format!(
                "`events/stream` for unknown event type `{unknown}` did not answer a JSON-RPC error (HTTP {}, \
                 content-type {}).",
                session.status,
                session.content_type.as_deref().unwrap_or("absent")
            ),
        ),
        Some(e) if e.code == NOT_FOUND => pass(id),
        Some(e) => check(
            id,
            Warning,
            format!(
                "Unknown event type answered {e}; the document names `-32011 NotFound` for a referenced entity that \
                 does not exist."
            ),
        ),
    }
}
