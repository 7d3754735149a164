//! A real authorization server for the authorization tests: oidc-provider
//! (OpenID Connect / OAuth 2.1, from npm) run by `tests/auth/server.mjs` on
//! a loopback port, installed by `tests/auth/install.sh` on first use.
//! Without Node the tests that need it print `SKIP` (or fail when external
//! programs are required).

use std::path::PathBuf;
use std::process::Stdio;
use std::sync::Mutex;
use std::time::Duration;

use serde_json::Value;
use tokio::io::{AsyncBufReadExt, BufReader};

use super::{external, free_port};

/// A running authorization server.
pub struct AuthServer {
    child: tokio::process::Child,
    /// Its issuer identifier (`http://127.0.0.1:PORT`).
    pub issuer: String,
}

fn root() -> PathBuf {
    PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/.."))
}

/// Installs oidc-provider once per test process.
fn install() -> PathBuf {
    static ONCE: Mutex<bool> = Mutex::new(false);
    let home = std::env::var_os("ACTIX_MCP_AUTH_SERVER_HOME")
        .map(PathBuf::from)
        .unwrap_or_else(|| root().join("target/auth-server"));
    let mut done = ONCE.lock().unwrap_or_else(|e| e.into_inner());
    if !*done {
        let status = std::process::Command::new("bash")
            .arg(root().join("tests/auth/install.sh"))
            .env("ACTIX_MCP_AUTH_SERVER_HOME", &home)
            .status()
            .expect("run tests/auth/install.sh");
        assert!(status.success(), "tests/auth/install.sh failed");
        *done = true;
    }
    home
}

impl AuthServer {
    /// Starts one, or `None` (after printing `SKIP test: …`) without Node.
    pub async fn start(test: &str) -> Option<Self> {
        external(test, &["node", "npm"])?;
        let home = install();
        let port = free_port();
        let log = std::fs::File::create(home.join(format!("server-{port}.log"))).expect("the server's log file");
        let mut child = tokio::process::Command::new("node")
            .arg(root().join("tests/auth/server.mjs"))
            .arg(port.to_string())
            .arg(&home)
            .stdout(Stdio::piped())
            .stderr(log)
            .kill_on_drop(true)
            .spawn()
            .expect("start the authorization server");
        let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
        let ready = tokio::time::timeout(Duration::from_secs(60), async {
            while let Ok(Some(line)) = lines.next_line().await {
                if let Some(issuer) = line.strip_prefix("ready ") {
                    return Some(issuer.to_owned());
                }
            }
            None
        });
        let issuer = ready.await.ok().flatten().unwrap_or_else(|| {
            panic!(
                "the authorization server is not ready within 60 s; see {}",
                home.join(format!("server-{port}.log")).display()
            )
        });
        Some(AuthServer { child, issuer })
    }

    /// An access token for `client` (`alice`, `bob`, `short`, `opaque`)
    /// with the client-credentials grant, for `resource` and `scope`.
    pub async fn token(&self, client: &str, resource: &str, scope: &str) -> String {
        let res = super::client()
            .post(format!("{}/token", self.issuer))
            .basic_auth(client, Some(format!("{client}-secret")))
            .form(&[("grant_type", "client_credentials"), ("resource", resource), ("scope", scope)])
            .send()
            .await
            .expect("token request");
        let body: Value = res.json().await.expect("token response");
        body["access_token"].as_str().unwrap_or_else(|| panic!("no token: {body}")).to_owned()
    }

    /// Revokes `token` of `client` (RFC 7009).
    pub async fn revoke(&self, client: &str, token: &str) {
        let res = super::client()
            .post(format!("{}/token/revocation", self.issuer))
            .basic_auth(client, Some(format!("{client}-secret")))
            .form(&[("token", token)])
            .send()
            .await
            .expect("revocation request");
        assert!(res.status().is_success(), "revocation: {}", res.status());
    }

    /// The test hooks' answers (`keys`, `stats`; `rotate` with POST).
    pub async fn hook(&self, name: &str) -> Value {
        let url = format!("{}/test/{name}", self.issuer);
        let req = if name == "rotate" { super::client().post(url) } else { super::client().get(url) };
        req.send().await.expect("test hook").json().await.expect("test hook answer")
    }
}

impl Drop for AuthServer {
    fn drop(&mut self) {
        let _ = self.child.start_kill();
    }
}
