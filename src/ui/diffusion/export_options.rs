//! How exported and recorded PNGs are drawn: with a colorbar or not, and how many pixels a
//! cell's side becomes (automatic: a small field is enlarged to be readable, a large one is
//! one pixel a cell).

use eframe::egui;

use heatlab_engine::export::frame::{png_cell_factor, PNG_MAX_SIDE};
use heatlab_engine::grid::GridSize;

use crate::settings::Settings;

/// The pixels per cell offered besides automatic.
const CHOICES: [usize; 7] = [1, 2, 4, 8, 16, 32, 64];

/// The colorbar switch and the pixels per cell, for a field of `size` (if one is there).
pub fn ui(ui: &mut egui::Ui, settings: &mut Settings, size: Option<GridSize>) {
    let shown = |asked: Option<usize>| match (asked, size) {
        (None, Some(size)) => format!("auto ({})", png_cell_factor(size, None)),
        (None, None) => "auto".to_string(),
        (Some(n), Some(size)) if png_cell_factor(size, Some(n)) < n => {
            format!("{n} (at most {} here)", png_cell_factor(size, Some(n)))
        }
        (Some(n), _) => n.to_string(),
    };
    // One row with the colorbar's switch: the export buttons stay where they were.
    ui.horizontal_wrapped(|ui| {
        ui.checkbox(&mut settings.export_colorbar, "colorbar in PNGs");
        let label = ui.label("pixels/cell");
        egui::ComboBox::from_id_salt("png pixels per cell")
            .selected_text(shown(settings.png_cell_pixels))
            .show_ui(ui, |ui| {
                ui.selectable_value(&mut settings.png_cell_pixels, None, shown(None));
                for n in CHOICES {
                    ui.selectable_value(&mut settings.png_cell_pixels, Some(n), n.to_string());
                }
            })
            .response
            .labelled_by(label.id)
            .on_hover_text(format!(
                "PNG pixels per cell: each cell a square of this many pixels in Field PNG, Laplacian PNG and \
                 recorded frames; auto enlarges a small field to about 512 pixels and leaves \
                 a large one at 1; a picture's longer side stays within {PNG_MAX_SIDE} pixels"
            ));
    });
}
