//! [`Jail`]: maps relative paths and `file://` URIs to files inside one
//! root, and refuses anything that would leave it (`..`, absolute paths,
//! symlinks pointing outside, another file system mounted below it — with
//! `--root /`, `/proc`, `/sys` and `/dev` are not the root's).

use std::path::{Component, Path, PathBuf};

/// Why a path was refused.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum JailError {
    /// The path would leave the served root.
    Escapes(String),
    /// Nothing there.
    NotFound(String),
    /// Not a `file://` URI of a local path.
    BadUri(String),
    /// On another file system than the root (a mount below it).
    OtherFileSystem(String),
}

impl std::fmt::Display for JailError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            JailError::Escapes(p) => write!(f, "path {p:?} escapes the served root"),
            JailError::NotFound(p) => write!(f, "no such file: {p:?}"),
            JailError::BadUri(u) => write!(f, "not a file:// URI of a local path: {u:?}"),
            JailError::OtherFileSystem(p) => write!(f, "path {p:?} is on another file system than the served root"),
        }
    }
}

/// A root directory and the rules to stay in it.
#[derive(Debug, Clone)]
pub struct Jail {
    root: PathBuf,
    /// The root's device: nothing on another is served.
    device: Option<u64>,
}

impl Jail {
    /// A jail at `root` (canonicalized: it must exist).
    pub fn new(root: &Path) -> std::io::Result<Self> {
        let root = root.canonicalize()?;
        let device = device_of(&root);
        Ok(Jail { root, device })
    }

    /// Whether `path` is on the root's file system.
    pub fn same_file_system(&self, path: &Path) -> bool {
        self.device.is_none() || device_of(path) == self.device
    }

    /// The canonical root.
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// Resolves a path relative to the root; refuses absolute paths and
    /// `..` outright, and symlinks whose target is outside.
    pub fn resolve(&self, relative: &str) -> Result<PathBuf, JailError> {
        let rel = Path::new(relative);
        if rel.components().any(|c| matches!(c, Component::ParentDir | Component::RootDir | Component::Prefix(_))) {
            return Err(JailError::Escapes(relative.to_owned()));
        }
        self.contain(&self.root.join(rel), relative)
    }

    /// Resolves a `file://` URI.
    pub fn resolve_uri(&self, uri: &str) -> Result<PathBuf, JailError> {
        let url = url::Url::parse(uri).map_err(|_| JailError::BadUri(uri.to_owned()))?;
        if url.scheme() != "file" {
            return Err(JailError::BadUri(uri.to_owned()));
        }
        let path = url.to_file_path().map_err(|_| JailError::BadUri(uri.to_owned()))?;
        if path.components().any(|c| matches!(c, Component::ParentDir)) {
            return Err(JailError::Escapes(uri.to_owned()));
        }
        self.contain(&path, uri)
    }

    fn contain(&self, path: &Path, shown: &str) -> Result<PathBuf, JailError> {
        let real = match path.canonicalize() {
            Ok(p) => p,
            Err(_) if !path.starts_with(&self.root) => return Err(JailError::Escapes(shown.to_owned())),
            Err(_) => return Err(JailError::NotFound(shown.to_owned())),
        };
        if !real.starts_with(&self.root) {
            Err(JailError::Escapes(shown.to_owned()))
        } else if !self.same_file_system(&real) {
            Err(JailError::OtherFileSystem(shown.to_owned()))
        } else {
            Ok(real)
        }
    }

    /// The `file://` URI of a path inside the root.
    pub fn uri_of(&self, path: &Path) -> String {
        url::Url::from_file_path(path).map(|u| u.to_string()).unwrap_or_else(|_| format!("file://{}", path.display()))
    }

    /// The path relative to the root, with `/` separators.
    pub fn relative(&self, path: &Path) -> Option<String> {
        let rel = path.strip_prefix(&self.root).ok()?;
        let parts: Vec<_> = rel.components().map(|c| c.as_os_str().to_string_lossy().into_owned()).collect();
        Some(parts.join("/"))
    }
}

/// The device `path` is on (`None` where that is not known).
fn device_of(path: &Path) -> Option<u64> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        std::fs::metadata(path).ok().map(|m| m.dev())
    }
    #[cfg(not(unix))]
    {
        let _ = path;
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn refuses_escapes() {
        let base = std::env::temp_dir().join(format!("jail-test-{}", std::process::id()));
        let root = base.join("root");
        std::fs::create_dir_all(root.join("sub")).unwrap();
        std::fs::write(root.join("sub/a.txt"), "a").unwrap();
        std::fs::write(base.join("secret.txt"), "s").unwrap();
        #[cfg(unix)]
        std::os::unix::fs::symlink(base.join("secret.txt"), root.join("link")).ok();
        let jail = Jail::new(&root).unwrap();
        assert!(jail.resolve("sub/a.txt").is_ok());
        assert!(matches!(jail.resolve("../secret.txt"), Err(JailError::Escapes(_))));
        assert!(matches!(jail.resolve("sub/../../secret.txt"), Err(JailError::Escapes(_))));
        assert!(matches!(jail.resolve("/etc/passwd"), Err(JailError::Escapes(_))));
        #[cfg(unix)]
        assert!(matches!(jail.resolve("link"), Err(JailError::Escapes(_))));
        assert!(matches!(jail.resolve("nope.txt"), Err(JailError::NotFound(_))));
        let uri = jail.uri_of(&jail.resolve("sub/a.txt").unwrap());
        assert!(jail.resolve_uri(&uri).is_ok());
        assert!(matches!(jail.resolve_uri("file:///etc/passwd"), Err(JailError::Escapes(_))));
        assert!(matches!(jail.resolve_uri("http://x/y"), Err(JailError::BadUri(_))));
        assert_eq!(jail.relative(&jail.resolve("sub/a.txt").unwrap()).unwrap(), "sub/a.txt");
        std::fs::remove_dir_all(&base).ok();
    }
}
