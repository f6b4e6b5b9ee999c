//! The Gallery menu of the app's top bar: the classic problems shipped with heatlab, listed by
//! topic, each with what to look for as its hover text. Choosing one opens it in the diffusion
//! tab (its initial field and problem, see [`super::diffusion::DiffusionPanel::open_gallery`]).

use eframe::egui;

use heatlab_engine::scenario::gallery::{of_topic, GalleryEntry, Topic};

/// What the menu's person chose.
#[derive(Debug, Clone, Copy)]
pub enum GalleryChoice {
    /// The notebook's plate: the tutorial's dimensionless jagged field, stepped with the
    /// coefficient and boundary.
    Plate,
    /// A shipped problem.
    Entry(&'static GalleryEntry),
    /// "New problem…": the window that builds one.
    NewProblem,
}

/// The menu button and, while open, the list (opened from here when `open`); returns what was
/// chosen this frame.
pub fn menu_ui(ui: &mut egui::Ui, open: bool) -> Option<GalleryChoice> {
    let mut chosen = None;
    let menu = ui.menu_button("Gallery", |ui| {
        ui.set_min_width(340.0);
        ui.label(egui::RichText::new("The notebook").strong());
        if ui
            .button("The notebook's plate (dimensionless)")
            .on_hover_text(
                "the tutorial's plate: a jagged field made from the seed, exponent and cutoff \
                 under Field, stepped with the coefficient and boundary under Simulation, as \
                 the notebook steps it",
            )
            .clicked()
        {
            chosen = Some(GalleryChoice::Plate);
            ui.close();
        }
        if ui
            .button("New problem…")
            .on_hover_text(
                "build your own: a grid of cells, a material (or your own), a starting \
                 temperature, a title",
            )
            .clicked()
        {
            chosen = Some(GalleryChoice::NewProblem);
            ui.close();
        }
        ui.separator();
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
                    chosen = Some(GalleryChoice::Entry(entry));
                    ui.close();
                }
            }
        }
    });
    if open && !egui::Popup::is_id_open(ui.ctx(), egui::Popup::default_response_id(&menu.response))
    {
        egui::Popup::open_id(ui.ctx(), egui::Popup::default_response_id(&menu.response));
    }
    chosen
}

/// A gallery problem to open once the first field is ready (`heatlab gui --gallery NAME`),
/// and whether the menu is then shown open (for a screenshot of it).
#[derive(Debug, Default)]
pub struct GalleryStart {
    entry: Option<&'static GalleryEntry>,
    menu_open: bool,
    opened: bool,
}

impl GalleryStart {
    /// Opens the problem `name` at the start, then shows the menu open when `show_menu`.
    pub fn new(name: Option<&str>, show_menu: bool) -> Result<Self, String> {
        let entry = match name {
            Some(name) => Some(
                heatlab_engine::scenario::gallery::find(name).ok_or_else(|| {
                    format!(
                    "no gallery problem is called \"{name}\" (heatlab scenario list names them)"
                )
                })?,
            ),
            None => None,
        };
        Ok(Self {
            entry,
            menu_open: show_menu && entry.is_some(),
            opened: false,
        })
    }

    /// As [`GalleryStart::new`], an unknown name a notice on `panel`.
    pub fn of(
        name: Option<&str>,
        show_menu: bool,
        panel: &mut super::diffusion::DiffusionPanel,
    ) -> Self {
        Self::new(name, show_menu).unwrap_or_else(|error| {
            panel.notify(super::notice::Level::Error, error);
            Self::default()
        })
    }

    /// The problem to open now: once, when the first field is `ready`.
    pub fn take_when(&mut self, ready: bool) -> Option<&'static GalleryEntry> {
        if !ready || self.opened {
            return None;
        }
        self.opened = true;
        self.entry
    }

    /// Whether the menu is to be shown open this frame (after the problem was opened).
    pub fn menu_open(&self) -> bool {
        self.menu_open && self.opened
    }
}
