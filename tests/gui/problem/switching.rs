//! Switching problems: a problem opened from the gallery starts its tools afresh. The probes,
//! the line and the notice of probes that stopped belong to the problem they were placed on.

use eframe::egui::Vec2;
use egui_kittest::kittest::Queryable;
use egui_kittest::Harness;
use heatlab::ui::diffusion::DiffusionCommand;
use heatlab::ui::{AppOptions, HeatlabApp, Level, Settings};
use heatlab_engine::grid::GridSize;
use heatlab_engine::scenario::gallery;

use super::common::app::{app_harness, apply, has_notice, wait_until};
use super::open_gallery_problem;
use crate::common::software_renderer::{self, SoftwareRenderer};

#[test]
fn opening_another_problem_drops_the_old_line_probes_and_their_notice() {
    let mut settings = Settings::default();
    settings.field.size = GridSize::new(32, 48).unwrap();
    let mut harness = app_harness(settings.clone(), Vec2::new(1440.0, 900.0));
    // A fin (2x120): its exact answer's line along the fin, and a probe near its tip.
    open_gallery_problem(&mut harness, "fin");
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
    open_gallery_problem(&mut harness, "heat-sink");
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
    // The plate's field is gone, and the news of how it was generated with it.
    assert!(
        !has_notice(app, "generated the 32x48 field"),
        "{:?}",
        app.notices()
    );
    // And back to the fin: its own line again, not the heat sink's (it had none).
    open_gallery_problem(&mut harness, "fin");
    harness.run_steps(3);
    let profile = &harness.state().diffusion().paint_tools().profile;
    assert_eq!(profile.cells().len(), 120, "{:?}", profile.segment());
    assert!(!has_notice(harness.state(), "probes stopped"));
}

/// Waits until the modal "Replace the heat problem?" is on screen.
fn asked(harness: &mut Harness<'_, HeatlabApp>) {
    harness.run_steps(3);
    assert!(harness.state().diffusion().is_asking_to_replace());
    harness.get_by_label("Replace the heat problem?");
}

#[test]
fn regenerate_over_a_problem_asks_first_and_keeping_it_changes_nothing() {
    let mut settings = Settings::default();
    settings.field.size = GridSize::new(32, 48).unwrap();
    let renderer = SoftwareRenderer::default();
    let mut harness = crate::common::app::build_app_with(
        Harness::builder().renderer(renderer.clone()),
        AppOptions {
            settings: Some(settings.clone()),
            persist: false,
            autoplay: false,
            ..AppOptions::default()
        },
        Vec2::new(1440.0, 900.0),
    );
    wait_until(&mut harness, "the field is shown", HeatlabApp::is_ready);
    open_gallery_problem(&mut harness, "fin");
    let fin = harness.state().diffusion().state().problem.clone().unwrap();
    // Regenerate, as a person clicks it under the folded plate: a question, and nothing
    // generated meanwhile.
    harness.get_by_label("Tutorial plate").click();
    harness.run_steps(2);
    harness.get_by_label("Regenerate *").click();
    asked(&mut harness);
    // Written to `$HEATLAB_RENDER_OUT/replace_problem.png` when that is set, to look at.
    if let Some(dir) = std::env::var_os("HEATLAB_RENDER_OUT") {
        let clear = eframe::App::clear_color(harness.state(), &harness.ctx.global_style().visuals);
        let image = renderer
            .render(&harness.ctx, harness.output(), clear)
            .unwrap();
        let path = std::path::Path::new(&dir).join("replace_problem.png");
        software_renderer::save_png(&image, &path).unwrap();
    }
    harness.run_steps(5);
    let state = harness.state().diffusion().state();
    assert_eq!(state.field_size, GridSize::new(2, 120).ok());
    assert!(state.progress.is_none());
    // Keep: the fin stays, with its line.
    harness.get_by_label("Keep the problem").click();
    harness.run_steps(5);
    assert!(!harness.state().diffusion().is_asking_to_replace());
    let panel = harness.state().diffusion();
    assert_eq!(panel.state().problem.as_deref(), Some(fin.as_ref()));
    assert_eq!(panel.state().field_size, GridSize::new(2, 120).ok());
    assert!(panel.paint_tools().profile.is_set());
    assert!(has_notice(harness.state(), "kept the heat problem"));
    // Escape keeps it too.
    harness.get_by_label("Regenerate *").click();
    asked(&mut harness);
    harness.key_press(eframe::egui::Key::Escape);
    harness.run_steps(5);
    assert!(!harness.state().diffusion().is_asking_to_replace());
    assert!(harness.state().diffusion().state().problem.is_some());
    // A preset asks as well; replacing generates the plate and says so.
    harness.get_by_label("small 512²").click();
    asked(&mut harness);
    harness.get_by_label("Replace the problem").click();
    wait_until(&mut harness, "the 512x512 plate", |app| {
        let state = app.diffusion().state();
        state.field_size == GridSize::new(512, 512).ok()
            && state.problem.is_none()
            && app.is_ready()
    });
    assert!(has_notice(harness.state(), "replaced the heat problem"));
    // On the plate there is nothing to lose: Regenerate generates at once.
    apply(&mut harness, &mut settings, DiffusionCommand::Regenerate);
    harness.run_steps(3);
    assert!(!harness.state().diffusion().is_asking_to_replace());
}

/// The side panel's and the status line's texts.
fn has_label(harness: &Harness<'_, HeatlabApp>, text: &str) -> bool {
    harness.query_by_label_contains(text).is_some()
}

#[test]
fn a_problem_shows_its_own_sides_and_folds_the_plates_controls() {
    let mut settings = Settings::default();
    settings.field.size = GridSize::new(32, 48).unwrap();
    let mut harness = app_harness(settings.clone(), Vec2::new(1440.0, 900.0));
    // The plate: its coefficient, boundary and field parameters.
    for text in [
        "coeff 0.25 · dirichlet",
        "unlock coefficients above 0.25",
        "boundary",
    ] {
        assert!(has_label(&harness, text), "the plate shows {text}");
    }
    assert!(harness.query_by_label("seed").is_some());
    // The fin: none of the plate's model, its convective sides in the status line.
    open_gallery_problem(&mut harness, "fin");
    harness.run_steps(3);
    for text in [
        "coeff 0.25",
        "dirichlet",
        "unlock coefficients above 0.25",
        "checkerboard",
    ] {
        assert!(!has_label(&harness, text), "the fin shows {text}");
    }
    for label in ["seed", "rows", "exponent", "coefficient", "boundary"] {
        assert!(
            harness.query_by_label(label).is_none(),
            "the fin shows {label}"
        );
    }
    assert!(has_label(&harness, "sides: top h 25 W/m²K, 20 °C"));
    assert!(has_label(&harness, "left 100 °C"));
    assert!(has_label(&harness, "the problem's grid: 2x120 cells of"));
    // The plate's parameters are one click away, folded.
    harness.get_by_label("Tutorial plate").click();
    harness.run_steps(2);
    assert!(harness.query_by_label("seed").is_some());
}

#[test]
fn opening_another_problem_over_a_changed_one_asks_first() {
    use heatlab_engine::problem::{Side, SideCondition};
    use heatlab_engine::session::diffusion::ProblemCommand;
    let mut settings = Settings::default();
    settings.field.size = GridSize::new(32, 48).unwrap();
    let mut harness = app_harness(settings.clone(), Vec2::new(1440.0, 900.0));
    // Gallery problems as they were opened: switching asks nothing.
    open_gallery_problem(&mut harness, "fin");
    open_gallery_problem(&mut harness, "heat-sink");
    assert!(!harness.state().diffusion().is_asking_to_replace());
    // The heat sink with its left side changed in the app: opening the fin asks.
    let side = SideCondition::Fixed { temperature: 50.0 };
    let command = DiffusionCommand::Problem(ProblemCommand::SetSide(Side::Left, side));
    apply(&mut harness, &mut settings, command);
    wait_until(&mut harness, "the changed side arrives", |app| {
        app.diffusion()
            .state()
            .problem
            .as_deref()
            .is_some_and(|p| p.sides.get(Side::Left) == side)
    });
    let fin = gallery::find("fin").unwrap();
    harness.state_mut().diffusion_mut().open_gallery(fin);
    asked(&mut harness);
    harness.get_by_label_contains("Opening \"A fin\"");
    harness.get_by_label("Keep the problem").click();
    harness.run_steps(5);
    let state = harness.state().diffusion().state();
    assert_eq!(state.field_size, GridSize::new(50, 80).ok());
    assert_eq!(
        state.problem.as_deref().unwrap().sides.get(Side::Left),
        side
    );
    // Asked again and opened anyway: the fin.
    harness.state_mut().diffusion_mut().open_gallery(fin);
    asked(&mut harness);
    harness.get_by_label("Open it anyway").click();
    let expected = fin.scenario().unwrap().problem;
    wait_until(&mut harness, "the fin arrives", |app| {
        app.diffusion().state().problem.as_deref() == Some(&expected)
    });
}

#[test]
fn the_energy_budget_reads_the_run_records_closing_and_clears_on_reset() {
    let mut settings = Settings::default();
    settings.field.size = GridSize::new(32, 48).unwrap();
    let mut harness = app_harness(settings.clone(), Vec2::new(1440.0, 900.0));
    // Two blocks in contact: closed, so only rounding can leave the balance open.
    open_gallery_problem(&mut harness, "two-blocks-contact");
    apply(&mut harness, &mut settings, DiffusionCommand::Step(400));
    wait_until(&mut harness, "the budget is booked", |app| {
        app.diffusion().state().step >= 400
    });
    harness.run_steps(3);
    assert!(
        has_label(&harness, "the balance closes to"),
        "the budget's closing sentence is shown"
    );
    assert!(has_label(&harness, "within the bound"));
    assert!(!has_label(&harness, "no energy booked yet"));
    apply(&mut harness, &mut settings, DiffusionCommand::Reset);
    wait_until(&mut harness, "the reset arrives", |app| {
        app.diffusion().state().step == 0
    });
    harness.run_steps(3);
    // The old run's budget is gone with it (the budget's corner waits for the next window).
    assert!(
        !has_label(&harness, "the balance closes to"),
        "Reset clears the budget"
    );
    apply(&mut harness, &mut settings, DiffusionCommand::Step(50));
    wait_until(&mut harness, "a new budget is booked", |app| {
        app.diffusion().state().step >= 50
    });
    harness.run_steps(3);
    assert!(
        has_label(&harness, "over steps 0..50"),
        "the budget starts at the reset"
    );
}
