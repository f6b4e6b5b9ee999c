//! What a new user trips on in the app: a coefficient typed over another, a layout that moves
//! under the pointer, probes left on a replaced field, a checkbox that says the wrong thing, a
//! backend that cannot work, a GPU-sized preset on the CPU, a typed path in the file dialog,
//! plots cut off in small windows, and help.

use std::path::{Path, PathBuf};

use eframe::egui::accesskit::{Role, Toggled};
use eframe::egui::{Event, Key, PointerButton, Rect, Vec2};
use egui_kittest::kittest::{NodeT, Queryable};
use egui_kittest::Harness;
use heatlab::ui::diffusion::files::VideoChoice;
use heatlab::ui::diffusion::DiffusionCommand;
use heatlab::ui::notice::Level;
use heatlab::ui::settings::Preset;
use heatlab::ui::tutorial::Tab;
use heatlab::ui::{AppOptions, HeatlabApp, Settings};
use heatlab_engine::compute::BackendChoice;
use heatlab_engine::grid::{Grid, GridSize};

use super::common::app::{app_harness, wait_until};
use super::common::pointer::{click_at, picture_rect};
use super::{harness, small_settings, RECORDED_PI_1M};
use crate::common::backend::test_name;
use crate::common::skipped;

/// The window sizes the app must work at without cutting anything off.
const WINDOWS: [Vec2; 2] = [Vec2::new(1280.0, 720.0), Vec2::new(1440.0, 900.0)];

/// Tall enough that the whole side panel is on screen (kittest clicks only what is shown).
const TALL_WINDOW: Vec2 = Vec2::new(1400.0, 1600.0);

fn app(settings: Settings, window: Vec2) -> Harness<'static, HeatlabApp> {
    let mut harness = app_harness(settings, window);
    harness.run_steps(3);
    harness
}

fn notices(app: &HeatlabApp) -> Vec<String> {
    app.notices().iter().map(|n| n.text.clone()).collect()
}

fn coeff(harness: &Harness<'_, HeatlabApp>) -> f32 {
    harness.state().settings().step.coeff
}

/// The number the coefficient's box shows.
fn coefficient_box(harness: &Harness<'_, HeatlabApp>) -> (Rect, Option<f64>) {
    let slider = harness
        .get_by_role_and_label(Role::Slider, "coefficient")
        .rect();
    let spin = harness
        .get_all_by_role(Role::SpinButton)
        .find(|node| {
            let rect = node.rect();
            rect.left() >= slider.left() && (rect.center().y - slider.center().y).abs() < 8.0
        })
        .unwrap_or_else(|| panic!("no box beside the coefficient's slider"));
    (spin.rect(), spin.accesskit_node().numeric_value())
}

/// Clicks into the coefficient's box and types `text` a character a frame, checking that
/// nothing runs before Enter; then presses Enter.
fn type_coefficient(harness: &mut Harness<'_, HeatlabApp>, text: &str) {
    let before = coeff(harness);
    let (rect, _) = coefficient_box(harness);
    click_at(harness, rect.center(), PointerButton::Primary);
    // Clicking selects the text; the first character replaces it.
    for character in text.chars() {
        harness.event(Event::Text(character.to_string()));
        harness.run_steps(2);
        assert_eq!(coeff(harness), before, "{text}: applied before Enter");
    }
    harness.key_press(Key::Enter);
    harness.run_steps(3);
}

#[test]
fn a_typed_coefficient_applies_on_enter_and_a_refused_one_leaves_the_box_at_the_one_in_use() {
    let dir = tempfile::tempdir().unwrap();
    let mut harness = app(small_settings(dir.path()), WINDOWS[1]);
    assert_eq!(coeff(&harness), 0.25);
    type_coefficient(&mut harness, "0.1");
    assert!((coeff(&harness) - 0.1).abs() < 1e-6, "{}", coeff(&harness));
    type_coefficient(&mut harness, "0.26");
    assert!((coeff(&harness) - 0.1).abs() < 1e-6, "0.26 is refused");
    let (_, shown) = coefficient_box(&harness);
    assert!(
        shown.is_some_and(|v| (v - 0.1).abs() < 1e-6),
        "the box shows what runs, not the refused value: {shown:?}"
    );
    harness.get_by_label_contains("0.26 refused");
    // "Tick the unlock to run it anyway" runs the refused value.
    harness
        .get_by_label("unlock coefficients above 0.25")
        .click();
    harness.run_steps(3);
    assert!((coeff(&harness) - 0.26).abs() < 1e-6, "{}", coeff(&harness));
}

#[test]
fn notices_and_the_first_probe_do_not_move_the_views_at_either_window_size() {
    let dir = tempfile::tempdir().unwrap();
    for window in WINDOWS {
        let mut harness = app(small_settings(dir.path()), window);
        let before = picture_rect(&harness);
        for i in 0..4 {
            let text = format!("notice {i}: {}", "a long notice that says a lot ".repeat(8));
            harness
                .state_mut()
                .diffusion_mut()
                .notify(Level::Info, text);
            harness.run_steps(2);
            assert_eq!(
                picture_rect(&harness),
                before,
                "{window:?}: notice {i} moved it"
            );
        }
        harness.key_press(Key::P);
        harness.run_steps(2);
        assert_eq!(picture_rect(&harness), before, "{window:?}: the probe tool");
        click_at(&mut harness, before.center(), PointerButton::Primary);
        wait_until(&mut harness, "the probe is sampled", |app| {
            app.diffusion().paint_tools().probes.all()[0]
                .latest()
                .is_some()
        });
        harness.run_steps(2);
        assert_eq!(
            picture_rect(&harness),
            before,
            "{window:?}: the first probe"
        );
        // Its plot is on screen, whole.
        let caption = harness.get_by_label("probe values over time").rect();
        assert!(
            caption.bottom() + 60.0 <= window.y,
            "{window:?}: the probe plot is cut off below {caption:?}"
        );
    }
}

#[test]
fn the_hover_readout_and_the_views_end_inside_the_window() {
    let dir = tempfile::tempdir().unwrap();
    let mut settings = small_settings(dir.path());
    // A field larger than its view: the readout adds "(means of ...)".
    settings.field.size = GridSize::new(1024, 1024).unwrap();
    for window in WINDOWS {
        let mut harness = app(settings.clone(), window);
        let picture = picture_rect(&harness);
        harness.event(Event::PointerMoved(picture.center()));
        harness.run_steps(3);
        let readout = harness.get_by_label_contains("means of").rect();
        assert!(
            readout.right() <= window.x && readout.left() > picture.left(),
            "{window:?}: the readout at {readout:?} leaves the window"
        );
        let laplacian = harness.get_by_label("Laplacian picture").rect();
        assert!(laplacian.right() < window.x, "{window:?}: {laplacian:?}");
    }
}

fn write_field(dir: &Path, rows: usize, cols: usize) -> PathBuf {
    let path = dir.join(format!("field_{rows}x{cols}.npy"));
    let size = GridSize::new(rows, cols).unwrap();
    let data = (0..rows * cols).map(|i| (i % 7) as f32 / 7.0).collect();
    heatlab_engine::export::write_npy(&path, &Grid::from_vec(size, data).unwrap()).unwrap();
    path
}

fn open(harness: &mut Harness<'_, HeatlabApp>, path: PathBuf, size: GridSize) {
    let mut settings = harness.state().settings().clone();
    // Counted before the file is asked for: its first frame may come with the answer.
    let shown = harness.state().frames_shown();
    harness
        .state_mut()
        .diffusion_mut()
        .apply(DiffusionCommand::Open(path), &mut settings);
    wait_until(harness, "the file is opened", |app| {
        app.diffusion().state().field_size == Some(size) && app.is_ready()
    });
    // Its first frame replaces the old field's picture.
    wait_until(harness, "the opened field is shown", |app| {
        app.frames_shown() > shown
    });
    harness.run_steps(3);
}

#[test]
fn an_imported_tall_field_fills_the_view_and_opening_is_replaced_by_opened() {
    let dir = tempfile::tempdir().unwrap();
    let mut harness = app(small_settings(dir.path()), WINDOWS[1]);
    let path = write_field(dir.path(), 300, 200);
    open(&mut harness, path, GridSize::new(300, 200).unwrap());
    // A frame of the old field still in flight may be the one counted as shown: the new
    // field's picture is given a few seconds to come.
    let tall = |rect: Rect| (rect.width() / rect.height() - 2.0 / 3.0).abs() < 0.01;
    let mut rect = picture_rect(&harness);
    for _ in 0..300 {
        if tall(rect) {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(10));
        harness.run_steps(1);
        rect = picture_rect(&harness);
    }
    assert!(
        rect.height() >= 380.0 && (rect.width() / rect.height() - 2.0 / 3.0).abs() < 0.01,
        "a 300x200 field drawn {rect:?}"
    );
    let texts = notices(harness.state());
    assert!(
        texts.iter().any(|t| t.starts_with("imported a 300x200")),
        "{texts:?}"
    );
    assert!(!texts.iter().any(|t| t.starts_with("opening")), "{texts:?}");
}

#[test]
fn probes_and_the_line_are_cleared_with_a_notice_when_the_field_changes_size_or_is_opened() {
    let dir = tempfile::tempdir().unwrap();
    let mut settings = small_settings(dir.path());
    settings.auto_steps = false;
    settings.steps_per_frame = 400;
    let mut harness = app(settings, WINDOWS[1]);
    let place = |harness: &mut Harness<'_, HeatlabApp>| {
        let tools = harness.state_mut().diffusion_mut().paint_tools_mut();
        tools.probes.add(30, 30);
        let size = GridSize::new(32, 32).unwrap();
        tools.profile.set((0.0, 31.0), (31.0, 31.0), size);
        harness.run_steps(3);
    };
    place(&mut harness);
    harness
        .get_by_role_and_label(Role::SpinButton, "rows")
        .set_value_accesskit(64.0);
    harness
        .get_by_role_and_label(Role::SpinButton, "cols")
        .set_value_accesskit(64.0);
    harness.step();
    harness.get_by_label("Regenerate *").click();
    wait_until(&mut harness, "the 64x64 field", |app| {
        app.diffusion().state().field_size == GridSize::new(64, 64).ok() && app.is_ready()
    });
    let tools = harness.state().diffusion().paint_tools();
    assert!(tools.probes.is_empty() && !tools.profile.is_set());
    // Four times the cells: a quarter of the steps per frame, so a frame takes as long.
    assert_eq!(harness.state().settings().steps_per_frame, 100);
    harness.get_by_label("Step 100").click();
    wait_until(&mut harness, "100 steps", |app| app.step_count() == 100);
    let texts = notices(harness.state());
    assert!(
        texts.iter().any(|t| t.starts_with("cleared the probes")),
        "{texts:?}"
    );
    assert!(
        !texts.iter().any(|t| t.contains("probes stopped")),
        "{texts:?}"
    );

    // Opening a file clears them too (a 32x32 file: the probe at (30, 30) would fit).
    let tools = harness.state_mut().diffusion_mut().paint_tools_mut();
    tools.probes.add(30, 30);
    harness.run_steps(3);
    let path = write_field(dir.path(), 32, 32);
    open(&mut harness, path, GridSize::new(32, 32).unwrap());
    assert!(harness.state().diffusion().paint_tools().probes.is_empty());
    assert_eq!(harness.state().settings().steps_per_frame, 400);
}

fn checkbox_ticked(harness: &Harness<'_, HeatlabApp>, label: &str) -> bool {
    harness.get_by_label(label).accesskit_node().toggled() == Some(Toggled::True)
}

#[test]
fn recording_a_video_does_not_tick_record_pngs() {
    let dir = tempfile::tempdir().unwrap();
    let mut harness = app(small_settings(dir.path()), WINDOWS[1]);
    let apply = |harness: &mut Harness<'_, HeatlabApp>, command| {
        let mut settings = harness.state().settings().clone();
        harness
            .state_mut()
            .diffusion_mut()
            .apply(command, &mut settings);
        harness.run_steps(3);
    };
    apply(
        &mut harness,
        DiffusionCommand::StartVideo(VideoChoice::default()),
    );
    assert!(harness.state().is_recording());
    harness.get_by_label("Stop video");
    assert!(!checkbox_ticked(&harness, "record PNGs"));
    apply(&mut harness, DiffusionCommand::StopVideo);
    apply(&mut harness, DiffusionCommand::SetRecording(true));
    assert!(checkbox_ticked(&harness, "record PNGs"));
}

#[test]
fn cuda_without_a_driver_is_greyed_out_with_its_reason_and_auto_is_kept() {
    let dir = tempfile::tempdir().unwrap();
    let mut settings = small_settings(dir.path());
    // Remembered from a machine with a GPU.
    settings.backend = BackendChoice::Cuda;
    let mut harness = app(settings, WINDOWS[1]);
    let backend = harness.state().backend().cloned().unwrap();
    let Some(reason) = backend.cuda_unavailable else {
        skipped(
            test_name!(),
            "CUDA works on this machine: nothing to grey out",
        );
        return;
    };
    assert_eq!(harness.state().settings().backend, BackendChoice::Auto);
    let cuda = harness.get_by_label("CUDA");
    assert!(cuda.accesskit_node().is_disabled());
    cuda.hover();
    harness.run_steps(3);
    harness.get_by_label_contains(&format!("CUDA unavailable: {reason}"));
    harness.get_by_label("CUDA").click();
    harness.run_steps(3);
    assert_eq!(harness.state().settings().backend, BackendChoice::Auto);
    // Neither the generation live toggle looks ticked while it cannot be used.
    let live = harness.get_by_label("live");
    assert!(live.accesskit_node().is_disabled());
    assert!(!checkbox_ticked(&harness, "live"));
}

#[test]
fn the_gpu_sized_preset_says_so() {
    assert!(Preset::Large.gpu_sized() && !Preset::Small.gpu_sized());
    assert!(Preset::Large.hint().contains("GPU-sized"));
    let dir = tempfile::tempdir().unwrap();
    let harness = app(small_settings(dir.path()), WINDOWS[0]);
    harness.get_by_label("large 8192² (GPU)");
}

#[test]
fn the_open_dialog_opens_a_typed_name_with_its_open_button() {
    let dir = tempfile::tempdir().unwrap();
    let mut harness = app(small_settings(dir.path()), TALL_WINDOW);
    let path = write_field(dir.path(), 20, 24);
    harness.get_by_label("Open…").click();
    harness.run_steps(3);
    let name_box = harness
        .get_all_by_role(Role::TextInput)
        // The dialog's name box is the widest empty one (the palette's filter and the levels
        // box are narrow).
        .filter(|node| node.value().unwrap_or_default().is_empty())
        .max_by(|a, b| a.rect().width().total_cmp(&b.rect().width()))
        .unwrap_or_else(|| {
            let boxes: Vec<_> = harness
                .get_all_by_role(Role::TextInput)
                .map(|node| (node.rect(), node.value()))
                .collect();
            panic!("no empty file name box among {boxes:?}")
        })
        .rect();
    click_at(&mut harness, name_box.center(), PointerButton::Primary);
    harness.event(Event::Text(path.display().to_string()));
    harness.run_steps(2);
    harness.get_by_label("Open").click();
    wait_until(&mut harness, "the typed file is opened", |app| {
        app.diffusion().state().field_size == GridSize::new(20, 24).ok()
    });
}

#[test]
fn f1_shows_the_shortcuts_and_the_equation_and_about_shows_the_version() {
    let dir = tempfile::tempdir().unwrap();
    let mut harness = app(small_settings(dir.path()), WINDOWS[0]);
    assert!(harness.query_by_label("Ctrl+Q").is_none());
    harness.key_press(Key::F1);
    harness.run_steps(2);
    harness.get_by_label("Ctrl+Q");
    harness.get_by_label(heatlab::ui::help::EQUATION);
    harness.key_press(Key::F1);
    harness.run_steps(2);
    assert!(harness.query_by_label("Ctrl+Q").is_none());
    harness.event(Event::Text("?".into()));
    harness.run_steps(2);
    harness.get_by_label("Ctrl+Q");
    harness.get_by_label("Help").click();
    harness.run_steps(2);
    harness.get_by_label("About heatlab").click();
    harness.run_steps(2);
    harness.get_by_label(&format!("heatlab {}", env!("CARGO_PKG_VERSION")));
}

#[test]
fn the_monte_carlo_pi_plots_are_whole_at_1280_by_720_and_1440_by_900() {
    let dir = tempfile::tempdir().unwrap();
    let recorded = dir.path().join("pi_1M.json");
    std::fs::write(&recorded, RECORDED_PI_1M).unwrap();
    let mut harness = harness(AppOptions {
        settings: Some(small_settings(dir.path())),
        recorded_runs: vec![recorded],
        tab: Some(Tab::MonteCarloPi),
        ..AppOptions::default()
    });
    wait_until(&mut harness, "the recorded run is shown", |app| {
        app.tutorial()
            .panel(heatlab_engine::tutorial::TutorialKernel::MonteCarloPi)
            .outcome
            .is_some()
    });
    for window in WINDOWS {
        harness.set_size(window);
        harness.run_steps(3);
        // The scatter's caption, then a plot at least 150 points tall, above the window's
        // bottom; and nothing past its right edge.
        let caption = harness.get_by_label("4 × inside / all ≈ π").rect();
        assert!(
            caption.bottom() + 150.0 <= window.y,
            "{window:?}: the lower plots are cut off: caption at {caption:?}"
        );
        let bars = harness
            .get_by_label("where the time goes (mean per run):")
            .rect();
        assert!(bars.right() <= window.x, "{window:?}: {bars:?}");
    }
}
