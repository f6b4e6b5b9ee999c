//! PNG frames.

use std::path::Path;

use image::codecs::png::{CompressionType, FilterType, PngEncoder};
use image::{ExtendedColorType, ImageEncoder};

use super::atomic::write_atomically;
use crate::error::{HeatlabError, Result};

/// Writes 8-bit RGB pixels (`width * height * 3` bytes, row-major) as a PNG, atomically.
pub fn write_png_rgb(path: &Path, width: usize, height: usize, rgb: &[u8]) -> Result<()> {
    if rgb.len() != width * height * 3 {
        return Err(HeatlabError::Encode {
            path: path.to_path_buf(),
            message: format!("{} bytes is not a {width}x{height} RGB image", rgb.len()),
        });
    }
    let (w, h) = (
        u32::try_from(width).map_err(|_| too_large(path))?,
        u32::try_from(height).map_err(|_| too_large(path))?,
    );
    write_atomically(path, |writer| {
        // Fast compression: frames of large fields are written often and read rarely.
        PngEncoder::new_with_quality(writer, CompressionType::Fast, FilterType::Adaptive)
            .write_image(rgb, w, h, ExtendedColorType::Rgb8)
            .map_err(std::io::Error::other)
    })
}

fn too_large(path: &Path) -> HeatlabError {
    HeatlabError::Encode {
        path: path.to_path_buf(),
        message: "image too large for PNG".into(),
    }
}
