//! Upstreams for the gateway's tests: `tests/hostile/upstream.py`, an MCP
//! server that misbehaves on request (run by `python3`), written into a
//! gateway configuration; and waiting for the gateway to serve them.

use std::path::PathBuf;
use std::time::Duration;

use actix_mcp::client::Client;

/// The hostile upstream's script.
pub fn hostile_script() -> PathBuf {
    PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/..")).join("tests/hostile/upstream.py")
}

/// An `[[upstreams]]` entry named `name` running the hostile upstream with
/// `flags`, plus `extra` TOML lines of its own (`allow_tools = [...]`, …).
pub fn hostile_upstream(name: &str, extra: &str, flags: &[&str]) -> String {
    let mut args = vec![format!("{:?}", hostile_script().display().to_string())];
    args.extend(flags.iter().map(|f| format!("{f:?}")));
    format!("[[upstreams]]\nname = {name:?}\ncommand = \"python3\"\nargs = [{}]\n{extra}\n", args.join(", "))
}

/// An `[[upstreams]]` entry named `name` running this project's binary as
/// `stdio --catalog everything`, plus `extra` TOML lines of its own.
pub fn everything_upstream(name: &str, extra: &str) -> String {
    format!(
        "[[upstreams]]\nname = {name:?}\ncommand = {:?}\nargs = [\"stdio\", \"--catalog\", \"everything\", \"--log-level\", \"error\"]\n{extra}\n",
        super::binary().display().to_string()
    )
}

/// Waits up to 20 s for the gateway to serve tools named as in `names`
/// (`present`) or not.
pub async fn until_tools(client: &Client, names: &[&str], present: bool) {
    for _ in 0..200 {
        let tools = client.list_tools().await.unwrap();
        if names.iter().all(|n| tools.iter().any(|t| t.name == *n) == present) {
            return;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    panic!("the tools {names:?} were not {} within 20 s", if present { "served" } else { "withdrawn" });
}

/// `/status.json`'s row of upstream `name`.
pub async fn upstream_row(url: &str, name: &str) -> serde_json::Value {
    let status: serde_json::Value =
        reqwest::get(url.replace("/mcp", "/status.json")).await.unwrap().json().await.unwrap();
    let rows = status["upstreams"].as_array().cloned().unwrap_or_default();
    rows.into_iter().find(|r| r["name"] == name).unwrap_or_else(|| panic!("no upstream {name} in {status}"))
}
