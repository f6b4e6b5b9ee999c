//! `heatlab run --save-state / --resume / --initial` as a user runs them: a resumed run is bit
//! for bit the run that never stopped, and bad files (the ones a new user would try) are
//! refused with a clear message before anything is written. Every test runs the real binary
//! (`HEATLAB_BIN` when set) from a temporary folder.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "test helpers; clippy's allow-*-in-tests covers #[test] functions only"
)]

use crate::common;
use common::backend::cuda_or_skip;

use common::cli::{stderr_of, succeeded};
use common::{heatlab_binary as binary, heatlab_in as heatlab};
use std::fs;
use std::path::Path;
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use heatlab_engine::export::read_npy;
use heatlab_engine::Grid;

fn refused(dir: &Path, args: &[&str], expected: &str) {
    let output = heatlab(dir, args);
    let stderr = stderr_of(&output);
    // 1 for a bad file, 2 for a usage error (clap's).
    assert!(
        matches!(output.status.code(), Some(1 | 2)),
        "{args:?}: {stderr}"
    );
    assert!(stderr.contains(expected), "{args:?}: stderr was {stderr}");
    assert!(!stderr.contains("panicked"), "{args:?} panicked: {stderr}");
}

fn field(dir: &Path, out: &str, step: u64) -> Grid {
    read_npy(&fs::read(dir.join(out).join(format!("field_{step:06}.npy"))).unwrap()).unwrap()
}

fn bits(grid: &Grid) -> Vec<u32> {
    grid.as_slice().iter().map(|v| v.to_bits()).collect()
}

const BASE: [&str; 12] = [
    "run",
    "--size",
    "67x45",
    "--backend",
    "cpu",
    "--coeff",
    "0.23",
    "--boundary",
    "periodic",
    "--npy",
    "--chunk",
    "7",
];

fn run(dir: &Path, extra: &[&str]) -> Output {
    let mut args = BASE.to_vec();
    args.extend_from_slice(extra);
    heatlab(dir, &args)
}

#[test]
fn a_resumed_run_is_bit_for_bit_the_run_that_never_stopped() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    succeeded(&run(d, &["--steps", "50", "--out", "whole"]));
    succeeded(&run(
        d,
        &[
            "--steps",
            "25",
            "--out",
            "first",
            "--save-state",
            "at25.hls",
        ],
    ));
    // The resumed run takes its coefficient and boundary from the state, not the defaults.
    let resumed = heatlab(
        d,
        &[
            "run",
            "--resume",
            "at25.hls",
            "--steps",
            "25",
            "--backend",
            "cpu",
            "--npy",
            "--out",
            "second",
        ],
    );
    succeeded(&resumed);
    let stderr = stderr_of(&resumed);
    assert!(stderr.contains("resuming 67x45 at step 25"), "{stderr}");
    assert!(stderr.contains("coeff 0.23, periodic"), "{stderr}");
    let (whole, second) = (field(d, "whole", 50), field(d, "second", 50));
    assert_eq!(bits(&whole), bits(&second));
    assert_eq!(bits(&field(d, "first", 25)), bits(&field(d, "second", 25)));
    let summary: serde_json::Value =
        serde_json::from_str(&fs::read_to_string(d.join("second/run.json")).unwrap()).unwrap();
    assert_eq!(summary["steps_completed"], 50);
    assert_eq!(summary["parameters"]["start_step"], 25);
}

#[test]
fn an_interrupted_run_saves_its_state_and_resumes_from_it() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let child = Command::new(binary())
        .current_dir(d)
        .args([
            "run",
            "--size",
            "300x200",
            "--steps",
            "100000000",
            "--backend",
            "cpu",
            "--out",
            "long",
            "--save-state",
            "stopped.hls",
        ])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let started = Instant::now();
    while !d.join("long/field_000000.png").exists() {
        assert!(
            started.elapsed() < Duration::from_secs(60),
            "no first frame"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    std::thread::sleep(Duration::from_millis(500));
    let pid = libc::pid_t::try_from(child.id()).unwrap();
    // SAFETY: kill(2) with a child's pid and a plain signal number has no memory effects.
    assert_eq!(unsafe { libc::kill(pid, libc::SIGINT) }, 0);
    let output = child.wait_with_output().unwrap();
    let stderr = stderr_of(&output);
    assert_eq!(output.status.code(), Some(130), "{stderr}");
    assert!(stderr.contains("saved the state at step"), "{stderr}");
    let summary: serde_json::Value =
        serde_json::from_str(&fs::read_to_string(d.join("long/run.json")).unwrap()).unwrap();
    assert_eq!(summary["status"], "interrupted");
    let stopped = summary["steps_completed"].as_u64().unwrap();
    assert!(summary["files"]
        .as_array()
        .unwrap()
        .iter()
        .any(|f| f == "stopped.hls"));
    assert!(fs::read_dir(d).unwrap().all(|e| !e
        .unwrap()
        .file_name()
        .to_string_lossy()
        .starts_with(".heatlab-")));
    // Resuming it continues from that step.
    let resumed = heatlab(
        d,
        &[
            "run",
            "--resume",
            "stopped.hls",
            "--steps",
            "3",
            "--backend",
            "cpu",
            "--npy",
            "--out",
            "more",
        ],
    );
    succeeded(&resumed);
    assert!(d
        .join("more")
        .join(format!("field_{:06}.npy", stopped + 3))
        .exists());
}

#[test]
fn bad_state_files_are_refused_with_a_reason() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    succeeded(&run(
        d,
        &["--steps", "3", "--out", "a", "--save-state", "good.hls"],
    ));
    let good = fs::read(d.join("good.hls")).unwrap();
    let mut newer = good.clone();
    newer[8..12].copy_from_slice(&7u32.to_le_bytes());
    fs::write(d.join("newer.hls"), &newer).unwrap();
    fs::write(d.join("cut.hls"), &good[..good.len() / 2]).unwrap();
    let mut flipped = good.clone();
    let middle = good.len() - 100;
    flipped[middle] ^= 1;
    fs::write(d.join("flipped.hls"), &flipped).unwrap();
    fs::write(d.join("empty.hls"), b"").unwrap();
    fs::copy(d.join("a/field_000000.png"), d.join("picture.hls")).unwrap();
    let resume = |file: &str, expected: &str| {
        refused(
            d,
            &[
                "run",
                "--resume",
                file,
                "--backend",
                "cpu",
                "--out",
                "never",
            ],
            expected,
        );
    };
    resume(
        "newer.hls",
        "saved by a newer heatlab (state format version 7",
    );
    resume("cut.hls", "truncated");
    resume("flipped.hls", "checksum does not match");
    resume("empty.hls", "not a heatlab state file");
    resume("picture.hls", "not a heatlab state file");
    resume("missing.hls", "missing.hls");
    assert!(
        !d.join("never").exists(),
        "nothing is written for a bad file"
    );
    // --initial and --resume are one or the other.
    refused(
        d,
        &["run", "--resume", "good.hls", "--initial", "x.npy"],
        "cannot be used with",
    );
}

/// A `.npy` file in NumPy's own layout.
fn npy(descr: &str, fortran: bool, shape: &str, data: &[u8]) -> Vec<u8> {
    crate::common::npy_bytes(descr, fortran, shape, data)
}

#[test]
fn runs_start_from_arrays_and_images() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    // A float64 array in Fortran order: column-major values of [[0, 1, 2], [3, 4, 5]].
    let values: Vec<u8> = [0.0f64, 3., 1., 4., 2., 5.]
        .iter()
        .flat_map(|v| v.to_le_bytes())
        .collect();
    fs::write(d.join("f.npy"), npy("<f8", true, "(2, 3)", &values)).unwrap();
    let output = heatlab(
        d,
        &[
            "run",
            "--initial",
            "f.npy",
            "--steps",
            "0",
            "--backend",
            "cpu",
            "--npy",
            "--out",
            "npy",
        ],
    );
    succeeded(&output);
    assert!(stderr_of(&output).contains("initial field: 2x3 from f.npy"));
    assert_eq!(field(d, "npy", 0).as_slice(), &[0., 1., 2., 3., 4., 5.]);
    // A grey image: black and white become the range's ends.
    let mut rgb = vec![0u8; 4 * 3 * 3];
    rgb[3..6].copy_from_slice(&[255, 255, 255]);
    heatlab_engine::export::write_png_rgb(&d.join("g.png"), 4, 3, &rgb).unwrap();
    succeeded(&heatlab(
        d,
        &[
            "run",
            "--initial",
            "g.png",
            "--initial-range",
            "-2,6",
            "--steps",
            "0",
            "--backend",
            "cpu",
            "--npy",
            "--out",
            "png",
        ],
    ));
    let grid = field(d, "png", 0);
    assert_eq!((grid.rows(), grid.cols()), (3, 4));
    assert_eq!(&grid.as_slice()[..3], &[-2.0, 6.0, -2.0]);
}

#[test]
fn bad_initial_files_are_refused_as_a_new_user_meets_them() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    fs::write(
        d.join("cube.npy"),
        npy("<f4", false, "(2, 2, 2)", &[0u8; 32]),
    )
    .unwrap();
    fs::write(d.join("ints.npy"), npy("<i4", false, "(2, 2)", &[0u8; 16])).unwrap();
    let nan: Vec<u8> = [1.0f32, f32::NAN]
        .iter()
        .flat_map(|v| v.to_le_bytes())
        .collect();
    fs::write(d.join("nan.npy"), npy("<f4", false, "(1, 2)", &nan)).unwrap();
    fs::write(d.join("huge.npy"), npy("<f4", false, "(60000, 60000)", &[])).unwrap();
    fs::write(d.join("notes.png"), "these are my notes\n").unwrap();
    fs::write(d.join("empty.npy"), b"").unwrap();
    let cases = [
        ("cube.npy", "3-D array"),
        ("ints.npy", "float32 or float64"),
        ("nan.npy", "non-finite value"),
        ("notes.png", "is named .png but is not a PNG image"),
        ("empty.npy", "is empty"),
        ("nowhere.npy", "nowhere.npy"),
        ("--initial-range", "LO,HI"),
    ];
    for (file, expected) in cases {
        let mut args = vec!["run", "--backend", "cpu", "--out", "never", "--initial"];
        if file == "--initial-range" {
            args.extend(["cube.npy", "--initial-range", "1"]);
        } else {
            args.push(file);
        }
        refused(d, &args, expected);
    }
    // Larger than the memory there is (a 60000² field needs 13.4 GiB, under a 2 GiB limit).
    let limited = Command::new("sh")
        .current_dir(d)
        .arg("-c")
        .arg(format!(
            "ulimit -v 2000000 && exec '{}' run --backend cpu --out never --initial huge.npy",
            binary().display()
        ))
        .output()
        .unwrap();
    let stderr = stderr_of(&limited);
    assert_eq!(limited.status.code(), Some(1), "{stderr}");
    assert!(stderr.contains("MiB"), "{stderr}");
    assert!(!stderr.contains("panicked"), "{stderr}");
    assert!(
        !d.join("never").exists(),
        "nothing is written for a bad file"
    );
}

#[test]
fn a_state_saved_on_the_gpu_resumes_on_the_cpu_and_back_bit_for_bit() {
    if cuda_or_skip!().is_none() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let on = |backend: &'static str, extra: &[&str]| {
        // A resumed run takes its size from the state (--size is refused with --resume).
        let size: &[&str] = if extra.contains(&"--resume") {
            &[]
        } else {
            &["--size", "333x517"]
        };
        let mut args = vec!["run"];
        args.extend_from_slice(size);
        args.extend_from_slice(&[
            "--coeff",
            "0.22",
            "--boundary",
            "neumann",
            "--npy",
            "--chunk",
            "77",
            "--backend",
            backend,
        ]);
        args.extend_from_slice(extra);
        succeeded(&heatlab(d, &args));
    };
    on("cuda", &["--steps", "600", "--out", "whole"]);
    on(
        "cuda",
        &["--steps", "300", "--out", "a", "--save-state", "gpu.hls"],
    );
    on(
        "cpu",
        &[
            "--resume",
            "gpu.hls",
            "--steps",
            "300",
            "--out",
            "b",
            "--save-state",
            "cpu.hls",
        ],
    );
    on(
        "cuda",
        &["--resume", "cpu.hls", "--steps", "0", "--out", "c"],
    );
    let whole = field(d, "whole", 600);
    assert_eq!(bits(&whole), bits(&field(d, "b", 600)));
    assert_eq!(bits(&whole), bits(&field(d, "c", 600)));
}
