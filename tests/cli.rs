//! The `actix-mcp` binary's command-line contract, over real HTTP.

mod common;

use common::*;
use serde_json::json;

#[actix_rt::test]
async fn serve_prints_the_bound_address_and_serves_until_terminated() {
    let served = HttpChild::spawn(&["--catalog", "everything", "--log-format", "json"]).await;
    let (mut child, url) = (served.child, served.url);
    assert!(url.starts_with("http://127.0.0.1:") && url.ends_with("/mcp"), "{url}");
    let r = post(&url, &request(json!(1), "server/discover", json!({}))).await;
    assert_eq!(r.status, 200);
    assert_eq!(r.response()["result"]["resultType"], "complete");
    // An open subscription receives its completion result at SIGTERM.
    let listen = request(json!("bye"), "subscriptions/listen", json!({"notifications": {"toolsListChanged": true}}));
    let mut stream = SseReader::open(&url, &listen).await;
    assert_eq!(stream.next().await.unwrap()["method"], "notifications/subscriptions/acknowledged");
    // SIGTERM → graceful exit.
    let pid = child.id().unwrap() as i32;
    let killed = std::process::Command::new("kill").args(["-TERM", &pid.to_string()]).status().unwrap();
    assert!(killed.success());
    let done = stream.next().await.expect("the completion result");
    assert_eq!(done["id"], "bye");
    assert_eq!(done["result"]["resultType"], "complete");
    assert_eq!(done["result"]["_meta"]["io.modelcontextprotocol/subscriptionId"], "bye");
    assert!(stream.next().await.is_none(), "then the stream closes");
    let status = tokio::time::timeout(std::time::Duration::from_secs(15), child.wait()).await.expect("exits").unwrap();
    assert!(status.success(), "{status:?}");
}

#[test]
fn help_documents_every_flag() {
    let out = std::process::Command::new(binary()).args(["serve", "--help"]).output().unwrap();
    let help = String::from_utf8_lossy(&out.stdout);
    for flag in ["--config", "--bind", "--catalog", "--log-level", "--log-format"] {
        assert!(help.contains(flag), "serve --help lacks {flag}:\n{help}");
    }
    let out = std::process::Command::new(binary()).args(["stdio", "--help"]).output().unwrap();
    let help = String::from_utf8_lossy(&out.stdout);
    for flag in ["--config", "--catalog"] {
        assert!(help.contains(flag), "stdio --help lacks {flag}:\n{help}");
    }
}

#[test]
fn bad_configuration_is_a_clear_error() {
    let out = std::process::Command::new(binary()).args(["serve", "--bind", "not-an-address"]).output().unwrap();
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("http.bind"), "{}", String::from_utf8_lossy(&out.stderr));
    let out = std::process::Command::new(binary()).args(["stdio", "--catalog", "nope"]).output().unwrap();
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("unknown catalog"));
    // The default build has no HTTP/2: asking for it says how to get it.
    let out = std::process::Command::new(binary()).args(["serve", "--h2c", "--bind", "127.0.0.1:0"]).output().unwrap();
    assert!(!out.status.success());
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("--features h2c"),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn a_port_in_use_is_a_clear_error_without_a_panic() {
    let taken = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = taken.local_addr().unwrap().to_string();
    let out = std::process::Command::new(binary()).args(["serve", "--bind", &addr]).output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "{stderr}");
    assert!(stderr.contains("in use"), "{stderr}");
    assert!(!stderr.contains("panicked"), "{stderr}");
}
