//! Pictures and arrays of the field and its Laplacian at a step, named as `heatlab run` names
//! them (`field_000100.png`, `laplacian_000100.npy`). The GUI and the CLI both write through
//! here, so their files look the same, colorbars included.

use std::path::{Path, PathBuf};

use super::colorbar::with_colorbar;
use super::{frame_path, write_npy, write_png_rgb};
use crate::compute::Layer;
use crate::error::Result;
use crate::grid::{Grid, RangeMode, ValueRange};
use crate::render::{field_to_rgb, Colormap};

/// How a layer is drawn into a PNG.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PngStyle {
    /// Colours.
    pub colormap: Colormap,
    /// The values of the first and last colour.
    pub range: ValueRange,
    /// Whether a colorbar with values is drawn on the right.
    pub colorbar: bool,
    /// The unit the colorbar's values are in ("°C"), if any.
    pub unit: Option<&'static str>,
}

impl PngStyle {
    /// A style whose range is chosen by `mode` from `grid` itself.
    pub fn resolved(colormap: Colormap, mode: RangeMode, grid: &Grid, colorbar: bool) -> Self {
        Self {
            colormap,
            range: mode.resolve(grid),
            colorbar,
            unit: None,
        }
    }
}

/// Writes `grid` colormapped at full resolution, with a colorbar on the right when asked.
pub fn write_png(path: &Path, grid: &Grid, style: &PngStyle) -> Result<()> {
    let rgb = field_to_rgb(grid, style.colormap, style.range);
    let (width, height) = (grid.cols(), grid.rows());
    if style.colorbar {
        let (rgb, width, height) =
            with_colorbar(&rgb, width, height, style.colormap, style.range, style.unit)?;
        write_png_rgb(path, width, height, &rgb)
    } else {
        write_png_rgb(path, width, height, &rgb)
    }
}

/// One layer of a frame to write.
#[derive(Debug, Clone, Copy)]
pub struct LayerFrame<'a> {
    /// Field or Laplacian (names the files).
    pub layer: Layer,
    /// Its values.
    pub grid: &'a Grid,
    /// How its PNG is drawn.
    pub style: PngStyle,
}

/// Which files a frame writes for each layer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FrameFiles {
    /// `<layer>_<step>.png`.
    pub png: bool,
    /// `<layer>_<step>.npy` (float32).
    pub npy: bool,
}

/// One picture of a frame's layers side by side (each at the grid's resolution, with its
/// colorbar when its style asks), separated by a white gap, on a white background; with
/// `caption`, a strip below carries it (a video's step counter). Returns RGB pixels and size.
pub fn compose_frame(
    layers: &[LayerFrame<'_>],
    caption: Option<&str>,
) -> Result<(Vec<u8>, usize, usize)> {
    const GAP: usize = 8;
    let mut pictures = Vec::with_capacity(layers.len());
    for frame in layers {
        let rgb = field_to_rgb(frame.grid, frame.style.colormap, frame.style.range);
        let (width, height) = (frame.grid.cols(), frame.grid.rows());
        pictures.push(if frame.style.colorbar {
            let style = &frame.style;
            with_colorbar(&rgb, width, height, style.colormap, style.range, style.unit)?
        } else {
            (rgb, width, height)
        });
    }
    let width =
        pictures.iter().map(|p| p.1).sum::<usize>() + GAP * pictures.len().saturating_sub(1);
    let height = pictures.iter().map(|p| p.2).max().unwrap_or(0);
    let mut rgb = vec![255u8; width * height * 3];
    let mut left = 0;
    for (pixels, w, h) in &pictures {
        for y in 0..*h {
            let from = &pixels[y * w * 3..(y + 1) * w * 3];
            let at = (y * width + left) * 3;
            rgb[at..at + w * 3].copy_from_slice(from);
        }
        left += w + GAP;
    }
    match caption {
        Some(text) => super::colorbar::with_caption(&rgb, width, height, text),
        None => Ok((rgb, width, height)),
    }
}

/// Writes the layers of the frame at `step` into `dir`; returns the files written, in order.
pub fn write_frame(
    dir: &Path,
    step: u64,
    layers: &[LayerFrame<'_>],
    files: FrameFiles,
) -> Result<Vec<PathBuf>> {
    let mut written = Vec::new();
    for frame in layers {
        let stem = frame.layer.file_stem();
        if files.png {
            let path = frame_path(dir, stem, step, "png");
            write_png(&path, frame.grid, &frame.style)?;
            written.push(path);
        }
        if files.npy {
            let path = frame_path(dir, stem, step, "npy");
            write_npy(&path, frame.grid)?;
            written.push(path);
        }
    }
    Ok(written)
}

/// Writes `timings.csv` and `timings.json` into `dir`; returns both paths.
pub fn write_timing_log(
    dir: &Path,
    records: &[crate::measure::TimingRecord],
) -> Result<Vec<PathBuf>> {
    let csv = dir.join("timings.csv");
    let json = dir.join("timings.json");
    super::write_timings_csv(&csv, records)?;
    super::write_timings_json(&json, records)?;
    Ok(vec![csv, json])
}
