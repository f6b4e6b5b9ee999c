//! What is drawn over the field picture to read heat problems: isotherms (levels automatic or
//! typed), heat-flux arrows (`-k grad T`, about one per 24 points of screen) and a scale bar.
//! The lines and arrows are computed (`render::contour`, `render::flux`) from the preview's
//! values on screen only when a new frame, zoom, pan or setting arrives; their cost per frame
//! goes into the frame's timings as [`FramePart::Overlays`].

use std::sync::Arc;
use std::time::{Duration, Instant};

use eframe::egui::{self, Color32, Painter, Pos2, Rect, Stroke, Vec2};

use heatlab_engine::problem::HeatProblem;
use heatlab_engine::render::contour::{Segment, Window};
use heatlab_engine::render::flux::{self, Arrow, Conductivity};
use heatlab_engine::render::format_value;
use heatlab_engine::render::overlay::{self, Overlay, OverlayRequest};
use heatlab_engine::render::Preview;

use super::view::{ViewState, Viewport};
use super::{DiffusionPanel, FramePart};

/// Screen distance between heat-flux arrows, in points.
const ARROW_SPACING: f32 = 24.0;

/// The longest the scale bar grows, in points.
const SCALE_BAR_MAX: f32 = 120.0;

/// The overlays' switches and what they last computed.
#[derive(Default)]
pub struct Overlays {
    /// Draw isotherms.
    pub isotherms: bool,
    /// Draw heat-flux arrows.
    pub arrows: bool,
    /// Typed levels (°C, separated by commas or spaces); empty: automatic.
    pub levels_text: String,
    /// The problem stepped (`None`: the tutorial's plate).
    problem: Option<Arc<HeatProblem>>,
    cache: Option<Cached>,
    /// The cost of the latest drawing, with the frame it was measured for.
    cost: Option<Duration>,
    costed_frame: u64,
    /// The isotherms' labels last drawn.
    labels: Vec<String>,
}

/// What the lines and arrows were computed from.
#[derive(Debug, Clone, PartialEq)]
struct CacheKey {
    generation: u64,
    uv: [f32; 4],
    size: [f32; 2],
    isotherms: bool,
    arrows: bool,
    levels: Option<Vec<f32>>,
    problem: Option<usize>,
}

/// Lines and arrows in cells of the field, and the levels drawn.
struct Cached {
    key: CacheKey,
    overlay: Overlay,
    /// Screen points between arrows.
    arrow_spacing: f32,
}

impl Overlays {
    /// The problem the overlays read (kinds, conductivities, the cells' size).
    pub fn set_problem(&mut self, problem: Option<Arc<HeatProblem>>) {
        self.problem = problem;
    }

    /// The problem stepped, if any.
    pub fn problem(&self) -> Option<&HeatProblem> {
        self.problem.as_deref()
    }

    /// The unit of the field's values: °C when a problem is stepped.
    pub fn unit(&self) -> Option<&'static str> {
        self.problem.is_some().then_some("°C")
    }

    /// The levels typed, or `None` for automatic ones; an error names what is not a number.
    pub fn typed_levels(&self) -> Result<Option<Vec<f32>>, String> {
        let words: Vec<&str> = self
            .levels_text
            .split(|c: char| c == ',' || c == ';' || c.is_whitespace())
            .filter(|w| !w.is_empty())
            .collect();
        if words.is_empty() {
            return Ok(None);
        }
        words
            .iter()
            .map(|w| {
                w.parse::<f32>()
                    .ok()
                    .filter(|v| v.is_finite())
                    .ok_or_else(|| format!("\"{w}\" is not a level"))
            })
            .collect::<Result<Vec<f32>, String>>()
            .map(Some)
    }

    /// The levels of the isotherms last drawn.
    pub fn levels_drawn(&self) -> &[f32] {
        self.cache.as_ref().map_or(&[], |c| &c.overlay.levels)
    }

    /// The isotherms' segments last drawn (cells of the field: column, row).
    pub fn segments(&self) -> &[Segment] {
        self.cache.as_ref().map_or(&[], |c| &c.overlay.segments)
    }

    /// The isotherms' labels last drawn ("45 °C"), one per level that has room on screen.
    pub fn labels_drawn(&self) -> &[String] {
        &self.labels
    }

    /// The arrows last drawn.
    pub fn drawn_arrows(&self) -> &[Arrow] {
        self.cache.as_ref().map_or(&[], |c| &c.overlay.arrows)
    }

    /// The switches, in the row under the pictures.
    pub fn toolbar_ui(&mut self, ui: &mut egui::Ui) {
        ui.checkbox(&mut self.isotherms, "isotherms")
            .on_hover_text("contour lines of the field at the levels typed, or at round numbers");
        let label = ui.label(if self.problem.is_some() {
            "levels °C"
        } else {
            "levels"
        });
        ui.add(
            egui::TextEdit::singleline(&mut self.levels_text)
                .hint_text("auto")
                .desired_width(88.0),
        )
        .labelled_by(label.id)
        .on_hover_text("isotherm levels separated by commas; empty: about ten round levels");
        if let Err(error) = self.typed_levels() {
            ui.colored_label(Color32::from_rgb(230, 90, 80), error);
        }
        ui.checkbox(&mut self.arrows, "heat flux").on_hover_text(
            "arrows of -k grad T, their length proportional to the flux (W/m² with a problem; \
             arbitrary units on the tutorial's plate)",
        );
    }

    /// Draws the overlays over the field picture at `rect`: the scale bar, and the isotherms and
    /// arrows when switched on (computed again only when what they show changed).
    pub fn paint(&mut self, painter: &Painter, rect: Rect, viewport: &Viewport, view: &ViewState) {
        let started = Instant::now();
        let Some(preview) = view.preview() else {
            return;
        };
        let Some(field) = view.field_size() else {
            return;
        };
        let to_screen = ScreenMap::new(rect, viewport, field);
        if self.isotherms || self.arrows {
            let key = CacheKey {
                generation: view.generation(),
                uv: {
                    let uv = viewport.uv_rect();
                    [uv.left(), uv.top(), uv.right(), uv.bottom()]
                },
                size: [rect.width(), rect.height()],
                isotherms: self.isotherms,
                arrows: self.arrows,
                levels: self.typed_levels().ok().flatten(),
                problem: self.problem.as_ref().map(|p| Arc::as_ptr(p) as usize),
            };
            if self.cache.as_ref().is_none_or(|c| c.key != key) {
                self.cache = Some(self.compute(key, preview, &to_screen));
            }
            self.labels.clear();
            if let Some(cache) = &self.cache {
                draw_isotherms(painter, &to_screen, &cache.overlay.segments);
                self.labels = label_isotherms(
                    painter,
                    &to_screen,
                    &cache.overlay,
                    self.problem.is_some().then_some("°C"),
                    rect,
                );
                draw_arrows(
                    painter,
                    &to_screen,
                    &cache.overlay.arrows,
                    cache.arrow_spacing,
                );
            }
        }
        if let Some(problem) = &self.problem {
            scale_bar(painter, rect, &to_screen, problem.spacing);
        }
        self.cost = Some(started.elapsed());
    }

    /// The lines and arrows of `key` from the preview on screen.
    fn compute(&self, key: CacheKey, preview: &Preview, to_screen: &ScreenMap) -> Cached {
        let uv = key.uv;
        let pixels_per_value = to_screen.scale.x * preview.factor.max(1) as f32;
        let step = flux::arrow_step(ARROW_SPACING, pixels_per_value);
        let conductivity = match self.problem.as_deref() {
            Some(problem) => Conductivity::of(problem),
            None => Conductivity::uniform(1.0),
        };
        let request = OverlayRequest {
            window: Window::visible(&preview.values, uv[0], uv[1], uv[2], uv[3]),
            levels: key.levels.clone(),
            isotherms: key.isotherms,
            arrow_step: key.arrows.then_some(step),
            conductivity: &conductivity,
            spacing: self.problem.as_ref().map_or(1.0, |p| p.spacing),
        };
        let overlay = overlay::compute(preview, to_screen.field, &request);
        Cached {
            key,
            overlay,
            arrow_spacing: step as f32 * pixels_per_value,
        }
    }

    /// The cost of drawing the overlays for frame `frame` (once per frame shown).
    fn take_cost(&mut self, frame: u64) -> Option<Duration> {
        if frame == self.costed_frame {
            return None;
        }
        let cost = self.cost.take()?;
        self.costed_frame = frame;
        Some(cost)
    }
}

/// From cells of the field (`x` column, `y` row) to the screen.
struct ScreenMap {
    origin: Pos2,
    /// Points per cell along x and y.
    scale: Vec2,
    field: heatlab_engine::grid::GridSize,
}

impl ScreenMap {
    fn new(rect: Rect, viewport: &Viewport, field: heatlab_engine::grid::GridSize) -> Self {
        let uv = viewport.uv_rect();
        let scale = Vec2::new(
            rect.width() / (uv.width() * field.cols as f32),
            rect.height() / (uv.height() * field.rows as f32),
        );
        Self {
            origin: Pos2::new(
                rect.left() - uv.left() * field.cols as f32 * scale.x,
                rect.top() - uv.top() * field.rows as f32 * scale.y,
            ),
            scale,
            field,
        }
    }

    fn point(&self, [x, y]: [f32; 2]) -> Pos2 {
        Pos2::new(
            self.origin.x + x * self.scale.x,
            self.origin.y + y * self.scale.y,
        )
    }
}

fn draw_isotherms(painter: &Painter, to_screen: &ScreenMap, segments: &[Segment]) {
    let shadow = Stroke::new(2.2, Color32::from_black_alpha(110));
    let line = Stroke::new(1.0, Color32::from_white_alpha(230));
    for stroke in [shadow, line] {
        for s in segments {
            painter.line_segment([to_screen.point(s.from), to_screen.point(s.to)], stroke);
        }
    }
}

/// Writes each level's value once on its isotherm, at the piece nearest the picture's centre
/// whose label has room (inside the picture, clear of the labels already written). Returns the
/// labels written.
fn label_isotherms(
    painter: &Painter,
    to_screen: &ScreenMap,
    overlay: &heatlab_engine::render::overlay::Overlay,
    unit: Option<&str>,
    rect: Rect,
) -> Vec<String> {
    let font = egui::FontId::proportional(11.0);
    let centre = rect.center();
    let mut placed: Vec<Rect> = Vec::new();
    let mut written = Vec::new();
    for (index, &level) in overlay.levels.iter().enumerate() {
        let mut pieces: Vec<Pos2> = overlay
            .segments
            .iter()
            .filter(|s| s.level == index)
            .map(|s| {
                let (a, b) = (to_screen.point(s.from), to_screen.point(s.to));
                a + (b - a) * 0.5
            })
            .collect();
        pieces.sort_by(|a, b| a.distance_sq(centre).total_cmp(&b.distance_sq(centre)));
        let text = match unit {
            Some(unit) => format!("{} {unit}", format_value(level)),
            None => format_value(level),
        };
        let galley = painter.layout_no_wrap(text.clone(), font.clone(), Color32::WHITE);
        let room = pieces.into_iter().map(|at| {
            egui::Align2::CENTER_CENTER
                .anchor_size(at, galley.size())
                .expand(2.0)
        });
        let free = room
            .take(64)
            .find(|r| rect.contains_rect(*r) && placed.iter().all(|p| !p.intersects(*r)));
        if let Some(label) = free {
            painter.rect_filled(label, 3.0, Color32::from_black_alpha(170));
            painter.galley(label.min + Vec2::splat(2.0), galley, Color32::WHITE);
            placed.push(label);
            written.push(text);
        }
    }
    written
}

/// Arrows with lengths proportional to the flux, the largest on screen `spacing` × 0.9 long.
fn draw_arrows(painter: &Painter, to_screen: &ScreenMap, arrows: &[Arrow], spacing: f32) {
    let largest = arrows
        .iter()
        .map(|a| a.flux[0].hypot(a.flux[1]))
        .filter(|m| m.is_finite())
        .fold(0.0, f64::max);
    if largest <= 0.0 {
        return;
    }
    let scale = f64::from(spacing * 0.9) / largest;
    let outline = Stroke::new(3.0, Color32::from_black_alpha(150));
    let arrow = Stroke::new(1.4, Color32::WHITE);
    for a in arrows {
        let vector = Vec2::new((a.flux[0] * scale) as f32, (a.flux[1] * scale) as f32);
        let length = vector.length();
        if length.is_nan() || length < 2.0 {
            continue;
        }
        let foot = to_screen.point(a.at) - vector / 2.0;
        for stroke in [outline, arrow] {
            painter.arrow(foot, vector, stroke);
        }
    }
}

/// A bar of a round length (1, 2 or 5 times a power of ten metres) in the picture's bottom
/// left corner, with the cells' size.
fn scale_bar(painter: &Painter, rect: Rect, to_screen: &ScreenMap, spacing: f64) {
    let points_per_metre = f64::from(to_screen.scale.x) / spacing;
    if !(points_per_metre.is_finite() && points_per_metre > 0.0) {
        return;
    }
    let length = round_length_below(f64::from(SCALE_BAR_MAX) / points_per_metre);
    let width = (length * points_per_metre) as f32;
    let left = rect.left() + 10.0;
    let y = rect.bottom() - 12.0;
    let text = format!(
        "{} · cells {}",
        format_length(length),
        format_length(spacing)
    );
    let font = egui::FontId::proportional(12.0);
    let background = Rect::from_min_max(
        Pos2::new(left - 6.0, y - 22.0),
        Pos2::new(left + width.max(130.0) + 6.0, y + 6.0),
    );
    painter.rect_filled(background, 3.0, Color32::from_black_alpha(140));
    let stroke = Stroke::new(2.0, Color32::WHITE);
    painter.line_segment([Pos2::new(left, y), Pos2::new(left + width, y)], stroke);
    for x in [left, left + width] {
        painter.line_segment([Pos2::new(x, y - 4.0), Pos2::new(x, y + 3.0)], stroke);
    }
    painter.text(
        Pos2::new(left, y - 5.0),
        egui::Align2::LEFT_BOTTOM,
        text,
        font,
        Color32::WHITE,
    );
}

/// The largest 1, 2 or 5 times a power of ten not above `most`.
pub fn round_length_below(most: f64) -> f64 {
    let power = 10f64.powf(most.log10().floor());
    let fraction = most / power;
    let nice = [5.0, 2.0, 1.0]
        .into_iter()
        .find(|&n| n <= fraction * (1.0 + 1e-9))
        .unwrap_or(1.0);
    nice * power
}

/// A length in µm, mm or m.
pub fn format_length(metres: f64) -> String {
    let (value, unit) = if metres >= 1.0 {
        (metres, "m")
    } else if metres >= 1e-3 {
        (metres * 1e3, "mm")
    } else {
        (metres * 1e6, "µm")
    };
    format!("{} {unit}", format_value(value as f32))
}

impl DiffusionPanel {
    /// Hands the problem the simulation thread reported to the parts that show its units: the
    /// overlays and readout, the probes' plot and the line tool's heat flow.
    pub(super) fn share_problem(&mut self) {
        let problem = self.state.problem.clone();
        self.paint.probes.set_celsius(problem.is_some());
        self.paint.profile.set_problem(problem.clone());
        self.views.overlays.set_problem(problem);
    }

    /// Adds the overlays' cost to the newest frame's timings, once per frame shown.
    pub(super) fn record_overlay_cost(&mut self) {
        if let Some(cost) = self.views.overlays.take_cost(self.state.frames_shown) {
            self.timings.add_to_latest(FramePart::Overlays, cost);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn levels_are_typed_or_automatic() {
        let mut overlays = Overlays::default();
        assert_eq!(overlays.typed_levels(), Ok(None));
        overlays.levels_text = "20, 25.5 30;40".into();
        assert_eq!(
            overlays.typed_levels(),
            Ok(Some(vec![20.0, 25.5, 30.0, 40.0]))
        );
        overlays.levels_text = "20, warm".into();
        assert!(overlays.typed_levels().unwrap_err().contains("warm"));
    }

    #[test]
    fn the_scale_bar_has_a_round_length() {
        assert!((round_length_below(0.0123) - 0.01).abs() < 1e-12);
        assert!((round_length_below(0.0031) - 0.002).abs() < 1e-12);
        assert!((round_length_below(7.0) - 5.0).abs() < 1e-12);
        assert_eq!(format_length(0.01), "10 mm");
        assert_eq!(format_length(2.0), "2 m");
        assert_eq!(format_length(0.0005), "500 µm");
    }
}
