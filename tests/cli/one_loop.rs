//! One scenario run through `heatlab run` and through the app's simulation thread: both drive
//! the engine's one run loop, so they end at the same field, with the same energy windows, the
//! same budget and the same thermostat switches.

use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::common::cli::{heatlab_in, read_json, succeeded};
use heatlab_engine::export::read_npy;
use heatlab_engine::problem::energy::EnergyBalance;
use heatlab_engine::scenario::gallery::load_file_or_named;
use heatlab_engine::session::diffusion::{self, Frame, SimCommand, SimEvent, SimWorker};

/// Steps of the run (its thermostat first switches at step 19162), and of each chunk (and of
/// each of the app's frames).
const STEPS: u64 = 24_000;
const CHUNK: u64 = 3000;

/// The app's session with `scenario` open, stepped `CHUNK` steps a frame to `STEPS`: every
/// frame that stepped, in order.
#[expect(
    clippy::unwrap_used,
    reason = "a test helper: its failure is the test's failure"
)]
fn app_frames(scenario: &str) -> (SimWorker, Vec<Frame>) {
    let worker = diffusion::spawn(Arc::new(|| {})).unwrap();
    let scenario = load_file_or_named(Path::new(scenario)).unwrap();
    worker.send(SimCommand::SetAutoSteps(false));
    worker.send(SimCommand::SetStepsPerFrame(CHUNK));
    worker.send(SimCommand::OpenScenario(Box::new(scenario)));
    let mut frames = Vec::new();
    let mut target = 0;
    let deadline = Instant::now() + Duration::from_secs(300);
    while target < STEPS || frames.last().is_none_or(|f: &Frame| f.step < STEPS) {
        assert!(
            Instant::now() < deadline,
            "the session did not reach step {STEPS}"
        );
        while let Some(event) = worker.try_event() {
            if let SimEvent::Notice(level, text) = event {
                assert_ne!(level, heatlab_engine::session::Level::Error, "{text}");
            }
        }
        let Some(frame) = worker.take_frame() else {
            std::thread::sleep(Duration::from_millis(2));
            continue;
        };
        // The first frame shows the scenario at step 0: step from there, a chunk at a time.
        if frame.step == target && target < STEPS && frame.problem.is_some() {
            target += CHUNK;
            worker.send(SimCommand::Step(CHUNK));
        }
        if frame.steps > 0 {
            frames.push(frame);
        }
    }
    (worker, frames)
}

fn exchange_bits(balance: &EnergyBalance) -> Vec<u64> {
    let e = balance.exchange;
    let mut bits = vec![
        balance.stored_before.to_bits(),
        balance.stored_after.to_bits(),
        e.sources.to_bits(),
        e.held.to_bits(),
        balance.heat_crossed.to_bits(),
        balance.round_off_bound.to_bits(),
    ];
    bits.extend(e.sides.iter().map(|s| s.to_bits()));
    bits
}

#[expect(
    clippy::unwrap_used,
    reason = "a test helper: its failure is the test's failure"
)]
fn json_balance(value: &serde_json::Value) -> EnergyBalance {
    let number = |v: &serde_json::Value| v.as_f64().unwrap();
    let exchange = &value["exchange"];
    let sides: Vec<f64> = exchange["sides"]
        .as_array()
        .unwrap()
        .iter()
        .map(number)
        .collect();
    let mut balance = EnergyBalance::new(
        number(&value["stored_before"]),
        number(&value["stored_after"]),
        heatlab_engine::problem::EnergyExchange {
            sources: number(&exchange["sources"]),
            sides: [sides[0], sides[1], sides[2], sides[3]],
            held: number(&exchange["held"]),
        },
        number(&value["round_off_bound"]),
    );
    balance.heat_crossed = number(&value["heat_crossed"]);
    balance
}

/// `heatlab run` of `scenario` to `STEPS` in chunks of `CHUNK`: its `run.json` and last field.
#[expect(
    clippy::unwrap_used,
    reason = "a test helper: its failure is the test's failure"
)]
fn cli_run(dir: &Path, scenario: &str) -> (serde_json::Value, heatlab_engine::grid::Grid) {
    let (steps, chunk) = (STEPS.to_string(), CHUNK.to_string());
    let run = heatlab_in(
        dir,
        &[
            "run",
            "--scenario",
            scenario,
            "--steps",
            &steps,
            "--chunk",
            &chunk,
            // Frames only at the end: the scenario's output interval would cut chunks too.
            "--save-every",
            &steps,
            "--npy",
            "--out",
            "cli",
        ],
    );
    succeeded(&run);
    let record = read_json(&dir.join("cli/run.json"));
    let field =
        read_npy(&std::fs::read(dir.join(format!("cli/field_{STEPS:06}.npy"))).unwrap()).unwrap();
    (record, field)
}

#[test]
fn the_cli_and_the_app_run_a_scenario_alike() {
    let dir = tempfile::tempdir().unwrap();
    let (record, cli_field) = cli_run(dir.path(), "heater-thermostat");
    let problem = &record["problem"];

    let (worker, frames) = app_frames("heater-thermostat");
    let (reply, answer) = std::sync::mpsc::channel();
    worker.send(SimCommand::SnapshotField(reply));
    let (app_field, _) = answer
        .recv_timeout(Duration::from_secs(60))
        .unwrap()
        .unwrap();
    assert_eq!(app_field.size(), cli_field.size());
    let differing = app_field
        .as_slice()
        .iter()
        .zip(cli_field.as_slice())
        .filter(|(a, b)| a.to_bits() != b.to_bits())
        .count();
    assert_eq!(differing, 0, "cells differing between the app and the CLI");

    // The same windows: the CLI's chunks are the app's frames.
    let windows = problem["energy"].as_array().unwrap();
    let app_windows: Vec<EnergyBalance> = frames
        .iter()
        .filter_map(|f| f.problem.as_ref().and_then(|p| p.energy))
        .collect();
    assert_eq!(windows.len() as u64, STEPS / CHUNK);
    let cut: Vec<(u64, u64)> = frames.iter().map(|f| (f.step, f.steps)).collect();
    assert_eq!(app_windows.len(), windows.len(), "{cut:?}");
    for (cli, app) in windows.iter().zip(&app_windows) {
        assert_eq!(exchange_bits(&json_balance(cli)), exchange_bits(app));
    }
    // The same budget, and the same closing figures.
    let last = frames.last().unwrap().problem.as_ref().unwrap();
    let app_budget = last.budget.unwrap();
    let cli_budget = &problem["budget"];
    assert_eq!(cli_budget["from_step"], 0);
    assert_eq!(app_budget.window.to_step, STEPS);
    assert_eq!(
        exchange_bits(&json_balance(&cli_budget["window"])),
        exchange_bits(&app_budget.window.balance())
    );
    assert_eq!(
        cli_budget["window"]["relative_closing_error"].as_f64(),
        Some(app_budget.window.relative_closing_error)
    );
    // Within what the float32 field's rounding allows over its steps.
    assert_eq!(cli_budget["window"]["within_round_off"], true);
    assert!(app_budget.window.within_round_off);
    assert_eq!(
        problem["simulated_seconds"].as_f64(),
        Some(last.simulated_seconds)
    );
    // The same thermostat switches, at the same steps.
    let app_switches: Vec<u64> = frames
        .iter()
        .flat_map(|f| {
            f.problem
                .as_ref()
                .map(|p| p.switches.clone())
                .unwrap_or_default()
        })
        .map(|s| s.step)
        .collect();
    let cli_switches: Vec<u64> = problem["switches"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["step"].as_u64().unwrap())
        .collect();
    assert!(!cli_switches.is_empty(), "the thermostat switched");
    assert_eq!(app_switches, cli_switches);
}

#[test]
fn the_app_pauses_at_the_end_of_a_scenarios_duration() {
    let mut scenario = load_file_or_named(Path::new("heater-thermostat")).unwrap();
    // 2.5 s of the scenario's 0.0023 s steps: a step count that no frame size divides.
    scenario.file.time.duration = Some(2.5);
    let worker = diffusion::spawn(Arc::new(|| {})).unwrap();
    worker.send(SimCommand::SetAutoSteps(false));
    worker.send(SimCommand::SetStepsPerFrame(100));
    worker.send(SimCommand::OpenScenario(Box::new(scenario)));
    worker.send(SimCommand::Play);
    let deadline = Instant::now() + Duration::from_secs(120);
    let mut notice = None;
    let mut last_step = 0;
    while notice.is_none() {
        assert!(Instant::now() < deadline, "no end at step {last_step}");
        while let Some(event) = worker.try_event() {
            if let SimEvent::Notice(_, text) = event {
                notice = notice.or(text.contains("duration").then_some(text));
            }
        }
        if let Some(frame) = worker.take_frame() {
            last_step = frame.step;
        }
        std::thread::sleep(Duration::from_millis(2));
    }
    let notice = notice.unwrap();
    // ceil(2.5 / dt) steps, as heatlab run --duration 2.5 takes.
    assert!(notice.contains("step 1080 "), "{notice}");
    // Play goes on past it.
    worker.send(SimCommand::Play);
    let deadline = Instant::now() + Duration::from_secs(60);
    while last_step <= 1080 {
        assert!(Instant::now() < deadline, "Play did not go on");
        if let Some(frame) = worker.take_frame() {
            last_step = frame.step;
        }
        std::thread::sleep(Duration::from_millis(2));
    }
}

#[test]
fn the_app_pauses_when_a_problem_falls_below_absolute_zero() {
    let mut scenario = load_file_or_named(Path::new("heater-plate")).unwrap();
    for kind in &mut scenario.problem.kinds {
        if let Some(heater) = kind.heater.as_mut() {
            heater.power = heatlab_engine::problem::HeaterPower::Total(-1e7);
        }
    }
    let worker = diffusion::spawn(Arc::new(|| {})).unwrap();
    worker.send(SimCommand::SetAutoSteps(false));
    worker.send(SimCommand::SetStepsPerFrame(200));
    worker.send(SimCommand::OpenScenario(Box::new(scenario)));
    worker.send(SimCommand::Play);
    let deadline = Instant::now() + Duration::from_secs(120);
    let notice = loop {
        assert!(Instant::now() < deadline, "the app did not stop");
        let found = std::iter::from_fn(|| worker.try_event()).find_map(|event| match event {
            SimEvent::Notice(_, text) if text.contains("absolute zero") => Some(text),
            _ => None,
        });
        if let Some(text) = found {
            break text;
        }
        worker.take_frame();
        std::thread::sleep(Duration::from_millis(2));
    };
    assert!(notice.contains("paused at step"), "{notice}");
    // Paused: on the GPU the steps queued behind the checked frame still land (a frame's
    // worth, shown once the frame before is taken), then no frame steps further.
    let mut last = None;
    let mut quiet = false;
    for _ in 0..10 {
        std::thread::sleep(Duration::from_millis(200));
        match worker.take_frame() {
            None => quiet = true,
            Some(frame) => {
                quiet = last == Some(frame.step);
                last = Some(frame.step);
            }
        }
        if quiet {
            break;
        }
    }
    assert!(quiet, "still stepping at step {last:?}");
}
