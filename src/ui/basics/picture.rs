//! The launch geometry's picture: the end of the array cell by cell, each coloured by the block
//! that reaches it (shaded by its thread), threads past the end idle (grey) or, without the
//! guard, writing where they should not (red), elements no thread reaches (black), and elements
//! two threads add to (marked 2). It follows the inputs as they are edited: the mapping is the
//! launch's index arithmetic, the same the kernel computes.

use eframe::egui::{self, Color32, RichText, Sense, Stroke, StrokeKind, Vec2};

use heatlab_engine::tutorial::basics::geometry::{Dimensions, GeometryOptions, Owner};
use heatlab_engine::tutorial::basics::BasicsOutcome;

use super::views;

/// Cells across and down at most.
const COLUMNS: u64 = 32;
const ROWS: u64 = 16;
/// Idle threads behind the guard.
const IDLE: Color32 = Color32::from_gray(90);
/// Threads writing out of place (no guard).
const STRAY: Color32 = Color32::from_rgb(220, 60, 50);
/// Elements no thread reaches.
const MISSED: Color32 = Color32::from_gray(15);

/// What one cell of the picture is.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Cell {
    /// An element of the array, reached by this thread, `touches` times in all.
    Element(Owner, u64),
    /// An element no thread reaches.
    Missed,
    /// A thread past the end (its position in the launch).
    PastEnd(Owner),
    /// Neither array nor launch.
    Empty,
}

/// The picture's window on the index space: rows and columns shown (1-D: rows of 32).
struct Window {
    rows: std::ops::Range<u64>,
    cols: std::ops::Range<u64>,
}

/// The extent of array and launch together, in (rows, cols) of the picture.
fn extent(options: &GeometryOptions) -> (u64, u64) {
    let [x, y] = options.launched();
    match options.dimensions {
        Dimensions::One => (options.n.max(x).div_ceil(COLUMNS), COLUMNS),
        Dimensions::Two => {
            let (launched_rows, launched_cols) = if options.x_along_rows { (x, y) } else { (y, x) };
            (
                u64::from(options.rows).max(launched_rows),
                u64::from(options.cols).max(launched_cols),
            )
        }
    }
}

/// The window at the end of array and launch, where the lesson happens.
fn window(options: &GeometryOptions) -> Window {
    let (rows, cols) = extent(options);
    Window {
        rows: rows.saturating_sub(ROWS)..rows,
        cols: cols.saturating_sub(COLUMNS)..cols,
    }
}

/// How many launched threads write element (row, col) of a 2-D array without the guard: the
/// thread at (row - k, col + k * cols) for every k that stays inside the launch.
fn touches_2d(options: &GeometryOptions, row: u64, col: u64) -> u64 {
    let [x, y] = options.launched();
    let (launched_rows, launched_cols) = if options.x_along_rows { (x, y) } else { (y, x) };
    let cols = u64::from(options.cols);
    (0..=row)
        .take_while(|k| col + k * cols < launched_cols)
        .filter(|k| row - k < launched_rows)
        .count() as u64
}

/// What the picture shows at (row, col).
fn cell(options: &GeometryOptions, row: u64, col: u64) -> Cell {
    let (array_row, array_col, inside) = match options.dimensions {
        Dimensions::One => {
            let index = row * COLUMNS + col;
            (0, index, index < options.n)
        }
        Dimensions::Two => (
            row,
            col,
            row < u64::from(options.rows) && col < u64::from(options.cols),
        ),
    };
    match (inside, options.owner(array_row, array_col)) {
        (true, Some(owner)) => {
            let touches = match options.dimensions {
                Dimensions::Two if !options.guarded => touches_2d(options, row, col),
                _ => 1,
            };
            Cell::Element(owner, touches)
        }
        (true, None) => Cell::Missed,
        (false, Some(owner)) => Cell::PastEnd(owner),
        (false, None) => Cell::Empty,
    }
}

/// A colour per block (golden-ratio hues), lighter for later threads of the block.
fn block_color(options: &GeometryOptions, owner: Owner) -> Color32 {
    let block = u64::from(owner.block[1]) * u64::from(options.grid[0]) + u64::from(owner.block[0]);
    let hue = (block as f32 * 0.618_034).fract();
    let threads = (options.block[0] * options.block[1]).max(1) as f32;
    let thread = (owner.thread[1] * options.block[0] + owner.thread[0]) as f32;
    let value = 0.55 + 0.4 * thread / threads;
    egui::ecolor::Hsva::new(hue, 0.65, value, 1.0).into()
}

/// The picture and, when the last run was of these inputs, what it found.
pub(super) fn geometry_ui(
    ui: &mut egui::Ui,
    options: &GeometryOptions,
    outcome: Option<&BasicsOutcome>,
) {
    let launched = options.launched_threads();
    ui.label(format!(
        "{} elements, {} threads launched ({} x {} blocks of {} x {}), {} past the end",
        options.elements(),
        launched,
        options.grid[0],
        options.grid[1],
        options.block[0],
        options.block[1],
        launched.saturating_sub(options.working_threads()),
    ));
    if options.validate().is_ok() {
        picture_ui(ui, options);
        legend_ui(ui, options);
    }
    ui.separator();
    match outcome {
        Some(BasicsOutcome::Geometry(run)) => {
            if &run.options != options {
                ui.label(
                    RichText::new("The inputs changed since this run: press Run to launch them.")
                        .weak(),
                );
            }
            views::geometry_outcome_ui(ui, run);
        }
        _ => {
            ui.label("Not launched yet: press Run.");
        }
    }
}

fn picture_ui(ui: &mut egui::Ui, options: &GeometryOptions) {
    let window = window(options);
    let size = 18.0f32;
    let shape = Vec2::new(
        (window.cols.end - window.cols.start) as f32 * size,
        (window.rows.end - window.rows.start) as f32 * size,
    );
    let caption = match options.dimensions {
        Dimensions::One => format!(
            "the last elements, {} per row: index {} to {}",
            COLUMNS,
            window.rows.start * COLUMNS,
            window.rows.end * COLUMNS - 1
        ),
        Dimensions::Two => format!(
            "rows {} to {}, columns {} to {} (the bottom-right corner)",
            window.rows.start,
            window.rows.end - 1,
            window.cols.start,
            window.cols.end - 1
        ),
    };
    ui.label(RichText::new(caption).weak());
    let (response, painter) = ui.allocate_painter(shape, Sense::hover());
    let origin = response.rect.min;
    let mut hovered = None;
    for row in window.rows.clone() {
        for col in window.cols.clone() {
            let min = origin
                + Vec2::new(
                    (col - window.cols.start) as f32 * size,
                    (row - window.rows.start) as f32 * size,
                );
            let rect = egui::Rect::from_min_size(min, Vec2::splat(size)).shrink(1.0);
            let what = cell(options, row, col);
            let fill = match what {
                Cell::Element(owner, _) => block_color(options, owner),
                Cell::Missed => MISSED,
                Cell::PastEnd(_) if options.guarded => IDLE,
                Cell::PastEnd(_) => STRAY,
                Cell::Empty => Color32::TRANSPARENT,
            };
            painter.rect_filled(rect, 2.0, fill);
            if let Cell::Element(_, touches) = what {
                if touches > 1 {
                    painter.rect_stroke(rect, 2.0, Stroke::new(2.0, STRAY), StrokeKind::Inside);
                    painter.text(
                        rect.center(),
                        egui::Align2::CENTER_CENTER,
                        touches.to_string(),
                        egui::FontId::monospace(11.0),
                        Color32::WHITE,
                    );
                }
            }
            if response.hover_pos().is_some_and(|p| rect.contains(p)) {
                hovered = Some((row, col, what));
            }
        }
    }
    if let Some((row, col, what)) = hovered {
        response.on_hover_text(describe(options, row, col, what));
    }
}

/// The tooltip of a cell.
fn describe(options: &GeometryOptions, row: u64, col: u64, what: Cell) -> String {
    let place = match options.dimensions {
        Dimensions::One => format!("index {}", row * COLUMNS + col),
        Dimensions::Two => format!("element ({row}, {col})"),
    };
    let thread = |owner: Owner| match options.dimensions {
        Dimensions::One => format!("block {}, thread {}", owner.block[0], owner.thread[0]),
        Dimensions::Two => format!(
            "block ({}, {}), thread ({}, {})",
            owner.block[0], owner.block[1], owner.thread[0], owner.thread[1]
        ),
    };
    match what {
        Cell::Element(owner, 1) => format!("{place}: {}", thread(owner)),
        Cell::Element(owner, touches) => format!(
            "{place}: {} and {} more thread(s) past the last column",
            thread(owner),
            touches - 1
        ),
        Cell::Missed => format!("{place}: no thread reaches it (the grid is too small)"),
        Cell::PastEnd(owner) if options.guarded => {
            format!(
                "{place} is past the end: {} idles behind the guard",
                thread(owner)
            )
        }
        Cell::PastEnd(owner) => format!("{place} is past the end: {} writes anyway", thread(owner)),
        Cell::Empty => place,
    }
}

fn legend_ui(ui: &mut egui::Ui, options: &GeometryOptions) {
    ui.horizontal_wrapped(|ui| {
        let swatch = |ui: &mut egui::Ui, color: Color32, text: &str| {
            let (rect, _) = ui.allocate_exact_size(Vec2::splat(12.0), Sense::hover());
            ui.painter().rect_filled(rect, 2.0, color);
            ui.label(text);
        };
        swatch(
            ui,
            block_color(
                options,
                Owner {
                    block: [0, 0],
                    thread: [0, 0],
                },
            ),
            "one colour per block",
        );
        if options.guarded {
            swatch(ui, IDLE, "thread past the end, idle behind the guard");
        } else {
            swatch(ui, STRAY, "thread past the end, writing anyway");
        }
        swatch(ui, MISSED, "element no thread reaches");
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wrapped_touches_match_the_cpu_model() {
        let options = GeometryOptions {
            rows: 10,
            cols: 10,
            block: [4, 4],
            grid: [3, 3],
            guarded: false,
            ..GeometryOptions::notebook_2d()
        };
        let mut buffer = heatlab_engine::tutorial::basics::geometry::initial_buffer(&options);
        heatlab_engine::tutorial::basics::geometry::simulate(&options, &mut buffer);
        for row in 0..10u64 {
            for col in 0..10u64 {
                let model = buffer[(row * 10 + col) as usize] - 1.0;
                assert_eq!(
                    touches_2d(&options, row, col) as f64,
                    model,
                    "({row}, {col})"
                );
            }
        }
    }
}
