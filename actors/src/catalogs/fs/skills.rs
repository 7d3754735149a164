//! The skills directory of the `fs` catalog (`fs.skills`): every directory
//! under it with a `SKILL.md` is a skill at `skill://<its path below the
//! skills directory>/…`, its files read from disk on each read.
//!
//! The jail, `fs.include`/`fs.exclude`, `fs.max_file_bytes` and the
//! symlink rules apply as to any served file. A skill is refused, with the
//! reason logged once, when its frontmatter is not valid, its `name` is not
//! its directory's name, one of its files is over the size cap, or it is
//! over the extension's limits. Digests are kept per file with its
//! modification time and size: a rescan reads only the files that changed.
//! The watcher rescans after a change under the directory, so a changed
//! file changes its digest in the next `skills/list`.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::SystemTime;

use mcp_protocol::skills as ext;
use slog::{info, warn, Logger};

use super::{files, served, walk, Shared};
use crate::catalog::error::HandlerError;
use crate::catalog::{Catalog, Skill, SkillFile};

/// What identifies a file's bytes without reading them: its modification
/// time, its length, and (see [`super::files::change_stamp`]) its inode and
/// status-change time, which a copy that keeps size and mtime (`cp -p`,
/// `rsync -t`, `tar x`) still changes.
type Stamp = (Option<SystemTime>, u64, (u64, i64, i64));

/// The skills directory and what was learnt of its files.
#[derive(Debug)]
pub struct SkillsDir {
    /// The directory (real path, inside the root).
    dir: PathBuf,
    /// Digests by path, with the stamp they were computed at.
    digests: Mutex<HashMap<PathBuf, (Stamp, String)>>,
    /// Refusals already logged, by skill directory.
    refused: Mutex<HashMap<PathBuf, String>>,
}

impl SkillsDir {
    /// The skills directory `fs.skills` names, when it is set and exists
    /// inside the root.
    pub(crate) fn find(shared_root: &Path, jail: &super::Jail, setting: &str, log: &Logger) -> Option<SkillsDir> {
        if setting.is_empty() {
            return None;
        }
        match jail.resolve(setting) {
            Ok(dir) if dir.is_dir() => {
                Some(SkillsDir { dir, digests: Mutex::new(HashMap::new()), refused: Mutex::new(HashMap::new()) })
            }
            _ => {
                info!(log, "no skills directory; skills are not served"; "fs.skills" => setting,
                    "root" => %shared_root.display());
                None
            }
        }
    }

    /// Whether `path` is inside the skills directory.
    pub(crate) fn contains(&self, path: &Path) -> bool {
        path.starts_with(&self.dir)
    }

    /// What identifies `path`'s bytes now (see [`Stamp`]).
    fn stamp(path: &Path) -> Result<Stamp, String> {
        let meta = std::fs::metadata(path).map_err(|e| e.to_string())?;
        Ok((meta.modified().ok(), meta.len(), super::files::change_stamp(&meta)))
    }

    /// Remembers the digest of `bytes`, read from `path` after it had
    /// `stamp` (a file that changed while being read is read again next
    /// time), and returns it.
    fn remember(&self, path: &Path, stamp: Stamp, bytes: &[u8]) -> String {
        let digest = ext::digest(bytes);
        let mut digests = self.digests.lock().unwrap_or_else(|p| p.into_inner());
        digests.insert(path.to_path_buf(), (stamp, digest.clone()));
        digest
    }

    /// The size and digest of `path`'s current bytes (read only when its
    /// stamp changed).
    fn digest(&self, path: &Path, max_bytes: u64) -> Result<(u64, String), String> {
        let stamp = Self::stamp(path)?;
        let known = self.digests.lock().unwrap_or_else(|p| p.into_inner()).get(path).cloned();
        if let Some((s, d)) = known.filter(|(s, _)| *s == stamp) {
            return Ok((s.1, d));
        }
        let bytes = files::read_regular(path, max_bytes)?;
        Ok((bytes.len() as u64, self.remember(path, stamp, &bytes)))
    }

    /// The bytes of a `SKILL.md` (read on every scan, for its frontmatter),
    /// with their size and digest.
    fn manifest(&self, path: &Path, max_bytes: u64) -> Result<(Vec<u8>, u64, String), String> {
        let stamp = Self::stamp(path)?;
        let bytes = files::read_regular(path, max_bytes)?;
        let digest = self.remember(path, stamp, &bytes);
        let size = bytes.len() as u64;
        Ok((bytes, size, digest))
    }

    /// Scans the directory and brings the catalog's skills in line with it:
    /// new skills added, changed ones replaced, gone ones removed.
    pub(crate) fn sync(&self, shared: &Arc<Shared>, catalog: &Catalog, log: &Logger) {
        catalog.serve_skills();
        let found = walk(shared, &self.dir, log).files;
        let roots: Vec<PathBuf> = found
            .iter()
            .filter(|f| f.file_name().is_some_and(|n| n == ext::SKILL_FILE))
            .filter_map(|f| f.parent().map(Path::to_path_buf))
            .filter(|d| *d != self.dir)
            .collect();
        let mut skills = BTreeMap::new();
        for root in roots {
            let files: Vec<&PathBuf> = found.iter().filter(|f| f.starts_with(&root)).collect();
            match self.skill(shared, &root, &files) {
                Ok(skill) => {
                    self.refused.lock().unwrap_or_else(|p| p.into_inner()).remove(&root);
                    skills.insert(skill.uri(), skill);
                }
                Err(reason) => {
                    let mut refused = self.refused.lock().unwrap_or_else(|p| p.into_inner());
                    if refused.get(&root) != Some(&reason) {
                        warn!(log, "a skill is not served"; "dir" => %root.display(), "reason" => &reason);
                        refused.insert(root, reason);
                    }
                }
            }
        }
        for uri in catalog.skill_uris() {
            if !skills.contains_key(&uri) {
                catalog.remove_skill(&uri);
            }
        }
        for (uri, skill) in skills {
            let same = catalog.skill(&uri).is_some_and(|s| s.entry() == skill.entry());
            if !same {
                catalog.replace_skill(skill);
            }
        }
        let present: HashSet<&PathBuf> = found.iter().collect();
        let mut digests = self.digests.lock().unwrap_or_else(|p| p.into_inner());
        digests.retain(|p, _| present.contains(p));
    }

    /// The skill at `root` made of `files` (every served file under it).
    fn skill(&self, shared: &Arc<Shared>, root: &Path, files: &[&PathBuf]) -> Result<Skill, String> {
        let rel = |p: &Path| -> Vec<String> {
            let inner = p.strip_prefix(root).unwrap_or(p);
            inner.components().map(|c| c.as_os_str().to_string_lossy().into_owned()).collect()
        };
        let skill_path = root.strip_prefix(&self.dir).map_err(|_| "outside the skills directory".to_owned())?;
        let skill_path: Vec<String> =
            skill_path.components().map(|c| c.as_os_str().to_string_lossy().into_owned()).collect();
        let max = shared.config.max_file_bytes;
        let mut out = Vec::with_capacity(files.len());
        let mut manifest = None;
        for path in files {
            let inner = rel(path).join("/");
            let (size, digest) = if inner == ext::SKILL_FILE {
                let (bytes, size, digest) = self.manifest(path, max).map_err(|e| format!("{inner}: {e}"))?;
                manifest = Some(bytes);
                (size, digest)
            } else {
                self.digest(path, max).map_err(|e| format!("{inner}: {e}"))?
            };
            out.push(SkillFile::read_by(inner, size, digest, reader(shared, path)));
        }
        let manifest = manifest.ok_or_else(|| format!("no {}", ext::SKILL_FILE))?;
        Skill::new_within(&skill_path.join("/"), &manifest, out, shared.config.max_frontmatter_depth).map_err(|e| e.0)
    }
}

/// Reads a skill file again on each read, under the same rules as every
/// served file.
fn reader(shared: &Arc<Shared>, path: &Path) -> crate::catalog::SkillFileReader {
    let (s, rel) = (shared.clone(), shared.jail.relative(path).unwrap_or_default());
    Arc::new(move || {
        let real = s.jail.resolve(&rel).map_err(|e| HandlerError::invalid_params(e.to_string()))?;
        if !served(&s, &real) {
            return Err(super::not_served(&rel));
        }
        files::read_regular(&real, s.config.max_file_bytes).map_err(HandlerError::invalid_params)
    })
}
