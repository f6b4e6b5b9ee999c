//! The output folder of `heatlab run`: claimed by a lock for the whole run
//! ([`heatlab_engine::export::live_run`]), so that nothing else writes there while it runs; a
//! folder that holds another run's files is refused unless `--overwrite`, which removes those
//! files (heatlab's own, and only those) first.

use std::path::{Path, PathBuf};

use crate::cli::output::note;
use heatlab_engine::error::HeatlabError;

pub(super) use heatlab_engine::export::live_run::{claim, ensure_not_live};

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
