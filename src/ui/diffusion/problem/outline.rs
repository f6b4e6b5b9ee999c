//! Outlines of the material regions: the edges between neighbouring cells of different kinds,
//! as line segments over the pictures. Only the visible part of the map (with a margin, so
//! that panning a little needs nothing new) is traced, sampling every `step` cells when a cell
//! is smaller than a point on screen, and runs along one line are merged into one segment; the
//! segments are kept until the problem or the view moves on, and drawing them is only mapping
//! their ends onto the screen.

use std::ops::Range;
use std::sync::Arc;

use eframe::egui::{self, Color32, Rect, Stroke, Vec2};

use heatlab_engine::grid::GridSize;
use heatlab_engine::problem::{HeatProblem, Shape};

use super::super::view::{from_field, Viewport};

/// Segments drawn at most; past this the sampling gets coarser.
const MAX_SEGMENTS: usize = 40_000;

/// An edge between cells, in cell-edge coordinates: (row, col), cell (r, c) spanning r..r+1
/// and c..c+1.
pub type Segment = [(f32, f32); 2];

/// A block of cells: rows and columns.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Window {
    /// Rows, top to bottom.
    pub rows: Range<usize>,
    /// Columns, left to right.
    pub cols: Range<usize>,
}

impl Window {
    fn contains(&self, other: &Self) -> bool {
        self.rows.start <= other.rows.start
            && other.rows.end <= self.rows.end
            && self.cols.start <= other.cols.start
            && other.cols.end <= self.cols.end
    }

    /// This window widened by half its size on every side, aligned to `step`, within `size`.
    fn widened(&self, size: GridSize, step: usize) -> Self {
        let widen = |range: &Range<usize>, count: usize| {
            let margin = range.len() / 2;
            let start = range.start.saturating_sub(margin) / step * step;
            start..(range.end + margin).min(count)
        };
        Self {
            rows: widen(&self.rows, size.rows),
            cols: widen(&self.cols, size.cols),
        }
    }
}

/// The edges between samples of different kinds in `window` of `map` (a grid of `size`),
/// sampling the cells at multiples of `step` from the window's start (the start must be one).
pub fn boundaries(map: &[u8], size: GridSize, window: &Window, step: usize) -> Vec<Segment> {
    let step = step.max(1);
    let rows: Vec<usize> = window.rows.clone().step_by(step).collect();
    let cols: Vec<usize> = window.cols.clone().step_by(step).collect();
    let at = |r: usize, c: usize| map.get(r * size.cols + c).copied();
    let mut segments = Vec::new();
    // Vertical edges: between a sample and the one to its right, merged down the column.
    for pair in cols.windows(2) {
        let x = pair[1] as f32;
        let mut run: Option<usize> = None;
        for (i, &r) in rows.iter().enumerate() {
            let differs = at(r, pair[0]) != at(r, pair[1]);
            match (differs, run) {
                (true, None) => run = Some(i),
                (false, Some(start)) => {
                    segments.push([(rows[start] as f32, x), (r as f32, x)]);
                    run = None;
                }
                _ => {}
            }
        }
        if let Some(start) = run {
            segments.push([(rows[start] as f32, x), (window.rows.end as f32, x)]);
        }
    }
    // Horizontal edges: between a sample and the one below it, merged along the row.
    for pair in rows.windows(2) {
        let y = pair[1] as f32;
        let mut run: Option<usize> = None;
        for (j, &c) in cols.iter().enumerate() {
            let differs = at(pair[0], c) != at(pair[1], c);
            match (differs, run) {
                (true, None) => run = Some(j),
                (false, Some(start)) => {
                    segments.push([(y, cols[start] as f32), (y, c as f32)]);
                    run = None;
                }
                _ => {}
            }
        }
        if let Some(start) = run {
            segments.push([(y, cols[start] as f32), (y, window.cols.end as f32)]);
        }
    }
    segments
}

/// The cells of the field `viewport` shows.
pub fn visible_window(viewport: &Viewport, size: GridSize) -> Window {
    let uv = viewport.uv_rect();
    let span = |low: f32, high: f32, count: usize| {
        let start = (low * count as f32).floor().clamp(0.0, count as f32) as usize;
        let end = (high * count as f32).ceil().clamp(0.0, count as f32) as usize;
        start..end.max(start)
    };
    Window {
        rows: span(uv.top(), uv.bottom(), size.rows),
        cols: span(uv.left(), uv.right(), size.cols),
    }
}

/// What the segments were traced from.
struct Traced {
    problem: Arc<HeatProblem>,
    /// The flood fill whose region was traced, or `None` for the kinds.
    fill: Option<(usize, usize)>,
    window: Window,
    step: usize,
}

/// The latest tracing and its segments.
#[derive(Default)]
pub struct OutlineCache {
    traced: Option<Traced>,
    segments: Vec<Segment>,
}

impl OutlineCache {
    /// The outlines of `problem`'s kinds (or, with `fill`, of the region a flood fill from
    /// that cell would paint) over the cells `viewport` shows on a picture `width` points wide;
    /// traced again only when one of them changed.
    pub fn segments(
        &mut self,
        problem: &Arc<HeatProblem>,
        fill: Option<(usize, usize)>,
        viewport: &Viewport,
        width: f32,
    ) -> &[Segment] {
        let size = problem.size;
        let visible = visible_window(viewport, size);
        let cells_per_point = visible.cols.len() as f32 / width.max(1.0);
        let step = (cells_per_point.floor() as usize).max(1);
        let current = self.traced.as_ref().is_some_and(|t| {
            Arc::ptr_eq(&t.problem, problem)
                && t.fill == fill
                && t.step == step
                && t.window.contains(&visible)
        });
        if !current {
            let window = visible.widened(size, step);
            let mask;
            let map = match fill {
                Some(seed) => {
                    mask = fill_mask(problem, seed);
                    &mask
                }
                None => &problem.map,
            };
            let mut step = step;
            self.segments = boundaries(map, size, &window, step);
            while self.segments.len() > MAX_SEGMENTS {
                step *= 2;
                let coarse = Window {
                    rows: window.rows.start / step * step..window.rows.end,
                    cols: window.cols.start / step * step..window.cols.end,
                };
                self.segments = boundaries(map, size, &coarse, step);
            }
            self.traced = Some(Traced {
                problem: Arc::clone(problem),
                fill,
                window,
                step: (cells_per_point.floor() as usize).max(1),
            });
        }
        &self.segments
    }
}

/// 1 for the cells a flood fill from `seed` paints, 0 elsewhere.
fn fill_mask(problem: &HeatProblem, seed: (usize, usize)) -> Vec<u8> {
    let mut mask = vec![0u8; problem.map.len()];
    for cell in (Shape::FloodFill { seed }).cells(problem.size, &problem.map) {
        if let Some(m) = mask.get_mut(cell as usize) {
            *m = 1;
        }
    }
    mask
}

/// Draws `segments` (cell-edge coordinates of a field of `size`) over the picture in `rect`:
/// a light line on a dark one, readable on every colormap.
pub fn draw(
    painter: &egui::Painter,
    rect: Rect,
    viewport: &Viewport,
    size: GridSize,
    segments: &[Segment],
    colour: Color32,
) {
    let screen = |(row, col): (f32, f32)| {
        from_field(
            rect,
            viewport,
            Vec2::new(col / size.cols as f32, row / size.rows as f32),
        )
    };
    let ends: Vec<[egui::Pos2; 2]> = segments
        .iter()
        .map(|[a, b]| [screen(*a), screen(*b)])
        .filter(|[a, b]| rect.expand(2.0).intersects(Rect::from_two_pos(*a, *b)))
        .collect();
    let mut shapes = Vec::with_capacity(ends.len() * 2);
    for stroke in [
        Stroke::new(2.5, Color32::from_black_alpha(200)),
        Stroke::new(1.0, colour),
    ] {
        shapes.extend(ends.iter().map(|&e| egui::Shape::line_segment(e, stroke)));
    }
    painter.extend(shapes);
}

#[cfg(test)]
mod tests {
    use super::*;

    fn whole(size: GridSize) -> Window {
        Window {
            rows: 0..size.rows,
            cols: 0..size.cols,
        }
    }

    #[test]
    fn a_block_is_outlined_by_four_merged_edges() {
        let size = GridSize::new(6, 8).unwrap();
        let mut map = vec![0u8; size.cells()];
        for row in 1..4 {
            for col in 2..7 {
                map[row * 8 + col] = 1;
            }
        }
        let mut segments = boundaries(&map, size, &whole(size), 1);
        segments.sort_by(|a, b| a.partial_cmp(b).unwrap());
        assert_eq!(
            segments,
            vec![
                [(1.0, 2.0), (1.0, 7.0)],
                [(1.0, 2.0), (4.0, 2.0)],
                [(1.0, 7.0), (4.0, 7.0)],
                [(4.0, 2.0), (4.0, 7.0)],
            ]
        );
    }

    #[test]
    fn a_uniform_map_has_no_outlines_and_a_window_sees_only_its_part() {
        let size = GridSize::new(10, 10).unwrap();
        let mut map = vec![3u8; size.cells()];
        assert!(boundaries(&map, size, &whole(size), 1).is_empty());
        // A vertical boundary between columns 4 and 5 everywhere.
        for row in 0..10 {
            for col in 5..10 {
                map[row * 10 + col] = 4;
            }
        }
        let window = Window {
            rows: 2..6,
            cols: 0..8,
        };
        assert_eq!(
            boundaries(&map, size, &window, 1),
            vec![[(2.0, 5.0), (6.0, 5.0)]]
        );
        // Sampled every 2 cells the edge falls between samples 4 and 6.
        assert_eq!(
            boundaries(&map, size, &whole(size), 2),
            vec![[(0.0, 6.0), (10.0, 6.0)]]
        );
    }

    #[test]
    fn the_visible_window_follows_zoom_and_pan() {
        let size = GridSize::new(100, 200).unwrap();
        assert_eq!(visible_window(&Viewport::default(), size), whole(size));
        let viewport = Viewport {
            zoom: 4.0,
            center: Vec2::new(0.25, 0.5),
        };
        assert_eq!(
            visible_window(&viewport, size),
            Window {
                rows: 37..63,
                cols: 25..75
            }
        );
    }
}
