//! The command line beside other processes: two runs on one folder, an ffmpeg that hangs, a
//! screenshot of a field that cannot be made, and memory over a long recorded run. Every test
//! runs the real binary (`HEATLAB_BIN` when set) from a temporary folder; ffmpeg is a script
//! put first on `PATH`, so that it hangs when the test needs it to.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "test helpers; clippy's allow-*-in-tests covers #[test] functions only"
)]

use crate::common;

use common::cli::read_json;
use common::heatlab_binary as binary;
use common::process::{child_stderr, is_running, send, spawn, wait_for, wait_with_limit};
use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

fn hidden_files(dir: &Path) -> Vec<String> {
    fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with(".heatlab-"))
        .collect()
}

/// A run far too long to finish in a test (also the live run of `live_folder`).
pub(crate) fn endless(seed: &str, out: &str) -> Vec<String> {
    [
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
        seed,
        "--out",
        out,
    ]
    .map(String::from)
    .to_vec()
}

fn spawn_owned(dir: &Path, args: &[String]) -> Child {
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    spawn(dir, &args)
}

#[test]
fn a_second_run_on_a_folder_in_use_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let mut first = spawn_owned(d, &endless("1", "job"));
    wait_for("the first frame", Duration::from_secs(60), || {
        d.join("job/laplacian_000000.png").exists()
    });
    let second = Command::new(binary())
        .current_dir(d)
        .args(endless("2", "job"))
        .args(["--overwrite"])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&second.stderr);
    assert_eq!(second.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains("job is being written by a live heatlab run")
            && stderr.contains(&format!("(pid {}, started ", first.id())),
        "{stderr}"
    );
    send(&first, libc::SIGTERM);
    let status = wait_with_limit(&mut first, Duration::from_secs(20));
    assert_eq!(status.code(), Some(143), "{}", child_stderr(&mut first));
    let summary = read_json(&d.join("job/run.json"));
    assert_eq!(summary["parameters"]["field"]["seed"], 1);
    assert!(
        hidden_files(&d.join("job")).is_empty(),
        "the lock file stays"
    );
}

#[test]
fn two_runs_started_together_on_one_folder_do_not_both_pass() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let short = |seed: &str| {
        let mut args = endless(seed, "job");
        args[4] = "3000".into(); // --steps
        args[6] = "100".into(); // --chunk
        args.push("--npy".into());
        args
    };
    let mut runs = [spawn_owned(d, &short("1")), spawn_owned(d, &short("2"))];
    let statuses: Vec<_> = runs
        .iter_mut()
        .map(|run| {
            let status = wait_with_limit(run, Duration::from_secs(120));
            (status.code(), child_stderr(run))
        })
        .collect();
    let winners: Vec<usize> = (0..2).filter(|&i| statuses[i].0 == Some(0)).collect();
    assert_eq!(winners.len(), 1, "{statuses:?}");
    let loser = &statuses[1 - winners[0]];
    assert_eq!(loser.0, Some(1), "{statuses:?}");
    assert!(
        loser.1.contains("live heatlab run") || loser.1.contains("already holds"),
        "{}",
        loser.1
    );
    let summary = read_json(&d.join("job/run.json"));
    assert_eq!(summary["parameters"]["field"]["seed"], winners[0] + 1);
    assert_eq!(summary["status"], "completed");
    assert!(hidden_files(&d.join("job")).is_empty());
}

/// A folder holding an `ffmpeg` script that answers `-version` after `probe` (shell) and, as
/// an encoder, writes its process id to `ffmpeg.pid` and never reads its input.
fn fake_ffmpeg(dir: &Path, probe: &str) -> PathBuf {
    let bin = dir.join("bin");
    fs::create_dir(&bin).unwrap();
    let script = bin.join("ffmpeg");
    let pid_file = dir.join("ffmpeg.pid");
    fs::write(
        &script,
        format!(
            "#!/bin/sh\nif [ \"$1\" = \"-version\" ]; then echo $$ > '{pid}.probe'; {probe}; \
             echo 'ffmpeg version fake'; exit 0; fi\necho $$ > '{pid}.part' && mv '{pid}.part' \
             '{pid}'\nexec sleep 1000\n",
            pid = pid_file.display()
        ),
    )
    .unwrap();
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        fs::set_permissions(&script, fs::Permissions::from_mode(0o755)).unwrap();
    }
    bin
}

fn path_with(bin: &Path) -> String {
    format!(
        "{}:{}",
        bin.display(),
        std::env::var("PATH").unwrap_or_default()
    )
}

fn pid_in(path: &Path) -> u32 {
    fs::read_to_string(path).unwrap().trim().parse().unwrap()
}

#[test]
fn an_ffmpeg_that_hangs_on_its_version_is_given_up() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let bin = fake_ffmpeg(d, "exec sleep 1000");
    let started = Instant::now();
    let out = Command::new(binary())
        .current_dir(d)
        .env("PATH", path_with(&bin))
        .args(["run", "--size", "32", "--steps", "4", "--backend", "cpu"])
        .args(["--video", "v.mp4", "--out", "job"])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(stderr.contains("did not answer"), "{stderr}");
    assert!(started.elapsed() < Duration::from_secs(30));
    let probe = pid_in(&d.join("ffmpeg.pid.probe"));
    assert!(!is_running(probe), "the hung probe {probe} is left running");
}

/// A recorded run whose ffmpeg hangs without reading: its first frame (larger than a pipe
/// holds) blocks the run. Returns the run and the fake ffmpeg's process id.
fn run_with_a_hung_encoder(d: &Path) -> (Child, u32) {
    let bin = fake_ffmpeg(d, "true");
    let child = Command::new(binary())
        .current_dir(d)
        .env("PATH", path_with(&bin))
        .args([
            "run",
            "--size",
            "512",
            "--steps",
            "100000000",
            "--backend",
            "cpu",
        ])
        .args(["--video", "v.mp4", "--video-every", "1", "--out", "job"])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let pid_file = d.join("ffmpeg.pid");
    wait_for("ffmpeg to start", Duration::from_secs(60), || {
        pid_file.exists()
    });
    std::thread::sleep(Duration::from_millis(500));
    (child, pid_in(&pid_file))
}

#[test]
fn the_first_ctrl_c_stops_a_run_whose_ffmpeg_hangs_and_ffmpeg_with_it() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let (mut run, ffmpeg) = run_with_a_hung_encoder(d);
    send(&run, libc::SIGINT);
    let status = wait_with_limit(&mut run, Duration::from_secs(40));
    let stderr = child_stderr(&mut run);
    assert_eq!(status.code(), Some(130), "{stderr}");
    assert!(stderr.contains("ffmpeg did not finish"), "{stderr}");
    assert!(!is_running(ffmpeg), "ffmpeg {ffmpeg} is left running");
    assert_eq!(read_json(&d.join("job/run.json"))["status"], "interrupted");
    assert!(!d.join("v.mp4").exists(), "no unfinished video");
    assert!(hidden_files(d).is_empty() && hidden_files(&d.join("job")).is_empty());
}

#[test]
fn a_second_ctrl_c_leaves_no_ffmpeg_behind() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let (mut run, ffmpeg) = run_with_a_hung_encoder(d);
    send(&run, libc::SIGINT);
    std::thread::sleep(Duration::from_millis(300));
    send(&run, libc::SIGINT);
    let status = wait_with_limit(&mut run, Duration::from_secs(10));
    let stderr = child_stderr(&mut run);
    assert_eq!(status.code(), Some(130), "{stderr}");
    assert!(stderr.contains("1 ffmpeg stopped"), "{stderr}");
    wait_for("ffmpeg to end", Duration::from_secs(5), || {
        !is_running(ffmpeg)
    });
    assert!(hidden_files(d).is_empty() && hidden_files(&d.join("job")).is_empty());
}

#[test]
fn a_screenshot_of_a_field_that_cannot_be_made_fails_at_once() {
    let dir = tempfile::tempdir().unwrap();
    let started = Instant::now();
    // Under an 8 GB limit: a 60000² field is 13.4 GiB a copy.
    let out = Command::new("sh")
        .current_dir(dir.path())
        .arg("-c")
        .arg(format!(
            "ulimit -v 8000000 && exec '{}' gui --screenshot shot.png --size 60000 --timeout 300",
            binary().display()
        ))
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains("60000x60000 field of the screenshot") && stderr.contains("MiB"),
        "{stderr}"
    );
    assert!(started.elapsed() < Duration::from_secs(20));
    assert!(!dir.path().join("shot.png").exists());
}

/// Resident memory of the process `pid`, in KiB.
fn rss_kib(pid: u32) -> Option<u64> {
    let status = fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    status
        .lines()
        .find_map(|line| line.strip_prefix("VmRSS:"))
        .and_then(|rest| rest.trim().trim_end_matches("kB").trim().parse().ok())
}

#[test]
fn memory_stays_flat_over_many_recorded_chunks() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    // 30000 chunks, each with a GIF frame; every 100th with a PNG and .npy frame.
    let mut run = spawn(
        d,
        &[
            "run",
            "--size",
            "24",
            "--steps",
            "300000",
            "--chunk",
            "10",
            "--backend",
            "cpu",
            "--video",
            "v.gif",
            "--video-every",
            "10",
            // One pixel a cell: 30000 frames of the small field enlarged would be slow to encode.
            "--video-size",
            "24",
            "--save-every",
            "1000",
            "--npy",
            "--out",
            "job",
        ],
    );
    let mut samples = Vec::new();
    while run.try_wait().unwrap().is_none() {
        if let Some(rss) = rss_kib(run.id()) {
            samples.push(rss);
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    let stderr = child_stderr(&mut run);
    assert!(run.wait().unwrap().success(), "{stderr}");
    assert!(samples.len() >= 20, "too short to sample: {samples:?}");
    let third = samples.len() / 3;
    let early = samples[third];
    let late = samples[2 * third..].iter().copied().max().unwrap();
    assert!(
        late <= early + 1024,
        "resident memory grew from {early} KiB to {late} KiB ({} samples)",
        samples.len()
    );
}
