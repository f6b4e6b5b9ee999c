//! The tools that build and read heat problems in the app (materials, shapes, sources, sides,
//! overlays, the gallery), driven through the real app with egui_kittest as a person would.
//! Each tool's tests are a module in `tests/gui/problem/`.

use crate::common;
mod gallery;
mod materials;
mod new_problem;
mod overlays;
mod run_control;
mod switching;
mod undo;

use common::app::{app_harness, wait_until};

mod engine;

use eframe::egui::Vec2;
use heatlab::ui::diffusion::DiffusionCommand;
use heatlab::ui::Settings;
use heatlab_engine::grid::GridSize;
use heatlab_engine::problem::{CellKind, Shape};
use heatlab_engine::session::diffusion::ProblemCommand;

/// Waits until the problem of the gallery entry `name` is the one stepped, with its scenario
/// open and a frame of it shown.
fn wait_for_gallery_problem(
    harness: &mut egui_kittest::Harness<'_, heatlab::ui::HeatlabApp>,
    name: &str,
) {
    let expected = heatlab_engine::scenario::gallery::find(name)
        .and_then(|entry| entry.scenario().ok())
        .map(|scenario| scenario.problem);
    assert!(expected.is_some(), "{name} is a gallery problem");
    wait_until(harness, &format!("the {name} problem arrives"), |app| {
        app.diffusion().state().problem.as_deref() == expected.as_ref()
            && app.diffusion().opened_scenario().is_some()
            && app.diffusion().state().problem_frame.is_some()
    });
}

/// Opens the gallery entry `name` as its menu item does and waits for it.
fn open_gallery_problem(
    harness: &mut egui_kittest::Harness<'_, heatlab::ui::HeatlabApp>,
    name: &str,
) {
    if let Some(entry) = heatlab_engine::scenario::gallery::find(name) {
        harness.state_mut().diffusion_mut().open_gallery(entry);
    }
    wait_for_gallery_problem(harness, name);
}

/// The tutorial's plate has no problem; painting a material on it starts one whose map holds
/// the painted cells, and the panel hears of it.
#[test]
fn painting_a_material_on_the_tutorial_plate_starts_a_problem() {
    let mut settings = Settings::default();
    settings.field.size = GridSize::new(32, 48).unwrap();
    let mut harness = app_harness(settings.clone(), Vec2::new(1280.0, 800.0));
    assert!(harness.state().diffusion().state().problem.is_none());
    let copper = heatlab_engine::problem::material::find("copper").unwrap();
    let command = DiffusionCommand::Problem(ProblemCommand::Paint {
        shape: Shape::Rectangle {
            from: (4.0, 4.0),
            to: (8.0, 10.0),
        },
        kind: CellKind::of(copper),
    });
    harness
        .state_mut()
        .diffusion_mut()
        .apply(command, &mut settings);
    wait_until(&mut harness, "the problem is reported", |app| {
        app.diffusion().state().problem.is_some()
    });
    let problem = harness.state().diffusion().state().problem.clone().unwrap();
    assert_eq!(problem.kinds.len(), 2);
    assert_eq!(problem.kind_counts(), vec![32 * 48 - 24, 24]);
}

mod sources;
