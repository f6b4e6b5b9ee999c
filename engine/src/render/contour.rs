//! Isotherms: contour lines of a preview's values by marching squares, restricted to the part of
//! the field on screen, at "nice" levels over the shown range or at levels users type.
//!
//! The values are a preview's block means (one per cell when its factor is 1); each value sits
//! at the centre of its block. Segments come out in cells of the full field: `x` along the
//! columns, `y` down the rows, cell `(row, col)` spanning `[col, col + 1) x [row, row + 1)`.

use std::ops::Range;

use rayon::prelude::*;

use crate::grid::{Grid, GridSize};

/// A piece of a contour line, in cells of the full field (`[x, y]`: column, row).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Segment {
    /// One end.
    pub from: [f32; 2],
    /// The other end.
    pub to: [f32; 2],
    /// The index of its level in the levels asked for.
    pub level: usize,
}

/// The part of a preview's values that is on screen (with one value of margin), in value
/// indices.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Window {
    /// Rows of values.
    pub rows: Range<usize>,
    /// Columns of values.
    pub cols: Range<usize>,
}

impl Window {
    /// Every how many values the isotherms of this window are traced so that at most about
    /// `most` squares lie along each side: 1 when zoomed in, more for a large picture of a
    /// large field (where a square is a pixel or less on screen).
    pub fn stride(&self, most: usize) -> usize {
        self.rows
            .len()
            .max(self.cols.len())
            .div_ceil(most.max(1))
            .max(1)
    }

    /// The whole preview.
    pub fn all(values: &Grid) -> Self {
        Self {
            rows: 0..values.rows(),
            cols: 0..values.cols(),
        }
    }

    /// The values under the visible fractions of the field (`left..right` of the columns,
    /// `top..bottom` of the rows, each in 0..1), one more on each side so that lines reach the
    /// edge of the view.
    pub fn visible(values: &Grid, left: f32, top: f32, right: f32, bottom: f32) -> Self {
        let span = |from: f32, to: f32, n: usize| {
            let start = ((from.clamp(0.0, 1.0) * n as f32).floor() as usize).saturating_sub(1);
            let end = ((to.clamp(0.0, 1.0) * n as f32).ceil() as usize + 1).min(n);
            start..end.max(start)
        };
        Self {
            rows: span(top, bottom, values.rows()),
            cols: span(left, right, values.cols()),
        }
    }
}

/// Where the value of block `index` sits along an axis of `cells` cells, reduced by `factor`:
/// the centre of its block (the last block may be partial).
pub fn block_centre(index: usize, factor: usize, cells: usize) -> f32 {
    let factor = factor.max(1);
    let start = index * factor;
    let end = ((index + 1) * factor).min(cells).max(start + 1);
    (start + end) as f32 / 2.0
}

/// About `target` levels at round numbers (1, 2 or 5 times a power of ten apart) strictly
/// between `min` and `max`; none for an empty or non-finite range.
pub fn nice_levels(min: f32, max: f32, target: usize) -> Vec<f32> {
    if !(min.is_finite() && max.is_finite()) || max <= min || target == 0 {
        return Vec::new();
    }
    let (min, max) = (f64::from(min), f64::from(max));
    let step = nice_step((max - min) / target as f64);
    let first = (min / step).floor() as i64;
    let last = (max / step).ceil() as i64;
    (first..=last)
        .map(|k| k as f64 * step)
        .filter(|&level| level > min && level < max)
        .map(|level| level as f32)
        .collect()
}

/// The smallest of 1, 2, 5 times a power of ten that is at least `raw`.
pub fn nice_step(raw: f64) -> f64 {
    let power = 10f64.powf(raw.log10().floor());
    let fraction = raw / power;
    let nice = [1.0, 2.0, 5.0, 10.0]
        .into_iter()
        .find(|&n| fraction <= n * (1.0 + 1e-9))
        .unwrap_or(10.0);
    nice * power
}

/// The smallest and largest finite value in `window`, of every `stride`-th value along each
/// axis, if any.
pub fn window_range(values: &Grid, window: &Window, stride: usize) -> Option<(f32, f32)> {
    let mut range: Option<(f32, f32)> = None;
    for row in window.rows.clone().step_by(stride.max(1)) {
        let line = &values.as_slice()[row * values.cols()..(row + 1) * values.cols()];
        for &value in line[window.cols.clone()].iter().step_by(stride.max(1)) {
            if value.is_finite() {
                range =
                    Some(range.map_or((value, value), |(lo, hi)| (lo.min(value), hi.max(value))));
            }
        }
    }
    range
}

/// The contour segments of `levels` through the values of `window` of a preview of a field of
/// `field` cells reduced by `factor`, traced through every `stride`-th value along each axis
/// (1: every value). Squares with a non-finite corner are skipped; a value equal to a level
/// counts as above it, so a line through values equal to the level is drawn once, through
/// them.
pub fn isotherms(
    values: &Grid,
    factor: usize,
    field: GridSize,
    window: &Window,
    levels: &[f32],
    stride: usize,
) -> Vec<Segment> {
    let mut sorted: Vec<(f32, usize)> = levels
        .iter()
        .enumerate()
        .filter(|(_, l)| l.is_finite())
        .map(|(i, &l)| (l, i))
        .collect();
    sorted.sort_by(|a, b| a.0.total_cmp(&b.0));
    let stride = stride.max(1);
    // The traced values: every `stride`-th, and the window's last.
    let traced = |range: &Range<usize>| -> Vec<usize> {
        let mut picked: Vec<usize> = range.clone().step_by(stride).collect();
        if let Some(last) = range.clone().last() {
            if picked.last() != Some(&last) {
                picked.push(last);
            }
        }
        picked
    };
    let (rows, cols) = (traced(&window.rows), traced(&window.cols));
    if sorted.is_empty() || rows.len() < 2 || cols.len() < 2 {
        return Vec::new();
    }
    let xs: Vec<f32> = cols
        .iter()
        .map(|&c| block_centre(c, factor, field.cols))
        .collect();
    let squares = Squares {
        values,
        cols: &cols,
        xs: &xs,
        levels: &sorted,
    };
    rows.par_windows(2)
        .flat_map_iter(|pair| {
            let y = [
                block_centre(pair[0], factor, field.rows),
                block_centre(pair[1], factor, field.rows),
            ];
            let mut out = Vec::new();
            for i in 0..cols.len() - 1 {
                squares.square([pair[0], pair[1]], y, i, &mut out);
            }
            out
        })
        .collect()
}

/// What every square reads: the values, the traced columns and their positions, the levels
/// sorted.
struct Squares<'a> {
    values: &'a Grid,
    cols: &'a [usize],
    xs: &'a [f32],
    levels: &'a [(f32, usize)],
}

impl Squares<'_> {
    /// The segments of the square between traced rows `rows` (at `y`) and traced columns `i`
    /// and `i + 1`.
    fn square(&self, rows: [usize; 2], y: [f32; 2], i: usize, out: &mut Vec<Segment>) {
        let v = self.values;
        let (c0, c1) = (self.cols[i], self.cols[i + 1]);
        // Corners clockwise from the top left.
        let corners = [
            v.get(rows[0], c0),
            v.get(rows[0], c1),
            v.get(rows[1], c1),
            v.get(rows[1], c0),
        ];
        if corners.iter().any(|c| !c.is_finite()) {
            return;
        }
        let low = corners.iter().copied().fold(f32::INFINITY, f32::min);
        let high = corners.iter().copied().fold(f32::NEG_INFINITY, f32::max);
        // Levels in (low, high]: a corner below and one at or above.
        let first = self.levels.partition_point(|&(l, _)| l <= low);
        let last = self.levels.partition_point(|&(l, _)| l <= high);
        if first == last {
            return;
        }
        let (x0, x1, y0, y1) = (self.xs[i], self.xs[i + 1], y[0], y[1]);
        let points = [[x0, y0], [x1, y0], [x1, y1], [x0, y1]];
        for &(level, index) in &self.levels[first..last] {
            let centre_above = corners.iter().sum::<f32>() / 4.0 >= level;
            for (a, b) in square_edges(&corners, level, centre_above) {
                let from = crossing(&points, &corners, a, level);
                let to = crossing(&points, &corners, b, level);
                if from != to {
                    out.push(Segment {
                        from,
                        to,
                        level: index,
                    });
                }
            }
        }
    }
}

/// Edge `e` of a square runs from corner `e` to corner `e + 1` (mod 4): top, right, bottom,
/// left. The pairs of edges a level's line joins in a square with these corner values; a
/// saddle is split as its centre (the mean of the corners) says.
fn square_edges(corners: &[f32; 4], level: f32, centre_above: bool) -> Vec<(usize, usize)> {
    const TOP: usize = 0;
    const RIGHT: usize = 1;
    const BOTTOM: usize = 2;
    const LEFT: usize = 3;
    let above = |i: usize| usize::from(corners[i] >= level);
    // Bits: top-left 8, top-right 4, bottom-right 2, bottom-left 1.
    let case = above(0) << 3 | above(1) << 2 | above(2) << 1 | above(3);
    match case {
        1 | 14 => vec![(LEFT, BOTTOM)],
        2 | 13 => vec![(BOTTOM, RIGHT)],
        3 | 12 => vec![(LEFT, RIGHT)],
        4 | 11 => vec![(TOP, RIGHT)],
        6 | 9 => vec![(TOP, BOTTOM)],
        7 | 8 => vec![(LEFT, TOP)],
        // Top-right and bottom-left above.
        5 if centre_above => vec![(LEFT, TOP), (BOTTOM, RIGHT)],
        5 => vec![(TOP, RIGHT), (LEFT, BOTTOM)],
        // Top-left and bottom-right above.
        10 if centre_above => vec![(TOP, RIGHT), (LEFT, BOTTOM)],
        10 => vec![(LEFT, TOP), (BOTTOM, RIGHT)],
        _ => Vec::new(),
    }
}

/// Where `level` crosses edge `edge` (see [`square_edges`]), interpolated linearly.
fn crossing(points: &[[f32; 2]; 4], corners: &[f32; 4], edge: usize, level: f32) -> [f32; 2] {
    let (a, b) = (edge, (edge + 1) % 4);
    let (va, vb) = (corners[a], corners[b]);
    // One end is below the level and the other at or above it, so they differ.
    let t = ((level - va) / (vb - va)).clamp(0.0, 1.0);
    [
        points[a][0] + t * (points[b][0] - points[a][0]),
        points[a][1] + t * (points[b][1] - points[a][1]),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;

    fn grid(rows: usize, cols: usize, value: impl Fn(usize, usize) -> f32) -> Grid {
        Grid::from_fn(GridSize::new(rows, cols).unwrap(), value)
    }

    #[test]
    fn a_linear_ramp_gives_straight_lines_where_the_values_cross_the_level() {
        // T = 2 col + 1 at cell centres (col + 0.5): level 6 lies at col 2.5, centre x = 3.
        let values = grid(8, 10, |_, c| 2.0 * c as f32 + 1.0);
        let size = values.size();
        let segments = isotherms(&values, 1, size, &Window::all(&values), &[6.0, 12.5], 1);
        assert!(!segments.is_empty());
        for level in [0, 1] {
            let x = if level == 0 { 3.0 } else { 6.25 };
            let on: Vec<&Segment> = segments.iter().filter(|s| s.level == level).collect();
            // One segment per square along the line, spanning the rows' centres.
            assert_eq!(on.len(), 7, "level {level}");
            for s in &on {
                assert!(
                    (s.from[0] - x).abs() < 1e-5 && (s.to[0] - x).abs() < 1e-5,
                    "{s:?}"
                );
            }
            let (top, bottom) = on.iter().fold((f32::MAX, f32::MIN), |(lo, hi), s| {
                (
                    lo.min(s.from[1]).min(s.to[1]),
                    hi.max(s.from[1]).max(s.to[1]),
                )
            });
            assert_eq!((top, bottom), (0.5, 7.5));
        }
    }

    #[test]
    fn a_reduced_preview_places_lines_in_cells_of_the_full_field() {
        // 4x4 blocks of a 16x18 field: block centres at 2, 6, 10, 14 and 17 (a partial block).
        let values = grid(4, 5, |_, c| c as f32);
        let field = GridSize::new(16, 18).unwrap();
        let segments = isotherms(&values, 4, field, &Window::all(&values), &[0.5, 3.5], 1);
        for s in &segments {
            let x = if s.level == 0 { 4.0 } else { 15.5 };
            assert!((s.from[0] - x).abs() < 1e-5, "{s:?}");
            assert!((s.to[0] - x).abs() < 1e-5, "{s:?}");
        }
        assert_eq!(segments.len(), 6);
    }

    #[test]
    fn a_level_equal_to_values_is_one_line_through_them() {
        let values = grid(5, 5, |_, c| c as f32);
        let segments = isotherms(&values, 1, values.size(), &Window::all(&values), &[2.0], 1);
        assert_eq!(segments.len(), 4);
        for s in &segments {
            assert_eq!((s.from[0], s.to[0]), (2.5, 2.5));
        }
    }

    #[test]
    fn nothing_is_nan_and_non_finite_squares_are_skipped() {
        let mut values = grid(12, 12, |r, c| ((r * 7 + c * 3) % 5) as f32 - 2.0);
        values.as_mut_slice()[30] = f32::NAN;
        values.as_mut_slice()[31] = f32::INFINITY;
        // A flat block: no division by zero anywhere.
        for c in 0..4 {
            values.as_mut_slice()[100 + c] = 1.0;
        }
        let levels = [-1.5, -1.0, 0.0, 0.25, 1.0, f32::NAN];
        let segments = isotherms(&values, 1, values.size(), &Window::all(&values), &levels, 1);
        assert!(!segments.is_empty());
        for s in &segments {
            assert!(s.from.iter().chain(&s.to).all(|v| v.is_finite()), "{s:?}");
            assert!(s.level < 5);
        }
    }

    #[test]
    fn a_window_restricts_the_lines_to_the_view() {
        let values = grid(40, 40, |_, c| c as f32);
        let window = Window::visible(&values, 0.5, 0.25, 0.75, 0.5);
        assert_eq!(
            window,
            Window {
                rows: 9..21,
                cols: 19..31
            }
        );
        let levels: Vec<f32> = (0..40).map(|l| l as f32 + 0.5).collect();
        let segments = isotherms(&values, 1, values.size(), &window, &levels, 1);
        assert!(segments.iter().all(|s| (19.5..=30.5).contains(&s.from[0])));
        assert_eq!(window_range(&values, &window, 1), Some((19.0, 30.0)));
    }

    #[test]
    fn a_large_window_is_traced_through_every_few_values() {
        let values = grid(101, 101, |_, c| 0.5 * c as f32);
        let window = Window::all(&values);
        assert_eq!(window.stride(40), 3);
        assert_eq!(window.stride(400), 1);
        let segments = isotherms(&values, 1, values.size(), &window, &[10.25, 49.0], 3);
        // Rows 0, 3, ..., 99 and 100: 34 squares down each line, at the same place as when
        // every value is traced (the field is linear).
        for (level, x) in [(0, 21.0), (1, 98.5)] {
            let on: Vec<&Segment> = segments.iter().filter(|s| s.level == level).collect();
            assert_eq!(on.len(), 34, "level {level}");
            assert!(on
                .iter()
                .all(|s| (s.from[0] - x).abs() < 1e-4 && (s.to[0] - x).abs() < 1e-4));
        }
        assert_eq!(window_range(&values, &window, 3), Some((0.0, 49.5)));
    }

    #[test]
    fn levels_are_round_numbers_inside_the_range() {
        assert_eq!(nice_levels(0.0, 1.0, 10).len(), 9);
        assert_eq!(
            nice_levels(20.0, 100.0, 8),
            vec![30.0, 40.0, 50.0, 60.0, 70.0, 80.0, 90.0]
        );
        let levels = nice_levels(-0.3, 0.31, 6);
        assert_eq!(levels.len(), 3);
        for (level, expected) in levels.iter().zip([-0.2, 0.0, 0.2]) {
            assert!((level - expected).abs() < 1e-6, "{levels:?}");
        }
        assert!(nice_levels(1.0, 1.0, 10).is_empty());
        assert!(nice_levels(f32::NAN, 1.0, 10).is_empty());
        assert!((nice_step(0.7) - 1.0).abs() < 1e-12);
        assert_eq!(nice_step(23.0), 50.0);
    }
}
