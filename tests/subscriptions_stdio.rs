//! `subscriptions/listen` on the `actix-mcp stdio` binary: concurrent
//! subscriptions demultiplexed by `subscriptionId`, cancellation freeing the
//! listener, EOF, and the completion result at SIGTERM.

use crate::common;

use common::*;
use serde_json::{json, Value};

fn sub_id(m: &Value) -> &Value {
    &m["params"]["_meta"]["io.modelcontextprotocol/subscriptionId"]
}

fn listen(id: Value, notifications: Value) -> Value {
    request(id, "subscriptions/listen", json!({"notifications": notifications}))
}

#[actix_rt::test]
async fn two_subscriptions_are_demultiplexed_by_subscription_id() {
    let mut p = StdioChild::spawn(&[]);
    p.send(&listen(json!(1), json!({"toolsListChanged": true}))).await;
    let ack = p.recv().await;
    assert_eq!((ack["method"].as_str(), sub_id(&ack)), (Some("notifications/subscriptions/acknowledged"), &json!(1)));
    p.send(&listen(
        json!("b"),
        json!({"promptsListChanged": true, "resourceSubscriptions": ["test://watched-resource"]}),
    ))
    .await;
    let ack = p.recv().await;
    assert_eq!(sub_id(&ack), &json!("b"));
    assert_eq!(ack["params"]["notifications"]["resourceSubscriptions"], json!(["test://watched-resource"]));

    // The hub delivers on its own thread, so a notification may come before
    // or after the response of the call that caused it.
    p.send(&request(json!(10), "tools/call", json!({"name": "test_trigger_tool_change"}))).await;
    let notes = p.recv_answers_and_notes(1, 1).await;
    assert_eq!((notes[0]["method"].as_str(), sub_id(&notes[0])), (Some("notifications/tools/list_changed"), &json!(1)));

    p.send(&request(json!(11), "tools/call", json!({"name": "test_trigger_prompt_change"}))).await;
    p.send(&request(json!(12), "tools/call", json!({"name": "test_trigger_resource_update"}))).await;
    let mut notes = p.recv_answers_and_notes(2, 2).await;
    notes.sort_by_key(|m| m["method"].as_str().unwrap().to_string());
    assert_eq!(notes[0]["method"], "notifications/prompts/list_changed");
    assert_eq!(notes[1]["method"], "notifications/resources/updated");
    assert_eq!(notes[1]["params"]["uri"], "test://watched-resource");
    assert!(notes.iter().all(|m| sub_id(m) == &json!("b")), "{notes:?}");
    assert!(p.close().await.success());
}

#[actix_rt::test]
async fn cancelling_a_subscription_frees_its_listener() {
    let mut p = StdioChild::spawn(&["--log-level", "debug"]);
    p.send(&listen(json!(9), json!({"toolsListChanged": true}))).await;
    assert_eq!(sub_id(&p.recv().await), &json!(9));
    p.stderr_until("listener added").await;
    p.send(&json!({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 9}})).await;
    let line = p.stderr_until("listener removed").await;
    assert!(line.contains("listeners: 0"), "{line}");
    // Nothing more for subscription 9: a second subscription sees the change,
    // and nothing tagged 9 arrives before (or after) its notification.
    p.send(&listen(json!(10), json!({"toolsListChanged": true}))).await;
    assert_eq!(sub_id(&p.recv().await), &json!(10));
    p.send(&request(json!(2), "tools/call", json!({"name": "test_trigger_tool_change"}))).await;
    let notes = p.recv_answers_and_notes(1, 1).await;
    assert_eq!(sub_id(&notes[0]), &json!(10), "{notes:?}");
    p.send(&request(json!(3), "tools/list", json!({}))).await;
    assert_eq!(p.recv().await["id"], 3);
    assert!(p.close().await.success());
}

#[actix_rt::test]
async fn sigterm_sends_the_completion_result_then_exits() {
    let mut p = StdioChild::spawn(&[]);
    p.send(&listen(json!(5), json!({"toolsListChanged": true}))).await;
    assert_eq!(sub_id(&p.recv().await), &json!(5));
    let pid = p.child.id().unwrap().to_string();
    assert!(std::process::Command::new("kill").args(["-TERM", &pid]).status().unwrap().success());
    let done = p.recv().await;
    assert_eq!(done["id"], 5);
    assert_eq!(done["result"]["resultType"], "complete");
    assert_eq!(done["result"]["_meta"]["io.modelcontextprotocol/subscriptionId"], 5);
    let status = tokio::time::timeout(std::time::Duration::from_secs(10), p.child.wait()).await.unwrap().unwrap();
    assert!(status.success(), "{status:?}");
}

#[actix_rt::test]
async fn listen_with_an_empty_filter_is_acknowledged_and_quiet() {
    let mut p = StdioChild::spawn(&[]);
    p.send(&listen(json!(1), json!({}))).await;
    let ack = p.recv().await;
    assert_eq!(ack["params"]["notifications"], json!({}));
    p.send(&request(json!(2), "tools/call", json!({"name": "test_trigger_tool_change"}))).await;
    assert_eq!(p.recv_until_id(&json!(2)).await.len(), 1);
    // A later request's response follows with nothing in between.
    p.send(&request(json!(3), "tools/list", json!({}))).await;
    assert_eq!(p.recv().await["id"], 3);
    assert!(p.close().await.success());
}

/// The hub's capacity holds on stdio as on HTTP: past `hub.max_listeners`
/// a listen is refused with an error naming the limit, and the connection
/// carries on.
#[actix_rt::test]
async fn the_listener_cap_holds_on_stdio_too() {
    let config = ConfigFile::new("stdio-cap", "[hub]\nmax_listeners = 1\n");
    let mut p = StdioChild::spawn(&["--config", config.path()]);
    p.send(&listen(json!(1), json!({"toolsListChanged": true}))).await;
    assert_eq!(sub_id(&p.recv().await), &json!(1));
    p.send(&listen(json!(2), json!({"toolsListChanged": true}))).await;
    let refused = p.recv().await;
    assert_eq!(refused["id"], 2, "{refused}");
    assert!(refused["error"]["message"].as_str().unwrap().contains("limit 1"), "{refused}");
    p.send(&request(json!(3), "tools/list", json!({}))).await;
    assert!(p.recv().await["result"]["tools"].is_array());
    assert!(p.close().await.success());
}
