//! [`BuildError`]: why a server could not be built or run.

use crate::config::ConfigError;

/// Why a server could not be built or run. Each message names what to fix.
///
/// Its `Debug` form is its sentence too, so that `fn main() -> Result<(),
/// BuildError>` ends with `Error: invalid configuration: …` rather than the
/// error's structure.
#[non_exhaustive]
pub enum BuildError {
    /// A configuration value is invalid; the message names the key.
    Config(ConfigError),
    /// Items the catalog refused (a taken or invalid name, a bad schema).
    Catalog(Vec<String>),
    /// Building needs a running actix system (`#[actix_web::main]`,
    /// `actix_rt::System::new().block_on(…)`), or use the builder's `run_*`
    /// methods, which start one.
    NoSystem,
    /// `run_*` starts its own actix system and blocks; inside a running one,
    /// `build()` the server and `serve_http(server).await` instead.
    InSystem,
    /// Serving failed (the address is in use, an I/O error).
    Serve(String),
}

impl std::fmt::Display for BuildError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            BuildError::Config(e) => write!(f, "invalid configuration: {}", e.0),
            BuildError::Catalog(problems) => write!(f, "invalid catalog: {}", problems.join("; ")),
            BuildError::NoSystem => f.write_str(
                "the server must be built inside a running actix system (#[actix_web::main], \
                 actix_rt::System::new().block_on), or use run_http/run_stdio, which start one",
            ),
            BuildError::InSystem => f.write_str(
                "run_http/run_stdio start their own actix system and cannot run inside one: \
                 build() the server and serve it with serve_http(server).await",
            ),
            BuildError::Serve(e) => write!(f, "serving failed: {e}"),
        }
    }
}

impl std::fmt::Debug for BuildError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        std::fmt::Display::fmt(self, f)
    }
}

impl std::error::Error for BuildError {}

/// A skill that cannot be served is a catalog problem.
impl From<crate::catalog::SkillError> for BuildError {
    fn from(e: crate::catalog::SkillError) -> Self {
        BuildError::Catalog(vec![e.0])
    }
}

impl From<ConfigError> for BuildError {
    fn from(e: ConfigError) -> Self {
        BuildError::Config(e)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn debug_is_the_sentence() {
        let e = BuildError::Config(ConfigError("http.bind: not an address".into()));
        assert_eq!(format!("{e:?}"), "invalid configuration: http.bind: not an address");
    }
}
