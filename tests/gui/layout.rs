//! Small windows: with a heat problem open (its sides, its line and its energy budget on
//! screen), every control of the diffusion tab is on screen or scrolled to as a person would,
//! at the default 1440x900 window, at 1280x720 and at 800x600; the splitter above the plots
//! gives them the height the person drags it to, and back to the layout's on a double-click.

use eframe::egui::{PointerButton, Pos2, Rect, Vec2};
use egui_kittest::kittest::Queryable;
use heatlab::ui::diffusion::DiffusionCommand;
use heatlab::ui::Settings;
use heatlab_engine::grid::GridSize;
use heatlab_engine::scenario::gallery;

use super::common::app::{app_harness, app_harness_with, wait_until};
use super::common::pointer::{click_at, drag};

/// Controls of the views, the sides, the tool row and the plots' area, by their labels.
const CONTROLS: [&str; 15] = [
    "right side",
    "bottom side",
    "Laplacian picture",
    "field picture",
    "Navigate",
    "Line",
    "Material",
    "Redo",
    "heat flux",
    "Clear line",
    "plots",
    "Tutorial plate",
    "run for",
    "plots splitter",
    "Export",
];

#[test]
fn every_control_is_reachable_at_1440x900_1280x720_and_800x600() {
    for size in [
        Vec2::new(1440.0, 900.0),
        Vec2::new(1280.0, 720.0),
        Vec2::new(800.0, 600.0),
    ] {
        let mut settings = Settings::default();
        settings.field.size = GridSize::new(32, 48).unwrap();
        let mut harness = app_harness(settings, size);
        // A fin: a 2x120 strip with four sides, the exact answer on a line, an energy budget.
        let entry = gallery::find("fin").unwrap();
        harness.state_mut().diffusion_mut().open_gallery(entry);
        wait_until(&mut harness, "the fin and its line", |app| {
            app.diffusion().opened_scenario().is_some()
                && app.diffusion().paint_tools().profile.is_set()
        });
        harness.run_steps(3);
        let window = Rect::from_min_size(Pos2::ZERO, size);
        for label in CONTROLS {
            harness.get_by_label(label).scroll_to_me();
            harness.run_steps(3);
            let rect = harness.get_by_label(label).rect();
            assert!(
                window.contains_rect(rect),
                "{label} at {rect:?} is out of reach in a {size:?} window"
            );
        }
    }
}

#[test]
fn a_thin_strip_is_drawn_tall_enough_to_see_its_cells() {
    let mut settings = Settings::default();
    settings.field.size = GridSize::new(32, 48).unwrap();
    let mut harness = app_harness(settings, Vec2::new(1440.0, 900.0));
    // A fin of 2x120 cells: fitted to its aspect it would be 5 points tall.
    let entry = gallery::find("fin").unwrap();
    harness.state_mut().diffusion_mut().open_gallery(entry);
    wait_until(&mut harness, "the fin arrives", |app| {
        app.diffusion().opened_scenario().is_some()
            && app.diffusion().state().field_size == GridSize::new(2, 120).ok()
    });
    harness.run_steps(3);
    for picture in ["field picture", "Laplacian picture"] {
        let rect = harness.get_by_label(picture).rect();
        assert!(
            rect.height() >= heatlab::ui::diffusion::view::MIN_PICTURE_HEIGHT - 0.5,
            "{picture}: {rect:?}"
        );
        assert!(rect.width() > rect.height(), "{picture}: {rect:?}");
    }
    // No probe yet: no empty probe plot beside the profile, a hint instead.
    assert!(harness.query_by_label("probe values over time").is_none());
    assert!(harness
        .query_by_label_contains("no probe: click a cell with the Probe tool")
        .is_some());
    harness
        .state_mut()
        .diffusion_mut()
        .paint_tools_mut()
        .probes
        .add(1, 60);
    harness.run_steps(3);
    assert!(harness.query_by_label("probe values over time").is_some());
    // The probe is plotted (and exported) against simulated time, not steps.
    harness
        .state_mut()
        .diffusion_mut()
        .apply(DiffusionCommand::Step(40), &mut Settings::default());
    wait_until(&mut harness, "the probe sampled after steps", |app| {
        let tools = app.diffusion().paint_tools();
        tools.probes.all()[0]
            .latest()
            .is_some_and(|(step, _)| step >= 40)
    });
    let tools = harness.state().diffusion().paint_tools();
    assert_eq!(tools.clock.axis_label(), "simulated time (s)");
    let series = tools.probes.export_series(&tools.clock);
    let dt = harness
        .state()
        .diffusion()
        .state()
        .problem_frame
        .as_ref()
        .unwrap()
        .dt;
    let (step, _) = *series[0].points.last().unwrap();
    let seconds = *series[0].seconds.as_ref().unwrap().last().unwrap();
    assert!(
        (seconds - step as f64 * dt).abs() <= 1e-9 * seconds,
        "{seconds} s at step {step}"
    );
    // Its line profile is plotted against millimetres (cells of 1 mm), not cells.
    let profile = &harness.state().diffusion().paint_tools().profile;
    assert_eq!(
        profile.distance_axis(),
        (1.0, "distance along the line (mm)")
    );
}

#[test]
fn the_splitter_gives_the_plots_the_height_dragged_to_and_back() {
    let mut settings = Settings::default();
    settings.field.size = GridSize::new(32, 48).unwrap();
    // Frames of 1/60 s, so that two clicks a frame apart are a double-click.
    let builder = egui_kittest::Harness::builder().with_step_dt(1.0 / 60.0);
    let mut harness = app_harness_with(builder, settings, Vec2::new(1280.0, 720.0));
    let entry = gallery::find("heat-sink").unwrap();
    harness.state_mut().diffusion_mut().open_gallery(entry);
    wait_until(&mut harness, "the heat sink and its energy budget", |app| {
        app.diffusion().opened_scenario().is_some()
            && app.diffusion().state().problem_frame.is_some()
    });
    let edge = |harness: &egui_kittest::Harness<'_, heatlab::ui::HeatlabApp>| {
        harness.get_by_label("plots splitter").rect().center()
    };
    // The layout settles (the first frames of the problem arrive) before the drag.
    let mut last = None;
    for _ in 0..120 {
        harness.run_steps(1);
        let now = edge(&harness);
        if last == Some(now) {
            break;
        }
        last = Some(now);
    }
    let automatic = edge(&harness);
    let picture = harness.get_by_label("field picture").rect();
    // Up by 150 points: the plots grow, the views give way.
    let to = Pos2::new(automatic.x, automatic.y - 150.0);
    drag(&mut harness, automatic, to, PointerButton::Primary);
    harness.run_steps(3);
    let dragged = edge(&harness);
    assert!(
        (dragged.y - to.y).abs() < 8.0,
        "the edge follows the drag: {automatic:?} -> {dragged:?}"
    );
    let smaller = harness.get_by_label("field picture").rect();
    assert!(
        smaller.height() < picture.height(),
        "{picture:?} -> {smaller:?}"
    );
    // Down past the bottom: the plots keep their least height.
    drag(
        &mut harness,
        dragged,
        Pos2::new(dragged.x, 719.0),
        PointerButton::Primary,
    );
    harness.run_steps(3);
    assert!(
        edge(&harness).y <= 720.0 - 90.0 + 1.0,
        "{:?}",
        edge(&harness)
    );
    // A double-click gives the height back to the layout.
    let at = edge(&harness);
    click_at(&mut harness, at, PointerButton::Primary);
    click_at(&mut harness, at, PointerButton::Primary);
    harness.run_steps(3);
    assert!(
        (edge(&harness).y - automatic.y).abs() < 1.0,
        "{:?} back to {automatic:?}",
        edge(&harness)
    );
}
