//! The Problem section and the Material tool, driven with real pointer events: choosing kinds
//! in the palette, painting them with shapes and the brush (paused and while running), and
//! importing and exporting the material map. The field is small (24x32) so that the view
//! shows every cell and the problem's map can be checked cell by cell.
#![expect(
    clippy::unwrap_used,
    reason = "test helpers: a failure in one is the test's failure"
)]

use std::path::{Path, PathBuf};
use std::sync::Arc;

use eframe::egui::{accesskit::Role, Key, PointerButton, Pos2, Rect, Vec2};
use egui_kittest::kittest::Queryable;
use egui_kittest::Harness;
use heatlab::ui::diffusion::brush::Tool;
use heatlab::ui::diffusion::problem::MaterialShape;
use heatlab::ui::{HeatlabApp, Level, Settings};
use heatlab_engine::compute::BackendChoice;
use heatlab_engine::export::png::write_png_rgb;
use heatlab_engine::grid::GridSize;
use heatlab_engine::import::material_map::{legend_path, library_colour, Rgb};
use heatlab_engine::problem::{HeatProblem, Shape};

use crate::common::app::{app_harness, wait_until};
use crate::common::pointer;

const ROWS: usize = 24;
const COLS: usize = 32;

fn size() -> GridSize {
    GridSize::new(ROWS, COLS).unwrap()
}

fn harness(export_dir: &Path) -> Harness<'static, HeatlabApp> {
    let mut field = Settings::default().field;
    field.size = size();
    let settings = Settings {
        backend: BackendChoice::Cpu,
        field,
        steps_per_frame: 2,
        auto_steps: false,
        export_dir: export_dir.to_path_buf(),
        ..Settings::default()
    };
    app_harness(settings, Vec2::new(1400.0, 1000.0))
}

/// Clicks the first button labelled `label` (a palette chip, a shape), scrolled into view.
fn choose(harness: &mut Harness<'_, HeatlabApp>, label: &str) {
    harness
        .get_all_by_role_and_label(Role::Button, label)
        .next()
        .unwrap_or_else(|| panic!("no button {label}"))
        .scroll_to_me();
    // The panel scrolls over a few frames (the problem's sections come last in it).
    harness.run_steps(10);
    harness
        .get_all_by_role_and_label(Role::Button, label)
        .next()
        .unwrap()
        .click();
    harness.step();
    harness.step();
}

/// The screen position of a cell's centre on the field picture (zoom 1).
fn cell_pos(rect: Rect, row: usize, col: usize) -> Pos2 {
    pointer::cell_centre(rect, (ROWS, COLS), row, col)
}

/// Presses at the centre of cell `from`, moves to cell `to` over 8 frames, releases.
fn drag(harness: &mut Harness<'_, HeatlabApp>, from: (usize, usize), to: (usize, usize)) {
    let rect = pointer::picture_rect(harness);
    let (from, to) = (cell_pos(rect, from.0, from.1), cell_pos(rect, to.0, to.1));
    pointer::drag(harness, from, to, PointerButton::Primary);
}

fn click_cell(harness: &mut Harness<'_, HeatlabApp>, row: usize, col: usize) {
    let pos = cell_pos(pointer::picture_rect(harness), row, col);
    pointer::click_at(harness, pos, PointerButton::Primary);
}

fn problem(app: &HeatlabApp) -> Option<Arc<HeatProblem>> {
    app.diffusion().state().problem.clone()
}

/// Waits until the reported problem satisfies `done`; returns it.
fn wait_problem(
    harness: &mut Harness<'_, HeatlabApp>,
    what: &str,
    done: impl Fn(&HeatProblem) -> bool,
) -> Arc<HeatProblem> {
    wait_until(harness, what, |app| problem(app).is_some_and(|p| done(&p)));
    problem(harness.state()).unwrap()
}

fn kind_named(problem: &HeatProblem, name: &str) -> Option<u8> {
    problem
        .kinds
        .iter()
        .position(|k| k.name == name)
        .map(|i| i as u8)
}

/// Checks that `after` has kind `name` exactly on `cells` and `before`'s kinds elsewhere.
fn assert_painted(before: &[u8], after: &HeatProblem, cells: &[u32], name: &str) {
    let kind = kind_named(after, name).unwrap();
    for (i, (&was, &now)) in before.iter().zip(&after.map).enumerate() {
        let expected = if cells.contains(&(i as u32)) {
            kind
        } else {
            was
        };
        assert_eq!(now, expected, "{name}: cell ({}, {})", i / COLS, i % COLS);
    }
}

/// The cells of the glass rectangle the first step paints.
fn glass_rectangle() -> Vec<u32> {
    (2..=6)
        .flat_map(|r| (3..=9).map(move |c| (r * COLS + c) as u32))
        .collect()
}

/// A chip chooses the kind and takes up the Material tool; a drag paints a rectangle.
fn rectangle_of_glass(harness: &mut Harness<'_, HeatlabApp>) -> Arc<HeatProblem> {
    choose(harness, "glass");
    let tools = harness.state().diffusion().paint_tools();
    assert_eq!(tools.tool, Tool::Material);
    assert_eq!(tools.materials.kind.as_ref().unwrap().name, "glass");
    choose(harness, "Rectangle");
    drag(harness, (2, 3), (6, 9));
    let p = wait_problem(harness, "the rectangle is painted", |p| {
        kind_named(p, "glass").is_some()
    });
    assert_eq!(
        p.kinds[0].material.name, "aluminium",
        "the plate's material"
    );
    assert_painted(&vec![0u8; ROWS * COLS], &p, &glass_rectangle(), "glass");
    p
}

/// The ellipse inscribed in the cells from (9, 2) to (17, 14), dragged from corner to corner.
fn ellipse_of_copper(
    harness: &mut Harness<'_, HeatlabApp>,
    before: &HeatProblem,
) -> Arc<HeatProblem> {
    choose(harness, "copper");
    choose(harness, "Ellipse");
    drag(harness, (17, 14), (9, 2));
    let p = wait_problem(harness, "the ellipse is painted", |p| {
        kind_named(p, "copper").is_some()
    });
    let ellipse = Shape::Ellipse {
        from: (9.0, 2.0),
        to: (18.0, 15.0),
    }
    .cells(size(), &before.map);
    assert_painted(&before.map, &p, &ellipse, "copper");
    let copper = kind_named(&p, "copper").unwrap();
    assert_eq!(p.map[13 * COLS + 8], copper, "the centre");
    assert_ne!(p.map[9 * COLS + 2], copper, "a corner of the box");
    p
}

/// A wall 5 cells wide, typed, along row 20.
fn wall_of_iron(harness: &mut Harness<'_, HeatlabApp>, before: &HeatProblem) -> Arc<HeatProblem> {
    choose(harness, "iron");
    choose(harness, "Wall");
    harness
        .get_by_role_and_label(Role::SpinButton, "wall width (cells)")
        .set_value_accesskit(5.0);
    harness.step();
    drag(harness, (20, 2), (20, 28));
    let p = wait_problem(harness, "the wall is painted", |p| {
        kind_named(p, "iron").is_some()
    });
    let iron = kind_named(&p, "iron").unwrap();
    for row in 18..=22 {
        assert_eq!(p.map[row * COLS + 15], iron, "row {row} is in the wall");
    }
    assert_ne!(p.map[17 * COLS + 15], iron);
    assert_ne!(p.map[23 * COLS + 15], iron);
    let wall = Shape::Wall {
        from: (20.5, 2.5),
        to: (20.5, 28.5),
        width: 5.0,
    }
    .cells(size(), &before.map);
    assert_painted(&before.map, &p, &wall, "iron");
    p
}

/// Flood fill: a click in the glass rectangle turns all of it, and only it, to water.
fn fill_with_water(
    harness: &mut Harness<'_, HeatlabApp>,
    before: &HeatProblem,
) -> Arc<HeatProblem> {
    choose(harness, "water");
    choose(harness, "Fill");
    click_cell(harness, 4, 5);
    let p = wait_problem(harness, "the fill is painted", |p| {
        kind_named(p, "water").is_some()
    });
    assert_painted(&before.map, &p, &glass_rectangle(), "water");
    p
}

/// The brush: discs of its radius along the drag, nothing beyond it.
fn brush_of_brass(harness: &mut Harness<'_, HeatlabApp>, before: &HeatProblem) {
    choose(harness, "brass");
    choose(harness, "Brush");
    assert_eq!(
        harness.state().diffusion().paint_tools().materials.shape,
        MaterialShape::Brush
    );
    harness
        .state_mut()
        .diffusion_mut()
        .paint_tools_mut()
        .brush
        .radius = 1.5;
    drag(harness, (7, 4), (7, 26));
    let p = wait_problem(harness, "the brush stroke is painted", |p| {
        kind_named(p, "brass").is_some_and(|k| p.map[7 * COLS + 25] == k)
    });
    let brass = kind_named(&p, "brass").unwrap();
    for col in 4..=25 {
        assert_eq!(p.map[7 * COLS + col], brass, "column {col} of the stroke");
    }
    for (i, (&was, &now)) in before.map.iter().zip(&p.map).enumerate() {
        let row = i / COLS;
        if !(6..=8).contains(&row) {
            assert_eq!(was, now, "cell ({row}, {}) is beyond the brush", i % COLS);
        }
    }
}

#[test]
fn the_palette_and_every_shape_paint_the_map_cell_for_cell() {
    let dir = tempfile::tempdir().unwrap();
    let mut harness = harness(dir.path());
    let p = rectangle_of_glass(&mut harness);
    let p = ellipse_of_copper(&mut harness, &p);
    let p = wall_of_iron(&mut harness, &p);
    let p = fill_with_water(&mut harness, &p);
    brush_of_brass(&mut harness, &p);
}

#[test]
fn painting_while_running_changes_the_map_and_the_steps_go_on() {
    let dir = tempfile::tempdir().unwrap();
    let mut harness = harness(dir.path());
    harness.key_press(Key::Space);
    wait_until(&mut harness, "it runs", |app| {
        app.diffusion().state().playing && app.step_count() > 0
    });
    choose(&mut harness, "brick");
    choose(&mut harness, "Rectangle");
    let steps_before = harness.state().step_count();
    drag(&mut harness, (10, 10), (14, 20));
    let p = wait_problem(&mut harness, "the rectangle is painted", |p| {
        kind_named(p, "brick").is_some()
    });
    let cells: Vec<u32> = (10..=14)
        .flat_map(|r| (10..=20).map(move |c| (r * COLS + c) as u32))
        .collect();
    assert_painted(&vec![0; ROWS * COLS], &p, &cells, "brick");
    wait_until(&mut harness, "the steps go on", |app| {
        app.step_count() > steps_before + 10 && app.diffusion().state().playing
    });
    harness.key_press(Key::Space);
    harness.step();
}

fn field_values(app: &HeatlabApp) -> Vec<u32> {
    let mut bits = Vec::new();
    for row in 0..ROWS {
        for col in 0..COLS {
            let (value, factor) = app.diffusion().field_value_at(row, col).unwrap();
            assert_eq!(factor, 1, "the view is reduced");
            bits.push(value.to_bits());
        }
    }
    bits
}

fn has_notice(app: &HeatlabApp, level: Level, parts: &[&str]) -> bool {
    app.diffusion()
        .notices()
        .as_slice()
        .iter()
        .any(|n| n.level == level && parts.iter().all(|p| n.text.contains(p)))
}

fn write_picture(path: &Path, width: usize, height: usize, pixel: impl Fn(usize, usize) -> Rgb) {
    let mut rgb = Vec::new();
    for row in 0..height {
        for col in 0..width {
            rgb.extend_from_slice(&pixel(row, col));
        }
    }
    write_png_rgb(path, width, height, &rgb).unwrap();
}

/// Imports `path` as a person choosing it in the dialog would.
fn import(harness: &mut Harness<'_, HeatlabApp>, path: &Path) {
    harness
        .state_mut()
        .diffusion_mut()
        .paint_tools_mut()
        .materials
        .import_map(path);
    harness.step();
    harness.step();
}

/// Refused maps leave a notice naming why, and the problem and the field as they were.
fn assert_refused(harness: &mut Harness<'_, HeatlabApp>, path: &Path, why: &[&str]) {
    let problem_before = problem(harness.state()).unwrap();
    let field_before = field_values(harness.state());
    import(harness, path);
    wait_until(harness, "the refusal is noticed", |app| {
        has_notice(app, Level::Error, why)
    });
    for _ in 0..5 {
        harness.step();
    }
    assert_eq!(*problem(harness.state()).unwrap(), *problem_before);
    assert_eq!(field_values(harness.state()), field_before);
}

/// Paints a copper rectangle and exports the map; returns the problem and the exported file.
fn export(harness: &mut Harness<'_, HeatlabApp>, dir: &Path) -> (Arc<HeatProblem>, PathBuf) {
    choose(harness, "copper");
    choose(harness, "Rectangle");
    drag(harness, (3, 4), (8, 12));
    let painted = wait_problem(harness, "copper is painted", |p| {
        kind_named(p, "copper").is_some()
    });
    let exported = dir.join("map.png");
    harness
        .state_mut()
        .diffusion_mut()
        .paint_tools_mut()
        .materials
        .export_map(&exported);
    harness.step();
    assert!(has_notice(harness.state(), Level::Info, &["map.png"]));
    assert!(legend_path(&exported).is_file());
    let pixels = image::open(&exported).unwrap().to_rgb8();
    assert_eq!(
        (pixels.width(), pixels.height()),
        (COLS as u32, ROWS as u32)
    );
    assert_eq!(pixels.get_pixel(5, 5).0, library_colour("copper").unwrap());
    assert_eq!(
        pixels.get_pixel(20, 20).0,
        library_colour("aluminium").unwrap()
    );
    (painted, exported)
}

/// The exported map edited in a paint program (no legend beside it): a block of glass in the
/// palette's colour; then the exported map, with its legend, back.
fn edit_and_import_back(
    harness: &mut Harness<'_, HeatlabApp>,
    painted: &HeatProblem,
    exported: &Path,
) {
    let pixels = image::open(exported).unwrap().to_rgb8();
    let edited = exported.with_file_name("edited.png");
    let glass = library_colour("glass").unwrap();
    let in_block = |r: usize, c: usize| (12..16).contains(&r) && (18..30).contains(&c);
    write_picture(&edited, COLS, ROWS, |r, c| {
        if in_block(r, c) {
            glass
        } else {
            pixels.get_pixel(c as u32, r as u32).0
        }
    });
    import(harness, &edited);
    let p = wait_problem(harness, "the edited map is stepped", |p| {
        kind_named(p, "glass").is_some()
    });
    let block: Vec<u32> = (0..ROWS * COLS)
        .filter(|&i| in_block(i / COLS, i % COLS))
        .map(|i| i as u32)
        .collect();
    assert_painted(&painted.map, &p, &block, "glass");
    assert!(has_notice(
        harness.state(),
        Level::Info,
        &["edited.png", "palette"]
    ));
    import(harness, exported);
    let back = wait_problem(harness, "the exported map is back", |p| {
        p.map == painted.map
    });
    assert_eq!(back.kinds[..2], painted.kinds[..]);
}

/// Twice the field's size: refused, then scaled once asked (the left half copper, the right
/// glass).
fn scaled_import(harness: &mut Harness<'_, HeatlabApp>, dir: &Path) {
    let large = dir.join("large.png");
    let (copper, glass) = (
        library_colour("copper").unwrap(),
        library_colour("glass").unwrap(),
    );
    write_picture(&large, 2 * COLS, 2 * ROWS, |_, c| {
        if c < COLS {
            copper
        } else {
            glass
        }
    });
    assert_refused(harness, &large, &["64×48 pixels"]);
    harness.get_by_label("scale to the field").scroll_to_me();
    harness.step();
    harness.get_by_label("scale to the field").click();
    harness.step();
    import(harness, &large);
    let p = wait_problem(harness, "the scaled map is stepped", |p| {
        kind_named(p, "copper")
            .is_some_and(|k| p.map.iter().filter(|&&m| m == k).count() == ROWS * COLS / 2)
    });
    let (copper, glass) = (
        kind_named(&p, "copper").unwrap(),
        kind_named(&p, "glass").unwrap(),
    );
    for (i, &kind) in p.map.iter().enumerate() {
        let expected = if i % COLS < COLS / 2 { copper } else { glass };
        assert_eq!(kind, expected, "cell {i}");
    }
}

#[test]
fn maps_export_and_import_with_notices_for_bad_pictures() {
    let dir = tempfile::tempdir().unwrap();
    let mut harness = harness(dir.path());
    let (painted, exported) = export(&mut harness, dir.path());
    edit_and_import_back(&mut harness, &painted, &exported);

    let glass = library_colour("glass").unwrap();
    let small = dir.path().join("small.png");
    write_picture(&small, 10, 10, |_, _| glass);
    assert_refused(
        &mut harness,
        &small,
        &["10×10 pixels", "32×24 cells", "scale to the field"],
    );
    let odd = dir.path().join("odd.png");
    write_picture(&odd, COLS, ROWS, |r, c| {
        if (r, c) == (5, 7) {
            [0, 255, 0]
        } else {
            glass
        }
    });
    assert_refused(&mut harness, &odd, &["#00ff00", "row 5, column 7"]);
    scaled_import(&mut harness, dir.path());
}

#[test]
fn a_part_is_moved_by_a_drag_deleted_by_a_right_click_and_undone() {
    let dir = tempfile::tempdir().unwrap();
    let mut harness = harness(dir.path());
    let painted = rectangle_of_glass(&mut harness);
    let glass = kind_named(&painted, "glass").unwrap();
    choose(&mut harness, "Move part");
    // Dragged from one of its cells five rows down and ten columns right.
    drag(&mut harness, (4, 5), (9, 15));
    let moved = wait_problem(&mut harness, "the glass moved", |p| {
        p.map[2 * COLS + 3] == 0 && p.map[7 * COLS + 13] == glass
    });
    let shifted: Vec<u32> = glass_rectangle()
        .iter()
        .map(|&c| c + (5 * COLS + 10) as u32)
        .collect();
    assert_painted(&vec![0u8; ROWS * COLS], &moved, &shifted, "glass");
    // A right-click on it gives its cells back to the base.
    let pos = cell_pos(pointer::picture_rect(&harness), 8, 14);
    pointer::click_at(&mut harness, pos, PointerButton::Secondary);
    wait_problem(&mut harness, "the glass deleted", |p| {
        p.map.iter().all(|&k| k == 0)
    });
    // Each was one step of undo.
    harness.key_press_modifiers(eframe::egui::Modifiers::COMMAND, eframe::egui::Key::Z);
    wait_problem(&mut harness, "the deletion undone", |p| p.map == moved.map);
    harness.key_press_modifiers(eframe::egui::Modifiers::COMMAND, eframe::egui::Key::Z);
    wait_problem(&mut harness, "the move undone", |p| p.map == painted.map);
}

#[test]
fn a_material_of_ones_own_is_made_and_painted() {
    let dir = tempfile::tempdir().unwrap();
    let mut harness = harness(dir.path());
    harness.get_by_label("your own material").scroll_to_me();
    harness.run_steps(10);
    harness.get_by_label("your own material").click();
    harness.run_steps(3);
    for (label, text) in [
        ("name", "Cork"),
        ("k (W/(m·K))", "0.04"),
        ("ρ (kg/m³)", "120"),
        ("c_p (J/(kg·K))", "2000"),
    ] {
        pointer::type_into(&mut harness, label, text);
    }
    choose(&mut harness, "Add material");
    let tools = harness.state().diffusion().paint_tools();
    assert_eq!(tools.materials.kind.as_ref().unwrap().name, "cork");
    choose(&mut harness, "Rectangle");
    drag(&mut harness, (2, 3), (6, 9));
    let p = wait_problem(&mut harness, "the cork is painted", |p| {
        kind_named(p, "cork").is_some()
    });
    let cork = &p.kinds[usize::from(kind_named(&p, "cork").unwrap())].material;
    assert_eq!(
        (cork.conductivity, cork.density, cork.specific_heat),
        (0.04, 120.0, 2000.0)
    );
    assert_eq!(cork.colour, Some([214, 140, 60]), "the editor's colour");
    assert_painted(&vec![0u8; ROWS * COLS], &p, &glass_rectangle(), "cork");
}
