//! The output folder of `heatlab run`: claimed by a lock for the whole run, so that a second
//! run on the same folder is refused instead of mixing its files in; a folder that holds
//! another run's files is refused unless `--overwrite`, which removes those files (heatlab's
//! own, and only those) first.

use std::fs::{File, OpenOptions};
use std::io::Write;
use std::path::{Path, PathBuf};

use crate::cli::output::note;
use heatlab_engine::error::HeatlabError;
use heatlab_engine::export::atomic::{list_for_removal_on_exit, Listed};

/// The lock file of a run in its output folder.
const LOCK_FILE: &str = ".heatlab-run.lock";

/// A run's claim on its output folder: [`LOCK_FILE`], locked (`flock`) while the run lasts.
/// The system releases the lock when the process ends, however it ends, so a run killed
/// outright leaves a file but no lock. Dropping the claim deletes the file, and the folder
/// when the claim created it and nothing was written there; an immediate exit (a second
/// signal) deletes the file too.
#[derive(Debug)]
pub(super) struct FolderClaim {
    lock_path: PathBuf,
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
        if let Some(folder) = &self.created {
            // Only an empty folder goes (a run that was refused before writing anything).
            let _ = std::fs::remove_dir(folder);
        }
    }
}

/// Claims `out` for this run (creating it if missing), or says which run holds it.
pub(super) fn claim(out: &Path) -> Result<FolderClaim, HeatlabError> {
    let created = (!out.exists()).then(|| out.to_path_buf());
    std::fs::create_dir_all(out).map_err(|e| HeatlabError::io("creating folder", out, e))?;
    let lock_path = out.join(LOCK_FILE);
    // A few tries: the file may be deleted by the run that held it between the open and the
    // lock, and locking a deleted file claims nothing.
    for _ in 0..8 {
        let mut file = OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .open(&lock_path)
            .map_err(|e| HeatlabError::io("creating the lock file", &lock_path, e))?;
        let locked =
            try_lock_exclusive(&file).map_err(|e| HeatlabError::io("locking", &lock_path, e))?;
        if !locked {
            return Err(held_refusal(out, &lock_path));
        }
        if !is_same_file(&file, &lock_path) {
            continue;
        }
        // For people: which process holds the folder.
        let _ = file
            .set_len(0)
            .and_then(|()| writeln!(file, "{}", std::process::id()));
        return Ok(FolderClaim {
            _listed: list_for_removal_on_exit(&lock_path),
            lock_path,
            created,
            _file: file,
        });
    }
    Err(held_refusal(out, &lock_path))
}

fn held_refusal(out: &Path, lock_path: &Path) -> HeatlabError {
    let holder = std::fs::read_to_string(lock_path)
        .ok()
        .and_then(|text| text.trim().parse::<u32>().ok())
        .map_or_else(String::new, |pid| format!(" (process {pid})"));
    HeatlabError::InvalidInput(format!(
        "another heatlab run{holder} is writing to {}; wait for it to end or choose another --out",
        out.display()
    ))
}

/// Locks `file` for this process alone; `false` when another process holds it.
#[cfg(unix)]
fn try_lock_exclusive(file: &File) -> std::io::Result<bool> {
    match rustix::fs::flock(file, rustix::fs::FlockOperation::NonBlockingLockExclusive) {
        Ok(()) => Ok(true),
        Err(rustix::io::Errno::WOULDBLOCK) => Ok(false),
        Err(errno) => Err(std::io::Error::from_raw_os_error(errno.raw_os_error())),
    }
}

/// Elsewhere the lock file is created but not locked.
#[cfg(not(unix))]
fn try_lock_exclusive(_file: &File) -> std::io::Result<bool> {
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

/// Whether `name` is a file that `heatlab run` writes: `run.json`, `timings.csv`, a frame
/// (`field_000100.png`, `laplacian_000100.npy`, ...) or a temporary `.heatlab-*.part` file.
fn is_run_file(name: &str) -> bool {
    if matches!(name, "run.json" | "timings.csv") {
        return true;
    }
    if name.starts_with(".heatlab-") && name.ends_with(".part") {
        return true;
    }
    let Some(stem) = name
        .strip_suffix(".png")
        .or_else(|| name.strip_suffix(".npy"))
    else {
        return false;
    };
    let Some(step) = stem
        .strip_prefix("field_")
        .or_else(|| stem.strip_prefix("laplacian_"))
    else {
        return false;
    };
    step.len() >= 6 && step.bytes().all(|b| b.is_ascii_digit())
}

/// The files of an earlier run in `out` (none when `out` does not exist or is not a folder:
/// creating it reports that).
pub(super) fn previous_run_files(out: &Path) -> Vec<PathBuf> {
    let Ok(entries) = std::fs::read_dir(out) else {
        return Vec::new();
    };
    let mut files: Vec<PathBuf> = entries
        .filter_map(|entry| entry.ok())
        .filter(|entry| entry.file_type().is_ok_and(|t| !t.is_dir()))
        .filter(|entry| entry.file_name().to_str().is_some_and(is_run_file))
        .map(|entry| entry.path())
        .collect();
    files.sort();
    files
}

pub(super) fn reuse_refusal(out: &Path, previous: &[PathBuf]) -> HeatlabError {
    let mut names: Vec<String> = previous.iter().take(3).map(|p| display_name(p)).collect();
    if previous.len() > names.len() {
        names.push(format!("{} more", previous.len() - names.len()));
    }
    HeatlabError::InvalidInput(format!(
        "{} already holds the files of another run ({}); add --overwrite to replace them, \
         or choose another --out",
        out.display(),
        names.join(", ")
    ))
}

/// Removes the earlier run's files (`--overwrite`), and only those.
pub(super) fn remove_previous_run(out: &Path, previous: &[PathBuf]) -> heatlab_engine::Result<()> {
    for path in previous {
        std::fs::remove_file(path).map_err(|e| HeatlabError::io("removing", path, e))?;
    }
    if !previous.is_empty() {
        note(&format!(
            "--overwrite: removed {} files of the previous run in {}",
            previous.len(),
            out.display()
        ));
    }
    Ok(())
}

/// The file name of `path` (the whole path when it has none).
pub(super) fn display_name(path: &Path) -> String {
    path.file_name().map_or_else(
        || path.display().to_string(),
        |n| n.to_string_lossy().into_owned(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn run_files_are_told_from_other_files() {
        for name in [
            "run.json",
            "timings.csv",
            "field_000000.png",
            "laplacian_001500.npy",
            "field_1000000.npy",
            ".heatlab-AbC123.part",
        ] {
            assert!(is_run_file(name), "{name}");
        }
        for name in [
            "notes.txt",
            "field_12.png",
            "field_000010.jpg",
            "my_run.json",
            "laplacian_00001x.png",
        ] {
            assert!(!is_run_file(name), "{name}");
        }
    }
}
