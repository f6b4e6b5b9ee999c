//! Measures the app's frame loop headlessly (egui_kittest, no renderer): frames/s, steps/s and
//! the per-frame split while animating. Ignored by default; run it on the machine to measure:
//!
//! ```text
//! HEATLAB_MEASURE_SIZE=2000 HEATLAB_MEASURE_STEPS=100 [HEATLAB_MEASURE_AUTO=1] [HEATLAB_MEASURE_AGREEMENT=1] cargo test --release --test gui measure:: -- --ignored --nocapture
//! ```
//!
//! `HEATLAB_MEASURE_SCENARIO=FILE.toml` steps that scenario's heat problem (at its size) instead
//! of the tutorial's plate; with `HEATLAB_MEASURE_OVERLAYS=1` the isotherms and heat-flux
//! arrows are drawn over it.

use std::time::{Duration, Instant};

use eframe::egui::Vec2;
use egui_kittest::kittest::Queryable;
use egui_kittest::Harness;
use heatlab::ui::diffusion::{DiffusionCommand, FramePart};
use heatlab::ui::{AppOptions, HeatlabApp, Settings};
use heatlab_engine::compute::BackendChoice;
use heatlab_engine::grid::GridSize;
use heatlab_engine::scenario::Scenario;
use heatlab_engine::session::diffusion::ProblemCommand;

fn env_or<T: std::str::FromStr>(name: &str, default: T) -> T {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

/// The app with `settings`, not remembered, playing once ready when `autoplay`.
fn app(settings: Settings, autoplay: bool, window: Vec2) -> Harness<'static, HeatlabApp> {
    crate::common::app::build_app(
        AppOptions {
            settings: Some(settings),
            persist: false,
            autoplay,
            ..AppOptions::default()
        },
        window,
    )
}

#[test]
#[ignore = "a measurement, not a check: run with --ignored on the machine to measure"]
fn measure_animation() {
    let size: GridSize = env_or("HEATLAB_MEASURE_SIZE", GridSize::square(2000).unwrap());
    let steps: u64 = env_or("HEATLAB_MEASURE_STEPS", 10);
    let seconds: f64 = env_or("HEATLAB_MEASURE_SECONDS", 10.0);
    let backend: BackendChoice = env_or("HEATLAB_MEASURE_BACKEND", BackendChoice::Auto);
    let auto_steps = std::env::var("HEATLAB_MEASURE_AUTO").is_ok_and(|v| v == "1");
    // The live check against the CPU reference, to measure what it costs the stepping.
    let agreement_check = std::env::var("HEATLAB_MEASURE_AGREEMENT").is_ok_and(|v| v == "1");
    // A heat problem (a scenario file) stepped instead of the tutorial's plate, at its size.
    let scenario = scenario_to_measure();
    let mut settings = Settings {
        backend,
        steps_per_frame: steps,
        auto_steps,
        agreement_check,
        ..Settings::default()
    };
    settings.field.size = scenario.as_ref().map_or(size, |s| s.problem.size);
    let mut harness = app(settings.clone(), true, Vec2::new(1440.0, 900.0));
    let start = Instant::now();
    if let Some(scenario) = scenario {
        step_the_scenarios_problem(&mut harness, &mut settings, &scenario, start);
    }
    wait_until_playing(&mut harness, start);
    let measuring = Instant::now();
    while measuring.elapsed().as_secs_f64() < seconds {
        harness.step();
        // A display refreshes at most this often; the app never waits for it.
        std::thread::sleep(Duration::from_millis(1));
    }
    println!("heatlab gui measure: {}", harness.state().timing_summary());
    print_display_work(&harness);
    if agreement_check {
        print_agreement(&harness);
    }
}

/// The scenario file named by `HEATLAB_MEASURE_SCENARIO`, loaded, if one is named.
fn scenario_to_measure() -> Option<Scenario> {
    std::env::var("HEATLAB_MEASURE_SCENARIO").ok().map(|path| {
        heatlab_engine::scenario::load(std::path::Path::new(&path))
            .unwrap_or_else(|errors| panic!("{path}: {}", errors.into_error()))
    })
}

/// Once the app is ready, sets `scenario`'s heat problem and waits until it is the one
/// stepped, with the isotherms and arrows over it when `HEATLAB_MEASURE_OVERLAYS=1`.
fn step_the_scenarios_problem(
    harness: &mut Harness<'static, HeatlabApp>,
    settings: &mut Settings,
    scenario: &Scenario,
    start: Instant,
) {
    while !harness.state().is_ready() {
        harness.step();
        std::thread::sleep(Duration::from_millis(1));
        assert!(start.elapsed() < Duration::from_secs(300), "no field");
    }
    let command = DiffusionCommand::Problem(ProblemCommand::Set(Some(Box::new(
        scenario.problem.clone(),
    ))));
    harness.state_mut().diffusion_mut().apply(command, settings);
    while harness.state().diffusion().state().problem.is_none() {
        harness.step();
        std::thread::sleep(Duration::from_millis(1));
        assert!(start.elapsed() < Duration::from_secs(300), "no problem");
    }
    if std::env::var("HEATLAB_MEASURE_OVERLAYS").is_ok_and(|v| v == "1") {
        let overlays = harness.state_mut().diffusion_mut().overlays_mut();
        overlays.isotherms = true;
        overlays.arrows = true;
    }
    println!(
        "heatlab gui measure: stepping the problem {} ({} kinds of cells)",
        scenario.title(),
        scenario.problem.kinds.len()
    );
}

/// Steps the app until it plays and has shown a few frames.
fn wait_until_playing(harness: &mut Harness<'static, HeatlabApp>, start: Instant) {
    while !(harness.state().is_playing() && harness.state().frames_shown() > 5) {
        harness.step();
        std::thread::sleep(Duration::from_millis(1));
        assert!(
            start.elapsed() < Duration::from_secs(300),
            "never started playing"
        );
    }
}

/// Issue 11's display work: everything a frame spends drawing (the previews, the statistics,
/// the texture), as opposed to stepping, recording and the probes.
fn print_display_work(harness: &Harness<'static, HeatlabApp>) {
    let split = harness.state().timings().mean_split();
    let display_ms: f64 = split
        .iter()
        .filter(|(part, _)| {
            !matches!(
                part,
                FramePart::Stepping | FramePart::Recording | FramePart::Sampling
            )
        })
        .map(|(_, ms)| ms)
        .sum();
    println!(
        "heatlab gui measure: display work {display_ms:.2} ms per frame (previews, statistics, \
         texture; mean of the last 60 frames)"
    );
}

/// The live check's count of checks at the end, and whether it found the CPU differing.
fn print_agreement(harness: &Harness<'static, HeatlabApp>) {
    for checks in (1..=200).rev() {
        let total = format!("({checks} checks)");
        if harness.query_by_label_contains(&total).is_some() {
            println!("heatlab gui measure: agreement {total} at the end");
            break;
        }
    }
    if harness
        .query_by_label_contains("differs from the CPU")
        .is_some()
    {
        println!("heatlab gui measure: agreement: DIFFERS");
    }
}

/// Live regeneration while dragging the exponent (the field generated on the GPU when CUDA
/// works): fields generated per second of drag, and the UI's frames per second meanwhile.
///
/// ```text
/// HEATLAB_MEASURE_SIZE=2000 cargo test --release --test gui measure::measure_live_regeneration -- --ignored --nocapture
/// ```
#[test]
#[ignore = "a measurement, not a check: run with --ignored on the machine to measure"]
fn measure_live_regeneration() {
    let size: GridSize = env_or("HEATLAB_MEASURE_SIZE", GridSize::square(2000).unwrap());
    let frames: usize = env_or("HEATLAB_MEASURE_FRAMES", 300);
    let mut settings = Settings {
        auto_steps: false,
        ..Settings::default()
    };
    settings.field.size = size;
    let mut harness = app(settings, false, Vec2::new(1440.0, 1100.0));
    let start = Instant::now();
    while !harness.state().is_ready() {
        harness.step();
        std::thread::sleep(Duration::from_millis(1));
        assert!(start.elapsed() < Duration::from_secs(300), "no field");
    }
    let generated = |app: &HeatlabApp| app.diffusion().state().fields_generated;
    let before = generated(harness.state());
    let centre = harness
        .get_by_role_and_label(eframe::egui::accesskit::Role::SpinButton, "exponent")
        .rect()
        .center();
    harness.hover_at(centre);
    harness.step();
    harness.drag_at(centre);
    harness.step();
    let dragging = Instant::now();
    for frame in 1..=frames {
        // Half a point per frame: the exponent moves by 0.005 each frame (its speed is 0.01).
        harness.hover_at(centre + Vec2::new(-0.5 * frame as f32, 0.0));
        harness.step();
        std::thread::sleep(Duration::from_millis(1));
    }
    let seconds = dragging.elapsed().as_secs_f64();
    harness.drop_at(centre + Vec2::new(-0.5 * frames as f32, 0.0));
    harness.step();
    let fields = generated(harness.state()) - before;
    let state = harness.state().diffusion().state();
    let last = state.last_generation.as_ref().map_or_else(
        || "-".into(),
        |g| format!("{} in {:?} (device {:?})", g.place, g.wall, g.device),
    );
    println!(
        "heatlab gui measure: live regeneration at {size}: {fields} fields in {seconds:.2} s = {:.1} fields/s while dragging the exponent ({:.1} UI frames/s); exponent now {}; last: {last}",
        fields as f64 / seconds,
        frames as f64 / seconds,
        harness.state().settings().field.exponent
    );
}
