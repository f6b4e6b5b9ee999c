//! The command line's input from the outside world: images and arrays whose headers claim more
//! than their data or the memory holds, saved states from pipes and FIFOs, states at the end of
//! the step count or with hostile names, options that a resumed run would ignore, devices that
//! never end. Every test runs the real binary (`HEATLAB_BIN` when set) from a temporary folder.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "test helpers; clippy's allow-*-in-tests covers #[test] functions only"
)]

use crate::common;

use common::cli::stderr_of;
use common::process::{child_stderr, spawn, wait_with_limit};
use common::{heatlab_binary as binary, heatlab_in as heatlab};
use std::fs;
use std::io::Write;
use std::path::Path;
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use heatlab_engine::compute::{Boundary, StepParams};
use heatlab_engine::state::{FieldOrigin, SavedState};
use heatlab_engine::{Grid, GridSize};

fn assert_refused(output: &Output, expected: &str) {
    let stderr = stderr_of(output);
    assert!(!stderr.contains("panicked"), "{stderr}");
    assert_eq!(output.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains(expected),
        "expected {expected:?} in: {stderr}"
    );
}

/// Runs the binary under an address-space limit of `kib` KiB (`ulimit -v`).
fn heatlab_limited(dir: &Path, kib: u64, args: &[&str]) -> Output {
    let quoted: Vec<String> = args.iter().map(|a| format!("'{a}'")).collect();
    Command::new("sh")
        .current_dir(dir)
        .arg("-c")
        .arg(format!(
            "ulimit -v {kib} && exec '{}' {}",
            binary().display(),
            quoted.join(" ")
        ))
        .output()
        .unwrap()
}

fn jpeg(width: u32, height: u32) -> Vec<u8> {
    let pixels: Vec<u8> = (0..width * height * 3)
        .map(|i| (i.wrapping_mul(2_654_435_761) >> 24) as u8)
        .collect();
    let mut bytes = Vec::new();
    image::codecs::jpeg::JpegEncoder::new_with_quality(&mut bytes, 90)
        .encode(&pixels, width, height, image::ExtendedColorType::Rgb8)
        .unwrap();
    bytes
}

/// A state of a small field at `step`, imported from a file named `origin`.
fn state(step: u64, origin: &str) -> SavedState {
    let size = GridSize::new(9, 7).unwrap();
    let field = |salt: f32| {
        let values = (0..size.cells())
            .map(|i| (i as f32 * 0.37 + salt).sin())
            .collect();
        Grid::from_vec(size, values).unwrap()
    };
    SavedState {
        current: field(0.5),
        initial: field(0.0),
        step,
        params: StepParams {
            coeff: 0.2,
            boundary: Boundary::Neumann,
        },
        origin: FieldOrigin::Imported {
            file: origin.to_string(),
        },
        problem: None,
    }
}

const RUN: [&str; 6] = ["run", "--backend", "cpu", "--steps", "10", "--npy"];

fn run(dir: &Path, extra: &[&str]) -> Output {
    let mut args = RUN.to_vec();
    args.extend_from_slice(extra);
    heatlab(dir, &args)
}

#[test]
fn a_jpeg_cut_short_is_refused_as_a_png_is() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let whole = jpeg(96, 64);
    fs::write(d.join("whole.jpg"), &whole).unwrap();
    fs::write(d.join("half.jpg"), &whole[..whole.len() / 2]).unwrap();
    let out = run(d, &["--initial", "whole.jpg", "--out", "whole"]);
    assert!(out.status.success(), "{}", stderr_of(&out));
    let out = run(d, &["--initial", "half.jpg", "--out", "half"]);
    assert_refused(&out, "cut short");
    assert!(
        !d.join("half").exists(),
        "nothing is written for a bad file"
    );
}

#[test]
fn a_small_jpeg_claiming_a_huge_image_is_refused_before_decoding() {
    let dir = tempfile::tempdir().unwrap();
    let mut bytes = jpeg(16, 16);
    // The baseline frame header (FF C0, length, precision) is followed by height and width.
    let sof = bytes.windows(2).position(|w| w == [0xFF, 0xC0]).unwrap();
    bytes[sof + 5..sof + 9].copy_from_slice(&[0x4E, 0x20, 0x4E, 0x20]); // 20000 x 20000
    fs::write(dir.path().join("huge.jpg"), &bytes).unwrap();
    let started = Instant::now();
    let out = heatlab_limited(
        dir.path(),
        2_000_000,
        &[
            "run",
            "--backend",
            "cpu",
            "--initial",
            "huge.jpg",
            "--out",
            "never",
        ],
    );
    assert_refused(&out, "MiB but only");
    assert!(
        stderr_of(&out).contains("20000x20000"),
        "{}",
        stderr_of(&out)
    );
    assert!(
        started.elapsed() < Duration::from_secs(20),
        "decoded first?"
    );
    assert!(!dir.path().join("never").exists());
    // With the memory for it (or where there is not), still no decoding: a few hundred bytes
    // of data cannot hold 400 million pixels.
    let started = Instant::now();
    let out = run(dir.path(), &["--initial", "huge.jpg", "--out", "never"]);
    let stderr = stderr_of(&out);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains("cannot hold the 20000x20000 pixels") || stderr.contains("MiB but only"),
        "{stderr}"
    );
    assert!(
        started.elapsed() < Duration::from_secs(20),
        "decoded first?"
    );
}

/// A `.npy` header of a `rows` x `cols` float32 array, without its data.
fn npy_header(rows: usize, cols: usize) -> Vec<u8> {
    let mut header =
        format!("{{'descr': '<f4', 'fortran_order': False, 'shape': ({rows}, {cols}), }}");
    while (10 + header.len() + 1) % 64 != 0 {
        header.push(' ');
    }
    header.push('\n');
    let mut bytes = b"\x93NUMPY\x01\x00".to_vec();
    bytes.extend_from_slice(&(header.len() as u16).to_le_bytes());
    bytes.extend_from_slice(header.as_bytes());
    bytes
}

#[test]
fn an_array_the_run_has_no_memory_for_is_refused_before_it_is_read() {
    let dir = tempfile::tempdir().unwrap();
    // 256 MB a copy: one fits under the 1 GB limit, the run's seven do not. Its data is
    // missing: read first, it would be refused as cut short instead.
    fs::write(dir.path().join("big.npy"), npy_header(8000, 8000)).unwrap();
    let out = heatlab_limited(
        dir.path(),
        1_000_000,
        &[
            "run",
            "--backend",
            "cpu",
            "--initial",
            "big.npy",
            "--out",
            "never",
        ],
    );
    assert_refused(&out, "MiB but only");
    assert!(
        !stderr_of(&out).contains("cut short"),
        "{}",
        stderr_of(&out)
    );
    assert!(!dir.path().join("never").exists());
}

fn final_field(dir: &Path, out: &str) -> Vec<u8> {
    let mut names: Vec<String> = fs::read_dir(dir.join(out))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with("field_") && n.ends_with(".npy"))
        .collect();
    names.sort();
    fs::read(dir.join(out).join(names.last().unwrap())).unwrap()
}

/// Writes `bytes` into the FIFO at `path` from a thread (the open waits for the reader).
fn feed_fifo(path: &Path, bytes: Vec<u8>) -> std::thread::JoinHandle<()> {
    let path = path.to_path_buf();
    std::thread::spawn(move || {
        if let Ok(mut fifo) = fs::OpenOptions::new().write(true).open(&path) {
            // The reader may stop early (a refused state): a broken pipe is expected then.
            let _ = fifo.write_all(&bytes);
        }
    })
}

fn mkfifo(path: &Path) {
    let status = Command::new("mkfifo").arg(path).status().unwrap();
    assert!(status.success());
}

#[test]
fn a_state_resumes_from_a_pipe_and_a_fifo_and_a_cut_stream_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let saved = state(40, "start.npy");
    saved.save(&d.join("s.heatlab")).unwrap();
    let out = run(d, &["--resume", "s.heatlab", "--out", "file"]);
    assert!(out.status.success(), "{}", stderr_of(&out));
    // bash's process substitution: a pipe whose reported size is 0.
    let piped = Command::new("bash")
        .current_dir(d)
        .arg("-c")
        .arg(format!(
            "exec '{}' run --backend cpu --steps 10 --npy --resume <(cat s.heatlab) --out pipe",
            binary().display()
        ))
        .output()
        .unwrap();
    assert!(piped.status.success(), "{}", stderr_of(&piped));
    assert_eq!(final_field(d, "pipe"), final_field(d, "file"));

    let bytes = fs::read(d.join("s.heatlab")).unwrap();
    let cases = [
        ("whole", bytes.clone(), None),
        ("cut", bytes[..bytes.len() - 30].to_vec(), Some("truncated")),
        (
            "longer",
            [bytes.clone(), b"extra".to_vec()].concat(),
            Some("5 bytes"),
        ),
    ];
    for (name, contents, refusal) in cases {
        let fifo = d.join(format!("{name}.fifo"));
        mkfifo(&fifo);
        let writer = feed_fifo(&fifo, contents);
        let fifo_arg = fifo.to_str().unwrap();
        let out = run(d, &["--resume", fifo_arg, "--out", name]);
        writer.join().unwrap();
        match refusal {
            None => {
                assert!(out.status.success(), "{}", stderr_of(&out));
                assert_eq!(final_field(d, name), final_field(d, "file"));
            }
            Some(expected) => assert_refused(&out, expected),
        }
    }
}

#[test]
fn a_state_at_the_end_of_the_step_count_is_refused_not_completed() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    state(u64::MAX - 3, "a.npy")
        .save(&d.join("end.heatlab"))
        .unwrap();
    let out = run(d, &["--resume", "end.heatlab", "--out", "end"]);
    assert_refused(&out, "largest step count");
    assert!(stderr_of(&out).contains("--steps 3"), "{}", stderr_of(&out));

    // Near the end, but with room: every step is taken, the save points counted to the end.
    let near = u64::MAX - 25;
    state(near, "a.npy").save(&d.join("near.heatlab")).unwrap();
    let out = run(
        d,
        &[
            "--resume",
            "near.heatlab",
            "--save-every",
            "7",
            "--out",
            "near",
        ],
    );
    assert!(out.status.success(), "{}", stderr_of(&out));
    let summary: serde_json::Value =
        serde_json::from_str(&fs::read_to_string(d.join("near/run.json")).unwrap()).unwrap();
    assert_eq!(summary["status"], "completed");
    assert_eq!(summary["steps_completed"].as_u64(), Some(near + 10));
}

#[test]
fn options_a_resumed_run_would_ignore_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    state(5, "a.npy").save(&d.join("s.heatlab")).unwrap();
    for option in [
        ["--size", "64"],
        ["--seed", "2"],
        ["--exponent", "-1.5"],
        ["--initial-range", "0,2"],
    ] {
        let out = run(
            d,
            &["--resume", "s.heatlab", option[0], option[1], "--out", "o"],
        );
        let stderr = stderr_of(&out);
        assert_eq!(out.status.code(), Some(2), "{option:?}: {stderr}");
        assert!(
            stderr.contains("cannot be used with") && stderr.contains(option[0]),
            "{option:?}: {stderr}"
        );
    }
    assert!(!d.join("o").exists());
    // What a resumed run may change is still accepted.
    let out = run(
        d,
        &["--resume", "s.heatlab", "--coeff", "0.1", "--out", "o"],
    );
    assert!(out.status.success(), "{}", stderr_of(&out));
}

#[test]
fn control_characters_in_a_states_origin_are_escaped() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let hostile = "evil\u{1b}]0;owned\u{7}\u{1b}[31mred\r.npy";
    state(5, hostile).save(&d.join("s.heatlab")).unwrap();
    let out = run(d, &["--resume", "s.heatlab", "--out", "o"]);
    let stderr = stderr_of(&out);
    assert!(out.status.success(), "{stderr}");
    assert!(
        !stderr.contains('\u{1b}') && !stderr.contains('\u{7}') && !stderr.contains('\r'),
        "raw control characters reached the terminal: {stderr:?}"
    );
    assert!(stderr.contains("evil\\u{1b}]0;owned\\u{7}"), "{stderr}");
}

#[test]
fn verify_checks_its_report_path_before_running() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    fs::write(d.join("notes.txt"), "a file, not a folder").unwrap();
    for json in [".", "notes.txt/report.json"] {
        let started = Instant::now();
        let out = heatlab(
            d,
            &[
                "verify",
                "--backend",
                "cpu",
                "--sequences",
                "100000",
                "--quiet",
                "--json",
                json,
            ],
        );
        assert_eq!(out.status.code(), Some(1), "{}", stderr_of(&out));
        assert!(stderr_of(&out).contains("--json"), "{}", stderr_of(&out));
        assert!(
            started.elapsed() < Duration::from_secs(20),
            "the sequences ran first"
        );
    }
}

#[test]
fn lab_check_reads_its_files_with_a_bound() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    fs::write(d.join("k.cu"), "// a kernel\n").unwrap();
    for (args, expected) in [
        (vec!["--source", "/dev/zero"], "longer than 1024 KiB"),
        (vec!["--source", "k.cu", "--field", "/dev/zero"], "neither"),
    ] {
        let mut all = vec!["lab-check"];
        all.extend(args);
        let mut child = Command::new(binary())
            .current_dir(d)
            .args(&all)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let status = wait_with_limit(&mut child, Duration::from_secs(20));
        let mut said = String::new();
        std::io::Read::read_to_string(&mut child.stdout.take().unwrap(), &mut said).unwrap();
        assert_eq!(status.code(), Some(1), "{all:?}: {said}");
        assert!(said.contains(expected), "{all:?}: {said}");
    }
}

#[test]
fn sigterm_stops_a_run_waiting_for_a_fifo_with_no_writer() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    mkfifo(&d.join("never.fifo"));
    let mut child = spawn(d, &["run", "--resume", "never.fifo", "--out", "job"]);
    std::thread::sleep(Duration::from_millis(800));
    common::process::send(&child, libc::SIGTERM);
    let status = wait_with_limit(&mut child, Duration::from_secs(10));
    let stderr = child_stderr(&mut child);
    assert_eq!(status.code(), Some(143), "{stderr}");
    assert!(stderr.contains("while waiting for input"), "{stderr}");
    assert!(!d.join("job").exists());
}

#[test]
fn an_array_one_gpu_cannot_hold_is_refused_from_its_header_before_it_is_read() {
    if common::backend::cuda_or_skip!().is_none() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    // 131072² float32, its 64 GiB of data a hole (no blocks on disk): the field's three
    // buffers (192 GiB) fit on no GPU, and reading it first would take minutes.
    let path = dir.path().join("big.npy");
    let header = npy_header(131_072, 131_072);
    fs::write(&path, &header).unwrap();
    let file = fs::OpenOptions::new().write(true).open(&path).unwrap();
    file.set_len(header.len() as u64 + 131_072 * 131_072 * 4)
        .unwrap();
    let started = Instant::now();
    let args = [
        "run",
        "--backend",
        "cuda",
        "--initial",
        "big.npy",
        "--steps",
        "1",
        "--out",
        "never",
    ];
    let out = heatlab(dir.path(), &args);
    assert_eq!(out.status.code(), Some(1), "{}", stderr_of(&out));
    let stderr = stderr_of(&out);
    assert!(
        stderr.contains("131072x131072 field (current, next and Laplacian buffers) needs")
            && stderr.contains("MiB GPU memory is free"),
        "{stderr}"
    );
    assert!(
        started.elapsed() < Duration::from_secs(30),
        "read first? {:?}",
        started.elapsed()
    );
    assert!(!dir.path().join("never").exists());
}
