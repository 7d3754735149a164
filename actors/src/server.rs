//! [`McpServer`]: the catalog, the configuration and the logger, with the
//! entry points of both transports and of embedding.
//!
//! ```no_run
//! use std::sync::Arc;
//! use actix_mcp::{catalog::Catalog, config::Config, logging, McpServer};
//!
//! # async fn run() -> std::io::Result<()> {
//! let server = McpServer::new(Arc::new(Catalog::new()), Config::default(), logging::discard());
//! let (http, addrs) = server.clone().bind_http()?;
//! eprintln!("listening on {:?}", addrs);
//! http.await
//! # }
//! ```

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use actix::Addr;
use actix_web::{App, HttpServer};
use tokio::sync::mpsc;

use crate::catalog::Catalog;
use crate::config::Config;
use crate::intake::Admitted;
use crate::outbound::Outbound;
use crate::request::{RequestActor, RequestSpec};
use crate::service::McpService;

/// An MCP server: cheap to clone, shared by every worker.
#[derive(Clone, Debug)]
pub struct McpServer {
    inner: Arc<Inner>,
}

#[derive(Debug)]
struct Inner {
    service: Arc<McpService>,
    config: Config,
    log: slog::Logger,
}

impl McpServer {
    /// A server for `catalog`.
    pub fn new(catalog: Arc<Catalog>, config: Config, log: slog::Logger) -> Self {
        let service = Arc::new(McpService::new(catalog, &config));
        McpServer { inner: Arc::new(Inner { service, config, log }) }
    }

    /// The configuration.
    pub fn config(&self) -> &Config {
        &self.inner.config
    }

    /// The catalog (add or remove items at runtime through it).
    pub fn catalog(&self) -> &Arc<Catalog> {
        self.inner.service.catalog()
    }

    /// The request semantics.
    pub fn service(&self) -> &Arc<McpService> {
        &self.inner.service
    }

    /// The root logger.
    pub fn logger(&self) -> &slog::Logger {
        &self.inner.log
    }

    /// Starts a request actor for an admitted request on the current arbiter.
    pub fn start_request(&self, admitted: Admitted, outlet: mpsc::Sender<Outbound>) -> Addr<RequestActor> {
        let c = &self.inner.config.request;
        let spec = RequestSpec {
            id: admitted.id,
            meta: admitted.meta,
            request: admitted.request,
            outlet,
            timeout: Duration::from_millis(c.timeout_ms),
            mailbox: c.mailbox,
        };
        RequestActor::start_with(self.inner.service.clone(), spec, &self.inner.log)
    }

    /// A function that registers the MCP endpoint on an actix-web `App`
    /// (`App::new().configure(server.http_config())`), for embedding.
    pub fn http_config(&self) -> impl Fn(&mut actix_web::web::ServiceConfig) + Clone {
        crate::transport::http::configure(self.clone())
    }

    /// Binds the HTTP server to `http.bind` and returns it (not yet awaited)
    /// with the bound addresses.
    pub fn bind_http(self) -> std::io::Result<(actix_web::dev::Server, Vec<SocketAddr>)> {
        let c = self.inner.config.http.clone();
        let config = self.http_config();
        let mut builder = HttpServer::new(move || App::new().configure(config.clone()))
            .shutdown_timeout(c.shutdown_timeout_secs)
            .bind(&c.bind)?;
        if c.workers > 0 {
            builder = builder.workers(c.workers);
        }
        let addrs = builder.addrs();
        Ok((builder.run(), addrs))
    }

    /// Serves over stdin/stdout until EOF.
    pub async fn serve_stdio(self) -> std::io::Result<()> {
        let input = tokio::io::BufReader::new(tokio::io::stdin());
        crate::transport::stdio::serve(self, input, tokio::io::stdout()).await
    }
}
