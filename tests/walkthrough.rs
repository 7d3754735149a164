//! The operator's walk of the guides, run as written: `config/walkthrough.sh`
//! (TLS at nginx, OAuth, two instances sharing Redis behind the shipped
//! nginx config, Prometheus scraping both, then a client's whole OAuth walk
//! through the balancer) against a real authorization server, with every
//! port moved to a free one.

use crate::common;

use std::time::Duration;

use common::auth_server::AuthServer;
use common::*;

#[actix_rt::test]
async fn the_deployment_walkthrough_runs_as_written() {
    let test = "walkthrough::the_deployment_walkthrough_runs_as_written";
    let Some(auth) = AuthServer::start(test).await else { return };
    let Some(_) = external(test, &["nginx", "redis-server", "prometheus", "openssl", "curl"]) else { return };
    let work = tempfile::Builder::new().prefix("actix-mcp-walkthrough-").tempdir().unwrap();
    let root = concat!(env!("CARGO_MANIFEST_DIR"), "/..");
    let port = |name: &str| (name.to_owned(), free_port().to_string());
    let ports = ["LB_PORT", "A_PORT", "B_PORT", "A_METRICS", "B_METRICS", "REDIS_PORT", "PROM_PORT"].map(port);
    let mut walk = tokio::process::Command::new("bash");
    walk.arg("config/walkthrough.sh")
        .current_dir(root)
        .env("ISSUER", &auth.issuer)
        .env("CLIENT_ID", "alice")
        .env("CLIENT_SECRET", "alice-secret")
        .env("BIN", binary())
        .env("WORK", work.path())
        .envs(ports)
        .kill_on_drop(true);
    let out = tokio::time::timeout(Duration::from_secs(180), walk.output()).await.expect("the walk ends").unwrap();
    let (stdout, stderr) = (String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    assert!(out.status.success(), "the walk failed:\n{stdout}\n{stderr}");
    for step in
        ["1. A TLS certificate", "4 calls through the balancer: 200", "Prometheus: 2 instances up, 4 tools/call served"]
    {
        assert!(stdout.contains(step), "{step:?} in:\n{stdout}");
    }
    // Both instances answered through the balancer.
    let answered = stdout.lines().find(|l| l.starts_with("instances that answered:")).unwrap_or_default();
    assert_eq!(answered.matches("upstream=").count(), 2, "{answered}");
}
