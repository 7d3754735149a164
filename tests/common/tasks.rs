//! The Tasks extension from a client's side: requests that declare it, and
//! waiting for a task's status.

use std::time::Duration;

use serde_json::{json, Value};

use super::{meta_with, post, request};

/// The extension's name.
pub const TASKS_EXT: &str = "io.modelcontextprotocol/tasks";

/// `_meta` of a client that declares the extension (and elicitation).
pub fn declaring_tasks() -> Value {
    meta_with(json!({"elicitation": {}, "extensions": {TASKS_EXT: {}}}))
}

/// A request whose `_meta` declares the extension.
pub fn with_tasks(id: i64, method: &str, mut params: Value) -> Value {
    params["_meta"] = declaring_tasks();
    request(json!(id), method, params)
}

/// `tasks/get` of `task`: its result (the answer must be 200).
pub async fn task_get(url: &str, task: &str) -> Value {
    let r = post(url, &with_tasks(900, "tasks/get", json!({"taskId": task}))).await;
    assert_eq!(r.status, 200, "{}", r.raw);
    r.response()["result"].clone()
}

/// Polls `tasks/get` until the task's status is `want` (fails after 10 s).
pub async fn until_status(url: &str, task: &str, want: &str) -> Value {
    let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
    loop {
        let t = task_get(url, task).await;
        if t["status"] == want {
            return t;
        }
        assert!(tokio::time::Instant::now() < deadline, "task {task} never became {want}: {t}");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// Sends `body`, which must create a task; the task's id. A created task's
/// result carries none of a finished call's members.
pub async fn new_task(url: &str, body: &Value) -> String {
    let r = post(url, body).await;
    let result = &r.response()["result"];
    assert_eq!(result["resultType"], "task", "{}", r.raw);
    for absent in ["result", "error", "inputRequests", "requestState"] {
        assert!(result.get(absent).is_none(), "{absent} in {result}");
    }
    result["taskId"].as_str().unwrap().to_owned()
}
