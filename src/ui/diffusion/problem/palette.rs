//! The palette: the problem's own kinds of cells and the material library (grouped by
//! conductivity, filtered by a search), each a chip in its map colour with its properties on
//! hover. Clicking one chooses what the Material tool paints.

use eframe::egui::{self, Color32, RichText, Sense, Vec2};

use heatlab_engine::import::material_map::{Legend, Rgb};
use heatlab_engine::problem::{material, CellKind, HeatProblem, HeaterPower};

/// The library's groups: a title and the conductivities (W/(m·K)) it holds.
const GROUPS: [(&str, f64, f64); 3] = [
    (
        "metals and semiconductors (k ≥ 10 W/(m·K))",
        10.0,
        f64::INFINITY,
    ),
    ("other solids and liquids (0.1 ≤ k < 10)", 0.1, 10.0),
    ("insulators and gases (k < 0.1)", 0.0, 0.1),
];

/// The colour of a kind as the palette and the map pictures show it.
fn colour32([r, g, b]: Rgb) -> Color32 {
    Color32::from_rgb(r, g, b)
}

/// What a kind is, for its tooltip.
fn describe(kind: &CellKind) -> String {
    let m = &kind.material;
    let mut text = format!(
        "{}\nk = {} W/(m·K)\nρ = {} kg/m³\nc_p = {} J/(kg·K)\ndiffusivity α = k/(ρ c_p) = {:.3e} m²/s",
        kind.name,
        m.conductivity,
        m.density,
        m.specific_heat,
        m.diffusivity()
    );
    if kind.name != m.name {
        text += &format!("\nmaterial: {}", m.name);
    }
    if let Some(heater) = kind.heater {
        let power = match heater.power {
            HeaterPower::PerVolume(w) => format!("{w} W/m³"),
            HeaterPower::Total(w) => format!("{w} W per metre of depth"),
        };
        let on = if heater.on { "on" } else { "off" };
        text += &format!("\nheater: {power} ({on})");
    }
    if let Some(t) = kind.held_temperature {
        text += &format!("\nheld at {t} °C");
    }
    if !m.source.is_empty() {
        text += &format!("\nsource: {}", m.source);
    }
    text
}

/// One chip: a swatch and the name in one selectable button (so that a wrapping row never
/// puts the swatch at the end of one line and its name on the next). Returns whether it was
/// clicked.
fn chip(ui: &mut egui::Ui, kind: &CellKind, colour: Rgb, selected: bool) -> bool {
    let mut name = RichText::new(&kind.name);
    if kind.heater.is_some() || kind.held_temperature.is_some() {
        name = name.italics();
    }
    let swatch = egui::IdSalt::new("swatch");
    let chip = egui::Button::selectable(
        selected,
        (egui::Atom::custom(swatch, Vec2::splat(11.0)), name),
    )
    .atom_ui(ui);
    if let Some(rect) = chip.rect(swatch) {
        ui.painter().rect_filled(rect, 2.0, colour32(colour));
    }
    chip.response.on_hover_text(describe(kind)).clicked()
}

/// The palette; `selected` is the kind chosen. Returns whether one was clicked.
pub fn palette_ui(
    ui: &mut egui::Ui,
    selected: &mut Option<CellKind>,
    search: &mut String,
    problem: Option<&HeatProblem>,
) -> bool {
    let problem_kinds = problem.map_or(&[][..], |p| &p.kinds[..]);
    let legend = Legend::palette(problem_kinds);
    let colour_of = |kind: &CellKind| {
        legend
            .entries
            .iter()
            .find(|e| e.kind == *kind)
            .map_or([128, 128, 128], |e| e.colour)
    };
    let mut clicked = None;
    if let Some(kind) = selected.as_ref() {
        ui.horizontal(|ui| {
            let (rect, _) = ui.allocate_exact_size(Vec2::splat(11.0), Sense::hover());
            ui.painter()
                .rect_filled(rect, 2.0, colour32(colour_of(kind)));
            ui.label(format!("painting: {}", kind.name))
                .on_hover_text(describe(kind));
        });
    }
    if !problem_kinds.is_empty() {
        ui.label("this problem's kinds");
        ui.horizontal_wrapped(|ui| {
            for kind in problem_kinds {
                if chip(ui, kind, colour_of(kind), selected.as_ref() == Some(kind)) {
                    clicked = Some(kind.clone());
                }
            }
        });
    }
    ui.horizontal(|ui| {
        let label = ui.label("materials");
        ui.add(
            egui::TextEdit::singleline(search)
                .hint_text("filter by name")
                .desired_width(120.0),
        )
        .labelled_by(label.id);
    });
    let wanted = material::normalise(search);
    let library = material::library();
    for (title, low, high) in GROUPS {
        let members: Vec<CellKind> = library
            .iter()
            .filter(|m| (low..high).contains(&m.conductivity))
            .filter(|m| wanted.is_empty() || m.name.contains(&wanted))
            .map(|m| CellKind::of(m.clone()))
            .collect();
        if members.is_empty() {
            continue;
        }
        ui.weak(title);
        ui.horizontal_wrapped(|ui| {
            for kind in &members {
                if chip(ui, kind, colour_of(kind), selected.as_ref() == Some(kind)) {
                    clicked = Some(kind.clone());
                }
            }
        });
    }
    if !wanted.is_empty() && !library.iter().any(|m| m.name.contains(&wanted)) {
        ui.weak(format!("no material's name contains \"{search}\""));
    }
    let chose = clicked.is_some();
    if let Some(kind) = clicked {
        *selected = Some(kind);
    }
    chose
}
