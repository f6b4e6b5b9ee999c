//! Undo and redo reach past strokes: a probe placed with the pointer, a side, a painted heater,
//! its switch and the thermostats are taken back newest first with Ctrl+Z and made again with
//! Ctrl+Shift+Z, each saying what it took back.

#![expect(
    clippy::unwrap_used,
    reason = "test helpers unwrap like the tests: a failure there is the test's failure"
)]

use super::common::app::{apply, wait_until};
use super::common::pointer::{cell_centre, click_at, picture_rect};
use super::engine::{harness, heater_kind, problem_command, RECT};

use eframe::egui::{Key, Modifiers, PointerButton};
use egui_kittest::Harness;
use heatlab::ui::diffusion::DiffusionCommand;
use heatlab::ui::HeatlabApp;
use heatlab_engine::problem::{HeatProblem, Side, SideCondition, Thermostat};
use heatlab_engine::session::diffusion::ProblemCommand;

const CONVECTIVE: SideCondition = SideCondition::Convective {
    h: 30.0,
    ambient: 20.0,
};

fn history(app: &HeatlabApp) -> (usize, usize) {
    app.diffusion().paint_tools().history()
}

fn problem(app: &HeatlabApp) -> Option<&HeatProblem> {
    app.diffusion().state().problem.as_deref()
}

fn probe_cells(app: &HeatlabApp) -> Vec<(String, usize, usize)> {
    app.diffusion()
        .paint_tools()
        .probes
        .all()
        .iter()
        .map(|p| (p.name(), p.row, p.col))
        .collect()
}

fn said(app: &HeatlabApp, text: &str) -> bool {
    app.notices().iter().any(|n| n.text == text)
}

/// Presses Ctrl+Z (or Ctrl+Shift+Z with `redo`) and waits for the history's counts to move.
fn press(harness: &mut Harness<'static, HeatlabApp>, redo: bool, counts: (usize, usize)) {
    if redo {
        harness.key_press_modifiers(Modifiers::COMMAND | Modifiers::SHIFT, Key::Z);
    } else {
        harness.key_press_modifiers(Modifiers::COMMAND, Key::Z);
    }
    wait_until(harness, "the history moved", |app| history(app) == counts);
}

/// A probe placed with the pointer, a side (which starts a problem on the plate), a heater
/// painted, switched off, and a thermostat: five changes kept for undo. Returns the problem built.
fn make_five_changes(
    harness: &mut Harness<'static, HeatlabApp>,
    settings: &mut heatlab::ui::Settings,
) -> HeatProblem {
    // A probe placed with the probe tool.
    harness.key_press(Key::P);
    harness.step();
    let rect = picture_rect(harness);
    click_at(
        harness,
        cell_centre(rect, (32, 48), 10, 12),
        PointerButton::Primary,
    );
    wait_until(harness, "the probe kept for undo", |app| {
        history(app) == (1, 0)
    });
    // A side (which starts a problem on the plate), a heater painted, switched off, and a
    // thermostat.
    problem_command(
        harness,
        settings,
        ProblemCommand::SetSide(Side::Top, CONVECTIVE),
    );
    problem_command(
        harness,
        settings,
        ProblemCommand::Paint {
            shape: RECT,
            kind: heater_kind(true),
        },
    );
    problem_command(harness, settings, ProblemCommand::EndStroke);
    problem_command(
        harness,
        settings,
        ProblemCommand::EditKind {
            index: 1,
            kind: heater_kind(false),
        },
    );
    let thermostat = Thermostat {
        heater_kind: 1,
        probe: (6, 7),
        setpoint: 40.0,
        deadband: 1.0,
        every_steps: 2,
    };
    problem_command(
        harness,
        settings,
        ProblemCommand::SetThermostats(vec![thermostat]),
    );
    wait_until(harness, "five changes kept", |app| {
        history(app) == (5, 0) && problem(app).is_some_and(|p| p.thermostats.len() == 1)
    });
    problem(harness.state()).cloned().unwrap()
}

#[test]
fn sides_sources_thermostats_and_probes_undo_newest_first_and_redo() {
    let (mut harness, mut settings) = harness();
    let built = make_five_changes(&mut harness, &mut settings);

    press(&mut harness, false, (4, 1));
    wait_until(&mut harness, "the thermostat taken back", |app| {
        problem(app).is_some_and(|p| p.thermostats.is_empty())
            && said(app, "undone: the change of the thermostats")
    });
    press(&mut harness, false, (3, 2));
    wait_until(&mut harness, "the heater on again", |app| {
        problem(app).is_some_and(|p| p.kinds[1].heater.is_some_and(|h| h.on))
            && said(app, "undone: the change of element")
    });
    press(&mut harness, false, (2, 3));
    wait_until(
        &mut harness,
        "the heater's cells back to the plate",
        |app| problem(app).is_some_and(|p| p.kind_counts()[1] == 0),
    );
    press(&mut harness, false, (1, 4));
    wait_until(&mut harness, "the top side insulated again", |app| {
        problem(app).is_some_and(|p| p.sides.top == SideCondition::Insulated)
            && said(app, "undone: the change of the top side")
    });
    press(&mut harness, false, (0, 5));
    wait_until(&mut harness, "the probe gone", |app| {
        probe_cells(app).is_empty()
    });

    for undone in (0..5).rev() {
        press(&mut harness, true, (5 - undone, undone));
    }
    wait_until(&mut harness, "everything made again", |app| {
        problem(app) == Some(&built) && probe_cells(app) == [("P1".to_string(), 10, 12)]
    });
    apply(&mut harness, &mut settings, DiffusionCommand::Step(4));
    wait_until(&mut harness, "the probe sampled again", |app| {
        app.diffusion().paint_tools().probes.all()[0]
            .latest()
            .is_some_and(|(step, _)| step == 4)
    });
}
