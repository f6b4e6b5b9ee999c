//! The gallery: a problem opened from the menu arrives with its description and its exact
//! answer on the line plot; a scenario file opens through Open, saves and opens again; a state
//! saved on a gallery problem resumes with it.

#![expect(
    clippy::unwrap_used,
    reason = "test helpers; clippy's allow-*-in-tests covers #[test] functions only"
)]

use eframe::egui::Vec2;
use egui_kittest::kittest::Queryable;
use egui_kittest::Harness;
use heatlab::ui::diffusion::DiffusionCommand;
use heatlab::ui::{HeatlabApp, Settings};
use heatlab_engine::grid::GridSize;
use heatlab_engine::scenario::gallery;

use super::common::app::{app_harness, apply, wait_until};
use super::wait_for_gallery_problem;

fn small() -> Settings {
    let mut settings = Settings::default();
    settings.field.size = GridSize::new(32, 48).unwrap();
    settings
}

#[test]
fn a_gallery_problem_opens_from_the_menu_with_its_exact_answer_and_error() {
    let mut settings = small();
    let mut harness = app_harness(settings.clone(), Vec2::new(1400.0, 900.0));
    every_gallery_problem_is_in_the_menu(&mut harness);
    linear_profile_opens_with_its_description(&mut harness);
    the_start_is_far_from_the_exact_answer(&mut harness);
    stepping_reaches_the_linear_profile(&mut harness, &mut settings);
    the_error_is_on_screen(&mut harness);
}

/// The Gallery menu lists every topic and problem.
fn every_gallery_problem_is_in_the_menu(harness: &mut Harness<'_, HeatlabApp>) {
    harness.get_by_label("Gallery").click();
    harness.run_steps(2);
    for entry in &gallery::GALLERY {
        assert!(
            harness.query_by_label_contains(entry.title()).is_some(),
            "{} is in the menu",
            entry.title()
        );
    }
}

/// The linear profile, picked from the open menu, arrives with its title and description,
/// and "About this problem" is shown.
fn linear_profile_opens_with_its_description(harness: &mut Harness<'_, HeatlabApp>) {
    harness
        .get_by_label("Linear profile between two plates  (exact answer)")
        .click();
    wait_for_gallery_problem(harness, "linear-profile");
    let about = harness
        .state()
        .diffusion()
        .opened_scenario()
        .unwrap()
        .clone();
    assert_eq!(about.title, "Linear profile between two plates");
    assert!(about.description.contains("straight line"));
    harness.run_steps(2);
    assert!(harness.query_by_label("About this problem").is_some());
}

/// The line plot compares along the bar; at the start the profile is far from the answer.
fn the_start_is_far_from_the_exact_answer(harness: &mut Harness<'_, HeatlabApp>) {
    wait_until(harness, "the exact answer is on the line plot", |app| {
        app.diffusion()
            .paint_tools()
            .profile
            .exact()
            .is_some_and(|e| e.error.is_some())
    });
    let first = harness
        .state()
        .diffusion()
        .paint_tools()
        .profile
        .exact()
        .unwrap()
        .error
        .unwrap();
    assert!(
        first > 0.1,
        "the start is 20 °C against a 100..0 °C line: {first}"
    );
}

/// Stepped past its shipped duration (3000 s: about 16500 steps of 0.18 s), the bar is within
/// 1 % of its linear profile.
fn stepping_reaches_the_linear_profile(
    harness: &mut Harness<'_, HeatlabApp>,
    settings: &mut Settings,
) {
    apply(harness, settings, DiffusionCommand::SetAutoSteps(false));
    apply(harness, settings, DiffusionCommand::SetStepsPerFrame(2_000));
    apply(harness, settings, DiffusionCommand::Step(17_000));
    wait_until(harness, "the bar reaches its linear profile", |app| {
        let state = app.diffusion().state();
        state.step >= 17_000
            && app
                .diffusion()
                .paint_tools()
                .profile
                .values()
                .is_some_and(|(s, _)| s >= 17_000)
            && app
                .diffusion()
                .paint_tools()
                .profile
                .exact()
                .is_some_and(|e| e.seconds > 3000.0)
    });
    let exact = harness
        .state()
        .diffusion()
        .paint_tools()
        .profile
        .exact()
        .unwrap()
        .clone();
    assert!(exact.error.unwrap() < 0.01, "{exact:?}");
}

/// The line plot's error against the exact answer is on screen, as a share of the span.
fn the_error_is_on_screen(harness: &mut Harness<'_, HeatlabApp>) {
    harness.run_steps(2);
    let shown = harness
        .state()
        .diffusion()
        .paint_tools()
        .profile
        .error_text()
        .unwrap();
    assert!(
        harness.query_by_label(&shown).is_some(),
        "the error is on screen: {shown}"
    );
    assert!(shown.contains("% of the span"), "{shown}");
}

#[test]
fn a_scenario_file_opens_saves_and_opens_again_and_a_state_keeps_it() {
    let dir = tempfile::tempdir().unwrap();
    let mut settings = small();
    let mut harness = app_harness(settings.clone(), Vec2::new(1280.0, 800.0));
    let fin = gallery::find("fin").unwrap();
    let file = dir.path().join("my fin.toml");
    std::fs::write(&file, fin.text).unwrap();
    apply(&mut harness, &mut settings, DiffusionCommand::Open(file));
    wait_for_gallery_problem(&mut harness, "fin");
    assert_eq!(
        harness.state().diffusion().state().field_size,
        Some(GridSize::new(2, 120).unwrap())
    );
    // Saved as a scenario.
    let saved = dir.path().join("saved.toml");
    apply(
        &mut harness,
        &mut settings,
        DiffusionCommand::SaveState(saved.clone()),
    );
    wait_until(&mut harness, "the scenario is saved", |_| saved.exists());
    let text = std::fs::read_to_string(&saved).unwrap();
    assert!(text.contains("title = \"A fin\""), "{text}");
    // With its duration: opened again, it still pauses at 300 s.
    assert!(text.contains("duration = 300"), "{text}");
    // A gallery problem, stepped and saved as a state.
    let entry = gallery::find("square-one-hot-side").unwrap();
    harness.state_mut().diffusion_mut().open_gallery(entry);
    wait_for_gallery_problem(&mut harness, "square-one-hot-side");
    apply(&mut harness, &mut settings, DiffusionCommand::Step(300));
    wait_until(&mut harness, "300 steps", |app| {
        app.diffusion().state().step == 300
    });
    let state = dir.path().join("square.hlstate");
    apply(
        &mut harness,
        &mut settings,
        DiffusionCommand::SaveState(state.clone()),
    );
    wait_until(&mut harness, "the state is saved", |_| state.exists());
    // The saved scenario opens as the fin again.
    apply(&mut harness, &mut settings, DiffusionCommand::Open(saved));
    wait_for_gallery_problem(&mut harness, "fin");
    // The state resumes with its problem, its simulated time and its exact answer.
    apply(&mut harness, &mut settings, DiffusionCommand::Open(state));
    wait_for_gallery_problem(&mut harness, "square-one-hot-side");
    wait_until(
        &mut harness,
        "the state stands at step 300 with its answer",
        |app| {
            let panel = app.diffusion();
            panel.state().step == 300
                && panel
                    .state()
                    .problem_frame
                    .as_ref()
                    .is_some_and(|f| f.simulated_seconds > 0.0)
                && panel.paint_tools().profile.exact().is_some()
        },
    );
    assert_eq!(
        harness.state().diffusion().opened_scenario().unwrap().title,
        entry.title()
    );
}

#[test]
fn a_thermostat_problem_opens_with_a_probe_on_its_thermostat_cell_that_records_the_heating() {
    let mut harness = app_harness(small(), Vec2::new(1400.0, 900.0));
    let entry = gallery::find("heater-thermostat").unwrap();
    harness.state_mut().diffusion_mut().open_gallery(entry);
    wait_for_gallery_problem(&mut harness, "heater-thermostat");
    let thermostat = entry.scenario().unwrap().problem.thermostats[0].clone();
    wait_until(&mut harness, "a probe is placed", |app| {
        !app.diffusion().paint_tools().probes.is_empty()
    });
    let probes = harness.state().diffusion().paint_tools().probes.all();
    assert_eq!(probes.len(), 1);
    assert_eq!((probes[0].row, probes[0].col), thermostat.probe);
    // Played, the probe records the thermostat's cell warming past the point where the
    // thermostat switches the heater off.
    harness
        .state_mut()
        .diffusion_mut()
        .apply(DiffusionCommand::Play, &mut small());
    wait_until(
        &mut harness,
        "the probe passes the upper switching point",
        |app| {
            app.diffusion().paint_tools().probes.all()[0]
                .latest()
                .is_some_and(|(_, value)| {
                    f64::from(value) > thermostat.setpoint + thermostat.deadband / 2.0
                })
        },
    );
}

/// `heatlab gui FILE.toml`: a scenario file given at the start opens once the first field is
/// ready, with its title, as a dropped file does; a file that cannot be read leaves a notice.
#[test]
fn a_scenario_file_given_at_the_start_opens_when_the_first_field_is_ready() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("sink.toml");
    let source = gallery::find("heat-sink").unwrap();
    std::fs::write(&path, source.text).unwrap();
    let options = heatlab::ui::AppOptions {
        settings: Some(small()),
        open: Some(path),
        ..heatlab::ui::AppOptions::default()
    };
    let mut harness =
        super::common::app::build_app_with(Harness::builder(), options, Vec2::new(1400.0, 900.0));
    wait_for_gallery_problem(&mut harness, "heat-sink");
    let about = harness.state().diffusion().opened_scenario().unwrap();
    assert_eq!(about.title, "A heat sink under a chip");

    let bad = dir.path().join("bad.toml");
    std::fs::write(&bad, "[grid]\nrows = 'many'\n").unwrap();
    let options = heatlab::ui::AppOptions {
        settings: Some(small()),
        open: Some(bad),
        ..heatlab::ui::AppOptions::default()
    };
    let mut harness =
        super::common::app::build_app_with(Harness::builder(), options, Vec2::new(1400.0, 900.0));
    wait_until(&mut harness, "the bad file is refused in a notice", |app| {
        app.notices()
            .iter()
            .any(|notice| notice.text.contains("bad.toml"))
    });
    assert!(harness.state().diffusion().opened_scenario().is_none());
}

#[test]
fn the_notebooks_plate_is_the_gallerys_first_entry_and_comes_back() {
    use eframe::egui::accesskit::Role;
    let mut settings = heatlab::ui::Settings::default();
    settings.field.size = heatlab_engine::grid::GridSize::new(32, 48).unwrap();
    let mut harness =
        super::common::app::app_harness(settings, eframe::egui::Vec2::new(1440.0, 900.0));
    super::open_gallery_problem(&mut harness, "fin");
    harness
        .get_by_role_and_label(Role::Button, "Gallery")
        .click();
    harness.run_steps(2);
    let top = |label: &str| {
        harness
            .query_by_role_and_label(Role::Button, label)
            .map(|node| node.rect().top())
            .unwrap()
    };
    let plate = top("The notebook's plate (dimensionless)");
    let fin = top("A fin  (exact answer)");
    assert!(plate < fin, "the plate comes first: {plate} vs {fin}");
    harness
        .get_by_role_and_label(Role::Button, "The notebook's plate (dimensionless)")
        .click();
    super::common::app::wait_until(&mut harness, "the plate again", |app| {
        let state = app.diffusion().state();
        state.problem.is_none()
            && app.diffusion().opened_scenario().is_none()
            && state.field_size == heatlab_engine::grid::GridSize::new(32, 48).ok()
    });
    harness.run_steps(2);
    // The status bar and the panel show the plate's own controls again.
    assert!(harness.query_by_label_contains("coeff 0.25").is_some());
    assert!(harness.query_all_by_label("coefficient").next().is_some());
}
