//! Notices on screen: the colour of a [`Level`], the latest few [`Notices`] (newest last; repeats
//! collapse into one) in a strip of fixed height above the diffusion views (a new notice never
//! moves what is under the pointer), and in the tutorial panels.

use eframe::egui::{self, Color32, RichText};

pub use heatlab_engine::session::notice::{Level, Notice};

/// The colour a notice of this level is drawn in.
pub fn level_color(level: Level, ui: &egui::Ui) -> Color32 {
    match level {
        Level::Info => ui.visuals().weak_text_color(),
        Level::Warning => WARNING,
        Level::Error => ERROR,
    }
}

/// Amber, for warnings and cautions.
pub const WARNING: Color32 = Color32::from_rgb(220, 170, 60);
/// Red, for failures and refusals.
pub const ERROR: Color32 = Color32::from_rgb(240, 90, 80);

/// The latest few notices.
#[derive(Debug, Clone, Default)]
pub struct Notices {
    list: Vec<Notice>,
}

impl Notices {
    /// How many are kept.
    const KEPT: usize = 6;

    /// Adds a notice; an equal one already there moves to the end instead of repeating.
    pub fn push(&mut self, level: Level, text: impl Into<String>) {
        let notice = Notice::new(level, text);
        self.list.retain(|n| n.text != notice.text);
        self.list.push(notice);
        if self.list.len() > Self::KEPT {
            self.list.remove(0);
        }
    }

    /// Every notice, oldest first.
    pub fn as_slice(&self) -> &[Notice] {
        &self.list
    }

    /// How many there are.
    pub fn len(&self) -> usize {
        self.list.len()
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.list.is_empty()
    }

    /// Whether one says `text` already.
    pub fn contains(&self, text: &str) -> bool {
        self.list.iter().any(|n| n.text == text)
    }

    /// Removes the notice saying `text`, if there is one (a notice of work under way, once the
    /// work is done).
    pub fn remove(&mut self, text: &str) {
        self.list.retain(|n| n.text != text);
    }

    /// Removes every notice starting with `prefix` (notices about a state that is gone, such
    /// as probes of a previous problem).
    pub fn remove_starting_with(&mut self, prefix: &str) {
        self.list.retain(|n| !n.text.starts_with(prefix));
    }

    /// The height of the strip [`Notices::ui`] draws for `shown` notices, in points: the same
    /// whether it holds none or all of them.
    pub fn strip_height(shown: usize) -> f32 {
        NOTICE_ROW_HEIGHT * shown as f32
    }

    /// The newest `shown`, newest first, one line each (cut with "…"; the whole text on hover),
    /// each with a button that dismisses it, in a strip of [`Notices::strip_height`].
    pub fn ui(&mut self, ui: &mut egui::Ui, shown: usize) {
        let mut dismiss = None;
        let size = egui::vec2(ui.available_width(), Self::strip_height(shown));
        ui.allocate_ui_with_layout(size, egui::Layout::top_down(egui::Align::Min), |ui| {
            ui.set_min_size(size);
            for (i, notice) in self.list.iter().enumerate().rev().take(shown) {
                ui.allocate_ui(egui::vec2(size.x, NOTICE_ROW_HEIGHT), |ui| {
                    ui.horizontal(|ui| {
                        if ui.small_button("×").on_hover_text("dismiss").clicked() {
                            dismiss = Some(i);
                        }
                        let color = level_color(notice.level, ui);
                        let text = RichText::new(&notice.text).color(color);
                        // A cut label shows its whole text on hover by itself (once).
                        ui.add(egui::Label::new(text).truncate());
                    });
                });
            }
        });
        if let Some(i) = dismiss {
            self.list.remove(i);
        }
    }
}

/// The height of one notice in the strip above the diffusion views, in points.
const NOTICE_ROW_HEIGHT: f32 = 22.0;

/// One notice as a wrapped label in its level's colour.
pub fn notice_label(ui: &mut egui::Ui, notice: &Notice) {
    let color = level_color(notice.level, ui);
    ui.add(egui::Label::new(RichText::new(&notice.text).color(color)).wrap());
}
