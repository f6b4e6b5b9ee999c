//! A problem's run in physical time: the progress toward the scenario's duration, a speed
//! limit in simulated seconds per wall second, and the speed reached.

use std::time::{Duration, Instant};

use eframe::egui::Vec2;
use egui_kittest::kittest::Queryable;
use egui_kittest::Harness;
use heatlab::settings::ProblemSpeed;
use heatlab::ui::diffusion::DiffusionCommand;
use heatlab::ui::{HeatlabApp, Settings};
use heatlab_engine::grid::GridSize;

use super::common::app::{app_harness, apply, wait_until};
use super::open_gallery_problem;

/// Runs frames for `wall` of wall time.
fn run_for(harness: &mut Harness<'_, HeatlabApp>, wall: Duration) {
    let start = Instant::now();
    while start.elapsed() < wall {
        harness.step();
        std::thread::sleep(Duration::from_millis(5));
    }
}

#[test]
fn a_problem_runs_toward_its_duration_at_the_speed_asked() {
    let mut settings = Settings::default();
    settings.field.size = GridSize::new(32, 48).unwrap();
    let mut harness = app_harness(settings.clone(), Vec2::new(1440.0, 900.0));
    // The heat sink runs for 30 min of simulated time.
    open_gallery_problem(&mut harness, "heat-sink");
    harness.run_steps(2);
    assert!(
        harness
            .query_by_label_contains("0 s of 30.00 min simulated (0%)")
            .is_some(),
        "the progress toward the duration is shown"
    );
    // At a billionth of a simulated second per wall second no step of 2.3 ms is owed.
    let crawl = ProblemSpeed {
        limited: true,
        seconds_per_second: 1e-9,
    };
    apply(
        &mut harness,
        &mut settings,
        DiffusionCommand::SetSpeed(crawl),
    );
    apply(&mut harness, &mut settings, DiffusionCommand::Play);
    run_for(&mut harness, Duration::from_millis(600));
    assert!(harness.state().diffusion().state().playing);
    assert_eq!(
        harness.state().diffusion().state().step,
        0,
        "the limit holds"
    );
    // As fast as it goes: the run moves, and says how fast in simulated time.
    let free = ProblemSpeed {
        limited: false,
        ..crawl
    };
    apply(
        &mut harness,
        &mut settings,
        DiffusionCommand::SetSpeed(free),
    );
    wait_until(&mut harness, "the run moves", |app| {
        app.diffusion().state().step > 1000
    });
    run_for(&mut harness, Duration::from_millis(600));
    let rate = harness.state().diffusion().state().simulated_rate.unwrap();
    assert!(rate > 0.0, "{rate}");
    assert!(harness.query_by_label_contains("running at").is_some());
    assert!(harness
        .query_by_label_contains("of 30.00 min simulated")
        .is_some());
    // The speed asked is a setting: it is kept.
    assert_eq!(settings.speed, free);
}

#[test]
fn the_exact_answers_error_is_plotted_over_time_with_where_it_holds() {
    let mut settings = Settings::default();
    settings.field.size = GridSize::new(32, 48).unwrap();
    let mut harness = app_harness(settings.clone(), Vec2::new(1440.0, 900.0));
    // A fire on a thick wall: the erf holds until the far side feels the heat (30 h).
    open_gallery_problem(&mut harness, "semi-infinite");
    for round in 1..=4u64 {
        apply(&mut harness, &mut settings, DiffusionCommand::Step(100));
        wait_until(&mut harness, "the steps are taken", |app| {
            app.diffusion().state().step >= 100 * round
        });
        harness.run_steps(3);
    }
    let history = harness
        .state()
        .diffusion()
        .paint_tools()
        .profile
        .exact_history();
    let points: Vec<[f64; 2]> = history.points().copied().collect();
    assert!(points.len() >= 3, "{points:?}");
    assert!(
        points.windows(2).all(|p| p[0][0] < p[1][0]),
        "in time order"
    );
    assert!(
        points.iter().all(|p| p[1] < 1.0),
        "within 1% of the span: {points:?}"
    );
    assert!(harness
        .query_by_label_contains("the answer holds until 30.26 h")
        .is_some());
    // Past the window the error says so.
    apply(&mut harness, &mut settings, DiffusionCommand::Step(14_000));
    wait_until(&mut harness, "the wall is past its window", |app| {
        app.diffusion().state().step >= 14_400
    });
    harness.run_steps(3);
    assert!(harness
        .query_by_label_contains("outside the time where it holds")
        .is_some());
}
