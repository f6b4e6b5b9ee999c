//! Exports from the app: PNGs of the field and the Laplacian as shown (full resolution, same
//! colormap and colour range as on screen, optionally with a colorbar), `.npy` arrays and the
//! timing log. Everything goes through `crate::export`, so every file is written atomically.

use std::fmt;
use std::path::{Path, PathBuf};

use crate::export::{self as files, frame_path};
use crate::grid::Grid;
use crate::render::{field_to_rgb, Colormap, ValueRange};
use crate::sim::Simulation;

use super::worker::{ViewRequest, ViewRequests};

/// What to write.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ExportKind {
    /// PNG of the field as shown.
    FieldPng,
    /// PNG of the Laplacian as shown.
    LaplacianPng,
    /// Both PNGs (one frame of a recording).
    Frames,
    /// `.npy` of the current field (float32).
    FieldNpy,
    /// `.npy` of the current Laplacian (float32).
    LaplacianNpy,
    /// `timings.csv` and `timings.json`, the format of `heatlab run`.
    TimingLog,
}

impl ExportKind {
    /// The kinds the export panel offers as buttons.
    pub const ALL: [Self; 5] = [
        Self::FieldPng,
        Self::LaplacianPng,
        Self::FieldNpy,
        Self::LaplacianNpy,
        Self::TimingLog,
    ];
}

impl fmt::Display for ExportKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::FieldPng => "Field PNG",
            Self::LaplacianPng => "Laplacian PNG",
            Self::Frames => "Frame PNGs",
            Self::FieldNpy => "Field .npy",
            Self::LaplacianNpy => "Laplacian .npy",
            Self::TimingLog => "Timing log",
        })
    }
}

/// An export request.
#[derive(Debug, Clone, PartialEq)]
pub struct ExportJob {
    /// What to write.
    pub kind: ExportKind,
    /// The folder to write into (created if missing).
    pub dir: PathBuf,
    /// Whether PNGs carry a colorbar.
    pub colorbar: bool,
}

/// Writes `job` for the simulation's current state (at `step`), with the colour ranges the
/// screen shows (`shown`), and returns the files written.
pub fn write(
    job: &ExportJob,
    sim: &mut Simulation,
    views: ViewRequests,
    shown: (Option<ValueRange>, Option<ValueRange>),
    step: u64,
) -> crate::Result<Vec<PathBuf>> {
    files::ensure_writable_dir(&job.dir)?;
    let mut written = Vec::new();
    let png = |grid: &Grid, kind: &str, view: ViewRequest, range: Option<ValueRange>| {
        let path = frame_path(&job.dir, kind, step, "png");
        write_png(
            &path,
            grid,
            view.colormap,
            range.unwrap_or_else(|| view.range_mode.resolve(grid)),
            job.colorbar,
        )
        .map(|()| path)
    };
    match job.kind {
        ExportKind::FieldPng => written.push(png(&sim.field()?, "field", views.field, shown.0)?),
        ExportKind::LaplacianPng => {
            written.push(png(
                &sim.laplacian()?,
                "laplacian",
                views.laplacian,
                shown.1,
            )?);
        }
        ExportKind::Frames => {
            written.push(png(&sim.field()?, "field", views.field, shown.0)?);
            written.push(png(
                &sim.laplacian()?,
                "laplacian",
                views.laplacian,
                shown.1,
            )?);
        }
        ExportKind::FieldNpy => {
            let path = frame_path(&job.dir, "field", step, "npy");
            files::write_npy(&path, &sim.field()?)?;
            written.push(path);
        }
        ExportKind::LaplacianNpy => {
            let path = frame_path(&job.dir, "laplacian", step, "npy");
            files::write_npy(&path, &sim.laplacian()?)?;
            written.push(path);
        }
        ExportKind::TimingLog => {
            let csv = job.dir.join("timings.csv");
            let json = job.dir.join("timings.json");
            files::write_timings_csv(&csv, sim.timings())?;
            files::write_timings_json(&json, sim.timings())?;
            written.push(csv);
            written.push(json);
        }
    }
    Ok(written)
}

/// Writes `grid` colormapped over `range`, with a colorbar on the right when asked.
pub fn write_png(
    path: &Path,
    grid: &Grid,
    colormap: Colormap,
    range: ValueRange,
    colorbar: bool,
) -> crate::Result<()> {
    let rgb = field_to_rgb(grid, colormap, range);
    let (width, height) = (grid.cols(), grid.rows());
    if colorbar {
        let (rgb, width, height) = with_colorbar(&rgb, width, height, colormap, range);
        files::write_png_rgb(path, width, height, &rgb)
    } else {
        files::write_png_rgb(path, width, height, &rgb)
    }
}

/// A value as a colorbar label: four significant digits, in scientific notation when very
/// small or large.
pub fn format_value(value: f32) -> String {
    let magnitude = value.abs();
    if value == 0.0 {
        "0".into()
    } else if !(1e-3..1e4).contains(&magnitude) {
        format!("{value:.2e}")
    } else {
        let decimals = (3 - magnitude.log10().floor() as i32).clamp(0, 6) as usize;
        let text = format!("{value:.decimals$}");
        if text.contains('.') {
            text.trim_end_matches('0').trim_end_matches('.').to_string()
        } else {
            text
        }
    }
}

/// Glyphs of a 3x5 pixel font for the characters colorbar labels use.
fn glyph(c: char) -> [u8; 5] {
    match c {
        '0' => [0b111, 0b101, 0b101, 0b101, 0b111],
        '1' => [0b010, 0b110, 0b010, 0b010, 0b111],
        '2' => [0b111, 0b001, 0b111, 0b100, 0b111],
        '3' => [0b111, 0b001, 0b111, 0b001, 0b111],
        '4' => [0b101, 0b101, 0b111, 0b001, 0b001],
        '5' => [0b111, 0b100, 0b111, 0b001, 0b111],
        '6' => [0b111, 0b100, 0b111, 0b101, 0b111],
        '7' => [0b111, 0b001, 0b001, 0b001, 0b001],
        '8' => [0b111, 0b101, 0b111, 0b101, 0b111],
        '9' => [0b111, 0b101, 0b111, 0b001, 0b111],
        '.' => [0b000, 0b000, 0b000, 0b000, 0b010],
        '-' => [0b000, 0b000, 0b111, 0b000, 0b000],
        '+' => [0b000, 0b010, 0b111, 0b010, 0b000],
        'e' => [0b010, 0b101, 0b111, 0b100, 0b011],
        _ => [0; 5],
    }
}

struct Canvas {
    rgb: Vec<u8>,
    width: usize,
    height: usize,
}

impl Canvas {
    fn fill(&mut self, x0: usize, y0: usize, w: usize, h: usize, color: [u8; 3]) {
        for y in y0..(y0 + h).min(self.height) {
            for x in x0..(x0 + w).min(self.width) {
                let i = (y * self.width + x) * 3;
                self.rgb[i..i + 3].copy_from_slice(&color);
            }
        }
    }

    fn text(&mut self, x: usize, y: usize, scale: usize, text: &str) {
        for (i, c) in text.chars().enumerate() {
            let rows = glyph(c);
            for (row, bits) in rows.iter().enumerate() {
                for col in 0..3 {
                    if bits & (0b100 >> col) != 0 {
                        let px = x + (i * 4 + col) * scale;
                        self.fill(px, y + row * scale, scale, scale, [0, 0, 0]);
                    }
                }
            }
        }
    }
}

/// Appends a white strip with a vertical colorbar and five labelled ticks to an RGB image.
pub fn with_colorbar(
    rgb: &[u8],
    width: usize,
    height: usize,
    colormap: Colormap,
    range: ValueRange,
) -> (Vec<u8>, usize, usize) {
    let scale = (height / 160).clamp(2, 8);
    let margin = 6 * scale;
    let bar_width = 6 * scale;
    let labels: Vec<(f32, String)> = (0..5)
        .map(|i| {
            let value = range.min + (range.max - range.min) * i as f32 / 4.0;
            (value, format_value(value))
        })
        .collect();
    let label_chars = labels.iter().map(|(_, text)| text.len()).max().unwrap_or(1);
    let strip = margin + bar_width + 2 * scale + margin / 2 + label_chars * 4 * scale + margin;
    // Short images still need room for the labels.
    let out_height = height.max(7 * scale * 5 + 2 * margin);
    let out_width = width + strip;
    let mut canvas = Canvas {
        rgb: vec![255; out_width * out_height * 3],
        width: out_width,
        height: out_height,
    };
    for y in 0..height {
        let src = &rgb[y * width * 3..(y + 1) * width * 3];
        canvas.rgb[y * out_width * 3..y * out_width * 3 + width * 3].copy_from_slice(src);
    }
    let table = colormap.table();
    let bar_x = width + margin;
    let bar_top = margin;
    let bar_height = out_height.saturating_sub(2 * margin).max(2);
    for y in 0..bar_height {
        // Top is the maximum.
        let index = 255 - (y * 256 / bar_height).min(255);
        canvas.fill(bar_x, bar_top + y, bar_width, 1, table[index]);
    }
    for (i, (_, text)) in labels.iter().enumerate() {
        let y = bar_top + (bar_height - 1) * (4 - i) / 4;
        let tick_x = bar_x + bar_width;
        canvas.fill(
            tick_x,
            y.saturating_sub(scale / 2),
            2 * scale,
            scale,
            [0, 0, 0],
        );
        let text_y = y
            .saturating_sub(5 * scale / 2)
            .clamp(0, out_height.saturating_sub(5 * scale));
        canvas.text(tick_x + 2 * scale + margin / 2, text_y, scale, text);
    }
    (canvas.rgb, out_width, out_height)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn labels_are_short_and_readable() {
        assert_eq!(format_value(0.0), "0");
        assert_eq!(format_value(0.5), "0.5");
        assert_eq!(format_value(1.25), "1.25");
        assert_eq!(format_value(-0.0123), "-0.0123");
        assert_eq!(format_value(123.4567), "123.5");
        assert_eq!(format_value(2.5e-5), "2.50e-5");
    }

    #[test]
    fn colorbar_widens_the_image() {
        let rgb = vec![7u8; 40 * 30 * 3];
        let range = ValueRange {
            min: -1.0,
            max: 1.0,
        };
        let (out, w, h) = with_colorbar(&rgb, 40, 30, Colormap::Viridis, range);
        assert!(w > 40);
        assert!(h >= 30);
        assert_eq!(out.len(), w * h * 3);
        assert_eq!(&out[..3], &[7, 7, 7]);
    }
}
