//! The `fs` catalog's boundaries against what a host or a skills directory
//! brings (findings 2, 11 and 15 of the hostile review): a server started
//! in `/` with no root named, `--root /` staying on one file system,
//! unreadable entries told once, a skill frontmatter nested past any
//! reason, and a file replaced with its size and mtime kept.

use crate::common;

use std::path::Path;
use std::process::Stdio;
use std::time::Duration;

use common::*;
use serde_json::{json, Value};
use sha2::Digest;

/// A configuration file in `dir` with `toml`; its path.
fn config(dir: &Path, toml: &str) -> String {
    let path = dir.join("fs.toml");
    std::fs::write(&path, toml).unwrap();
    path.display().to_string()
}

/// The text of a `tools/call` answer, and whether it is an error.
fn answer(reply: &Value) -> (String, bool) {
    let result = &reply["result"];
    let text = result["content"][0]["text"].as_str().unwrap_or_default().to_owned();
    (text, result["isError"] == true)
}

/// Finding 2: started in `/` (as desktop hosts start servers) with no root
/// named, the server does not serve the machine: it exits with a sentence
/// naming `--root`.
#[actix_rt::test]
async fn started_in_slash_without_a_root_it_refuses_to_serve_the_machine() {
    let out = tokio::process::Command::new(binary())
        .arg("stdio")
        .current_dir("/")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true)
        .output();
    let out = tokio::time::timeout(Duration::from_secs(30), out).await.expect("it exits").unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "it must not serve /: {stderr}");
    assert!(stderr.contains("--root DIR") && stderr.contains("--root /"), "{stderr}");
    assert!(out.stdout.is_empty(), "nothing was served");
}

/// Finding 2: `--root /` serves `/` on purpose, but never another file
/// system mounted below it: `/proc` is neither listed nor read.
#[actix_rt::test]
async fn an_explicit_root_slash_stays_on_one_file_system() {
    let dir = tempfile::tempdir().unwrap();
    let toml = "[fs]\nroot = \"/\"\nwatch = false\nmax_files = 300\n";
    let mut child = StdioChild::spawn_args(&["--config", &config(dir.path(), toml), "--log-level", "error"]);
    child
        .send(&request(json!(1), "tools/call", json!({"name": "read_file", "arguments": {"path": "etc/passwd"}})))
        .await;
    let (text, error) = answer(&child.recv().await);
    assert!(!error && text.contains("root:"), "/etc is served: {text}");
    for (id, path) in [(2, "proc/self/environ"), (3, "proc/self/status")] {
        let call = json!({"name": "read_file", "arguments": {"path": path}});
        child.send(&request(json!(id), "tools/call", call)).await;
        let (text, error) = answer(&child.recv().await);
        assert!(error && text.contains("another file system"), "{path}: {text}");
    }
    child.send(&request(json!(4), "resources/read", json!({"uri": "file:///proc/self/environ"}))).await;
    let reply = child.recv().await;
    assert!(reply["error"]["message"].as_str().unwrap_or_default().contains("another file system"), "{reply}");
    child.send(&request(json!(5), "resources/list", json!({}))).await;
    let listed = child.recv().await.to_string();
    assert!(!listed.contains("file:///proc/") && !listed.contains("file:///sys/"), "{listed}");
}

/// Finding 2: entries that cannot be read are told in one summary line,
/// not one warning each (`/proc/1` has several, even for root).
#[actix_rt::test]
async fn unreadable_entries_are_one_summary_line() {
    let dir = tempfile::tempdir().unwrap();
    let toml = "[fs]\nroot = \"/proc/1\"\nwatch = false\nskills = \"\"\n";
    let gw = HttpChild::spawn(&["--config", &config(dir.path(), toml)]).await;
    let told: Vec<&String> =
        gw.early_lines().iter().filter(|l| l.contains("cannot be read") || l.contains("cannot read")).collect();
    let denied = std::process::Command::new("find").arg("/proc/1").stderr(Stdio::piped()).output().unwrap();
    let unreadable = String::from_utf8_lossy(&denied.stderr).lines().count();
    if unreadable == 0 {
        println!("NOTE: nothing under /proc/1 is unreadable here; only the absence of per-entry lines is checked");
    }
    assert!(told.len() <= 1, "{} lines for {unreadable} unreadable entries: {told:?}", told.len());
    assert_eq!(told.len(), usize::from(unreadable > 0), "{told:?}");
}

/// Finding 11: a `SKILL.md` whose frontmatter nests 100,000 levels deep is
/// refused before it is parsed, with a line naming the limit; the server
/// starts and serves the other skills.
#[actix_rt::test]
async fn a_deeply_nested_frontmatter_is_refused_and_the_server_starts() {
    let dir = tempfile::tempdir().unwrap();
    let write = |rel: &str, text: &str| {
        let path = dir.path().join(rel);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    };
    let deep = format!("---\nname: deep\ndescription: nested\nmeta: {}\n---\n", "[".repeat(100_000));
    write("skills/deep/SKILL.md", &deep);
    write("skills/fine/SKILL.md", "---\nname: fine\ndescription: A fine skill\n---\n");
    let root = dir.path().display().to_string();
    let mut srv = HttpChild::spawn(&["--root", &root]).await;
    srv.stderr_until("over the limit of 64 (fs.max_frontmatter_depth)").await;
    let reply = post(&srv.url, &request(json!(1), "skills/list", json!({}))).await;
    let uris: Vec<Value> =
        reply.response()["result"]["skills"].as_array().unwrap().iter().map(|s| s["uri"].clone()).collect();
    assert_eq!(uris, [json!("skill://fine/SKILL.md")]);
}

/// Finding 15: a skill file replaced by bytes of the same length with its
/// modification time restored (`cp -p`, `rsync -t`, `tar x`) gets the
/// digest of its new bytes.
#[actix_rt::test]
async fn a_file_replaced_with_the_same_size_and_mtime_gets_a_new_digest() {
    let dir = tempfile::tempdir().unwrap();
    let skill = dir.path().join("skills/notes");
    std::fs::create_dir_all(&skill).unwrap();
    std::fs::write(skill.join("SKILL.md"), "---\nname: notes\ndescription: Team notes\n---\n").unwrap();
    let file = skill.join("a.txt");
    std::fs::write(&file, "first\n").unwrap();
    let mtime = std::fs::metadata(&file).unwrap().modified().unwrap();
    let root = dir.path().display().to_string();
    let srv = HttpChild::spawn(&["--root", &root, "--log-level", "error"]).await;
    let digest = || async {
        let reply = post(&srv.url, &request(json!(1), "skills/get", json!({"uri": "skill://notes/SKILL.md"}))).await;
        let files = reply.response()["result"]["skill"]["resources"].as_array().cloned().unwrap_or_default();
        files.into_iter().find(|f| f["uri"] == "skill://notes/a.txt").map(|f| f["digest"].clone())
    };
    assert_eq!(digest().await, Some(json!(sha256(b"first\n"))));
    // As `cp -p` does: the same file rewritten, its mtime set back.
    std::fs::write(&file, "secnd\n").unwrap();
    std::fs::File::options().write(true).open(&file).unwrap().set_modified(mtime).unwrap();
    assert_eq!(std::fs::metadata(&file).unwrap().modified().unwrap(), mtime);
    let mut seen = None;
    for _ in 0..100 {
        seen = digest().await;
        if seen == Some(json!(sha256(b"secnd\n"))) {
            return;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    panic!("the digest stayed {seen:?}, not that of the new bytes");
}

fn sha256(bytes: &[u8]) -> String {
    let hex: String = sha2::Sha256::digest(bytes).iter().map(|b| format!("{b:02x}")).collect();
    format!("sha256:{hex}")
}
