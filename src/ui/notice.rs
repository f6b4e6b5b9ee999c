//! Notices on screen: the colour of a [`Level`], the latest few [`Notices`] (newest last; repeats
//! collapse into one) above the diffusion views and in the tutorial panels.

use eframe::egui::{self, Color32, RichText};

pub use crate::session::notice::{Level, Notice};

impl Level {
    /// The colour its text is drawn in.
    pub fn color(self, ui: &egui::Ui) -> Color32 {
        match self {
            Self::Info => ui.visuals().weak_text_color(),
            Self::Warning => WARNING,
            Self::Error => ERROR,
        }
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

    /// The newest `shown`, newest first, each with a button that dismisses it.
    pub fn ui(&mut self, ui: &mut egui::Ui, shown: usize) {
        let mut dismiss = None;
        for (i, notice) in self.list.iter().enumerate().rev().take(shown) {
            ui.horizontal(|ui| {
                if ui.small_button("×").on_hover_text("dismiss").clicked() {
                    dismiss = Some(i);
                }
                notice_label(ui, notice);
            });
        }
        if let Some(i) = dismiss {
            self.list.remove(i);
        }
    }
}

/// One notice as a wrapped label in its level's colour.
pub fn notice_label(ui: &mut egui::Ui, notice: &Notice) {
    let color = notice.level.color(ui);
    ui.add(egui::Label::new(RichText::new(&notice.text).color(color)).wrap());
}
