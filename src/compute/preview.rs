//! The heavy part of drawing a field: block means down to the size it is shown at, then each
//! value mapped through a table of 256 colours. A backend may do this on its device (the GPU
//! reduces and colours there, so only the picture crosses to the host), so the request holds
//! plain values only: which array, the boundary, a target size, a byte table and how the colour
//! range is chosen. The CPU functions here are the reference the GPU matches bit for bit;
//! `render` builds its pictures from them.

use rayon::prelude::*;

use crate::grid::{Boundary, Grid, GridSize, RangeMode, ValueRange};

/// Which array of the held field a preview shows.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
pub enum Layer {
    /// The field itself.
    Field,
    /// Its Laplacian, `4*f - neighbours`.
    Laplacian,
}

impl Layer {
    /// Both layers, in the order the app shows them.
    pub const ALL: [Self; 2] = [Self::Field, Self::Laplacian];

    /// The stem of its exported files: `field`, `laplacian`.
    pub fn file_stem(self) -> &'static str {
        match self {
            Self::Field => "field",
            Self::Laplacian => "laplacian",
        }
    }
}

/// A colour table: 256 RGB entries, the first for the range's minimum.
pub type ColorTable = [[u8; 3]; 256];

/// What a backend needs to draw a preview: plain values, no display types.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PreviewSpec<'a> {
    /// Field or Laplacian.
    pub layer: Layer,
    /// Boundary for the Laplacian.
    pub boundary: Boundary,
    /// Largest width and height in pixels; the field is block-averaged down to fit.
    pub max_size: (usize, usize),
    /// The colours.
    pub table: &'a ColorTable,
    /// How the colour range is chosen from the reduced values.
    pub range: RangeMode,
}

/// A reduced, coloured picture and the values behind it.
#[derive(Debug, Clone, PartialEq)]
pub struct PreviewPixels {
    /// Cells of the full field per pixel along each axis.
    pub factor: usize,
    /// The reduced values (block means).
    pub values: Grid,
    /// RGBA bytes of `values`, 4 per pixel, row-major, opaque.
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

/// The size of the reduced field for a reduction factor.
pub fn reduced_size(size: GridSize, factor: usize) -> GridSize {
    GridSize {
        rows: size.rows.div_ceil(factor.max(1)),
        cols: size.cols.div_ceil(factor.max(1)),
    }
}

/// Block means of `factor x factor` cells (partial blocks at the edges average what they hold).
pub fn block_mean(field: &Grid, factor: usize) -> Grid {
    if factor <= 1 {
        // The mean of one cell, computed as for larger blocks (a sum from +0.0): equal to the
        // cell but for -0.0, which becomes +0.0 here as on the GPU.
        let mut means = field.clone();
        means.as_mut_slice().par_iter_mut().for_each(|v| *v += 0.0);
        return means;
    }
    let (rows, cols) = (field.rows(), field.cols());
    let size = reduced_size(field.size(), factor);
    let mut out = Grid::zeros(size);
    out.as_mut_slice()
        .par_chunks_mut(size.cols)
        .enumerate()
        .for_each(|(br, out_row)| {
            let r0 = br * factor;
            let r1 = (r0 + factor).min(rows);
            for (bc, slot) in out_row.iter_mut().enumerate() {
                let c0 = bc * factor;
                let c1 = (c0 + factor).min(cols);
                // Accumulated cell by cell in row-major order, as kernels/display.cu does, so
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
    out
}

/// Index into a 256-entry table for `value` in `range`, as matplotlib's `Normalize` + colormap
/// lookup does (`floor(x * 256)` clipped to 0..=255). NaN maps to 0.
pub fn lut_index(value: f32, range: ValueRange) -> usize {
    let span = range.max - range.min;
    let x = if span > 0.0 {
        (value - range.min) / span
    } else {
        0.0
    };
    if x.is_nan() {
        return 0;
    }
    ((x * 256.0).floor().clamp(0.0, 255.0)) as usize
}

/// Each value's colour from `table` over `range`, as `channels` bytes per value (3: RGB,
/// 4: RGBA with opaque alpha).
pub fn map_through_table(
    values: &[f32],
    table: &ColorTable,
    range: ValueRange,
    channels: usize,
) -> Vec<u8> {
    let mut pixels = vec![255u8; values.len() * channels];
    pixels
        .par_chunks_mut(channels * 4096)
        .zip(values.par_chunks(4096))
        .for_each(|(out, values)| {
            for (pixel, &value) in out.chunks_exact_mut(channels).zip(values) {
                pixel[..3].copy_from_slice(&table[lut_index(value, range)]);
            }
        });
    pixels
}

/// A layer reduced to the size it is shown at (block means), not yet coloured: what a
/// backend hands over to the host, which picks the range and colours.
#[derive(Debug, Clone, PartialEq)]
pub struct ReducedPreview {
    /// Cells of the full field per pixel along each axis.
    pub factor: usize,
    /// The block means.
    pub values: Grid,
}

impl ReducedPreview {
    /// `grid` (already the requested layer) reduced to fit `max_size`.
    pub fn of(grid: &Grid, max_size: (usize, usize)) -> Self {
        let factor = reduction_factor(grid.size(), max_size);
        Self {
            factor,
            values: block_mean(grid, factor),
        }
    }

    /// The picture: the range chosen from the reduced values as `spec.range` says, each value
    /// coloured through `spec.table`.
    pub fn colour(self, spec: &PreviewSpec<'_>) -> PreviewPixels {
        let range = spec.range.resolve(&self.values);
        let rgba = map_through_table(self.values.as_slice(), spec.table, range, 4);
        PreviewPixels {
            factor: self.factor,
            values: self.values,
            rgba,
            range,
        }
    }
}

/// A preview of `grid` (already the requested layer) on the CPU: the reference.
pub fn preview_on_cpu(grid: &Grid, spec: &PreviewSpec<'_>) -> PreviewPixels {
    ReducedPreview::of(grid, spec.max_size).colour(spec)
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

    #[test]
    fn lut_index_covers_the_range() {
        let range = ValueRange { min: 0.0, max: 1.0 };
        assert_eq!(lut_index(0.0, range), 0);
        assert_eq!(lut_index(1.0, range), 255);
        assert_eq!(lut_index(0.5, range), 128);
        assert_eq!(lut_index(-3.0, range), 0);
        assert_eq!(lut_index(7.0, range), 255);
        assert_eq!(lut_index(f32::NAN, range), 0);
        assert_eq!(lut_index(2.0, ValueRange { min: 2.0, max: 2.0 }), 0);
    }
}
