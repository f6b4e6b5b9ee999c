//! Switching problems: a problem opened from the gallery starts its tools afresh. The probes,
//! the line and the notice of probes that stopped belong to the problem they were placed on.

#![expect(
    clippy::unwrap_used,
    reason = "test helpers; clippy's allow-*-in-tests covers #[test] functions only"
)]

use eframe::egui::Vec2;
use egui_kittest::Harness;
use heatlab::ui::diffusion::DiffusionCommand;
use heatlab::ui::{HeatlabApp, Level, Settings};
use heatlab_engine::grid::GridSize;
use heatlab_engine::scenario::gallery;

use super::common::app::{app_harness, apply, has_notice, wait_until};

/// Opens the gallery entry `name` and waits until its problem is the one stepped.
fn open(harness: &mut Harness<'_, HeatlabApp>, name: &str) {
    let entry = gallery::find(name).unwrap();
    harness.state_mut().diffusion_mut().open_gallery(entry);
    let expected = entry.scenario().unwrap().problem;
    wait_until(harness, &format!("the {name} problem arrives"), |app| {
        app.diffusion()
            .state()
            .problem
            .as_deref()
            .is_some_and(|p| *p == expected)
            && app.diffusion().opened_scenario().is_some()
    });
}

#[test]
fn opening_another_problem_drops_the_old_line_probes_and_their_notice() {
    let mut settings = Settings::default();
    settings.field.size = GridSize::new(32, 48).unwrap();
    let mut harness = app_harness(settings.clone(), Vec2::new(1440.0, 900.0));
    // A fin (2x120): its exact answer's line along the fin, and a probe near its tip.
    open(&mut harness, "fin");
    let tools = harness.state_mut().diffusion_mut().paint_tools_mut();
    assert!(
        tools.profile.is_set(),
        "the fin's exact answer is on a line"
    );
    tools.probes.add(1, 110);
    apply(&mut harness, &mut settings, DiffusionCommand::Step(20));
    wait_until(&mut harness, "the probe is sampled", |app| {
        app.diffusion().paint_tools().probes.all()[0]
            .latest()
            .is_some()
    });
    // As the simulation thread words it when a probe's cell is off its field.
    harness.state_mut().diffusion_mut().notify(
        Level::Warning,
        "probes stopped: cell 260 lies outside the 2x120 field",
    );
    // A heat sink (50x80, no exact answer): none of the fin's tools are left.
    open(&mut harness, "heat-sink");
    apply(&mut harness, &mut settings, DiffusionCommand::Step(20));
    wait_until(&mut harness, "20 steps of the heat sink", |app| {
        app.diffusion().state().step >= 20
    });
    harness.run_steps(3);
    let app = harness.state();
    let tools = app.diffusion().paint_tools();
    assert_eq!(
        app.diffusion().state().field_size,
        GridSize::new(50, 80).ok()
    );
    assert!(tools.probes.is_empty(), "{:?}", tools.probes.all());
    assert!(!tools.profile.is_set(), "{:?}", tools.profile.segment());
    assert!(!has_notice(app, "probes stopped"), "{:?}", app.notices());
    assert!(has_notice(app, "belonged to the previous problem"));
    // And back to the fin: its own line again, not the heat sink's (it had none).
    open(&mut harness, "fin");
    harness.run_steps(3);
    let profile = &harness.state().diffusion().paint_tools().profile;
    assert_eq!(profile.cells().len(), 120, "{:?}", profile.segment());
    assert!(!has_notice(harness.state(), "probes stopped"));
}
