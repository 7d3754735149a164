//! Turns filesystem changes under the root into catalog changes: a created
//! or deleted file adds or removes its resource (the catalog then publishes
//! `resources/list_changed`), an edited file publishes `resources/updated`
//! for its URI. Each served directory is watched on its own (excluded trees
//! such as `target/` cost no watches); new directories are added as they
//! appear. A change under the skills directory rescans it once. The watcher
//! thread ends when the catalog is dropped.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Weak};
use std::time::{Duration, Instant};

use notify::event::{EventKind, ModifyKind};
use notify::{RecursiveMode, Watcher};
use slog::{debug, warn, Logger};

use super::events::{emit, Change};
use super::Shared;
use crate::catalog::{Catalog, EventSource};

/// Where the watcher applies what it saw.
struct Seen<'a> {
    shared: &'a Arc<Shared>,
    catalog: &'a Catalog,
    /// `file.changed`.
    changes: &'a EventSource,
    log: &'a Logger,
}

/// Starts watching `dirs`.
pub(crate) fn start(
    shared: Arc<Shared>,
    catalog: Weak<Catalog>,
    changes: EventSource,
    dirs: Vec<PathBuf>,
    log: Logger,
) -> Result<(), String> {
    let (tx, rx) = std::sync::mpsc::channel();
    let mut watcher = notify::recommended_watcher(tx).map_err(|e| format!("filesystem watcher: {e}"))?;
    for dir in &dirs {
        if let Err(e) = watcher.watch(dir, RecursiveMode::NonRecursive) {
            warn!(log, "cannot watch directory"; "dir" => %dir.display(), "error" => %e);
        }
    }
    let debounce = Duration::from_millis(shared.config.debounce_ms);
    std::thread::Builder::new()
        .name("actix-mcp-fs-watch".into())
        .spawn(move || {
            // Changes are applied once a path has been quiet for `debounce`:
            // a save made of several writes becomes one notification, and
            // instances watching the same directory observe the same state.
            let mut pending: HashMap<PathBuf, (EventKind, Instant)> = HashMap::new();
            loop {
                let wait =
                    if pending.is_empty() { Duration::from_secs(1) } else { debounce / 2 + Duration::from_millis(1) };
                match rx.recv_timeout(wait) {
                    Ok(Ok(event)) => {
                        if matches!(event.kind, EventKind::Access(_)) {
                            continue;
                        }
                        for path in event.paths {
                            let kind = match pending.get(&path) {
                                // Keep the most telling kind: a creation or content change
                                // outranks a later metadata-only event.
                                Some((k, _)) if matches!(event.kind, EventKind::Modify(ModifyKind::Metadata(_))) => *k,
                                _ => event.kind,
                            };
                            pending.insert(path, (kind, Instant::now()));
                        }
                    }
                    Ok(Err(e)) => warn!(log, "filesystem watcher error"; "error" => %e),
                    Err(std::sync::mpsc::RecvTimeoutError::Timeout) => {}
                    Err(std::sync::mpsc::RecvTimeoutError::Disconnected) => break,
                }
                let Some(catalog) = catalog.upgrade() else { break };
                let seen = Seen { shared: &shared, catalog: &catalog, changes: &changes, log: &log };
                apply_quiet(&seen, &mut watcher, &mut pending, debounce);
            }
        })
        .map_err(|e| format!("filesystem watcher thread: {e}"))?;
    Ok(())
}

/// Applies the changes of the paths quiet for `debounce`.
///
/// New directories are watched first, so a file landing in one from then
/// on has its own event and the scans below see what landed before. When a
/// path was under the skills directory, that directory is rescanned next,
/// before any file change is announced: a client told of one
/// (`list_changed` for the file's own resource) finds the skill's entry and
/// digests already up to date.
fn apply_quiet(
    seen: &Seen<'_>,
    watcher: &mut impl Watcher,
    pending: &mut HashMap<PathBuf, (EventKind, Instant)>,
    debounce: Duration,
) {
    let (shared, catalog, log) = (seen.shared, seen.catalog, seen.log);
    let now = Instant::now();
    let ready: Vec<(PathBuf, EventKind, bool)> = pending
        .extract_if(|_, (_, at)| now.duration_since(*at) >= debounce)
        .map(|(path, (kind, _))| {
            let entered = entered_directory(shared, &path, &kind);
            (path, kind, entered)
        })
        .collect();
    for (path, _, _) in ready.iter().filter(|(_, _, entered)| *entered) {
        let _ = watcher.watch(path, RecursiveMode::NonRecursive);
    }
    if let Some(skills) = &shared.skills
        && ready.iter().any(|(p, _, _)| skills.contains(p))
    {
        skills.sync(shared, catalog, log);
    }
    for (path, kind, entered) in &ready {
        apply(seen, path, kind, *entered);
    }
}

/// Whether `path` is a directory that just appeared (created or moved in)
/// and is to be served: a real directory, not a link to one. Links are
/// never entered (as at start), so a link to a directory outside the root
/// brings nothing in.
fn entered_directory(shared: &Shared, path: &Path, kind: &EventKind) -> bool {
    matches!(kind, EventKind::Create(_) | EventKind::Modify(ModifyKind::Name(_)))
        && path.symlink_metadata().is_ok_and(|m| m.is_dir())
        && shared.jail.relative(path).is_some_and(|rel| shared.rules.enters(&rel))
}

/// Applies one path's change; `entered` says it is a directory that just
/// appeared and is served ([`entered_directory`]).
fn apply(seen: &Seen<'_>, path: &Path, kind: &EventKind, entered: bool) {
    let (shared, catalog, log) = (seen.shared, seen.catalog, seen.log);
    if entered {
        serve_directory(seen, path);
        return;
    }
    if matches!(kind, EventKind::Access(_)) {
        return;
    }
    let Some(rel) = shared.jail.relative(path) else { return };
    if path.symlink_metadata().is_ok_and(|m| m.is_dir()) {
        return;
    }
    if path.symlink_metadata().is_err() {
        gone_directory(seen, path, &rel);
    }
    if !shared.rules.serves(&rel) {
        return;
    }
    let uri = shared.jail.uri_of(path);
    let present = catalog.resource(&uri).is_some();
    // What the path leads to must be inside the root and served (a link
    // created later may point anywhere).
    let inside = shared.jail.resolve(&rel).is_ok_and(|real| super::served(shared, &real));
    match super::resource_for(shared, path).filter(|_| inside) {
        Some(_) if !present && catalog.resources_under("file:", |uris| uris.count()) >= shared.config.max_files => {
            warn!(log, "fs.max_files reached; a new file is not served"; "path" => &rel,
                "max_files" => shared.config.max_files);
        }
        Some(resource) if !present => {
            debug!(log, "file appeared"; "path" => &rel);
            let observed = observation(path);
            catalog.add_resource_observed(resource, &observed);
            emit(seen.changes, Change::Created, &uri, &rel, Some(&observed));
        }
        Some(resource) => {
            if matches!(kind, EventKind::Modify(ModifyKind::Metadata(_))) {
                return;
            }
            debug!(log, "file changed"; "path" => &rel);
            if resource.definition().size != catalog.resource(&uri).and_then(|r| r.definition().size) {
                // Keep the listed size accurate without announcing a list change.
                catalog.replace_resource_quietly(resource);
            }
            let observed = observation(path);
            catalog.notify_resource_updated_observed(&uri, &observed);
            emit(seen.changes, Change::Changed, &uri, &rel, Some(&observed));
        }
        None if present => {
            debug!(log, "file gone"; "path" => &rel);
            catalog.remove_resource_observed(&uri, "removed");
            emit(seen.changes, Change::Removed, &uri, &rel, None);
        }
        None => {}
    }
}

/// The files served under `path` (root-relative `rel`), a directory that
/// is gone — moved away, out of the root, into an excluded one, removed —
/// go with it: each is removed, and its `file.changed` says so.
fn gone_directory(seen: &Seen<'_>, path: &Path, rel: &str) {
    let under = format!("{}/", seen.shared.jail.uri_of(path));
    let uris: Vec<String> = seen.catalog.resources_under(&under, |uris| uris.map(str::to_owned).collect());
    for uri in uris {
        debug!(seen.log, "file gone with its directory"; "uri" => &uri);
        seen.catalog.remove_resource_observed(&uri, "removed");
        let name = percent_encoding::percent_decode_str(&uri[under.len()..]).decode_utf8_lossy();
        emit(seen.changes, Change::Removed, &uri, &format!("{rel}/{name}"), None);
    }
}

/// Serves the files that landed in a new directory before its watch was
/// added (within `fs.max_files`).
fn serve_directory(seen: &Seen<'_>, path: &Path) {
    let (shared, catalog, log) = (seen.shared, seen.catalog, seen.log);
    for file in super::walk(shared, path, log).files {
        if catalog.resources_under("file:", |uris| uris.count()) >= shared.config.max_files {
            warn!(log, "fs.max_files reached; new files are not served"; "max_files" => shared.config.max_files);
            break;
        }
        let uri = shared.jail.uri_of(&file);
        if catalog.resource(&uri).is_none()
            && let Some(r) = super::resource_for(shared, &file)
        {
            let observed = observation(&file);
            catalog.add_resource_observed(r, &observed);
            let rel = shared.jail.relative(&file).unwrap_or_default();
            emit(seen.changes, Change::Created, &uri, &rel, Some(&observed));
        }
    }
}

/// What identifies one change of a file across instances watching the same
/// directory: its modification time, size, inode and status-change time
/// (so a copy that keeps size and mtime is a change too).
fn observation(path: &Path) -> String {
    match std::fs::metadata(path) {
        Ok(m) => {
            let mtime = m
                .modified()
                .ok()
                .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
                .map_or(0, |d| d.as_nanos());
            let (ino, ctime, ctime_ns) = super::files::change_stamp(&m);
            format!("{mtime}:{}:{ino}:{ctime}.{ctime_ns}", m.len())
        }
        Err(_) => "gone".to_owned(),
    }
}
