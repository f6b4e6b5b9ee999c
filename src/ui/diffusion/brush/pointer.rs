//! The tools on the pictures: where the pointer is in cells, what a press, drag or release
//! does with the brush, the probes and the line, and the marks drawn over the pictures.

use eframe::egui::{self, Color32, Pos2, Stroke, Vec2};

use heatlab_engine::grid::GridSize;

use super::super::probes::{probe_color, MAX_PROBES};
use super::super::view::{from_field, to_field, Picture, Viewport};
use super::{ActiveStroke, PaintTools, Tool, PICK_DISTANCE};
use heatlab_engine::session::diffusion::{PaintCommand, SimCommand};

/// The field point under `pos` in cells: (row, col), cell `r`'s centre at `r`.
pub(super) fn cell_point(
    picture: &Picture,
    viewport: &Viewport,
    size: GridSize,
    pos: Pos2,
) -> (f32, f32) {
    let p = to_field(picture.rect, viewport, pos);
    (p.y * size.rows as f32 - 0.5, p.x * size.cols as f32 - 0.5)
}

/// The cell under `pos`, clamped onto the field.
pub(super) fn nearest_cell(
    picture: &Picture,
    viewport: &Viewport,
    size: GridSize,
    pos: Pos2,
) -> (usize, usize) {
    let (row, col) = cell_point(picture, viewport, size, pos);
    (
        (row.round().max(0.0) as usize).min(size.rows - 1),
        (col.round().max(0.0) as usize).min(size.cols - 1),
    )
}

/// The screen position of a point in cells.
pub(super) fn screen_point(
    picture: &Picture,
    viewport: &Viewport,
    size: GridSize,
    (row, col): (f32, f32),
) -> Pos2 {
    from_field(
        picture.rect,
        viewport,
        Vec2::new(
            (col + 0.5) / size.cols as f32,
            (row + 0.5) / size.rows as f32,
        ),
    )
}

impl PaintTools {
    /// Handles the pointer on picture number `index` (0: field, 1: Laplacian).
    pub fn interact(
        &mut self,
        ui: &egui::Ui,
        index: usize,
        picture: &Picture,
        viewport: &Viewport,
        size: Option<GridSize>,
    ) {
        let Some(size) = size else {
            return;
        };
        if self.brush_hover.is_some_and(|(i, _)| i == index) {
            self.brush_hover = None;
        }
        match self.tool {
            Tool::Navigate => {}
            Tool::Paint => self.paint_interact(ui, index, picture, viewport, size),
            Tool::Probe => self.probe_interact(picture, viewport, size),
            Tool::Line => self.line_interact(picture, viewport, size),
            Tool::Material => {
                let radius = self.brush.radius;
                self.materials
                    .interact(ui, index, picture, viewport, size, radius);
            }
        }
    }

    pub(super) fn paint_interact(
        &mut self,
        ui: &egui::Ui,
        index: usize,
        picture: &Picture,
        viewport: &Viewport,
        size: GridSize,
    ) {
        let response = &picture.response;
        if let Some(pos) = response.hover_pos() {
            self.brush_hover = Some((index, pos));
        }
        let pointer = response.interact_pointer_pos().or(response.hover_pos());
        let removing_input = ui.input(|i| i.pointer.secondary_down() || i.modifiers.shift);
        let ours = self.stroke.is_some_and(|s| s.picture == index);
        if response.is_pointer_button_down_on() && !ui.input(|i| i.pointer.middle_down()) {
            let Some(pos) = pointer else {
                return;
            };
            let stroke = *self.stroke.get_or_insert(ActiveStroke {
                picture: index,
                removing: removing_input,
            });
            if stroke.picture != index {
                return;
            }
            let (row, col) = cell_point(picture, viewport, size, pos);
            self.outgoing
                .push(SimCommand::Paint(PaintCommand::StrokeTo {
                    row,
                    col,
                    brush: self.brush.brush(stroke.removing),
                }));
        } else if ours {
            self.stroke = None;
            self.outgoing
                .push(SimCommand::Paint(PaintCommand::EndStroke));
        } else if response.clicked() || response.secondary_clicked() {
            // Pressed and released within one frame: a single dab.
            let Some(pos) = pointer else {
                return;
            };
            let removing = response.secondary_clicked() || removing_input;
            let (row, col) = cell_point(picture, viewport, size, pos);
            self.outgoing
                .push(SimCommand::Paint(PaintCommand::StrokeTo {
                    row,
                    col,
                    brush: self.brush.brush(removing),
                }));
            self.outgoing
                .push(SimCommand::Paint(PaintCommand::EndStroke));
        }
    }

    /// The probe within [`PICK_DISTANCE`] of `pos`, nearest first.
    pub(super) fn probe_at(
        &self,
        picture: &Picture,
        viewport: &Viewport,
        size: GridSize,
        pos: Pos2,
    ) -> Option<usize> {
        self.probes
            .all()
            .iter()
            .enumerate()
            .map(|(i, p)| {
                let at = screen_point(picture, viewport, size, (p.row as f32, p.col as f32));
                (i, at.distance(pos))
            })
            .filter(|(_, d)| *d <= PICK_DISTANCE)
            .min_by(|a, b| a.1.total_cmp(&b.1))
            .map(|(i, _)| i)
    }

    pub(super) fn probe_interact(
        &mut self,
        picture: &Picture,
        viewport: &Viewport,
        size: GridSize,
    ) {
        let response = &picture.response;
        let pointer = response.interact_pointer_pos().or(response.hover_pos());
        let Some(pos) = pointer else {
            return;
        };
        if response.drag_started_by(egui::PointerButton::Primary) {
            let press = response
                .ctx
                .input(|i| i.pointer.press_origin())
                .unwrap_or(pos);
            self.held_probe = self.probe_at(picture, viewport, size, press);
        }
        if let Some(index) = self.held_probe {
            if response.dragged_by(egui::PointerButton::Primary) {
                let (row, col) = nearest_cell(picture, viewport, size, pos);
                self.probes.move_to(index, row, col);
            }
            if response.drag_stopped() {
                self.held_probe = None;
            }
            return;
        }
        if response.secondary_clicked() {
            if let Some(index) = self.probe_at(picture, viewport, size, pos) {
                self.probes.remove(index);
            }
        } else if response.clicked() && self.probe_at(picture, viewport, size, pos).is_none() {
            let (row, col) = nearest_cell(picture, viewport, size, pos);
            if self.probes.add(row, col).is_none() {
                self.messages.push(format!(
                    "{MAX_PROBES} probes are placed already: right-click one to remove it"
                ));
            }
        }
    }

    pub(super) fn line_interact(&mut self, picture: &Picture, viewport: &Viewport, size: GridSize) {
        let response = &picture.response;
        if response.secondary_clicked() {
            self.profile.clear();
            return;
        }
        if response.drag_started_by(egui::PointerButton::Primary) {
            let press = response.ctx.input(|i| i.pointer.press_origin());
            self.line_start = press
                .or(response.interact_pointer_pos())
                .map(|pos| cell_point(picture, viewport, size, pos));
        }
        if let (Some(start), Some(pos)) = (self.line_start, response.interact_pointer_pos()) {
            if response.dragged_by(egui::PointerButton::Primary) || response.drag_stopped() {
                let end = cell_point(picture, viewport, size, pos);
                self.profile.set(start, end, size);
            }
        }
        if response.drag_stopped() {
            self.line_start = None;
        }
    }

    /// Draws the probes, the line and the brush outline over picture `index`.
    pub fn overlay(
        &mut self,
        ui: &egui::Ui,
        index: usize,
        picture: &Picture,
        viewport: &Viewport,
        size: Option<GridSize>,
    ) {
        let Some(size) = size else {
            return;
        };
        let active = self.tool == Tool::Material;
        let radius = self.brush.radius;
        self.materials
            .overlay(ui, index, picture, viewport, size, radius, active);
        let painter = ui.painter_at(picture.rect);
        if let Some((start, end)) = self.profile.segment() {
            let a = screen_point(picture, viewport, size, start);
            let b = screen_point(picture, viewport, size, end);
            painter.line_segment([a, b], Stroke::new(3.0, Color32::BLACK));
            painter.line_segment([a, b], Stroke::new(1.5, Color32::WHITE));
            painter.circle_filled(a, 3.5, Color32::WHITE);
            painter.circle_stroke(b, 3.5, Stroke::new(1.5, Color32::WHITE));
        }
        for probe in self.probes.all() {
            let at = screen_point(
                picture,
                viewport,
                size,
                (probe.row as f32, probe.col as f32),
            );
            let color = probe_color(probe.number);
            painter.circle_stroke(at, 5.0, Stroke::new(3.0, Color32::BLACK));
            painter.circle_stroke(at, 5.0, Stroke::new(1.5, color));
            painter.text(
                at + Vec2::new(7.0, -7.0),
                egui::Align2::LEFT_BOTTOM,
                probe.name(),
                egui::FontId::proportional(13.0),
                color,
            );
        }
        if let Some((_, pos)) = self.brush_hover.filter(|(i, _)| *i == index) {
            let cell_width = picture.rect.width() * viewport.zoom / size.cols as f32;
            let radius = (self.brush.radius.max(0.5) * cell_width).max(2.0);
            painter.circle_stroke(pos, radius, Stroke::new(1.0, Color32::WHITE));
        }
    }
}
