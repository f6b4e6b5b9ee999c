//! Turning fields into pictures: colormaps, value ranges, and RGBA/RGB pixels.

pub mod colormap;
mod colormap_tables;
pub mod preview;
pub mod range;

pub use colormap::Colormap;
pub use preview::{Layer, Preview, PreviewRequest};
pub use range::{RangeMode, ValueRange};

use rayon::prelude::*;

use crate::grid::Grid;

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

/// Colormapped RGB bytes (3 per cell, row-major) of the whole field.
pub fn field_to_rgb(field: &Grid, colormap: Colormap, range: ValueRange) -> Vec<u8> {
    let table = colormap.table();
    let mut pixels = vec![0u8; field.size().cells() * 3];
    pixels
        .par_chunks_mut(3 * 4096)
        .zip(field.as_slice().par_chunks(4096))
        .for_each(|(out, values)| {
            for (pixel, &value) in out.chunks_exact_mut(3).zip(values) {
                pixel.copy_from_slice(&table[lut_index(value, range)]);
            }
        });
    pixels
}

/// Colormapped RGBA bytes (4 per cell, opaque), for textures.
pub fn field_to_rgba(field: &Grid, colormap: Colormap, range: ValueRange) -> Vec<u8> {
    let table = colormap.table();
    let mut pixels = vec![255u8; field.size().cells() * 4];
    pixels
        .par_chunks_mut(4 * 4096)
        .zip(field.as_slice().par_chunks(4096))
        .for_each(|(out, values)| {
            for (pixel, &value) in out.chunks_exact_mut(4).zip(values) {
                pixel[..3].copy_from_slice(&table[lut_index(value, range)]);
            }
        });
    pixels
}

#[cfg(test)]
mod tests {
    use super::*;

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
