//! [`Skill`]: an Agent Skill (a `SKILL.md` with YAML frontmatter, and the
//! files beside it) served under the Skills extension as `skill://`
//! resources.
//!
//! ```
//! use actix_mcp::catalog::Skill;
//!
//! let skill = Skill::from_files("acme/report", [
//!     ("SKILL.md", "---\nname: report\ndescription: Writes the weekly report\n---\nCall `report`.\n"),
//!     ("templates/week.md", "# Week {n}\n"),
//! ])
//! .unwrap();
//! assert_eq!(skill.uri(), "skill://acme/report/SKILL.md");
//! assert_eq!(skill.frontmatter()["description"], "Writes the weekly report");
//! ```

use std::sync::Arc;

use mcp_protocol::skills::{self, SkillEntry, SkillFileRef};
use serde_json::{Map, Value};

use crate::catalog::error::HandlerError;

/// Reads one file's bytes when a client reads its resource.
pub type SkillFileReader = Arc<dyn Fn() -> Result<Vec<u8>, HandlerError> + Send + Sync>;

/// Why a skill cannot be served.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SkillError(pub String);

impl std::fmt::Display for SkillError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for SkillError {}

/// Where a file's bytes come from.
#[derive(Clone)]
pub(crate) enum Body {
    /// Held in memory (embedded or read once).
    Bytes(Arc<[u8]>),
    /// Read on each `resources/read` (a served directory).
    Reader(SkillFileReader),
}

/// One file of a skill: its path inside the skill, and the length and
/// digest of the bytes served.
#[derive(Clone)]
pub struct SkillFile {
    pub(crate) path: String,
    pub(crate) size: u64,
    pub(crate) digest: String,
    pub(crate) mime_type: String,
    pub(crate) body: Body,
}

impl std::fmt::Debug for SkillFile {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SkillFile").field("path", &self.path).field("digest", &self.digest).finish()
    }
}

impl SkillFile {
    /// A file whose bytes are held in memory.
    pub fn bytes(path: impl Into<String>, bytes: impl Into<Vec<u8>>) -> Self {
        let path = path.into();
        let bytes: Arc<[u8]> = bytes.into().into();
        SkillFile {
            mime_type: mime_of(&path),
            size: bytes.len() as u64,
            digest: skills::digest(&bytes),
            path,
            body: Body::Bytes(bytes),
        }
    }

    /// A file read by `reader` on each read, whose current bytes have
    /// `size` and `digest` (the caller keeps them true: a changed file is a
    /// replaced skill).
    pub fn read_by(path: impl Into<String>, size: u64, digest: String, reader: SkillFileReader) -> Self {
        let path = path.into();
        SkillFile { mime_type: mime_of(&path), size, digest, path, body: Body::Reader(reader) }
    }

    /// The path inside the skill (`SKILL.md`, `references/forms.md`).
    pub fn path(&self) -> &str {
        &self.path
    }

    /// `sha256:` and the hex digest of the bytes served.
    pub fn digest(&self) -> &str {
        &self.digest
    }
}

/// The MIME type of a skill file: `text/markdown` for Markdown (so for
/// every `SKILL.md`), else by extension.
fn mime_of(path: &str) -> String {
    if path.ends_with(".md") || path.ends_with(".markdown") {
        return skills::SKILL_MIME.to_owned();
    }
    mime_guess::from_path(path).first_raw().unwrap_or("application/octet-stream").to_owned()
}

/// An Agent Skill: a skill path (`acme/billing/refunds`, whose last segment
/// is the frontmatter `name`), the frontmatter of its `SKILL.md`, and every
/// file of it (the `SKILL.md` included), each served as the resource
/// `skill://<skill-path>/<file-path>`.
#[derive(Clone)]
pub struct Skill {
    pub(crate) path: String,
    pub(crate) frontmatter: Map<String, Value>,
    pub(crate) files: Vec<SkillFile>,
    pub(crate) scopes: Vec<String>,
}

impl std::fmt::Debug for Skill {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Skill").field("path", &self.path).field("files", &self.files.len()).finish()
    }
}

/// The frontmatter of a `SKILL.md`: a YAML mapping with a non-empty string
/// `name` and `description`, as JSON; refused when it nests deeper than
/// [`skills::MAX_FRONTMATTER_DEPTH`].
pub fn parse_frontmatter(skill_md: &[u8]) -> Result<Map<String, Value>, SkillError> {
    parse_frontmatter_within(skill_md, skills::MAX_FRONTMATTER_DEPTH)
}

/// [`parse_frontmatter`], refusing a frontmatter that nests deeper than
/// `max_depth` levels (see [`skills::frontmatter_depth`]) before it is
/// parsed.
pub fn parse_frontmatter_within(skill_md: &[u8], max_depth: usize) -> Result<Map<String, Value>, SkillError> {
    let text = std::str::from_utf8(skill_md).map_err(|_| SkillError("SKILL.md is not UTF-8".into()))?;
    let block = skills::frontmatter_block(text)
        .ok_or_else(|| SkillError("SKILL.md does not start with a --- delimited YAML frontmatter".into()))?;
    let depth = skills::frontmatter_depth(block);
    if depth > max_depth {
        return Err(SkillError(format!(
            "SKILL.md frontmatter nests {depth} levels deep, over the limit of {max_depth} (fs.max_frontmatter_depth)"
        )));
    }
    let value: Value =
        yaml_serde::from_str(block).map_err(|e| SkillError(format!("SKILL.md frontmatter is not valid YAML: {e}")))?;
    let Value::Object(map) = value else {
        return Err(SkillError("SKILL.md frontmatter is not a mapping".into()));
    };
    for field in ["name", "description"] {
        if map.get(field).and_then(Value::as_str).is_none_or(str::is_empty) {
            return Err(SkillError(format!("SKILL.md frontmatter has no non-empty string {field:?}")));
        }
    }
    Ok(map)
}

impl Skill {
    /// A skill at `skill_path` made of `files` (its `SKILL.md` included):
    /// checked as [`Skill::new`] checks it. The frontmatter is read from
    /// the `SKILL.md` among them.
    pub fn from_files<P, B>(skill_path: &str, files: impl IntoIterator<Item = (P, B)>) -> Result<Skill, SkillError>
    where
        P: Into<String>,
        B: Into<Vec<u8>>,
    {
        let files: Vec<SkillFile> = files.into_iter().map(|(p, b)| SkillFile::bytes(p, b)).collect();
        let skill_md = files
            .iter()
            .find(|f| f.path == skills::SKILL_FILE)
            .and_then(|f| match &f.body {
                Body::Bytes(b) => Some(b.clone()),
                Body::Reader(_) => None,
            })
            .ok_or_else(|| SkillError(format!("skill {skill_path:?} has no {}", skills::SKILL_FILE)))?;
        Skill::new(skill_path, &skill_md, files)
    }

    /// The skill in directory `dir` (its `SKILL.md` and every file under
    /// it, read now and held in memory), at the skill path of its
    /// frontmatter `name` (see [`Skill::under`] for a prefix). Symbolic
    /// links are not followed.
    #[cfg(feature = "fs")]
    #[cfg_attr(docsrs, doc(cfg(feature = "fs")))]
    pub fn from_dir(dir: impl AsRef<std::path::Path>) -> Result<Skill, SkillError> {
        let dir = dir.as_ref();
        let mut files = Vec::new();
        for entry in walkdir::WalkDir::new(dir).follow_links(false).sort_by_file_name() {
            let entry = entry.map_err(|e| SkillError(format!("{}: {e}", dir.display())))?;
            if !entry.file_type().is_file() {
                continue;
            }
            let rel = entry.path().strip_prefix(dir).unwrap_or(entry.path());
            let rel: Vec<String> = rel.components().map(|c| c.as_os_str().to_string_lossy().into_owned()).collect();
            let bytes =
                std::fs::read(entry.path()).map_err(|e| SkillError(format!("{}: {e}", entry.path().display())))?;
            files.push((rel.join("/"), bytes));
        }
        let skill_md = files
            .iter()
            .find(|(p, _)| p == skills::SKILL_FILE)
            .ok_or_else(|| SkillError(format!("{}: no {}", dir.display(), skills::SKILL_FILE)))?;
        let frontmatter = parse_frontmatter(&skill_md.1).map_err(|e| SkillError(format!("{}: {e}", dir.display())))?;
        let name = frontmatter["name"].as_str().unwrap_or_default().to_owned();
        Skill::from_files(&name, files)
    }

    /// A skill at `skill_path` whose `SKILL.md` holds `skill_md` and whose
    /// files are `files` (that `SKILL.md` among them). Refused when the path
    /// is not a valid skill path, the frontmatter lacks `name` or
    /// `description`, the name is not the path's last segment, a file path
    /// is empty, absolute, has `.`/`..` segments or comes twice, or the
    /// skill is over the extension's limits (512 files, 16 MiB), or its
    /// frontmatter nests deeper than [`skills::MAX_FRONTMATTER_DEPTH`].
    pub fn new(skill_path: &str, skill_md: &[u8], files: Vec<SkillFile>) -> Result<Skill, SkillError> {
        Skill::new_within(skill_path, skill_md, files, skills::MAX_FRONTMATTER_DEPTH)
    }

    /// [`Skill::new`] with the frontmatter's nesting bounded by `max_depth`.
    pub fn new_within(
        skill_path: &str,
        skill_md: &[u8],
        mut files: Vec<SkillFile>,
        max_depth: usize,
    ) -> Result<Skill, SkillError> {
        let fail = |m: String| SkillError(format!("skill {skill_path:?}: {m}"));
        skills::check_skill_path(skill_path).map_err(fail)?;
        let frontmatter = parse_frontmatter_within(skill_md, max_depth).map_err(|e| fail(e.0))?;
        let name = frontmatter["name"].as_str().unwrap_or_default();
        if skill_path.rsplit('/').next() != Some(name) {
            return Err(fail(format!("the frontmatter name {name:?} is not the last segment of the skill path")));
        }
        files.sort_by(|a, b| a.path.cmp(&b.path));
        for (i, f) in files.iter().enumerate() {
            let bad = f.path.is_empty() || f.path.split('/').any(|s| s.is_empty() || s == "." || s == "..");
            if bad || f.path.chars().any(|c| c.is_whitespace() || c == '\\' || c == '?' || c == '#') {
                return Err(fail(format!("file path {:?} is not a relative path of plain segments", f.path)));
            }
            if i > 0 && files[i - 1].path == f.path {
                return Err(fail(format!("file {:?} comes twice", f.path)));
            }
        }
        if !files.iter().any(|f| f.path == skills::SKILL_FILE) {
            return Err(fail(format!("no {} among its files", skills::SKILL_FILE)));
        }
        if files.len() > skills::MAX_FILES_PER_SKILL {
            return Err(fail(format!("{} files, over the limit of {}", files.len(), skills::MAX_FILES_PER_SKILL)));
        }
        let total: u64 = files.iter().map(|f| f.size).sum();
        if total > skills::MAX_SKILL_BYTES {
            return Err(fail(format!("{total} bytes, over the limit of {}", skills::MAX_SKILL_BYTES)));
        }
        Ok(Skill { path: skill_path.to_owned(), frontmatter, files, scopes: Vec::new() })
    }

    /// The same skill under a prefix: `prefix/<skill-path>`.
    pub fn under(mut self, prefix: &str) -> Result<Skill, SkillError> {
        let path = format!("{}/{}", prefix.trim_matches('/'), self.path);
        skills::check_skill_path(&path).map_err(SkillError)?;
        self.path = path;
        Ok(self)
    }

    /// Lets only callers whose token grants `scopes` see the skill and read
    /// its files (with authorization on).
    #[must_use]
    pub fn with_scopes<S: Into<String>>(mut self, scopes: impl IntoIterator<Item = S>) -> Self {
        self.scopes = scopes.into_iter().map(Into::into).collect();
        self
    }

    /// The skill path.
    pub fn path(&self) -> &str {
        &self.path
    }

    /// The URI of its `SKILL.md`, which names the skill.
    pub fn uri(&self) -> String {
        skills::skill_md_uri(&self.path)
    }

    /// The frontmatter of its `SKILL.md`.
    pub fn frontmatter(&self) -> &Map<String, Value> {
        &self.frontmatter
    }

    /// Its files, by path.
    pub fn files(&self) -> &[SkillFile] {
        &self.files
    }

    /// The URI of one of its files.
    pub(crate) fn file_uri(&self, file: &SkillFile) -> String {
        format!("{}/{}", skills::skill_root_uri(&self.path), file.path)
    }

    /// Its entry in `skills/list` and `skills/get`.
    pub fn entry(&self) -> SkillEntry {
        SkillEntry {
            uri: self.uri(),
            frontmatter: self.frontmatter.clone(),
            resources: self
                .files
                .iter()
                .map(|f| SkillFileRef { uri: self.file_uri(f), digest: f.digest.clone(), size: f.size })
                .collect(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MD: &str =
        "---\nname: report\ndescription: Writes reports\nlicense: MIT\nmetadata:\n  version: \"2\"\n---\nBody\n";

    #[test]
    fn a_skill_from_files_has_its_frontmatter_verbatim_and_every_digest() {
        let s = Skill::from_files("acme/report", [("SKILL.md", MD), ("ref/a.txt", "a")]).unwrap();
        let e = s.entry();
        assert_eq!(e.uri, "skill://acme/report/SKILL.md");
        assert_eq!(
            Value::Object(e.frontmatter),
            serde_json::json!({"name": "report",
            "description": "Writes reports", "license": "MIT", "metadata": {"version": "2"}})
        );
        let uris: Vec<_> = e.resources.iter().map(|r| r.uri.as_str()).collect();
        assert_eq!(uris, ["skill://acme/report/SKILL.md", "skill://acme/report/ref/a.txt"]);
        assert_eq!(e.resources[1].digest, skills::digest(b"a"));
        assert_eq!(e.resources[0].size, MD.len() as u64);
    }

    #[test]
    fn bad_skills_are_refused_with_the_reason() {
        let err = |r: Result<Skill, SkillError>| r.unwrap_err().0;
        assert!(err(Skill::from_files("acme/other", [("SKILL.md", MD)])).contains("last segment"));
        assert!(err(Skill::from_files("report", [("a.md", "x")])).contains("no SKILL.md"));
        assert!(err(Skill::from_files("report", [("SKILL.md", "# none")])).contains("frontmatter"));
        let no_desc = "---\nname: report\n---\n";
        assert!(err(Skill::from_files("report", [("SKILL.md", no_desc)])).contains("description"));
        assert!(err(Skill::from_files("report", [("SKILL.md", MD), ("../x", "x")])).contains("plain segments"));
        assert!(err(Skill::from_files("Report", [("SKILL.md", MD)])).contains("lowercase"));
        let many = (0..600).map(|i| (format!("f{i}"), "x".to_owned())).chain([("SKILL.md".into(), MD.into())]);
        assert!(err(Skill::from_files("report", many)).contains("over the limit"));
    }

    #[test]
    fn a_prefix_moves_the_skill() {
        let s = Skill::from_files("report", [("SKILL.md", MD)]).unwrap().under("acme/tools").unwrap();
        assert_eq!(s.uri(), "skill://acme/tools/report/SKILL.md");
        assert!(Skill::from_files("report", [("SKILL.md", MD)]).unwrap().under("a b").is_err());
    }

    #[test]
    #[cfg(feature = "fs")]
    fn a_skill_directory_is_read_with_its_subdirectories() {
        let dir = std::env::temp_dir().join(format!("skill-from-dir-{}", std::process::id()));
        std::fs::create_dir_all(dir.join("report/ref")).unwrap();
        std::fs::write(dir.join("report/SKILL.md"), MD).unwrap();
        std::fs::write(dir.join("report/ref/a.txt"), "a").unwrap();
        let s = Skill::from_dir(dir.join("report")).unwrap();
        std::fs::remove_dir_all(&dir).unwrap();
        assert_eq!(s.path(), "report");
        assert_eq!(s.files().iter().map(SkillFile::path).collect::<Vec<_>>(), ["SKILL.md", "ref/a.txt"]);
    }
}
