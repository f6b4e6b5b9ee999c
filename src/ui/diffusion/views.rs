//! The centre of the diffusion panel: the field and its Laplacian side by side, each with its
//! colormap and range controls, sharing one zoom and pan; the zoom buttons and the readout of
//! the hovered cell below them; and the status line above everything.

use eframe::egui::{self, Color32};

use heatlab_engine::render::format_value;

use super::brush::PaintTools;
use super::command::DiffusionCommand;
use super::hover;
use super::overlays::Overlays;
use super::view::{self, Hover, PictureCells, ViewState, Viewport};
use super::SimState;
use crate::settings::{Settings, ViewSettings};
use heatlab_engine::grid::{GridSize, ValueRange};

/// Height of the readout line under the pictures, in points.
const READOUT_HEIGHT: f32 = 22.0;

/// The two views and what they share.
#[derive(Default)]
pub struct Views {
    /// The field view.
    pub field: ViewState,
    /// The Laplacian view.
    pub laplacian: ViewState,
    /// Zoom and pan of both.
    pub viewport: Viewport,
    /// The cell under the pointer.
    pub hovered: Hover,
    /// The problem's sides, drawn along the pictures' edges (none on the tutorial's plate).
    pub shown_sides: Option<heatlab_engine::problem::Sides>,
    /// Isotherms, heat-flux arrows and the scale bar over the field.
    pub overlays: Overlays,
}

impl Views {
    /// Both views with their controls, then the zoom buttons and the readout. `tools` act on
    /// the pictures and draw over them.
    pub fn ui(
        &mut self,
        ui: &mut egui::Ui,
        settings: &mut Settings,
        commands: &mut Vec<DiffusionCommand>,
        tools: &mut PaintTools,
        field_size: Option<GridSize>,
    ) {
        let pointer = self.pictures_ui(ui, settings, commands, tools, field_size);
        // In a narrow window the row wraps: every tool stays on screen.
        ui.horizontal_wrapped(|ui| {
            zoom_buttons_ui(ui, commands);
            ui.separator();
            tools.toolbar_ui(ui);
            self.overlays.toolbar_ui(ui);
            ui.separator();
            ui.weak(format!(
                "zoom {:.1}× · scroll to zoom, drag to pan, double-click to fit · hover for values",
                self.viewport.zoom
            ));
        });
        if let (Some((row, col)), Some((rect, at))) = (self.hovered, pointer) {
            let text = hover::readout_text(
                row,
                col,
                &self.field,
                &self.laplacian,
                self.overlays.problem(),
            );
            hover::readout_ui(ui, rect, at, text);
        }
    }

    /// The two columns: each view's controls over its picture, with the tools acting on it.
    /// Returns the hovered picture's rectangle and the pointer, for the readout.
    fn pictures_ui(
        &mut self,
        ui: &mut egui::Ui,
        settings: &Settings,
        commands: &mut Vec<DiffusionCommand>,
        tools: &mut PaintTools,
        field_size: Option<GridSize>,
    ) -> Option<(egui::Rect, egui::Pos2)> {
        let mut hovered = None;
        let mut pointer = None;
        let ranges = (self.field.range(), self.laplacian.range());
        let mut viewport = self.viewport;
        let shown_sides = self.shown_sides;
        ui.columns(2, |columns| {
            let (left, right) = columns.split_at_mut(1);
            let (left, right) = (&mut left[0], &mut right[0]);
            let (field, laplacian) = view_controls_ui(left, right, settings, ranges, commands);
            let height =
                (left.available_height().min(right.available_height()) - READOUT_HEIGHT).max(120.0);
            let sides = [
                (
                    left,
                    &mut self.field,
                    field.colormap,
                    "field",
                    Some(&mut self.overlays),
                ),
                (
                    right,
                    &mut self.laplacian,
                    laplacian.colormap,
                    "Laplacian",
                    None,
                ),
            ];
            for (index, (column, state, colormap, name, overlays)) in sides.into_iter().enumerate()
            {
                column.allocate_ui(egui::vec2(column.available_width(), height), |ui| {
                    let picture = view::picture_ui(
                        ui,
                        state,
                        colormap,
                        &mut viewport,
                        name,
                        tools.primary_pans(),
                        overlays,
                    );
                    if picture.hovered.is_some() {
                        pointer = picture.response.hover_pos().map(|at| (picture.rect, at));
                    }
                    hovered = hovered.or(picture.hovered);
                    if let Some(size) = field_size {
                        let cells = PictureCells {
                            picture: &picture,
                            viewport: &viewport,
                            size,
                        };
                        tools.interact(ui, index, cells);
                        tools.overlay(ui, index, cells);
                    }
                    if let Some(sides) = &shown_sides {
                        super::sides::overlay(ui, &picture, &viewport, sides);
                    }
                });
            }
        });
        self.viewport = viewport;
        self.hovered = hovered;
        pointer
    }
}

/// Each view's title and colormap and range controls (with the `ranges` shown), at the top of
/// its column; a change becomes a command. Returns the views' settings as drawn.
fn view_controls_ui(
    left: &mut egui::Ui,
    right: &mut egui::Ui,
    settings: &Settings,
    ranges: (Option<ValueRange>, Option<ValueRange>),
    commands: &mut Vec<DiffusionCommand>,
) -> (ViewSettings, ViewSettings) {
    left.strong("Field");
    let (mut field, mut laplacian) = (settings.field_view, settings.laplacian_view);
    let mut changed = view::view_controls_ui(left, "Field", &mut field, ranges.0);
    right.strong("Laplacian  (4f − neighbours)");
    changed |= view::view_controls_ui(right, "Laplacian", &mut laplacian, ranges.1);
    if changed {
        commands.push(DiffusionCommand::SetViews { field, laplacian });
    }
    (field, laplacian)
}

fn zoom_buttons_ui(ui: &mut egui::Ui, commands: &mut Vec<DiffusionCommand>) {
    if ui.small_button("−").on_hover_text("zoom out").clicked() {
        commands.push(DiffusionCommand::ZoomOut);
    }
    if ui
        .small_button("+")
        .on_hover_text("zoom in (or scroll over a view)")
        .clicked()
    {
        commands.push(DiffusionCommand::ZoomIn);
    }
    if ui
        .small_button("fit")
        .on_hover_text("show the whole field (or double-click a view)")
        .clicked()
    {
        commands.push(DiffusionCommand::Fit);
    }
}

/// A problem's four sides for the status line: "top h 25 W/m²K, 20 °C · bottom …".
pub fn sides_text(sides: &heatlab_engine::problem::Sides) -> String {
    use heatlab_engine::problem::Side;
    let each: Vec<String> = [Side::Top, Side::Bottom, Side::Left, Side::Right]
        .into_iter()
        .map(|side| format!("{side} {}", super::sides::short_label(sides.get(side))))
        .collect();
    format!("sides: {}", each.join(" · "))
}

/// The status line: field, step, simulated time, the coefficient and boundary of the plate or
/// the sides of a problem, backend, statistics, playing.
pub fn status_ui(ui: &mut egui::Ui, settings: &Settings, state: &SimState) {
    ui.horizontal_wrapped(|ui| {
        ui.strong("heatlab");
        ui.separator();
        match state.field_size {
            Some(size) => ui.label(format!("{size} field")),
            None => ui.label("no field yet"),
        };
        ui.separator();
        ui.label(format!("step {}", state.step));
        if let Some(problem) = &state.problem_frame {
            ui.separator();
            ui.label(super::energy::simulated_time_text(problem));
        }
        ui.separator();
        // A heat problem steps with its own sides and time step, not the plate's coefficient
        // and boundary.
        match &state.problem {
            Some(problem) => ui.label(sides_text(&problem.sides)),
            None => ui.label(format!(
                "coeff {} · {}",
                settings.step.coeff, settings.step.boundary
            )),
        };
        if let Some(status) = &state.backend {
            ui.separator();
            ui.label(format!(
                "{} · {}",
                status.kind.to_string().to_uppercase(),
                status.device
            ));
        }
        if let Some(stats) = state.stats {
            ui.separator();
            ui.label(format!(
                "total heat {:.6e} · min {} · max {}",
                stats.total,
                format_value(stats.min),
                format_value(stats.max)
            ));
        }
        if state.playing {
            ui.separator();
            ui.colored_label(Color32::from_rgb(90, 200, 120), "playing");
        }
    });
}
