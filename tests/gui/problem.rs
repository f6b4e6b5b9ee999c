//! The tools that build and read heat problems in the app (materials, shapes, sources, sides,
//! overlays, the gallery), driven through the real app with egui_kittest as a person would.
//! Each tool's tests are a module in `tests/gui/problem/`.

use crate::common;
mod gallery;
mod materials;
mod overlays;
mod run_control;
mod switching;

use common::app::{app_harness, wait_until};

mod engine;

use eframe::egui::Vec2;
use heatlab::ui::diffusion::DiffusionCommand;
use heatlab::ui::Settings;
use heatlab_engine::grid::GridSize;
use heatlab_engine::problem::{CellKind, Shape};
use heatlab_engine::session::diffusion::ProblemCommand;

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
