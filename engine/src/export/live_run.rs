//! Folders that a live `heatlab run` writes into. A run claims its output folder with a lock
//! file, [`LOCK_FILE`], locked (`flock`) for as long as the run lasts; the file names the
//! holder (process id, start time, command). Every writer of this crate (the atomic writer,
//! [`super::ensure_writable_dir`]) asks [`ensure_not_live`] before it writes in a folder, so
//! that no other process (a second run, a `--save-state`, a `--video`, the app's exports) puts
//! a file into a live run's folder or replaces one of its files. A held lock is what makes a
//! run live: a run killed outright leaves its file but no lock, and its folder is free.

use std::fs::{File, OpenOptions};
use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::sync::{Mutex, MutexGuard};
use std::time::Duration;

use super::atomic::{list_for_removal_on_exit, Listed};
pub use crate::error::RunHolder;
use crate::error::{HeatlabError, Result};

/// The lock file of a run in its output folder.
pub const LOCK_FILE: &str = ".heatlab-run.lock";

/// Tries at locking a lock file that is held, a little apart: a writer checking the folder
/// ([`ensure_not_live`]) holds it for an instant.
const LOCK_TRIES: u32 = 10;
const LOCK_RETRY: Duration = Duration::from_millis(10);

/// This process, now.
fn this_process() -> RunHolder {
    RunHolder {
        pid: Some(std::process::id()),
        started: Some(humantime::format_rfc3339_seconds(std::time::SystemTime::now()).to_string()),
        command: Some(std::env::args().collect::<Vec<_>>().join(" ")),
    }
}

/// The lock file's text: one `key value` line each.
fn to_text(holder: &RunHolder) -> String {
    let mut text = String::new();
    if let Some(pid) = holder.pid {
        text.push_str(&format!("pid {pid}\n"));
    }
    if let Some(started) = &holder.started {
        text.push_str(&format!("started {started}\n"));
    }
    if let Some(command) = &holder.command {
        text.push_str(&format!("command {}\n", command.replace('\n', " ")));
    }
    text
}

/// Reads a lock file's text (a bare process id too, as older runs wrote).
fn from_text(text: &str) -> RunHolder {
    let mut holder = RunHolder::default();
    for line in text.lines() {
        let (key, value) = line.split_once(' ').unwrap_or(("pid", line));
        match key {
            "pid" => holder.pid = value.trim().parse().ok(),
            "started" => holder.started = Some(value.trim().to_string()),
            "command" => holder.command = Some(value.trim().to_string()),
            _ => {}
        }
    }
    holder
}

/// The folders this process holds (canonical paths): its own writes there are its run's.
static CLAIMED: Mutex<Vec<PathBuf>> = Mutex::new(Vec::new());

fn claimed() -> MutexGuard<'static, Vec<PathBuf>> {
    // A panic while the list was held leaves it usable: it is only a list of paths.
    CLAIMED
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// A run's claim on its output folder: [`LOCK_FILE`], locked while the claim lives. The system
/// releases the lock when the process ends, however it ends, so a run killed outright leaves a
/// file but no lock. Dropping the claim deletes the file, and the folder when the claim created
/// it and nothing was written there; an immediate exit (a second signal) deletes the file too.
#[derive(Debug)]
pub struct FolderClaim {
    lock_path: PathBuf,
    canonical: PathBuf,
    created: Option<PathBuf>,
    // Dropped after the file is deleted: the lock is held until then.
    _file: File,
    _listed: Listed,
}

impl Drop for FolderClaim {
    fn drop(&mut self) {
        // Deleted while still locked: a run that opened the file before this cannot lock it
        // afterwards without seeing that it is no longer the folder's (see `claim`).
        let _ = std::fs::remove_file(&self.lock_path);
        claimed().retain(|p| p != &self.canonical);
        if let Some(folder) = &self.created {
            // Only an empty folder goes (a run that was refused before writing anything).
            let _ = std::fs::remove_dir(folder);
        }
    }
}

/// Claims `out` for this process (creating it if missing), or refuses with
/// [`HeatlabError::FolderInUse`] naming the run that holds it.
pub fn claim(out: &Path) -> Result<FolderClaim> {
    let created = (!out.exists()).then(|| out.to_path_buf());
    std::fs::create_dir_all(out).map_err(|e| HeatlabError::io("creating folder", out, e))?;
    let canonical = out
        .canonicalize()
        .map_err(|e| HeatlabError::io("resolving", out, e))?;
    let lock_path = out.join(LOCK_FILE);
    for _ in 0..LOCK_TRIES {
        let mut file = OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .open(&lock_path)
            .map_err(|e| HeatlabError::io("creating the lock file", &lock_path, e))?;
        let locked = try_lock(&file, Lock::Exclusive)
            .map_err(|e| HeatlabError::io("locking", &lock_path, e))?;
        // Locking a file that its holder has just deleted claims nothing: open it again.
        if !locked || !is_same_file(&file, &lock_path) {
            std::thread::sleep(LOCK_RETRY);
            continue;
        }
        let _ = file
            .set_len(0)
            .and_then(|()| file.write_all(to_text(&this_process()).as_bytes()));
        claimed().push(canonical.clone());
        return Ok(FolderClaim {
            _listed: list_for_removal_on_exit(&lock_path),
            lock_path,
            canonical,
            created,
            _file: file,
        });
    }
    Err(in_use(out, holder_of(&lock_path)))
}

/// Refuses (with [`HeatlabError::FolderInUse`]) when `dir` is the output folder of a live run of
/// another process; a folder this process claimed, one without a lock file or whose lock is not
/// held passes. The lock is tried, not only looked at: a held lock means a live run.
pub fn ensure_not_live(dir: &Path) -> Result<()> {
    let dir = if dir.as_os_str().is_empty() {
        Path::new(".")
    } else {
        dir
    };
    let Ok(canonical) = dir.canonicalize() else {
        // A folder that does not exist holds no run.
        return Ok(());
    };
    if claimed().contains(&canonical) {
        return Ok(());
    }
    let lock_path = canonical.join(LOCK_FILE);
    // Opened for reading only, never created: an unreadable lock cannot be tried.
    let Ok(file) = File::open(&lock_path) else {
        return Ok(());
    };
    // A shared lock, for an instant: it fails while a run holds the exclusive one.
    match try_lock(&file, Lock::Shared) {
        Ok(false) => Err(in_use(dir, holder_of(&lock_path))),
        Ok(true) | Err(_) => Ok(()),
    }
}

fn in_use(folder: &Path, holder: RunHolder) -> HeatlabError {
    HeatlabError::FolderInUse {
        folder: folder.to_path_buf(),
        holder,
    }
}

fn holder_of(lock_path: &Path) -> RunHolder {
    let mut text = String::new();
    match File::open(lock_path).and_then(|mut f| f.read_to_string(&mut text)) {
        Ok(_) => from_text(&text),
        Err(_) => RunHolder::default(),
    }
}

#[derive(Clone, Copy)]
enum Lock {
    Shared,
    Exclusive,
}

/// Locks `file` without waiting; `false` when another open file holds a lock that excludes it.
#[cfg(unix)]
fn try_lock(file: &File, lock: Lock) -> std::io::Result<bool> {
    use rustix::fs::FlockOperation;
    let operation = match lock {
        Lock::Shared => FlockOperation::NonBlockingLockShared,
        Lock::Exclusive => FlockOperation::NonBlockingLockExclusive,
    };
    match rustix::fs::flock(file, operation) {
        Ok(()) => Ok(true),
        Err(rustix::io::Errno::WOULDBLOCK) => Ok(false),
        Err(errno) => Err(std::io::Error::from_raw_os_error(errno.raw_os_error())),
    }
}

/// Elsewhere the lock file is created but not locked.
#[cfg(not(unix))]
fn try_lock(_file: &File, _lock: Lock) -> std::io::Result<bool> {
    Ok(true)
}

/// Whether the open `file` is still the one at `path`.
#[cfg(unix)]
fn is_same_file(file: &File, path: &Path) -> bool {
    use std::os::unix::fs::MetadataExt;
    match (file.metadata(), std::fs::metadata(path)) {
        (Ok(open), Ok(named)) => open.dev() == named.dev() && open.ino() == named.ino(),
        _ => false,
    }
}

#[cfg(not(unix))]
fn is_same_file(_file: &File, _path: &Path) -> bool {
    true
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_holder_is_read_back_from_its_text() {
        let holder = RunHolder {
            pid: Some(42),
            started: Some("2026-11-28T11:40:02Z".into()),
            command: Some("heatlab run --out cA".into()),
        };
        assert_eq!(from_text(&to_text(&holder)), holder);
        assert_eq!(from_text("1234\n").pid, Some(1234));
        assert_eq!(holder.to_string(), "pid 42, started 2026-11-28T11:40:02Z");
    }

    #[test]
    fn a_claimed_folder_is_free_to_its_own_process_and_freed_after() {
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("out");
        let claim = claim(&out).unwrap();
        ensure_not_live(&out).unwrap();
        let text = std::fs::read_to_string(out.join(LOCK_FILE)).unwrap();
        assert_eq!(from_text(&text).pid, Some(std::process::id()));
        drop(claim);
        assert!(!out.exists(), "the empty folder it created goes");
        ensure_not_live(&out).unwrap();
    }

    #[test]
    fn a_lock_held_elsewhere_refuses_and_a_stale_one_does_not() {
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path();
        std::fs::write(out.join(LOCK_FILE), "pid 7\nstarted 2026-01-02T03:04:05Z\n").unwrap();
        ensure_not_live(out).unwrap();
        // An open file description of its own stands for another process's run.
        let held = File::open(out.join(LOCK_FILE)).unwrap();
        assert!(try_lock(&held, Lock::Exclusive).unwrap());
        match ensure_not_live(out) {
            Err(HeatlabError::FolderInUse { holder, .. }) => {
                assert_eq!(holder.pid, Some(7));
                assert_eq!(holder.started.as_deref(), Some("2026-01-02T03:04:05Z"));
            }
            other => panic!("{other:?}"),
        }
        assert!(matches!(claim(out), Err(HeatlabError::FolderInUse { .. })));
        // Every writer of the crate (the app's exports too) refuses it.
        let written = crate::export::write_atomically(&out.join("x.txt"), |w| w.write_all(b"x"));
        assert!(matches!(written, Err(HeatlabError::FolderInUse { .. })));
        assert!(matches!(
            crate::export::ensure_writable_dir(out),
            Err(HeatlabError::FolderInUse { .. })
        ));
        assert!(!out.join("x.txt").exists());
        drop(held);
        // A child another test forks meanwhile holds a copy of the description until its exec
        // closes it: the lock goes with the last copy.
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(5);
        while ensure_not_live(out).is_err() && std::time::Instant::now() < deadline {
            std::thread::sleep(std::time::Duration::from_millis(10));
        }
        ensure_not_live(out).unwrap();
    }
}
