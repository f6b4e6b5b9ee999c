//! The Gallery menu of the app's top bar: the classic problems shipped with heatlab, listed by
//! topic, each with what to look for as its hover text. Choosing one opens it in the diffusion
//! tab (its initial field and problem, see [`super::diffusion::DiffusionPanel::open_gallery`]).

use eframe::egui;

use crate::scenario::gallery::{of_topic, GalleryEntry, Topic};

/// The menu button and, while open, the list; returns the problem chosen this frame.
pub fn menu_ui(ui: &mut egui::Ui) -> Option<&'static GalleryEntry> {
    let mut chosen = None;
    ui.menu_button("Gallery", |ui| {
        ui.set_min_width(340.0);
        for (i, topic) in Topic::ALL.into_iter().enumerate() {
            if i > 0 {
                ui.separator();
            }
            ui.label(egui::RichText::new(topic.title()).strong());
            for entry in of_topic(topic) {
                let mut label = entry.title().to_string();
                if entry.exact.is_some() {
                    label.push_str("  (exact answer)");
                }
                let button = ui.button(label).on_hover_text(entry.description());
                if button.clicked() {
                    chosen = Some(entry);
                    ui.close();
                }
            }
        }
    });
    chosen
}
