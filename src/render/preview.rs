//! Display previews: a field (or its Laplacian) reduced to the size it is shown at, then
//! colormapped. Reducing first keeps the display cheap however large the field is.

use rayon::prelude::*;

use super::{field_to_rgba, Colormap, RangeMode, ValueRange};
use crate::compute::Boundary;
use crate::grid::{Grid, GridSize};

/// Which array a view shows.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
pub enum Layer {
    /// The field itself.
    Field,
    /// Its Laplacian, `4*f - neighbours`.
    Laplacian,
}

/// What to draw.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct PreviewRequest {
    /// Field or Laplacian.
    pub layer: Layer,
    /// Boundary for the Laplacian.
    pub boundary: Boundary,
    /// Colours.
    pub colormap: Colormap,
    /// How the colour range is chosen (from the reduced values).
    pub range_mode: RangeMode,
    /// Largest width and height in pixels; the field is block-averaged down to fit.
    pub max_size: (usize, usize),
}

/// A reduced, colormapped picture and the values behind it.
#[derive(Debug, Clone)]
pub struct Preview {
    /// Cells of the full field per preview pixel along each axis.
    pub factor: usize,
    /// The reduced values (block means), for hover readouts and colorbars.
    pub values: Grid,
    /// RGBA bytes of `values`, 4 per pixel, row-major.
    pub rgba: Vec<u8>,
    /// The colour range used.
    pub range: ValueRange,
}

/// The reduction factor that makes `size` fit in `max_size` (at least 1).
pub fn reduction_factor(size: GridSize, max_size: (usize, usize)) -> usize {
    let (max_w, max_h) = (max_size.0.max(1), max_size.1.max(1));
    size.cols
        .div_ceil(max_w)
        .max(size.rows.div_ceil(max_h))
        .max(1)
}

/// Block means of `factor x factor` cells (partial blocks at the edges average what they hold).
pub fn block_mean(field: &Grid, factor: usize) -> Grid {
    if factor <= 1 {
        return field.clone();
    }
    let (rows, cols) = (field.rows(), field.cols());
    let (out_rows, out_cols) = (rows.div_ceil(factor), cols.div_ceil(factor));
    let mut out = vec![0.0f32; out_rows * out_cols];
    out.par_chunks_mut(out_cols)
        .enumerate()
        .for_each(|(br, out_row)| {
            let r0 = br * factor;
            let r1 = (r0 + factor).min(rows);
            for (bc, slot) in out_row.iter_mut().enumerate() {
                let c0 = bc * factor;
                let c1 = (c0 + factor).min(cols);
                // Accumulated cell by cell in row-major order, as kernels/colormap.cu does, so
                // that GPU and CPU previews are identical.
                let mut sum = 0.0f64;
                for r in r0..r1 {
                    for &v in &field.as_slice()[r * cols + c0..r * cols + c1] {
                        sum += f64::from(v);
                    }
                }
                *slot = (sum / ((r1 - r0) * (c1 - c0)) as f64) as f32;
            }
        });
    let size = GridSize {
        rows: out_rows,
        cols: out_cols,
    };
    Grid::from_vec(size, out).unwrap_or_else(|_| Grid::zeros(size))
}

/// The size of the reduced field for a reduction factor.
pub fn reduced_size(size: GridSize, factor: usize) -> GridSize {
    GridSize {
        rows: size.rows.div_ceil(factor.max(1)),
        cols: size.cols.div_ceil(factor.max(1)),
    }
}

/// Renders a preview of `grid` (already the requested layer) on the CPU.
pub fn render_preview(grid: &Grid, request: &PreviewRequest) -> Preview {
    let factor = reduction_factor(grid.size(), request.max_size);
    let values = block_mean(grid, factor);
    let range = request.range_mode.resolve(&values);
    let rgba = field_to_rgba(&values, request.colormap, range);
    Preview {
        factor,
        values,
        rgba,
        range,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn block_mean_averages_partial_blocks() {
        let size = GridSize::new(3, 5).unwrap();
        let grid = Grid::from_vec(size, (0..15).map(|v| v as f32).collect()).unwrap();
        let reduced = block_mean(&grid, 2);
        assert_eq!(reduced.size(), GridSize::new(2, 3).unwrap());
        // Block (0,0): 0,1,5,6 -> 3; block (1,2): just 14.
        assert_eq!(reduced.get(0, 0), 3.0);
        assert_eq!(reduced.get(1, 2), 14.0);
    }

    #[test]
    fn factor_fits_the_view() {
        let size = GridSize::new(2000, 3000).unwrap();
        assert_eq!(reduction_factor(size, (1000, 1000)), 3);
        assert_eq!(reduction_factor(size, (4000, 4000)), 1);
    }
}
