//! [`DirListings`]: the sorted entry names of the directories `list_dir`
//! pages through, kept while the directory is unchanged (its modification
//! time), so that each page of a large directory costs a lookup and the
//! page's own entries, not a fresh read of the whole directory.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::SystemTime;

/// A directory, its modification time when read, and its sorted names.
type Listing = (PathBuf, SystemTime, Arc<Vec<String>>);

/// A few directories' sorted entry names (most recently used first).
#[derive(Debug)]
pub(crate) struct DirListings {
    entries: Mutex<Vec<Listing>>,
    capacity: usize,
}

impl DirListings {
    /// Keeps the listings of at most `capacity` directories.
    pub(crate) fn new(capacity: usize) -> Self {
        DirListings { entries: Mutex::new(Vec::new()), capacity: capacity.max(1) }
    }

    /// The sorted names in `dir`: from the cache while the directory's
    /// modification time is the one they were read at, else read now.
    pub(crate) fn names(&self, dir: &Path) -> std::io::Result<Arc<Vec<String>>> {
        let modified = std::fs::metadata(dir)?.modified()?;
        let mut entries = self.entries.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(i) = entries.iter().position(|(p, m, _)| p == dir && *m == modified) {
            let hit = entries.remove(i);
            let names = hit.2.clone();
            entries.insert(0, hit);
            return Ok(names);
        }
        drop(entries);
        let mut names: Vec<String> = std::fs::read_dir(dir)?
            .filter_map(Result::ok)
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .collect();
        names.sort();
        let names = Arc::new(names);
        let mut entries = self.entries.lock().unwrap_or_else(|p| p.into_inner());
        entries.retain(|(p, _, _)| p != dir);
        entries.insert(0, (dir.to_path_buf(), modified, names.clone()));
        entries.truncate(self.capacity);
        Ok(names)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_kept_until_the_directory_changes() {
        let dir = std::env::temp_dir().join(format!("actix-mcp-listing-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join("b"), "").unwrap();
        std::fs::write(dir.join("a"), "").unwrap();
        let listings = DirListings::new(2);
        let first = listings.names(&dir).unwrap();
        assert_eq!(*first, vec!["a", "b"]);
        assert!(Arc::ptr_eq(&first, &listings.names(&dir).unwrap()), "the same listing, not read again");
        // A new entry changes the directory's modification time (set it
        // explicitly: file systems with coarse times may not move it).
        std::fs::write(dir.join("c"), "").unwrap();
        let later = SystemTime::now() + std::time::Duration::from_secs(5);
        std::fs::File::open(&dir).unwrap().set_modified(later).unwrap();
        assert_eq!(*listings.names(&dir).unwrap(), vec!["a", "b", "c"]);
        std::fs::remove_dir_all(&dir).ok();
    }
}
