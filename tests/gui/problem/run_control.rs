//! A problem's run in physical time: the progress toward the scenario's duration, a duration
//! typed for a problem built in the app (and a bad one refused), the stop at the steady state,
//! a speed limit in simulated seconds per wall second, and the speed reached.

use std::time::{Duration, Instant};

use eframe::egui::accesskit::Role;
use eframe::egui::Vec2;
use egui_kittest::kittest::Queryable;
use egui_kittest::Harness;
use heatlab::settings::{ProblemSpeed, SteadyStop};
use heatlab::ui::diffusion::DiffusionCommand;
use heatlab::ui::{HeatlabApp, Settings};
use heatlab_engine::grid::GridSize;
use heatlab_engine::problem::{Side, SideCondition};
use heatlab_engine::session::diffusion::ProblemCommand;

use super::common::app::{app_harness, apply, has_notice, wait_until};
use super::common::pointer::type_into;
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

/// A 16x16 aluminium plate built in the app (1 mm cells), held at 80 °C on the left and 20 °C on
/// the right: it settles in a few simulated seconds.
#[expect(
    clippy::unwrap_used,
    reason = "a test helper: its failure is the test's failure"
)]
fn settling_plate() -> (Harness<'static, HeatlabApp>, Settings) {
    let mut settings = Settings::default();
    settings.field.size = GridSize::new(16, 16).unwrap();
    let mut harness = app_harness(settings.clone(), Vec2::new(1440.0, 900.0));
    for (side, temperature) in [(Side::Left, 80.0), (Side::Right, 20.0)] {
        apply(
            &mut harness,
            &mut settings,
            DiffusionCommand::Problem(ProblemCommand::SetSide(
                side,
                SideCondition::Fixed { temperature },
            )),
        );
    }
    wait_until(&mut harness, "the problem built", |app| {
        app.diffusion()
            .state()
            .problem_frame
            .as_ref()
            .is_some_and(|f| f.duration_seconds.is_none())
    });
    (harness, settings)
}

fn simulated(app: &HeatlabApp) -> f64 {
    app.diffusion()
        .state()
        .problem_frame
        .as_ref()
        .map_or(0.0, |f| f.simulated_seconds)
}

#[test]
fn a_duration_typed_for_a_problem_built_in_the_app_stops_its_run() {
    let (mut harness, mut settings) = settling_plate();
    type_into(&mut harness, "run for", "ten min");
    assert!(harness
        .query_by_label_contains("duration not changed: \"ten\" is not a number")
        .is_some());
    harness.run_steps(3);
    assert_eq!(
        harness
            .state()
            .diffusion()
            .state()
            .problem_frame
            .as_ref()
            .unwrap()
            .duration_seconds,
        None,
        "a bad duration changes nothing"
    );
    type_into(&mut harness, "run for", "0.5 s");
    wait_until(&mut harness, "the duration set", |app| {
        app.diffusion()
            .state()
            .problem_frame
            .as_ref()
            .unwrap()
            .duration_seconds
            == Some(0.5)
    });
    assert!(harness
        .query_by_label_contains("0 s of 500.000 ms simulated (0%)")
        .is_some());
    apply(&mut harness, &mut settings, DiffusionCommand::Play);
    // The pause (an event) may come before the frame of the last step: both are waited for.
    wait_until(&mut harness, "paused at the duration", |app| {
        !app.diffusion().state().playing
            && has_notice(app, "paused at the end of the duration")
            && simulated(app) >= 0.5
    });
    let at = simulated(harness.state());
    let dt = harness
        .state()
        .diffusion()
        .state()
        .problem_frame
        .as_ref()
        .unwrap()
        .dt;
    assert!((0.5..0.5 + dt).contains(&at), "{at} s, dt {dt} s");
    // Longer: Play goes on to the new end.
    type_into(&mut harness, "run for", "1 s");
    apply(&mut harness, &mut settings, DiffusionCommand::Play);
    wait_until(&mut harness, "paused at the longer duration", |app| {
        !app.diffusion().state().playing && simulated(app) >= 1.0
    });
    assert!(simulated(harness.state()) < 1.0 + dt);
}

#[test]
fn a_run_asked_to_stop_at_the_steady_state_stops_there_and_says_so() {
    let (mut harness, mut settings) = settling_plate();
    // Ticked as a hand would, at the default tolerance of 1e-3 K/s.
    harness
        .get_by_role_and_label(Role::CheckBox, "stop at the steady state: |dT/dt| under")
        .click();
    harness.run_steps(2);
    apply(&mut harness, &mut settings, DiffusionCommand::Play);
    wait_until(&mut harness, "the rate shown", |app| {
        app.diffusion()
            .state()
            .problem_frame
            .as_ref()
            .is_some_and(|f| f.change_rate.is_some())
    });
    harness.run_steps(2);
    assert!(harness
        .query_by_label_contains("largest |dT/dt| now")
        .is_some());
    wait_until(&mut harness, "paused at the steady state", |app| {
        !app.diffusion().state().playing && has_notice(app, "paused at the steady state")
    });
    let frame = harness
        .state()
        .diffusion()
        .state()
        .problem_frame
        .clone()
        .unwrap();
    assert!(frame.change_rate.unwrap() < 1e-3, "{frame:?}");
    assert_eq!(frame.steady_tolerance, Some(1e-3));
    // The steady plate is the straight line from 80 to 20 °C (within the tolerance's reach).
    let field = harness.state().diffusion().field_value_at(8, 0).unwrap().0;
    assert!(field > 70.0, "the hot side's cell: {field}");
    assert_eq!(
        harness.state().settings().steady_stop,
        SteadyStop {
            on: true,
            tolerance: 1e-3
        },
        "kept as a setting"
    );
}
