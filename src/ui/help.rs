//! Help: a "Help" menu on the tab bar with the keyboard shortcuts (also F1 and ?), the equation
//! the diffusion tab steps, and an About window with heatlab's version.

use eframe::egui::{self, RichText};

/// The keys and pointer gestures of the app, as the shortcut list shows them.
pub const SHORTCUTS: &[(&str, &str)] = &[
    ("F1 or ?", "this list of shortcuts"),
    ("Ctrl+Q", "quit (the settings are saved)"),
    ("Space", "play or pause (diffusion tab)"),
    ("S", "take one step"),
    ("R", "back to the initial field, step 0"),
    ("B", "paint heat (again: back to navigating)"),
    ("P", "place, drag or right-click-remove probes"),
    ("L", "draw a line; its profile is plotted live"),
    (
        "M",
        "paint materials (heat problems; again: back to navigating)",
    ),
    ("Esc", "navigate: drag to pan"),
    ("Ctrl+Z", "undo the last paint stroke"),
    ("Ctrl+Shift+Z or Ctrl+Y", "redo it"),
    ("scroll over a view", "zoom about the pointer"),
    ("middle-drag", "pan, whatever the tool"),
    ("double-click a view", "show the whole field (navigating)"),
    (
        "Enter or click away",
        "apply a typed value (the coefficient)",
    ),
    (
        "drop a file on the window",
        "open a saved state, a scenario (.toml), a .npy array or a PNG/JPEG image",
    ),
];

/// The update the diffusion tab's plate takes each step, as the help shows it.
pub const EQUATION: &str = "f ← f − c · (4f − f_up − f_down − f_left − f_right)";

/// What the equation means, under it.
pub const EQUATION_NOTE: &str = "c is the coefficient (stable up to 0.25: above it the scheme \
    blows up); 4f − neighbours is the Laplacian the right-hand view shows. The boundary decides \
    the neighbours of edge cells. Heat problems (materials, heaters, sides) step the finite-volume \
    model of docs/physics.md in °C and seconds.";

/// Which help windows are open.
#[derive(Debug, Default)]
pub struct Help {
    /// The shortcut list (with the equation).
    pub shortcuts_open: bool,
    /// The About window.
    pub about_open: bool,
}

impl Help {
    /// The "Help" menu, for the tab bar.
    pub fn menu_ui(&mut self, ui: &mut egui::Ui) {
        ui.menu_button("Help", |ui| {
            if ui.button("Shortcuts and equation (F1)").clicked() {
                self.shortcuts_open = true;
                ui.close();
            }
            if ui.button("About heatlab").clicked() {
                self.about_open = true;
                ui.close();
            }
        });
    }

    /// F1 or ? (while no text field has the keyboard) toggles the shortcut list; draws the
    /// windows that are open.
    pub fn ui(&mut self, ctx: &egui::Context) {
        let toggle = !ctx.egui_wants_keyboard_input()
            && ctx.input(|i| {
                i.key_pressed(egui::Key::F1)
                    || i.key_pressed(egui::Key::Questionmark)
                    || i.events
                        .iter()
                        .any(|e| matches!(e, egui::Event::Text(text) if text == "?"))
            });
        if toggle {
            self.shortcuts_open = !self.shortcuts_open;
        }
        egui::Window::new("Shortcuts and equation")
            .open(&mut self.shortcuts_open)
            .collapsible(false)
            .resizable(false)
            .show(ctx, shortcuts_ui);
        egui::Window::new("About heatlab")
            .open(&mut self.about_open)
            .collapsible(false)
            .resizable(false)
            .show(ctx, about_ui);
    }
}

fn shortcuts_ui(ui: &mut egui::Ui) {
    egui::Grid::new("shortcuts")
        .num_columns(2)
        .striped(true)
        .show(ui, |ui| {
            for (keys, what) in SHORTCUTS {
                ui.label(RichText::new(*keys).monospace().strong());
                ui.label(*what);
                ui.end_row();
            }
        });
    ui.separator();
    equation_ui(ui);
}

fn equation_ui(ui: &mut egui::Ui) {
    ui.strong("The equation (the tutorial's plate, each step)");
    ui.label(RichText::new(EQUATION).monospace().size(15.0));
    ui.add(egui::Label::new(EQUATION_NOTE).wrap());
}

fn about_ui(ui: &mut egui::Ui) {
    ui.heading(format!("heatlab {}", version()));
    ui.label("GPU heat diffusion: a desktop app and a command line, CUDA and CPU backends.");
    ui.separator();
    equation_ui(ui);
}

/// heatlab's version, as Cargo.toml gives it.
pub fn version() -> &'static str {
    env!("CARGO_PKG_VERSION")
}
