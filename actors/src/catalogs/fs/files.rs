//! Which files are served ([`FileRules`]: globs, size cap) and how one is
//! read into resource contents (text when it is UTF-8, else a base64 blob).

use std::path::Path;

use base64::Engine;
use globset::GlobSet;

use crate::config::glob_set;
use mcp_protocol::model::content::ResourceContents;

use crate::config::FsConfig;

/// Include/exclude globs and the size cap.
#[derive(Debug, Clone)]
pub struct FileRules {
    include: GlobSet,
    exclude: GlobSet,
    /// Larger files are not served.
    pub max_file_bytes: u64,
}

impl FileRules {
    /// Rules from the `[fs]` configuration.
    pub fn new(config: &FsConfig) -> Result<Self, String> {
        Ok(FileRules {
            include: glob_set(&config.include)?,
            exclude: glob_set(&config.exclude)?,
            max_file_bytes: config.max_file_bytes,
        })
    }

    /// Whether a relative path is served (by name only).
    pub fn serves(&self, relative: &str) -> bool {
        self.include.is_match(relative) && !self.exclude.is_match(relative)
    }

    /// Whether a directory may contain served files (excluded trees are not walked).
    pub fn enters(&self, relative_dir: &str) -> bool {
        relative_dir.is_empty() || !self.exclude.is_match(format!("{relative_dir}/x"))
    }
}

/// The MIME type guessed from the file name.
pub(crate) fn mime_of(path: &Path) -> String {
    mime_guess::from_path(path).first_raw().unwrap_or("application/octet-stream").to_owned()
}

/// The bytes of a regular file of at most `max_bytes`. The file is opened
/// without blocking (a FIFO would block `open` until a writer came) and
/// checked on the open handle, so a device, FIFO or socket — or a file
/// swapped for one after a check by path — is refused, and the read stops
/// after `max_bytes` whatever the metadata said (a device reports 0).
pub(crate) fn read_regular(path: &Path, max_bytes: u64) -> Result<Vec<u8>, String> {
    use std::io::Read;
    let mut options = std::fs::OpenOptions::new();
    options.read(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::custom_flags(&mut options, libc::O_NONBLOCK);
    let file = options.open(path).map_err(|e| e.to_string())?;
    let meta = file.metadata().map_err(|e| e.to_string())?;
    if !meta.is_file() {
        return Err("not a regular file".into());
    }
    if meta.len() > max_bytes {
        return Err(format!("{} bytes, over the limit of {max_bytes}", meta.len()));
    }
    let mut bytes = Vec::with_capacity(meta.len() as usize);
    file.take(max_bytes + 1).read_to_end(&mut bytes).map_err(|e| e.to_string())?;
    if bytes.len() as u64 > max_bytes {
        return Err(format!("over the limit of {max_bytes} bytes"));
    }
    Ok(bytes)
}

/// Reads a file into contents: text if it is UTF-8 without NUL bytes, a
/// base64 blob otherwise.
pub(crate) fn read_contents(path: &Path, uri: &str, max_bytes: u64) -> Result<ResourceContents, String> {
    let bytes = read_regular(path, max_bytes).map_err(|e| format!("{uri}: {e}"))?;
    let mime = mime_of(path);
    Ok(match String::from_utf8(bytes) {
        Ok(text) if !text.contains('\0') => {
            let mime = if mime == "application/octet-stream" { "text/plain".to_owned() } else { mime };
            ResourceContents::text(uri, mime, text)
        }
        Ok(text) => ResourceContents::blob(uri, mime, base64::engine::general_purpose::STANDARD.encode(text)),
        Err(e) => ResourceContents::blob(uri, mime, base64::engine::general_purpose::STANDARD.encode(e.into_bytes())),
    })
}

/// A file's inode and status-change time (seconds, nanoseconds): what
/// changes whenever its bytes are written or it is replaced, even by a copy
/// that restores its size and modification time.
#[cfg(unix)]
pub(crate) fn change_stamp(meta: &std::fs::Metadata) -> (u64, i64, i64) {
    use std::os::unix::fs::MetadataExt;
    (meta.ino(), meta.ctime(), meta.ctime_nsec())
}

/// Elsewhere only size and modification time identify a file's bytes.
#[cfg(not(unix))]
pub(crate) fn change_stamp(_meta: &std::fs::Metadata) -> (u64, i64, i64) {
    (0, 0, 0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_bounded_regular_files_are_read() {
        let dir = std::env::temp_dir().join(format!("actix-mcp-read-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join("a.txt"), "hello").unwrap();
        assert_eq!(read_regular(&dir.join("a.txt"), 5).unwrap(), b"hello");
        assert!(read_regular(&dir.join("a.txt"), 4).is_err(), "over the limit");
        assert!(read_regular(&dir, 100).is_err(), "a directory");
        assert!(read_regular(Path::new("/dev/zero"), 1 << 20).unwrap_err().contains("not a regular file"));
        #[cfg(unix)]
        {
            let fifo = dir.join("fifo");
            assert!(std::process::Command::new("mkfifo").arg(&fifo).status().unwrap().success());
            assert!(read_regular(&fifo, 100).unwrap_err().contains("not a regular file"), "no blocking on a FIFO");
        }
        std::fs::remove_dir_all(&dir).ok();
    }

    #[test]
    fn globs_and_mime() {
        let rules = FileRules::new(&FsConfig::default()).unwrap();
        assert!(rules.serves("src/lib.rs"));
        assert!(rules.serves("README.md"));
        assert!(!rules.serves(".git/config"));
        assert!(!rules.serves("target/debug/x"));
        assert!(!rules.enters("target"));
        assert!(!rules.serves("benches/x/target/release/y"), "build folders at any depth");
        assert!(!rules.enters("benches/x/target"));
        assert!(rules.enters("src"));
        assert_eq!(mime_of(Path::new("a.json")), "application/json");
        assert_eq!(mime_of(Path::new("a.png")), "image/png");
    }
}
