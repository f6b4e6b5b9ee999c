//! The files a scenario names, as a hostile user hands them in: devices that never end, FIFOs
//! that can be read only once, maps of every integer width, grids larger than the memory.
//! The real binary (`HEATLAB_BIN` when set) in a temporary folder, under a time limit.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "test helpers; clippy's allow-*-in-tests covers #[test] functions only"
)]

use crate::common;

use std::fs;
use std::io::{Read, Write};
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use common::heatlab_binary as binary;
use image::ImageEncoder as _;

/// How a run under a time limit ended: its status code and both streams.
struct Ended {
    code: Option<i32>,
    stdout: String,
    stderr: String,
}

/// Runs the binary in `dir` with `args`, killing it and failing the test after `limit`.
fn heatlab_within(dir: &Path, limit: Duration, args: &[&str]) -> Ended {
    let mut command = Command::new(binary());
    command.args(args);
    ended_within(command, dir, limit)
}

/// As [`heatlab_within`], under an address-space limit of `kib` KiB (`ulimit -v`): a test
/// that asks for more memory than the limit cannot take the shared machine's.
fn heatlab_limited(dir: &Path, kib: u64, limit: Duration, args: &[&str]) -> Ended {
    let mut command = Command::new("sh");
    command
        .arg("-c")
        .arg("ulimit -v \"$0\" && exec \"$@\"")
        .arg(kib.to_string())
        .arg(binary())
        .args(args);
    ended_within(command, dir, limit)
}

/// Runs `command` in `dir`, killing it and failing the test after `limit`.
fn ended_within(mut command: Command, dir: &Path, limit: Duration) -> Ended {
    let args = format!("{command:?}");
    let mut child = command
        .current_dir(dir)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("the heatlab binary starts");
    let start = Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        if start.elapsed() > limit {
            let _ = child.kill();
            let _ = child.wait();
            panic!("{args} did not end within {limit:?}");
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    let mut stdout = String::new();
    let mut stderr = String::new();
    child
        .stdout
        .take()
        .unwrap()
        .read_to_string(&mut stdout)
        .unwrap();
    child
        .stderr
        .take()
        .unwrap()
        .read_to_string(&mut stderr)
        .unwrap();
    assert!(!stderr.contains("panicked"), "{stderr}");
    Ended {
        code: status.code(),
        stdout,
        stderr,
    }
}

fn assert_refused(ended: &Ended, expected: &str) {
    assert_eq!(ended.code, Some(1), "{}", ended.stderr);
    assert!(
        ended.stderr.contains(expected),
        "expected {expected:?} in: {}",
        ended.stderr
    );
    assert_eq!(
        ended.stderr.trim_end().lines().count(),
        1,
        "one line: {:?}",
        ended.stderr
    );
}

/// A 4x4 copper scenario with `map` as its `[map]` section.
fn scenario_with_map(map: &str) -> String {
    format!(
        "[grid]\nrows = 4\ncols = 4\nspacing = 0.01\n[time]\nduration = 1.0\n\
         [base]\nmaterial = \"copper\"\n[map]\n{map}\n"
    )
}

/// A 4x4 PNG, every pixel white.
fn white_png() -> Vec<u8> {
    let mut bytes = Vec::new();
    image::codecs::png::PngEncoder::new(&mut bytes)
        .write_image(&[255u8; 48], 4, 4, image::ExtendedColorType::Rgb8)
        .unwrap();
    bytes
}

/// A `.npy` file of `descr` values with `shape` and `data` (C order).
fn npy(descr: &str, shape: &str, data: &[u8]) -> Vec<u8> {
    crate::common::npy_bytes(descr, false, shape, data)
}

fn mkfifo(path: &Path) {
    let status = Command::new("mkfifo").arg(path).status().unwrap();
    assert!(status.success());
}

/// Writes `bytes` into the FIFO at `path` from a thread, then closes it.
fn feed_fifo(path: &Path, bytes: Vec<u8>) -> std::thread::JoinHandle<()> {
    let path = path.to_path_buf();
    std::thread::spawn(move || {
        if let Ok(mut fifo) = fs::OpenOptions::new().write(true).open(&path) {
            let _ = fifo.write_all(&bytes);
        }
    })
}

/// Ends a [`feed_fifo`] writer whose reader never came (its open waits for one).
fn finish_feeding(path: &Path, writer: std::thread::JoinHandle<()>) {
    use std::os::unix::fs::OpenOptionsExt as _;
    let reader = fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK)
        .open(path);
    writer.join().unwrap();
    drop(reader);
}

const COLOURS: &str = "colors = { \"#ffffff\" = \"copper\" }";
const NAMES: &str = "names = [\"copper\"]";

#[test]
fn a_map_from_dev_zero_is_refused_at_once() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    for (name, map, expected) in [
        (
            "npy.toml",
            format!("npy = \"/dev/zero\"\n{NAMES}"),
            "is not a readable .npy array",
        ),
        (
            "image.toml",
            format!("image = \"/dev/zero\"\n{COLOURS}"),
            "is not a PNG image",
        ),
    ] {
        fs::write(d.join(name), scenario_with_map(&map)).unwrap();
        let start = Instant::now();
        let ended = heatlab_within(d, Duration::from_secs(20), &["scenario", "check", name]);
        assert_refused(&ended, expected);
        assert!(start.elapsed() < Duration::from_secs(5), "{name}");
        let ended = heatlab_within(
            d,
            Duration::from_secs(20),
            &["run", "--scenario", name, "--out", "o"],
        );
        assert_refused(&ended, expected);
        assert!(!d.join("o").exists(), "{name}");
    }
}

#[test]
fn a_map_from_a_fifo_is_read_once_its_writer_has_finished() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    for (name, map, bytes) in [
        (
            "image",
            format!("image = \"image.fifo\"\n{COLOURS}"),
            white_png(),
        ),
        (
            "npy",
            format!("npy = \"npy.fifo\"\n{NAMES}"),
            npy("|u1", "(4, 4)", &[0u8; 16]),
        ),
    ] {
        let fifo = d.join(format!("{name}.fifo"));
        mkfifo(&fifo);
        let toml = format!("{name}.toml");
        fs::write(d.join(&toml), scenario_with_map(&map)).unwrap();
        let writer = feed_fifo(&fifo, bytes.clone());
        let ended = heatlab_within(d, Duration::from_secs(20), &["scenario", "check", &toml]);
        finish_feeding(&fifo, writer);
        assert_eq!(ended.code, Some(0), "{name}: {}", ended.stderr);
        assert!(
            ended.stdout.contains("copper: 16 cells"),
            "{}",
            ended.stdout
        );
        let writer = feed_fifo(&fifo, bytes);
        let out = format!("out-{name}");
        let ended = heatlab_within(
            d,
            Duration::from_secs(60),
            // On the CPU: on a GPU machine the first CUDA run of a process compiles its
            // kernels, which under a loaded test run can outlast the limit.
            &[
                "run",
                "--scenario",
                &toml,
                "--backend",
                "cpu",
                "--out",
                &out,
            ],
        );
        finish_feeding(&fifo, writer);
        assert_eq!(ended.code, Some(0), "{name}: {}", ended.stderr);
    }
}

/// A scenario of a `side`² copper grid starting from the jagged field or a temperature.
fn square(side: usize, jagged: bool) -> String {
    let initial = if jagged {
        "jagged = {}"
    } else {
        "temperature = 20.0"
    };
    format!(
        "[grid]\nrows = {side}\ncols = {side}\nspacing = 0.01\n[time]\nduration = 1.0\n\
         [base]\nmaterial = \"copper\"\n[initial]\n{initial}\n"
    )
}

#[test]
fn a_grid_larger_than_the_memory_is_refused_from_its_header() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    // 2 GiB of address space: a 65536² grid's map and field need 20 GiB, a 16384² grid's
    // with the jagged field's spectrum some 11 GiB.
    let kib = 2 << 20;
    for (side, jagged) in [(65_536, false), (40_000, false), (16_384, true)] {
        let name = format!("{side}.toml");
        fs::write(d.join(&name), square(side, jagged)).unwrap();
        let start = Instant::now();
        let ended = heatlab_limited(
            d,
            kib,
            Duration::from_secs(30),
            &["scenario", "check", &name],
        );
        assert_refused(&ended, &format!("a {side}x{side} scenario grid needs"));
        let ended = heatlab_limited(
            d,
            kib,
            Duration::from_secs(30),
            &["run", "--scenario", &name, "--out", "o"],
        );
        assert_refused(&ended, &format!("a {side}x{side} scenario grid needs"));
        assert!(!d.join("o").exists(), "{side}: the out folder was written");
        assert!(start.elapsed() < Duration::from_secs(10), "{side}");
    }
}

#[test]
fn a_run_whose_copies_of_the_field_do_not_fit_is_refused_before_building() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    // 1.5 GiB of address space: an 8192² grid builds in some 320 MB, but a run holds seven
    // copies of its 256 MB field.
    fs::write(d.join("8192.toml"), square(8192, false)).unwrap();
    let checked = heatlab_limited(
        d,
        3 << 19,
        Duration::from_secs(60),
        &["scenario", "check", "8192.toml"],
    );
    assert_eq!(
        checked.code,
        Some(0),
        "the grid itself builds: {}",
        checked.stderr
    );
    let start = Instant::now();
    let ended = heatlab_limited(
        d,
        3 << 19,
        Duration::from_secs(30),
        &["run", "--scenario", "8192.toml", "--out", "o"],
    );
    assert_refused(&ended, "a 8192x8192 scenario grid needs");
    assert!(!d.join("o").exists(), "the out folder was written");
    assert!(start.elapsed() < Duration::from_secs(10));
}
