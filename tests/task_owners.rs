//! Tasks among several callers (API keys for alice, bob and carol): a
//! caller's share of the task store, what happens when it or the store is
//! full (an optional task's call answered in the call, a required one
//! refused as load, not as a fault), and a task's notifications reaching
//! only its owner's listen streams.

use crate::common;

use std::time::Duration;

use actix_mcp::auth::ApiKeyAuthenticator;
use actix_mcp::prelude::*;
use common::*;
use serde_json::{json, Value};

fn server(edit: impl FnOnce(&mut Config)) -> TestServer {
    let mut config = test_config();
    config.tasks.task_after_ms = 50;
    edit(&mut config);
    let keys = ["alice", "bob", "carol"].into_iter().fold(ApiKeyAuthenticator::from_config(&[]).unwrap(), |a, who| {
        a.with_key(&format!("{who}-key"), Identity::new(who).with_scopes(["mcp"]))
    });
    let slow = |ctx: RequestContext| async move {
        ctx.sleep(Duration::from_secs(30)).await?;
        Ok("slow done")
    };
    let quick = |ctx: RequestContext| async move {
        ctx.begin_task().await;
        ctx.sleep(Duration::from_millis(300)).await?;
        Ok("quick done")
    };
    let server = McpServer::builder(server_info!())
        .config(config)
        .authenticator(keys)
        .tool(Tool::no_args("slow", "Runs 30 s, a task", slow).with_task_support(TaskSupport::Required))
        .tool(Tool::no_args("quick", "Runs 0.3 s, a task", quick).with_task_support(TaskSupport::Required))
        .tool(
            Tool::no_args("maybe", "Answers after 0.2 s, a task if it can be", |ctx: RequestContext| async move {
                ctx.sleep(Duration::from_millis(200)).await?;
                Ok("maybe done")
            })
            .with_task_support(TaskSupport::Optional),
        )
        .build()
        .expect("a valid server");
    TestServer::serve(server)
}

async fn as_caller(url: &str, who: &str, body: &Value) -> Reply {
    post_with(url, body, |h| set(h, "Authorization", &format!("Bearer {who}-key"))).await
}

fn call(id: i64, tool: &str) -> Value {
    with_tasks(id, "tools/call", json!({"name": tool, "arguments": {}}))
}

/// Security review finding 3: a per-caller share of the store, and load
/// answered as load.
#[actix_rt::test]
async fn one_caller_cannot_fill_the_task_store_for_everyone() {
    let s = server(|c| {
        c.tasks.max_tasks = 8;
        c.tasks.max_tasks_per_subject = 3;
    });
    for id in 1..=3 {
        let r = as_caller(&s.url, "alice", &call(id, "slow")).await;
        assert_eq!(r.response()["result"]["resultType"], "task", "{}", r.raw);
    }
    // Alice's share is full: a required task is refused as load (429,
    // -32000, retry later), not as an internal error.
    let r = as_caller(&s.url, "alice", &call(4, "slow")).await;
    assert_eq!((r.status, r.error_code()), (429, Some(-32000)), "{}", r.raw);
    assert_eq!(r.response()["error"]["data"], json!({"reason": "caller_share", "limit": 3}));
    assert!(r.response()["error"]["message"].as_str().unwrap().contains("try again later"), "{}", r.raw);
    // An optional one is answered in the call.
    let r = as_caller(&s.url, "alice", &call(5, "maybe")).await;
    assert_eq!(r.status, 200, "{}", r.raw);
    assert_eq!(r.response()["result"]["content"][0]["text"], "maybe done", "{}", r.raw);
    // Bob is not affected: his tasks are made.
    for id in 6..=8 {
        let r = as_caller(&s.url, "bob", &call(id, "slow")).await;
        assert_eq!(r.response()["result"]["resultType"], "task", "{}", r.raw);
    }
    // Carol fills the store's last two places; past them the store is full
    // for everyone, with the same answers.
    for id in 9..=10 {
        assert_eq!(as_caller(&s.url, "carol", &call(id, "slow")).await.response()["result"]["resultType"], "task");
    }
    let r = as_caller(&s.url, "carol", &call(11, "slow")).await;
    assert_eq!((r.status, r.error_code()), (429, Some(-32000)), "{}", r.raw);
    assert_eq!(r.response()["error"]["data"], json!({"reason": "store", "limit": 8}));
    let r = as_caller(&s.url, "carol", &call(12, "maybe")).await;
    assert_eq!(r.response()["result"]["content"][0]["text"], "maybe done", "{}", r.raw);
    s.stop().await;
}

/// Security review finding 2: another caller's listen of a task id sees
/// what an unknown id gets.
#[actix_rt::test]
async fn a_task_is_heard_only_by_its_owner() {
    let s = server(|_| {});
    let created = as_caller(&s.url, "alice", &call(1, "quick")).await;
    let task = created.response()["result"]["taskId"].as_str().expect("a task").to_owned();
    let listen = |id: i64, tasks: Value| {
        let mut body = request(json!(id), "subscriptions/listen", json!({"notifications": {"taskIds": tasks}}));
        body["params"]["_meta"] = declaring_tasks();
        body
    };
    let unknown = "00000000-0000-4000-8000-000000000000";
    let open = |who: &'static str, body: Value| {
        let url = s.url.clone();
        async move {
            let bearer = format!("Bearer {who}-key");
            SseReader::open_with(&url, &body, &[("Authorization", &bearer)]).await
        }
    };
    let mut alice = open("alice", listen(2, json!([task]))).await;
    let mut bob = open("bob", listen(3, json!([task]))).await;
    let mut bob_unknown = open("bob", listen(4, json!([unknown]))).await;
    // Bob's listen of alice's task is acknowledged exactly as one of an unknown id.
    let ack = |m: Value| m["params"]["notifications"]["taskIds"].clone();
    assert_eq!(ack(alice.next().await.unwrap()), json!([task]));
    assert_eq!(ack(bob.next().await.unwrap()), json!([task]));
    assert_eq!(ack(bob_unknown.next().await.unwrap()), json!([unknown]));
    // Alice hears her task finish; bob hears nothing of it.
    loop {
        let m = alice.next().await.expect("alice's stream stays open");
        assert_eq!(m["method"], "notifications/tasks", "{m}");
        if m["params"]["status"] == "completed" {
            assert_eq!(m["params"]["result"]["content"][0]["text"], "quick done", "{m}");
            break;
        }
    }
    assert_eq!(bob.next_within(Duration::from_millis(500)).await, None, "nothing reaches bob's stream");
    assert_eq!(bob_unknown.next_within(Duration::from_millis(100)).await, None);
    let r = as_caller(&s.url, "bob", &with_tasks(5, "tasks/get", json!({"taskId": task}))).await;
    assert_eq!(r.error_code(), Some(-32602), "{}", r.raw);
    s.stop().await;
}
