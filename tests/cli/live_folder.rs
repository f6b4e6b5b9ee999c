//! Nothing clobbered: the folder of a live run is refused to every other writer (a second run,
//! `--overwrite`, `--save-state`, `--video`), naming the run that holds it.

#![expect(
    clippy::unwrap_used,
    reason = "test helpers; clippy's allow-*-in-tests covers #[test] functions only"
)]

use crate::common;

use common::cli::{heatlab_in, names_in, read_json, stderr_of};
use common::process::{child_stderr, send, spawn, wait_for, wait_with_limit};
use std::collections::BTreeMap;
use std::fs;
use std::path::Path;
use std::time::Duration;

/// A run far too long to finish in a test, on the CPU, writing into `out`.
fn endless(out: &str) -> Vec<&str> {
    vec![
        "run",
        "--size",
        "200",
        "--steps",
        "100000000",
        "--chunk",
        "1000000",
        "--backend",
        "cpu",
        "--seed",
        "1",
        "--out",
        out,
    ]
}

/// A short run into `out` with `extra` arguments.
fn short<'a>(out: &'a str, extra: &[&'a str]) -> Vec<&'a str> {
    let mut args = vec![
        "run",
        "--size",
        "16",
        "--steps",
        "10",
        "--save-every",
        "10",
        "--backend",
        "cpu",
        "--out",
        out,
    ];
    args.extend_from_slice(extra);
    args
}

/// The files of `dir` with their contents; heatlab's temporary files (which a live run
/// writes) are left out, its lock file is not.
fn contents(dir: &Path) -> BTreeMap<String, Vec<u8>> {
    names_in(dir)
        .into_iter()
        .filter(|name| !name.ends_with(".part"))
        .map(|name| {
            let bytes = fs::read(dir.join(&name)).unwrap();
            (name, bytes)
        })
        .collect()
}

#[test]
fn a_live_runs_folder_is_refused_to_every_writer() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let mut first = spawn(d, &endless("cA"));
    wait_for(
        "the first run's first frame",
        Duration::from_secs(60),
        || d.join("cA/laplacian_000000.png").exists(),
    );
    let before = contents(&d.join("cA"));
    assert!(before.contains_key(".heatlab-run.lock"), "{before:?}");
    let holder = format!(
        "cA is being written by a live heatlab run (pid {}, started ",
        first.id()
    );
    let writers: [&[&str]; 6] = [
        &[],
        &["--overwrite"],
        &["--save-state", "cA/.heatlab-run.lock"],
        &["--save-state", "cA/run.json"],
        &["--save-state", "cA/final.hlstate"],
        &["--video", "cA/run.gif"],
    ];
    for extra in writers {
        // The first two write into cA itself, the others into cB.
        let out = if extra.len() < 2 { "cA" } else { "cB" };
        let refused = heatlab_in(d, &short(out, extra));
        let stderr = stderr_of(&refused);
        assert_eq!(refused.status.code(), Some(1), "{extra:?}: {stderr}");
        assert!(stderr.contains(&holder), "{extra:?}: {stderr}");
        assert_eq!(stderr.trim().lines().count(), 1, "{extra:?}: {stderr}");
        assert!(!d.join("cB").exists(), "{extra:?}");
        assert_eq!(contents(&d.join("cA")), before, "{extra:?}");
    }
    send(&first, libc::SIGTERM);
    let status = wait_with_limit(&mut first, Duration::from_secs(30));
    assert_eq!(status.code(), Some(143), "{}", child_stderr(&mut first));
    let record = read_json(&d.join("cA/run.json"));
    assert_eq!(record["status"], "interrupted");
    assert_eq!(record["parameters"]["field"]["seed"], 1);
    assert!(
        names_in(&d.join("cA"))
            .iter()
            .all(|name| !name.starts_with(".heatlab-")),
        "{:?}",
        names_in(&d.join("cA"))
    );
}
