//! The `fs` catalog: a read-only, live view of one directory.
//!
//! - every served file is a resource (`file://` URI, MIME type by
//!   extension, text when UTF-8, else a base64 blob), listed with the
//!   catalog's pagination;
//! - tools: `read_file {path}`, `list_dir {path?, cursor?}` (paginated) and
//!   `search {query, regex?, path?, maxResults?}` (bounded results);
//! - a watcher turns edits into `resources/updated` and created or deleted
//!   files into `resources/list_changed`, through the subscription hub, and
//!   each into a `file.changed` event (the Events extension; see
//!   [`events`]);
//! - nothing outside the root is ever read: `..`, absolute paths and
//!   symlinks leading out are refused with a clear error;
//! - an MCP Apps view, the [`browser`], shows `list_dir` and `search`
//!   results to a person, who browses, previews and searches in it;
//! - the skills directory (`fs.skills`, default `skills`) is served under
//!   the Skills extension (see [`skills`]).

pub mod browser;
pub mod events;
mod files;
mod jail;
mod listing;
pub mod skills;
mod tools;
mod watch;

use std::path::{Path, PathBuf};
use std::sync::Arc;

pub use files::FileRules;
pub use jail::{Jail, JailError};
use mcp_protocol::model::tools::CallToolResult;
use mcp_protocol::ProtocolError;
use slog::{info, warn, Logger};
use walkdir::WalkDir;

use crate::catalog::error::HandlerError;
use crate::catalog::{Catalog, Resource};
use crate::config::FsConfig;

/// What the resources, tools and watcher share.
#[derive(Debug)]
pub struct Shared {
    /// The root and its rules.
    pub jail: Jail,
    /// Which files are served.
    pub rules: FileRules,
    /// The configuration.
    pub config: FsConfig,
    /// Directory listings `list_dir` pages through.
    pub(crate) listings: listing::DirListings,
    /// The skills directory, when one is served.
    pub skills: Option<skills::SkillsDir>,
}

/// The result of walking a directory.
pub(crate) struct Walk {
    pub(crate) files: Vec<PathBuf>,
    pub(crate) dirs: Vec<PathBuf>,
    pub(crate) truncated: bool,
}

/// Served files and entered directories under `from`, in name order,
/// at most `max_files` files, on the root's file system only (as `find
/// -xdev`); symlinks are followed only when they stay inside. Entries that
/// cannot be read are skipped and told in one summary line.
pub(crate) fn walk(shared: &Shared, from: &Path, log: &Logger) -> Walk {
    let mut out = Walk { files: Vec::new(), dirs: Vec::new(), truncated: false };
    let entries = WalkDir::new(from).follow_links(false).same_file_system(true).sort_by_file_name();
    let entries = entries.into_iter().filter_entry(|e| {
        !e.file_type().is_dir() || shared.jail.relative(e.path()).is_some_and(|rel| shared.rules.enters(&rel))
    });
    let (mut unreadable, mut first) = (0usize, None);
    for entry in entries {
        let entry = match entry {
            Ok(e) => e,
            Err(e) => {
                unreadable += 1;
                first.get_or_insert_with(|| e.to_string());
                continue;
            }
        };
        if entry.file_type().is_dir() {
            out.dirs.push(entry.path().to_path_buf());
            continue;
        }
        let Some(rel) = shared.jail.relative(entry.path()) else { continue };
        if !shared.rules.serves(&rel) {
            continue;
        }
        // A link is served only if what it leads to is: inside the root, and
        // not excluded (a link to `.git/config` is not a way around fs.exclude).
        if entry.file_type().is_symlink() && !shared.jail.resolve(&rel).is_ok_and(|real| served(shared, &real)) {
            continue;
        }
        if out.files.len() >= shared.config.max_files {
            out.truncated = true;
            break;
        }
        out.files.push(entry.path().to_path_buf());
    }
    if let Some(first) = first {
        warn!(log, "directory entries that cannot be read are not served";
            "unreadable" => unreadable, "first" => first, "under" => %from.display());
    }
    out
}

/// The resource for a served file (none for directories, missing files and
/// files over the size cap).
pub(crate) fn resource_for(shared: &Arc<Shared>, path: &Path) -> Option<Resource> {
    let meta = std::fs::metadata(path).ok()?;
    if !meta.is_file() || meta.len() > shared.config.max_file_bytes {
        return None;
    }
    let rel = shared.jail.relative(path)?;
    let uri = shared.jail.uri_of(path);
    let s = shared.clone();
    let resource = Resource::new(uri, rel.clone(), move |uri, _ctx| {
        let s = s.clone();
        async move {
            let path = s.jail.resolve_uri(&uri).map_err(|e| jail_error(&uri, e))?;
            if !served(&s, &path) {
                return Err(not_served(&uri));
            }
            let contents =
                files::read_contents(&path, &uri, s.config.max_file_bytes).map_err(HandlerError::invalid_params)?;
            Ok(vec![contents])
        }
    })
    .with_mime_type(files::mime_of(path))
    .with_title(rel);
    Some(resource.with_size(meta.len()))
}

/// Whether a real (canonical) path inside the root is served by the
/// include and exclude rules.
pub(crate) fn served(shared: &Shared, real: &Path) -> bool {
    shared.jail.relative(real).is_some_and(|rel| shared.rules.serves(&rel))
}

/// The real path and the root-relative path of a file a tool names, or
/// the tool error refusing it: outside the root, or not served.
pub(crate) fn served_file(shared: &Shared, path: &str) -> Result<(PathBuf, String), CallToolResult> {
    let real = shared.jail.resolve(path).map_err(|e| CallToolResult::error(e.to_string()))?;
    let rel = shared.jail.relative(&real).unwrap_or_default();
    if !shared.rules.serves(&rel) {
        return Err(CallToolResult::error(format!("{path:?} is not served (excluded by fs.include/fs.exclude)")));
    }
    Ok((real, rel))
}

/// The refusal of a path the rules exclude.
pub(crate) fn not_served(shown: &str) -> HandlerError {
    HandlerError::invalid_params(format!("{shown} is not served (excluded by fs.include/fs.exclude)"))
}

/// A jail refusal as a protocol error.
pub(crate) fn jail_error(uri: &str, e: JailError) -> HandlerError {
    match e {
        JailError::NotFound(_) => ProtocolError::ResourceNotFound { uri: uri.to_owned() }.into(),
        other => HandlerError::invalid_params(other.to_string()),
    }
}

/// Builds the catalog of `config.root` and starts its watcher.
///
/// A root that is `/` without being named so (the default `.` in a process
/// started in `/`, as desktop hosts start servers) is refused: serving the
/// whole machine takes `--root /` (`fs.root = "/"`).
pub fn build(config: &FsConfig, log: &Logger) -> Result<Arc<Catalog>, String> {
    let jail = Jail::new(Path::new(&config.root)).map_err(|e| format!("fs.root {:?}: {e}", config.root))?;
    if jail.root() == Path::new("/") && config.root != "/" {
        return Err(format!(
            "fs.root {:?} is / (the directory the process started in): refusing to serve the whole machine; \
             name the directory to serve with --root DIR (fs.root), or --root / to serve / on purpose",
            config.root
        ));
    }
    let rules = FileRules::new(config)?;
    let skills = skills::SkillsDir::find(jail.root(), &jail, &config.skills, log);
    let listings = listing::DirListings::new(8);
    let shared = Arc::new(Shared { jail, rules, config: config.clone(), listings, skills });
    let catalog = Arc::new(Catalog::new());
    let found = walk(&shared, shared.jail.root(), log);
    if found.truncated {
        warn!(log, "fs.max_files reached; later files are not served"; "max_files" => config.max_files);
    }
    // One batch: the files come in as one change (one copy of the items).
    catalog.batch(|catalog| {
        for file in &found.files {
            if let Some(r) = resource_for(&shared, file)
                && let Err(e) = catalog.add_resource(r)
            {
                warn!(log, "a file is not served"; "error" => %e);
            }
        }
    });
    tools::add(&catalog, &shared).map_err(|e| e.to_string())?;
    browser::add(&catalog, &shared).map_err(|e| e.to_string())?;
    if let Some(skills) = &shared.skills {
        skills.sync(&shared, &catalog, log);
        info!(log, "serving skills"; "dir" => &config.skills, "skills" => catalog.skill_uris().len());
    }
    let s = shared.clone();
    catalog.set_resolver(Arc::new(move |uri| {
        // Only file:// URIs are ours; explain refusals instead of "not found".
        if !uri.starts_with("file:") {
            return None;
        }
        match s.jail.resolve_uri(uri) {
            Err(JailError::NotFound(_)) => None,
            Err(e) => Some(Err(jail_error(uri, e))),
            Ok(path) if !served(&s, &path) => Some(Err(not_served(uri))),
            Ok(path) => resource_for(&s, &path).map(Ok),
        }
    }));
    // One line says what is exposed: the absolute directory (with the
    // default `root = "."`, the one the process started in) and what is
    // left out of it.
    let started_in = if config.root == "." { " (the directory the process started in)" } else { "" };
    info!(log, "serving every file under a directory, read-only{}", started_in;
        "root" => %shared.jail.root().display(), "include" => config.include.join(" "),
        "exclude" => config.exclude.join(" "), "files" => found.files.len());
    if config.watch {
        let changes = events::add(&catalog).map_err(|e| e.to_string())?;
        watch::start(shared.clone(), Arc::downgrade(&catalog), changes, found.dirs, log.clone())?;
    }
    Ok(catalog)
}
