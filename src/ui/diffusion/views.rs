//! The centre of the diffusion panel: the field and its Laplacian side by side, each with its
//! colormap and range controls, sharing one zoom and pan; the zoom buttons and the readout of
//! the hovered cell below them; and the status line above everything.

use eframe::egui::{self, Color32};

use crate::render::format_value;
use crate::render::label::readout_value;

use super::super::settings::Settings;
use super::brush::PaintTools;
use super::command::DiffusionCommand;
use super::view::{self, Hover, ViewState, Viewport};
use super::SimState;
use crate::grid::GridSize;

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
        let mut hovered = None;
        let ranges = (self.field.range(), self.laplacian.range());
        let mut viewport = self.viewport;
        ui.columns(2, |columns| {
            let (left, right) = columns.split_at_mut(1);
            let (left, right) = (&mut left[0], &mut right[0]);
            left.strong("Field");
            let (mut field, mut laplacian) = (settings.field_view, settings.laplacian_view);
            let mut changed = view::view_controls_ui(left, "Field", &mut field, ranges.0);
            right.strong("Laplacian  (4f − neighbours)");
            changed |= view::view_controls_ui(right, "Laplacian", &mut laplacian, ranges.1);
            if changed {
                commands.push(DiffusionCommand::SetViews { field, laplacian });
            }
            let height =
                (left.available_height().min(right.available_height()) - READOUT_HEIGHT).max(64.0);
            let sides = [
                (left, &mut self.field, field.colormap, "field"),
                (right, &mut self.laplacian, laplacian.colormap, "Laplacian"),
            ];
            for (index, (column, state, colormap, name)) in sides.into_iter().enumerate() {
                column.allocate_ui(egui::vec2(column.available_width(), height), |ui| {
                    let picture = view::picture_ui(
                        ui,
                        state,
                        colormap,
                        &mut viewport,
                        name,
                        tools.primary_pans(),
                    );
                    hovered = hovered.or(picture.hovered);
                    tools.interact(ui, index, &picture, &viewport, field_size);
                    tools.overlay(ui, index, &picture, &viewport, field_size);
                });
            }
        });
        self.viewport = viewport;
        self.hovered = hovered;
        ui.horizontal(|ui| {
            zoom_buttons_ui(ui, commands);
            ui.separator();
            tools.toolbar_ui(ui);
            self.readout_ui(ui);
        });
    }

    fn readout_ui(&self, ui: &mut egui::Ui) {
        let Some((row, col)) = self.hovered else {
            ui.weak(format!(
                "zoom {:.1}× · scroll to zoom, drag to pan, double-click to fit · hover for values",
                self.viewport.zoom
            ));
            return;
        };
        let mut text = format!("row {row}, col {col}");
        if let Some((value, factor)) = self.field.value_at(row, col) {
            text += &format!("   field {}", readout_value(value));
            if let Some((laplacian, _)) = self.laplacian.value_at(row, col) {
                text += &format!("   Laplacian {}", readout_value(laplacian));
            }
            if factor > 1 {
                text += &format!("   (means of {factor}×{factor} cells: the view is reduced; zoom in for single cells)");
            }
        }
        ui.add(egui::Label::new(egui::RichText::new(text).monospace()).truncate());
    }
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

/// The status line: field, step, coefficient, backend, statistics, playing.
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
        ui.separator();
        ui.label(format!(
            "coeff {} · {}",
            settings.step.coeff, settings.step.boundary
        ));
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
