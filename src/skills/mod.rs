//! The Skills extension (`io.modelcontextprotocol/skills`, SEP-2640): Agent
//! Skills served as `skill://` resources, enumerated with `skills/list`,
//! fetched one at a time with `skills/get`, and browsed with
//! `resources/directory/read`.
//!
//! A skill is a directory with a `SKILL.md` at its root whose YAML
//! frontmatter holds at least `name` and `description`. Its files are the
//! resources `skill://<skill-path>/<file-path>`, where the last segment of
//! `<skill-path>` is the frontmatter `name` and earlier segments are a free
//! prefix. This module holds the wire types and the rules that need no I/O:
//! digests, names, URIs and the frontmatter block of a `SKILL.md`.

mod names;

use serde::{Deserialize, Serialize};
use serde_json::{json, Map, Value};

pub use names::{check_name, check_skill_path, skill_md_uri, skill_root_uri};

/// The extension's identifier.
pub const EXTENSION: &str = "io.modelcontextprotocol/skills";
/// The file at a skill's root.
pub const SKILL_FILE: &str = "SKILL.md";
/// The URI scheme of skill resources.
pub const SCHEME: &str = "skill://";
/// The MIME type of a `SKILL.md` resource.
pub const SKILL_MIME: &str = "text/markdown";
/// The MIME type of a directory resource (`resources/directory/read`).
pub const DIRECTORY_MIME: &str = "inode/directory";
/// The prefix of `_meta` keys this extension puts on skill resources.
pub const META_PREFIX: &str = "io.modelcontextprotocol.skills/";
/// At most this many files in one skill (the extension's limit).
pub const MAX_FILES_PER_SKILL: usize = 512;
/// At most this many bytes in one skill, summed over its files.
pub const MAX_SKILL_BYTES: u64 = 16 * 1024 * 1024;

/// `capabilities.extensions["io.modelcontextprotocol/skills"]`:
/// `{"directoryRead": true}` when the server answers
/// `resources/directory/read`, else `{}`.
pub fn server_capability(directory_read: bool) -> (String, Value) {
    let settings = if directory_read { json!({"directoryRead": true}) } else { json!({}) };
    (EXTENSION.to_owned(), settings)
}

/// The digest of a file as the extension writes it: `sha256:` and 64
/// lowercase hex digits of the raw bytes.
pub fn digest(bytes: &[u8]) -> String {
    let hash = hmac_sha256::Hash::hash(bytes);
    let mut out = String::with_capacity(7 + 64);
    out.push_str("sha256:");
    for b in hash {
        out.push(char::from(b"0123456789abcdef"[usize::from(b >> 4)]));
        out.push(char::from(b"0123456789abcdef"[usize::from(b & 15)]));
    }
    out
}

/// The YAML frontmatter block at the start of a `SKILL.md` (between a first
/// line `---` and the next line `---`; a leading byte-order mark is
/// skipped), or `None` when the file does not start with one.
pub fn frontmatter_block(text: &str) -> Option<&str> {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let rest = text.strip_prefix("---\r\n").or_else(|| text.strip_prefix("---\n"))?;
    let mut at = 0;
    for line in rest.split_inclusive('\n') {
        let bare = line.trim_end_matches(['\n', '\r']);
        if bare.trim_end_matches([' ', '\t']) == "---" {
            return Some(rest[..at].trim_end_matches(['\n', '\r']));
        }
        at += line.len();
    }
    None
}

/// How deeply a `SKILL.md` frontmatter may nest by default: a YAML
/// parser's time grows with the square of the depth, and a real
/// frontmatter nests a few levels.
pub const MAX_FRONTMATTER_DEPTH: usize = 64;

/// An upper bound of how deeply the YAML `block` nests, found in one pass
/// without parsing it: on each line its indentation, its leading sequence
/// and mapping-key markers (`- `, `? `), plus the flow collections (`[`,
/// `{`) open at any point outside quotes. A block within a bound parses in
/// time proportional to it.
pub fn frontmatter_depth(block: &str) -> usize {
    let (mut deepest, mut flow) = (0usize, 0usize);
    for line in block.lines() {
        let trimmed = line.trim_start_matches([' ', '\t']);
        let mut depth = line.len() - trimmed.len();
        let mut rest = trimmed;
        while let Some(r) = rest.strip_prefix("- ").or_else(|| rest.strip_prefix("? ")) {
            depth += 1;
            rest = r.trim_start_matches(' ');
        }
        let mut quote = None;
        for c in rest.chars() {
            match (quote, c) {
                (None, '#') if flow == 0 => break,
                (None, '"' | '\'') => quote = Some(c),
                (Some(q), c) if c == q => quote = None,
                (None, '[' | '{') => {
                    flow += 1;
                    deepest = deepest.max(depth + flow);
                }
                (None, ']' | '}') => flow = flow.saturating_sub(1),
                _ => {}
            }
        }
        deepest = deepest.max(depth + flow);
    }
    deepest
}

/// One file of a skill in its entry: its URI, the digest and the length of
/// the bytes served.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SkillFileRef {
    /// The file's `skill://` URI.
    pub uri: String,
    /// `sha256:` and 64 lowercase hex digits.
    pub digest: String,
    /// Length in bytes.
    pub size: u64,
}

/// A skill as `skills/list` and `skills/get` describe it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SkillEntry {
    /// The URI of the skill's `SKILL.md`.
    pub uri: String,
    /// The `SKILL.md` frontmatter, every field, as JSON.
    pub frontmatter: Map<String, Value>,
    /// Every file of the skill (its `SKILL.md` and nested skills' files
    /// included), each once.
    pub resources: Vec<SkillFileRef>,
}

/// Params of `skills/get`.
#[derive(Debug, Clone, PartialEq, Deserialize)]
pub struct GetSkillParams {
    /// The URI of a skill's `SKILL.md`.
    pub uri: String,
}

/// Params of `resources/directory/read`.
#[derive(Debug, Clone, PartialEq, Deserialize)]
pub struct ReadDirectoryParams {
    /// The directory's URI (no trailing slash).
    pub uri: String,
    /// The cursor of the page to return.
    #[serde(default)]
    pub cursor: Option<String>,
}

#[cfg(test)]
mod tests {

    #[test]
    fn frontmatter_depth_bounds_indentation_markers_and_flow() {
        assert_eq!(frontmatter_depth("name: a\ndescription: b"), 0);
        assert_eq!(frontmatter_depth("metadata:\n  tags: [a, [b, c]]"), 4);
        assert_eq!(frontmatter_depth("x: \"[[[[\"\ny: '{{{'"), 0, "quoted brackets do not nest");
        assert_eq!(frontmatter_depth("- - - - x"), 4);
        assert_eq!(frontmatter_depth(&"[".repeat(100_000)), 100_000);
        assert!(frontmatter_depth(&"{a: ".repeat(1000)) >= 1000);
    }
    use super::*;

    #[test]
    fn digest_is_sha256_in_lowercase_hex() {
        // The SHA-256 of the empty string.
        assert_eq!(digest(b""), "sha256:e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
        assert_eq!(digest(b"abc").len(), 7 + 64);
        assert_ne!(digest(b"abc"), digest(b"abd"));
    }

    #[test]
    fn frontmatter_block_is_found_between_the_fences() {
        let md = "---\nname: pdf\ndescription: Reads PDFs\n---\n# PDF\n";
        assert_eq!(frontmatter_block(md), Some("name: pdf\ndescription: Reads PDFs"));
        assert_eq!(frontmatter_block("\u{feff}---\r\nname: a\r\n---\r\nbody"), Some("name: a"));
        assert_eq!(frontmatter_block("---\nname: a\n--- \n"), Some("name: a"));
        assert_eq!(frontmatter_block("# no frontmatter\n"), None);
        assert_eq!(frontmatter_block("---\nname: a\nnever closed\n"), None);
        assert_eq!(frontmatter_block("---\n---\n"), Some(""));
    }

    #[test]
    fn capability_declares_directory_reads_inline() {
        assert_eq!(server_capability(true).1, json!({"directoryRead": true}));
        assert_eq!(server_capability(false).1, json!({}));
    }
}
