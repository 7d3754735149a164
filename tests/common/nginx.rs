//! Programs the cluster and authorization tests run beside the server:
//! nginx as a round-robin load balancer, started quietly on loopback.

use std::process::Stdio;
use std::time::Duration;

use super::{free_port, program};

/// `binary` with `args`, its output discarded, killed when dropped.
pub fn quiet(binary: &str, args: &[&str]) -> tokio::process::Command {
    let mut cmd = tokio::process::Command::new(program(binary));
    cmd.args(args).stdout(Stdio::null()).stderr(Stdio::null()).kill_on_drop(true);
    cmd
}

/// Waits until something listens on the loopback `port` (fails after 10 s).
pub async fn wait_for_port(port: u16, what: &str) {
    let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
    while tokio::net::TcpStream::connect(("127.0.0.1", port)).await.is_err() {
        assert!(tokio::time::Instant::now() < deadline, "{what} did not listen on {port}");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// nginx balancing `/mcp` (and the well-known paths) round robin over upstreams.
pub struct Nginx {
    child: tokio::process::Child,
    /// The balanced MCP endpoint.
    pub url: String,
    /// Its configuration, logs and temporary files (removed once it stopped).
    dir: std::path::PathBuf,
}

impl Nginx {
    /// Starts nginx over `upstreams` (`HOST:PORT` each).
    pub async fn start(upstreams: &[&str]) -> Self {
        Self::start_with(upstreams, "", "http://mcp").await
    }

    /// Starts nginx that sends `tasks/*` by their `Mcp-Name` to the
    /// instance whose `tasks.id_prefix` begins the task id, as
    /// `config/nginx.conf` describes; `routes` pairs a prefix with its
    /// instance (`HOST:PORT`), and everything else goes round robin.
    pub async fn start_routing_tasks(routes: &[(&str, &str)]) -> Self {
        let upstreams: Vec<&str> = routes.iter().map(|(_, u)| *u).collect();
        let mut http = String::from(" map $http_mcp_name $mcp_upstream {\n");
        for (prefix, _) in routes {
            http.push_str(&format!("  ~^{prefix}\\. mcp_{prefix};\n"));
        }
        http.push_str("  default mcp;\n }\n");
        for (prefix, upstream) in routes {
            http.push_str(&format!(" upstream mcp_{prefix} {{ server {upstream}; keepalive 4; }}\n"));
        }
        Self::start_with(&upstreams, &http, "http://$mcp_upstream").await
    }

    /// nginx with `http` added to its http block, proxying to `target`.
    async fn start_with(upstreams: &[&str], http: &str, target: &str) -> Self {
        let port = free_port();
        let dir = std::env::temp_dir().join(format!("actix-mcp-nginx-{}-{port}", std::process::id()));
        std::fs::create_dir_all(dir.join("logs")).unwrap();
        let servers: String = upstreams.iter().map(|u| format!("server {u};\n")).collect();
        let conf = format!(
            "worker_processes 1;\nerror_log {d}/logs/error.log;\npid {d}/nginx.pid;\nevents {{}}\n\
             http {{\n access_log off;\n client_body_temp_path {d}/body;\n proxy_temp_path {d}/proxy;\n\
             fastcgi_temp_path {d}/fastcgi;\n uwsgi_temp_path {d}/uwsgi;\n scgi_temp_path {d}/scgi;\n\
             upstream mcp {{\n{servers} keepalive 16;\n}}\n{http} server {{\n listen 127.0.0.1:{port};\n\
             location / {{\n proxy_pass {target};\n proxy_http_version 1.1;\n proxy_set_header Connection \"\";\n\
             proxy_set_header Host $host;\n proxy_buffering off;\n proxy_cache off;\n proxy_read_timeout 1h;\n }}\n }}\n}}\n",
            d = dir.display()
        );
        std::fs::write(dir.join("nginx.conf"), conf).unwrap();
        let child = quiet(
            "nginx",
            &["-p", dir.to_str().unwrap(), "-c", dir.join("nginx.conf").to_str().unwrap(), "-g", "daemon off;"],
        )
        .spawn()
        .expect("nginx starts");
        wait_for_port(port, "nginx").await;
        Nginx { child, url: format!("http://127.0.0.1:{port}/mcp"), dir }
    }
}

impl Drop for Nginx {
    fn drop(&mut self) {
        stop(&mut self.child, &self.dir);
    }
}

/// Asks an nginx master to stop its workers and exit (a killed master
/// leaves its workers running), waits for it a little, and removes `dir`.
fn stop(child: &mut tokio::process::Child, dir: &std::path::Path) {
    if let Some(pid) = child.id() {
        let _ = std::process::Command::new("kill").args(["-TERM", &pid.to_string()]).status();
        for _ in 0..100 {
            if matches!(child.try_wait(), Ok(Some(_))) {
                break;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }
    let _ = std::fs::remove_dir_all(dir);
}

/// nginx run as the shipped `config/nginx.conf` says — unprivileged, under
/// a prefix of its own — with only its ports replaced: the balancer's, and
/// the instances' (an instance that is not `up` is marked `down`, out of
/// rotation, as an operator or an ingress controller does).
pub struct ShippedNginx {
    child: tokio::process::Child,
    /// Its prefix: pid file, logs and temporary files.
    pub prefix: std::path::PathBuf,
    /// The port it listens on (loopback).
    pub port: u16,
}

impl ShippedNginx {
    /// Starts nginx in front of `upstreams` (port, up).
    pub async fn start(upstreams: &[(u16, bool)]) -> Self {
        let port = free_port();
        let prefix = std::env::temp_dir().join(format!("actix-mcp-shipped-nginx-{}-{port}", std::process::id()));
        std::fs::create_dir_all(prefix.join("logs")).unwrap();
        write_shipped_config(&prefix, port, upstreams);
        let mut args = shipped_args(&prefix);
        args.extend(["-g".to_string(), "daemon off;".to_string()]);
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let child = quiet("nginx", &args).spawn().expect("nginx starts");
        wait_for_port(port, "nginx").await;
        ShippedNginx { child, prefix, port }
    }

    /// The balanced MCP endpoint.
    pub fn url(&self, path: &str) -> String {
        format!("http://127.0.0.1:{}{path}", self.port)
    }

    /// The process id of its master.
    pub fn pid(&self) -> Option<u32> {
        self.child.id()
    }

    /// Rewrites the instances and reloads nginx gracefully (`-s reload`,
    /// which finds the master through the pid file in the prefix).
    pub fn reload(&self, upstreams: &[(u16, bool)]) {
        write_shipped_config(&self.prefix, self.port, upstreams);
        let mut args = shipped_args(&self.prefix);
        args.extend(["-s".to_string(), "reload".to_string()]);
        let status = std::process::Command::new(program("nginx")).args(&args).status().unwrap();
        assert!(status.success(), "nginx -s reload");
    }

    /// Its access log so far.
    pub fn access_log(&self) -> String {
        std::fs::read_to_string(self.prefix.join("logs/access.log")).unwrap_or_default()
    }
}

impl Drop for ShippedNginx {
    fn drop(&mut self) {
        stop(&mut self.child, &self.prefix);
    }
}

/// `-p PREFIX -c CONF -e logs/error.log`, as config/nginx.conf says.
fn shipped_args(prefix: &std::path::Path) -> Vec<String> {
    let conf = prefix.join("nginx.conf");
    ["-p", prefix.to_str().unwrap(), "-c", conf.to_str().unwrap(), "-e", "logs/error.log"].map(str::to_owned).to_vec()
}

/// Writes the shipped configuration into `prefix`, listening on `port`
/// and balancing over `upstreams` (port, up).
fn write_shipped_config(prefix: &std::path::Path, port: u16, upstreams: &[(u16, bool)]) {
    let shipped = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../config/nginx.conf")).unwrap();
    let listen = "listen 127.0.0.1:8080;";
    assert!(shipped.contains(listen), "config/nginx.conf listens on 127.0.0.1:8080");
    let servers: String = upstreams
        .iter()
        .map(|(p, up)| {
            format!("        server 127.0.0.1:{p} max_fails=1 fail_timeout=5s{};\n", if *up { "" } else { " down" })
        })
        .collect();
    let mut out = String::new();
    let mut replaced = 0;
    for line in shipped.replace(listen, &format!("listen 127.0.0.1:{port};")).lines() {
        if line.trim_start().starts_with("server 127.0.0.1:808") {
            if replaced == 0 {
                out.push_str(&servers);
            }
            replaced += 1;
        } else {
            out.push_str(line);
            out.push('\n');
        }
    }
    assert_eq!(replaced, 2, "config/nginx.conf names two instances");
    std::fs::write(prefix.join("nginx.conf"), out).unwrap();
}
