//! The readout of the hovered cell, drawn beside the pointer and kept inside the picture. On
//! the tutorial's plate: the field's and the Laplacian's values. With a heat problem: the
//! cell's kind (its material), its temperature in °C and the heat-flux magnitude in W/m², from
//! the same gradient as the arrows.

use eframe::egui::{self, Pos2, Rect};

use heatlab_engine::problem::HeatProblem;
use heatlab_engine::render::flux::{Conductivity, FluxSource};
use heatlab_engine::render::label::readout_value;

use super::view::ViewState;

/// Gap between the pointer and the readout, in points.
const POINTER_GAP: f32 = 16.0;

/// The readout of cell `(row, col)`: its values as the views show them, and with a problem its
/// kind, temperature and heat flux.
pub fn readout_text(
    row: usize,
    col: usize,
    field: &ViewState,
    laplacian: &ViewState,
    problem: Option<&HeatProblem>,
) -> String {
    let mut text = format!("row {row}, col {col}");
    let Some((value, factor)) = field.value_at(row, col) else {
        return text;
    };
    match problem {
        Some(problem) => {
            if let Some(kind) = problem
                .map
                .get(row * problem.size.cols + col)
                .and_then(|&k| problem.kinds.get(usize::from(k)))
            {
                text += &format!("   {}", kind.name);
                if kind.name != kind.material.name {
                    text += &format!(" ({})", kind.material.name);
                }
            }
            text += &format!("   {} °C", readout_value(value));
            if let Some(flux) = flux_magnitude(row, col, field, problem) {
                text += &format!("   heat flux {:.4e} W/m²", flux);
            }
        }
        None => {
            text += &format!("   field {}", readout_value(value));
            if let Some((laplacian, _)) = laplacian.value_at(row, col) {
                text += &format!("   Laplacian {}", readout_value(laplacian));
            }
        }
    }
    if factor > 1 {
        text += &format!(
            "   (means of {factor}×{factor} cells: the view is reduced; zoom in for single cells)"
        );
    }
    text
}

/// |q| at a cell, W/m², from the field's preview as the arrows compute it.
fn flux_magnitude(row: usize, col: usize, field: &ViewState, problem: &HeatProblem) -> Option<f64> {
    let preview = field.preview()?;
    let conductivity = Conductivity::of(problem);
    let source = FluxSource {
        values: &preview.values,
        factor: preview.factor,
        field: field.field_size()?,
        conductivity: &conductivity,
        spacing: problem.spacing,
    };
    let [qx, qy] = source.flux_at_cell(row, col)?;
    Some(qx.hypot(qy))
}

/// Shows `text` beside `pointer`, on the side where it fits, never leaving `picture`: long
/// lines wrap to the picture's width.
pub fn readout_ui(ui: &egui::Ui, picture: Rect, pointer: Pos2, text: String) {
    let width = (picture.width() - 8.0).max(40.0);
    // Right of and below the pointer, flipped to its left or above it near the far edges.
    let right = pointer.x < picture.center().x;
    let below = pointer.y < picture.center().y;
    let pivot = match (right, below) {
        (true, true) => egui::Align2::LEFT_TOP,
        (false, true) => egui::Align2::RIGHT_TOP,
        (true, false) => egui::Align2::LEFT_BOTTOM,
        (false, false) => egui::Align2::RIGHT_BOTTOM,
    };
    let offset = egui::vec2(
        if right { POINTER_GAP } else { -POINTER_GAP },
        if below { POINTER_GAP } else { -POINTER_GAP },
    );
    egui::Area::new(egui::Id::unique("hover readout"))
        .order(egui::Order::Tooltip)
        .interactable(false)
        .fixed_pos(pointer + offset)
        .pivot(pivot)
        .constrain_to(picture)
        .show(ui.ctx(), |ui| {
            egui::Frame::popup(ui.style()).show(ui, |ui| {
                ui.set_max_width(width);
                ui.add(egui::Label::new(egui::RichText::new(text).monospace()).wrap());
            });
        });
}
