//! The `events-poll` scenario: the bootstrap from now, the cursor's rules,
//! `maxEvents`, `maxAgeMs`, occurrences and the refusals.

use super::*;

/// The poll-capable type the scenario works on.
struct PollTarget {
    url: String,
    name: String,
    args: Value,
    descriptor: Value,
}

impl PollTarget {
    /// `{name, arguments}` plus `extra`.
    fn params(&self, extra: Value) -> Value {
        let mut params = json!({"name": self.name, "arguments": self.args});
        if let (Some(fields), Value::Object(extra)) = (params.as_object_mut(), extra) {
            fields.extend(extra);
        }
        params
    }

    async fn poll(&self, extra: Value) -> Result<Value, RpcError> {
        poll(&self.url, self.params(extra)).await
    }
}

fn occurrences(result: &Value) -> &[Value] {
    result["events"].as_array().map(Vec::as_slice).unwrap_or_default()
}

pub(super) async fn poll_scenario(url: &str) -> Vec<Check> {
    let descriptors = match delivery_catalog(url, POLL_IDS, "poll").await {
        Ok(descriptors) => descriptors,
        Err(rows) => return rows,
    };
    let (target, name) = match delivery_target(&descriptors, "poll") {
        Ok(found) => found,
        Err(reason) => return untestable_all(POLL_IDS, &reason, Failure),
    };
    let Some(args) = minimal_arguments(target) else {
        let reason = format!(
            "Event type `{name}` declares required `inputSchema` properties, so the harness cannot construct \
             arguments it is confident the server will accept."
        );
        return untestable_all(POLL_IDS, &reason, Failure);
    };
    let target = PollTarget { url: url.to_owned(), name, args, descriptor: target.clone() };
    poll_checks(&target, &descriptors).await
}

async fn poll_checks(t: &PollTarget, descriptors: &[Value]) -> Vec<Check> {
    let implemented = "sep-9999-poll-implemented";
    let r1 = match t.poll(json!({"cursor": null})).await {
        Ok(r1) => r1,
        Err(e) => {
            let message = format!("Event type `{}` advertises `poll` delivery but `events/poll` failed: {e}", t.name);
            let mut checks = vec![check(implemented, Failure, message)];
            let others: Vec<&str> = POLL_IDS.iter().copied().filter(|id| *id != implemented).collect();
            let reason = format!("The bootstrap `events/poll` for `{}` failed with {e}.", t.name);
            checks.extend(untestable_all(&others, &reason, Failure));
            return checks;
        }
    };
    let mut checks = vec![pass(implemented), pass("sep-9999-poll-bootstraps-subscription")];
    checks.extend(response_shape_checks(&r1));
    checks.extend(cursor_null_checks(&r1));
    checks.extend(quiet_advance_checks(t, &r1).await);
    checks.push(max_events_check(t).await);
    checks.extend(replay_checks(t, &r1).await);
    let delivered = poll_for_occurrences(t, &r1).await;
    checks.extend(occurrence_checks(&delivered, &t.name));
    checks.extend(poll_error_checks(t, descriptors).await);
    checks
}

/// The response fields, graded off the bootstrap poll.
fn response_shape_checks(r: &Value) -> Vec<Check> {
    let events = if r["events"].is_array() {
        pass("sep-9999-poll-events-array")
    } else {
        let message =
            format!("`events` is {}, expected an array (empty when nothing happened).", describe(r.get("events")));
        check("sep-9999-poll-events-array", Failure, message)
    };
    let cursor = if cursor_ok(&r["cursor"]) {
        pass("sep-9999-poll-response-cursor")
    } else {
        let message = format!("`cursor` is {}, expected a string, null, or absent.", describe(r.get("cursor")));
        check("sep-9999-poll-response-cursor", Failure, message)
    };
    let next_poll = if r["nextPollMs"].is_number() {
        pass("sep-9999-poll-next-poll-ms")
    } else if r.get("nextPollSeconds").is_some() {
        let message = "Response carries `nextPollSeconds`, the pre-rename field name; the duration fields are \
                       named `nextPollMs`.";
        check("sep-9999-poll-next-poll-ms", Warning, message)
    } else {
        let message = format!("`nextPollMs` is {}, expected a number of milliseconds.", describe(r.get("nextPollMs")));
        check("sep-9999-poll-next-poll-ms", Warning, message)
    };
    let has_more = match r.get("hasMore") {
        None | Some(Value::Bool(_)) => pass("sep-9999-poll-has-more"),
        Some(other) => check(
            "sep-9999-poll-has-more",
            Failure,
            format!("`hasMore` is {}, expected a boolean.", describe(Some(other))),
        ),
    };
    let ignored = if r["hasMore"] == true {
        pass("sep-9999-poll-next-poll-ms-ignored-when-has-more")
    } else {
        let reason = "Server has no backlog, so no response set `hasMore: true` and the interaction between the \
                      two fields could not be observed.";
        untestable("sep-9999-poll-next-poll-ms-ignored-when-has-more", reason, Warning)
    };
    vec![events, cursor, next_poll, has_more, ignored]
}

/// What a `cursor: null` bootstrap poll establishes on its own.
fn cursor_null_checks(r: &Value) -> Vec<Check> {
    let returned = occurrences(r).len();
    let from_now = if returned == 0 {
        pass("sep-9999-cursor-null-starts-from-now")
    } else {
        let message =
            format!("A poll with `cursor: null` returned {returned} event(s); \"start from now\" replays nothing.");
        check("sep-9999-cursor-null-starts-from-now", Failure, message)
    };
    let opaque = if cursor_ok(&r["cursor"]) {
        pass("sep-9999-cursor-opaque")
    } else {
        let message = format!(
            "`cursor` is {}; a cursor is an opaque string (or null when the type has no replay).",
            describe(r.get("cursor"))
        );
        check("sep-9999-cursor-opaque", Failure, message)
    };
    vec![from_now, opaque]
}

/// A second poll from the first one's cursor (without one for a type with no
/// replay).
async fn quiet_advance_checks(t: &PollTarget, r1: &Value) -> Vec<Check> {
    let (stateless, advances) = ("sep-9999-poll-stateless-request", "sep-9999-cursor-advances-when-quiet");
    let (consistency, absent) = ("sep-9999-cursor-consistency", "sep-9999-cursor-absent-equals-null");
    let no_replay = r1["cursor"].is_null();
    let cursor = r1["cursor"].clone();
    let follow_up = if no_replay { json!({}) } else { json!({ "cursor": cursor }) };
    let r2 = match t.poll(follow_up).await {
        Ok(r2) => r2,
        Err(e) => {
            let reason = format!("A follow-up `events/poll` carrying the cursor from the first response failed: {e}");
            let mut checks = vec![check(stateless, Failure, reason.clone())];
            checks.extend(untestable_all(&[advances, consistency, absent], &reason, Failure));
            return checks;
        }
    };
    let advanced = if cursor_ok(&r2["cursor"]) {
        pass(advances)
    } else {
        let described = describe(r2.get("cursor"));
        check(
            advances,
            Failure,
            format!("Follow-up poll returned `cursor` as {described}; a quiet poll must still carry a position."),
        )
    };
    let second_null = r2["cursor"].is_null();
    let consistent = if no_replay == second_null {
        pass(consistency)
    } else {
        let kind = |null: bool| if null { "null" } else { "a cursor" };
        let message = format!(
            "Event type `{}` returned {} then {}; clients branch once at subscribe time on this.",
            t.name,
            kind(no_replay),
            kind(second_null)
        );
        check(consistency, Warning, message)
    };
    let absent_row = if no_replay { pass(absent) } else { absent_cursor_check(t).await };
    vec![pass(stateless), advanced, consistent, absent_row]
}

/// A poll with no `cursor` key at all.
async fn absent_cursor_check(t: &PollTarget) -> Check {
    let id = "sep-9999-cursor-absent-equals-null";
    match t.poll(json!({})).await {
        Ok(_) => pass(id),
        Err(e) => check(
            id,
            Failure,
            format!(
                "A poll omitting `cursor` was rejected with {e}; an absent cursor means \"start from now\", not a \
                 malformed request."
            ),
        ),
    }
}

async fn max_events_check(t: &PollTarget) -> Check {
    let id = "sep-9999-poll-max-events-cap";
    match t.poll(json!({"cursor": null, "maxEvents": 1})).await {
        Err(e) => check(
            id,
            Failure,
            format!(
                "A poll carrying `maxEvents: 1` was rejected with {e}; `maxEvents` is an optional request field, not \
                 an error."
            ),
        ),
        Ok(r) if occurrences(&r).len() > 1 => {
            check(id, Failure, format!("A poll with `maxEvents: 1` returned {} events.", occurrences(&r).len()))
        }
        Ok(_) => pass(id),
    }
}

/// `maxAgeMs` from the bootstrap cursor, the `truncated` rows, then
/// `maxAgeMs` with a null cursor.
async fn replay_checks(t: &PollTarget, r1: &Value) -> Vec<Check> {
    let floor = "sep-9999-max-age-ms-floor";
    let cursor = r1["cursor"].clone();
    let r = match t.poll(json!({"cursor": cursor, "maxAgeMs": MAX_AGE_PROBE_MS})).await {
        Ok(r) => r,
        Err(e) => {
            let reason = format!("A poll carrying `maxAgeMs` was rejected with {e}.");
            let mut checks = vec![check(floor, Failure, reason.clone())];
            let ids = [
                "sep-9999-max-age-ms-sets-truncated",
                "sep-9999-replay-ceiling-sets-truncated",
                "sep-9999-truncated-returns-fresh-cursor",
                "sep-9999-truncated-poll-never-an-error",
                "sep-9999-truncated-false-when-no-replay",
                "sep-9999-max-age-ms-ignored-when-cursor-null",
            ];
            checks.extend(untestable_all(&ids, &reason, Warning));
            return checks;
        }
    };
    let mut checks = vec![pass(floor)];
    checks.extend(truncated_checks(&r, r1["cursor"].is_null(), &t.name));
    checks.push(max_age_null_cursor_check(t).await);
    checks
}

fn truncated_checks(r: &Value, no_replay: bool, name: &str) -> Vec<Check> {
    let (never, fresh) = ("sep-9999-truncated-poll-never-an-error", "sep-9999-truncated-returns-fresh-cursor");
    let no_replay_id = "sep-9999-truncated-false-when-no-replay";
    let never_an_error = match r.get("truncated") {
        None | Some(Value::Bool(_)) => pass(never),
        Some(other) => check(never, Failure, format!("`truncated` is {}, expected a boolean.", describe(Some(other)))),
    };
    let truncated = r["truncated"] == true;
    let fresh_cursor = if !truncated {
        let reason = "No probe produced `truncated: true`, so the fresh-cursor obligation could not be observed. \
                      Driving it requires a stale cursor the harness cannot mint against an opaque cursor space.";
        untestable(fresh, reason, Warning)
    } else if r["cursor"].is_string() {
        pass(fresh)
    } else {
        let described = describe(r.get("cursor"));
        let message = format!(
            "`truncated: true` was returned with `cursor` as {described}; the client has no fresh position to persist."
        );
        check(fresh, Failure, message)
    };
    let stale = "Requires a cursor older than the `maxAgeMs` floor or the server's replay ceiling. Cursors are \
                 opaque, so the harness cannot mint a stale one, and a quiet fixture has no history to fall out of.";
    let no_replay_row = if !no_replay {
        check(no_replay_id, Skipped, format!("Event type `{name}` supports replay, so this rule does not apply to it."))
    } else if truncated {
        let message = format!(
            "Event type `{name}` returns `cursor: null` (no replay) but set `truncated: true`; there is no position \
             to have advanced past."
        );
        check(no_replay_id, Warning, message)
    } else {
        pass(no_replay_id)
    };
    vec![
        never_an_error,
        fresh_cursor,
        untestable("sep-9999-max-age-ms-sets-truncated", stale, Warning),
        untestable("sep-9999-replay-ceiling-sets-truncated", stale, Warning),
        no_replay_row,
    ]
}

async fn max_age_null_cursor_check(t: &PollTarget) -> Check {
    let id = "sep-9999-max-age-ms-ignored-when-cursor-null";
    match t.poll(json!({"cursor": null, "maxAgeMs": MAX_AGE_PROBE_MS})).await {
        Err(e) => check(id, Failure, format!("A poll with `cursor: null` and `maxAgeMs` was rejected with {e}.")),
        Ok(r) if occurrences(&r).is_empty() => pass(id),
        Ok(r) => {
            let message = format!(
                "A poll with `cursor: null` and `maxAgeMs: {MAX_AGE_PROBE_MS}` replayed {} event(s); `maxAgeMs` is \
                 ignored when the cursor is null.",
                occurrences(&r).len()
            );
            check(id, Failure, message)
        }
    }
}

/// Polls forward from the bootstrap cursor, waiting `nextPollMs` (held to
/// 250 ms – 2 s) between polls, until a batch carries events or 6 s passed.
async fn poll_for_occurrences(t: &PollTarget, r1: &Value) -> Value {
    let mut last = r1.clone();
    let deadline = Instant::now() + Duration::from_millis(OCCURRENCE_WAIT_MS);
    while occurrences(&last).is_empty() && Instant::now() < deadline {
        let hint = last["nextPollMs"].as_f64().unwrap_or(1000.0);
        let remaining = deadline.saturating_duration_since(Instant::now());
        tokio::time::sleep(Duration::from_millis(hint.clamp(250.0, 2000.0) as u64).min(remaining)).await;
        let cursor = last["cursor"].clone();
        match t.poll(json!({ "cursor": cursor })).await {
            Ok(next) => last = next,
            Err(_) => return last,
        }
    }
    last
}

/// The `EventOccurrence` shape, graded off the batch the loop ended with.
fn occurrence_checks(r: &Value, name: &str) -> Vec<Check> {
    let events = occurrences(r);
    if events.is_empty() {
        let reason = "No poll returned an event, so the `EventOccurrence` shape could not be validated. The fixture \
                      needs a diagnostic event type that emits on demand.";
        return untestable_all(OCCURRENCE_IDS, reason, Failure);
    }
    let ids: Vec<&str> = events.iter().filter_map(|e| e["eventId"].as_str()).collect();
    let distinct: BTreeSet<&str> = ids.iter().copied().collect();
    let upstream = if distinct.len() == ids.len() {
        pass("sep-9999-occurrence-event-id-from-upstream")
    } else {
        let message = "A single batch repeated an `eventId`, so the value cannot be an upstream-stable identifier \
                       and client-side dedup would drop distinct events.";
        check("sep-9999-occurrence-event-id-from-upstream", Warning, message)
    };
    let label = occurrence_label;
    vec![
        first_offender("sep-9999-occurrence-event-id", events, Failure, label, |e| {
            let described = describe(e.get("eventId"));
            let ok = e["eventId"].as_str().is_some_and(|id| !id.is_empty());
            (!ok).then(|| format!("`eventId` is {described}, expected a non-empty string."))
        }),
        first_offender("sep-9999-occurrence-name", events, Failure, label, |e| {
            (e["name"].as_str() != Some(name)).then(|| format!("`name` is {}, expected `{name}`.", e["name"]))
        }),
        first_offender("sep-9999-occurrence-timestamp", events, Failure, label, |e| {
            let timestamp = &e["timestamp"];
            (!is_iso8601(timestamp)).then(|| format!("`timestamp` is {timestamp}, expected an ISO 8601 instant."))
        }),
        first_offender("sep-9999-occurrence-data", events, Failure, label, |e| {
            let described = describe(e.get("data"));
            (!e["data"].is_object()).then(|| format!("`data` is {described}, expected an object."))
        }),
        first_offender("sep-9999-occurrence-cursor-optional", events, Failure, label, |e| {
            let described = describe(e.get("cursor"));
            (!cursor_ok(&e["cursor"])).then(|| format!("`cursor` is {described}, expected a string, null, or absent."))
        }),
        first_offender("sep-9999-occurrence-meta-ungoverned", events, Warning, label, meta_problem),
        upstream,
    ]
}

/// The error contract: an unknown name, no name, wrong-typed arguments, and
/// a type without poll delivery.
async fn poll_error_checks(t: &PollTarget, descriptors: &[Value]) -> Vec<Check> {
    let mut checks = unknown_name_checks(&t.url).await;
    checks.push(no_name_check(&t.url).await);
    let invalid = invalid_arguments_check(t).await;
    let copy = Check { id: "sep-9999-error-invalid-params".to_owned(), ..invalid.clone() };
    checks.extend([invalid, copy]);
    checks.push(unsupported_mode_check(&t.url, descriptors).await);
    checks
}

async fn unknown_name_checks(url: &str) -> Vec<Check> {
    let (jsonrpc, removal) = ("sep-9999-poll-errors-are-jsonrpc", "sep-9999-removal-poll-not-found");
    let name = unknown_event_name();
    match poll(url, json!({"name": name, "arguments": {}, "cursor": null})).await {
        Ok(_) => {
            let message = format!("A poll for unknown event name `{name}` returned a result instead of an error.");
            vec![check(jsonrpc, Failure, message.clone()), check(removal, Failure, message)]
        }
        Err(e) if e.code == NOT_FOUND => vec![pass(jsonrpc), pass(removal)],
        Err(e) => {
            let message = format!("Unknown event name answered {}, expected -32011 NotFound.", e.code);
            vec![pass(jsonrpc), check(removal, Failure, message)]
        }
    }
}

async fn no_name_check(url: &str) -> Check {
    let id = "sep-9999-poll-one-subscription-per-request";
    match poll(url, json!({"arguments": {}, "cursor": null})).await {
        Ok(_) => check(
            id,
            Failure,
            "A poll omitting `name` returned a result; each request carries exactly one subscription and `name` is \
             what identifies it.",
        ),
        Err(e) if e.code == INVALID_PARAMS => pass(id),
        Err(e) => {
            check(id, Warning, format!("A poll omitting `name` answered {}, expected -32602 InvalidParams.", e.code))
        }
    }
}

/// Only the first typed property of the target's `inputSchema`, with a value
/// of the wrong JSON type.
async fn invalid_arguments_check(t: &PollTarget) -> Check {
    let id = "sep-9999-poll-invalid-arguments";
    let typed = t.descriptor["inputSchema"]["properties"].as_object().and_then(|properties| {
        properties.iter().find_map(|(property, spec)| {
            let kind = spec["type"].as_str()?;
            matches!(kind, "string" | "boolean" | "integer" | "number").then(|| (property.clone(), kind.to_owned()))
        })
    });
    let Some((property, kind)) = typed else {
        let reason = format!(
            "Event type `{}` declares no typed `inputSchema` property, so no argument value can be known-invalid \
             against it.",
            t.name
        );
        return untestable(id, &reason, Failure);
    };
    let wrong = if kind == "string" { json!(12345) } else { json!("not-a-valid-value") };
    let mut arguments = Map::new();
    arguments.insert(property.clone(), wrong.clone());
    match poll(&t.url, json!({"name": t.name, "arguments": arguments, "cursor": null})).await {
        Ok(_) => check(
            id,
            Failure,
            format!(
                "A poll sending `{property}: {wrong}` against a declared `{kind}` returned a result instead of -32602 \
                 InvalidParams."
            ),
        ),
        Err(e) if e.code == INVALID_PARAMS => pass(id),
        Err(e) => check(
            id,
            Failure,
            format!("Arguments violating `inputSchema` answered {}, expected -32602 InvalidParams.", e.code),
        ),
    }
}

async fn unsupported_mode_check(url: &str, descriptors: &[Value]) -> Check {
    let id = "sep-9999-poll-mode-unsupported";
    let other = descriptors.iter().find(|d| descriptor_name(d).is_some() && !delivery_modes(d).contains(&"poll"));
    let Some(other) = other else {
        let reason = "Every event type the server offers advertises `poll` delivery, so there is no event type to \
                      probe the unsupported-mode path with.";
        return untestable(id, reason, Failure);
    };
    let name = descriptor_name(other).unwrap_or_default();
    let arguments = minimal_arguments(other).unwrap_or_else(|| json!({}));
    match poll(url, json!({"name": name, "arguments": arguments, "cursor": null})).await {
        Ok(_) => check(
            id,
            Failure,
            format!(
                "Event type `{name}` does not advertise `poll` delivery (`delivery` is {}) but `events/poll` returned \
                 a result.",
                other["delivery"]
            ),
        ),
        Err(e) if e.code == UNSUPPORTED => pass(id),
        Err(e) => check(
            id,
            Failure,
            format!(
                "Polling `{name}`, which does not offer poll delivery, answered {}, expected -32014 Unsupported.",
                e.code
            ),
        ),
    }
}
