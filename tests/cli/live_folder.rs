//! Nothing clobbered: the folder of a live run is refused to every other writer (a second run,
//! `--overwrite`, `--save-state`, `--video`), naming the run that holds it, and a
//! `--save-state` on a file the run writes itself is refused before anything is written.

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
    let endless = crate::outside::endless("1", "cA");
    let endless: Vec<&str> = endless.iter().map(String::as_str).collect();
    let mut first = spawn(d, &endless);
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

#[test]
fn a_state_on_the_runs_own_files_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    fs::create_dir(d.join("oY")).unwrap();
    fs::write(d.join("oY/notes.txt"), "mine").unwrap();
    let cases: [(&str, &[&str]); 6] = [
        ("oX", &["--save-state", "oX/run.json"]),
        ("oY", &["--save-state", "oY/field_000010.png"]),
        ("oZ", &["--save-state", "oZ/sub/../timings.csv"]),
        ("./oW", &["--save-state", "oW/.heatlab-run.lock"]),
        ("oV", &["--save-state", "oV/laplacian_000000.npy", "--npy"]),
        (
            "oU",
            &["--video", "oU/run.gif", "--save-state", "./oU/run.gif"],
        ),
    ];
    for (out, extra) in cases {
        let refused = heatlab_in(d, &short(out, extra));
        let stderr = stderr_of(&refused);
        assert_eq!(refused.status.code(), Some(1), "{extra:?}: {stderr}");
        assert!(stderr.contains("cannot write"), "{extra:?}: {stderr}");
        assert!(
            stderr.contains("give --save-state another name"),
            "{extra:?}: {stderr}"
        );
        assert_eq!(stderr.trim().lines().count(), 1, "{extra:?}: {stderr}");
    }
    assert_eq!(names_in(d), ["oY"], "nothing else was created");
    assert_eq!(names_in(&d.join("oY")), ["notes.txt"]);
    // A name of one's own in the run's folder is fine.
    let kept = heatlab_in(d, &short("oX", &["--save-state", "oX/final.hlstate"]));
    assert!(kept.status.success(), "{}", stderr_of(&kept));
    assert!(d.join("oX/final.hlstate").is_file());
    assert_eq!(read_json(&d.join("oX/run.json"))["status"], "completed");
}
