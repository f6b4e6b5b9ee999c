//! The output folder of `heatlab run`: claimed by a lock for the whole run
//! ([`heatlab_engine::export::live_run`]), so that nothing else writes there while it runs; a
//! folder that holds another run's files is refused unless `--overwrite`, which removes those
//! files (heatlab's own, and only those) first; a `--save-state` that would land on a file the
//! run writes is refused.

use std::path::{Component, Path, PathBuf};

use crate::cli::output::note;
use heatlab_engine::error::HeatlabError;
use heatlab_engine::export::atomic::{resolve_output, OutputTarget};
use heatlab_engine::export::live_run::LOCK_FILE;

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

/// Whether the run may write or keep a file of this name in its folder: its files
/// ([`is_run_file`]), its lock file and its temporary files (`.heatlab-*`).
fn is_run_name(name: &str) -> bool {
    is_run_file(name) || name == LOCK_FILE || name.starts_with(".heatlab-")
}

/// Refuses a `--save-state` path that the run writes itself: a file of its folder `out` (after
/// following links and resolving both folders) or its `--video`. Nothing is written.
pub(super) fn check_state_path(
    state: &Path,
    out: &Path,
    video: Option<&Path>,
) -> Result<(), HeatlabError> {
    let OutputTarget::File(target) = resolve_output(state)? else {
        return Ok(());
    };
    let resolved = resolved_path(&target);
    let name = target.file_name().and_then(|name| name.to_str());
    if let Some(name) = name.filter(|&name| is_run_name(name)) {
        if resolved.parent() == Some(resolved_path(out).as_path()) {
            return Err(HeatlabError::OutputCollision {
                path: state.to_path_buf(),
                why: format!(
                    "the run writes its own {name} in {}; give --save-state another name or folder",
                    out.display()
                ),
            });
        }
    }
    if let Some(video) = video {
        if let OutputTarget::File(video) = resolve_output(video)? {
            if resolved_path(&video) == resolved {
                return Err(HeatlabError::OutputCollision {
                    path: state.to_path_buf(),
                    why: "it is the run's --video; give --save-state another name".into(),
                });
            }
        }
    }
    Ok(())
}

/// `path` made absolute, its longest existing part resolved by the system (links, `..`) and
/// the rest (not there yet) appended as written, `.` and `..` taken lexically.
fn resolved_path(path: &Path) -> PathBuf {
    let absolute = std::path::absolute(path).unwrap_or_else(|_| path.to_path_buf());
    let mut existing = absolute.as_path();
    let mut rest = Vec::new();
    loop {
        if let Ok(mut resolved) = existing.canonicalize() {
            for component in rest.iter().rev() {
                match component {
                    Component::ParentDir => {
                        resolved.pop();
                    }
                    Component::Normal(name) => resolved.push(name),
                    _ => {}
                }
            }
            return resolved;
        }
        match (existing.parent(), existing.components().next_back()) {
            (Some(parent), Some(last)) => {
                rest.push(last);
                existing = parent;
            }
            _ => return absolute,
        }
    }
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

    #[test]
    fn paths_are_compared_resolved_whether_or_not_they_exist() {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path();
        std::fs::create_dir(d.join("out")).unwrap();
        let out = resolved_path(&d.join("out"));
        assert_eq!(
            resolved_path(&d.join("out/./x/../run.json")),
            out.join("run.json")
        );
        assert_eq!(resolved_path(&d.join("new/../out")), out);
        assert_eq!(
            resolved_path(&d.join("new/a")),
            resolved_path(d).join("new/a")
        );
        let refused = |state: &str, out: &str| {
            check_state_path(&d.join(state), &d.join(out), Some(&d.join("v.gif"))).is_err()
        };
        assert!(refused("out/run.json", "out"));
        assert!(refused("out/x/../field_000010.png", "./out"));
        assert!(refused("new/.heatlab-run.lock", "new/"));
        assert!(refused("v.gif", "out"));
        assert!(!refused("out/final.hlstate", "out"));
        assert!(!refused("run.json", "out"));
    }
}
