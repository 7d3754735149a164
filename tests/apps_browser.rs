//! MCP Apps in a real browser: headless Chromium loads a host page served by
//! this test, which connects to the server with the TypeScript MCP client,
//! reads a tool's view, renders it in a sandboxed iframe wired with the
//! official `AppBridge`, and calls the tool. The views then call tools
//! through the host: the everything catalog's counter raises its count with
//! an app-only tool, and the fs catalog's file browser lists, opens,
//! previews (app-only `preview_file`) and searches the served directory. A
//! screenshot of the file browser lands in `target/ts-client/`.
//!
//! npm packages install on first use (`tests/ts-client/install.sh`); without
//! node, npm or Chromium the test prints SKIP, unless external programs are
//! required.

use crate::common;

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use actix_web::{web, App, HttpRequest, HttpResponse, HttpServer};
use common::*;
use serde_json::{json, Value};

/// Serves the host page and its bundle, and forwards `/{name}/mcp` to the
/// MCP server of that name (one origin for the page and the servers, as a
/// host's backend would be); records the bodies it forwards.
async fn host_site(root: PathBuf, upstreams: Vec<(&'static str, String)>, seen: Arc<Mutex<Vec<String>>>) -> String {
    let port = free_port();
    let upstreams = Arc::new(upstreams);
    let server = HttpServer::new(move || {
        let (root, upstreams, seen) = (root.clone(), upstreams.clone(), seen.clone());
        App::new().default_service(web::to(move |req: HttpRequest, body: web::Bytes| {
            let (root, upstreams, seen) = (root.clone(), upstreams.clone(), seen.clone());
            async move {
                let path = req.path().to_owned();
                let file = |name: &str, kind: &str| match std::fs::read(root.join(name)) {
                    Ok(bytes) => HttpResponse::Ok().content_type(kind.to_owned()).body(bytes),
                    Err(e) => HttpResponse::NotFound().body(e.to_string()),
                };
                match path.as_str() {
                    "/host.html" => return file("host.html", "text/html; charset=utf-8"),
                    "/host.js" => return file("host.js", "text/javascript; charset=utf-8"),
                    "/favicon.ico" => return HttpResponse::NoContent().finish(),
                    _ => {}
                }
                let Some(upstream) = upstreams.iter().find(|(n, _)| path == format!("/{n}/mcp")).map(|u| u.1.clone())
                else {
                    return HttpResponse::NotFound().finish();
                };
                seen.lock().unwrap().push(String::from_utf8_lossy(&body).into_owned());
                let method = reqwest::Method::from_bytes(req.method().as_str().as_bytes()).unwrap();
                let mut out = reqwest::Client::new().request(method, upstream).body(body.to_vec());
                for (k, v) in req.headers() {
                    if !matches!(k.as_str(), "host" | "content-length" | "connection") {
                        out = out.header(k.as_str(), v.as_bytes());
                    }
                }
                let reply = match out.send().await {
                    Ok(r) => r,
                    Err(e) => return HttpResponse::BadGateway().body(e.to_string()),
                };
                let mut back =
                    HttpResponse::build(actix_web::http::StatusCode::from_u16(reply.status().as_u16()).unwrap());
                for (k, v) in reply.headers() {
                    if !matches!(k.as_str(), "content-length" | "transfer-encoding" | "connection") {
                        back.insert_header((k.as_str(), v.as_bytes()));
                    }
                }
                back.streaming(reply.bytes_stream())
            }
        }))
    })
    .workers(1)
    .bind(("127.0.0.1", port))
    .unwrap()
    .run();
    actix_rt::spawn(server);
    format!("http://127.0.0.1:{port}")
}

/// The repository's root.
fn root() -> std::path::PathBuf {
    std::path::PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/.."))
}

fn install(home: &Path) {
    let status = std::process::Command::new("bash")
        .arg(root().join("tests/ts-client/install.sh"))
        .env("ACTIX_MCP_TS_CLIENT_HOME", home)
        .status()
        .expect("run tests/ts-client/install.sh");
    assert!(status.success(), "tests/ts-client/install.sh failed");
    std::fs::copy(root().join("tests/ts-client/host.html"), home.join("host.html")).unwrap();
}

#[actix_rt::test]
async fn views_render_in_a_real_host_and_call_tools_through_it() {
    let test = "apps_browser::views_render_in_a_real_host_and_call_tools_through_it";
    let Some(programs) = external(test, &["node", "npm", "chromium"]) else { return };
    let home = root().join("target/ts-client");
    install(&home);

    let files = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(files.path().join("docs")).unwrap();
    std::fs::write(files.path().join("docs/notes.txt"), "remember the milk\n").unwrap();
    std::fs::write(files.path().join("docs/plan.md"), "# Plan\n\nBuy milk, then bread.\n").unwrap();
    std::fs::create_dir_all(files.path().join("src")).unwrap();
    std::fs::write(files.path().join("src/main.rs"), "fn main() {}\n").unwrap();
    std::fs::write(files.path().join("README.md"), "# A served directory\n").unwrap();
    let fs = actix_mcp::config::FsConfig { root: files.path().display().to_string(), ..Default::default() };
    let catalog = actix_mcp::catalogs::fs::build(&fs, &actix_mcp::telemetry::logging::discard()).unwrap();
    let fs_server = TestServer::start(catalog, test_config());
    let everything = TestServer::everything();
    let seen = Arc::new(Mutex::new(Vec::new()));
    let upstreams = vec![("fs", fs_server.url.clone()), ("everything", everything.url.clone())];
    let base = host_site(home.clone(), upstreams, seen.clone()).await;

    let screenshot = home.join("file-browser.png");
    let _ = std::fs::remove_file(&screenshot);
    let run = tokio::process::Command::new(&programs[0])
        .arg(home.join("drive.mjs"))
        .args([base.as_str(), screenshot.to_str().unwrap()])
        .env("CHROMIUM", &programs[2])
        .current_dir(&home)
        .output();
    let out = tokio::time::timeout(std::time::Duration::from_secs(120), run).await.expect("within 2 min").unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let line = stdout.lines().last().unwrap_or_default();
    let shown: Value = serde_json::from_str(line)
        .unwrap_or_else(|e| panic!("{e}: {stdout}\n{}", String::from_utf8_lossy(&out.stderr)));
    assert!(shown.get("error").is_none(), "{}", serde_json::to_string_pretty(&shown).unwrap());
    assert_eq!(shown["console"], json!([]), "the pages logged errors");

    // The counter view showed the tool's result, and its button's app-only
    // call reached the server: the count there went up by one.
    let (before, after) = (shown["counterShown"].as_str().unwrap(), shown["counterAfter"].as_str().unwrap());
    assert_eq!(after.parse::<u64>().unwrap(), before.parse::<u64>().unwrap() + 1);
    let r = post(&everything.url, &request(json!(1), "tools/call", json!({"name": "counter"}))).await;
    assert_eq!(r.response()["result"]["content"][0]["text"], format!("The count is {after}."));
    assert!(shown["counterTools"].as_str().unwrap().contains("counter_increment"), "listed to a host with views");

    // The file browser listed the served directory, opened docs/, previewed
    // a file through the app-only preview_file, and searched.
    assert_eq!(shown["rootListing"], json!(["README.md", "docs", "src"]));
    assert_eq!(shown["docsListing"], json!(["docs/notes.txt", "docs/plan.md"]));
    assert_eq!(shown["preview"], "remember the milk\n");
    assert_eq!(
        shown["matches"],
        json!(["docs/notes.txt:1: remember the milk", "docs/plan.md:3: Buy milk, then bread."])
    );
    assert_eq!(shown["status"], "2 matches for “milk”");
    let forwarded = seen.lock().unwrap().join("\n");
    for call in ["\"counter_increment\"", "\"preview_file\"", "\"search\""] {
        assert!(forwarded.contains(call), "{call} never reached a server");
    }
    let png = std::fs::read(&screenshot).expect("a screenshot");
    assert_eq!(&png[..8], b"\x89PNG\r\n\x1a\n");
    fs_server.stop().await;
    everything.stop().await;
}
