//! The `events-discovery` scenario: the capability, `events/list` and its
//! descriptors, the unknown-name probe.

use super::*;

pub(super) async fn discovery_scenario(url: &str) -> Vec<Check> {
    let id = "sep-9999-capability-events-object";
    let (declared, value) = declared_events(url).await;
    let mut checks = Vec::new();
    let mut undeclared_probe = None;
    if !declared {
        let probe = list_page(url, None).await;
        if probe.as_ref().is_err_and(|e| e.code == METHOD_NOT_FOUND) {
            return discovery_not_offered();
        }
        undeclared_probe = Some(probe);
        let message = format!(
            "Server answers `events/list` but declares no `capabilities.extensions[\"{EVENTS_EXTENSION}\"]`. \
             A client that follows the spec reads capabilities to decide whether to call it, so this surface \
             is unreachable."
        );
        checks.push(check(id, Failure, message));
    } else if value.is_object() {
        checks.push(pass(id));
    } else {
        let described = describe(Some(&value));
        let message = format!("`capabilities.extensions[\"{EVENTS_EXTENSION}\"]` is {described}, expected an object.");
        checks.push(check(id, Failure, message));
    }
    checks.push(list_changed_check(declared, &value));
    checks.push(empty_settings_check(declared, &value));
    checks.push(fallback_check(undeclared_probe.as_ref()));
    checks.extend(list_checks(url).await);
    checks
}

/// Undeclared and `-32601`: every row skipped but the fallback, which passes.
fn discovery_not_offered() -> Vec<Check> {
    let fallback = "sep-9999-fallback-method-not-found";
    let others: Vec<&str> = DISCOVERY_IDS.iter().copied().filter(|id| *id != fallback).collect();
    let mut checks = skip_all(&others, NOT_OFFERED);
    checks.push(pass(fallback));
    checks
}

fn list_changed_check(declared: bool, value: &Value) -> Check {
    let id = "sep-9999-capability-list-changed-flag";
    let flag = if declared && value.is_object() { value.get("listChanged") } else { None };
    match flag {
        None if declared => check(
            id,
            Skipped,
            "Server did not declare `listChanged`; the flag is optional and its absence means the notification is \
             not advertised.",
        ),
        None => check(
            id,
            Skipped,
            "Server declared no settings object for the flag to sit in; see sep-9999-capability-events-object.",
        ),
        Some(Value::Bool(_)) => pass(id),
        Some(other) => check(
            id,
            Failure,
            format!(
                "`listChanged` in the extension's settings object is {}, expected a boolean.",
                describe(Some(other))
            ),
        ),
    }
}

fn empty_settings_check(declared: bool, value: &Value) -> Check {
    let id = "sep-9999-capability-empty-settings";
    match value.as_object() {
        Some(settings) if declared && settings.is_empty() => pass(id),
        Some(settings) if declared => {
            let keys: Vec<&str> = settings.keys().map(String::as_str).collect();
            let message = format!(
                "The server declared settings ({}), so the empty-object case does not apply to it.",
                keys.join(", ")
            );
            check(id, Skipped, message)
        }
        _ => check(
            id,
            Skipped,
            "No settings object was declared, so there is no empty-object case to grade; see \
             sep-9999-capability-events-object.",
        ),
    }
}

fn fallback_check(probe: Option<&Result<ListPage, RpcError>>) -> Check {
    let id = "sep-9999-fallback-method-not-found";
    match probe {
        None => check(
            id,
            Skipped,
            "The server declares the extension, so it is not a server that does not offer it and the fallback does \
             not apply. Only a server declaring nothing can answer this rule.",
        ),
        Some(Ok(_)) => check(
            id,
            Skipped,
            "`events/list` returned a catalog, so this server does offer the extension and the fallback does not \
             apply to it.",
        ),
        Some(Err(e)) => check(
            id,
            Failure,
            format!(
                "A server declaring no events capability answered `events/list` with {e}, where a server that does \
                 not offer the extension answers -32601 MethodNotFound."
            ),
        ),
    }
}

async fn list_checks(url: &str) -> Vec<Check> {
    let id = "sep-9999-list-implemented";
    let first = match list_page(url, None).await {
        Ok(page) => page,
        Err(e) => return list_failed(url, &e).await,
    };
    let implemented = if first.result["events"].is_array() {
        pass(id)
    } else {
        let described = describe(first.result.get("events"));
        check(id, Failure, format!("`events/list` result `events` is {described}, expected an array."))
    };
    let mut checks = vec![implemented];
    checks.push(pagination_check(url, first.result.get("nextCursor")).await);
    let descriptors = list_all(url).await.unwrap_or(first.descriptors);
    checks.extend(descriptor_checks(&descriptors));
    checks.extend(discovery_error_checks(url, &descriptors).await);
    checks
}

async fn list_failed(url: &str, e: &RpcError) -> Vec<Check> {
    let message = if e.code == METHOD_NOT_FOUND {
        format!(
            "Server declares `capabilities.extensions[\"{EVENTS_EXTENSION}\"]` but `events/list` is not implemented \
             (-32601)."
        )
    } else {
        format!("`events/list` failed: {e}")
    };
    let mut checks = vec![check("sep-9999-list-implemented", Failure, message)];
    let reason = format!("`events/list` did not return a result ({e}).");
    checks.extend(untestable_all(&["sep-9999-list-pagination"], &reason, Failure));
    checks.extend(untestable_all(DESCRIPTOR_IDS, &reason, Failure));
    checks.extend(discovery_error_checks(url, &[]).await);
    checks
}

async fn pagination_check(url: &str, next: Option<&Value>) -> Check {
    let id = "sep-9999-list-pagination";
    let cursor = match next {
        None | Some(Value::Null) => {
            let reason = "Server returned a single page from `events/list` with no `nextCursor`, so cursor \
                          round-tripping could not be exercised.";
            return untestable(id, reason, Warning);
        }
        Some(Value::String(cursor)) if !cursor.is_empty() => cursor.clone(),
        Some(other) => {
            let described = describe(Some(other));
            return check(id, Failure, format!("`nextCursor` is {described}, expected a non-empty string."));
        }
    };
    match list_page(url, Some(&cursor)).await {
        Err(e) => {
            check(id, Failure, format!("Server returned `nextCursor` but rejected it on the next `events/list`: {e}"))
        }
        Ok(second) if second.result["nextCursor"].as_str() == Some(cursor.as_str()) => {
            check(id, Failure, "Server echoed the same `nextCursor` on the following page, which never terminates.")
        }
        Ok(_) => pass(id),
    }
}

fn descriptor_checks(descriptors: &[Value]) -> Vec<Check> {
    if descriptors.is_empty() {
        let reason = "Server's `events/list` returned an empty catalog, so no descriptor could be validated.";
        return untestable_all(DESCRIPTOR_IDS, reason, Failure);
    }
    let label = descriptor_label;
    vec![
        first_offender("sep-9999-descriptor-name", descriptors, Failure, label, |d| {
            let described = describe(d.get("name"));
            descriptor_name(d).is_none().then(|| format!("`name` is {described}, expected a non-empty string."))
        }),
        first_offender("sep-9999-descriptor-description", descriptors, Warning, label, |d| {
            let described = describe(d.get("description"));
            let ok = d["description"].as_str().is_some_and(|s| !s.is_empty());
            (!ok).then(|| format!("`description` is {described}, expected a non-empty string."))
        }),
        first_offender("sep-9999-descriptor-delivery-subset", descriptors, Failure, label, delivery_problem),
        first_offender("sep-9999-descriptor-input-schema", descriptors, Failure, label, |d| {
            schema_problem(d, "inputSchema")
        }),
        first_offender("sep-9999-descriptor-payload-schema", descriptors, Failure, label, |d| {
            schema_problem(d, "payloadSchema")
        }),
        first_offender("sep-9999-descriptor-meta", descriptors, Warning, label, meta_problem),
    ]
}

fn delivery_problem(descriptor: &Value) -> Option<String> {
    if !descriptor["delivery"].is_array() {
        return Some(format!("`delivery` is {}, expected an array.", describe(descriptor.get("delivery"))));
    }
    let modes = delivery_modes(descriptor);
    if modes.is_empty() {
        return Some("`delivery` is empty; the subset must be non-empty.".to_owned());
    }
    let unknown: Vec<String> =
        modes.iter().filter(|m| !matches!(**m, "poll" | "push" | "webhook")).map(|m| format!("`{m}`")).collect();
    if !unknown.is_empty() {
        return Some(format!("`delivery` contains {}, outside the poll/push/webhook set.", unknown.join(", ")));
    }
    let distinct: BTreeSet<&str> = modes.iter().copied().collect();
    (distinct.len() != modes.len()).then(|| "`delivery` repeats a mode; it is a subset, not a list.".to_owned())
}

fn schema_problem(descriptor: &Value, key: &str) -> Option<String> {
    let described = describe(descriptor.get(key));
    (!descriptor[key].is_object()).then(|| format!("`{key}` is {described}, expected a JSON Schema object."))
}

/// The unknown-name probe through `events/poll`, which grades both rows.
async fn discovery_error_checks(url: &str, descriptors: &[Value]) -> Vec<Check> {
    let (not_found, range) = ("sep-9999-error-not-found", "sep-9999-error-server-range");
    let pollable = descriptors.iter().any(|d| delivery_modes(d).contains(&"poll"));
    if !descriptors.is_empty() && !pollable {
        let reason = "No event type advertises `poll` delivery, so `events/poll` could not be used to probe the \
                      unknown-name error path.";
        return untestable_all(&[not_found, range], reason, Failure);
    }
    let name = unknown_event_name();
    let e = match poll(url, json!({"name": name, "arguments": {}, "cursor": null})).await {
        Err(e) => e,
        Ok(_) => {
            let message =
                format!("`events/poll` for unknown event name `{name}` returned a result instead of an error.");
            return vec![check(not_found, Failure, message.clone()), check(range, Failure, message)];
        }
    };
    let hint = if e.code == UNSUPPORTED {
        " `-32014 Unsupported` is for a well-formed request naming an option the server does not offer, not for a \
         name it does not have."
    } else {
        ""
    };
    vec![
        if e.code == NOT_FOUND {
            pass(not_found)
        } else {
            check(
                not_found,
                Failure,
                format!("Unknown event name answered {}, expected -32011 NotFound.{hint}", e.code),
            )
        },
        if (-32099..=-32000).contains(&e.code) {
            pass(range)
        } else {
            let message =
                format!("Error code {} is outside the implementation-defined server range [-32099, -32000].", e.code);
            check(range, Failure, message)
        },
    ]
}
