//! The desktop app driven headlessly by egui_kittest: widgets are found by their labels and
//! clicked as a person would. No GPU, display or renderer is needed: the app runs on the CPU
//! backend and the harness only reads egui's accessibility tree.
//!
//! The simulation runs on a worker thread, so every check waits (with a deadline) for the app
//! to report the expected state instead of assuming it after a fixed number of frames.

use crate::common;

use common::app::{app_harness, wait_until, DEADLINE};

use common::MemoryStorage;
use std::path::Path;
use std::time::{Duration, Instant};

use eframe::egui::accesskit::Role;
use eframe::egui::Vec2;
use egui_kittest::kittest::Queryable;
use egui_kittest::Harness;
use heatlab::ui::{AppOptions, HeatlabApp, Settings};
use heatlab_engine::compute::{BackendChoice, BackendKind, Boundary};
use heatlab_engine::grid::GridSize;
use heatlab_engine::render::Colormap;

#[expect(
    clippy::unwrap_used,
    reason = "a test helper: its failure is the test's failure, with this message"
)]
fn small_settings(export_dir: &Path) -> Settings {
    let mut field = Settings::default().field;
    field.size = GridSize::new(48, 64).unwrap();
    Settings {
        backend: BackendChoice::Cpu,
        field,
        steps_per_frame: 2,
        auto_steps: false,
        step_n: 100,
        export_dir: export_dir.to_path_buf(),
        ..Settings::default()
    }
}

fn harness(settings: Settings) -> Harness<'static, HeatlabApp> {
    app_harness(settings, Vec2::new(1400.0, 900.0))
}

#[test]
fn starts_on_the_cpu_with_the_field_shown() {
    let dir = tempfile::tempdir().unwrap();
    let mut harness = harness(small_settings(dir.path()));
    wait_until(&mut harness, "the backend is reported", |app| {
        app.backend().is_some()
    });
    assert_eq!(harness.state().backend().unwrap().kind, BackendKind::Cpu);
    assert_eq!(harness.state().step_count(), 0);
    harness.get_by_label("Play");
    harness.get_by_label("48x64 field");
    // The tutorial's defaults: the Laplacian clipped to the 5th-95th percentile.
    let laplacian = harness.state().settings().laplacian_view;
    assert_eq!(laplacian.percentile, (5.0, 95.0));
}

#[test]
fn fits_a_1280x800_window_and_a_4k_screen() {
    // Sizes are in points: 1920x1080 points at 2 pixels per point is a 3840x2160 screen.
    for (size, pixels_per_point) in [
        (Vec2::new(1280.0, 800.0), 1.0),
        (Vec2::new(1920.0, 1080.0), 2.0),
    ] {
        let dir = tempfile::tempdir().unwrap();
        let settings = small_settings(dir.path());
        let mut harness = common::app::build_app_with(
            Harness::builder().with_pixels_per_point(pixels_per_point),
            AppOptions {
                settings: Some(settings),
                ..AppOptions::default()
            },
            size,
        );
        wait_until(&mut harness, "the field is shown", HeatlabApp::is_ready);
        let window = eframe::egui::Rect::from_min_size(eframe::egui::Pos2::ZERO, size);
        for label in [
            "Play",
            "Step 100",
            "Field PNG",
            "Timing log",
            "field picture",
            "Laplacian picture",
        ] {
            let rect = harness.get_by_label(label).rect();
            assert!(
                window.contains_rect(rect),
                "{label} at {rect:?} is outside {size:?}"
            );
        }
    }
}

#[test]
fn play_and_pause() {
    let dir = tempfile::tempdir().unwrap();
    let mut harness = harness(small_settings(dir.path()));
    harness.get_by_label("Play").click();
    wait_until(&mut harness, "steps are taken while playing", |app| {
        app.is_playing() && app.step_count() >= 10
    });
    harness.get_by_label("Pause").click();
    wait_until(&mut harness, "playing stops", |app| !app.is_playing());
    // Frames already computed may still arrive; after that the count stays put.
    for _ in 0..20 {
        harness.step();
        std::thread::sleep(Duration::from_millis(5));
    }
    let paused_at = harness.state().step_count();
    for _ in 0..20 {
        harness.step();
        std::thread::sleep(Duration::from_millis(5));
    }
    assert_eq!(harness.state().step_count(), paused_at);
    assert_eq!(paused_at % 2, 0, "two steps per frame");
    assert!(
        !harness.state().is_playing(),
        "a late frame must not restart the play state"
    );
    harness.get_by_label("Play");
}

#[test]
fn step_step_n_and_reset() {
    let dir = tempfile::tempdir().unwrap();
    let mut harness = harness(small_settings(dir.path()));
    harness.get_by_label("Step").click();
    wait_until(&mut harness, "one step is taken", |app| {
        app.step_count() == 1
    });
    harness.get_by_label("Step 100").click();
    wait_until(&mut harness, "a hundred more steps are taken", |app| {
        app.step_count() == 101
    });
    assert!(!harness.state().is_playing());
    harness.get_by_label("Reset").click();
    wait_until(&mut harness, "the field is back at step 0", |app| {
        app.step_count() == 0
    });
}

#[test]
fn switching_backends_keeps_the_field() {
    let dir = tempfile::tempdir().unwrap();
    let mut harness = harness(small_settings(dir.path()));
    harness.get_by_label("Step 100").click();
    wait_until(&mut harness, "100 steps", |app| app.step_count() == 100);
    let cuda_unavailable = harness
        .state()
        .backend()
        .unwrap()
        .cuda_unavailable
        .is_some();
    harness.get_by_label("CUDA").click();
    if cuda_unavailable {
        // The choice is greyed out (with its reason on hover): clicking it changes nothing.
        eprintln!("no CUDA here: checking that the greyed-out choice changes nothing");
        harness.run_steps(3);
        assert_eq!(harness.state().backend().unwrap().kind, BackendKind::Cpu);
        assert_eq!(harness.state().settings().backend, BackendChoice::Cpu);
    } else {
        wait_until(&mut harness, "the switch is answered", |app| {
            app.backend().is_some_and(|b| b.kind == BackendKind::Cuda)
        });
    }
    // Either way the field and its step are kept, and stepping goes on.
    assert_eq!(harness.state().step_count(), 100);
    harness.get_by_label("Step").click();
    wait_until(&mut harness, "one more step", |app| app.step_count() == 101);
    harness.get_by_label("CPU").click();
    wait_until(&mut harness, "back on the CPU", |app| {
        app.backend().is_some_and(|b| b.kind == BackendKind::Cpu)
    });
    assert_eq!(harness.state().step_count(), 101);
}

#[test]
fn keyboard_shortcuts() {
    let dir = tempfile::tempdir().unwrap();
    let mut harness = harness(small_settings(dir.path()));
    harness.key_press(eframe::egui::Key::S);
    wait_until(&mut harness, "S takes a step", |app| app.step_count() == 1);
    harness.key_press(eframe::egui::Key::R);
    wait_until(&mut harness, "R resets", |app| app.step_count() == 0);
    harness.key_press(eframe::egui::Key::Space);
    wait_until(&mut harness, "Space plays", |app| app.step_count() > 4);
    harness.key_press(eframe::egui::Key::Space);
    wait_until(&mut harness, "Space pauses", |app| !app.is_playing());
}

#[test]
fn changing_the_colormaps() {
    let dir = tempfile::tempdir().unwrap();
    let mut harness = harness(small_settings(dir.path()));
    harness
        .get_by_role_and_label(Role::ComboBox, "Field colormap")
        .click();
    harness.run_steps(2);
    harness.get_by_label("turbo").click();
    harness.run_steps(2);
    assert_eq!(
        harness.state().settings().field_view.colormap,
        Colormap::Turbo
    );

    harness
        .get_by_role_and_label(Role::ComboBox, "Laplacian colormap")
        .click();
    harness.run_steps(2);
    harness.get_by_label("coolwarm (diverging)").click();
    harness.run_steps(2);
    assert_eq!(
        harness.state().settings().laplacian_view.colormap,
        Colormap::Coolwarm
    );
    // The field's choice is untouched.
    assert_eq!(
        harness.state().settings().field_view.colormap,
        Colormap::Turbo
    );
}

#[test]
fn changing_the_boundary() {
    let dir = tempfile::tempdir().unwrap();
    let mut harness = harness(small_settings(dir.path()));
    harness
        .get_by_role_and_label(Role::ComboBox, "boundary")
        .click();
    harness.run_steps(2);
    harness.get_by_label("periodic").click();
    harness.run_steps(2);
    assert_eq!(harness.state().settings().step.boundary, Boundary::Periodic);
    harness.get_by_label(Boundary::Periodic.description());
    // Stepping under the new boundary still works.
    harness.get_by_label("Step").click();
    wait_until(&mut harness, "a step under periodic", |app| {
        app.step_count() == 1
    });
}

fn export_and_wait(harness: &mut Harness<'_, HeatlabApp>, button: &str) -> Vec<std::path::PathBuf> {
    harness.get_by_label(button).click();
    harness.step();
    wait_until(harness, "the export is written", |app| !app.is_exporting());
    let written = harness.state().last_exported().to_vec();
    assert!(
        !written.is_empty(),
        "nothing written; notices: {:?}",
        harness.state().notices()
    );
    written
}

#[test]
fn exports_png_npy_and_timing_log() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("exports");
    let mut harness = harness(small_settings(&out));
    harness.get_by_label("Step 100").click();
    wait_until(&mut harness, "100 steps", |app| app.step_count() == 100);

    let png = export_and_wait(&mut harness, "Field PNG");
    assert_eq!(png, vec![out.join("field_000100.png")]);
    let image = image::open(&png[0]).unwrap();
    // Full resolution plus the colorbar strip on the right (a field this small is padded
    // below so that the colorbar's labels fit).
    assert!(image.height() >= 48);
    assert!(image.width() > 64);
    let image = image.to_rgb8();
    let viridis = heatlab_engine::render::Colormap::Viridis.table();
    assert!(
        viridis.contains(&image.get_pixel(10, 10).0),
        "the field is drawn with the view's colormap"
    );

    let png = export_and_wait(&mut harness, "Laplacian PNG");
    assert_eq!(png, vec![out.join("laplacian_000100.png")]);
    image::open(&png[0]).unwrap();

    let npy = export_and_wait(&mut harness, "Field .npy");
    let grid = heatlab_engine::export::read_npy(&std::fs::read(&npy[0]).unwrap()).unwrap();
    assert_eq!(grid.size(), GridSize::new(48, 64).unwrap());

    let log = export_and_wait(&mut harness, "Timing log");
    let csv = std::fs::read_to_string(out.join("timings.csv")).unwrap();
    assert!(csv.starts_with("operation,step_start,steps,backend"));
    assert!(log.contains(&out.join("timings.json")));
}

#[test]
fn a_png_takes_the_pixels_per_cell_chosen() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("exports");
    let mut harness = harness(small_settings(&out));
    // Automatic: a 48x64 field is enlarged to 8 pixels a cell (512 wide).
    harness.get_by_label("colorbar in PNGs").click();
    harness.step();
    let png = export_and_wait(&mut harness, "Field PNG");
    let image = image::open(&png[0]).unwrap();
    assert_eq!((image.width(), image.height()), (512, 384));
    // Two pixels a cell, chosen in the list as a hand would.
    harness.get_by_label("pixels/cell").click();
    harness.run_steps(2);
    let two = harness
        .get_all_by_label("2")
        .last()
        .map(|node| node.rect().center())
        .unwrap();
    super::common::pointer::click_at(&mut harness, two, eframe::egui::PointerButton::Primary);
    harness.run_steps(2);
    assert_eq!(harness.state().settings().png_cell_pixels, Some(2));
    let png = export_and_wait(&mut harness, "Field PNG");
    let image = image::open(&png[0]).unwrap();
    assert_eq!((image.width(), image.height()), (128, 96));
}

/// The distinct values of the `size` column of `timings.csv` in `dir`, and its row count.
#[expect(
    clippy::unwrap_used,
    reason = "a test helper: its failure is the test's failure"
)]
fn timing_sizes(dir: &Path) -> (Vec<String>, usize) {
    let csv = std::fs::read_to_string(dir.join("timings.csv")).unwrap();
    let mut lines = csv.lines();
    let header: Vec<&str> = lines.next().unwrap().split(',').collect();
    let column = header.iter().position(|&name| name == "size").unwrap();
    let rows: Vec<String> = lines
        .map(|line| line.split(',').nth(column).unwrap().to_string())
        .collect();
    let mut sizes = rows.clone();
    sizes.sort();
    sizes.dedup();
    (sizes, rows.len())
}

#[test]
fn the_timing_log_holds_the_current_fields_chunks_not_the_sessions() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("exports");
    let mut harness = harness(small_settings(&out));
    harness.get_by_label("Step 100").click();
    wait_until(&mut harness, "100 steps", |app| app.step_count() == 100);
    export_and_wait(&mut harness, "Timing log");
    let (sizes, rows) = timing_sizes(&out);
    assert_eq!(sizes, vec!["48x64".to_string()]);
    assert!(rows > 0);
    // A field of another size: the log starts over with it.
    let spin = harness.get_by_role_and_label(Role::SpinButton, "rows");
    spin.set_value_accesskit(40.0);
    harness.step();
    harness.get_by_label("Regenerate *").click();
    wait_until(&mut harness, "the 40x64 field", |app| {
        app.diffusion().state().field_size == Some(GridSize::new(40, 64).unwrap())
            && app.step_count() == 0
    });
    harness.step();
    harness.get_by_label("Step 100").click();
    wait_until(&mut harness, "100 steps", |app| app.step_count() == 100);
    export_and_wait(&mut harness, "Timing log");
    let (sizes, rows) = timing_sizes(&out);
    assert_eq!(
        sizes,
        vec!["40x64".to_string()],
        "only the current field's chunks"
    );
    assert!(rows > 0);
}

#[test]
fn records_a_png_sequence_every_k_steps() {
    let dir = tempfile::tempdir().unwrap();
    let mut settings = small_settings(dir.path());
    settings.record_every = 25;
    settings.steps_per_frame = 10;
    let mut harness = harness(settings);
    harness.get_by_label("record PNGs").click();
    harness.run_steps(2);
    assert!(
        harness.state().is_recording(),
        "notices: {:?}",
        harness.state().notices()
    );
    harness.get_by_label("Step 100").click();
    wait_until(&mut harness, "100 steps", |app| app.step_count() == 100);
    harness.get_by_label("record PNGs").click();
    harness.run_steps(2);
    let frames = dir.path().join("frames");
    let mut names: Vec<String> = std::fs::read_dir(&frames)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    let expected: Vec<String> = ["field", "laplacian"]
        .iter()
        .flat_map(|kind| [25, 50, 75, 100].map(|step| format!("{kind}_{step:06}.png")))
        .collect();
    assert_eq!(names, expected);
    image::open(frames.join("laplacian_000050.png")).unwrap();
}

#[test]
fn hover_readout_names_the_cell_and_its_values() {
    let dir = tempfile::tempdir().unwrap();
    let mut harness = harness(small_settings(dir.path()));
    harness.run_steps(3);
    harness.get_by_label("field picture").hover();
    harness.run_steps(3);
    // One line: "row R, col C   field V   Laplacian L".
    harness.get_by_label_contains(", col ");
    harness.get_by_label_contains("   field ");
    harness.get_by_label_contains("   Laplacian ");
}

#[test]
fn zoom_buttons() {
    let dir = tempfile::tempdir().unwrap();
    let mut harness = harness(small_settings(dir.path()));
    harness.get_by_label("+").click();
    harness.run_steps(2);
    assert_eq!(harness.state().zoom(), 2.0);
    harness.get_by_label_contains("zoom 2.0×");
    harness.get_by_label("−").click();
    harness.get_by_label("+").click();
    harness.get_by_label("+").click();
    harness.run_steps(4);
    assert_eq!(harness.state().zoom(), 4.0);
    harness.get_by_label("fit").click();
    harness.run_steps(2);
    assert_eq!(harness.state().zoom(), 1.0);
}

#[test]
fn export_failure_is_a_notice_not_a_crash() {
    let dir = tempfile::tempdir().unwrap();
    // A file where the folder should be.
    let blocker = dir.path().join("not-a-folder");
    std::fs::write(&blocker, b"x").unwrap();
    let mut harness = harness(small_settings(&blocker));
    harness.get_by_label("Field PNG").click();
    harness.step();
    wait_until(&mut harness, "the export gives up", |app| {
        !app.is_exporting()
    });
    assert!(harness.state().last_exported().is_empty());
    harness.get_by_label_contains("export failed");
}

#[test]
fn coefficient_guard_refuses_then_unlocks_and_stops_at_non_finite() {
    let dir = tempfile::tempdir().unwrap();
    let mut settings = small_settings(dir.path());
    settings.step_n = 5000;
    let mut harness = harness(settings);
    // At 0.25: the warning about the checkerboard mode.
    harness.get_by_label_contains("checkerboard mode does not decay");

    harness
        .get_by_role_and_label(Role::Slider, "coefficient")
        .set_value_accesskit(0.3);
    harness.run_steps(2);
    assert_eq!(
        harness.state().settings().step.coeff,
        0.25,
        "0.3 must be refused"
    );
    harness.get_by_label_contains("refused");

    harness
        .get_by_label("unlock coefficients above 0.25")
        .click();
    harness.run_steps(2);
    assert!((harness.state().settings().step.coeff - 0.3).abs() < 1e-6);
    harness.get_by_label_contains("unstable");

    harness.get_by_label("Step 5000").click();
    wait_until(&mut harness, "the field goes non-finite and stops", |app| {
        app.non_finite().is_some() && !app.is_playing()
    });
    let step = harness.state().step_count();
    assert!(
        step > 0 && step < 5000,
        "stopped at the last finite step, got {step}"
    );
    harness.get_by_label_contains("non-finite");
}

#[test]
fn folder_dialog_chooses_the_export_folder() {
    let dir = tempfile::tempdir().unwrap();
    let sub = dir.path().join("chosen");
    std::fs::create_dir(&sub).unwrap();
    let mut harness = harness(small_settings(&sub.join("not-yet")));
    harness.get_by_label("Browse…").click();
    harness.run_steps(2);
    // It opens at the nearest existing folder, shown in its path field.
    let shown = sub.display().to_string();
    assert!(
        harness
            .query_all(egui_kittest::kittest::by().value(&shown))
            .next()
            .is_some(),
        "the chooser shows {shown}"
    );
    harness.get_by_label("Use this folder").click();
    harness.run_steps(2);
    assert_eq!(harness.state().settings().export_dir, sub);
    assert!(harness.query_by_label("Use this folder").is_none());
}

#[test]
fn settings_survive_a_restart() {
    // eframe's storage is a key-value store of RON text; the settings round-trip through it.
    let dir = tempfile::tempdir().unwrap();
    let mut settings = small_settings(dir.path());
    settings.field_view.colormap = Colormap::Magma;
    settings.step.boundary = Boundary::Neumann;
    settings.steps_per_frame = 7;
    let mut storage = MemoryStorage::default();
    eframe::set_value(&mut storage, heatlab::ui::settings::STORAGE_KEY, &settings);
    let restored: Settings =
        eframe::get_value(&storage, heatlab::ui::settings::STORAGE_KEY).unwrap();
    assert_eq!(restored, settings);
}

#[test]
fn the_app_saves_what_the_controls_hold() {
    use eframe::App as _;
    let dir = tempfile::tempdir().unwrap();
    let settings = small_settings(dir.path());
    let mut harness = common::app::build_app(
        AppOptions {
            settings: Some(settings),
            persist: true,
            ..AppOptions::default()
        },
        Vec2::new(1400.0, 900.0),
    );
    wait_until(&mut harness, "the field is shown", HeatlabApp::is_ready);
    harness
        .get_by_role_and_label(Role::ComboBox, "Field colormap")
        .click();
    harness.run_steps(2);
    harness.get_by_label("magma").click();
    harness.run_steps(2);
    let mut storage = MemoryStorage::default();
    harness.state_mut().save(&mut storage);
    let saved: Settings = eframe::get_value(&storage, heatlab::ui::settings::STORAGE_KEY).unwrap();
    assert_eq!(saved.field_view.colormap, Colormap::Magma);
    assert_eq!(saved.field.size, GridSize::new(48, 64).unwrap());
}

#[test]
fn the_agreement_check_reports_bit_identical_while_playing_and_plots_it() {
    let dir = tempfile::tempdir().unwrap();
    let mut harness = harness(small_settings(dir.path()));
    assert!(harness
        .query_by_label_contains("bit-identical to the CPU")
        .is_none());
    harness.get_by_label("check against the CPU").click();
    harness.get_by_label("Play").click();
    let start = Instant::now();
    loop {
        harness.step();
        let identical = harness
            .query_by_label_contains("bit-identical to the CPU at step")
            .is_some();
        // At least two windows: the second starts where a check ended, while playing.
        let several = ["(2 checks)", "(3 checks)", "(4 checks)"]
            .iter()
            .any(|count| harness.query_by_label_contains(count).is_some());
        if identical && several {
            break;
        }
        assert!(
            harness
                .query_by_label_contains("differs from the CPU")
                .is_none(),
            "the CPU backend disagreed with the CPU reference"
        );
        assert!(
            start.elapsed() < DEADLINE,
            "no agreement result; notices: {:?}",
            harness.state().notices()
        );
        std::thread::sleep(Duration::from_millis(5));
    }
    assert!(harness.state().settings().agreement_check);
    harness.get_by_label("max |difference| from the CPU over steps");
    // Off again: the status line goes.
    harness.get_by_label("check against the CPU").click();
    harness.run_steps(3);
    assert!(harness
        .query_by_label_contains("bit-identical to the CPU")
        .is_none());
}
