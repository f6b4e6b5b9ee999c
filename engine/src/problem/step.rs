//! One step of a heat problem on the CPU: the reference every other implementation must match
//! bit for bit.
//!
//! For a free cell of kind `i` and value `v`, each face gives (in `f32`, no fused multiply-add)
//! `a_ij * (u - v)` to a neighbour of kind `j` and value `u`, or
//! `side_gain * (outside - v) + side_bias` at a side; the new value is
//! `(v + (((left + right) + top) + bottom)) + source_i`. Held cells keep their value.

use rayon::prelude::*;

use super::{Side, StepTables};

/// Rows of one parallel work item.
const ROWS_PER_TASK: usize = 8;

/// One face's contribution, `neighbour` = `(kind, value)` or `None` at a side.
#[inline(always)]
fn face(tables: &StepTables, kind: usize, v: f32, neighbour: Option<(u8, f32)>, side: Side) -> f32 {
    match neighbour {
        Some((other, u)) => tables.gain(kind, other as usize) * (u - v),
        None => {
            let at = side.index() * tables.kinds + kind;
            tables.side_gain[at] * (tables.outside[side.index()] - v) + tables.side_bias[at]
        }
    }
}

/// The new value of a free cell of kind `kind` and value `v` from its four neighbours.
#[inline(always)]
pub fn update(tables: &StepTables, kind: usize, v: f32, neighbours: [Option<(u8, f32)>; 4]) -> f32 {
    let [left, right, top, bottom] = neighbours;
    let sum = ((face(tables, kind, v, left, Side::Left)
        + face(tables, kind, v, right, Side::Right))
        + face(tables, kind, v, top, Side::Top))
        + face(tables, kind, v, bottom, Side::Bottom);
    (v + sum) + tables.source[kind]
}

/// Which sides wrap to the opposite one.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Wrap {
    /// Top and bottom.
    pub rows: bool,
    /// Left and right.
    pub cols: bool,
}

impl Wrap {
    /// The wrapping of `tables`.
    pub fn of(tables: &StepTables) -> Self {
        Self {
            rows: tables.periodic_rows,
            cols: tables.periodic_cols,
        }
    }
}

/// The row-major indices of the four neighbours of `(row, col)` (left, right, top, bottom);
/// `None` where a side that does not wrap is.
#[inline(always)]
pub fn neighbour_cells(
    wrap: Wrap,
    rows: usize,
    cols: usize,
    row: usize,
    col: usize,
) -> [Option<usize>; 4] {
    let here = row * cols + col;
    let left = if col > 0 {
        Some(here - 1)
    } else {
        wrap.cols.then(|| here + cols - 1)
    };
    let right = if col + 1 < cols {
        Some(here + 1)
    } else {
        wrap.cols.then(|| here + 1 - cols)
    };
    let top = if row > 0 {
        Some(here - cols)
    } else {
        wrap.rows.then(|| here + (rows - 1) * cols)
    };
    let bottom = if row + 1 < rows {
        Some(here + cols)
    } else {
        wrap.rows.then_some(col)
    };
    [left, right, top, bottom]
}

/// Writes the next values of row `row` of `input` into `out` (one row).
pub fn step_row(
    tables: &StepTables,
    map: &[u8],
    input: &[f32],
    rows: usize,
    row: usize,
    out: &mut [f32],
) {
    let cols = out.len();
    for (col, next) in out.iter_mut().enumerate() {
        let here = row * cols + col;
        let kind = map[here] as usize;
        let v = input[here];
        if tables.held[kind] {
            *next = v;
            continue;
        }
        let neighbours = neighbour_cells(Wrap::of(tables), rows, cols, row, col)
            .map(|cell| cell.map(|c| (map[c], input[c])));
        *next = update(tables, kind, v, neighbours);
    }
}

/// One step of the whole field, `input` to `output` (both `rows * cols`), rows in parallel on
/// the current rayon pool.
pub fn step_field(tables: &StepTables, map: &[u8], input: &[f32], output: &mut [f32], cols: usize) {
    let rows = output.len() / cols.max(1);
    output
        .par_chunks_mut(cols * ROWS_PER_TASK)
        .enumerate()
        .for_each(|(task, band)| {
            for (offset, out) in band.chunks_mut(cols).enumerate() {
                step_row(tables, map, input, rows, task * ROWS_PER_TASK + offset, out);
            }
        });
}
