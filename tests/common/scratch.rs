//! A folder of a test's own, removed when the test is done with it.

use std::ops::Deref;
use std::path::Path;

/// An empty folder under the system's temporary directory, named after the
/// test; removed (with what the test wrote into it) when dropped.
pub struct Scratch(tempfile::TempDir);

/// A new empty folder whose name starts `actix-mcp-NAME-`.
pub fn scratch(name: &str) -> Scratch {
    let dir = tempfile::Builder::new().prefix(&format!("actix-mcp-{name}-")).tempdir();
    Scratch(dir.expect("a temporary folder"))
}

impl Deref for Scratch {
    type Target = Path;

    fn deref(&self) -> &Path {
        self.0.path()
    }
}

impl AsRef<Path> for Scratch {
    fn as_ref(&self) -> &Path {
        self.0.path()
    }
}
