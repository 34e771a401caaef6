//! Locks on folders and tables: one job at a time in a work folder, one builder at a time for
//! a table. A lock is an exclusive `flock` on a small file that names its holder (pid, host,
//! start time, command); the kernel releases it when the holder dies, so a lock left by a
//! killed process never blocks the next run.

use super::error::{IoContext, StorageError};
use std::fs::{File, OpenOptions, TryLockError};
use std::io::{Read, Write};
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::time::{SystemTime, UNIX_EPOCH};

/// A held lock; released (and its file removed) when dropped.
#[derive(Debug)]
pub struct Lock {
    file: Option<File>,
    path: PathBuf,
}

impl Lock {
    /// Takes the lock file `path` (created if needed); `what` names what it guards in the
    /// error when another process holds it (`work folder /x/.work`).
    pub fn acquire(path: &Path, what: &str) -> Result<Lock, StorageError> {
        loop {
            let mut file = OpenOptions::new()
                .read(true)
                .write(true)
                .create(true)
                .truncate(false)
                .open(path)
                .doing(|| format!("opening lock file {}", path.display()))?;
            match file.try_lock() {
                Ok(()) => {}
                Err(TryLockError::WouldBlock) => {
                    let mut holder = String::new();
                    file.read_to_string(&mut holder).ok();
                    let holder = holder.trim();
                    let holder =
                        if holder.is_empty() { "a process that is starting".to_string() } else { holder.to_string() };
                    return Err(StorageError::Locked { what: what.to_string(), holder, path: path.to_path_buf() });
                }
                Err(TryLockError::Error(e)) => {
                    return Err(e).doing(|| format!("locking {}", path.display()));
                }
            }
            // The holder we waited for may have removed the file after we opened it: the lock
            // counts only if the path still names the file we locked.
            let ours = file.metadata().doing(|| format!("reading {}", path.display()))?;
            match std::fs::metadata(path) {
                Ok(now) if now.dev() == ours.dev() && now.ino() == ours.ino() => {}
                _ => continue,
            }
            file.set_len(0).doing(|| format!("writing {}", path.display()))?;
            file.write_all(holder_description().as_bytes()).doing(|| format!("writing {}", path.display()))?;
            return Ok(Lock { file: Some(file), path: path.to_path_buf() });
        }
    }
}

impl Drop for Lock {
    fn drop(&mut self) {
        // Removed while still held, so that nobody can take a lock on a file about to vanish.
        std::fs::remove_file(&self.path).ok();
        drop(self.file.take());
    }
}

/// `pid 1234 on host h, started 2026-11-23 19:22:39 UTC: tbstream gen KQRvKR`.
fn holder_description() -> String {
    let args: Vec<String> = std::env::args().map(|a| a.rsplit('/').next().unwrap_or(&a).to_string()).collect();
    let secs = SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |d| d.as_secs());
    format!("pid {} on host {}, started {}: {}\n", std::process::id(), hostname(), utc_time(secs), args.join(" "))
}

fn hostname() -> String {
    let mut buf = [0u8; 256];
    // SAFETY: the buffer is valid for its length; gethostname NUL-terminates within it or
    // truncates, and we read only up to the first NUL.
    let rc = unsafe { libc::gethostname(buf.as_mut_ptr() as *mut libc::c_char, buf.len()) };
    if rc != 0 {
        return "unknown".to_string();
    }
    let end = buf.iter().position(|&b| b == 0).unwrap_or(buf.len());
    String::from_utf8_lossy(&buf[..end]).into_owned()
}

/// `YYYY-MM-DD hh:mm:ss UTC` of seconds since the Unix epoch.
fn utc_time(secs: u64) -> String {
    let (days, rest) = ((secs / 86_400) as i64, secs % 86_400);
    // Civil date from days since 1970-01-01 (Howard Hinnant's algorithm).
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + (month <= 2) as i64;
    format!("{year:04}-{month:02}-{day:02} {:02}:{:02}:{:02} UTC", rest / 3600, rest % 3600 / 60, rest % 60)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn utc_times() {
        assert_eq!(utc_time(0), "1970-01-01 00:00:00 UTC");
        assert_eq!(utc_time(951_782_400), "2000-02-29 00:00:00 UTC");
        assert_eq!(utc_time(1_795_461_759), "2026-11-23 19:22:39 UTC");
    }

    #[test]
    fn a_second_lock_is_refused_naming_the_holder_and_taken_after_release() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("job.lock");
        let first = Lock::acquire(&path, "work folder W").unwrap();
        let err = Lock::acquire(&path, "work folder W").unwrap_err();
        let text = err.to_string();
        assert!(text.contains("work folder W") && text.contains(&format!("pid {}", std::process::id())), "{text}");
        assert!(text.contains(" UTC"), "{text}");
        drop(first);
        assert!(!path.exists(), "the lock file goes with the lock");
        let again = Lock::acquire(&path, "work folder W").unwrap();
        assert!(path.exists() && again.path == path);
    }

    #[test]
    fn a_lock_file_left_behind_does_not_block() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("job.lock");
        // A killed holder leaves its file (and its text) but no lock.
        std::fs::write(&path, "pid 1 on host gone, started 2000-01-01 00:00:00 UTC: tbstream gen KQvK\n").unwrap();
        let lock = Lock::acquire(&path, "work folder W").unwrap();
        let text = std::fs::read_to_string(&path).unwrap();
        assert!(text.starts_with(&format!("pid {} ", std::process::id())), "{text}");
        drop(lock);
    }
}
