//! A real `redis-server` on a loopback port, without persistence.

use super::nginx::{quiet, wait_for_port};

/// A `redis-server` child, killed by [`Redis::stop`] (or when dropped).
pub struct Redis {
    child: tokio::process::Child,
    pub port: u16,
}

impl Redis {
    /// Starts `redis-server` on `port` and waits until it accepts connections.
    pub async fn start(port: u16) -> Self {
        let child = quiet(
            "redis-server",
            &["--port", &port.to_string(), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"],
        )
        .spawn()
        .expect("redis-server starts");
        wait_for_port(port, "redis-server").await;
        Redis { child, port }
    }

    /// Stops it and waits until it is gone.
    pub async fn stop(mut self) {
        self.child.kill().await.unwrap();
        self.child.wait().await.unwrap();
    }
}

/// `redis-cli -p PORT ARGS…`: what it printed, trimmed (an error reply fails).
pub async fn redis_cli(port: u16, args: &[&str]) -> String {
    let out = tokio::process::Command::new(super::program("redis-cli"))
        .args(["-p", &port.to_string()])
        .args(args)
        .output()
        .await
        .expect("redis-cli runs");
    let text = String::from_utf8_lossy(&out.stdout).trim().to_owned();
    assert!(out.status.success() && !text.starts_with("ERR"), "redis-cli {args:?}: {text}");
    text
}
