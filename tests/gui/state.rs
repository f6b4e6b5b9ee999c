//! Saving and opening states, and importing initial fields, in the app driven by egui_kittest:
//! the Save state… dialog, files dropped on the window, bad files. The app runs on the CPU
//! backend; checks wait for the simulation thread with a deadline.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "test helpers; clippy's allow-*-in-tests covers #[test] functions only"
)]

use crate::common;

use common::app::{app_harness, has_notice, wait_until};

use std::path::{Path, PathBuf};
use std::sync::Arc;

use eframe::egui::{self, Vec2};
use egui_kittest::kittest::Queryable;
use egui_kittest::Harness;
use heatlab::ui::tutorial::Tab;
use heatlab::ui::{HeatlabApp, Settings};
use heatlab_engine::compute::{BackendChoice, Boundary, StepParams};
use heatlab_engine::grid::GridSize;

fn settings(export_dir: &Path) -> Settings {
    let mut field = Settings::default().field;
    field.size = GridSize::new(48, 64).unwrap();
    Settings {
        backend: BackendChoice::Cpu,
        field,
        step: StepParams {
            coeff: 0.21,
            boundary: Boundary::Neumann,
        },
        steps_per_frame: 2,
        auto_steps: false,
        step_n: 100,
        export_dir: export_dir.to_path_buf(),
        ..Settings::default()
    }
}

fn harness(settings: Settings) -> Harness<'static, HeatlabApp> {
    // Tall enough that the whole side panel is on screen (in a smaller window it scrolls,
    // and kittest clicks only what is shown).
    app_harness(settings, Vec2::new(1400.0, 1600.0))
}

/// A file dropped on the window, as eframe hands it to egui.
#[derive(Debug)]
struct Dropped(PathBuf);

impl egui::DroppedFile for Dropped {
    fn path(&self) -> &Path {
        &self.0
    }

    fn bytes(&self) -> Result<Vec<u8>, String> {
        std::fs::read(&self.0).map_err(|e| e.to_string())
    }
}

fn drop_file(harness: &mut Harness<'_, HeatlabApp>, path: &Path) {
    harness
        .input_mut()
        .dropped_files
        .push(Arc::new(Dropped(path.to_path_buf())));
    harness.step();
}

/// Exports the field as .npy and returns its bytes.
fn field_npy(harness: &mut Harness<'_, HeatlabApp>) -> Vec<u8> {
    harness.get_by_label("Field .npy").click();
    harness.step();
    wait_until(harness, "the export is written", |app| !app.is_exporting());
    let written = harness.state().last_exported().to_vec();
    assert_eq!(written.len(), 1, "{:?}", harness.state().notices());
    std::fs::read(&written[0]).unwrap()
}

#[test]
fn a_saved_state_reopened_continues_bit_for_bit() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("exports");
    std::fs::create_dir(&out).unwrap();
    let mut harness = harness(settings(&out));
    harness.get_by_label("Step 100").click();
    wait_until(&mut harness, "100 steps", |app| app.step_count() == 100);

    harness.get_by_label("Save state…").click();
    for _ in 0..3 {
        harness.step();
    }
    // The dialog opens in the export folder with a name that carries the step.
    harness.get_by_label("Save").click();
    wait_until(&mut harness, "the state is saved", |app| {
        has_notice(app, "saved the state at step 100")
    });
    let state = out.join("state_000100.hlstate");
    assert!(state.is_file());

    harness.get_by_label("Step 100").click();
    wait_until(&mut harness, "200 steps", |app| app.step_count() == 200);
    let straight = field_npy(&mut harness);

    // Change what the state must bring back: the coefficient and the field.
    harness.get_by_label("Reset").click();
    wait_until(&mut harness, "reset", |app| app.step_count() == 0);

    drop_file(&mut harness, &state);
    wait_until(&mut harness, "the state is opened", |app| {
        app.step_count() == 100 && has_notice(app, "opened the state of a 48x64 field at step 100")
    });
    let params = harness.state().settings().step;
    assert_eq!((params.coeff, params.boundary), (0.21, Boundary::Neumann));
    harness.get_by_label("Step 100").click();
    wait_until(&mut harness, "200 steps again", |app| {
        app.step_count() == 200
    });
    assert_eq!(field_npy(&mut harness), straight, "bit for bit");
}

#[test]
fn dropped_fields_are_imported_and_bad_files_leave_the_field() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("exports");
    let mut harness = harness(settings(&out));
    harness.get_by_label("Step 100").click();
    wait_until(&mut harness, "100 steps", |app| app.step_count() == 100);

    // A text file named .png, a 3-D array, a state from a newer heatlab: notices, nothing lost.
    let text = dir.path().join("notes.png");
    std::fs::write(&text, "not a picture\n").unwrap();
    drop_file(&mut harness, &text);
    wait_until(&mut harness, "the text file is refused", |app| {
        has_notice(app, "is named .png but is not a PNG image")
    });
    let mut cube = b"\x93NUMPY\x01\x00".to_vec();
    let mut header = "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 2, 2), }".to_string();
    while (10 + header.len() + 1) % 64 != 0 {
        header.push(' ');
    }
    header.push('\n');
    cube.extend_from_slice(&(header.len() as u16).to_le_bytes());
    cube.extend_from_slice(header.as_bytes());
    cube.extend_from_slice(&[0u8; 32]);
    let cube_path = dir.path().join("cube.npy");
    std::fs::write(&cube_path, cube).unwrap();
    drop_file(&mut harness, &cube_path);
    wait_until(&mut harness, "the 3-D array is refused", |app| {
        has_notice(app, "3-D array")
    });
    let mut newer = b"\x89HLSTATE".to_vec();
    newer.extend_from_slice(&9u32.to_le_bytes());
    newer.extend_from_slice(&[0u8; 64]);
    let newer_path = dir.path().join("future.hlstate");
    std::fs::write(&newer_path, newer).unwrap();
    drop_file(&mut harness, &newer_path);
    wait_until(&mut harness, "the newer state is refused", |app| {
        has_notice(app, "saved by a newer heatlab")
    });
    assert!(harness
        .state()
        .notices()
        .iter()
        .any(|n| n.text.contains("the field is unchanged")));
    assert_eq!(harness.state().step_count(), 100, "the field is kept");

    // A real image becomes the initial field at step 0.
    let picture = dir.path().join("spot.png");
    let mut rgb = vec![0u8; 30 * 20 * 3];
    rgb[(10 * 30 + 15) * 3..(10 * 30 + 16) * 3].copy_from_slice(&[255, 255, 255]);
    heatlab_engine::export::write_png_rgb(&picture, 30, 20, &rgb).unwrap();
    // Dropped while another tab is shown: the diffusion tab comes back with it.
    harness.get_by_label(&Tab::MonteCarloPi.to_string()).click();
    harness.run_steps(2);
    assert_eq!(harness.state().settings().tab, Tab::MonteCarloPi);
    drop_file(&mut harness, &picture);
    assert_eq!(harness.state().settings().tab, Tab::Diffusion);
    wait_until(&mut harness, "the image is imported", |app| {
        app.step_count() == 0 && has_notice(app, "imported a 20x30 initial field")
    });
    harness.get_by_label("Step 100").click();
    wait_until(&mut harness, "it steps", |app| app.step_count() == 100);
    // The imported field is what Reset goes back to.
    harness.get_by_label("Reset").click();
    wait_until(&mut harness, "reset", |app| app.step_count() == 0);
    let field = heatlab_engine::export::read_npy(&field_npy(&mut harness)).unwrap();
    assert_eq!(field.size(), GridSize::new(20, 30).unwrap());
    assert_eq!(field.get(10, 15), 1.0);
    assert_eq!(field.as_slice().iter().sum::<f32>(), 1.0);
}

#[test]
fn record_video_writes_a_gif_of_every_kth_step() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("exports");
    let mut harness = harness(settings(&out));
    harness.get_by_label("Record video").click();
    harness.step();
    harness.step();
    harness.get_by_label("Stop video");
    harness.get_by_label("Step 100").click();
    wait_until(&mut harness, "100 steps", |app| app.step_count() == 100);
    harness.get_by_label("Stop video").click();
    wait_until(&mut harness, "the video is written", |app| {
        app.last_exported()
            .iter()
            .any(|p| p.ends_with("recording_000000.gif"))
    });
    harness.get_by_label("Record video");
    let mut options = gif::DecodeOptions::new();
    options.set_color_output(gif::ColorOutput::RGBA);
    let file = std::fs::File::open(out.join("recording_000000.gif")).unwrap();
    let mut decoder = options.read_info(file).unwrap();
    let mut frames = 0;
    while decoder.read_next_frame().unwrap().is_some() {
        frames += 1;
    }
    // The field as it stood, then every 10 steps: 0, 10, ..., 100.
    assert_eq!(frames, 11);
    // The field's 64 columns, and the colorbar that "colorbar in PNGs" asks for.
    assert!(decoder.width() > 64, "{}", decoder.width());
    assert!(decoder.height() > 48, "48 rows and the step counter");
    assert!(std::fs::read_dir(&out).unwrap().all(|e| !e
        .unwrap()
        .file_name()
        .to_string_lossy()
        .starts_with(".heatlab-")));
}

#[test]
fn file_dialogs_start_in_the_folder_of_the_file_last_chosen() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("exports");
    std::fs::create_dir(&out).unwrap();
    let mut harness = harness(settings(&out));
    // First in the export folder.
    harness.get_by_label("Save state…").click();
    harness.run_steps(3);
    assert_eq!(
        harness.state().diffusion().file_dialog_directory(),
        Some(out.as_path())
    );
    harness.get_by_label("Cancel").click();
    harness.run_steps(2);
    // A field opened from another folder: the next dialog starts there, and the settings
    // keep it for the next start.
    let elsewhere = dir.path().join("elsewhere");
    std::fs::create_dir(&elsewhere).unwrap();
    let field = elsewhere.join("start.npy");
    let grid =
        heatlab_engine::grid::Grid::from_vec(GridSize::new(48, 64).unwrap(), vec![0.5; 48 * 64])
            .unwrap();
    heatlab_engine::export::write_npy(&field, &grid).unwrap();
    drop_file(&mut harness, &field);
    wait_until(&mut harness, "the field is opened", |app| {
        has_notice(app, "start.npy")
    });
    harness.get_by_label("Save state…").click();
    harness.run_steps(3);
    assert_eq!(
        harness.state().diffusion().file_dialog_directory(),
        Some(elsewhere.as_path())
    );
    assert_eq!(
        harness.state().settings().file_folder.as_deref(),
        Some(elsewhere.as_path())
    );
}
