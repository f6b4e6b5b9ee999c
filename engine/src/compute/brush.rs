//! Editing the held field in place: a brush stamp (one dab of heat added or removed over a
//! disc), and gathering or setting a few cells by index. The CPU formula here is the
//! definition; `kernels/brush.cu` evaluates the same `f32` operations in the same order
//! (NVRTC with `--fmad=false`, no transcendental functions), so both backends agree to the bit.

use std::fmt;
use std::sync::Arc;

use crate::error::{HeatlabError, Result};
use crate::grid::{Grid, GridSize};

/// How the brush's weight falls off from its centre.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Hash, Default, serde::Serialize, serde::Deserialize,
)]
pub enum BrushEdge {
    /// Weight `(1 - d²/r²)²`: full at the centre, zero at the rim, smooth in between.
    #[default]
    Soft,
    /// Weight 1 everywhere inside the disc.
    Hard,
}

impl BrushEdge {
    /// Both edges, in the order a selector lists them.
    pub const ALL: [Self; 2] = [Self::Soft, Self::Hard];

    /// The value the kernel receives.
    pub fn code(self) -> i32 {
        match self {
            Self::Soft => 0,
            Self::Hard => 1,
        }
    }
}

impl fmt::Display for BrushEdge {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::Soft => "soft",
            Self::Hard => "hard",
        })
    }
}

/// A rectangle of cells: rows `row..row + rows`, columns `col..col + cols`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct CellRect {
    /// First row.
    pub row: usize,
    /// First column.
    pub col: usize,
    /// Number of rows (at least 1).
    pub rows: usize,
    /// Number of columns (at least 1).
    pub cols: usize,
}

/// One dab of the brush: `amount` times the edge's weight is added to every cell whose centre
/// lies within `radius` cells of (`row`, `col`). A negative amount removes heat, but never
/// takes a cell below zero (the temperature outside a Dirichlet boundary); a cell already below
/// zero is left as it is.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct BrushStamp {
    /// Row of the centre, in cells (cell `r`'s centre is at `r`).
    pub row: f32,
    /// Column of the centre, in cells.
    pub col: f32,
    /// Radius in cells (at least half a cell).
    pub radius: f32,
    /// Heat added at full weight (negative: removed).
    pub amount: f32,
    /// Soft or hard edge.
    pub edge: BrushEdge,
}

/// The smallest radius: half a cell, one cell under the centre.
pub const MIN_BRUSH_RADIUS: f32 = 0.5;

impl BrushStamp {
    /// The radius actually used (at least [`MIN_BRUSH_RADIUS`]; NaN becomes the minimum).
    pub fn radius(&self) -> f32 {
        self.radius.max(MIN_BRUSH_RADIUS)
    }

    /// `radius²` and `1 / radius²`, computed once on the host and handed to the kernel so that
    /// both backends use the very same numbers.
    pub fn radius_terms(&self) -> (f32, f32) {
        let r2 = self.radius() * self.radius();
        (r2, 1.0 / r2)
    }

    /// Whether the stamp can be applied: finite centre and amount, finite radius.
    pub fn check(&self) -> Result<()> {
        if [self.row, self.col, self.radius, self.amount]
            .iter()
            .all(|v| v.is_finite())
        {
            Ok(())
        } else {
            Err(HeatlabError::InvalidInput(format!(
                "a brush stamp needs finite numbers, got {self:?}"
            )))
        }
    }

    /// The cells the disc may touch, clipped to a field of `size`; `None` when it misses the
    /// field entirely.
    pub fn bounds(&self, size: GridSize) -> Option<CellRect> {
        let radius = self.radius();
        let span = |centre: f32, len: usize| -> Option<(usize, usize)> {
            let lo = (centre - radius).ceil().max(0.0);
            let hi = (centre + radius).floor().min(len as f32 - 1.0);
            (lo <= hi).then(|| (lo as usize, hi as usize - lo as usize + 1))
        };
        let (row, rows) = span(self.row, size.rows)?;
        let (col, cols) = span(self.col, size.cols)?;
        Some(CellRect {
            row,
            col,
            rows,
            cols,
        })
    }

    /// The weight at a cell: `None` outside the disc. The operations and their order are those
    /// of `brush_stamp` in `kernels/brush.cu`.
    pub fn weight(&self, row: usize, col: usize) -> Option<f32> {
        let (r2, inv_r2) = self.radius_terms();
        weight(
            row as f32 - self.row,
            col as f32 - self.col,
            r2,
            inv_r2,
            self.edge,
        )
    }

    /// The new value of a cell holding `value` at weight `weight`.
    pub fn stamped(&self, value: f32, weight: f32) -> f32 {
        stamped(value, self.amount, weight)
    }

    /// Applies the stamp to a field on the host.
    pub fn apply(&self, field: &mut Grid) {
        let Some(rect) = self.bounds(field.size()) else {
            return;
        };
        let cols = field.cols();
        let values = field.as_mut_slice();
        for row in rect.row..rect.row + rect.rows {
            for col in rect.col..rect.col + rect.cols {
                if let Some(weight) = self.weight(row, col) {
                    let cell = &mut values[row * cols + col];
                    *cell = self.stamped(*cell, weight);
                }
            }
        }
    }

    /// Calls `touch` with the row-major index of every cell inside the disc.
    pub fn for_each_cell(&self, size: GridSize, mut touch: impl FnMut(usize)) {
        let Some(rect) = self.bounds(size) else {
            return;
        };
        for row in rect.row..rect.row + rect.rows {
            for col in rect.col..rect.col + rect.cols {
                if self.weight(row, col).is_some() {
                    touch(row * size.cols + col);
                }
            }
        }
    }
}

/// The brush weight at offset (`dy`, `dx`) from the centre: `d² = dx·dx + dy·dy` (two products,
/// then one sum), outside when `d² > r²`; soft: `u = 1 - d²·(1/r²)`, weight `u·u`.
fn weight(dy: f32, dx: f32, r2: f32, inv_r2: f32, edge: BrushEdge) -> Option<f32> {
    let d2 = dx * dx + dy * dy;
    if d2 > r2 {
        return None;
    }
    Some(match edge {
        BrushEdge::Hard => 1.0,
        BrushEdge::Soft => {
            let u = 1.0 - d2 * inv_r2;
            u * u
        }
    })
}

/// `value + amount·weight`; when removing (amount < 0), not below `min(value, 0)`. Written with
/// comparisons only (no `min`/`max`, whose choice between -0 and +0 is unspecified): a cell
/// holding -0 is not below zero, so its floor is +0 and removal leaves +0 there (or -0 where
/// the weight is 0, since -0 + -0 is -0 and not below +0). The kernel reaches the same bits by
/// another route (integer tests on the result's bits), because a GPU compiler may turn a float
/// select between a value and zero into `min.f32`, which picks -0.
fn stamped(value: f32, amount: f32, weight: f32) -> f32 {
    let next = value + amount * weight;
    if amount < 0.0 {
        let floor = if value < 0.0 { value } else { 0.0 };
        if next < floor {
            return floor;
        }
    }
    next
}

/// Cells of the held field set to given values: what an undo or a redo writes back.
#[derive(Debug, Clone, PartialEq)]
pub struct CellValues {
    /// Row-major indices, each below the field's cell count.
    pub cells: Arc<[u32]>,
    /// The value of each cell, as many as `cells`.
    pub values: Arc<[f32]>,
}

/// A change of the held field other than stepping, recorded so that a reference can repeat it.
#[derive(Debug, Clone, PartialEq)]
pub enum FieldEdit {
    /// One dab of the brush.
    Brush(BrushStamp),
    /// Cells set to values.
    Set(CellValues),
}

impl FieldEdit {
    /// Applies the edit to a backend.
    pub fn apply(&self, backend: &mut dyn super::Backend) -> Result<()> {
        match self {
            Self::Brush(stamp) => backend.apply_brush(stamp),
            Self::Set(set) => backend.scatter(&set.cells, &set.values),
        }
    }
}

/// Checks that every index lies in a field of `size` (and, for a scatter, that there is a
/// value per index).
pub fn check_cells(size: GridSize, cells: &[u32], values: Option<&[f32]>) -> Result<()> {
    if let Some(values) = values {
        if values.len() != cells.len() {
            return Err(HeatlabError::Internal(format!(
                "{} values for {} cells",
                values.len(),
                cells.len()
            )));
        }
    }
    let count = size.cells();
    if let Some(&bad) = cells.iter().find(|&&cell| cell as usize >= count) {
        return Err(HeatlabError::InvalidInput(format!(
            "cell {bad} lies outside the {size} field"
        )));
    }
    Ok(())
}

/// Checks that every cell of a field of `size` has a `u32` index, as edits, probes, heat
/// problems' maps and thermostats address cells (a field of 2³² cells or more, up to 131072²,
/// runs as the tutorial's plate, written and read whole).
pub fn ensure_cells_addressable(size: GridSize) -> Result<()> {
    match u32::try_from(size.cells()) {
        Ok(_) => Ok(()),
        Err(_) => Err(HeatlabError::Unsupported(format!(
            "a {size} field has {} cells; painting, probes and heat problems address fewer \
             than 2^32 (4,294,967,296) cells: such a field runs as the tutorial's plate",
            size.cells()
        ))),
    }
}

/// The row-major index of a cell as the `u32` the device takes (see
/// [`ensure_cells_addressable`]).
pub fn cell_index(size: GridSize, row: usize, col: usize) -> Result<u32> {
    if row >= size.rows || col >= size.cols {
        return Err(HeatlabError::InvalidInput(format!(
            "cell ({row}, {col}) lies outside the {size} field"
        )));
    }
    u32::try_from(row * size.cols + col)
        .map_err(|_| HeatlabError::Unsupported(format!("{size} has too many cells to index")))
}

/// The cells of `len` values (whole rows) from row `first_row` of a field of `size`, or why
/// they are not rows of it.
pub fn row_range(
    size: crate::grid::GridSize,
    first_row: usize,
    len: usize,
) -> Result<std::ops::Range<usize>> {
    let start = first_row.saturating_mul(size.cols);
    let end = start.saturating_add(len);
    if len % size.cols.max(1) != 0 || end > size.cells() {
        return Err(HeatlabError::Internal(format!(
            "{len} values from row {first_row} are not whole rows of the {size} field"
        )));
    }
    Ok(start..end)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn stamp(row: f32, col: f32, radius: f32, amount: f32, edge: BrushEdge) -> BrushStamp {
        BrushStamp {
            row,
            col,
            radius,
            amount,
            edge,
        }
    }

    #[test]
    fn a_hard_stamp_adds_its_amount_inside_the_disc_only() {
        let size = GridSize { rows: 9, cols: 11 };
        let mut field = Grid::zeros(size);
        stamp(4.0, 5.0, 2.0, 3.0, BrushEdge::Hard).apply(&mut field);
        for row in 0..9 {
            for col in 0..11 {
                let (dy, dx) = (row as f32 - 4.0, col as f32 - 5.0);
                let inside = dx * dx + dy * dy <= 4.0;
                assert_eq!(field.get(row, col), if inside { 3.0 } else { 0.0 });
            }
        }
        // 13 cells lie within 2 of a cell centre.
        assert_eq!(field.as_slice().iter().filter(|&&v| v > 0.0).count(), 13);
    }

    #[test]
    fn a_soft_stamp_falls_off_to_zero_at_the_rim() {
        let size = GridSize { rows: 21, cols: 21 };
        let mut field = Grid::zeros(size);
        stamp(10.0, 10.0, 8.0, 1.0, BrushEdge::Soft).apply(&mut field);
        assert_eq!(field.get(10, 10), 1.0);
        let profile: Vec<f32> = (10..21).map(|col| field.get(10, col)).collect();
        assert!(profile.windows(2).all(|w| w[1] <= w[0]), "{profile:?}");
        assert_eq!(field.get(10, 18), 0.0, "weight 0 on the rim");
        assert_eq!(field.get(10, 14), 0.5625, "(1 - 16/64)² = 0.5625");
    }

    #[test]
    fn removing_heat_stops_at_zero_and_leaves_negative_cells_alone() {
        let size = GridSize { rows: 1, cols: 3 };
        let mut field = Grid::from_vec(size, vec![0.25, 2.0, -1.0]).unwrap();
        for col in 0..3 {
            stamp(0.0, col as f32, 0.5, -0.5, BrushEdge::Hard).apply(&mut field);
        }
        assert_eq!(field.as_slice(), &[0.0, 1.5, -1.0]);
    }

    #[test]
    fn removing_from_a_negative_zero_gives_positive_zero_except_at_weight_zero() {
        let bits = |v: f32| v.to_bits();
        // Inside the disc, a -0 cell is not below zero: its floor is +0.
        assert_eq!(bits(stamped(-0.0, -0.3, 0.25)), bits(0.0));
        assert_eq!(bits(stamped(0.0, -0.3, 0.25)), bits(0.0));
        // At weight 0 (a soft stamp's rim) -0 + -0 is -0, which is not below +0.
        assert_eq!(bits(stamped(-0.0, -0.3, 0.0)), bits(-0.0));
        assert_eq!(bits(stamped(-0.0, -0.0, 1.0)), bits(-0.0));
        // Below zero: left as it is; above: down to +0 at most.
        assert_eq!(bits(stamped(-1e-3, -5.0, 1.0)), bits(-1e-3));
        assert_eq!(bits(stamped(0.5, -5.0, 1.0)), bits(0.0));
        assert_eq!(stamped(0.5, -0.25, 1.0), 0.25);
        // The rim of a soft stamp with a whole radius, centred on a cell, has weight exactly 0.
        let rim = stamp(0.0, 0.0, 3.0, -1.0, BrushEdge::Soft);
        assert_eq!(rim.weight(0, 3), Some(0.0));
        let mut field = Grid::from_vec(GridSize { rows: 1, cols: 4 }, vec![-0.0; 4]).unwrap();
        rim.apply(&mut field);
        let got: Vec<u32> = field.as_slice().iter().map(|v| v.to_bits()).collect();
        assert_eq!(got, [bits(0.0), bits(0.0), bits(0.0), bits(-0.0)]);
    }

    #[test]
    fn stamps_off_the_field_are_clipped_or_ignored() {
        let size = GridSize { rows: 5, cols: 5 };
        let mut field = Grid::zeros(size);
        let corner = stamp(-1.0, -1.0, 2.0, 1.0, BrushEdge::Hard);
        assert_eq!(
            corner.bounds(size),
            Some(CellRect {
                row: 0,
                col: 0,
                rows: 2,
                cols: 2
            })
        );
        corner.apply(&mut field);
        // (0,0) is sqrt(2) away, (0,1) and (1,0) sqrt(5) > 2, (1,1) sqrt(8).
        assert_eq!(field.as_slice().iter().filter(|&&v| v > 0.0).count(), 1);
        assert_eq!(
            stamp(-9.0, 2.0, 3.0, 1.0, BrushEdge::Hard).bounds(size),
            None
        );
        assert!(stamp(f32::NAN, 0.0, 1.0, 1.0, BrushEdge::Soft)
            .check()
            .is_err());
        let mut touched = Vec::new();
        corner.for_each_cell(size, |cell| touched.push(cell));
        assert_eq!(touched, [0]);
    }

    #[test]
    fn cells_outside_the_field_are_refused() {
        let size = GridSize { rows: 2, cols: 3 };
        assert_eq!(cell_index(size, 1, 2).unwrap(), 5);
        assert!(cell_index(size, 2, 0).is_err());
        assert!(check_cells(size, &[0, 5], Some(&[1.0, 2.0])).is_ok());
        assert!(check_cells(size, &[6], None).is_err());
        assert!(check_cells(size, &[0], Some(&[])).is_err());
    }
}
