//! The Skills extension over real loopback HTTP: an `fs` catalog serving a
//! skills directory (nested skills, refusals, digests kept true by the
//! watcher, directory reads in pages, the jail), in both eras, and a server
//! without skills that does not declare the extension.

use crate::common;

use std::path::{Path, PathBuf};

use actix_mcp::config::FsConfig;
use common::*;
use serde_json::{json, Value};
use sha2::Digest;

struct Root(PathBuf);

impl Root {
    fn new(name: &str) -> Self {
        let p = std::env::temp_dir().join(format!("actix-mcp-skills-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&p);
        let write = |rel: &str, text: &str| {
            let path = p.join(rel);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(path, text).unwrap();
        };
        write(
            "skills/acme/report/SKILL.md",
            "---\nname: report\ndescription: Writes the weekly report\nlicense: MIT\n---\nSee ref/a.txt.\n",
        );
        write("skills/acme/report/ref/a.txt", "first\n");
        write("skills/acme/report/draft/SKILL.md", "---\nname: draft\ndescription: Drafts a section\n---\n");
        write("skills/acme/report/target/build.log", "excluded by fs.exclude");
        // Refused: the name is not the directory's; a file over the size cap.
        write("skills/misnamed/SKILL.md", "---\nname: other\ndescription: Wrong name\n---\n");
        write("skills/heavy/SKILL.md", "---\nname: heavy\ndescription: Too big\n---\n");
        write("skills/heavy/blob.txt", &"x".repeat(5000));
        write("secret.txt", "outside the skills directory");
        Root(p.canonicalize().unwrap())
    }
}

impl Drop for Root {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn start(root: &Path) -> TestServer {
    let fs = FsConfig { root: root.display().to_string(), max_file_bytes: 4096, ..FsConfig::default() };
    let catalog = actix_mcp::catalogs::fs::build(&fs, &actix_mcp::telemetry::logging::discard()).unwrap();
    let mut config = test_config();
    config.server.page_size = 2;
    TestServer::start(catalog, config)
}

fn sha256(bytes: &[u8]) -> String {
    let hex: String = sha2::Sha256::digest(bytes).iter().map(|b| format!("{b:02x}")).collect();
    format!("sha256:{hex}")
}

async fn result(url: &str, method: &str, params: Value) -> Value {
    let r = post(url, &request(json!(1), method, params)).await;
    r.response().get("result").cloned().unwrap_or_else(|| panic!("{method}: {}", r.raw))
}

async fn all_skills(url: &str) -> Vec<Value> {
    let (mut out, mut cursor) = (Vec::new(), None::<String>);
    loop {
        let params = cursor.as_ref().map_or(json!({}), |c| json!({"cursor": c}));
        let page = result(url, "skills/list", params).await;
        assert!(page["ttlMs"].is_u64() && page["cacheScope"].is_string(), "{page}");
        out.extend(page["skills"].as_array().unwrap().iter().cloned());
        match page["nextCursor"].as_str() {
            Some(c) => cursor = Some(c.to_owned()),
            None => return out,
        }
    }
}

#[actix_rt::test]
async fn a_skills_directory_is_served_with_digests_of_the_bytes_read() {
    let root = Root::new("served");
    let srv = start(&root.0);
    let discover = result(&srv.url, "server/discover", json!({})).await;
    assert_eq!(
        discover["capabilities"]["extensions"]["io.modelcontextprotocol/skills"],
        json!({"directoryRead": true})
    );

    // Two skills (the nested one too), in pages of whole entries; the
    // misnamed and the oversized skills are not served.
    let skills = all_skills(&srv.url).await;
    let uris: Vec<&str> = skills.iter().map(|s| s["uri"].as_str().unwrap()).collect();
    assert_eq!(uris, ["skill://acme/report/SKILL.md", "skill://acme/report/draft/SKILL.md"]);
    let report = &skills[0];
    assert_eq!(
        report["frontmatter"],
        json!({"name": "report", "description": "Writes the weekly report", "license": "MIT"})
    );
    let files: Vec<&str> = report["resources"].as_array().unwrap().iter().map(|r| r["uri"].as_str().unwrap()).collect();
    assert_eq!(
        files,
        ["skill://acme/report/SKILL.md", "skill://acme/report/draft/SKILL.md", "skill://acme/report/ref/a.txt"],
        "every served file of the skill, nested skills' included, fs.exclude applied"
    );
    for file in report["resources"].as_array().unwrap() {
        let read = result(&srv.url, "resources/read", json!({"uri": file["uri"]})).await;
        let text = read["contents"][0]["text"].as_str().unwrap();
        assert_eq!(file["digest"], sha256(text.as_bytes()), "{}", file["uri"]);
        assert_eq!(file["size"], text.len());
    }
    // The manifest resource is listed with the frontmatter's name and description.
    let md = result(&srv.url, "resources/read", json!({"uri": "skill://acme/report/SKILL.md"})).await;
    assert_eq!(md["contents"][0]["mimeType"], "text/markdown");

    // skills/get answers for a served skill, -32602 otherwise.
    let got = result(&srv.url, "skills/get", json!({"uri": "skill://acme/report/draft/SKILL.md"})).await;
    assert_eq!(got["skill"], skills[1]);
    assert!(got.get("nextCursor").is_none());
    for unknown in ["skill://misnamed/SKILL.md", "skill://heavy/SKILL.md", "skill://acme/../../secret.txt"] {
        let r = post(&srv.url, &request(json!(2), "skills/get", json!({"uri": unknown}))).await;
        assert_eq!(r.error_code(), Some(-32602), "{unknown}: {}", r.raw);
    }
    srv.stop().await;
}

#[actix_rt::test]
async fn directories_page_and_nothing_escapes_the_root() {
    let root = Root::new("directories");
    let srv = start(&root.0);
    let url = srv.url.clone();
    let read = |uri: &str, cursor: Option<&str>| {
        let params = match cursor {
            Some(c) => json!({"uri": uri, "cursor": c}),
            None => json!({"uri": uri}),
        };
        let (url, body) = (url.clone(), request(json!(1), "resources/directory/read", params));
        async move { post(&url, &body).await }
    };
    let top = read("skill://acme", None).await;
    assert_eq!(
        top.response()["result"]["resources"],
        json!([{"uri": "skill://acme/report", "name": "report",
        "mimeType": "inode/directory"}])
    );
    // Page size 2: SKILL.md and draft, then ref.
    let first = read("skill://acme/report", None).await.response()["result"].clone();
    let names: Vec<&str> = first["resources"].as_array().unwrap().iter().map(|r| r["uri"].as_str().unwrap()).collect();
    assert_eq!(names, ["skill://acme/report/SKILL.md", "skill://acme/report/draft"]);
    let second = read("skill://acme/report", first["nextCursor"].as_str()).await.response()["result"].clone();
    assert_eq!(second["resources"][0]["uri"], "skill://acme/report/ref");
    assert_eq!(second["resources"][0]["mimeType"], "inode/directory");
    assert!(second.get("nextCursor").is_none());

    for bad in
        ["skill://acme/report/SKILL.md", "skill://acme/report/..", "skill://acme/../..", "skill://heavy", "file:///"]
    {
        let r = read(bad, None).await;
        assert_eq!(r.error_code(), Some(-32602), "{bad}: {}", r.raw);
    }
    // A skill URI that climbs out names no resource.
    let r =
        post(&srv.url, &request(json!(3), "resources/read", json!({"uri": "skill://acme/report/../../../secret.txt"})))
            .await;
    assert!(r.error_code().is_some(), "{}", r.raw);
    assert!(!r.raw.contains("outside the skills directory"));
    srv.stop().await;
}

#[actix_rt::test]
async fn a_changed_file_changes_its_digest_and_is_announced() {
    let root = Root::new("watch");
    let srv = start(&root.0);
    let uri = "skill://acme/report/ref/a.txt";
    let body = request(
        json!(9),
        "subscriptions/listen",
        json!({"notifications": {"resourceSubscriptions": [uri],
        "resourcesListChanged": true}}),
    );
    let mut stream = SseReader::open(&srv.url, &body).await;
    assert_eq!(stream.next().await.unwrap()["method"], "notifications/subscriptions/acknowledged");

    let digest_of = |skill: &Value| -> Value {
        skill["resources"].as_array().unwrap().iter().find(|r| r["uri"] == uri).unwrap()["digest"].clone()
    };
    let before = result(&srv.url, "skills/get", json!({"uri": "skill://acme/report/SKILL.md"})).await;
    std::fs::write(root.0.join("skills/acme/report/ref/a.txt"), "second version\n").unwrap();
    let m = stream.next().await.unwrap();
    assert_eq!(m["method"], "notifications/resources/updated", "{m}");
    assert_eq!(m["params"]["uri"], uri);
    let after = result(&srv.url, "skills/get", json!({"uri": "skill://acme/report/SKILL.md"})).await;
    assert_ne!(digest_of(&before["skill"]), digest_of(&after["skill"]));
    assert_eq!(digest_of(&after["skill"]), sha256(b"second version\n"));

    // A new file joins its skill: list_changed, and the entry lists it.
    std::fs::write(root.0.join("skills/acme/report/ref/b.txt"), "b").unwrap();
    let m = stream.next().await.unwrap();
    assert_eq!(m["method"], "notifications/resources/list_changed", "{m}");
    let skill = result(&srv.url, "skills/get", json!({"uri": "skill://acme/report/SKILL.md"})).await;
    assert!(skill["skill"]["resources"]
        .as_array()
        .unwrap()
        .iter()
        .any(|r| r["uri"] == "skill://acme/report/ref/b.txt"));

    // A fixed frontmatter brings a refused skill in.
    std::fs::write(root.0.join("skills/misnamed/SKILL.md"), "---\nname: misnamed\ndescription: Fixed\n---\n").unwrap();
    let mut served = false;
    for _ in 0..100 {
        if all_skills(&srv.url).await.iter().any(|s| s["uri"] == "skill://misnamed/SKILL.md") {
            served = true;
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
    assert!(served, "the skill whose frontmatter was fixed is served");
    srv.stop().await;
}

/// A skill made while the server runs is served by the time its
/// `list_changed` arrives, and its new directory is watched: a file added
/// to it later joins its entry.
#[actix_rt::test]
async fn a_skill_made_while_running_is_served_and_watched() {
    let root = Root::new("fresh");
    let srv = start(&root.0);
    let body = request(json!(9), "subscriptions/listen", json!({"notifications": {"resourcesListChanged": true}}));
    let mut stream = SseReader::open(&srv.url, &body).await;
    assert_eq!(stream.next().await.unwrap()["method"], "notifications/subscriptions/acknowledged");

    std::fs::create_dir_all(root.0.join("skills/fresh")).unwrap();
    std::fs::write(root.0.join("skills/fresh/SKILL.md"), "---\nname: fresh\ndescription: Made later\n---\n").unwrap();
    let m = stream.next().await.unwrap();
    assert_eq!(m["method"], "notifications/resources/list_changed", "{m}");
    let skills = all_skills(&srv.url).await;
    assert!(skills.iter().any(|s| s["uri"] == "skill://fresh/SKILL.md"), "{skills:?}");

    // Let the rest of that change's announcements pass, then add a file.
    while stream.next_within(std::time::Duration::from_millis(500)).await.is_some() {}
    std::fs::write(root.0.join("skills/fresh/notes.txt"), "notes").unwrap();
    let m = stream.next().await.unwrap();
    assert_eq!(m["method"], "notifications/resources/list_changed", "{m}");
    let skill = result(&srv.url, "skills/get", json!({"uri": "skill://fresh/SKILL.md"})).await;
    let files: Vec<&Value> = skill["skill"]["resources"].as_array().unwrap().iter().map(|r| &r["uri"]).collect();
    assert!(files.contains(&&json!("skill://fresh/notes.txt")), "{files:?}");
    srv.stop().await;
}

#[actix_rt::test]
async fn legacy_sessions_get_skills_without_caching_fields() {
    let root = Root::new("legacy");
    let srv = start(&root.0);
    let init = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {"protocolVersion": "2025-11-25",
        "capabilities": {}, "clientInfo": {"name": "legacy", "version": "1"}}});
    let r = legacy_post(&srv.url, None, &init).await;
    assert_eq!(
        r.response()["result"]["capabilities"]["extensions"]["io.modelcontextprotocol/skills"]["directoryRead"],
        true
    );
    let sid = r.headers["mcp-session-id"].to_str().unwrap().to_string();
    let list = json!({"jsonrpc": "2.0", "id": 1, "method": "skills/list", "params": {}});
    let r = legacy_post(&srv.url, Some(&sid), &list).await;
    let result = &r.response()["result"];
    assert_eq!(result["skills"][0]["uri"], "skill://acme/report/SKILL.md", "{}", r.raw);
    assert!(result.get("ttlMs").is_none() && result.get("cacheScope").is_none(), "{result}");
    srv.stop().await;
}

#[actix_rt::test]
async fn a_server_without_skills_does_not_declare_the_extension() {
    let root = Root::new("none");
    let fs = FsConfig { root: root.0.display().to_string(), skills: String::new(), ..FsConfig::default() };
    let catalog = actix_mcp::catalogs::fs::build(&fs, &actix_mcp::telemetry::logging::discard()).unwrap();
    let srv = TestServer::start(catalog, test_config());
    let discover = result(&srv.url, "server/discover", json!({})).await;
    assert!(discover["capabilities"]["extensions"].get("io.modelcontextprotocol/skills").is_none(), "{discover}");
    for method in ["skills/list", "resources/directory/read"] {
        let r = post(&srv.url, &request(json!(1), method, json!({"uri": "skill://acme"}))).await;
        assert_eq!(r.error_code(), Some(-32601), "{method}: {}", r.raw);
    }
    srv.stop().await;
}

/// The official TypeScript client's `SkillsClient` lists the served
/// skills, reads every file and verifies it against its entry (size,
/// digest, and a `SKILL.md`'s frontmatter), gets a skill and reads a
/// directory. npm packages install on first use (`tests/ts-client/install.sh`).
#[actix_rt::test]
async fn the_typescript_skills_client_verifies_every_file() {
    let test = "skills::the_typescript_skills_client_verifies_every_file";
    let Some(programs) = external(test, &["node", "npm"]) else { return };
    let root = std::path::PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/.."));
    let home = root.join("target/ts-client");
    let status = std::process::Command::new("bash")
        .arg(root.join("tests/ts-client/install.sh"))
        .env("ACTIX_MCP_TS_CLIENT_HOME", &home)
        .status()
        .expect("run tests/ts-client/install.sh");
    assert!(status.success(), "tests/ts-client/install.sh failed");
    let root = Root::new("ts-client");
    let srv = start(&root.0);
    // A legacy session (initialize), then the stateless revision.
    for (version, era) in [(None, "2025-11-25"), (Some("2026-07-28"), "2026-07-28")] {
        let run = tokio::process::Command::new(&programs[0])
            .arg(home.join("skills.mjs"))
            .args([srv.url.as_str(), "skill://acme/report"])
            .args(version)
            .current_dir(&home)
            .output();
        let out = tokio::time::timeout(std::time::Duration::from_secs(60), run).await.expect("within 60 s").unwrap();
        let stdout = String::from_utf8_lossy(&out.stdout);
        let seen: Value = serde_json::from_str(stdout.lines().last().unwrap_or_default())
            .unwrap_or_else(|e| panic!("{e}: {stdout}\n{}", String::from_utf8_lossy(&out.stderr)));
        assert!(seen.get("error").is_none(), "{seen}");
        assert_eq!(seen["version"], era, "{seen}");
        assert_eq!((seen["supported"].clone(), seen["directoryRead"].clone()), (json!(true), json!(true)), "{seen}");
        assert_eq!(seen["skills"], json!(["skill://acme/report/SKILL.md", "skill://acme/report/draft/SKILL.md"]));
        assert_eq!(seen["invalid"], 0);
        // Keyed by URI: the nested SKILL.md belongs to both skills.
        let files = seen["files"].as_object().unwrap();
        assert_eq!(files.len(), 3, "{seen}");
        assert!(files.values().all(|f| f["verified"] == true), "{seen}");
        assert_eq!(files["skill://acme/report/SKILL.md"]["frontmatter"]["license"], "MIT");
        // Caching fields exist from 2026-07-28 on.
        let cached = era == "2026-07-28";
        assert_eq!(seen["got"], json!({"uri": "skill://acme/report/SKILL.md", "cached": cached}));
        assert_eq!(
            seen["directory"],
            json!([
                ["skill://acme/report/SKILL.md", "text/markdown"],
                ["skill://acme/report/draft", "inode/directory"],
                ["skill://acme/report/ref", "inode/directory"]
            ])
        );
    }
    srv.stop().await;
}

/// Records the `dir` and `reason` of every "a skill is not served" line.
struct Refusals(std::sync::Arc<std::sync::Mutex<Vec<(String, String)>>>);

impl slog::Drain for Refusals {
    type Ok = ();
    type Err = slog::Never;

    fn log(&self, record: &slog::Record<'_>, _: &slog::OwnedKVList) -> Result<(), slog::Never> {
        #[derive(Default)]
        struct Fields(String, String);
        impl slog::Serializer for Fields {
            fn emit_arguments(&mut self, key: slog::Key, val: &std::fmt::Arguments<'_>) -> slog::Result {
                match key {
                    "dir" => self.0 = val.to_string(),
                    "reason" => self.1 = val.to_string(),
                    _ => {}
                }
                Ok(())
            }
        }
        if record.msg().to_string() == "a skill is not served" {
            let mut f = Fields::default();
            slog::KV::serialize(&record.kv(), record, &mut f).ok();
            self.0.lock().unwrap().push((f.0, f.1));
        }
        Ok(())
    }
}

/// A refused skill is logged with its reason, once: later rescans (any
/// change under the directory) do not repeat it.
#[actix_rt::test]
async fn refused_skills_are_logged_once_with_their_reason() {
    let root = Root::new("refusals");
    let seen = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
    let log = slog::Logger::root(slog::Drain::fuse(Refusals(seen.clone())), slog::o!());
    let fs = FsConfig { root: root.0.display().to_string(), max_file_bytes: 4096, ..FsConfig::default() };
    let catalog = actix_mcp::catalogs::fs::build(&fs, &log).unwrap();
    let mut refused = seen.lock().unwrap().clone();
    refused.sort();
    assert_eq!(refused.len(), 2, "{refused:?}");
    assert!(refused[0].0.ends_with("skills/heavy") && refused[0].1.contains("blob.txt"), "{refused:?}");
    assert!(refused[1].0.ends_with("skills/misnamed") && refused[1].1.contains("last segment"), "{refused:?}");
    // A change elsewhere in the directory rescans it; nothing new is logged.
    std::fs::write(root.0.join("skills/acme/report/ref/a.txt"), "again\n").unwrap();
    let srv = TestServer::start(catalog, test_config());
    let mut changed = false;
    for _ in 0..100 {
        let skill = result(&srv.url, "skills/get", json!({"uri": "skill://acme/report/SKILL.md"})).await;
        if skill.to_string().contains(&sha256(b"again\n")) {
            changed = true;
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
    assert!(changed, "the rescan ran");
    assert_eq!(seen.lock().unwrap().len(), 2, "{:?}", seen.lock().unwrap());
    srv.stop().await;
}
