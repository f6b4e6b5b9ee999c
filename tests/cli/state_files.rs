//! Saved states of heat problems edited by hand: a flipped byte anywhere is a checksum
//! mismatch, the format version must match what the header holds, and a problem that cannot
//! be stepped is refused before the run writes anything. The real binary in a temporary folder.

#![allow(
    clippy::unwrap_used,
    reason = "test helpers; clippy's allow-*-in-tests covers #[test] functions only"
)]

use crate::common;

use std::fs;
use std::path::Path;

use common::cli::{stderr_of, succeeded};
use common::heatlab_in as heatlab;
use heatlab_engine::problem::TimeStep;
use heatlab_engine::state::SavedState;

/// A 4x6 plate: copper with a brick part, so that its map holds two kinds.
const PLATE: &str = r#"
[grid]
rows = 4
cols = 6
spacing = 0.01
[time]
duration = 2.0
[base]
material = "copper"
[[parts]]
material = "brick"
rect = { x = 0.0, y = 0.0, width = 0.02, height = 0.02 }
"#;

/// Runs the plate and saves its state as `plate.hls` in `dir`; returns the file's bytes.
fn saved_plate(dir: &Path) -> Vec<u8> {
    fs::write(dir.join("plate.toml"), PLATE).unwrap();
    let output = heatlab(
        dir,
        &[
            "run",
            "--backend",
            "cpu",
            "--scenario",
            "plate.toml",
            "--out",
            "first",
            "--save-state",
            "plate.hls",
        ],
    );
    succeeded(&output);
    fs::read(dir.join("plate.hls")).unwrap()
}

/// CRC-32 (IEEE), as state files end with.
fn crc32(bytes: &[u8]) -> u32 {
    let mut crc = !0u32;
    for &byte in bytes {
        crc ^= u32::from(byte);
        for _ in 0..8 {
            crc = if crc & 1 == 1 {
                (crc >> 1) ^ 0xedb8_8320
            } else {
                crc >> 1
            };
        }
    }
    !crc
}

/// `bytes` with its trailing checksum made right again.
fn resealed(mut bytes: Vec<u8>) -> Vec<u8> {
    let body = bytes.len() - 4;
    let crc = crc32(&bytes[..body]);
    bytes[body..].copy_from_slice(&crc.to_le_bytes());
    bytes
}

/// Resumes `file` in `dir` into `out`: refused with `expected` in one line, `out` not made.
fn resume_refused(dir: &Path, file: &str, expected: &str) {
    let output = heatlab(
        dir,
        &["run", "--backend", "cpu", "--resume", file, "--out", "out"],
    );
    let stderr = stderr_of(&output);
    assert_eq!(output.status.code(), Some(1), "{file}: {stderr}");
    assert!(!stderr.contains("panicked"), "{stderr}");
    assert!(
        stderr.contains(expected),
        "{file}: expected {expected:?} in {stderr}"
    );
    assert_eq!(stderr.trim_end().lines().count(), 1, "{stderr}");
    assert!(
        !dir.join("out").exists(),
        "{file}: the out folder was written"
    );
}

#[test]
fn a_flipped_byte_in_a_states_map_is_a_checksum_mismatch() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let bytes = saved_plate(d);
    // The map is the last 24 bytes before the checksum; 255 names no kind.
    for at in [bytes.len() - 5, bytes.len() - 4 - 24] {
        let mut flipped = bytes.clone();
        flipped[at] = 0xff;
        fs::write(d.join("flipped.hls"), &flipped).unwrap();
        resume_refused(d, "flipped.hls", "checksum does not match");
    }
}

#[test]
fn a_version_1_state_with_a_heat_problem_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let mut bytes = saved_plate(d);
    assert_eq!(bytes[8..12], 2u32.to_le_bytes());
    bytes[8..12].copy_from_slice(&1u32.to_le_bytes());
    fs::write(d.join("v1.hls"), resealed(bytes)).unwrap();
    resume_refused(d, "v1.hls", "format version 1 holds no heat problem");
}

#[test]
fn a_state_stepping_above_its_stability_limit_is_refused_before_writing() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    saved_plate(d);
    let mut state = SavedState::load(&d.join("plate.hls")).unwrap();
    let saved = state.problem.as_mut().unwrap();
    saved.problem.time_step = TimeStep::Seconds(1e4);
    state.save(&d.join("fast.hls")).unwrap();
    resume_refused(d, "fast.hls", "above the stability limit");
}
