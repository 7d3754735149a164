//! External programs a test needs (redis-server, nginx, node, …): found on
//! `PATH` and checked to run. Where one is missing the test prints
//! `SKIP <test>: <program> not available` and passes, unless
//! `ACTIX_MCP_TEST_REQUIRE_EXTERNAL=1` (set by `.ci/run`, which installs
//! them all): then a missing program fails the test.

use std::path::PathBuf;
use std::process::{Command, Stdio};

/// The flag that turns a missing program into a failure.
pub const REQUIRE_EXTERNAL: &str = "ACTIX_MCP_TEST_REQUIRE_EXTERNAL";

/// Whether missing programs fail tests instead of skipping them.
pub fn external_required() -> bool {
    std::env::var(REQUIRE_EXTERNAL).is_ok_and(|v| v == "1")
}

/// `program` on `PATH` (or in an sbin directory, where daemons live), if
/// `program VERSION_FLAG` exits 0.
pub fn find_program(program: &str) -> Option<PathBuf> {
    let path = std::env::var_os("PATH").unwrap_or_default();
    let dirs = std::env::split_paths(&path).chain(["/usr/sbin", "/usr/local/sbin"].map(PathBuf::from));
    let found = dirs.map(|d| d.join(program)).find(|p| p.is_file())?;
    // nginx answers `-v`, openssl `version`; the others `--version`.
    let flag = match program {
        "nginx" => "-v",
        "openssl" => "version",
        _ => "--version",
    };
    let ran = Command::new(&found).arg(flag).stdout(Stdio::null()).stderr(Stdio::null()).status();
    ran.is_ok_and(|s| s.success()).then_some(found)
}

/// Every program of `programs`, or `None` after printing why `test` is
/// skipped; panics instead when external programs are required.
pub fn external(test: &str, programs: &[&str]) -> Option<Vec<PathBuf>> {
    let mut found = Vec::new();
    for program in programs {
        match find_program(program) {
            Some(p) => found.push(p),
            None if external_required() => {
                panic!("{test}: {program} is required ({REQUIRE_EXTERNAL}=1) but not available")
            }
            None => {
                println!("SKIP {test}: {program} not available");
                return None;
            }
        }
    }
    Some(found)
}

/// The path of one program that an earlier [`external`] check found.
pub fn program(name: &str) -> PathBuf {
    find_program(name).unwrap_or_else(|| panic!("{name} is not available"))
}

/// Where `tests/real-servers/install.sh` installs (`node/`, `python/`).
pub fn real_servers_home() -> PathBuf {
    std::env::var_os("ACTIX_MCP_REAL_SERVERS_HOME")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/..")).join("target/real-servers"))
}

/// `tests/real-servers/install.sh WHAT` run (`node`, `python`: the
/// environment with the Python SDK and `standardwebhooks`) once its
/// `programs` are found, and the directory it installed to; `None` after
/// printing why `test` is skipped (a failure when external programs are
/// required). One install at a time.
pub fn real_servers(test: &str, what: &str, programs: &[&str]) -> Option<PathBuf> {
    static ONE_AT_A_TIME: std::sync::Mutex<()> = std::sync::Mutex::new(());
    external(test, programs)?;
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    let script = PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/..")).join("tests/real-servers/install.sh");
    let ok =
        Command::new("bash").arg(script).arg(what).env("ACTIX_MCP_REAL_SERVERS_HOME", real_servers_home()).status();
    if !ok.is_ok_and(|s| s.success()) {
        assert!(!external_required(), "{test}: tests/real-servers/install.sh {what} failed");
        println!("SKIP {test}: tests/real-servers/install.sh {what} failed");
        return None;
    }
    Some(real_servers_home().join(what))
}

/// `chromium --headless` on `url`: (the DOM after scripts ran, stderr).
pub async fn chromium(url: &str, extra: &[&str]) -> (String, String) {
    let profile =
        std::env::temp_dir().join(format!("actix-mcp-chromium-{}-{}", std::process::id(), super::free_port()));
    let mut cmd = tokio::process::Command::new(program("chromium"));
    cmd.args([
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-dev-shm-usage",
        "--disable-quic",
        "--no-first-run",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        "--enable-logging=stderr",
        "--v=0",
        "--virtual-time-budget=5000",
    ])
    .arg(format!("--user-data-dir={}", profile.display()))
    .args(extra)
    .arg(url)
    .kill_on_drop(true);
    let out = tokio::time::timeout(std::time::Duration::from_secs(60), cmd.output())
        .await
        .expect("chromium within 60 s")
        .unwrap();
    let _ = std::fs::remove_dir_all(&profile);
    (String::from_utf8_lossy(&out.stdout).into_owned(), String::from_utf8_lossy(&out.stderr).into_owned())
}
