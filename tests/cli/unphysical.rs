//! Nothing non-finite or below absolute zero is called good: a scenario with a temperature
//! beyond the run's 32-bit floats or a jagged field that overflows is refused at `scenario
//! check` and `run --scenario`, a saved state holding NaN is refused at `--resume`, and a run
//! driven below -273.15 °C stops.
//! The real binary (`HEATLAB_BIN` when set) in a temporary folder, on small embedded scenarios.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "test helpers; clippy's allow-*-in-tests covers #[test] functions only"
)]

use crate::common;

use std::fs;
use std::path::Path;

use common::cli::{read_json, stderr_of, succeeded};
use common::heatlab_in as heatlab;
use heatlab_engine::state::SavedState;

/// A small copper plate with `extra` (parts, `[initial]`, `[sides]`) after its base.
fn plate(extra: &str) -> String {
    format!(
        "title = \"Plate\"\n[grid]\nrows = 48\ncols = 64\nspacing = 0.001\n[time]\n\
         duration = 0.05\noutput_every = 0.05\n[base]\nmaterial = \"copper\"\n{extra}"
    )
}

const LID: &str = "[[parts]]\nname = \"lid\"\nmaterial = \"copper\"\n\
                   rect = { x = 0.0, y = 0.0, width = 0.01, height = 0.01 }\n";

/// Writes `text` as `name` in `dir`.
fn write(dir: &Path, name: &str, text: &str) {
    fs::write(dir.join(name), text).unwrap();
}

/// The one line of a refused command: status 1, `expected` in its standard error.
fn refused(output: &std::process::Output, expected: &[&str]) -> String {
    let stderr = stderr_of(output);
    assert_eq!(output.status.code(), Some(1), "{stderr}");
    for part in expected {
        assert!(stderr.contains(part), "{part:?} not in {stderr}");
    }
    stderr
}

#[test]
fn scenario_check_and_run_refuse_non_finite_temperatures_naming_key_and_value() {
    let dir = tempfile::tempdir().unwrap();
    let cases = [
        (
            "[initial]\ntemperature = 1e39\n".to_string(),
            "[initial] temperature: temperature \"1e39\" is not finite",
        ),
        (
            format!("{LID}initial = \"1e39\"\n"),
            "part \"lid\" initial: temperature \"1e39\" is not finite",
        ),
        (
            format!("{LID}held = \"1e39 C\"\n"),
            "part \"lid\" held: temperature \"1e39 C\" is not finite",
        ),
    ];
    for (extra, expected) in cases {
        write(dir.path(), "bad.toml", &plate(&extra));
        let check = heatlab(dir.path(), &["scenario", "check", "bad.toml"]);
        refused(&check, &[expected]);
        let run = heatlab(
            dir.path(),
            &[
                "run",
                "--scenario",
                "bad.toml",
                "--backend",
                "cpu",
                "--out",
                "out",
            ],
        );
        refused(&run, &[expected]);
        assert!(!dir.path().join("out").exists(), "nothing is written");
    }
}

#[test]
fn a_jagged_start_that_overflows_is_refused_naming_its_exponent() {
    let dir = tempfile::tempdir().unwrap();
    write(
        dir.path(),
        "jagged.toml",
        &plate("[initial]\njagged = { exponent = 80.0 }\n"),
    );
    let check = heatlab(dir.path(), &["scenario", "check", "jagged.toml"]);
    refused(
        &check,
        &[
            "[initial] jagged with exponent = 80",
            "non-finite in",
            "of 3072 cells",
        ],
    );
}

#[test]
fn resume_refuses_a_state_whose_field_holds_nan_counting_the_cells() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "plate.toml", &plate(""));
    let first = heatlab(
        dir.path(),
        &[
            "run",
            "--scenario",
            "plate.toml",
            "--backend",
            "cpu",
            "--out",
            "first",
            "--steps",
            "2",
            "--save-state",
            "good.hlstate",
        ],
    );
    succeeded(&first);
    // Saved through the engine, so its checksum is valid: only the values are wrong.
    let mut state = SavedState::load(&dir.path().join("good.hlstate")).unwrap();
    for value in &mut state.current.as_mut_slice()[..3] {
        *value = f32::NAN;
    }
    state.save(&dir.path().join("nan.hlstate")).unwrap();
    let resumed = heatlab(
        dir.path(),
        &[
            "run",
            "--resume",
            "nan.hlstate",
            "--backend",
            "cpu",
            "--out",
            "second",
            "--steps",
            "2",
        ],
    );
    refused(
        &resumed,
        &[
            "nan.hlstate",
            "its field holds 3 non-finite values (of 3072 cells)",
        ],
    );
}

#[test]
fn a_run_driven_below_absolute_zero_stops_and_says_so_in_run_json() {
    let dir = tempfile::tempdir().unwrap();
    let sink = format!("{LID}heater = {{ power = -1e6 }}\n");
    let flux = "[sides]\ntop = { type = \"flux\", flux = -1e9 }\n".to_string();
    for (name, extra) in [("sink", sink), ("flux", flux)] {
        write(dir.path(), "cold.toml", &plate(&extra));
        let output = heatlab(
            dir.path(),
            &[
                "run",
                "--scenario",
                "cold.toml",
                "--backend",
                "cpu",
                "--out",
                name,
                "--duration",
                "1",
            ],
        );
        let stderr = refused(
            &output,
            &["below absolute zero (-273.15 °C)", "coldest cell"],
        );
        let errors: Vec<&str> = stderr.lines().filter(|l| l.contains("error:")).collect();
        assert_eq!(errors.len(), 1, "one error line: {stderr}");
        assert!(errors[0].contains("stopped; run.json"), "{stderr}");
        let summary = read_json(&dir.path().join(name).join("run.json"));
        assert_eq!(summary["status"], "below-absolute-zero", "{name}");
        let reason = summary["reason"].as_str().unwrap();
        assert!(reason.contains("below absolute zero"), "{reason}");
        let steps = summary["steps_completed"].as_u64().unwrap();
        assert!(reason.contains(&format!("by step {steps}")), "{reason}");
        assert!(steps > 0 && steps < 519, "stopped early: {steps}");
    }
}
