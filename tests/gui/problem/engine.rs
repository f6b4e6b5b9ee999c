//! The simulation thread's side of the problem tools, driven through the real app: kinds painted
//! while running are one undo step in the brush's history (undo and redo), a heater switched by
//! editing its kind or by a thermostat shows in the frames, a side is set, and a thermostat on a
//! kind without a heater is refused with a notice and the field left as it was; the steady state
//! is solved (a notice says how) and implicit steps are switched on and off.

#![expect(
    clippy::unwrap_used,
    reason = "test helpers unwrap like the tests: a failure there is the test's failure"
)]

use super::common::app::{app_harness, apply, has_notice, wait_until};

use eframe::egui::Vec2;
use egui_kittest::Harness;
use heatlab::ui::diffusion::DiffusionCommand;
use heatlab::ui::{HeatlabApp, Settings};
use heatlab_engine::grid::GridSize;
use heatlab_engine::problem::material::find;
use heatlab_engine::problem::{
    CellKind, Heater, HeaterPower, Shape, Side, SideCondition, Thermostat,
};
use heatlab_engine::session::diffusion::ProblemCommand;
use heatlab_engine::sim::solve::Stepping;
use heatlab_engine::solve::{ImplicitScheme, SolveOptions};

pub(super) fn harness() -> (Harness<'static, HeatlabApp>, Settings) {
    let mut settings = Settings::default();
    settings.field.size = GridSize::new(32, 48).unwrap();
    let harness = app_harness(settings.clone(), Vec2::new(1280.0, 800.0));
    (harness, settings)
}

pub(super) fn problem_command(
    harness: &mut Harness<'static, HeatlabApp>,
    settings: &mut Settings,
    command: ProblemCommand,
) {
    apply(harness, settings, DiffusionCommand::Problem(command));
}

/// The kind counts of the problem the panel was last told of.
fn counts(app: &HeatlabApp) -> Vec<usize> {
    app.diffusion()
        .state()
        .problem
        .as_ref()
        .map(|p| p.kind_counts())
        .unwrap_or_default()
}

pub(super) fn heater_kind(on: bool) -> CellKind {
    CellKind {
        name: "element".into(),
        heater: Some(Heater {
            power: HeaterPower::Total(500.0),
            on,
        }),
        ..CellKind::of(find("copper").unwrap())
    }
}

pub(super) const RECT: Shape = Shape::Rectangle {
    from: (4.0, 4.0),
    to: (8.0, 10.0),
};

#[test]
fn kinds_painted_while_running_are_one_undo_step_with_redo() {
    let (mut harness, mut settings) = harness();
    apply(&mut harness, &mut settings, DiffusionCommand::Play);
    let held = CellKind {
        held_temperature: Some(80.0),
        ..CellKind::of(find("copper").unwrap())
    };
    for shape in [
        RECT,
        Shape::Disc {
            centre: (20.0, 30.0),
            radius: 3.0,
        },
    ] {
        problem_command(
            &mut harness,
            &mut settings,
            ProblemCommand::Paint {
                shape,
                kind: held.clone(),
            },
        );
    }
    problem_command(&mut harness, &mut settings, ProblemCommand::EndStroke);
    wait_until(&mut harness, "one stroke of kinds to undo", |app| {
        app.diffusion().paint_tools().history() == (1, 0) && counts(app).len() == 2
    });
    let painted = counts(harness.state())[1];
    assert!(painted > 24, "{painted}");
    wait_until(&mut harness, "steps after the stroke", |app| {
        app.diffusion().state().step > 20
    });
    harness.state_mut().diffusion_mut().paint_tools_mut().undo();
    wait_until(&mut harness, "the stroke undone", |app| {
        app.diffusion().paint_tools().history() == (0, 1) && counts(app).get(1) == Some(&0)
    });
    wait_until(&mut harness, "a notice of undo after steps", |app| {
        app.notices()
            .iter()
            .any(|n| n.text.contains("steps after the stroke"))
    });
    harness.state_mut().diffusion_mut().paint_tools_mut().redo();
    wait_until(&mut harness, "the stroke redone", |app| {
        app.diffusion().paint_tools().history() == (1, 0) && counts(app).get(1) == Some(&painted)
    });
    // Each way says what it did: undo takes the heat out, redo puts it back.
    let notices: Vec<String> = harness
        .state()
        .notices()
        .iter()
        .map(|n| n.text.clone())
        .collect();
    assert!(
        notices
            .iter()
            .any(|t| t.starts_with("undone") && t.contains("taken out")),
        "{notices:?}"
    );
    wait_until(&mut harness, "a notice of redo after steps", |app| {
        app.notices()
            .iter()
            .any(|n| n.text.starts_with("redone") && n.text.contains("put back"))
    });
    apply(&mut harness, &mut settings, DiffusionCommand::Pause);
}

#[test]
fn a_heater_switched_by_its_kind_or_a_thermostat_shows_in_the_frames() {
    let (mut harness, mut settings) = harness();
    problem_command(
        &mut harness,
        &mut settings,
        ProblemCommand::Paint {
            shape: RECT,
            kind: heater_kind(true),
        },
    );
    problem_command(&mut harness, &mut settings, ProblemCommand::EndStroke);
    apply(&mut harness, &mut settings, DiffusionCommand::Step(3));
    let heater_on = |app: &HeatlabApp| {
        app.diffusion()
            .state()
            .problem_frame
            .as_ref()
            .and_then(|f| f.heaters_on.get(1).copied())
    };
    wait_until(&mut harness, "the heater on in a frame", |app| {
        heater_on(app) == Some(true)
    });
    problem_command(
        &mut harness,
        &mut settings,
        ProblemCommand::EditKind {
            index: 1,
            kind: heater_kind(false),
        },
    );
    apply(&mut harness, &mut settings, DiffusionCommand::Step(3));
    wait_until(&mut harness, "the heater off in a frame", |app| {
        heater_on(app) == Some(false)
            && app.diffusion().state().problem.as_ref().unwrap().kinds[1]
                .heater
                .is_some_and(|h| !h.on)
    });
    // A thermostat far above the field's temperature switches it on at its first decision.
    let thermostat = Thermostat {
        heater_kind: 1,
        probe: (6, 7),
        setpoint: 500.0,
        deadband: 1.0,
        every_steps: 2,
    };
    problem_command(
        &mut harness,
        &mut settings,
        ProblemCommand::SetThermostats(vec![thermostat]),
    );
    apply(&mut harness, &mut settings, DiffusionCommand::Step(5));
    wait_until(
        &mut harness,
        "the thermostat switched the heater on",
        |app| heater_on(app) == Some(true),
    );
    problem_command(
        &mut harness,
        &mut settings,
        ProblemCommand::SetSide(Side::Left, SideCondition::Fixed { temperature: 50.0 }),
    );
    wait_until(&mut harness, "the left side fixed", |app| {
        app.diffusion().state().problem.as_ref().is_some_and(|p| {
            p.sides.get(Side::Left) == SideCondition::Fixed { temperature: 50.0 }
                && p.thermostats.len() == 1
        })
    });
}

#[test]
fn a_thermostat_without_a_heater_is_refused_with_the_field_intact() {
    let (mut harness, mut settings) = harness();
    problem_command(
        &mut harness,
        &mut settings,
        ProblemCommand::Paint {
            shape: RECT,
            kind: CellKind::of(find("copper").unwrap()),
        },
    );
    problem_command(&mut harness, &mut settings, ProblemCommand::EndStroke);
    wait_until(&mut harness, "the problem with copper", |app| {
        counts(app).len() == 2 && app.diffusion().state().stats.is_some()
    });
    // Let the statistics of the painted field come.
    for _ in 0..10 {
        harness.step();
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    let before = harness.state().diffusion().state().stats;
    let problem = harness.state().diffusion().state().problem.clone();
    problem_command(
        &mut harness,
        &mut settings,
        ProblemCommand::SetThermostats(vec![Thermostat {
            heater_kind: 1,
            probe: (6, 7),
            setpoint: 40.0,
            deadband: 1.0,
            every_steps: 5,
        }]),
    );
    wait_until(&mut harness, "a notice that copper is no heater", |app| {
        app.notices()
            .iter()
            .any(|n| n.text.contains("not a heater"))
    });
    for _ in 0..10 {
        harness.step();
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    let state = harness.state().diffusion().state();
    assert_eq!(state.problem, problem, "the problem as it was");
    assert_eq!(state.stats, before, "the field as it was");
    assert_eq!(state.step, 0);
}

#[test]
fn the_steady_state_is_solved_and_implicit_steps_are_taken_on_the_simulation_thread() {
    let (mut harness, mut settings) = harness();
    problem_command(
        &mut harness,
        &mut settings,
        ProblemCommand::SetSide(Side::Left, SideCondition::Fixed { temperature: 100.0 }),
    );
    problem_command(
        &mut harness,
        &mut settings,
        ProblemCommand::SetSide(Side::Right, SideCondition::Fixed { temperature: 0.0 }),
    );
    wait_until(&mut harness, "the problem with fixed sides", |app| {
        app.diffusion().state().problem.is_some()
    });
    problem_command(&mut harness, &mut settings, ProblemCommand::SolveSteady);
    wait_until(&mut harness, "the steady state's notice", |app| {
        has_notice(app, "steady state solved")
    });
    // Between 100 °C and 0 °C sides, insulated top and bottom: the steady field spans nearly
    // all of it, linear across.
    wait_until(&mut harness, "the steady field's statistics", |app| {
        app.diffusion()
            .state()
            .stats
            .is_some_and(|s| s.max > 95.0 && s.min < 5.0)
    });
    let Some(problem) = harness.state().diffusion().state().problem.clone() else {
        panic!("the problem went missing");
    };
    let dt = 100.0 * problem.tables().unwrap().dt;
    problem_command(
        &mut harness,
        &mut settings,
        ProblemCommand::SetStepping(Stepping::Implicit {
            scheme: ImplicitScheme::BackwardEuler,
            dt,
            options: SolveOptions::default(),
        }),
    );
    apply(&mut harness, &mut settings, DiffusionCommand::Step(3));
    wait_until(&mut harness, "three implicit steps", |app| {
        let state = app.diffusion().state();
        state.step == 3 && matches!(state.stepping, Stepping::Implicit { .. })
    });
    problem_command(
        &mut harness,
        &mut settings,
        ProblemCommand::SetStepping(Stepping::Explicit),
    );
    wait_until(&mut harness, "explicit steps again", |app| {
        app.diffusion().state().stepping == Stepping::Explicit
    });
}
