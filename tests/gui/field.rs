//! Generating the field from the app's side panel, driven through egui_kittest with pointer
//! drags as a person makes them: on the GPU a drag of the exponent regenerates the field live
//! (each new field shown while the pointer moves); on the CPU it waits for "Regenerate".

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "test helpers; clippy's allow-*-in-tests covers #[test] functions only"
)]

use crate::common;
use common::backend::cuda_or_skip;

use common::app::{app_harness, drag_value, wait_until};

use eframe::egui::Vec2;
use egui_kittest::kittest::Queryable;
use egui_kittest::Harness;
use heatlab::ui::{HeatlabApp, Settings};
use heatlab_engine::compute::BackendChoice;
use heatlab_engine::grid::GridSize;
use heatlab_engine::sim::generate::GenerationPlace;

fn harness(backend: BackendChoice, side: usize) -> Harness<'static, HeatlabApp> {
    let mut field = Settings::default().field;
    field.size = GridSize::square(side).unwrap();
    let settings = Settings {
        backend,
        field,
        auto_steps: false,
        ..Settings::default()
    };
    app_harness(settings, Vec2::new(1440.0, 1100.0))
}

fn generated(app: &HeatlabApp) -> u64 {
    app.diffusion().state().fields_generated
}

fn place(app: &HeatlabApp) -> Option<GenerationPlace> {
    app.diffusion()
        .state()
        .last_generation
        .as_ref()
        .map(|generation| generation.place.clone())
}

#[test]
fn on_the_cpu_a_drag_waits_for_regenerate() {
    let mut harness = harness(BackendChoice::Cpu, 64);
    assert_eq!(
        place(harness.state()),
        Some(GenerationPlace::Cpu { gpu_fallback: None })
    );
    assert_eq!(generated(harness.state()), 1);
    let before = harness.state().settings().field.exponent;
    drag_value(&mut harness, "exponent", -2.0, 20);
    for _ in 0..20 {
        harness.step();
    }
    let after = harness.state().settings().field.exponent;
    assert!(
        after < before,
        "the drag moved the exponent ({before} -> {after})"
    );
    assert_eq!(
        generated(harness.state()),
        1,
        "no live regeneration on the CPU"
    );
    harness.get_by_label("Regenerate *").click();
    wait_until(&mut harness, "the field is regenerated", |app| {
        generated(app) == 2
    });
    harness.step();
    assert!(harness.query_by_label("Regenerate *").is_none());
}

#[test]
fn on_the_gpu_dragging_the_exponent_regenerates_live() {
    if cuda_or_skip!().is_none() {
        return;
    }
    let mut harness = harness(BackendChoice::Cuda, 512);
    assert_eq!(place(harness.state()), Some(GenerationPlace::Gpu));
    let took = drag_value(&mut harness, "exponent", -1.0, 60);
    let during_drag = generated(harness.state()) - 1;
    // The last value dragged to is generated once the pointer stops.
    wait_until(
        &mut harness,
        "the dragged exponent's field is shown",
        |app| !app.diffusion().state().live_generating,
    );
    harness.step();
    assert!(
        harness.query_by_label("Regenerate *").is_none(),
        "the field shown is the one the parameters describe"
    );
    assert!(
        during_drag >= 10,
        "only {during_drag} fields were generated during a drag of 60 frames ({took:?})"
    );
    assert_eq!(place(harness.state()), Some(GenerationPlace::Gpu));
    assert_eq!(harness.state().step_count(), 0);
}

#[test]
fn a_field_too_large_to_generate_leaves_a_notice_and_the_old_field() {
    let mut harness = harness(BackendChoice::Cpu, 64);
    let rows = harness.get_by_role_and_label(eframe::egui::accesskit::Role::SpinButton, "rows");
    rows.set_value_accesskit(65_536.0);
    let cols = harness.get_by_role_and_label(eframe::egui::accesskit::Role::SpinButton, "cols");
    cols.set_value_accesskit(65_536.0);
    harness.step();
    harness.get_by_label("Regenerate *").click();
    wait_until(&mut harness, "the generation is refused", |app| {
        app.notices()
            .iter()
            .any(|notice| notice.text.contains("cannot generate the field"))
    });
    wait_until(&mut harness, "the panel is no longer generating", |app| {
        app.diffusion().state().progress.is_none()
    });
    harness.step();
    assert_eq!(generated(harness.state()), 1);
    assert_eq!(
        harness.state().diffusion().state().field_size,
        Some(GridSize::square(64).unwrap()),
        "the old field is still there"
    );
    assert!(harness.query_by_label("Regenerate *").is_some());
    assert!(harness.state().is_ready());
}
