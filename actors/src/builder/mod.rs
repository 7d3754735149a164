//! [`McpServerBuilder`]: a server from a few lines — its name, its tools,
//! resources and prompts, shared state — built inside a running actix
//! system, or run as a program that starts its own.
//!
//! ```no_run
//! use actix_mcp::prelude::*;
//!
//! fn main() -> Result<(), BuildError> {
//!     McpServer::builder(server_info!())
//!         .tool(Tool::no_args("ping", "Answers pong", |_ctx| async { Ok("pong") }))
//!         .run_http("127.0.0.1:8080")
//! }
//! ```

pub mod runner;

use std::sync::Arc;

use mcp_protocol::model::discover::Implementation;
use slog::Logger;

use crate::catalog::{Catalog, Prompt, Resource, ResourceTemplate, Skill, Tool, View};
use crate::config::{Config, ConfigError, UpstreamConfig};
use crate::facts::clock::{Clock, SystemClock};
use crate::hub::HubBackend;
use crate::server::build_error::BuildError;
use crate::server::InCode;
use crate::server::McpServer;
use crate::telemetry::logging;
use runner::{RunError, Transport};

/// `serverInfo` naming the crate this macro is expanded in (its Cargo
/// package name and version): `McpServer::builder(server_info!())`.
#[macro_export]
macro_rules! server_info {
    () => {
        $crate::protocol::model::Implementation::new(env!("CARGO_PKG_NAME"), env!("CARGO_PKG_VERSION"))
    };
}

/// Builds an [`McpServer`]; see the [module](self) for an example.
/// Registration problems (a taken or invalid name) are collected and
/// reported by [`build`](McpServerBuilder::build) as one error.
#[must_use = "a builder does nothing until built or run"]
pub struct McpServerBuilder {
    info: Implementation,
    config: Config,
    /// `instructions()` set `server.instructions` (and no `config()` since).
    instructions_in_code: bool,
    catalog: Arc<Catalog>,
    problems: Vec<String>,
    log: Option<Logger>,
    backend: Option<Box<dyn HubBackend + Send>>,
    clock: Arc<dyn Clock>,
    authenticator: Option<Arc<dyn crate::auth::Authenticator>>,
    /// Upstreams added by [`McpServerBuilder::upstream`], after the
    /// configuration's own.
    upstreams: Vec<UpstreamConfig>,
}

impl std::fmt::Debug for McpServerBuilder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("McpServerBuilder")
            .field("info", &self.info)
            .field("catalog", &self.catalog)
            .field("problems", &self.problems)
            .finish()
    }
}

impl McpServer {
    /// A builder for a server that names itself `info` in `serverInfo`
    /// (use [`server_info!`](crate::server_info) for your crate's name and
    /// version).
    pub fn builder(info: Implementation) -> McpServerBuilder {
        McpServerBuilder {
            info,
            config: Config::default(),
            instructions_in_code: false,
            catalog: Arc::new(Catalog::new()),
            problems: Vec::new(),
            log: None,
            backend: None,
            clock: Arc::new(SystemClock),
            authenticator: None,
            upstreams: Vec::new(),
        }
    }
}

impl McpServerBuilder {
    /// Uses `config` (else the embedded defaults). A `server.name` set in it
    /// wins over the builder's `serverInfo`. A reload
    /// ([`McpServer::reload`]) reads the builder's name, instructions and
    /// upstreams into the reloaded configuration the same way.
    pub fn config(mut self, config: Config) -> Self {
        self.instructions_in_code = false;
        self.config = config;
        self
    }

    /// Reads the configuration from a TOML file, then the `ACTIX_MCP_*`
    /// environment overrides (as the `actix-mcp` binary does). A problem is
    /// reported by `build`.
    #[cfg(feature = "config-file")]
    #[cfg_attr(docsrs, doc(cfg(feature = "config-file")))]
    pub fn config_file(self, path: impl AsRef<std::path::Path>) -> Self {
        let loaded = Config::from_file(path.as_ref()).and_then(|mut c| {
            c.apply_env(Config::env_overrides())?;
            Ok(c)
        });
        match loaded {
            Ok(c) => self.config(c),
            Err(e) => self.problem(e.to_string()),
        }
    }

    /// Serves another MCP server's items through this one (a gateway
    /// upstream, as an `[[upstreams]]` entry of the configuration would):
    /// its tools and prompts as `PREFIX__name`, its resources under their
    /// own URIs. The builder starts every upstream — these and the
    /// configuration's — when it builds the server.
    ///
    /// An upstream given here is part of the program, not of its
    /// configuration: a reload ([`McpServer::reload`], SIGHUP through
    /// [`reload_on_hangup`](crate::server::reload_on_hangup)) keeps it
    /// running whatever the reloaded configuration lists, and refuses one
    /// that names an upstream of the same name (as `build` does).
    ///
    /// ```no_run
    /// use actix_mcp::config::UpstreamConfig;
    /// use actix_mcp::prelude::*;
    ///
    /// # fn main() -> Result<(), Box<dyn std::error::Error>> {
    /// let time = UpstreamConfig::parse_flag("time=uvx mcp-server-time")?;
    /// McpServer::builder(server_info!())
    ///     .tool(Tool::no_args("ping", "Answers pong", |_ctx| async { Ok("pong") }))
    ///     .upstream(time)
    ///     .run_http("127.0.0.1:8080")?;
    /// # Ok(())
    /// # }
    /// ```
    pub fn upstream(mut self, upstream: UpstreamConfig) -> Self {
        self.upstreams.push(upstream);
        self
    }

    /// Guidance for models, sent in `server/discover` (`instructions`).
    pub fn instructions(mut self, text: impl Into<String>) -> Self {
        self.config.server.instructions = text.into();
        self.instructions_in_code = true;
        self
    }

    /// Adds a tool (a taken or invalid name is reported by `build`).
    pub fn tool(self, tool: Tool) -> Self {
        let added = self.catalog.add_tool(tool);
        self.noted(added)
    }

    /// Adds a resource.
    pub fn resource(self, resource: Resource) -> Self {
        let added = self.catalog.add_resource(resource);
        self.noted(added)
    }

    /// Adds a resource template.
    pub fn template(self, template: ResourceTemplate) -> Self {
        let added = self.catalog.add_template(template);
        self.noted(added)
    }

    /// Adds a prompt.
    pub fn prompt(self, prompt: Prompt) -> Self {
        let added = self.catalog.add_prompt(prompt);
        self.noted(added)
    }

    /// Adds an MCP Apps view (a `ui://` HTML document hosts render next to
    /// the results of the tools linked to it with
    /// [`Tool::with_view`](crate::catalog::Tool::with_view)); the server
    /// declares the extension. A bad view, or a tool linked to a view the
    /// catalog does not have, is reported by `build`.
    pub fn view(self, view: View) -> Self {
        let added = self.catalog.add_view(view);
        self.noted(added)
    }

    /// Adds a skill (the Skills extension): its files are served as
    /// `skill://` resources, and the server declares the extension. A skill
    /// of embedded files:
    ///
    /// ```
    /// use actix_mcp::prelude::*;
    ///
    /// # fn main() -> Result<(), BuildError> {
    /// let builder = McpServer::builder(server_info!()).skill(Skill::from_files("weather", [
    ///     ("SKILL.md", "---\nname: weather\ndescription: Reads the forecast\n---\nCall `forecast`.\n"),
    /// ])?);
    /// # Ok(()) }
    /// ```
    pub fn skill(self, skill: Skill) -> Self {
        let added = self.catalog.add_skill(skill);
        self.noted(added)
    }

    /// Adds the skill in directory `dir` (read now, held in memory; see
    /// [`Skill::from_dir`]); a directory that is not a valid skill is
    /// reported by `build`. A relative `dir` is relative to the process's
    /// working directory, not to the source file: for a skill that ships
    /// with your crate, use `concat!(env!("CARGO_MANIFEST_DIR"), "/skills/report")`,
    /// or embed its files with [`Skill::from_files`] and `include_str!`. A
    /// whole tree of skills, watched and kept current, is the `fs` catalog's
    /// `fs.skills` directory (see the extensions guide).
    #[cfg(feature = "fs")]
    #[cfg_attr(docsrs, doc(cfg(feature = "fs")))]
    pub fn skill_dir(self, dir: impl AsRef<std::path::Path>) -> Self {
        match Skill::from_dir(dir) {
            Ok(skill) => self.skill(skill),
            Err(e) => self.problem(e.0),
        }
    }

    /// Shares `value` with every handler: `ctx.state::<S>()?` in a handler.
    pub fn state<S: Send + Sync + 'static>(self, value: S) -> Self {
        self.catalog.set_state(value);
        self
    }

    /// Serves `catalog` (one you keep, to change it at runtime) instead of
    /// the builder's own. Call it before adding items or state to the
    /// builder; afterwards it is reported as a problem by `build`.
    pub fn catalog(mut self, catalog: Arc<Catalog>) -> Self {
        if !self.catalog.is_empty() {
            return self
                .problem("catalog() must come before tool(), resource(), template(), prompt() and state()".into());
        }
        self.catalog = catalog;
        self
    }

    /// Logs to `log` (else a root logger from `log.*` of the configuration).
    pub fn logger(mut self, log: Logger) -> Self {
        self.log = Some(log);
        self
    }

    /// Carries hub events through `backend` (else the one `hub.backend` names).
    pub fn backend(mut self, backend: Box<dyn HubBackend + Send>) -> Self {
        self.backend = Some(backend);
        self
    }

    /// Authorizes HTTP requests with `authenticator` (your own, or an
    /// [`ApiKeyAuthenticator`](crate::auth::ApiKeyAuthenticator) built in
    /// code) instead of the one `auth.mode` names; the scopes and metadata
    /// of `[auth]` still apply.
    pub fn authenticator(mut self, authenticator: impl crate::auth::Authenticator) -> Self {
        self.authenticator = Some(Arc::new(authenticator));
        self
    }

    /// Reads token-expiry time from `clock` (tests: a [`ManualClock`](crate::facts::clock::ManualClock)).
    pub fn clock(mut self, clock: Arc<dyn Clock>) -> Self {
        self.clock = clock;
        self
    }

    fn problem(mut self, p: String) -> Self {
        self.problems.push(p);
        self
    }

    fn noted(self, r: Result<(), crate::catalog::CatalogError>) -> Self {
        match r {
            Ok(()) => self,
            Err(e) => self.problem(e.0),
        }
    }

    /// What was set in code rather than in the configuration: read into it
    /// at `build`, and into every reloaded configuration.
    fn in_code(&self) -> InCode {
        InCode {
            upstreams: self.upstreams.clone(),
            named: Some((self.info.name.clone(), self.info.version.clone())),
            instructions: self.instructions_in_code.then(|| self.config.server.instructions.clone()),
        }
    }

    /// The configuration the server is built with: the builder's, with what
    /// was set in code, validated.
    fn effective_config(&self) -> Result<Config, BuildError> {
        let config = self.in_code().apply(self.config.clone())?;
        config.validate()?;
        Ok(config)
    }

    /// Builds the server. Needs a running actix system (see
    /// [`BuildError::NoSystem`]); the `run_*` methods start one. Without a
    /// [`logger`](Self::logger), it logs as `log.*` says, each record's
    /// `service` the server's name.
    pub fn build(mut self) -> Result<McpServer, BuildError> {
        self.problems.extend(self.catalog.broken_view_links());
        if !self.problems.is_empty() {
            return Err(BuildError::Catalog(self.problems));
        }
        let in_code = self.in_code();
        self.config = self.effective_config()?;
        let log = match self.log {
            Some(l) => l,
            None => {
                let (log, guard) = logging::root_logger_for(&self.config.log, &self.config.server.name)?;
                // Without a guard the drain flushes when the logger itself is dropped.
                std::mem::forget(guard);
                log
            }
        };
        // Upstreams serve into the catalog; an upstream refused at its
        // first start (a URI another serves) is logged and shown as down.
        #[cfg(feature = "gateway")]
        let gateway = (!self.config.upstreams.is_empty())
            .then(|| crate::gateway::Gateway::start(&self.config, &self.catalog, &log));
        let backend = match self.backend {
            Some(backend) => backend,
            None => crate::server::backend_for(&self.config)?,
        };
        let server = McpServer::assemble(self.catalog, self.config, log, backend, self.clock)?.with_code(in_code)?;
        #[cfg(feature = "gateway")]
        let server = match gateway {
            Some(gateway) => server.with_gateway(gateway)?,
            None => server,
        };
        match self.authenticator {
            Some(a) => server.with_authenticator(a),
            None => Ok(server),
        }
    }

    /// Serves Streamable HTTP on `addr` (e.g. `"127.0.0.1:8080"`) until
    /// SIGINT/SIGTERM, in an actix system of its own; blocks.
    pub fn run_http(mut self, addr: &str) -> Result<(), BuildError> {
        self.config.http.bind = addr.to_owned();
        self.run_with(Transport::Http)
    }

    /// Serves stdin/stdout until EOF or SIGINT/SIGTERM, in an actix system of
    /// its own; then ends the process (see [`runner::run`]).
    pub fn run_stdio(self) -> Result<(), BuildError> {
        self.run_with(Transport::Stdio)
    }

    /// Serves what the command line asks: `--stdio`, or `--http ADDR`
    /// (default: `http.bind` of the configuration); `--help` prints the
    /// usage and returns, `--version` the server's name and version.
    pub fn run(self) -> Result<(), BuildError> {
        let args: Vec<String> = std::env::args().skip(1).collect();
        match args.iter().map(String::as_str).collect::<Vec<_>>().as_slice() {
            ["--stdio"] => self.run_stdio(),
            ["--http", addr] => self.run_http(addr),
            [] => {
                let addr = self.config.http.bind.clone();
                self.run_http(&addr)
            }
            ["--help" | "-h"] => {
                print!("{}", self.usage());
                Ok(())
            }
            ["--version" | "-V"] => {
                println!("{} {}", self.info.name, self.info.version);
                Ok(())
            }
            other => Err(BuildError::Config(ConfigError(format!(
                "unexpected arguments {}: expected --stdio, --http ADDR or --help",
                other.join(" ")
            )))),
        }
    }

    /// The usage `run()` prints for `--help`.
    fn usage(&self) -> String {
        format!(
            "{name} {version}: a Model Context Protocol server\n\n\
             Usage: {name} [--stdio | --http ADDR]\n\n\
             Options:\n  \
             --stdio        serve MCP on stdin/stdout\n  \
             --http ADDR    serve Streamable HTTP on ADDR (default {bind}), path {path}\n  \
             -h, --help     print this help\n  \
             -V, --version  print the version\n",
            name = self.info.name,
            version = self.info.version,
            bind = self.config.http.bind,
            path = self.config.http.path,
        )
    }

    fn run_with(self, transport: Transport) -> Result<(), BuildError> {
        if actix_rt::System::try_current().is_some() {
            return Err(BuildError::InSystem);
        }
        // Refused items and invalid settings are returned here, before the
        // runner takes over: a stdio run ends the process on any error.
        if !self.problems.is_empty() {
            return Err(BuildError::Catalog(self.problems));
        }
        // Log records name the server as it will be named.
        let service = self.effective_config()?.server.name;
        let (log_config, log) = (self.config.log.clone(), self.log.clone());
        // The runner hands back `log` when one was given.
        runner::run(&service, &log_config, log, transport, move |log| self.logger(log).build()).map_err(|e| match e {
            RunError::Make(e) => e,
            RunError::Logger(e) => BuildError::Config(e),
            RunError::Serve(e) => BuildError::Serve(e.to_string()),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// What names the server in `serverInfo` and in every log record's
    /// `service`: the configuration, else the builder's `serverInfo`.
    #[test]
    fn the_server_is_named_by_the_configuration_else_by_the_builder() {
        let info = Implementation::new("weather", "2.0.0");
        let c = McpServer::builder(info.clone()).instructions("Ask.").effective_config().unwrap();
        assert_eq!((c.server.name.as_str(), c.server.version.as_str()), ("weather", "2.0.0"));
        assert_eq!(c.server.instructions, "Ask.");
        let mut named = Config::default();
        named.server.name = "gw".into();
        assert_eq!(McpServer::builder(info).config(named).effective_config().unwrap().server.name, "gw");
    }
}
