//! The command line when the outside world fails: signals, full disks and devices, closed
//! pipes, symbolic links, FIFOs, reused folders, memory limits. Every test runs the real
//! binary (`HEATLAB_BIN` when set, else Cargo's) from a temporary folder.

// Its helpers unwrap like its tests: a failure there is the test's failure, with its message.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "test helpers; clippy's allow-*-in-tests covers #[test] functions only"
)]

use crate::common;

use common::cli::{assert_no_temporary_files, names_in, read_json, stderr_of};
use common::process::{child_stderr, send, spawn, wait_for, wait_with_limit};
use common::{heatlab_binary as binary, heatlab_in as heatlab};
use std::fs;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

fn assert_no_panic(stderr: &str) {
    assert!(!stderr.contains("panicked"), "panicked: {stderr}");
}

/// A run far too long to finish in a test, in chunks that take many seconds each, so that a
/// prompt stop proves the chunks are split.
const ENDLESS_RUN: [&str; 10] = [
    "run",
    "--size",
    "256",
    "--steps",
    "100000000",
    "--chunk",
    "10000000",
    "--backend",
    "cpu",
    "--npy",
];

fn stop_a_run_with(signal: i32, name: &str, expected_status: i32) {
    let dir = tempfile::tempdir().unwrap();
    let mut args = ENDLESS_RUN.to_vec();
    args.extend(["--out", "job"]);
    let mut child = spawn(dir.path(), &args);
    let job = dir.path().join("job");
    // The first frame is written before the stepping starts.
    wait_for("the first frame", Duration::from_secs(60), || {
        job.join("laplacian_000000.npy").exists()
    });
    std::thread::sleep(Duration::from_millis(700));
    send(&child, signal);
    let signalled = Instant::now();
    let status = wait_with_limit(&mut child, Duration::from_secs(30));
    let stop_took = signalled.elapsed();
    let stderr = child_stderr(&mut child);
    assert_no_panic(&stderr);
    assert_eq!(status.code(), Some(expected_status), "{stderr}");
    assert!(
        stop_took < Duration::from_secs(5),
        "a stop must not wait for the chunk's end: {stop_took:?}"
    );
    assert!(
        stderr.contains(&format!("interrupted by {name}")),
        "{stderr}"
    );

    let summary = read_json(&job.join("run.json"));
    assert_eq!(summary["status"], "interrupted");
    assert_eq!(summary["reason"], format!("interrupted by {name}"));
    let steps = summary["steps_completed"].as_u64().unwrap();
    assert!(steps > 0 && steps < 100_000_000, "{steps}");
    let csv = fs::read_to_string(job.join("timings.csv")).unwrap();
    let mut lines = csv.lines();
    assert!(lines
        .next()
        .unwrap()
        .starts_with("operation,step_start,steps"));
    let timed: u64 = lines
        .map(|line| line.split(',').nth(2).unwrap().parse::<u64>().unwrap())
        .sum();
    assert_eq!(timed, steps, "every step taken is in timings.csv:\n{csv}");
    assert_no_temporary_files(&job);
}

#[test]
fn sigint_stops_a_run_promptly_and_keeps_its_record() {
    stop_a_run_with(libc::SIGINT, "SIGINT", 130);
}

#[test]
fn sigterm_stops_a_run_promptly_and_keeps_its_record() {
    stop_a_run_with(libc::SIGTERM, "SIGTERM", 143);
}

#[test]
fn a_second_signal_exits_at_once_and_removes_temporary_files() {
    let dir = tempfile::tempdir().unwrap();
    // Every step saves four large files: most of the time is spent inside a write.
    let mut child = spawn(
        dir.path(),
        &[
            "run",
            "--size",
            "1500",
            "--steps",
            "1000000",
            "--save-every",
            "1",
            "--npy",
            "--backend",
            "cpu",
            "--out",
            "job",
        ],
    );
    let job = dir.path().join("job");
    wait_for("the first frame", Duration::from_secs(60), || {
        job.join("laplacian_000000.npy").exists()
    });
    send(&child, libc::SIGTERM);
    std::thread::sleep(Duration::from_millis(30));
    send(&child, libc::SIGTERM);
    let status = wait_with_limit(&mut child, Duration::from_secs(10));
    let stderr = child_stderr(&mut child);
    assert_no_panic(&stderr);
    assert_eq!(status.code(), Some(143), "{stderr}");
    // Either the second signal cut the run short, or the first one had already stopped it.
    assert!(
        stderr.contains("SIGTERM again: stopping now") || job.join("run.json").exists(),
        "{stderr}"
    );
    assert_no_temporary_files(&job);
}

#[test]
fn a_signal_stops_a_tutorial_kernel_with_its_status() {
    let dir = tempfile::tempdir().unwrap();
    let mut child = spawn(
        dir.path(),
        &[
            "kernel",
            "mc-pi",
            "--n",
            "1e12",
            "--repeat",
            "50",
            "--backend",
            "cpu",
        ],
    );
    std::thread::sleep(Duration::from_millis(1500));
    send(&child, libc::SIGINT);
    let status = wait_with_limit(&mut child, Duration::from_secs(10));
    let stderr = child_stderr(&mut child);
    assert_no_panic(&stderr);
    assert_eq!(status.code(), Some(130), "{stderr}");
    assert!(stderr.contains("interrupted by SIGINT"), "{stderr}");
}

#[test]
fn a_failed_export_still_leaves_the_record() {
    let dir = tempfile::tempdir().unwrap();
    let out = Command::new(binary())
        .current_dir(dir.path())
        .env("HEATLAB_TEST_FAIL_WRITE", "field_000020.npy")
        .args([
            "run",
            "--size",
            "40",
            "--steps",
            "50",
            "--save-every",
            "10",
            "--npy",
            "--backend",
            "cpu",
            "--out",
            "job",
        ])
        .output()
        .unwrap();
    let stderr = stderr_of(&out);
    assert_no_panic(&stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(stderr.contains("No space left on device"), "{stderr}");
    assert!(stderr.contains("field_000020.npy"), "{stderr}");
    let job = dir.path().join("job");
    let summary = read_json(&job.join("run.json"));
    assert_eq!(summary["status"], "failed");
    let reason = summary["reason"].as_str().unwrap();
    assert!(reason.contains("field_000020.npy") && reason.contains("No space left"));
    assert_eq!(summary["steps_completed"], 20);
    let csv = fs::read_to_string(job.join("timings.csv")).unwrap();
    assert_eq!(csv.lines().count(), 1 + 2, "two chunks were timed:\n{csv}");
    assert!(!job.join("field_000020.npy").exists());
    assert_no_temporary_files(&job);
}

#[test]
fn when_the_record_cannot_be_written_either_the_message_says_so() {
    let dir = tempfile::tempdir().unwrap();
    let out = Command::new(binary())
        .current_dir(dir.path())
        .env("HEATLAB_TEST_FAIL_WRITE", "field_000000.png,run.json")
        .args(["run", "--size", "24", "--steps", "5", "--backend", "cpu"])
        .args(["--out", "job"])
        .output()
        .unwrap();
    let stderr = stderr_of(&out);
    assert_no_panic(&stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(stderr.contains("record could not be written"), "{stderr}");
    let job = dir.path().join("job");
    assert!(job.join("timings.csv").exists(), "timings.csv had room");
    assert!(!job.join("run.json").exists());
    assert_no_temporary_files(&job);
}

#[test]
fn full_devices_are_errors_and_stay_devices() {
    let full = Path::new("/dev/full");
    if !full.exists() {
        eprintln!("skipping: this machine has no /dev/full");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let bench = heatlab(
        dir.path(),
        &[
            "bench",
            "--sizes",
            "16",
            "--repeats",
            "1",
            "--seconds",
            "0.01",
            "--no-numpy",
            "--no-field",
            "--backend",
            "cpu",
            "--json",
            "/dev/full",
        ],
    );
    let stderr = stderr_of(&bench);
    assert_no_panic(&stderr);
    assert_eq!(bench.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains("writing /dev/full: No space left on device"),
        "{stderr}"
    );
    assert!(!stderr.contains("wrote /dev/full"), "{stderr}");
    let timings = heatlab(
        dir.path(),
        &[
            "kernel",
            "mc-pi",
            "--n",
            "1000",
            "--repeat",
            "1",
            "--backend",
            "cpu",
            "--timings",
            "/dev/full",
        ],
    );
    assert_eq!(timings.status.code(), Some(1), "{}", stderr_of(&timings));
    use std::os::unix::fs::FileTypeExt;
    assert!(fs::metadata(full).unwrap().file_type().is_char_device());

    // Standard output on a full device: one line, status 1.
    let printed = Command::new(binary())
        .current_dir(dir.path())
        .args(["kernel", "hidden-layer", "--n", "1000", "--repeat", "1"])
        .args(["--backend", "cpu"])
        .stdout(fs::File::create(full).unwrap())
        .output()
        .unwrap();
    let stderr = stderr_of(&printed);
    assert_no_panic(&stderr);
    assert_eq!(printed.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains("error: writing to standard output: No space left on device"),
        "{stderr}"
    );
}

#[test]
fn a_closed_pipe_ends_quietly_with_status_141() {
    let dir = tempfile::tempdir().unwrap();
    for args in [
        &[
            "kernel",
            "hidden-layer",
            "--n",
            "100000",
            "--repeat",
            "3",
            "--backend",
            "cpu",
        ][..],
        &["--help"][..],
    ] {
        // The only reader is gone before heatlab starts: with a reader dropped after the spawn,
        // a fast machine prints the help into the pipe's buffer first and exits 0.
        let (reader, writer) = std::io::pipe().unwrap();
        drop(reader);
        let mut child = Command::new(binary())
            .current_dir(dir.path())
            .args(args)
            .stdout(writer)
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let status = wait_with_limit(&mut child, Duration::from_secs(60));
        let stderr = child_stderr(&mut child);
        assert_no_panic(&stderr);
        assert_eq!(status.code(), Some(141), "{args:?}: {stderr}");
        assert!(!stderr.contains("error"), "{args:?}: quiet, but {stderr}");
    }
}

#[test]
fn symbolic_links_are_written_through_and_folders_refused() {
    let dir = tempfile::tempdir().unwrap();
    fs::create_dir(dir.path().join("logs")).unwrap();
    fs::write(dir.path().join("logs/real.csv"), b"old").unwrap();
    std::os::unix::fs::symlink("logs/real.csv", dir.path().join("link.csv")).unwrap();
    let kernel = |timings: &str| {
        heatlab(
            dir.path(),
            &[
                "kernel",
                "mc-pi",
                "--n",
                "1000",
                "--repeat",
                "2",
                "--backend",
                "cpu",
                "--timings",
                timings,
            ],
        )
    };
    let through_link = kernel("link.csv");
    assert!(
        through_link.status.success(),
        "{}",
        stderr_of(&through_link)
    );
    let link = fs::symlink_metadata(dir.path().join("link.csv")).unwrap();
    assert!(link.file_type().is_symlink(), "the link stays a link");
    let csv = fs::read_to_string(dir.path().join("logs/real.csv")).unwrap();
    assert!(csv.starts_with("operation,"), "{csv}");
    assert_eq!(names_in(&dir.path().join("logs")), ["real.csv"]);

    let folder = kernel("logs");
    let stderr = stderr_of(&folder);
    assert_eq!(folder.status.code(), Some(1), "{stderr}");
    assert!(stderr.contains("is a folder"), "{stderr}");
    assert!(dir.path().join("logs").is_dir());
}

#[test]
fn a_fifo_is_written_in_place_for_its_reader() {
    let dir = tempfile::tempdir().unwrap();
    let fifo = dir.path().join("timings.fifo");
    let c_path = std::ffi::CString::new(fifo.to_str().unwrap()).unwrap();
    // SAFETY: mkfifo(3) with a NUL-terminated path and a mode.
    assert_eq!(unsafe { libc::mkfifo(c_path.as_ptr(), 0o644) }, 0);
    let reader_path = fifo.clone();
    let reader = std::thread::spawn(move || fs::read_to_string(reader_path).unwrap());
    let out = heatlab(
        dir.path(),
        &[
            "kernel",
            "mc-pi",
            "--n",
            "1000",
            "--repeat",
            "2",
            "--backend",
            "cpu",
            "--timings",
            "timings.fifo",
        ],
    );
    assert!(out.status.success(), "{}", stderr_of(&out));
    let received = reader.join().unwrap();
    assert!(received.starts_with("operation,step_start"), "{received}");
    use std::os::unix::fs::FileTypeExt;
    assert!(fs::symlink_metadata(&fifo).unwrap().file_type().is_fifo());
    assert_eq!(names_in(dir.path()), ["timings.fifo"]);
}

#[test]
fn a_folder_with_another_run_needs_overwrite() {
    let dir = tempfile::tempdir().unwrap();
    let run = |extra: &[&str]| {
        let mut args = vec!["run", "--size", "24", "--steps", "4", "--backend", "cpu"];
        args.extend_from_slice(extra);
        args.extend(["--out", "job"]);
        heatlab(dir.path(), &args)
    };
    let job = dir.path().join("job");
    assert!(run(&["--npy", "--seed", "1"]).status.success());
    fs::write(job.join("notes.txt"), b"mine").unwrap();
    let first = fs::read(job.join("run.json")).unwrap();

    let refused = run(&["--seed", "2"]);
    let stderr = stderr_of(&refused);
    assert_eq!(refused.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains("already holds the files of another run"),
        "{stderr}"
    );
    assert!(stderr.contains("--overwrite"), "{stderr}");
    assert_eq!(fs::read(job.join("run.json")).unwrap(), first, "untouched");

    let replaced = run(&["--seed", "2", "--overwrite"]);
    assert!(replaced.status.success(), "{}", stderr_of(&replaced));
    assert_eq!(
        read_json(&job.join("run.json"))["parameters"]["field"]["seed"],
        2
    );
    assert_eq!(
        names_in(&job),
        [
            "field_000000.png",
            "field_000004.png",
            "laplacian_000000.png",
            "laplacian_000004.png",
            "notes.txt",
            "run.json",
            "timings.csv"
        ],
        "the first run's arrays are gone, the user's file stays"
    );
}

#[test]
fn a_memory_limit_below_the_fields_needs_is_a_message() {
    let dir = tempfile::tempdir().unwrap();
    let script = format!(
        "ulimit -v 400000 && exec '{}' run --size 6000 --steps 1 --backend cpu --out job",
        binary().display()
    );
    let out = Command::new("sh")
        .current_dir(dir.path())
        .args(["-c", &script])
        .output()
        .unwrap();
    let stderr = stderr_of(&out);
    assert_no_panic(&stderr);
    assert_eq!(out.status.code(), Some(1), "not a signal: {stderr}");
    assert!(stderr.contains("MiB but only"), "{stderr}");
    let summary = read_json(&dir.path().join("job/run.json"));
    assert_eq!(summary["status"], "failed");
}

#[test]
fn zero_steps_time_nothing_and_say_so() {
    let dir = tempfile::tempdir().unwrap();
    let out = heatlab(
        dir.path(),
        &[
            "run",
            "--size",
            "16",
            "--steps",
            "0",
            "--backend",
            "cpu",
            "--out",
            "job",
        ],
    );
    let stderr = stderr_of(&out);
    assert!(out.status.success(), "{stderr}");
    assert!(stderr.contains("0 steps in 0.000 s"), "{stderr}");
    assert!(!stderr.contains("-0.000"), "{stderr}");
    let csv = fs::read_to_string(dir.path().join("job/timings.csv")).unwrap();
    assert_eq!(csv.lines().count(), 1, "the header alone: {csv}");
    assert!(csv.starts_with("operation,step_start,steps,backend"));
}

#[test]
fn a_field_that_is_zero_everywhere_gives_a_warning() {
    let dir = tempfile::tempdir().unwrap();
    let out = heatlab(
        dir.path(),
        &[
            "run",
            "--size",
            "32",
            "--steps",
            "2",
            "--exponent",
            "-2000",
            "--backend",
            "cpu",
            "--out",
            "job",
        ],
    );
    let stderr = stderr_of(&out);
    assert!(out.status.success(), "{stderr}");
    assert!(
        stderr.contains("warning: the generated field is zero everywhere"),
        "{stderr}"
    );
    let usual = heatlab(
        dir.path(),
        &[
            "run",
            "--size",
            "32",
            "--steps",
            "2",
            "--backend",
            "cpu",
            "--out",
            "usual",
        ],
    );
    assert!(!stderr_of(&usual).contains("zero everywhere"));
}

#[test]
fn counts_beyond_u64_are_too_large_not_saturated() {
    let dir = tempfile::tempdir().unwrap();
    for n in ["18446744073709551616", "1e30"] {
        let out = heatlab(dir.path(), &["kernel", "mc-pi", "--n", n]);
        let stderr = stderr_of(&out);
        assert_eq!(out.status.code(), Some(2), "{stderr}");
        assert!(stderr.contains("too large"), "{n}: {stderr}");
        assert!(!stderr.contains("not a whole number"), "{n}: {stderr}");
    }
    let fraction = heatlab(dir.path(), &["kernel", "mc-pi", "--n", "2.5"]);
    assert!(stderr_of(&fraction).contains("not a whole number"));
}
