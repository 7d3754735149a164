//! The scaling-out guide's setup, run as written: `config/scale-out.sh`
//! (a Redis master and replica, three Sentinels from `config/sentinel.conf`,
//! three instances of `config/cluster-sentinel.toml`, the shipped nginx
//! config round robin over them; a legacy session served by every instance,
//! the master killed and followed) with every port moved to a free one.

mod common;

use std::time::Duration;

use common::*;

#[actix_rt::test]
async fn the_scale_out_setup_runs_as_written() {
    let test = "scale_out_guide::the_scale_out_setup_runs_as_written";
    let Some(_) = external(test, &["nginx", "redis-server", "redis-cli", "curl"]) else { return };
    let work = tempfile::Builder::new().prefix("actix-mcp-scale-out-").tempdir().unwrap();
    let ports = |n: usize| (0..n).map(|_| free_fixed_port().to_string()).collect::<Vec<_>>().join(" ");
    let mut walk = tokio::process::Command::new("bash");
    walk.arg("config/scale-out.sh")
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .env("BIN", binary())
        .env("WORK", work.path())
        .env("REDIS_PORT", free_fixed_port().to_string())
        .env("REPLICA_PORT", free_fixed_port().to_string())
        .env("SENTINEL_PORTS", ports(3))
        .env("INSTANCE_PORTS", ports(3))
        .env("LB_PORT", free_fixed_port().to_string())
        .kill_on_drop(true);
    let out = tokio::time::timeout(Duration::from_secs(180), walk.output()).await.expect("the walk ends").unwrap();
    let (stdout, stderr) = (String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    assert!(out.status.success(), "the setup failed:\n{stdout}\n{stderr}");
    for step in [
        "the session's messages were served by 3 instances",
        "\"failovers\":1",
        "the session is served after the failover",
        "Done: three instances",
    ] {
        assert!(stdout.contains(step), "{step:?} in:\n{stdout}");
    }
}
