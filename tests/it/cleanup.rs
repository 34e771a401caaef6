//! Folders removed when the test binary exits. Shared by the integration tests (`it`) and the
//! format reader (`tests/format_doc_reader.rs`) and the C library's tests (`capi/tests/c_library.rs`),
//! both through `#[path]`: it uses no crate code.

use std::path::{Path, PathBuf};
use std::sync::Mutex;

/// Removes `path` when the test binary exits: the folders of tables are held in statics,
/// which are never dropped, so their `TempDir`s would otherwise stay behind.
pub fn remove_at_exit(path: &Path) {
    static PATHS: Mutex<Vec<PathBuf>> = Mutex::new(Vec::new());
    extern "C" fn remove_all() {
        if let Ok(paths) = PATHS.lock() {
            for p in paths.iter() {
                let _ = std::fs::remove_dir_all(p);
            }
        }
    }
    let mut paths = PATHS.lock().unwrap();
    if paths.is_empty() {
        // SAFETY: `remove_all` is a plain function that neither unwinds nor calls `exit`.
        unsafe { libc::atexit(remove_all) };
    }
    paths.push(path.to_path_buf());
}
