//! The `fs` catalog over real loopback HTTP against a temporary directory:
//! files as resources, the tools, path-escape refusals, and the watcher
//! turning edits into `resources/updated` and new files into
//! `resources/list_changed` for the subscriptions that asked.

use crate::common;

use std::path::PathBuf;
use std::sync::Arc;

use actix_mcp::config::FsConfig;
use common::*;
use futures::StreamExt;
use serde_json::{json, Value};

struct TempDir(PathBuf);

impl TempDir {
    fn new(name: &str) -> Self {
        let p = std::env::temp_dir().join(format!("actix-mcp-fs-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&p);
        std::fs::create_dir_all(p.join("sub")).unwrap();
        std::fs::create_dir_all(p.join("target/debug")).unwrap();
        std::fs::write(p.join("hello.txt"), "hello world\nsecond line\n").unwrap();
        std::fs::write(p.join("sub/data.json"), "{\"k\": 1}").unwrap();
        std::fs::write(p.join("image.png"), [0x89u8, b'P', b'N', b'G', 0, 1, 2]).unwrap();
        std::fs::write(p.join("target/debug/build.log"), "excluded").unwrap();
        std::fs::write(p.join("big.txt"), "x".repeat(5000)).unwrap();
        // A file outside the root (one per directory: tests run at once).
        std::fs::write(secret_of(&p), "secret").unwrap();
        #[cfg(unix)]
        std::os::unix::fs::symlink(secret_of(&p), p.join("escape-link")).unwrap();
        TempDir(p.canonicalize().unwrap())
    }

    fn uri(&self, rel: &str) -> String {
        url_of(&self.0.join(rel))
    }
}

/// The file outside the directory `p` that its `escape-link` points to.
fn secret_of(p: &std::path::Path) -> PathBuf {
    p.with_file_name(format!("{}.secret", p.file_name().unwrap().to_string_lossy()))
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
        let _ = std::fs::remove_file(secret_of(&self.0));
    }
}

fn url_of(p: &std::path::Path) -> String {
    format!("file://{}", p.display())
}

fn start(dir: &TempDir) -> TestServer {
    let config = FsConfig { root: dir.0.display().to_string(), max_file_bytes: 4096, ..FsConfig::default() };
    let catalog = actix_mcp::catalogs::fs::build(&config, &actix_mcp::telemetry::logging::discard()).unwrap();
    TestServer::start(catalog, test_config())
}

fn call(id: i64, tool: &str, args: Value) -> Value {
    request(json!(id), "tools/call", json!({"name": tool, "arguments": args}))
}

#[actix_rt::test]
async fn files_are_resources_and_nothing_escapes_the_root() {
    let dir = TempDir::new("resources");
    let srv = start(&dir);
    let r = post(&srv.url, &request(json!(1), "resources/list", json!({}))).await;
    let names: Vec<&str> =
        r.response()["result"]["resources"].as_array().unwrap().iter().map(|r| r["name"].as_str().unwrap()).collect();
    assert_eq!(
        names,
        ["hello.txt", "image.png", "sub/data.json"],
        "excluded, oversized and escaping files are not listed"
    );

    let r = post(&srv.url, &request(json!(2), "resources/read", json!({"uri": dir.uri("hello.txt")}))).await;
    let c = &r.response()["result"]["contents"][0];
    assert_eq!((c["mimeType"].as_str(), c["text"].as_str()), (Some("text/plain"), Some("hello world\nsecond line\n")));
    let r = post(&srv.url, &request(json!(3), "resources/read", json!({"uri": dir.uri("image.png")}))).await;
    let c = &r.response()["result"]["contents"][0];
    assert_eq!(c["mimeType"], "image/png");
    assert!(c["blob"].as_str().is_some(), "binary files are blobs: {c}");

    for (id, uri) in [
        (4, format!("{}/../escape", dir.uri("sub"))),
        (5, dir.uri("escape-link")),
        (6, "file:///etc/passwd".to_string()),
    ] {
        let r = post(&srv.url, &request(json!(id), "resources/read", json!({"uri": uri}))).await;
        assert_eq!((r.status, r.error_code()), (400, Some(-32602)), "{uri}: {}", r.raw);
        let message = r.response()["error"]["message"].as_str().unwrap();
        assert!(message.contains("escapes the served root") || message.contains("not found"), "{message}");
    }
    let r = post(&srv.url, &request(json!(7), "resources/read", json!({"uri": dir.uri("escape-link")}))).await;
    assert!(r.response()["error"]["message"].as_str().unwrap().contains("escapes the served root"));
    let r =
        post(&srv.url, &request(json!(8), "resources/read", json!({"uri": dir.uri("target/debug/build.log")}))).await;
    assert_eq!(r.error_code(), Some(-32602), "excluded files are not read: {}", r.raw);
    let r = post(&srv.url, &request(json!(9), "resources/read", json!({"uri": dir.uri("nope.txt")}))).await;
    assert_eq!(r.response()["error"]["data"]["uri"], dir.uri("nope.txt"));
    srv.stop().await;
}

#[actix_rt::test]
async fn tools_read_list_and_search_inside_the_root_only() {
    let dir = TempDir::new("tools");
    let srv = start(&dir);
    let r = post(&srv.url, &call(1, "read_file", json!({"path": "sub/data.json"}))).await;
    assert_eq!(r.response()["result"]["content"][0]["text"], "{\"k\": 1}");
    for path in ["../x", "/etc/passwd", "sub/../../x", "escape-link", "target/debug/build.log"] {
        let r = post(&srv.url, &call(2, "read_file", json!({"path": path}))).await;
        assert_eq!(r.response()["result"]["isError"], true, "{path}: {}", r.raw);
    }
    let r = post(&srv.url, &call(3, "list_dir", json!({}))).await;
    let entries = &r.response()["result"]["structuredContent"]["entries"];
    let names: Vec<&str> = entries.as_array().unwrap().iter().map(|e| e["name"].as_str().unwrap()).collect();
    assert_eq!(names, ["big.txt", "hello.txt", "image.png", "sub"]);
    let r = post(&srv.url, &call(4, "search", json!({"query": "second"}))).await;
    assert_eq!(
        r.response()["result"]["structuredContent"]["matches"],
        json!([{"path": "hello.txt", "line": 2, "text": "second line"}])
    );
    let r = post(&srv.url, &call(5, "search", json!({"query": "^h.llo", "regex": true}))).await;
    assert_eq!(r.response()["result"]["structuredContent"]["matches"][0]["path"], "hello.txt");
    let r = post(&srv.url, &call(6, "search", json!({"query": "(", "regex": true}))).await;
    assert_eq!(r.response()["result"]["isError"], true);
    let r = post(&srv.url, &call(7, "search", json!({"query": "x", "path": "../"}))).await;
    assert_eq!(r.response()["result"]["isError"], true);
    srv.stop().await;
}

async fn next_event(
    stream: &mut (impl futures::Stream<Item = reqwest::Result<bytes::Bytes>> + Unpin),
    buf: &mut String,
) -> Value {
    loop {
        if let Some(end) = buf.find("\n\n") {
            let event: String = buf.drain(..end + 2).collect();
            if let Some(data) = event.lines().find_map(|l| l.strip_prefix("data:")) {
                return serde_json::from_str(data.trim()).unwrap();
            }
            continue;
        }
        let chunk =
            tokio::time::timeout(std::time::Duration::from_secs(10), stream.next()).await.expect("an event").unwrap();
        buf.push_str(&String::from_utf8_lossy(&chunk.unwrap()));
    }
}

#[actix_rt::test]
async fn edits_reach_subscribers_of_that_uri_only() {
    let dir = TempDir::new("watch");
    let srv = start(&dir);
    let listen = |id: i64, notifications: Value| {
        let body = request(json!(id), "subscriptions/listen", json!({"notifications": notifications}));
        let mut req = reqwest::Client::new().post(&srv.url).json(&body);
        for (k, v) in standard_headers(&body) {
            req = req.header(k, v);
        }
        req.send()
    };
    let mut hello = listen(1, json!({"resourceSubscriptions": [dir.uri("hello.txt")]})).await.unwrap().bytes_stream();
    let mut other =
        listen(2, json!({"resourceSubscriptions": [dir.uri("sub/data.json")], "resourcesListChanged": true}))
            .await
            .unwrap()
            .bytes_stream();
    let (mut b1, mut b2) = (String::new(), String::new());
    assert_eq!(next_event(&mut hello, &mut b1).await["method"], "notifications/subscriptions/acknowledged");
    assert_eq!(next_event(&mut other, &mut b2).await["method"], "notifications/subscriptions/acknowledged");

    std::fs::write(dir.0.join("hello.txt"), "changed\n").unwrap();
    let m = next_event(&mut hello, &mut b1).await;
    assert_eq!(m["method"], "notifications/resources/updated");
    assert_eq!(m["params"]["uri"], dir.uri("hello.txt"));
    assert_eq!(m["params"]["_meta"]["io.modelcontextprotocol/subscriptionId"], 1);

    // A new file: list_changed for the subscriber that asked, and it is readable.
    std::fs::write(dir.0.join("sub/new.txt"), "new").unwrap();
    let m = next_event(&mut other, &mut b2).await;
    assert_eq!(m["method"], "notifications/resources/list_changed", "{m}");
    let r = post(&srv.url, &request(json!(3), "resources/read", json!({"uri": dir.uri("sub/new.txt")}))).await;
    assert_eq!(r.response()["result"]["contents"][0]["text"], "new");
    // The hello.txt edit never reached the other stream: its next event is the
    // update of its own file.
    std::fs::write(dir.0.join("sub/data.json"), "{}").unwrap();
    let m = next_event(&mut other, &mut b2).await;
    assert_eq!(m["method"], "notifications/resources/updated", "{m}");
    assert_eq!(m["params"]["uri"], dir.uri("sub/data.json"));
    srv.stop().await;
}

/// Findings 1 and 2: `search` skips devices and FIFOs under the root (and
/// links to them) instead of reading a device without bound or blocking on
/// a FIFO; it answers, and its matches come from the regular files only.
#[cfg(unix)]
#[actix_rt::test]
async fn search_skips_devices_and_fifos() {
    let dir = TempDir::new("special");
    std::os::unix::fs::symlink("/dev/zero", dir.0.join("zero.txt")).unwrap();
    std::os::unix::fs::symlink("/dev/urandom", dir.0.join("random.txt")).unwrap();
    assert!(std::process::Command::new("mkfifo").arg(dir.0.join("pipe.txt")).status().unwrap().success());
    let srv = start(&dir);
    for id in 0..3 {
        let r = tokio::time::timeout(
            std::time::Duration::from_secs(20),
            post(&srv.url, &call(id, "search", json!({"query": "second"}))),
        )
        .await
        .expect("search answers instead of hanging on the FIFO");
        assert_eq!(r.status, 200, "{}", r.raw);
        let result = &r.response()["result"];
        assert_ne!(result["isError"], json!(true), "{result}");
        assert_eq!(
            result["structuredContent"]["matches"],
            json!([{"line": 2, "path": "hello.txt", "text": "second line"}])
        );
    }
    srv.stop().await;
}

/// The names of the listed resources.
async fn listed(url: &str) -> Vec<String> {
    let r = post(url, &request(json!("l"), "resources/list", json!({}))).await;
    r.response()["result"]["resources"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["name"].as_str().unwrap().to_owned())
        .collect()
}

/// Finding 3: a link inside the root to an excluded file (`.git/config`)
/// is not a way around `fs.exclude`: not listed, not readable, not searched.
#[cfg(unix)]
#[actix_rt::test]
async fn a_link_to_an_excluded_file_is_not_served() {
    let dir = TempDir::new("excluded-link");
    std::fs::create_dir_all(dir.0.join(".git")).unwrap();
    std::fs::write(dir.0.join(".git/config"), "[core]\nsecretvalue = 1\n").unwrap();
    std::os::unix::fs::symlink(dir.0.join(".git/config"), dir.0.join("link_git")).unwrap();
    std::os::unix::fs::symlink(".git/config", dir.0.join("relative_link_git")).unwrap();
    let srv = start(&dir);
    let names = listed(&srv.url).await;
    assert!(names.contains(&"hello.txt".to_owned()), "{names:?}");
    assert!(!names.iter().any(|n| n.contains("link_git") || n.contains(".git")), "{names:?}");
    for link in ["link_git", "relative_link_git"] {
        let r = post(&srv.url, &request(json!(1), "resources/read", json!({"uri": dir.uri(link)}))).await;
        assert!(r.response().get("error").is_some(), "{link}: {}", r.raw);
        assert!(!r.raw.contains("secretvalue"), "{}", r.raw);
    }
    let r = post(&srv.url, &call(2, "search", json!({"query": "secretvalue"}))).await;
    assert_eq!(r.response()["result"]["structuredContent"]["matches"], json!([]), "{}", r.raw);
    srv.stop().await;
}

/// Writes `rel` under the root and waits until the watcher has listed it;
/// the listing then.
///
/// The watcher takes events in the order they happened and applies a batch
/// of them as a whole before it takes the next: once a file written after
/// this one is listed too, every change made before this one was applied.
async fn control_file(dir: &TempDir, url: &str, rel: &str) -> Vec<String> {
    std::fs::write(dir.0.join(rel), "inside").unwrap();
    let what = format!("the watcher lists {rel}");
    let every = std::time::Duration::from_millis(25);
    wait_for(&what, std::time::Duration::from_secs(10), every, async || {
        let names = listed(url).await;
        if names.iter().any(|n| n == rel) {
            Ok(names)
        } else {
            Err(format!("{names:?}"))
        }
    })
    .await
}

/// Finding 4: a link created after start to a directory (or a file) outside
/// the root brings nothing from outside into the catalog.
#[cfg(unix)]
#[actix_rt::test]
async fn links_made_after_start_to_outside_the_root_are_not_followed() {
    let dir = TempDir::new("outside-link");
    let outside = std::env::temp_dir().join(format!("actix-mcp-outside-{}", std::process::id()));
    std::fs::create_dir_all(&outside).unwrap();
    std::fs::write(outside.join("before.txt"), "outside").unwrap();
    let srv = start(&dir);
    std::os::unix::fs::symlink(&outside, dir.0.join("outdir")).unwrap();
    std::os::unix::fs::symlink(outside.join("before.txt"), dir.0.join("outfile.txt")).unwrap();
    // Once a file made inside the root after the links is listed, the
    // watcher has taken the links' events (and would watch a directory
    // they led to, were it to follow them).
    control_file(&dir, &srv.url, "sub/control-1.txt").await;
    std::fs::write(outside.join("after.txt"), "outside, later").unwrap();
    // Two more: once the last is listed, everything before the one before
    // it (the links, the file made outside) has been applied.
    control_file(&dir, &srv.url, "sub/control-2.txt").await;
    let names = control_file(&dir, &srv.url, "sub/control-3.txt").await;
    let controls = ["sub/control-1.txt", "sub/control-2.txt", "sub/control-3.txt"];
    assert!(controls.iter().all(|c| names.iter().any(|n| n == c)), "{names:?}");
    assert!(!names.iter().any(|n| n.starts_with("outdir") || n == "outfile.txt"), "{names:?}");
    srv.stop().await;
    std::fs::remove_dir_all(&outside).ok();
}

/// Records the `path` of every log record whose message starts with `prefix`.
struct PathsLogged {
    prefix: &'static str,
    paths: Arc<std::sync::Mutex<std::collections::BTreeSet<String>>>,
}

impl slog::Drain for PathsLogged {
    type Ok = ();
    type Err = slog::Never;

    fn log(&self, record: &slog::Record<'_>, _: &slog::OwnedKVList) -> Result<(), slog::Never> {
        struct Path(Option<String>);
        impl slog::Serializer for Path {
            fn emit_arguments(&mut self, key: slog::Key, val: &std::fmt::Arguments<'_>) -> slog::Result {
                if key == "path" {
                    self.0 = Some(val.to_string());
                }
                Ok(())
            }
        }
        if record.msg().to_string().starts_with(self.prefix) {
            let mut path = Path(None);
            slog::KV::serialize(&record.kv(), record, &mut path).ok();
            self.paths.lock().unwrap().extend(path.0);
        }
        Ok(())
    }
}

/// Finding 11: files the watcher adds count against `fs.max_files` too.
#[actix_rt::test]
async fn the_file_cap_holds_for_files_added_later() {
    let dir = TempDir::new("max-files");
    // hello.txt, image.png and sub/data.json are served (big.txt is over
    // max_file_bytes, target/ is excluded, escape-link leaves the root).
    let config =
        FsConfig { root: dir.0.display().to_string(), max_file_bytes: 4096, max_files: 5, ..FsConfig::default() };
    let refused = Arc::new(std::sync::Mutex::new(std::collections::BTreeSet::new()));
    let drain = PathsLogged { prefix: "fs.max_files reached", paths: refused.clone() };
    let log = slog::Logger::root(slog::Drain::fuse(drain), slog::o!());
    let catalog = actix_mcp::catalogs::fs::build(&config, &log).unwrap();
    let srv = TestServer::start(catalog, test_config());
    assert_eq!(listed(&srv.url).await.len(), 3);
    let body = request(json!(1), "subscriptions/listen", json!({"notifications": {"resourcesListChanged": true}}));
    let mut stream = SseReader::open(&srv.url, &body).await;
    assert_eq!(stream.next().await.unwrap()["method"], "notifications/subscriptions/acknowledged");
    let new: Vec<String> = (0..6).map(|i| format!("new-{i}.txt")).collect();
    for name in &new {
        std::fs::write(dir.0.join(name), "n").unwrap();
    }
    assert_eq!(stream.next().await.unwrap()["method"], "notifications/resources/list_changed");
    // Wait until the watcher has dealt with every new file: served, or
    // refused (and logged) because the cap was reached.
    let deadline = tokio::time::Instant::now() + std::time::Duration::from_secs(10);
    let (served, refused) = loop {
        let served: Vec<String> = listed(&srv.url).await.into_iter().filter(|n| n.starts_with("new-")).collect();
        let refused = refused.lock().unwrap().clone();
        if served.len() + refused.len() == new.len() {
            break (served, refused);
        }
        assert!(tokio::time::Instant::now() < deadline, "served {served:?}, refused {refused:?}");
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    };
    assert_eq!(served.len(), 2, "exactly up to fs.max_files: {served:?}");
    assert_eq!(refused.len(), 4, "{refused:?}");
    assert!(served.iter().all(|s| !refused.contains(s)), "{served:?} {refused:?}");
    assert_eq!(srv.server.catalog().resources_under("file:", |uris| uris.count()), 5);
    srv.stop().await;
}

/// `list_dir` pages through a large directory: every entry once, in order.
#[actix_rt::test]
async fn list_dir_pages_through_a_large_directory() {
    let dir = TempDir::new("many");
    std::fs::create_dir_all(dir.0.join("many")).unwrap();
    for i in 0..250 {
        std::fs::write(dir.0.join(format!("many/f{i:03}.txt")), "x").unwrap();
    }
    let srv = start(&dir);
    let mut names = Vec::new();
    let mut cursor: Option<String> = None;
    for page in 0..10 {
        let mut args = json!({"path": "many"});
        if let Some(c) = &cursor {
            args["cursor"] = json!(c);
        }
        let r = post(&srv.url, &call(page, "list_dir", args)).await;
        let s = &r.response()["result"]["structuredContent"];
        names.extend(s["entries"].as_array().unwrap().iter().map(|e| e["name"].as_str().unwrap().to_owned()));
        cursor = s["nextCursor"].as_str().map(str::to_owned);
        if cursor.is_none() {
            break;
        }
    }
    let expected: Vec<String> = (0..250).map(|i| format!("f{i:03}.txt")).collect();
    assert_eq!(names, expected);
    srv.stop().await;
}

/// The next message of an events stream that is an occurrence.
async fn next_occurrence(stream: &mut SseReader) -> Value {
    loop {
        let message = stream.next().await.expect("the stream goes on");
        if message["method"] == "notifications/events/event" {
            return message["params"].clone();
        }
    }
}

#[actix_rt::test]
async fn file_changes_are_events_under_the_same_rules_as_the_resources() {
    let dir = TempDir::new("events");
    let srv = start(&dir);
    let open = |id: i64, arguments: Value| {
        let body = request(json!(id), "events/stream", json!({"name": "file.changed", "arguments": arguments}));
        let url = srv.url.clone();
        async move { SseReader::open(&url, &body).await }
    };
    let mut all = open(1, json!({})).await;
    let mut sub = open(2, json!({"under": "sub", "change": "created"})).await;
    for stream in [&mut all, &mut sub] {
        assert_eq!(stream.next().await.unwrap()["method"], "notifications/events/active");
    }
    // Excluded by the rules (target/): no resource, and no event.
    std::fs::write(dir.0.join("target/debug/more.log"), "excluded").unwrap();
    std::fs::write(dir.0.join("hello.txt"), "changed\n").unwrap();
    let changed = next_occurrence(&mut all).await;
    assert_eq!((&changed["data"]["change"], &changed["data"]["path"]), (&json!("changed"), &json!("hello.txt")));
    assert_eq!(changed["data"]["uri"], dir.uri("hello.txt"));
    assert!(changed["eventId"].as_str().unwrap().starts_with(&dir.uri("hello.txt")), "{changed}");
    std::fs::write(dir.0.join("sub/new.txt"), "new").unwrap();
    let created = next_occurrence(&mut all).await;
    assert_eq!((&created["data"]["change"], &created["data"]["path"]), (&json!("created"), &json!("sub/new.txt")));
    assert_eq!(next_occurrence(&mut sub).await["data"]["path"], "sub/new.txt", "the narrowed stream's first");
    std::fs::remove_file(dir.0.join("sub/new.txt")).unwrap();
    let removed = next_occurrence(&mut all).await;
    assert_eq!((&removed["data"]["change"], &removed["data"]["path"]), (&json!("removed"), &json!("sub/new.txt")));
    // Replay: a poll from before the edit finds the three, in order.
    let poll = json!({"name": "file.changed", "cursor": changed["cursor"], "maxAgeMs": 60_000});
    let replay = post(&srv.url, &request(json!(3), "events/poll", poll)).await;
    let events = replay.response()["result"]["events"].as_array().unwrap().clone();
    let kinds: Vec<_> = events.iter().map(|e| e["data"]["change"].clone()).collect();
    assert_eq!(kinds, [json!("created"), json!("removed")], "after the edit's cursor: {events:?}");
    srv.stop().await;
}

#[actix_rt::test]
async fn a_directory_moved_away_takes_its_files_with_it() {
    let dir = TempDir::new("moved");
    let srv = start(&dir);
    let body = request(json!(1), "events/stream", json!({"name": "file.changed", "arguments": {"under": "sub"}}));
    let mut sub = SseReader::open(&srv.url, &body).await;
    assert_eq!(sub.next().await.unwrap()["method"], "notifications/events/active");
    std::fs::rename(dir.0.join("sub"), dir.0.join("sub2")).unwrap();
    let removed = next_occurrence(&mut sub).await;
    assert_eq!((&removed["data"]["change"], &removed["data"]["path"]), (&json!("removed"), &json!("sub/data.json")));
    assert_eq!(removed["data"]["uri"], dir.uri("sub/data.json"));
    let files = listed(&srv.url).await;
    assert!(!files.iter().any(|n| n == "sub/data.json"), "gone from the list: {files:?}");
    // Moved into an excluded directory: gone the same way.
    std::fs::create_dir_all(dir.0.join("away")).unwrap();
    std::fs::write(dir.0.join("away/note.txt"), "n").unwrap();
    let before = control_file(&dir, &srv.url, "away-control.txt").await;
    assert!(before.iter().any(|n| n == "away/note.txt"), "{before:?}");
    std::fs::rename(dir.0.join("away"), dir.0.join("target/away")).unwrap();
    let every = std::time::Duration::from_millis(25);
    wait_for("a file moved into target/ leaves the list", std::time::Duration::from_secs(10), every, async || {
        let names = listed(&srv.url).await;
        if names.iter().any(|n| n == "away/note.txt") {
            Err(format!("{names:?}"))
        } else {
            Ok(())
        }
    })
    .await;
    srv.stop().await;
}
