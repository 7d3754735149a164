//! Multi round-trip requests over real loopback HTTP: InputRequiredResult,
//! retries with inputResponses, integrity-protected requestState (tampering
//! refused before any handler runs), capability checks, several rounds, the
//! same flows for prompts and resources, and a retry served by a second
//! instance that shares the key.

use crate::common;

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use actix_mcp::catalog::{Catalog, Prompt, Resource, Tool};
use actix_mcp::config::Config;
use common::*;
use mcp_protocol::model::content::{Content, ResourceContents};
use mcp_protocol::model::prompts::{GetPromptResult, PromptMessage};
use mcp_protocol::model::tools::CallToolResult;
use serde_json::{json, Value};

const KEY: &str = "c2hhcmVkLWtleS1mb3ItYWxsLWluc3RhbmNlcy0xMjM0NTY3ODk="; // 37 bytes

fn accept(content: Value) -> Value {
    json!({"action": "accept", "content": content})
}

fn call(id: i64, name: &str, caps: Value, extra: Value) -> Value {
    let mut params = json!({"name": name, "arguments": {}, "_meta": meta_with(caps)});
    for (k, v) in extra.as_object().unwrap() {
        params[k] = v.clone();
    }
    json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": params})
}

fn all_caps() -> Value {
    json!({"elicitation": {}, "sampling": {}, "roots": {}})
}

/// A catalog whose handlers count their runs: a three-round tool, a prompt
/// and a resource that ask for input.
fn counting_catalog(runs: Arc<AtomicUsize>) -> Arc<Catalog> {
    let c = Catalog::new();
    let r = runs.clone();
    c.add_tool(Tool::raw(
        "three_rounds",
        "asks twice, keeps a counter in its state",
        json!({"type": "object"}),
        move |_, ctx| {
            let r = r.clone();
            async move {
                r.fetch_add(1, Ordering::SeqCst);
                let seen: u32 = ctx.handler_state().unwrap_or(0);
                ctx.set_handler_state(&(seen + 1))?;
                let a =
                    ctx.elicit("first", "First?", json!({"type": "object", "properties": {"v": {"type": "string"}}}))?;
                let b = ctx.elicit(
                    "second",
                    "Second?",
                    json!({"type": "object", "properties": {"v": {"type": "string"}}}),
                )?;
                Ok(CallToolResult::text(format!(
                    "{}+{} after {} round(s)",
                    a.string("v").unwrap_or("?"),
                    b.string("v").unwrap_or("?"),
                    ctx.input_round()
                )))
            }
        },
    ))
    .unwrap();
    let r = runs.clone();
    c.add_prompt(Prompt::new("ask_topic", "asks a topic", move |_, ctx| {
        let r = r.clone();
        async move {
            r.fetch_add(1, Ordering::SeqCst);
            let t =
                ctx.elicit("topic", "Topic?", json!({"type": "object", "properties": {"topic": {"type": "string"}}}))?;
            Ok(GetPromptResult {
                description: None,
                messages: vec![PromptMessage::user(Content::text(format!(
                    "Write about {}",
                    t.string("topic").unwrap_or("?")
                )))],
            })
        }
    }))
    .unwrap();
    let r = runs;
    c.add_resource(Resource::new("app://secret", "secret", move |uri, ctx| {
        let r = r.clone();
        async move {
            r.fetch_add(1, Ordering::SeqCst);
            let roots = ctx.list_roots("roots")?;
            Ok(vec![ResourceContents::text(uri, "text/plain", format!("{} root(s)", roots.roots.len()))])
        }
    }))
    .unwrap();
    Arc::new(c)
}

fn config_with_key() -> Config {
    let mut c = test_config();
    c.mrtr.key = KEY.into();
    c
}

#[actix_rt::test]
async fn elicitation_round_trip_and_retry_rules() {
    let srv = TestServer::everything();
    let tool = "test_input_required_result_elicitation";
    let r1 = post(&srv.url, &call(1, tool, all_caps(), json!({}))).await;
    let res = &r1.response()["result"];
    assert_eq!(res["resultType"], "input_required", "{}", r1.raw);
    assert_eq!(res["inputRequests"]["user_name"]["method"], "elicitation/create");
    let state = res["requestState"].as_str().unwrap().to_string();

    let ok = post(
        &srv.url,
        &call(
            2,
            tool,
            all_caps(),
            json!({"inputResponses": {"user_name": accept(json!({"name": "Alice"}))}, "requestState": state}),
        ),
    )
    .await;
    assert_eq!(ok.response()["result"]["resultType"], "complete");
    assert_eq!(ok.response()["result"]["content"][0]["text"], "Hello, Alice!");

    // Missing key → asked again; extra keys ignored; wrong shape and null → errors.
    let again =
        post(&srv.url, &call(3, tool, all_caps(), json!({"inputResponses": {"wrong_key": accept(json!({}))}}))).await;
    assert_eq!(again.response()["result"]["resultType"], "input_required");
    let extra = post(
        &srv.url,
        &call(
            4,
            tool,
            all_caps(),
            json!({"inputResponses": {"user_name": accept(json!({"name": "Bo"})), "x": 1, "y": {"z": 2}},
                   "requestState": state}),
        ),
    )
    .await;
    assert_eq!(extra.response()["result"]["content"][0]["text"], "Hello, Bo!");
    let wrong = post(
        &srv.url,
        &call(5, tool, all_caps(), json!({"inputResponses": {"user_name": 12345}, "requestState": state})),
    )
    .await;
    assert_eq!((wrong.status, wrong.error_code()), (400, Some(-32602)), "{}", wrong.raw);
    let null = post(&srv.url, &call(6, tool, all_caps(), json!({"inputResponses": null}))).await;
    assert_eq!(null.error_code(), Some(-32602), "{}", null.raw);
    let not_obj = post(&srv.url, &call(7, tool, all_caps(), json!({"inputResponses": [1]}))).await;
    assert_eq!(not_obj.error_code(), Some(-32602));
    srv.stop().await;
}

#[actix_rt::test]
async fn only_declared_capabilities_are_asked_for() {
    let srv = TestServer::everything();
    let r =
        post(&srv.url, &call(1, "test_input_required_result_capabilities", json!({"sampling": {}}), json!({}))).await;
    let reqs = r.response()["result"]["inputRequests"].as_object().unwrap().clone();
    assert!(!reqs.is_empty());
    assert!(reqs.values().all(|r| r["method"] != "elicitation/create"), "{reqs:?}");
    // A handler that cannot proceed without the capability → -32021 (draft: -32003).
    let r = post(&srv.url, &call(2, "test_input_required_result_elicitation", json!({}), json!({}))).await;
    assert_eq!((r.status, r.error_code()), (400, Some(-32021)), "{}", r.raw);
    assert_eq!(r.response()["error"]["data"]["requiredCapabilities"], json!({"elicitation": {}}));
    // tools/list never answers input_required.
    let r = post(&srv.url, &request(json!(3), "tools/list", json!({}))).await;
    assert_eq!(r.response()["result"]["resultType"], "complete");
    srv.stop().await;
}

#[actix_rt::test]
async fn several_inputs_at_once() {
    let srv = TestServer::everything();
    let tool = "test_input_required_result_multiple_inputs";
    let r = post(&srv.url, &call(1, tool, all_caps(), json!({}))).await;
    let res = &r.response()["result"];
    let methods: Vec<&str> =
        res["inputRequests"].as_object().unwrap().values().map(|v| v["method"].as_str().unwrap()).collect();
    assert_eq!(methods.len(), 3);
    for m in ["elicitation/create", "sampling/createMessage", "roots/list"] {
        assert!(methods.contains(&m), "{methods:?}");
    }
    let responses = json!({
        "user_name": accept(json!({"name": "Alice"})),
        "greeting": {"role": "assistant", "content": {"type": "text", "text": "Hi"}, "model": "m", "stopReason": "endTurn"},
        "client_roots": {"roots": [{"uri": "file:///r", "name": "R"}]},
    });
    let done = post(
        &srv.url,
        &call(2, tool, all_caps(), json!({"inputResponses": responses, "requestState": res["requestState"]})),
    )
    .await;
    assert_eq!(done.response()["result"]["content"][0]["text"], "Hi Alice (1 root(s))", "{}", done.raw);
    srv.stop().await;
}

#[actix_rt::test]
async fn three_rounds_and_tampering_never_runs_the_handler() {
    let runs = Arc::new(AtomicUsize::new(0));
    let srv = TestServer::start(counting_catalog(runs.clone()), config_with_key());
    let r1 = post(&srv.url, &call(1, "three_rounds", all_caps(), json!({}))).await;
    let s1 = r1.response()["result"]["requestState"].as_str().unwrap().to_string();
    assert!(r1.response()["result"]["inputRequests"]["first"].is_object());
    let r2 = post(
        &srv.url,
        &call(
            2,
            "three_rounds",
            all_caps(),
            json!({"inputResponses": {"first": accept(json!({"v": "a"}))}, "requestState": s1}),
        ),
    )
    .await;
    let res2 = &r2.response()["result"];
    assert_eq!(res2["resultType"], "input_required", "{}", r2.raw);
    assert!(res2["inputRequests"]["second"].is_object());
    let s2 = res2["requestState"].as_str().unwrap().to_string();
    assert_ne!(s1, s2, "each round issues a fresh state");
    let r3 = post(
        &srv.url,
        &call(
            3,
            "three_rounds",
            all_caps(),
            json!({"inputResponses": {"second": accept(json!({"v": "b"}))}, "requestState": s2}),
        ),
    )
    .await;
    assert_eq!(r3.response()["result"]["content"][0]["text"], "a+b after 3 round(s)", "{}", r3.raw);
    assert_eq!(runs.load(Ordering::SeqCst), 3);

    // Tampered, truncated, extended, swapped or foreign states are refused
    // before the handler runs.
    let mut bad = vec![format!("{s2}-TAMPERED"), s2[..s2.len() - 3].to_string(), format!("x{s2}"), String::new()];
    let mut flipped = s2.clone().into_bytes();
    flipped[5] = if flipped[5] == b'a' { b'b' } else { b'a' };
    bad.push(String::from_utf8(flipped).unwrap());
    let prompt_state =
        post(&srv.url, &request(json!(9), "prompts/get", json!({"name": "ask_topic", "_meta": meta_with(all_caps())})))
            .await
            .response()["result"]["requestState"]
            .as_str()
            .unwrap()
            .to_string();
    bad.push(prompt_state); // issued for prompts/get ask_topic
    let before = runs.load(Ordering::SeqCst);
    for (i, state) in bad.iter().enumerate() {
        let r = post(&srv.url, &call(10 + i as i64, "three_rounds", all_caps(), json!({"requestState": state}))).await;
        assert_eq!((r.status, r.error_code()), (400, Some(-32602)), "state #{i}: {}", r.raw);
    }
    assert_eq!(runs.load(Ordering::SeqCst), before, "no handler ran for a refused state");
    srv.stop().await;
}

#[actix_rt::test]
async fn prompts_and_resources_ask_too() {
    let runs = Arc::new(AtomicUsize::new(0));
    let srv = TestServer::start(counting_catalog(runs), config_with_key());
    let p1 =
        post(&srv.url, &request(json!(1), "prompts/get", json!({"name": "ask_topic", "_meta": meta_with(all_caps())})))
            .await;
    let res = &p1.response()["result"];
    assert_eq!(res["resultType"], "input_required");
    let p2 = post(
        &srv.url,
        &request(
            json!(2),
            "prompts/get",
            json!({"name": "ask_topic", "_meta": meta_with(all_caps()), "requestState": res["requestState"],
                   "inputResponses": {"topic": accept(json!({"topic": "rust"}))}}),
        ),
    )
    .await;
    assert_eq!(p2.response()["result"]["messages"][0]["content"]["text"], "Write about rust", "{}", p2.raw);

    let r1 = post(
        &srv.url,
        &request(json!(3), "resources/read", json!({"uri": "app://secret", "_meta": meta_with(all_caps())})),
    )
    .await;
    let res = &r1.response()["result"];
    assert_eq!(res["inputRequests"]["roots"]["method"], "roots/list", "{}", r1.raw);
    let r2 = post(
        &srv.url,
        &request(
            json!(4),
            "resources/read",
            json!({"uri": "app://secret", "_meta": meta_with(all_caps()), "requestState": res["requestState"],
                   "inputResponses": {"roots": {"roots": [{"uri": "file:///a"}, {"uri": "file:///b"}]}}}),
        ),
    )
    .await;
    assert_eq!(r2.response()["result"]["contents"][0]["text"], "2 root(s)", "{}", r2.raw);
    srv.stop().await;
}

#[actix_rt::test]
async fn a_retry_on_another_instance_sharing_the_key_completes() {
    let a = TestServer::start(counting_catalog(Arc::new(AtomicUsize::new(0))), config_with_key());
    let b = TestServer::start(counting_catalog(Arc::new(AtomicUsize::new(0))), config_with_key());
    let r1 = post(&a.url, &call(1, "three_rounds", all_caps(), json!({}))).await;
    let s1 = r1.response()["result"]["requestState"].clone();
    let r2 = post(
        &b.url,
        &call(
            2,
            "three_rounds",
            all_caps(),
            json!({"inputResponses": {"first": accept(json!({"v": "x"}))}, "requestState": s1}),
        ),
    )
    .await;
    let s2 = r2.response()["result"]["requestState"].clone();
    assert!(s2.is_string(), "{}", r2.raw);
    let r3 = post(
        &a.url,
        &call(
            3,
            "three_rounds",
            all_caps(),
            json!({"inputResponses": {"second": accept(json!({"v": "y"}))}, "requestState": s2}),
        ),
    )
    .await;
    assert_eq!(r3.response()["result"]["content"][0]["text"], "x+y after 3 round(s)", "{}", r3.raw);
    // An instance with another key refuses the state.
    let other = TestServer::start(counting_catalog(Arc::new(AtomicUsize::new(0))), test_config());
    let r = post(
        &other.url,
        &call(4, "three_rounds", all_caps(), json!({"requestState": r1.response()["result"]["requestState"]})),
    )
    .await;
    assert_eq!(r.error_code(), Some(-32602));
    for s in [a, b, other] {
        s.stop().await;
    }
}

#[actix_rt::test]
async fn an_expired_state_is_refused_before_the_handler_runs() {
    let runs = Arc::new(AtomicUsize::new(0));
    let mut cfg = config_with_key();
    cfg.mrtr.state_ttl_ms = 60_000;
    let clock = actix_mcp::facts::clock::ManualClock::at(1_700_000_000_000);
    let srv = TestServer::start_with_clock(counting_catalog(runs.clone()), cfg, Arc::new(clock.clone()));
    let round_two = |id: i64, state: Value| {
        call(
            id,
            "three_rounds",
            all_caps(),
            json!({"inputResponses": {"first": accept(json!({"v": "a"}))}, "requestState": state}),
        )
    };
    let first_state = |r: &Reply| r.response()["result"]["requestState"].clone();

    // A state is good until the last millisecond of its TTL...
    let r1 = post(&srv.url, &call(1, "three_rounds", all_caps(), json!({}))).await;
    clock.advance(59_999);
    let r2 = post(&srv.url, &round_two(2, first_state(&r1))).await;
    assert_eq!(r2.status, 200, "{}", r2.raw);
    assert_eq!(r2.response()["result"]["resultType"], "input_required", "{}", r2.raw);
    assert_eq!(runs.load(Ordering::SeqCst), 2);

    // ...and refused from the TTL on, before the handler runs.
    let r1 = post(&srv.url, &call(3, "three_rounds", all_caps(), json!({}))).await;
    assert_eq!(runs.load(Ordering::SeqCst), 3);
    clock.advance(60_000);
    let r2 = post(&srv.url, &round_two(4, first_state(&r1))).await;
    assert_eq!((r2.status, r2.error_code()), (400, Some(-32602)), "{}", r2.raw);
    assert!(r2.response()["error"]["message"].as_str().unwrap().contains("expired"), "{}", r2.raw);
    assert_eq!(runs.load(Ordering::SeqCst), 3, "the handler did not run for the expired state");
    srv.stop().await;
}

/// An instance of the everything catalog holding `keys` (`mrtr.keys`, the
/// first signs).
fn with_keys(keys: &[&str]) -> TestServer {
    TestServer::everything_with(|c| c.mrtr.keys = keys.iter().map(|k| k.to_string()).collect())
}

/// A flow asked for input on `start` and answered on `finish`: its greeting,
/// or the error it ended with.
async fn flow_across(start: &TestServer, finish: &TestServer) -> Result<String, Value> {
    let tool = "test_input_required_result_elicitation";
    let first = post(&start.url, &call(1, tool, all_caps(), json!({}))).await;
    let state = first.response()["result"]["requestState"].as_str().expect("input required").to_owned();
    let answers = json!({"inputResponses": {"user_name": accept(json!({"name": "Ada"}))}, "requestState": state});
    let done = post(&finish.url, &call(2, tool, all_caps(), answers)).await;
    match done.response()["result"]["content"][0]["text"].as_str() {
        Some(text) => Ok(text.to_owned()),
        None => Err(done.response()["error"].clone()),
    }
}

#[actix_rt::test]
async fn rolling_a_new_key_through_a_fleet_loses_no_flow() {
    const NEW: &str = "YW5vdGhlci1rZXktZm9yLWFsbC1pbnN0YW5jZXMtOTg3NjU0MzIx"; // 38 bytes
                                                                              // The fleet's keys at each step: the new key added last, moved first,
                                                                              // then the old one dropped. While an instance moves to the next step,
                                                                              // instances of both steps serve; a flow may start on either and finish
                                                                              // on the other.
    let steps: [&[&str]; 4] = [&[KEY], &[KEY, NEW], &[NEW, KEY], &[NEW]];
    for pair in steps.windows(2) {
        let (before, after) = (with_keys(pair[0]), with_keys(pair[1]));
        for (start, finish) in [(&before, &after), (&after, &before)] {
            let greeting = flow_across(start, finish).await;
            assert_eq!(greeting, Ok("Hello, Ada!".to_owned()), "keys {:?} → {:?}", pair[0], pair[1]);
        }
        before.stop().await;
        after.stop().await;
    }
    // Skipping the middle step would lose flows: a state the old key signed
    // does not open where only the new key is held (nor is it mistaken for one).
    let (old, new) = (with_keys(&[KEY]), with_keys(&[NEW]));
    let lost = flow_across(&old, &new).await.unwrap_err();
    assert_eq!(lost["code"], -32602, "{lost}");
    assert!(lost["message"].as_str().unwrap().contains("failed verification"), "{lost}");
    old.stop().await;
    new.stop().await;
}
