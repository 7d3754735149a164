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
    /// Asks the master to stop its workers and exit (a killed master leaves
    /// its workers running), and waits for it a little.
    fn drop(&mut self) {
        if let Some(pid) = self.child.id() {
            let _ = std::process::Command::new("kill").args(["-TERM", &pid.to_string()]).status();
            for _ in 0..100 {
                if matches!(self.child.try_wait(), Ok(Some(_))) {
                    break;
                }
                std::thread::sleep(Duration::from_millis(20));
            }
        }
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}
