//! Running the binary under test and reading what it did: the CLI helpers every test binary
//! shares (background processes, signals and time limits are in `process`).

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// The binary under test: `HEATLAB_BIN` when set (a release build, or a copy on another machine
/// such as the GPU machine, without the build tree), else the one Cargo built for these tests.
pub fn heatlab_binary() -> PathBuf {
    std::env::var_os("HEATLAB_BIN")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_BIN_EXE_heatlab")))
}

/// Runs the binary under test with `args` (in the test's own folder) and waits for it.
#[expect(
    clippy::expect_used,
    reason = "a test helper: its failure is the test's failure, with this message"
)]
pub fn heatlab(args: &[&str]) -> Output {
    Command::new(heatlab_binary())
        .args(args)
        .output()
        .expect("the heatlab binary runs")
}

/// Runs the binary under test in `dir` with `args` and waits for it.
#[expect(
    clippy::expect_used,
    reason = "a test helper: its failure is the test's failure, with this message"
)]
pub fn heatlab_in(dir: &Path, args: &[&str]) -> Output {
    Command::new(heatlab_binary())
        .current_dir(dir)
        .args(args)
        .output()
        .expect("the heatlab binary runs")
}

/// What a finished run wrote to its standard error.
pub fn stderr_of(output: &Output) -> String {
    String::from_utf8_lossy(&output.stderr).into_owned()
}

/// Fails the test, with the run's standard error, unless the run succeeded.
pub fn succeeded(output: &Output) {
    assert!(output.status.success(), "{}", stderr_of(output));
}

/// The JSON file at `path` (a run's record, a report), failing the test naming the file.
#[expect(
    clippy::expect_used,
    reason = "a test helper: its failure is the test's failure, with this message"
)]
pub fn read_json(path: &Path) -> serde_json::Value {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    serde_json::from_str(&text).expect("the file is JSON")
}

/// The names in `dir`, sorted.
#[expect(
    clippy::expect_used,
    reason = "a test helper: its failure is the test's failure, with this message"
)]
pub fn names_in(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .expect("the folder can be listed")
        .map(|entry| {
            entry
                .expect("the folder can be listed")
                .file_name()
                .to_string_lossy()
                .into_owned()
        })
        .collect();
    names.sort();
    names
}

/// Fails the test if `dir` holds a temporary file of heatlab's (`.heatlab-*`).
pub fn assert_no_temporary_files(dir: &Path) {
    let names = names_in(dir);
    assert!(
        names.iter().all(|n| !n.starts_with(".heatlab-")),
        "temporary files left in {}: {names:?}",
        dir.display()
    );
}
