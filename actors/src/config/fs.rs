//! `[fs]`: the filesystem catalog.

use serde::{Deserialize, Serialize};

/// `[fs]`: a read-only catalog of one directory.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct FsConfig {
    /// The directory served; nothing outside it is ever read. Default: `.`.
    pub root: String,
    /// Glob patterns (relative to `root`) of files served. Default: `["**"]`.
    pub include: Vec<String>,
    /// Glob patterns never served, even when included. Default: VCS,
    /// build and dependency folders at any depth (`**/.git/**`,
    /// `**/target/**`, `**/node_modules/**`) and `.conformance/**`.
    pub exclude: Vec<String>,
    /// Larger files are neither listed nor read. Default: 1 MiB.
    pub max_file_bytes: u64,
    /// Most files listed; the walk stops there (bounded memory). Default: 10000.
    pub max_files: usize,
    /// Most matches one `search` call returns. Default: 100.
    pub search_max_results: usize,
    /// Watch the directory and publish `resources/updated` and
    /// `resources/list_changed`. Default: true.
    pub watch: bool,
    /// A changed path is reported once it has been quiet this long, in ms
    /// (a save made of several writes is one change). Default: 100.
    pub debounce_ms: u64,
    /// The skills directory (relative to `root`): every directory under it
    /// with a `SKILL.md` is a skill, served under the Skills extension at
    /// `skill://<path below this directory>/…`. Served when it exists at
    /// start; empty turns skills off. Default: `skills`.
    pub skills: String,
    /// How deeply a skill's `SKILL.md` frontmatter may nest (YAML
    /// indentation, sequence markers and flow collections counted); a
    /// deeper one is refused, logged, and the server starts without that
    /// skill. Default: 64.
    pub max_frontmatter_depth: usize,
}

impl Default for FsConfig {
    fn default() -> Self {
        FsConfig {
            root: ".".into(),
            include: vec!["**".into()],
            exclude: vec![
                "**/.git/**".into(),
                "**/target/**".into(),
                "**/node_modules/**".into(),
                ".conformance/**".into(),
            ],
            max_file_bytes: 1024 * 1024,
            max_files: 10_000,
            search_max_results: 100,
            watch: true,
            debounce_ms: 100,
            skills: "skills".into(),
            max_frontmatter_depth: mcp_protocol::skills::MAX_FRONTMATTER_DEPTH,
        }
    }
}
