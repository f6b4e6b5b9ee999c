//! One colormapped view (the field or its Laplacian): its controls, the picture with zoom and
//! pan, and an on-screen colorbar with numbers.

use std::time::{Duration, Instant};

use eframe::egui::{
    self, Color32, ColorImage, ComboBox, DragValue, Pos2, Rect, Sense, TextureHandle,
    TextureOptions, Vec2,
};

use heatlab_engine::grid::GridSize;
use heatlab_engine::render::{format_value, Colormap, Preview, ValueRange};

use super::overlays::Overlays;
use crate::settings::{RangeKind, ViewSettings};

/// The largest preview side requested when zoomed in, so a zoomed large field stays cheap.
pub const MAX_PREVIEW_SIDE: usize = 2048;

/// Width of the on-screen colorbar with its labels, in points.
const COLORBAR_WIDTH: f32 = 78.0;

/// Width the labels' unit adds to the colorbar, in points.
const UNIT_WIDTH: f32 = 22.0;

/// Zoom and pan shared by both views, so that they always show the same cells.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Viewport {
    /// 1 shows the whole field; 2 shows half of each side.
    pub zoom: f32,
    /// The field point at the centre of the view, in 0..1 along x (columns) and y (rows).
    pub center: Vec2,
}

impl Default for Viewport {
    fn default() -> Self {
        Self {
            zoom: 1.0,
            center: Vec2::splat(0.5),
        }
    }
}

impl Viewport {
    /// Largest zoom: a few screen pixels per cell of a small field.
    pub const MAX_ZOOM: f32 = 64.0;

    /// The part of the texture that is visible, in texture coordinates.
    pub fn uv_rect(&self) -> Rect {
        let half = 0.5 / self.zoom;
        Rect::from_min_max(
            Pos2::new(self.center.x - half, self.center.y - half),
            Pos2::new(self.center.x + half, self.center.y + half),
        )
    }

    /// Zooms about the centre of the view.
    pub fn zoom_by(&mut self, factor: f32) {
        self.zoom *= factor;
        self.clamp();
    }

    fn clamp(&mut self) {
        self.zoom = self.zoom.clamp(1.0, Self::MAX_ZOOM);
        let half = 0.5 / self.zoom;
        self.center.x = self.center.x.clamp(half, 1.0 - half);
        self.center.y = self.center.y.clamp(half, 1.0 - half);
    }
}

/// The height the two views need side by side in `width` points: controls, pictures, readout.
pub fn views_height(width: f32, field_size: Option<GridSize>) -> f32 {
    let (rows, cols) = field_size.map_or((1, 1), |s| (s.rows, s.cols));
    let column = ((width - 24.0) / 2.0 - COLORBAR_WIDTH).max(32.0);
    let picture = column * rows as f32 / cols as f32;
    CONTROLS_HEIGHT + picture + 30.0
}

/// Height of a view's title and controls, in points.
const CONTROLS_HEIGHT: f32 = 76.0;

/// What one view shows: the texture and the preview behind it.
#[derive(Default)]
pub struct ViewState {
    texture: Option<TextureHandle>,
    preview: Option<Preview>,
    field_size: Option<GridSize>,
    /// Counts the previews taken, so that what is computed from one is kept until the next.
    generation: u64,
    /// Size in physical pixels the picture was last drawn at.
    pub shown_pixels: (usize, usize),
}

impl ViewState {
    /// Takes a new preview: uploads its pixels to a texture and keeps it, leaving in `preview`
    /// the one it replaces (for the simulation thread to colour into again; a copy of the new
    /// one the first time). Returns how long that took.
    pub fn update(
        &mut self,
        ctx: &egui::Context,
        name: &str,
        preview: &mut Preview,
        field_size: GridSize,
    ) -> Duration {
        let timer = Instant::now();
        let size = [preview.values.cols(), preview.values.rows()];
        // Every pixel is opaque, so premultiplied and unmultiplied are the same bytes: one copy
        // of them, made and later freed on this thread (the texture keeps its own pixels, the
        // preview's buffer goes back to the simulation thread).
        let image = match bytemuck::try_cast_slice::<u8, Color32>(&preview.rgba) {
            Ok(pixels) if pixels.len() == size[0] * size[1] => {
                ColorImage::new(size, pixels.to_vec())
            }
            _ => {
                // Not made by `render` (which writes four bytes per value): shown as black
                // rather than taking the app down.
                log::error!("the {name} picture's pixels do not match its {size:?} values");
                ColorImage::filled(size, Color32::BLACK)
            }
        };
        // Nearest sampling: each cell (or block) stays a crisp square when zoomed in.
        let options = TextureOptions::NEAREST;
        match &mut self.texture {
            Some(texture) => texture.set(image, options),
            None => self.texture = Some(ctx.load_texture(name, image, options)),
        }
        match &mut self.preview {
            Some(shown) => std::mem::swap(shown, preview),
            None => self.preview = Some(preview.clone()),
        }
        self.field_size = Some(field_size);
        self.generation += 1;
        timer.elapsed()
    }

    /// The colour range of the picture shown.
    pub fn range(&self) -> Option<ValueRange> {
        self.preview.as_ref().map(|p| p.range)
    }

    /// The shown value at a cell of the full field (a block mean when the preview is reduced),
    /// with the block size.
    pub fn value_at(&self, row: usize, col: usize) -> Option<(f32, usize)> {
        let preview = self.preview.as_ref()?;
        let factor = preview.factor.max(1);
        let (r, c) = (row / factor, col / factor);
        (r < preview.values.rows() && c < preview.values.cols())
            .then(|| (preview.values.get(r, c), factor))
    }

    /// The preview shown.
    pub fn preview(&self) -> Option<&Preview> {
        self.preview.as_ref()
    }

    /// The size of the field shown.
    pub fn field_size(&self) -> Option<GridSize> {
        self.field_size
    }

    /// Which preview is shown: a new number for each one taken.
    pub fn generation(&self) -> u64 {
        self.generation
    }

    /// Whether a picture has arrived.
    pub fn has_picture(&self) -> bool {
        self.texture.is_some()
    }
}

/// The controls above a view: colormap and colour range. Returns whether anything changed.
pub fn view_controls_ui(
    ui: &mut egui::Ui,
    name: &str,
    settings: &mut ViewSettings,
    shown: Option<ValueRange>,
) -> bool {
    let before = *settings;
    ui.horizontal_wrapped(|ui| {
        ComboBox::from_label(format!("{name} colormap"))
            .selected_text(settings.colormap.to_string())
            .show_ui(ui, |ui| {
                for map in Colormap::ALL {
                    let label = if map.is_diverging() {
                        format!("{map} (diverging)")
                    } else {
                        map.to_string()
                    };
                    ui.selectable_value(&mut settings.colormap, map, label);
                }
            });
        ComboBox::from_label(format!("{name} range"))
            .selected_text(settings.range_kind.to_string())
            .show_ui(ui, |ui| {
                for kind in RangeKind::ALL {
                    ui.selectable_value(&mut settings.range_kind, kind, kind.to_string());
                }
            });
    });
    let symmetric = settings.colormap.is_diverging() && settings.range_kind != RangeKind::Fixed;
    ui.horizontal_wrapped(|ui| {
        range_bounds_ui(ui, settings, shown);
        if symmetric {
            ui.weak("· made symmetric: white is 0")
                .on_hover_text("a diverging map's middle colour means zero");
        }
    });
    *settings != before
}

/// The numbers of the selected range mode: percentile bounds or fixed values.
fn range_bounds_ui(ui: &mut egui::Ui, settings: &mut ViewSettings, shown: Option<ValueRange>) {
    match settings.range_kind {
        RangeKind::MinMax => {
            ui.weak("colours span the smallest to the largest shown value");
        }
        RangeKind::Percentile => {
            let label = ui.label("clip to percentiles");
            ui.add(
                DragValue::new(&mut settings.percentile.0)
                    .range(0.0..=100.0)
                    .speed(0.5)
                    .suffix(" %"),
            )
            .labelled_by(label.id);
            let label = ui.label("to");
            ui.add(
                DragValue::new(&mut settings.percentile.1)
                    .range(0.0..=100.0)
                    .speed(0.5)
                    .suffix(" %"),
            )
            .labelled_by(label.id);
        }
        RangeKind::Fixed => {
            let speed = ((settings.fixed.1 - settings.fixed.0).abs() / 200.0).max(1e-6);
            let label = ui.label("fixed from");
            ui.add(
                DragValue::new(&mut settings.fixed.0)
                    .speed(speed)
                    .max_decimals(6),
            )
            .labelled_by(label.id);
            let label = ui.label("to");
            ui.add(
                DragValue::new(&mut settings.fixed.1)
                    .speed(speed)
                    .max_decimals(6),
            )
            .labelled_by(label.id);
            if let Some(range) = shown {
                if ui
                    .small_button("use shown")
                    .on_hover_text("set the fixed range to the range on screen now")
                    .clicked()
                {
                    settings.fixed = (range.min, range.max);
                }
            }
        }
    }
}

/// Where the pointer is over a view, in cells of the full field.
pub type Hover = Option<(usize, usize)>;

/// A drawn picture: where it is and how the pointer acted on it, for the paint and probe tools.
pub struct Picture {
    /// The cell under the pointer.
    pub hovered: Hover,
    /// The picture's rectangle on screen.
    pub rect: Rect,
    /// The picture's response (clicks and drags).
    pub response: egui::Response,
}

/// A picture of a field of `size` cells as `viewport` shows it: what the tools on the pictures
/// share to go between the screen and cells.
#[derive(Clone, Copy)]
pub struct PictureCells<'a> {
    pub picture: &'a Picture,
    pub viewport: &'a Viewport,
    pub size: GridSize,
}

impl PictureCells<'_> {
    /// The point under `pos` in shape coordinates: (row, col), cell `r`'s centre at `r + 0.5`.
    pub fn shape_point(&self, pos: Pos2) -> (f32, f32) {
        let p = to_field(self.picture.rect, self.viewport, pos);
        (p.y * self.size.rows as f32, p.x * self.size.cols as f32)
    }

    /// The field point under `pos` in cells: (row, col), cell `r`'s centre at `r`.
    pub fn cell_point(&self, pos: Pos2) -> (f32, f32) {
        let (row, col) = self.shape_point(pos);
        (row - 0.5, col - 0.5)
    }

    /// The cell under `pos`, clamped onto the field.
    pub fn nearest_cell(&self, pos: Pos2) -> (usize, usize) {
        let (row, col) = self.cell_point(pos);
        (
            (row.round().max(0.0) as usize).min(self.size.rows - 1),
            (col.round().max(0.0) as usize).min(self.size.cols - 1),
        )
    }

    /// The width of a cell on screen, in points.
    pub fn cell_width(&self) -> f32 {
        self.picture.rect.width() * self.viewport.zoom / self.size.cols as f32
    }

    /// The screen position of a point in cells.
    pub fn screen_point(&self, (row, col): (f32, f32)) -> Pos2 {
        from_field(
            self.picture.rect,
            self.viewport,
            Vec2::new(
                (col + 0.5) / self.size.cols as f32,
                (row + 0.5) / self.size.rows as f32,
            ),
        )
    }
}

/// Draws the picture (fitted into `ui`'s available space, keeping the field's aspect) and its
/// colorbar. Scrolling zooms about the pointer, dragging with the middle button pans, and so do
/// dragging with the primary button and a double click (fit) when `primary_pans` (no tool is
/// active). `overlays` (the field's view) are drawn over the picture, and give the colorbar its
/// unit.
pub fn picture_ui(
    ui: &mut egui::Ui,
    state: &mut ViewState,
    colormap: Colormap,
    viewport: &mut Viewport,
    id: &str,
    primary_pans: bool,
    overlays: Option<&mut Overlays>,
) -> Picture {
    let (rows, cols) = state.field_size.map_or((1, 1), |s| (s.rows, s.cols));
    let unit = overlays.as_ref().and_then(|o| o.unit());
    let colorbar_width = COLORBAR_WIDTH + unit.map_or(0.0, |_| UNIT_WIDTH);
    let size = fitted_picture_size(ui, cols as f32 / rows as f32, colorbar_width);
    let ppp = ui.ctx().pixels_per_point();
    state.shown_pixels = (
        (size.x * ppp * viewport.zoom).round().max(1.0) as usize,
        (size.y * ppp * viewport.zoom).round().max(1.0) as usize,
    );
    let mut hovered = None;
    let (rect, response) = ui
        .horizontal(|ui| {
            let (rect, response) = ui.allocate_exact_size(size, Sense::click_and_drag());
            let response = response.on_hover_cursor(egui::CursorIcon::Crosshair);
            paint_picture(ui, rect, state, viewport, overlays);
            let stretched = stretch(size, cols as f32 / rows as f32);
            if stretched > 1.5 {
                ui.painter_at(rect).text(
                    rect.right_bottom() + Vec2::new(-4.0, -2.0),
                    egui::Align2::RIGHT_BOTTOM,
                    format!("cells ×{stretched:.0} tall"),
                    egui::FontId::proportional(11.0),
                    Color32::from_gray(230),
                );
            }
            zoom_and_pan(ui, &response, rect, viewport, primary_pans);
            hovered = hovered_cell(&response, rect, viewport, rows, cols);
            // The picture is the widget; its name lets screen readers and tests find it.
            response.widget_info(|| {
                egui::WidgetInfo::labeled(egui::Role::Image, true, format!("{id} picture"))
            });
            colorbar_ui(ui, colormap, state.range(), size.y, unit);
            (rect, response)
        })
        .inner;
    Picture {
        hovered,
        rect,
        response,
    }
}

/// The least height a picture is drawn at, in points, when the space allows: a thin strip
/// (a fin of 2 x 120 cells) is drawn taller than its cells rather than as a sliver.
pub const MIN_PICTURE_HEIGHT: f32 = 96.0;

/// The largest size of `aspect` (columns per row) that fits `ui`'s available space beside a
/// colorbar `colorbar_width` wide, at least [`MIN_PICTURE_HEIGHT`] tall where it fits.
fn fitted_picture_size(ui: &egui::Ui, aspect: f32, colorbar_width: f32) -> Vec2 {
    let available = ui.available_size();
    // The colorbar follows one item spacing to the right: together they fit the column, which
    // would otherwise widen the panel past the window (and cut the readout under it).
    let max_w = (available.x - colorbar_width - ui.spacing().item_spacing.x).max(32.0);
    let max_h = available.y.max(32.0);
    let fitted = if max_w / aspect <= max_h {
        Vec2::new(max_w, max_w / aspect)
    } else {
        Vec2::new(max_h * aspect, max_h)
    };
    Vec2::new(fitted.x, fitted.y.max(MIN_PICTURE_HEIGHT.min(max_h)))
}

/// How many times taller than wide a picture of `size` draws the cells of a field of
/// `aspect` (columns per row): 1 unless it is a stretched strip.
fn stretch(size: Vec2, aspect: f32) -> f32 {
    size.y / (size.x / aspect)
}

/// Paints the field's texture (or a waiting message) into `rect`, and the overlays over it.
fn paint_picture(
    ui: &egui::Ui,
    rect: Rect,
    state: &ViewState,
    viewport: &Viewport,
    overlays: Option<&mut Overlays>,
) {
    let painter = ui.painter_at(rect);
    painter.rect_filled(rect, 0.0, Color32::from_gray(20));
    match &state.texture {
        Some(texture) => {
            painter.image(texture.id(), rect, viewport.uv_rect(), Color32::WHITE);
            if let Some(overlays) = overlays {
                overlays.paint(&painter, rect, viewport, state);
            }
        }
        None => {
            painter.text(
                rect.center(),
                egui::Align2::CENTER_CENTER,
                "waiting for the field…",
                egui::FontId::proportional(14.0),
                Color32::GRAY,
            );
        }
    }
}

/// Zooms about the pointer on scrolling; pans on dragging with the middle button, or the
/// primary one when `primary_pans` (which also lets a double click fit the picture again).
fn zoom_and_pan(
    ui: &egui::Ui,
    response: &egui::Response,
    rect: Rect,
    viewport: &mut Viewport,
    primary_pans: bool,
) {
    if response.hovered() {
        let scroll = ui.input(|i| i.smooth_scroll_delta.y);
        if scroll != 0.0 {
            if let Some(pointer) = response.hover_pos() {
                let before = to_field(rect, viewport, pointer);
                viewport.zoom *= (scroll / 200.0).exp();
                viewport.clamp();
                let after = to_field(rect, viewport, pointer);
                viewport.center += before - after;
                viewport.clamp();
            }
        }
    }
    if response.dragged_by(egui::PointerButton::Middle)
        || (primary_pans && response.dragged_by(egui::PointerButton::Primary))
    {
        let delta = response.drag_delta();
        viewport.center -=
            Vec2::new(delta.x / rect.width(), delta.y / rect.height()) / viewport.zoom;
        viewport.clamp();
    }
    if primary_pans && response.double_clicked() {
        *viewport = Viewport::default();
    }
}

/// The cell of a `rows` x `cols` field under the pointer, if it is over the picture.
fn hovered_cell(
    response: &egui::Response,
    rect: Rect,
    viewport: &Viewport,
    rows: usize,
    cols: usize,
) -> Hover {
    let pointer = response.hover_pos()?;
    let p = to_field(rect, viewport, pointer);
    if (0.0..1.0).contains(&p.x) && (0.0..1.0).contains(&p.y) {
        Some(((p.y * rows as f32) as usize, (p.x * cols as f32) as usize))
    } else {
        None
    }
}

/// The screen position of a field point (0..1 along columns and rows).
pub fn from_field(rect: Rect, viewport: &Viewport, point: Vec2) -> Pos2 {
    let uv = viewport.uv_rect();
    Pos2::new(
        rect.left() + (point.x - uv.left()) / uv.width() * rect.width(),
        rect.top() + (point.y - uv.top()) / uv.height() * rect.height(),
    )
}

/// The field point (0..1 along columns and rows) under a screen position.
pub fn to_field(rect: Rect, viewport: &Viewport, pos: Pos2) -> Vec2 {
    let uv = viewport.uv_rect();
    let t = Vec2::new(
        (pos.x - rect.left()) / rect.width(),
        (pos.y - rect.top()) / rect.height(),
    );
    Vec2::new(uv.left() + t.x * uv.width(), uv.top() + t.y * uv.height())
}

/// A vertical colorbar with five labelled ticks (with `unit`, if any), the maximum on top.
fn colorbar_ui(
    ui: &mut egui::Ui,
    colormap: Colormap,
    range: Option<ValueRange>,
    height: f32,
    unit: Option<&str>,
) {
    let width = COLORBAR_WIDTH + unit.map_or(0.0, |_| UNIT_WIDTH);
    let (rect, _) = ui.allocate_exact_size(Vec2::new(width, height), Sense::hover());
    let painter = ui.painter_at(rect);
    let bar = Rect::from_min_size(
        rect.min + Vec2::new(2.0, 6.0),
        Vec2::new(14.0, (height - 12.0).max(8.0)),
    );
    let table = colormap.table();
    let segments = 128;
    for i in 0..segments {
        let y0 = bar.top() + bar.height() * i as f32 / segments as f32;
        let y1 = bar.top() + bar.height() * (i + 1) as f32 / segments as f32;
        let index = 255 - (i * 256 / segments).min(255);
        let [r, g, b] = table[index];
        painter.rect_filled(
            Rect::from_min_max(Pos2::new(bar.left(), y0), Pos2::new(bar.right(), y1 + 0.5)),
            0.0,
            Color32::from_rgb(r, g, b),
        );
    }
    let stroke = ui.visuals().widgets.noninteractive.fg_stroke;
    painter.rect_stroke(
        bar,
        0.0,
        egui::Stroke::new(1.0, stroke.color),
        egui::StrokeKind::Outside,
    );
    if let Some(range) = range {
        // As many labels as fit a line apart (the two ends at least).
        let labels = ((bar.height() / 15.0) as usize + 1).clamp(2, 5);
        for i in 0..labels {
            let fraction = i as f32 / (labels - 1) as f32;
            let y = bar.bottom() - bar.height() * fraction;
            let value = range.min + (range.max - range.min) * fraction;
            painter.line_segment(
                [Pos2::new(bar.right(), y), Pos2::new(bar.right() + 4.0, y)],
                stroke,
            );
            painter.text(
                Pos2::new(bar.right() + 6.0, y),
                egui::Align2::LEFT_CENTER,
                match unit {
                    Some(unit) => format!("{} {unit}", format_value(value)),
                    None => format_value(value),
                },
                egui::FontId::monospace(11.0),
                stroke.color,
            );
        }
    }
}
