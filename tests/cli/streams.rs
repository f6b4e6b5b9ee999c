//! Standard output and output FIFOs as the shell hands them over: a standard output closed
//! before heatlab starts (`>&-`) is a write error, not a silent success, and a signal stops a
//! command waiting for the reader of its output FIFO. The real binary in a temporary folder.

#![allow(
    clippy::unwrap_used,
    reason = "test helpers; clippy's allow-*-in-tests covers #[test] functions only"
)]

use crate::common;

use std::process::Command;
use std::time::Duration;

use common::cli::stderr_of;
use common::heatlab_binary as binary;
use common::process::{child_stderr, send, spawn, wait_with_limit};

/// Runs `heatlab scenario check fin` with the shell redirection `redirect` of its standard
/// output.
fn check_with_stdout(redirect: &str) -> std::process::Output {
    Command::new("sh")
        .arg("-c")
        .arg(format!("exec \"$0\" scenario check fin {redirect}"))
        .arg(binary())
        .output()
        .unwrap()
}

#[test]
fn a_standard_output_closed_at_the_start_is_a_write_error() {
    let closed = check_with_stdout(">&-");
    let stderr = stderr_of(&closed);
    assert_eq!(closed.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains("writing to standard output: Bad file descriptor"),
        "{stderr}"
    );
    assert_eq!(stderr.trim_end().lines().count(), 1, "{stderr}");
    // Thrown away on purpose is not an error.
    let null = check_with_stdout(">/dev/null");
    assert_eq!(null.status.code(), Some(0), "{}", stderr_of(&null));
    let open = check_with_stdout("");
    assert_eq!(open.status.code(), Some(0), "{}", stderr_of(&open));
    assert!(String::from_utf8_lossy(&open.stdout).contains(": ok"));
}

#[test]
fn the_first_sigterm_stops_a_kernel_waiting_for_its_timings_reader() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let status = Command::new("mkfifo")
        .arg(d.join("timings.fifo"))
        .status()
        .unwrap();
    assert!(status.success());
    let mut child = spawn(
        d,
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
            "timings.fifo",
        ],
    );
    // The kernel takes milliseconds; then the open waits for a reader that never comes.
    std::thread::sleep(Duration::from_millis(1500));
    send(&child, libc::SIGTERM);
    let status = wait_with_limit(&mut child, Duration::from_secs(10));
    let stderr = child_stderr(&mut child);
    assert_eq!(status.code(), Some(143), "{stderr}");
    assert!(stderr.contains("SIGTERM while waiting"), "{stderr}");
    assert!(!stderr.contains("panicked"), "{stderr}");
}
