//! The brush, undo and redo, probes and the line profile, driven through the real app with
//! egui_kittest: keys and pointer events on the field picture, as a person would. The field is
//! small (48x64) so that the view shows every cell unreduced and its values can be read exactly.

use crate::common;

use common::app::{app_harness, wait_until, DEADLINE};
use common::pointer::{cell_centre, click_at, drag, picture_rect};

use std::path::Path;
use std::time::{Duration, Instant};

use eframe::egui::{Key, Modifiers, PointerButton, Pos2, Rect, Vec2};
use egui_kittest::kittest::Queryable;
use egui_kittest::Harness;
use heatlab::ui::diffusion::brush::Tool;
use heatlab::ui::diffusion::probes::Probe;
use heatlab::ui::{HeatlabApp, Settings};
use heatlab_engine::compute::BackendChoice;
use heatlab_engine::grid::GridSize;

const ROWS: usize = 48;
const COLS: usize = 64;

#[expect(
    clippy::unwrap_used,
    reason = "a test helper: its failure is the test's failure"
)]
fn harness(export_dir: &Path) -> Harness<'static, HeatlabApp> {
    let mut field = Settings::default().field;
    field.size = GridSize::new(ROWS, COLS).unwrap();
    let settings = Settings {
        backend: BackendChoice::Cpu,
        field,
        steps_per_frame: 2,
        auto_steps: false,
        step_n: 100,
        export_dir: export_dir.to_path_buf(),
        ..Settings::default()
    };
    app_harness(settings, Vec2::new(1400.0, 1000.0))
}

/// Every cell of the field as the view shows it (unreduced at this size), as bits.
fn field_bits(app: &HeatlabApp) -> Vec<u32> {
    let panel = app.diffusion();
    let mut bits = Vec::with_capacity(ROWS * COLS);
    for row in 0..ROWS {
        for col in 0..COLS {
            let (value, factor) = panel.field_value_at(row, col).unwrap_or((f32::NAN, 0));
            assert_eq!(factor, 1, "the view is reduced");
            bits.push(value.to_bits());
        }
    }
    bits
}

fn value(app: &HeatlabApp, row: usize, col: usize) -> f32 {
    app.diffusion()
        .field_value_at(row, col)
        .map_or(f32::NAN, |(v, _)| v)
}

/// The screen position of a cell's centre on the field picture (zoom 1).
fn cell_pos(rect: Rect, row: usize, col: usize) -> Pos2 {
    cell_centre(rect, (ROWS, COLS), row, col)
}

#[test]
fn painting_adds_heat_where_dragged_only_and_undo_redo_restore_it() {
    let dir = tempfile::tempdir().unwrap();
    let mut harness = harness(dir.path());
    let before = field_bits(harness.state());
    let heat_before = harness.state().diffusion().state().stats.unwrap().total;
    harness.key_press(Key::B);
    harness.step();
    assert_eq!(harness.state().diffusion().paint_tools().tool, Tool::Paint);
    let rect = picture_rect(&harness);
    let painted = paint_along_row_24(&mut harness, rect, &before, heat_before);
    undo_and_redo_restore_the_stroke(&mut harness, &before, &painted);
    removing_heat_never_goes_below_zero(&mut harness, rect, &painted);
}

/// Paints along row 24 from column 8 to 56 with the primary button: the cells along the
/// stroke hotter, nothing farther than a radius from it changed, no step taken and the total
/// heat up. Returns the painted field's bits.
fn paint_along_row_24(
    harness: &mut Harness<'static, HeatlabApp>,
    rect: Rect,
    before: &[u32],
    heat_before: f64,
) -> Vec<u32> {
    drag(
        harness,
        cell_pos(rect, 24, 8),
        cell_pos(rect, 24, 56),
        PointerButton::Primary,
    );
    wait_until(harness, "the stroke is kept for undo", |app| {
        app.diffusion().paint_tools().history() == (1, 0)
    });
    // The whole stroke, to its last dab: a frame drawn while the stroke was still arriving may
    // show only its start.
    wait_until(harness, "the painted field is shown", |app| {
        [8, 32, 56]
            .iter()
            .all(|&col| value(app, 24, col) > f32::from_bits(before[24 * COLS + col]) + 0.04)
    });
    let painted = field_bits(harness.state());
    check_only_the_band_of_the_stroke_changed(before, &painted);
    assert_eq!(harness.state().step_count(), 0, "painting takes no step");
    wait_until(harness, "the total heat shows the jump", |app| {
        app.diffusion()
            .state()
            .stats
            .is_some_and(|s| s.total > heat_before + 1.0)
    });
    painted
}

/// The stroke along row 24, columns 8 to 56, changed its band of the field only.
fn check_only_the_band_of_the_stroke_changed(before: &[u32], painted: &[u32]) {
    // Along the stroke every cell is hotter (the default brush: radius 12, soft edge)...
    for col in 8..=56 {
        let (now, was) = (
            f32::from_bits(painted[24 * COLS + col]),
            f32::from_bits(before[24 * COLS + col]),
        );
        assert!(now > was, "column {col}: {was} -> {now}");
    }
    // ... and nothing changed more than a radius away from it.
    for row in (0..11).chain(38..ROWS) {
        for col in 0..COLS {
            assert_eq!(
                painted[row * COLS + col],
                before[row * COLS + col],
                "({row}, {col})"
            );
        }
    }
}

/// Undo, Ctrl+Shift+Z, Ctrl+Z and Redo take the stroke back and paint it again, bit for bit.
fn undo_and_redo_restore_the_stroke(
    harness: &mut Harness<'static, HeatlabApp>,
    before: &[u32],
    painted: &[u32],
) {
    harness.get_by_label("Undo").click();
    wait_until(harness, "undo restores the field bit for bit", |app| {
        field_bits(app) == before
    });
    assert_eq!(harness.state().diffusion().paint_tools().history(), (0, 1));
    harness.key_press_modifiers(Modifiers::COMMAND | Modifiers::SHIFT, Key::Z);
    wait_until(harness, "Ctrl+Shift+Z paints it again", |app| {
        field_bits(app) == painted
    });
    harness.key_press_modifiers(Modifiers::COMMAND, Key::Z);
    wait_until(harness, "Ctrl+Z takes it back", |app| {
        field_bits(app) == before
    });
    harness.get_by_label("Redo").click();
    wait_until(harness, "Redo paints it again", |app| {
        field_bits(app) == painted
    });
}

/// The secondary button removes heat, never below zero.
fn removing_heat_never_goes_below_zero(
    harness: &mut Harness<'static, HeatlabApp>,
    rect: Rect,
    painted: &[u32],
) {
    drag(
        harness,
        cell_pos(rect, 24, 20),
        cell_pos(rect, 24, 44),
        PointerButton::Secondary,
    );
    wait_until(harness, "the second stroke is kept", |app| {
        app.diffusion().paint_tools().history() == (2, 0)
    });
    wait_until(harness, "heat is removed", |app| {
        value(app, 24, 32) < f32::from_bits(painted[24 * COLS + 32])
    });
    let cooled = field_bits(harness.state());
    for (i, (&now, &was)) in cooled.iter().zip(painted).enumerate() {
        let (now, was) = (f32::from_bits(now), f32::from_bits(was));
        assert!(
            now <= was && (now >= 0.0 || now == was),
            "cell {i}: {was} -> {now}"
        );
    }
}

#[test]
fn painting_while_running_keeps_running_and_steps_on() {
    let dir = tempfile::tempdir().unwrap();
    let mut harness = harness(dir.path());
    harness.get_by_label("Play").click();
    wait_until(&mut harness, "playing", |app| app.step_count() > 4);
    harness.get_by_label("Paint").click();
    harness.step();
    let rect = picture_rect(&harness);
    drag(
        &mut harness,
        cell_pos(rect, 10, 10),
        cell_pos(rect, 40, 50),
        PointerButton::Primary,
    );
    wait_until(&mut harness, "the stroke is kept", |app| {
        app.diffusion().paint_tools().history() == (1, 0)
    });
    let step = harness.state().step_count();
    wait_until(&mut harness, "it goes on stepping", |app| {
        app.is_playing() && app.step_count() > step + 10
    });
}

#[test]
fn probes_are_placed_sampled_removed_and_exported() {
    let dir = tempfile::tempdir().unwrap();
    let mut harness = harness(dir.path());
    harness.key_press(Key::P);
    harness.step();
    assert_eq!(harness.state().diffusion().paint_tools().tool, Tool::Probe);
    let rect = picture_rect(&harness);
    place_three_probes(&mut harness, rect);
    probes_sample_their_cells_from_the_start(&mut harness);
    // Right-click removes P2; dragging P3 moves it.
    click_at(
        &mut harness,
        cell_pos(rect, 20, 30),
        PointerButton::Secondary,
    );
    drag(
        &mut harness,
        cell_pos(rect, 40, 60),
        cell_pos(rect, 30, 10),
        PointerButton::Primary,
    );
    let now: Vec<(String, usize, usize)> = probes(harness.state())
        .iter()
        .map(|p| (p.name(), p.row, p.col))
        .collect();
    assert_eq!(now, [("P1".into(), 5, 5), ("P3".into(), 30, 10)]);
    wait_until(&mut harness, "the moved probe is sampled", |app| {
        probes(app).iter().all(|p| p.latest().is_some())
    });
    the_probes_csv_holds_every_sample(&mut harness, dir.path());
    eight_probes_at_most_then_a_notice(&mut harness);
}

/// The probes placed, in order.
fn probes(app: &HeatlabApp) -> Vec<Probe> {
    app.diffusion().paint_tools().probes.all().to_vec()
}

/// Clicks three cells with the probe tool: three probes there, named P1 to P3.
fn place_three_probes(harness: &mut Harness<'static, HeatlabApp>, rect: Rect) {
    let cells = [(5, 5), (20, 30), (40, 60)];
    for (row, col) in cells {
        click_at(harness, cell_pos(rect, row, col), PointerButton::Primary);
    }
    let placed: Vec<(usize, usize)> = probes(harness.state())
        .iter()
        .map(|p| (p.row, p.col))
        .collect();
    assert_eq!(placed, cells);
    let names: Vec<String> = probes(harness.state()).iter().map(|p| p.name()).collect();
    assert_eq!(names, ["P1", "P2", "P3"]);
}

/// The probes' plot is shown; after 100 steps each probe's last sample is its cell's value at
/// step 100, and its series runs from step 0 upwards.
#[expect(
    clippy::unwrap_used,
    reason = "a test helper: its failure is the test's failure"
)]
fn probes_sample_their_cells_from_the_start(harness: &mut Harness<'static, HeatlabApp>) {
    harness.get_by_label("probe values over time");
    wait_until(harness, "each probe has a sample", |app| {
        probes(app).iter().all(|p| p.latest().is_some())
    });
    harness.get_by_label("Step 100").click();
    wait_until(harness, "100 steps", |app| app.step_count() == 100);
    wait_until(harness, "the probes are sampled at step 100", |app| {
        probes(app)
            .iter()
            .all(|p| p.latest().is_some_and(|(step, _)| step == 100))
    });
    for probe in probes(harness.state()) {
        let (_, sampled) = probe.latest().unwrap();
        assert_eq!(
            sampled.to_bits(),
            value(harness.state(), probe.row, probe.col).to_bits(),
            "{} reads its cell",
            probe.name()
        );
        let steps: Vec<u64> = probe.series().map(|(s, _)| *s).collect();
        assert_eq!(steps.first(), Some(&0), "{steps:?}: sampled from the start");
        assert!(steps.windows(2).all(|w| w[0] < w[1]), "{steps:?}");
    }
}

/// Export probes CSV writes every sample of P1 and P3 (P2 removed) into `dir`, the last of P1
/// at its cell and step 100 with its value to the bit.
#[expect(
    clippy::unwrap_used,
    reason = "a test helper: its failure is the test's failure"
)]
fn the_probes_csv_holds_every_sample(harness: &mut Harness<'static, HeatlabApp>, dir: &Path) {
    harness.get_by_label("Export probes CSV").click();
    wait_until(harness, "the CSV is written", |app| {
        app.last_exported()
            .iter()
            .any(|p| p.to_string_lossy().ends_with("probes_step000100.csv"))
    });
    let path = dir.join("probes_step000100.csv");
    let text = std::fs::read_to_string(&path).unwrap();
    let mut lines = text.lines();
    assert_eq!(lines.next(), Some("probe,row,col,step,value"));
    let rows: Vec<Vec<String>> = lines
        .map(|l| l.split(',').map(str::to_string).collect())
        .collect();
    let p1 = &probes(harness.state())[0];
    let p1_rows: Vec<&Vec<String>> = rows.iter().filter(|r| r[0] == "P1").collect();
    assert_eq!(p1_rows.len(), p1.series().count());
    let last = p1_rows.last().unwrap();
    assert_eq!(
        (last[1].as_str(), last[2].as_str(), last[3].as_str()),
        ("5", "5", "100")
    );
    let written: f32 = last[4].parse().unwrap();
    assert_eq!(written.to_bits(), p1.latest().unwrap().1.to_bits());
    assert!(rows.iter().all(|r| r[0] == "P1" || r[0] == "P3"));
}

/// Eight probes at most, then a notice. (The export's notice moved the pictures down.)
fn eight_probes_at_most_then_a_notice(harness: &mut Harness<'static, HeatlabApp>) {
    let rect = picture_rect(harness);
    for i in 0..7 {
        click_at(
            harness,
            cell_pos(rect, 2 + 5 * i, 40),
            PointerButton::Primary,
        );
    }
    assert_eq!(probes(harness.state()).len(), 8);
    assert!(harness
        .state()
        .notices()
        .iter()
        .any(|n| n.text.contains("8 probes are placed already")));
}

#[test]
fn the_line_tool_plots_the_values_along_the_segment() {
    let dir = tempfile::tempdir().unwrap();
    let mut harness = harness(dir.path());
    harness.key_press(Key::L);
    harness.step();
    assert_eq!(harness.state().diffusion().paint_tools().tool, Tool::Line);
    let rect = picture_rect(&harness);
    drag(
        &mut harness,
        cell_pos(rect, 10, 4),
        cell_pos(rect, 10, 59),
        PointerButton::Primary,
    );
    let profile = |app: &HeatlabApp| app.diffusion().paint_tools().profile.clone();
    let ((r0, c0), (r1, c1)) = profile(harness.state()).segment().unwrap();
    assert!((r0 - 10.0).abs() < 0.5 && (r1 - 10.0).abs() < 0.5);
    assert!((c0 - 4.0).abs() < 0.5 && (c1 - 59.0).abs() < 0.5);
    wait_until(&mut harness, "the profile has values", |app| {
        profile(app).values().is_some()
    });
    let check = |harness: &Harness<'_, HeatlabApp>| {
        let line = profile(harness.state());
        let (_, values) = line.values().unwrap();
        assert_eq!(values.len(), 56);
        for (i, &v) in values.iter().enumerate() {
            assert_eq!(
                v.to_bits(),
                value(harness.state(), 10, 4 + i).to_bits(),
                "col {}",
                4 + i
            );
        }
    };
    check(&harness);
    // Live: stepping changes the profile with the field.
    harness.get_by_label("Step 100").click();
    wait_until(&mut harness, "100 steps", |app| app.step_count() == 100);
    wait_until(&mut harness, "the profile follows", |app| {
        profile(app).values().is_some_and(|(step, _)| step == 100)
    });
    check(&harness);
    harness.get_by_label("Clear line").click();
    harness.step();
    assert!(!profile(harness.state()).is_set());
}

#[test]
fn painting_under_the_live_agreement_check_never_differs() {
    let dir = tempfile::tempdir().unwrap();
    let mut harness = harness(dir.path());
    harness.get_by_label("check against the CPU").click();
    harness.get_by_label("Play").click();
    harness.key_press(Key::B);
    harness.step();
    let checks = |app: &HeatlabApp| {
        app.diffusion()
            .agreement()
            .latest()
            .map_or((0, 0), |r| (r.checks, r.mismatches))
    };
    let start = Instant::now();
    let mut strokes = 0;
    // Paint, undo and redo while the checks go on, until several checks came after painting.
    while checks(harness.state()).0 < 4 || strokes < 6 {
        let rect = picture_rect(&harness);
        let row = 4 + (strokes * 7) % 40;
        drag(
            &mut harness,
            cell_pos(rect, row, 5),
            cell_pos(rect, 47 - row, 60),
            if strokes % 3 == 2 {
                PointerButton::Secondary
            } else {
                PointerButton::Primary
            },
        );
        strokes += 1;
        if strokes % 4 == 0 {
            harness.key_press_modifiers(Modifiers::COMMAND, Key::Z);
            harness.step();
        }
        if strokes % 5 == 0 {
            harness.key_press_modifiers(Modifiers::COMMAND | Modifiers::SHIFT, Key::Z);
            harness.step();
        }
        assert_eq!(
            checks(harness.state()).1,
            0,
            "a paint made the check differ"
        );
        assert!(
            start.elapsed() < DEADLINE,
            "too few checks: {:?}; notices: {:?}",
            checks(harness.state()),
            harness.state().notices()
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    assert!(harness.state().diffusion().paint_tools().history().0 >= 4);
    assert!(harness
        .query_by_label_contains("differs from the CPU")
        .is_none());
}
