//! Making a new kind to paint: a heater of some power, or a region held at a temperature, of
//! a material from the library or the problem. The new kind becomes a kind of the problem when
//! it is painted; until then the sources section offers it to the paint tools.

use eframe::egui;

use heatlab_engine::problem::{material, CellKind, HeatProblem, Heater, Material};

use super::kinds::PowerUnit;
use super::typed::{shown, Typed, TypedNumbers};

/// What the new kind is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SourceKind {
    /// A heater.
    Heater,
    /// A region held at a temperature.
    Held,
}

/// The new kind as set up so far.
#[derive(Debug, Clone, PartialEq)]
pub struct KindDraft {
    /// The material's name (from the library or the problem).
    pub material: String,
    /// The heater's power, in `unit`.
    pub power: f64,
    /// How the power is given.
    pub unit: PowerUnit,
    /// The held temperature, °C.
    pub temperature: f64,
}

impl Default for KindDraft {
    fn default() -> Self {
        Self {
            material: heatlab_engine::session::diffusion::ProblemCommand::PLATE_MATERIAL
                .to_string(),
            power: 50.0,
            unit: PowerUnit::Total,
            temperature: 100.0,
        }
    }
}

impl KindDraft {
    /// The kind this draft makes, with its material taken from the problem's kinds first, then
    /// from the library; `None` when neither knows the material.
    pub fn kind(&self, what: SourceKind, problem: Option<&HeatProblem>) -> Option<CellKind> {
        let material = materials(problem)
            .into_iter()
            .find(|m| m.name == self.material)?;
        let (name, heater, held_temperature) = match what {
            SourceKind::Heater => (
                format!("Heater {} {}", shown(self.power), self.unit.symbol()),
                Some(Heater {
                    power: self.unit.power(self.power),
                    on: true,
                }),
                None,
            ),
            SourceKind::Held => (
                format!("Held at {} °C", shown(self.temperature)),
                None,
                Some(self.temperature),
            ),
        };
        let name = if self.material != default_material() {
            format!("{name} ({})", material.name)
        } else {
            name
        };
        Some(CellKind {
            name,
            material,
            heater,
            held_temperature,
        })
    }

    /// The form; returns the kind a button made.
    pub fn ui(
        &mut self,
        ui: &mut egui::Ui,
        typed: &mut TypedNumbers,
        problem: Option<&HeatProblem>,
        messages: &mut Vec<String>,
    ) -> Option<CellKind> {
        let choices = materials(problem);
        ui.horizontal(|ui| {
            let label = ui.label("material");
            egui::ComboBox::from_id_salt("new source material")
                .selected_text(self.material.as_str())
                .width(120.0)
                .show_ui(ui, |ui| {
                    for m in &choices {
                        ui.selectable_value(&mut self.material, m.name.clone(), m.name.as_str());
                    }
                })
                .response
                .labelled_by(label.id);
        });
        let mut made = None;
        ui.horizontal(|ui| {
            match typed.field(ui, "new heater power", "new power", self.power, 64.0) {
                Typed::Value(v) => self.power = v,
                Typed::Refused(text) => messages.push(format!("\"{text}\" is not a power")),
                Typed::Unchanged => {}
            }
            for unit in PowerUnit::ALL {
                ui.radio_value(&mut self.unit, unit, unit.symbol());
            }
            if ui
                .button("New heater")
                .on_hover_text("a heater of this power and material, to paint")
                .clicked()
            {
                made = self.kind(SourceKind::Heater, problem);
            }
        });
        ui.horizontal(|ui| {
            match typed.field(
                ui,
                "new held temperature",
                "new held °C",
                self.temperature,
                64.0,
            ) {
                Typed::Value(v) => self.temperature = v,
                Typed::Refused(text) => {
                    messages.push(format!("\"{text}\" is not a temperature"));
                }
                Typed::Unchanged => {}
            }
            if ui
                .button("New held region")
                .on_hover_text("cells of this material held at this temperature, to paint")
                .clicked()
            {
                if heatlab_engine::problem::temperature::is_physical(self.temperature) {
                    made = self.kind(SourceKind::Held, problem);
                } else {
                    messages.push(format!(
                        "{} °C is below absolute zero: no held region made",
                        self.temperature
                    ));
                }
            }
        });
        made
    }
}

fn default_material() -> &'static str {
    heatlab_engine::session::diffusion::ProblemCommand::PLATE_MATERIAL
}

/// The materials a new kind can be made of: the problem's own (a scenario's), then the
/// library's.
fn materials(problem: Option<&HeatProblem>) -> Vec<Material> {
    let mut all: Vec<Material> = Vec::new();
    let own = problem
        .into_iter()
        .flat_map(|p| p.kinds.iter().map(|k| &k.material));
    for m in own.cloned().chain(material::library()) {
        if all.iter().all(|known| known.name != m.name) {
            all.push(m);
        }
    }
    all
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_draft_makes_a_heater_or_a_held_region() {
        let mut draft = KindDraft::default();
        let heater = draft.kind(SourceKind::Heater, None).unwrap();
        assert_eq!(heater.name, "Heater 50 W/m");
        assert_eq!(heater.material.name, "aluminium");
        assert_eq!(
            heater.heater,
            Some(Heater {
                power: heatlab_engine::problem::HeaterPower::Total(50.0),
                on: true
            })
        );
        draft.material = "copper".into();
        let held = draft.kind(SourceKind::Held, None).unwrap();
        assert_eq!(held.name, "Held at 100 °C (copper)");
        assert_eq!(held.held_temperature, Some(100.0));
        assert!(held.heater.is_none());
        draft.material = "unobtainium".into();
        assert!(draft.kind(SourceKind::Held, None).is_none());
    }
}
