//! A colorbar beside an exported picture: the colour table from the maximum (top) to the
//! minimum, five ticks, and their values (with the layer's unit, such as °C, when it has one) written with the monospace font egui ships (Hack),
//! rasterised by `ab_glyph`.

use ab_glyph::{point, Font, FontRef, PxScale, ScaleFont};

use crate::error::{HeatlabError, Result};
use crate::render::{format_value, Colormap, ValueRange};

/// An RGB image being drawn on.
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

    /// Darkens the pixel at (x, y) towards black by `coverage` (anti-aliased text on white).
    fn ink(&mut self, x: i64, y: i64, coverage: f32) {
        let (Ok(x), Ok(y)) = (usize::try_from(x), usize::try_from(y)) else {
            return;
        };
        if x >= self.width || y >= self.height {
            return;
        }
        let i = (y * self.width + x) * 3;
        for channel in &mut self.rgb[i..i + 3] {
            let value = f32::from(*channel) * (1.0 - coverage.clamp(0.0, 1.0));
            *channel = value.round() as u8;
        }
    }

    /// Writes `text` with its left edge at `x` and its vertical centre at `y`.
    fn text(&mut self, font: &FontRef<'_>, scale: PxScale, x: f32, y: f32, text: &str) {
        let scaled = font.as_scaled(scale);
        let baseline = y + (scaled.ascent() + scaled.descent()) / 2.0;
        let mut caret = x;
        for c in text.chars() {
            let id = font.glyph_id(c);
            let glyph = id.with_scale_and_position(scale, point(caret, baseline));
            caret += scaled.h_advance(id);
            if let Some(outlined) = font.outline_glyph(glyph) {
                let bounds = outlined.px_bounds();
                outlined.draw(|gx, gy, coverage| {
                    self.ink(
                        bounds.min.x as i64 + i64::from(gx),
                        bounds.min.y as i64 + i64::from(gy),
                        coverage,
                    );
                });
            }
        }
    }
}

/// Width in pixels of `text` at `scale`.
fn text_width(font: &FontRef<'_>, scale: PxScale, text: &str) -> f32 {
    let scaled = font.as_scaled(scale);
    text.chars()
        .map(|c| scaled.h_advance(font.glyph_id(c)))
        .sum()
}

/// The font of the labels: egui's monospace font, embedded in the binary.
fn label_font() -> Result<FontRef<'static>> {
    FontRef::try_from_slice(epaint_default_fonts::HACK_REGULAR)
        .map_err(|error| HeatlabError::Internal(format!("the built-in font: {error}")))
}

/// Appends a white strip with a vertical colorbar and five labelled ticks to an RGB image of
/// `width x height`; returns the new pixels and size. Each label is followed by `value_unit` when
/// there is one ("20.5 °C"). Short images are padded below with white so that the labels fit.
pub fn with_colorbar(
    rgb: &[u8],
    width: usize,
    height: usize,
    colormap: Colormap,
    range: ValueRange,
    value_unit: Option<&str>,
) -> Result<(Vec<u8>, usize, usize)> {
    let font = label_font()?;
    let px = (height as f32 / 40.0).clamp(12.0, 48.0);
    let scale = PxScale::from(px);
    let unit = (px / 6.0).ceil() as usize;
    let margin = 3 * unit;
    let bar_width = 4 * unit;
    let tick = 2 * unit;
    let labels: Vec<String> = (0..5)
        .map(|i| {
            let value = format_value(range.min + (range.max - range.min) * i as f32 / 4.0);
            match value_unit {
                Some(unit) => format!("{value} {unit}"),
                None => value,
            }
        })
        .collect();
    let label_width = labels
        .iter()
        .map(|text| text_width(&font, scale, text))
        .fold(0.0, f32::max)
        .ceil() as usize;
    let strip = margin + bar_width + tick + unit + label_width + margin;
    let out_height = height.max(5 * (px as usize + unit) + 2 * margin);
    let out_width = width + strip;
    let mut canvas = Canvas {
        rgb: vec![255; out_width * out_height * 3],
        width: out_width,
        height: out_height,
    };
    for (y, row) in rgb.chunks_exact(width * 3).take(height).enumerate() {
        canvas.rgb[y * out_width * 3..y * out_width * 3 + width * 3].copy_from_slice(row);
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
    for (i, text) in labels.iter().enumerate() {
        let y = bar_top + (bar_height - 1) * (4 - i) / 4;
        let tick_x = bar_x + bar_width;
        canvas.fill(
            tick_x,
            y.saturating_sub(unit / 2),
            tick,
            unit.max(1),
            [0, 0, 0],
        );
        let text_y = (y as f32).clamp(px / 2.0, out_height as f32 - px / 2.0);
        canvas.text(&font, scale, (tick_x + tick + unit) as f32, text_y, text);
    }
    Ok((canvas.rgb, out_width, out_height))
}

/// Appends a white strip below an RGB image of `width x height` with `text` written on its
/// left (a video's step counter), smaller where the picture is too narrow for it; returns the
/// new pixels and size.
pub fn with_caption(
    rgb: &[u8],
    width: usize,
    height: usize,
    text: &str,
) -> Result<(Vec<u8>, usize, usize)> {
    let font = label_font()?;
    let mut px = (width as f32 / 30.0).clamp(12.0, 40.0);
    // A long counter on a narrow picture is written smaller so that it is whole.
    let room = (width as f32 - px).max(1.0);
    let written = text_width(&font, PxScale::from(px), text);
    if written > room {
        px = (px * room / written).max(6.0);
    }
    let strip = (px * 1.6).ceil() as usize;
    let out_height = height + strip;
    let mut canvas = Canvas {
        rgb: vec![255; width * out_height * 3],
        width,
        height: out_height,
    };
    canvas.rgb[..width * height * 3].copy_from_slice(&rgb[..width * height * 3]);
    canvas.text(
        &font,
        PxScale::from(px),
        px / 2.0,
        height as f32 + strip as f32 / 2.0,
        text,
    );
    Ok((canvas.rgb, width, out_height))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn colorbar_widens_the_image_and_writes_its_labels() {
        let rgb = vec![7u8; 40 * 30 * 3];
        let range = ValueRange {
            min: -1.0,
            max: 1.0,
        };
        let (out, w, h) = with_colorbar(&rgb, 40, 30, Colormap::Viridis, range, None).unwrap();
        assert!(w > 40);
        assert!(h >= 30);
        assert_eq!(out.len(), w * h * 3);
        assert_eq!(&out[..3], &[7, 7, 7]);
        // The labels are anti-aliased grey-to-black text in the white strip, right of the ticks.
        let label_x0 = 40 + 20;
        let inked = (0..h)
            .flat_map(|y| (label_x0..w).map(move |x| (y * w + x) * 3))
            .filter(|&i| out[i] < 128 && out[i] == out[i + 1] && out[i + 1] == out[i + 2])
            .count();
        assert!(inked > 20, "only {inked} dark pixels of label text");
    }

    /// Dark pixels of the label text in columns `from..` of an image `w` wide.
    fn inked(out: &[u8], w: usize, h: usize, from: usize) -> usize {
        (0..h)
            .flat_map(|y| (from..w).map(move |x| (y * w + x) * 3))
            .filter(|&i| out[i] < 128 && out[i] == out[i + 1] && out[i + 1] == out[i + 2])
            .count()
    }

    #[test]
    fn a_unit_follows_each_label() {
        let rgb = vec![7u8; 40 * 30 * 3];
        let range = ValueRange {
            min: 20.0,
            max: 80.0,
        };
        let bare = with_colorbar(&rgb, 40, 30, Colormap::Inferno, range, None).unwrap();
        let (out, w, h) =
            with_colorbar(&rgb, 40, 30, Colormap::Inferno, range, Some("°C")).unwrap();
        // "20 °C" is three glyphs wider than "20", and the glyphs of " °C" are drawn: right of
        // where the bare labels' strip ends there is ink (the degree sign and the C).
        assert!(w > bare.1 + 10, "{w} against {} without the unit", bare.1);
        assert_eq!(h, bare.2);
        let beyond = inked(&out, w, h, bare.1 - 4);
        assert!(beyond > 20, "only {beyond} dark pixels of the unit");
    }

    #[test]
    fn a_long_counter_on_a_narrow_picture_is_written_whole() {
        let rgb = vec![255u8; 120 * 10 * 3];
        let text = "t = 4.980 s · step 2150";
        let (out, w, h) = with_caption(&rgb, 120, 10, text).unwrap();
        assert_eq!(w, 120);
        // Ink in the caption, none in its last columns: the text was not cut off at the edge.
        assert!(inked(&out, w, h, 0) > 20);
        assert_eq!(inked(&out, w, h, w - 3), 0);
    }
}
