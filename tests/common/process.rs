//! Running the binary under test as a background process: starting it, signalling it, waiting
//! for it with a time limit and reading what it said.

use std::io::Read;
use std::process::{Child, Command, ExitStatus, Stdio};
use std::time::{Duration, Instant};

use super::cli::heatlab_binary;

/// Starts the binary in `dir` with `args`; standard error is piped, the rest closed.
#[expect(
    clippy::expect_used,
    reason = "a test helper: its failure is the test's failure, with this message"
)]
pub fn spawn(dir: &std::path::Path, args: &[&str]) -> Child {
    Command::new(heatlab_binary())
        .current_dir(dir)
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("the heatlab binary starts")
}

/// Sends `signal` to the process `pid`.
pub fn send_to(pid: u32, signal: i32) {
    let pid = libc::pid_t::try_from(pid).unwrap_or(libc::pid_t::MAX);
    // SAFETY: kill(2) with a process id and a plain signal number has no memory effects.
    let result = unsafe { libc::kill(pid, signal) };
    assert_eq!(result, 0, "kill({pid}, {signal})");
}

/// Sends `signal` to `child`.
pub fn send(child: &Child, signal: i32) {
    send_to(child.id(), signal);
}

/// Waits until `done`, failing the test after `limit`.
pub fn wait_for(what: &str, limit: Duration, mut done: impl FnMut() -> bool) {
    let start = Instant::now();
    while !done() {
        assert!(start.elapsed() < limit, "waited {limit:?} for {what}");
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Waits for `child` to end, killing it and failing the test after `limit`.
#[expect(
    clippy::expect_used,
    reason = "a test helper: its failure is the test's failure, with this message"
)]
pub fn wait_with_limit(child: &mut Child, limit: Duration) -> ExitStatus {
    let start = Instant::now();
    loop {
        if let Some(status) = child.try_wait().expect("the child can be waited for") {
            return status;
        }
        if start.elapsed() > limit {
            let _ = child.kill();
            panic!("heatlab did not stop within {limit:?}");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// What `child` wrote to its standard error (after it ended).
pub fn child_stderr(child: &mut Child) -> String {
    let mut text = String::new();
    if let Some(mut stderr) = child.stderr.take() {
        let _ = stderr.read_to_string(&mut text);
    }
    text
}

/// Whether the process `pid` still runs (a zombie, ended but not yet reaped, does not).
pub fn is_running(pid: u32) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        // The state follows the command name in parentheses: "1234 (sleep) S ...".
        Ok(stat) => stat
            .rsplit_once(')')
            .and_then(|(_, rest)| rest.split_whitespace().next())
            .is_some_and(|state| state != "Z" && state != "X"),
        Err(_) => false,
    }
}
