//! Pictures and arrays of the field and its Laplacian at a step, named as `heatlab run` names
//! them (`field_000100.png`, `laplacian_000100.npy`). The GUI and the CLI both write through
//! here, so their files look the same, colorbars included. A PNG of a small field is enlarged
//! (whole pixels a cell, nearest neighbour) to be readable; its `.npy` holds the cells exactly.

use std::fmt;
use std::path::{Path, PathBuf};

use super::colorbar::with_colorbar;
use super::{frame_path, write_npy, write_png_rgb};
use crate::compute::Layer;
use crate::error::{HeatlabError, Result};
use crate::grid::{Grid, GridSize, RangeMode, ValueRange};
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
    /// Pixels per cell (a side) asked for; `None`: [`png_pixels_per_cell`]'s choice. Either
    /// way at most [`PNG_MAX_CELL_PIXELS`], and no more than keeps the picture's longer side
    /// within [`PNG_MAX_SIDE`].
    pub cell_pixels: Option<usize>,
}

impl PngStyle {
    /// A style whose range is chosen by `mode` from `grid` itself.
    pub fn resolved(colormap: Colormap, mode: RangeMode, grid: &Grid, colorbar: bool) -> Self {
        Self {
            colormap,
            range: mode.resolve(grid),
            colorbar,
            unit: None,
            cell_pixels: None,
        }
    }
}

/// The longer side, in pixels, that a PNG of a small field is enlarged to reach.
pub const PNG_MIN_SIDE: usize = 512;

/// The most pixels a cell's side becomes in a PNG (a field of a few cells stays small).
pub const PNG_MAX_CELL_PIXELS: usize = 64;

/// Pixels per cell (a side) of a PNG of a field of `size`: 1 for a field whose longer side
/// has [`PNG_MIN_SIDE`] cells or more, otherwise the least whole number that makes the longer
/// side at least that many pixels (at most [`PNG_MAX_CELL_PIXELS`]): a fin of 2x120 cells is
/// drawn 5 pixels a cell, 600x10, not as a sliver of 120x2.
pub fn png_pixels_per_cell(size: GridSize) -> usize {
    let longer = size.rows.max(size.cols).max(1);
    PNG_MIN_SIDE.div_ceil(longer).clamp(1, PNG_MAX_CELL_PIXELS)
}

/// The longest side, in pixels, a PNG of the field is enlarged to (a few hundred MB of RGB).
pub const PNG_MAX_SIDE: usize = 16_384;

/// Pixels per cell of a PNG of a field of `size` when `asked` (`None`: automatic, see
/// [`png_pixels_per_cell`]): at least 1, at most [`PNG_MAX_CELL_PIXELS`], and no more than
/// keeps the longer side within [`PNG_MAX_SIDE`] (a field already longer stays 1).
pub fn png_cell_factor(size: GridSize, asked: Option<usize>) -> usize {
    let longer = size.rows.max(size.cols).max(1);
    let most = (PNG_MAX_SIDE / longer).clamp(1, PNG_MAX_CELL_PIXELS);
    asked
        .unwrap_or_else(|| png_pixels_per_cell(size))
        .clamp(1, most)
}

/// Each pixel of an RGB image of `width x height` as a square of `factor x factor` pixels
/// (nearest neighbour); returns the new pixels and size.
fn enlarged(rgb: Vec<u8>, width: usize, height: usize, factor: usize) -> (Vec<u8>, usize, usize) {
    if factor <= 1 {
        return (rgb, width, height);
    }
    let (out_width, out_height) = (width * factor, height * factor);
    let mut out = Vec::with_capacity(out_width * out_height * 3);
    for row in rgb.chunks_exact(width * 3) {
        let start = out.len();
        for pixel in row.chunks_exact(3) {
            for _ in 0..factor {
                out.extend_from_slice(pixel);
            }
        }
        for _ in 1..factor {
            out.extend_from_within(start..start + out_width * 3);
        }
    }
    (out, out_width, out_height)
}

/// Writes `grid` colormapped, each cell a square of [`png_cell_factor`] pixels (the cell
/// itself for any field but a small one, unless the style asks for more), with a colorbar on
/// the right when asked.
pub fn write_png(path: &Path, grid: &Grid, style: &PngStyle) -> Result<()> {
    let rgb = field_to_rgb(grid, style.colormap, style.range);
    let factor = png_cell_factor(grid.size(), style.cell_pixels);
    let (rgb, width, height) = enlarged(rgb, grid.cols(), grid.rows(), factor);
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

/// Which layers a frame shows (a video's, or a run's frames): the field, its Laplacian or
/// both.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ShownLayers {
    /// The field.
    #[default]
    Field,
    /// The Laplacian.
    Laplacian,
    /// Both, side by side.
    Both,
}

impl ShownLayers {
    /// Every choice, in the order a selector lists them.
    pub const ALL: [Self; 3] = [Self::Field, Self::Laplacian, Self::Both];

    /// The layers shown, in the order frames hold them.
    pub fn layers(self) -> &'static [Layer] {
        match self {
            Self::Field => &[Layer::Field],
            Self::Laplacian => &[Layer::Laplacian],
            Self::Both => &[Layer::Field, Layer::Laplacian],
        }
    }
}

impl fmt::Display for ShownLayers {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::Field => "field",
            Self::Laplacian => "laplacian",
            Self::Both => "both",
        })
    }
}

impl std::str::FromStr for ShownLayers {
    type Err = HeatlabError;

    fn from_str(text: &str) -> Result<Self, Self::Err> {
        crate::choice::parse_choice(&Self::ALL, text, "layer")
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_cell_takes_the_pixels_asked_within_the_largest_picture() {
        let size = |rows, cols| GridSize::new(rows, cols).unwrap();
        assert_eq!(png_cell_factor(size(2, 120), None), 5);
        assert_eq!(png_cell_factor(size(2000, 2000), None), 1);
        assert_eq!(png_cell_factor(size(48, 64), Some(2)), 2);
        assert_eq!(png_cell_factor(size(48, 64), Some(0)), 1);
        assert_eq!(
            png_cell_factor(size(48, 64), Some(500)),
            PNG_MAX_CELL_PIXELS
        );
        assert_eq!(
            png_cell_factor(size(2000, 2000), Some(16)),
            8,
            "16000 pixels at most"
        );
        assert_eq!(png_cell_factor(size(20_000, 10), Some(4)), 1);
    }

    fn size(rows: usize, cols: usize) -> GridSize {
        GridSize { rows, cols }
    }

    #[test]
    fn small_fields_get_whole_pixels_a_cell_up_to_a_readable_size() {
        assert_eq!(png_pixels_per_cell(size(2, 120)), 5);
        assert_eq!(png_pixels_per_cell(size(50, 80)), 7);
        assert_eq!(png_pixels_per_cell(size(512, 40)), 1);
        assert_eq!(png_pixels_per_cell(size(2000, 2000)), 1);
        assert_eq!(png_pixels_per_cell(size(300, 2)), 2);
        // A field of a few cells is capped.
        assert_eq!(png_pixels_per_cell(size(1, 1)), PNG_MAX_CELL_PIXELS);
        assert_eq!(png_pixels_per_cell(size(0, 0)), PNG_MAX_CELL_PIXELS);
    }

    #[test]
    fn enlarging_repeats_each_pixel_as_a_square() {
        let rgb: Vec<u8> = (0..2 * 3 * 3).map(|i| i as u8).collect();
        let (out, w, h) = enlarged(rgb.clone(), 3, 2, 2);
        assert_eq!((w, h), (6, 4));
        assert_eq!(out.len(), 6 * 4 * 3);
        for y in 0..h {
            for x in 0..w {
                let from = ((y / 2) * 3 + x / 2) * 3;
                assert_eq!(
                    out[(y * w + x) * 3..][..3],
                    rgb[from..from + 3],
                    "({x}, {y})"
                );
            }
        }
        assert_eq!(enlarged(rgb.clone(), 3, 2, 1), (rgb, 3, 2));
    }

    #[test]
    fn a_png_of_a_small_field_is_enlarged_and_its_npy_is_exact() {
        let dir = tempfile::tempdir().unwrap();
        let grid = Grid::from_fn(size(2, 120), |row, col| (row * 120 + col) as f32);
        let style = PngStyle::resolved(Colormap::Viridis, RangeMode::MinMax, &grid, false);
        let layers = [LayerFrame {
            layer: Layer::Field,
            grid: &grid,
            style,
        }];
        let files = FrameFiles {
            png: true,
            npy: true,
        };
        let written = write_frame(dir.path(), 7, &layers, files).unwrap();
        let image = image::open(&written[0]).unwrap().to_rgb8();
        assert_eq!(image.dimensions(), (600, 10));
        let cell = field_to_rgb(&grid, style.colormap, style.range);
        // Cell (1, 37) fills pixels 185..190 of rows 5..10.
        let at = (120 + 37) * 3;
        for (x, y) in [(185, 5), (189, 9), (187, 7)] {
            assert_eq!(image.get_pixel(x, y).0, cell[at..at + 3], "({x}, {y})");
        }
        let npy = super::super::read_npy(&std::fs::read(&written[1]).unwrap()).unwrap();
        assert_eq!(npy, grid);
    }
}
