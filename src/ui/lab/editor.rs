//! The Kernel lab's source editor: line numbers beside a highlighted, editable text, with the
//! lines NVRTC complained about marked in both.

use std::collections::BTreeMap;

use eframe::egui::{self, Color32};

use super::highlight::highlight;

/// Background of a line with an error.
pub const ERROR_LINE: Color32 = Color32::from_rgba_premultiplied(120, 30, 30, 120);
/// Background of a line with a warning.
pub const WARNING_LINE: Color32 = Color32::from_rgba_premultiplied(110, 85, 20, 110);

/// Draws `source` with line numbers; `marked` lines (1-based) are shown with their colour.
/// Returns whether the text changed. `editable: false` shows it read-only; `scroll_to_line`
/// scrolls so that this line shows near the top; `label` names the text for screen readers.
pub fn code_editor_ui(
    ui: &mut egui::Ui,
    id: &str,
    label: egui::Id,
    source: &mut String,
    marked: &BTreeMap<usize, Color32>,
    editable: bool,
    scroll_to_line: Option<usize>,
) -> bool {
    let font = egui::TextStyle::Monospace.resolve(ui.style());
    let dark = ui.visuals().dark_mode;
    let lines = source.lines().count().max(1) + usize::from(source.ends_with('\n'));
    let mut changed = false;
    let mut area = egui::ScrollArea::both()
        .id_salt(id)
        .auto_shrink([false, false]);
    if let Some(line) = scroll_to_line {
        let row_height = ui.text_style_height(&egui::TextStyle::Monospace);
        area = area.vertical_scroll_offset(line.saturating_sub(4) as f32 * row_height);
    }
    area.show(ui, |ui| {
        ui.horizontal_top(|ui| {
            ui.spacing_mut().item_spacing.x = 6.0;
            let width = lines.to_string().len();
            let mut numbers = egui::text::LayoutJob::default();
            for line in 1..=lines {
                let marker = marked.get(&line);
                let text = format!(
                    "{}{line:>width$}\n",
                    if marker.is_some() { "▶" } else { " " }
                );
                numbers.append(
                    &text,
                    0.0,
                    egui::TextFormat {
                        font_id: font.clone(),
                        color: match marker {
                            Some(_) => Color32::from_rgb(240, 90, 80),
                            None => ui.visuals().weak_text_color(),
                        },
                        ..Default::default()
                    },
                );
            }
            let numbers_label = ui.add(egui::Label::new(numbers).selectable(false));
            numbers_label.on_hover_text("line numbers; ▶ marks a line NVRTC complained about");
            let mut layouter = |ui: &egui::Ui, text: &dyn egui::TextBuffer, wrap: f32| {
                let mut job = highlight(text.as_str(), font.clone(), dark, marked);
                job.wrap.max_width = if wrap > 0.0 { f32::INFINITY } else { wrap };
                ui.fonts_mut(|fonts| fonts.layout_job(job))
            };
            let edit = egui::TextEdit::multiline(source)
                .id_salt(id)
                .code_editor()
                .interactive(editable)
                .margin(egui::Margin::ZERO)
                .frame(egui::Frame::NONE)
                .desired_width(f32::INFINITY)
                .desired_rows(lines)
                .lock_focus(true)
                .layouter(&mut layouter);
            changed = ui.add(edit).labelled_by(label).changed();
        });
    });
    changed
}
