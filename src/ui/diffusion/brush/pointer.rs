//! The tools on the pictures: where the pointer is in cells, what a press, drag or release
//! does with the brush, the probes and the line, and the marks drawn over the pictures.

use eframe::egui::{self, Color32, Pos2, Stroke, Vec2};

use super::super::probes::{probe_color, MAX_PROBES};
use super::super::view::PictureCells;
use super::{ActiveStroke, PaintTools, Tool, PICK_DISTANCE};
use heatlab_engine::session::diffusion::{PaintCommand, SimCommand};

impl PaintTools {
    /// Handles the pointer on picture number `index` (0: field, 1: Laplacian).
    pub fn interact(&mut self, ui: &egui::Ui, index: usize, cells: PictureCells<'_>) {
        if self.brush_hover.is_some_and(|(i, _)| i == index) {
            self.brush_hover = None;
        }
        match self.tool {
            Tool::Navigate => {}
            Tool::Paint => self.paint_interact(ui, index, cells),
            Tool::Probe => self.probe_interact(cells),
            Tool::Line => self.line_interact(cells),
            Tool::Material => {
                let radius = self.brush.radius;
                self.materials.interact(ui, index, cells, radius);
            }
        }
    }

    pub(super) fn paint_interact(&mut self, ui: &egui::Ui, index: usize, cells: PictureCells<'_>) {
        let response = &cells.picture.response;
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
            let (row, col) = cells.cell_point(pos);
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
            let (row, col) = cells.cell_point(pos);
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
    pub(super) fn probe_at(&self, cells: PictureCells<'_>, pos: Pos2) -> Option<usize> {
        self.probes
            .all()
            .iter()
            .enumerate()
            .map(|(i, p)| {
                let at = cells.screen_point((p.row as f32, p.col as f32));
                (i, at.distance(pos))
            })
            .filter(|(_, d)| *d <= PICK_DISTANCE)
            .min_by(|a, b| a.1.total_cmp(&b.1))
            .map(|(i, _)| i)
    }

    pub(super) fn probe_interact(&mut self, cells: PictureCells<'_>) {
        let response = &cells.picture.response;
        let pointer = response.interact_pointer_pos().or(response.hover_pos());
        let Some(pos) = pointer else {
            return;
        };
        if response.drag_started_by(egui::PointerButton::Primary) {
            let press = response
                .ctx
                .input(|i| i.pointer.press_origin())
                .unwrap_or(pos);
            self.held_probe = self.probe_at(cells, press);
        }
        if let Some(index) = self.held_probe {
            if response.dragged_by(egui::PointerButton::Primary) {
                let (row, col) = cells.nearest_cell(pos);
                self.probes.move_to(index, row, col);
            }
            if response.drag_stopped() {
                self.held_probe = None;
                self.probes_edited = true;
            }
            return;
        }
        if response.secondary_clicked() {
            if let Some(index) = self.probe_at(cells, pos) {
                self.probes.remove(index);
                self.probes_edited = true;
            }
        } else if response.clicked() && self.probe_at(cells, pos).is_none() {
            let (row, col) = cells.nearest_cell(pos);
            self.probes_edited = true;
            if self.probes.add(row, col).is_none() {
                self.messages.push(format!(
                    "{MAX_PROBES} probes are placed already: right-click one to remove it"
                ));
            }
        }
    }

    pub(super) fn line_interact(&mut self, cells: PictureCells<'_>) {
        let response = &cells.picture.response;
        if response.secondary_clicked() {
            self.profile.clear();
            return;
        }
        if response.drag_started_by(egui::PointerButton::Primary) {
            let press = response.ctx.input(|i| i.pointer.press_origin());
            self.line_start = press
                .or(response.interact_pointer_pos())
                .map(|pos| cells.cell_point(pos));
        }
        if let (Some(start), Some(pos)) = (self.line_start, response.interact_pointer_pos()) {
            if response.dragged_by(egui::PointerButton::Primary) || response.drag_stopped() {
                let end = cells.cell_point(pos);
                self.profile.set(start, end, cells.size);
            }
        }
        if response.drag_stopped() {
            self.line_start = None;
        }
    }

    /// Draws the probes, the line and the brush outline over picture `index`.
    pub fn overlay(&mut self, ui: &egui::Ui, index: usize, cells: PictureCells<'_>) {
        let active = self.tool == Tool::Material;
        let radius = self.brush.radius;
        self.materials.overlay(ui, index, cells, radius, active);
        let painter = ui.painter_at(cells.picture.rect);
        if let Some((start, end)) = self.profile.segment() {
            let a = cells.screen_point(start);
            let b = cells.screen_point(end);
            painter.line_segment([a, b], Stroke::new(3.0, Color32::BLACK));
            painter.line_segment([a, b], Stroke::new(1.5, Color32::WHITE));
            painter.circle_filled(a, 3.5, Color32::WHITE);
            painter.circle_stroke(b, 3.5, Stroke::new(1.5, Color32::WHITE));
        }
        for probe in self.probes.all() {
            let at = cells.screen_point((probe.row as f32, probe.col as f32));
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
            let radius = (self.brush.radius.max(0.5) * cells.cell_width()).max(2.0);
            painter.circle_stroke(pos, radius, Stroke::new(1.0, Color32::WHITE));
        }
    }
}
