//! The command line: `actix-mcp [serve] [--config FILE] [--bind ADDR:PORT]
//! [--catalog NAME]` and `actix-mcp stdio [--config FILE] [--catalog NAME]`.

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand};

use crate::config::{Config, ConfigError};

/// Stateless MCP (2026-07-28) server on actix.
#[derive(Debug, Parser)]
// The options before any command are `serve`'s; each command takes its own
// (`actix-mcp stdio --config FILE`), so that its `--help` lists only those.
#[command(name = "actix-mcp", version, about, long_about = None, args_conflicts_with_subcommands = true)]
pub struct Cli {
    /// What to run (default: `serve`).
    #[command(subcommand)]
    pub command: Option<Command>,
    /// Options of the default `serve` command.
    #[command(flatten)]
    pub serve: ServeArgs,
}

/// Subcommands.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Serve Streamable HTTP (the default). Prints `listening on http://ADDR/PATH` on stderr.
    Serve(ServeArgs),
    /// Serve newline-delimited JSON-RPC on stdin/stdout (logs go to stderr).
    Stdio(CommonArgs),
    /// Talk to any MCP server (HTTP URL or `--stdio CMD`) and print its answers as JSON.
    #[cfg(feature = "client")]
    Client(crate::client::cli::ClientArgs),
    /// Work with the audit log (`[audit]`).
    #[command(subcommand)]
    Audit(AuditCommand),
    /// Work with the gateway's pinned upstream definitions (`gateway.pins`).
    #[cfg(feature = "gateway")]
    #[command(subcommand)]
    Gateway(GatewayCommand),
}

/// `actix-mcp gateway …`.
#[cfg(feature = "gateway")]
#[derive(Debug, Subcommand)]
pub enum GatewayCommand {
    /// Approve upstream definitions that changed since they were pinned:
    /// the ones seen become the pins (served after a reload, SIGHUP, or a restart).
    Approve {
        /// The pins file (`gateway.pins`).
        #[arg(long, value_name = "FILE")]
        pins: PathBuf,
        /// Every waiting definition of this upstream.
        #[arg(long, value_name = "UPSTREAM", conflicts_with = "item")]
        all: Option<String>,
        /// `UPSTREAM/NAME`: the upstream's own name (or URI) of the item.
        #[arg(value_name = "UPSTREAM/NAME", required_unless_present = "all")]
        item: Option<String>,
    },
}

/// `actix-mcp audit …`.
#[derive(Debug, Subcommand)]
pub enum AuditCommand {
    /// Check the chain of an audit log: prints `N records intact` and the
    /// head (exit 0), or names the line where the chain first breaks
    /// (exit 1). Give rotated files first, oldest first (`FILE.SEQ` by SEQ),
    /// the live file last. The first record must be seq 1, unless `--after`
    /// names the head the files continue.
    Verify {
        /// The files continue a log after this head (`SEQ:SHA256`: a
        /// record's seq and the SHA-256 of its line, as `audit verify`
        /// printed it or the server logged it), not from its start.
        #[arg(long, value_name = "SEQ:SHA256")]
        after: Option<String>,
        /// The log's files, in order.
        #[arg(required = true, value_name = "FILE")]
        files: Vec<PathBuf>,
    },
}

/// Options of the commands that serve (`serve`, `stdio`).
#[derive(Debug, Clone, Default, Args)]
pub struct CommonArgs {
    /// TOML configuration file (defaults: config/default.toml, built in).
    #[arg(long, value_name = "FILE")]
    pub config: Option<PathBuf>,
    /// Built-in catalog to serve: `fs` (default), `everything` or `none`
    /// (with `--upstream`, none unless named).
    #[arg(long, value_name = "NAME")]
    pub catalog: Option<String>,
    /// Another MCP server served through this one, as `NAME=COMMAND` (stdio)
    /// or `NAME=URL` (Streamable HTTP); repeatable.
    #[arg(long, value_name = "NAME=COMMAND|URL")]
    pub upstream: Vec<String>,
    /// Directory served by the `fs` catalog (default `.`).
    #[arg(long, value_name = "DIR")]
    pub root: Option<String>,
    /// Skills directory of the `fs` catalog, relative to the root (default
    /// `skills`; `""` serves none).
    #[arg(long, value_name = "DIR")]
    pub skills: Option<String>,
    /// Log level: trace, debug, info, warning, error, critical.
    #[arg(long, value_name = "LEVEL")]
    pub log_level: Option<String>,
    /// Log format: term or json.
    #[arg(long, value_name = "FORMAT")]
    pub log_format: Option<super::LogFormat>,
}

/// Options of `serve`.
#[derive(Debug, Clone, Default, Args)]
pub struct ServeArgs {
    /// Shared options.
    #[command(flatten)]
    pub common: CommonArgs,
    /// Listen address; port 0 picks a free port.
    #[arg(long, value_name = "ADDR:PORT")]
    pub bind: Option<String>,
    /// Also accept HTTP/2 without TLS (prior knowledge) on the same port
    /// (builds with the `h2c` feature).
    #[arg(long)]
    pub h2c: bool,
}

impl CommonArgs {
    /// Loads the configuration: defaults < file < `ACTIX_MCP_*` env < flags.
    pub fn load(&self, env: impl IntoIterator<Item = (String, String)>) -> Result<Config, ConfigError> {
        let mut config = match &self.config {
            Some(path) => Config::from_file(path)?,
            None => Config::default(),
        };
        config.apply_env(env)?;
        if let Some(c) = &self.catalog {
            config.catalog.name = c.clone();
        }
        for flag in &self.upstream {
            config.upstreams.push(crate::config::UpstreamConfig::parse_flag(flag)?);
        }
        if let Some(r) = &self.root {
            config.fs.root = r.clone();
        }
        if let Some(s) = &self.skills {
            config.fs.skills = s.clone();
        }
        if let Some(l) = &self.log_level {
            config.log.level = l.clone();
        }
        if let Some(f) = &self.log_format {
            config.log.format = *f;
        }
        config.validate()?;
        Ok(config)
    }
}

impl ServeArgs {
    /// Loads the configuration, applying `--bind` last.
    pub fn load(&self, env: impl IntoIterator<Item = (String, String)>) -> Result<Config, ConfigError> {
        let mut config = self.common.load(env)?;
        if let Some(b) = &self.bind {
            config.http.bind = b.clone();
        }
        if self.h2c {
            config.http.h2c = true;
        }
        config.validate()?;
        Ok(config)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_the_contract() {
        let cli =
            Cli::try_parse_from(["actix-mcp", "serve", "--bind", "127.0.0.1:0", "--catalog", "everything"]).unwrap();
        match cli.command {
            Some(Command::Serve(a)) => {
                let c = a.load(Vec::new()).unwrap();
                assert_eq!(c.http.bind, "127.0.0.1:0");
            }
            other => panic!("{other:?}"),
        }
        let cli = Cli::try_parse_from(["actix-mcp", "stdio", "--catalog", "everything"]).unwrap();
        assert!(matches!(cli.command, Some(Command::Stdio(_))));
        let cli = Cli::try_parse_from(["actix-mcp"]).unwrap();
        assert!(cli.command.is_none());
        assert!(Cli::try_parse_from(["actix-mcp", "serve", "--bind", "nowhere"]).unwrap().command.is_some());
    }
}
