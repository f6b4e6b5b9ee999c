//! `heatlab scenario` and `heatlab run --scenario` as a user runs them: a scenario is checked
//! with every error named, runs with its energy balance in run.json, and a saved state with a
//! heat problem resumes bit for bit. The real binary (`HEATLAB_BIN` when set) in a temporary
//! folder; the scenario files are embedded.

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
use heatlab_engine::export::read_npy;
use heatlab_engine::Grid;

const COMPOSITE_WALL: &str = include_str!("../../assets/scenarios/composite-wall.toml");

const CHIP: &str = r#"
title = "Chip on a plate"
[grid]
rows = 24
cols = 32
spacing = 0.001
[time]
duration = 2.0
[base]
material = "aluminium"
[[parts]]
name = "chip"
material = "silicon"
rect = { x = 0.012, y = 0.008, width = 0.008, height = 0.006 }
heater = { power = 40.0 }
[[parts]]
name = "cold block"
material = "copper"
rect = { x = 0.0, y = 0.0, width = 0.004, height = 0.004 }
held = "5 C"
[initial]
temperature = "25 C"
[sides]
left = { type = "convective", h = 50.0, ambient = "20 C" }
right = { type = "flux", flux = -300.0 }
top = { type = "periodic" }
bottom = { type = "periodic" }
"#;

#[test]
fn check_describes_a_scenario_and_names_every_error() {
    let dir = tempfile::tempdir().unwrap();
    fs::write(dir.path().join("wall.toml"), COMPOSITE_WALL).unwrap();
    let output = heatlab(dir.path(), &["scenario", "check", "wall.toml"]);
    succeeded(&output);
    let text = String::from_utf8_lossy(&output.stdout);
    assert!(text.contains("Composite wall: ok"), "{text}");
    assert!(
        text.contains("insulation: 120 cells of polystyrene-foam"),
        "{text}"
    );
    assert!(text.contains("0.9 of the stability limit"), "{text}");
    let broken = COMPOSITE_WALL
        .replace("\"brick\"", "\"brik\"")
        .replace("h = 25.0", "h = -1.0")
        .replace("rows = 4", "rows = 0");
    fs::write(dir.path().join("broken.toml"), broken).unwrap();
    let output = heatlab(dir.path(), &["scenario", "check", "broken.toml"]);
    let stderr = stderr_of(&output);
    assert_eq!(output.status.code(), Some(1), "{stderr}");
    assert!(stderr.contains("broken.toml has 3 errors"), "{stderr}");
    assert!(stderr.contains("unknown material \"brik\""), "{stderr}");
    assert!(
        stderr.contains("left side: the heat transfer coefficient"),
        "{stderr}"
    );
    assert!(stderr.contains("[grid] rows and cols"), "{stderr}");
    assert!(!stderr.contains("panicked"), "{stderr}");
    // A run of a bad scenario writes nothing.
    let output = heatlab(
        dir.path(),
        &["run", "--scenario", "broken.toml", "--out", "out"],
    );
    assert_eq!(output.status.code(), Some(1));
    assert!(!dir.path().join("out").exists());
}

#[test]
fn materials_lists_the_library_with_sources() {
    let dir = tempfile::tempdir().unwrap();
    let output = heatlab(dir.path(), &["scenario", "materials"]);
    succeeded(&output);
    let text = String::from_utf8_lossy(&output.stdout);
    assert!(text.lines().count() > 15, "{text}");
    assert!(
        text.contains("copper") && text.contains("Incropera"),
        "{text}"
    );
}

#[test]
fn a_scenario_runs_with_its_energy_balance_and_resumes_bit_for_bit() {
    let dir = tempfile::tempdir().unwrap();
    fs::write(dir.path().join("chip.toml"), CHIP).unwrap();
    let (dt, steps, whole_field) = run_whole_with_its_energy_balance(dir.path());
    resume_from_half_bit_for_bit(dir.path(), dt, steps, &whole_field);
}

/// Runs the chip scenario whole into `whole/` and checks its run.json: the steps of its
/// duration and an energy balance that closes. Returns the time step, the steps and the last
/// field.
fn run_whole_with_its_energy_balance(dir: &Path) -> (f64, u64, Grid) {
    let whole = heatlab(
        dir,
        &[
            "run",
            "--scenario",
            "chip.toml",
            "--backend",
            "cpu",
            "--out",
            "whole",
            "--npy",
            "--chunk",
            "50",
        ],
    );
    succeeded(&whole);
    let record = read_json(&dir.join("whole/run.json"));
    let problem = &record["problem"];
    let dt = problem["time_step_seconds"].as_f64().unwrap();
    let steps = record["steps_completed"].as_u64().unwrap();
    assert_eq!(steps, (2.0 / dt).ceil() as u64);
    assert!(problem["simulated_seconds"].as_f64().unwrap() >= 2.0);
    check_energy_windows(problem);
    let end = format!("whole/field_{steps:06}.npy");
    let whole_field = read_npy(&fs::read(dir.join(&end)).unwrap()).unwrap();
    assert_eq!(
        whole_field.get(0, 0),
        5.0,
        "the held block keeps its temperature"
    );
    (dt, steps, whole_field)
}

/// Every energy window of the run's `problem` record closes, with the heat drawn where the
/// scenario draws it and the heaters' power in.
fn check_energy_windows(problem: &serde_json::Value) {
    let windows = problem["energy"].as_array().unwrap();
    assert!(windows.len() >= 2);
    let mut heaters = 0.0;
    for window in windows {
        heaters += window["exchange"]["sources"].as_f64().unwrap();
        let error = window["relative_closing_error"].as_f64().unwrap();
        assert!(error < 1e-4, "the balance does not close: {window}");
        assert_eq!(window["within_round_off"], true, "{window}");
        // The cold block draws heat out, the flux side takes it out.
        assert!(window["exchange"]["held"].as_f64().unwrap() < 0.0);
        assert!(window["exchange"]["sides"][1].as_f64().unwrap() < 0.0);
    }
    let simulated = problem["simulated_seconds"].as_f64().unwrap();
    assert!(
        (heaters - 40.0 * simulated).abs() < 1e-4 * heaters,
        "{heaters}"
    );
}

/// Half, saved, resumed on the CPU with the other half: the same field to the last bit.
fn resume_from_half_bit_for_bit(dir: &Path, dt: f64, steps: u64, whole_field: &Grid) {
    let half = steps / 2;
    let first = heatlab(
        dir,
        &[
            "run",
            "--scenario",
            "chip.toml",
            "--backend",
            "cpu",
            "--out",
            "first",
            // A duration just under `half` steps' worth runs `half` steps.
            "--duration",
            &format!("{}", dt * half as f64 * 0.999_999),
            "--save-state",
            "half.hlstate",
        ],
    );
    succeeded(&first);
    let second = heatlab(
        dir,
        &[
            "run",
            "--resume",
            "half.hlstate",
            "--backend",
            "cpu",
            "--out",
            "second",
            "--npy",
            "--steps",
            &(steps - half).to_string(),
        ],
    );
    succeeded(&second);
    let resumed = fs::read(dir.join(format!("second/field_{steps:06}.npy"))).unwrap();
    let resumed = read_npy(&resumed).unwrap();
    assert_eq!(resumed.as_slice(), whole_field.as_slice());
    let record = read_json(&dir.join("second/run.json"));
    assert!(record["problem"]["simulated_seconds"].as_f64().unwrap() >= 2.0);
}

#[test]
fn duration_belongs_to_heat_problems() {
    let dir = tempfile::tempdir().unwrap();
    let output = heatlab(
        dir.path(),
        &["run", "--size", "16", "--duration", "3", "--out", "o"],
    );
    assert_eq!(output.status.code(), Some(1));
    assert!(stderr_of(&output).contains("--duration is for heat problems"));
}

const THERMOSTAT: &str = r#"
title = "Heater under a thermostat"
[grid]
rows = 24
cols = 24
spacing = 0.001
[time]
duration = 12.0
[base]
material = "aluminium"
[[parts]]
name = "element"
material = "copper"
ellipse = { x = 0.008, y = 0.008, width = 0.008, height = 0.008 }
heater = { power = 2000.0 }
[initial]
temperature = "20 C"
[sides]
left = { type = "convective", h = 2000.0, ambient = "20 C" }
right = { type = "convective", h = 2000.0, ambient = "20 C" }
top = { type = "convective", h = 2000.0, ambient = "20 C" }
bottom = { type = "convective", h = 2000.0, ambient = "20 C" }
[[thermostat]]
heater = "element"
probe_position = [0.018, 0.012]
setpoint = "25 C"
deadband = 1.0
every_steps = 10
"#;

#[test]
fn a_thermostat_switches_its_heater_at_its_decision_steps_and_run_json_lists_it() {
    let dir = tempfile::tempdir().unwrap();
    fs::write(dir.path().join("thermostat.toml"), THERMOSTAT).unwrap();
    let output = heatlab(
        dir.path(),
        &[
            "run",
            "--scenario",
            "thermostat.toml",
            "--backend",
            "cpu",
            "--out",
            "o",
            "--chunk",
            "777",
        ],
    );
    succeeded(&output);
    let said = stderr_of(&output);
    assert!(said.contains("thermostats switched heaters"), "{said}");
    let record = read_json(&dir.path().join("o/run.json"));
    let problem = &record["problem"];
    assert_eq!(problem["problem"]["thermostats"][0]["probe"][0], 12);
    assert_eq!(problem["problem"]["thermostats"][0]["probe"][1], 18);
    let switches = problem["switches"].as_array().unwrap();
    assert!(switches.len() >= 4, "{switches:?}");
    for (i, switch) in switches.iter().enumerate() {
        let on = switch["on"].as_bool().unwrap();
        // The heater starts on: off first, then on and off in turn.
        assert_eq!(on, i % 2 == 1, "{switch}");
        assert_eq!(switch["step"].as_u64().unwrap() % 10, 0, "{switch}");
        assert_eq!(switch["kind"], 1);
        let t = switch["temperature"].as_f64().unwrap();
        assert!(if on { t < 24.5 } else { t > 25.5 }, "{switch}");
    }
    assert_eq!(problem["switches_left_out"], 0);
    // The heater gave less than it would have on all the time.
    let heaters: f64 = problem["energy"]
        .as_array()
        .unwrap()
        .iter()
        .map(|w| w["exchange"]["sources"].as_f64().unwrap())
        .sum();
    let simulated = problem["simulated_seconds"].as_f64().unwrap();
    assert!(
        heaters > 0.0 && heaters < 0.9 * 2000.0 * simulated,
        "{heaters}"
    );

    // A thermostat without a probe, of a part without a heater, or never deciding is named.
    let broken = THERMOSTAT
        .replace("probe_position = [0.018, 0.012]\n", "")
        .replace("every_steps = 10\n", "")
        .replace("heater = \"element\"", "heater = \"plate\"");
    fs::write(dir.path().join("broken.toml"), broken).unwrap();
    let output = heatlab(dir.path(), &["scenario", "check", "broken.toml"]);
    assert_eq!(output.status.code(), Some(1), "{}", stderr_of(&output));
    let text = stderr_of(&output);
    assert!(
        text.contains("no part of that name with a heater"),
        "{text}"
    );
    let fixed_heater = THERMOSTAT
        .replace("probe_position = [0.018, 0.012]\n", "")
        .replace("every_steps = 10\n", "");
    fs::write(dir.path().join("broken.toml"), fixed_heater).unwrap();
    let output = heatlab(dir.path(), &["scenario", "check", "broken.toml"]);
    let text = stderr_of(&output);
    assert!(text.contains("place its probe"), "{text}");
    assert!(text.contains("every_steps or every_seconds"), "{text}");
}

#[test]
fn gallery_problems_are_listed_checked_and_run_by_name() {
    let dir = tempfile::tempdir().unwrap();
    let output = heatlab(dir.path(), &["scenario", "list"]);
    succeeded(&output);
    let list = String::from_utf8_lossy(&output.stdout).into_owned();
    for entry in &heatlab_engine::scenario::gallery::GALLERY {
        assert!(list.contains(entry.name), "{list}");
        let output = heatlab(dir.path(), &["scenario", "check", entry.name]);
        succeeded(&output);
        let text = String::from_utf8_lossy(&output.stdout);
        assert!(text.contains(&format!("{}: ok", entry.title())), "{text}");
    }
    let output = heatlab(
        dir.path(),
        &[
            "run",
            "--scenario",
            "fin",
            "--duration",
            "0.5",
            "--backend",
            "cpu",
            "--out",
            "fin",
        ],
    );
    succeeded(&output);
    assert!(
        stderr_of(&output).contains("scenario \"A fin\" from the gallery (fin)"),
        "{}",
        stderr_of(&output)
    );
    let record = read_json(&dir.path().join("fin/run.json"));
    assert!(record["problem"]["simulated_seconds"].as_f64().unwrap() >= 0.5);
    // A name that is neither a file nor a gallery problem says where the names are.
    let output = heatlab(dir.path(), &["run", "--scenario", "no-such", "--out", "x"]);
    assert_eq!(output.status.code(), Some(1));
    assert!(
        stderr_of(&output).contains("heatlab scenario list"),
        "{}",
        stderr_of(&output)
    );
}

#[test]
fn a_steady_state_is_solved_and_implicit_steps_book_their_energy() {
    let dir = tempfile::tempdir().unwrap();
    let out = heatlab(
        dir.path(),
        &[
            "run",
            "--scenario",
            "heat-sink",
            "--steady",
            "--npy",
            "--backend",
            "cpu",
            "--out",
            "sink",
        ],
    );
    succeeded(&out);
    assert!(
        stderr_of(&out).contains("steady state:"),
        "{}",
        stderr_of(&out)
    );
    let record = read_json(&dir.path().join("sink/run.json"));
    let steady = &record["problem"]["solver"]["steady"];
    let iterations = steady["cycles"].as_u64().unwrap();
    assert!((1..60).contains(&iterations), "{steady}");
    let residuals = steady["residual_history"].as_array().unwrap();
    assert_eq!(residuals.len() as u64, iterations + 1);
    let field = read_npy(&fs::read(dir.path().join("sink/field_000000.npy")).unwrap()).unwrap();
    // The chip heats the sink well above the 25 °C air, and nothing is below it.
    let (min, max) = field
        .as_slice()
        .iter()
        .fold((f32::MAX, f32::MIN), |(lo, hi), &t| (lo.min(t), hi.max(t)));
    assert!(min >= 24.9 && max > 60.0, "{min} {max}");

    let out = heatlab(
        dir.path(),
        &[
            "run",
            "--scenario",
            "heat-sink",
            "--implicit",
            "crank-nicolson",
            "--dt",
            "20",
            "--duration",
            "400",
            "--backend",
            "cpu",
            "--out",
            "long",
        ],
    );
    succeeded(&out);
    let record = read_json(&dir.path().join("long/run.json"));
    let implicit = &record["problem"]["solver"]["implicit"];
    assert_eq!(implicit["work"]["steps"].as_u64(), Some(20), "{implicit}");
    let window = &record["problem"]["budget"]["window"];
    let heaters = window["exchange"]["sources"].as_f64().unwrap();
    let closing = window["closing_error"].as_f64().unwrap();
    assert!(heaters > 0.0 && closing.abs() < 1e-6 * heaters, "{window}");
    assert_eq!(window["within_round_off"], true, "{window}");
}

#[test]
fn the_solver_refuses_what_it_cannot_solve() {
    let dir = tempfile::tempdir().unwrap();
    let cases: [(&[&str], &str); 4] = [
        (
            &["run", "--steady", "--size", "64"],
            "solves a heat problem",
        ),
        (
            &["run", "--scenario", "heat-sink", "--implicit", "--dt", "-1"],
            "--dt must be positive",
        ),
        (
            &["run", "--scenario", "heater-thermostat", "--steady"],
            "thermostat",
        ),
        (
            &[
                "run",
                "--scenario",
                "heat-sink",
                "--steady",
                "--max-iterations",
                "2",
            ],
            "did not converge",
        ),
    ];
    for (index, (args, expected)) in cases.into_iter().enumerate() {
        let folder = format!("bad{index}");
        let mut full = args.to_vec();
        full.extend(["--backend", "cpu", "--out", folder.as_str()]);
        let out = heatlab(dir.path(), &full);
        assert_eq!(out.status.code(), Some(1), "{args:?}: {}", stderr_of(&out));
        assert!(
            stderr_of(&out).contains(expected),
            "{args:?}: {}",
            stderr_of(&out)
        );
        // No frame of a solve that did not finish.
        let frames = std::fs::read_dir(dir.path().join(&folder))
            .map(|entries| {
                entries
                    .filter_map(Result::ok)
                    .filter(|e| e.file_name().to_string_lossy().starts_with("field_"))
                    .count()
            })
            .unwrap_or(0);
        assert_eq!(frames, 0, "{args:?}");
    }
    let out = heatlab(
        dir.path(),
        &["run", "--scenario", "heat-sink", "--steady", "--steps", "3"],
    );
    assert_eq!(out.status.code(), Some(2), "clap refuses the conflict");
}
