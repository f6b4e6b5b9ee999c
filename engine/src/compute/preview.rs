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
    block_mean_into(field, factor, Vec::new())
}

/// [`block_mean`] written into `storage` (reused when it is large enough: the values of a
/// picture no longer shown).
pub fn block_mean_into(field: &Grid, factor: usize, storage: Vec<f32>) -> Grid {
    if factor <= 1 {
        // The mean of one cell, computed as for larger blocks (a sum from +0.0): equal to the
        // cell but for -0.0, which becomes +0.0 here as on the GPU.
        let mut means = Grid::zeros_in(field.size(), storage);
        means
            .as_mut_slice()
            .par_iter_mut()
            .zip(field.as_slice())
            .for_each(|(mean, &v)| *mean = v + 0.0);
        return means;
    }
    let (rows, cols) = (field.rows(), field.cols());
    let size = reduced_size(field.size(), factor);
    let mut out = Grid::zeros_in(size, storage);
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
/// 4: RGBA with opaque alpha), in a new buffer.
pub fn map_through_table(
    values: &[f32],
    table: &ColorTable,
    range: ValueRange,
    channels: usize,
) -> Vec<u8> {
    let mut pixels = Vec::new();
    if channels == 4 {
        rgba_through_table_into(values, table, range, &mut pixels);
    } else {
        pixels.resize(values.len() * channels, 255);
        if channels == 3 {
            colour_in_chunks::<3>(values, table, range, &mut pixels);
        } else {
            for (pixel, &value) in pixels.chunks_exact_mut(channels).zip(values) {
                pixel[..3].copy_from_slice(&table[lut_index(value, range)]);
            }
        }
    }
    pixels
}

/// Each value's opaque RGBA colour from `table` over `range`, written into `rgba`, which is
/// resized to 4 bytes per value. Its storage is reused: a preview coloured every frame into
/// the buffer of one already shown allocates nothing (a new megabyte per picture costs the
/// operating system's page faults, which were most of this call's time).
pub fn rgba_through_table_into(
    values: &[f32],
    table: &ColorTable,
    range: ValueRange,
    rgba: &mut Vec<u8>,
) {
    // Only grows the buffer (no-op when it already has the length); the bytes are overwritten.
    rgba.resize(values.len() * 4, 255);
    colour_in_chunks::<4>(values, table, range, rgba);
}

/// Values per task when colouring: large enough that a task outweighs handing it to a thread.
const COLOUR_CHUNK: usize = 1 << 14;

/// Values per block of table indices: computed together (in vector registers), then looked up.
const INDEX_BLOCK: usize = 64;

/// Fills `pixels` (`CHANNELS` bytes per value, 3 or 4) with the values' colours. The number
/// of channels is a constant so that each pixel is a copy of fixed length (with a length known
/// only at run time, it is a call to `memcpy` per pixel).
fn colour_in_chunks<const CHANNELS: usize>(
    values: &[f32],
    table: &ColorTable,
    range: ValueRange,
    pixels: &mut [u8],
) {
    let channels = CHANNELS;
    // The table with its alpha byte, so that a pixel is one copy of four bytes.
    let opaque: [[u8; 4]; 256] = table.map(|[r, g, b]| [r, g, b, 255]);
    let colour_chunk = |(out, values): (&mut [u8], &[f32])| {
        let mut indices = [0u8; INDEX_BLOCK];
        for (out, values) in out
            .chunks_mut(channels * INDEX_BLOCK)
            .zip(values.chunks(INDEX_BLOCK))
        {
            let indices = &mut indices[..values.len()];
            lut_indices(values, range, indices);
            for (pixel, &index) in out.chunks_exact_mut(CHANNELS).zip(indices.iter()) {
                pixel.copy_from_slice(&opaque[usize::from(index)][..CHANNELS]);
            }
        }
    };
    if values.len() <= COLOUR_CHUNK {
        colour_chunk((pixels, values));
    } else {
        pixels
            .par_chunks_mut(channels * COLOUR_CHUNK)
            .zip(values.par_chunks(COLOUR_CHUNK))
            .for_each(colour_chunk);
    }
}

/// [`lut_index`] of each value, written so that the compiler computes several at once in
/// vector registers: compare-and-select instead of `clamp`, and truncation instead of `floor`
/// (which the baseline x86-64 target has no instruction for: it is a library call per value).
/// Equal to `lut_index` for every input: `floor(y)` clamped to 0..=255 is 0 for every `y < 0`
/// (and NaN), 255 for every `y >= 256`, and `trunc(y)` in between.
fn lut_indices(values: &[f32], range: ValueRange, indices: &mut [u8]) {
    let span = range.max - range.min;
    let min = range.min;
    let index = |x: f32| {
        let scaled = x * 256.0;
        // NaN fails both comparisons and maps to 0, as in `lut_index`.
        let clamped = if scaled >= 0.0 {
            if scaled < 256.0 {
                scaled
            } else {
                255.0
            }
        } else {
            0.0
        };
        // In 0..256: truncation is the floor, and the cast cannot saturate.
        clamped as i32 as u8
    };
    if span > 0.0 {
        for (slot, &value) in indices.iter_mut().zip(values) {
            *slot = index((value - min) / span);
        }
    } else {
        // `lut_index` maps every value to x = 0 when the range is empty (or NaN).
        indices.fill(index(0.0));
    }
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
        Self::of_into(grid, max_size, Vec::new())
    }

    /// [`Self::of`], the values written into `storage` (see [`block_mean_into`]).
    pub fn of_into(grid: &Grid, max_size: (usize, usize), storage: Vec<f32>) -> Self {
        let factor = reduction_factor(grid.size(), max_size);
        Self {
            factor,
            values: block_mean_into(grid, factor, storage),
        }
    }

    /// The picture: the range chosen from the reduced values as `spec.range` says, each value
    /// coloured through `spec.table`.
    pub fn colour(self, spec: &PreviewSpec<'_>) -> PreviewPixels {
        let range = spec.range.resolve(&self.values);
        self.colour_over(spec.table, range, Vec::new())
    }

    /// The picture over a given range, coloured into `rgba`'s storage (a buffer of a picture
    /// no longer shown: see [`rgba_through_table_into`]).
    pub fn colour_over(
        self,
        table: &ColorTable,
        range: ValueRange,
        mut rgba: Vec<u8>,
    ) -> PreviewPixels {
        rgba_through_table_into(self.values.as_slice(), table, range, &mut rgba);
        PreviewPixels {
            factor: self.factor,
            values: self.values,
            rgba,
            range,
        }
    }
}

/// A layer reduced for a frame, with the colour range of its values under the view's range
/// mode when the backend picked it where the values are (the GPU does, exactly as
/// [`RangeMode::resolve`] would on the host); `None`: the host picks it.
#[derive(Debug, Clone, PartialEq)]
pub struct RangedPreview {
    /// The block means.
    pub reduced: ReducedPreview,
    /// Their range, when the backend computed it.
    pub range: Option<ValueRange>,
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
    fn block_means_into_used_storage_equal_new_ones() {
        let size = GridSize::new(37, 53).unwrap();
        let values = (0..size.cells())
            .map(|i| {
                if i % 5 == 0 {
                    -0.0
                } else {
                    (i % 17) as f32 - 8.25
                }
            })
            .collect();
        let grid = Grid::from_vec(size, values).unwrap();
        for factor in [1, 2, 3, 8, 60] {
            let fresh = block_mean(&grid, factor);
            for stale in [vec![], vec![f32::NAN; 5], vec![7.0; 4000]] {
                let capacity = stale.capacity();
                let storage = stale.as_ptr();
                let reused = block_mean_into(&grid, factor, stale);
                assert_eq!(reused, fresh, "factor {factor}");
                let bits = |g: &Grid| g.as_slice().iter().map(|v| v.to_bits()).collect::<Vec<_>>();
                assert_eq!(
                    bits(&reused),
                    bits(&fresh),
                    "factor {factor}: signs of zero"
                );
                if capacity >= fresh.size().cells() {
                    assert_eq!(reused.as_slice().as_ptr(), storage, "factor {factor}");
                }
            }
        }
    }

    #[test]
    fn factor_fits_the_view() {
        let size = GridSize::new(2000, 3000).unwrap();
        assert_eq!(reduction_factor(size, (1000, 1000)), 3);
        assert_eq!(reduction_factor(size, (4000, 4000)), 1);
    }

    /// The colours as they were computed before the block-wise version: `lut_index` per value.
    fn reference_pixels(
        values: &[f32],
        table: &ColorTable,
        range: ValueRange,
        channels: usize,
    ) -> Vec<u8> {
        let mut pixels = vec![255u8; values.len() * channels];
        for (pixel, &value) in pixels.chunks_exact_mut(channels).zip(values) {
            pixel[..3].copy_from_slice(&table[lut_index(value, range)]);
        }
        pixels
    }

    /// Values over every exponent and sign, the specials, and values at the table's bucket
    /// edges of `range`.
    fn awkward_values(range: ValueRange) -> Vec<f32> {
        let mut values: Vec<f32> = (0..400_000u32)
            .map(|i| f32::from_bits(i.wrapping_mul(2_654_435_761)))
            .collect();
        values.extend([
            f32::NAN,
            -f32::NAN,
            f32::INFINITY,
            f32::NEG_INFINITY,
            0.0,
            -0.0,
            f32::MIN_POSITIVE,
            f32::MAX,
            f32::MIN,
        ]);
        let span = range.max - range.min;
        for k in 0..=256 {
            let edge = range.min + span * k as f32 / 256.0;
            for ulps in -2i32..=2 {
                values.push(f32::from_bits(edge.to_bits().wrapping_add_signed(ulps)));
            }
        }
        values
    }

    #[test]
    fn block_indices_equal_lut_index_for_every_kind_of_value() {
        let ranges = [
            ValueRange { min: 0.0, max: 1.0 },
            ValueRange {
                min: -0.004,
                max: 0.0045,
            },
            ValueRange {
                min: -3.5e30,
                max: 2.0e31,
            },
            ValueRange {
                min: 1.0e-40,
                max: 3.0e-40,
            },
            ValueRange { min: 2.0, max: 2.0 },
            ValueRange {
                min: 5.0,
                max: -5.0,
            },
            ValueRange {
                min: -f32::MAX,
                max: f32::MAX,
            },
            ValueRange {
                min: f32::NAN,
                max: 1.0,
            },
        ];
        for range in ranges {
            let values = awkward_values(range);
            let mut indices = vec![0u8; values.len()];
            lut_indices(&values, range, &mut indices);
            for (&value, &index) in values.iter().zip(&indices) {
                assert_eq!(
                    usize::from(index),
                    lut_index(value, range),
                    "value {value:e} ({:#010x}) in {range:?}",
                    value.to_bits()
                );
            }
        }
    }

    #[test]
    fn colouring_into_a_used_buffer_equals_the_per_value_lookup() {
        let table: ColorTable = std::array::from_fn(|i| [i as u8, 255 - i as u8, (i * 7) as u8]);
        let range = ValueRange {
            min: -0.25,
            max: 0.75,
        };
        let values = awkward_values(range);
        for channels in [3, 4] {
            assert_eq!(
                map_through_table(&values, &table, range, channels),
                reference_pixels(&values, &table, range, channels),
                "{channels} channels"
            );
        }
        let expected = reference_pixels(&values, &table, range, 4);
        // A buffer of another picture: longer, shorter, and with stale bytes in it.
        for stale_len in [
            0,
            12,
            values.len() * 4 - 8,
            values.len() * 4,
            values.len() * 5,
        ] {
            let mut rgba = vec![7u8; stale_len];
            rgba_through_table_into(&values, &table, range, &mut rgba);
            assert!(rgba == expected, "a buffer of {stale_len} bytes");
        }
        // In the buffer's own storage when it is large enough.
        let mut rgba = Vec::with_capacity(values.len() * 4);
        let storage = rgba.as_ptr();
        rgba_through_table_into(&values, &table, range, &mut rgba);
        assert_eq!(rgba.as_ptr(), storage);
        // Fewer values than one task, one block, or none.
        for n in [0, 1, 63, 64, 65, COLOUR_CHUNK + 1] {
            let mut rgba = Vec::new();
            rgba_through_table_into(&values[..n], &table, range, &mut rgba);
            assert!(rgba == expected[..4 * n], "{n} values");
        }
    }

    #[test]
    fn a_reduced_preview_coloured_into_a_spare_buffer_is_the_same_picture() {
        let size = GridSize::new(300, 257).unwrap();
        let grid = Grid::from_vec(
            size,
            (0..size.cells())
                .map(|i| ((i * 7919) % 1013) as f32 - 500.5)
                .collect(),
        )
        .unwrap();
        let spec = PreviewSpec {
            layer: Layer::Field,
            boundary: Boundary::Dirichlet,
            max_size: (128, 128),
            table: &std::array::from_fn(|i| [i as u8, 3, 200 - (i % 200) as u8]),
            range: RangeMode::LAPLACIAN_DEFAULT,
        };
        let fresh = preview_on_cpu(&grid, &spec);
        let reduced = ReducedPreview::of(&grid, spec.max_size);
        let range = spec.range.resolve(&reduced.values);
        let again = reduced.colour_over(spec.table, range, vec![1u8; 3 * fresh.rgba.len()]);
        assert_eq!(again, fresh);
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
