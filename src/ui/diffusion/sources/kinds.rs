//! The problem's kinds of cells as a list: each one's material and cell count, and for heaters
//! a switch and the power, for held regions the temperature. Changes go out as
//! [`ProblemCommand::EditKind`].

use eframe::egui;

use heatlab_engine::problem::{CellKind, HeatProblem, Heater, HeaterPower};
use heatlab_engine::session::diffusion::ProblemCommand;

use super::typed::{Typed, TypedNumbers};

/// Width of a value field, in points.
const VALUE_WIDTH: f32 = 72.0;

/// How a heater's power is given, as the unit selector lists it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PowerUnit {
    /// W/m³ in every cell.
    PerVolume,
    /// W per metre of depth for the whole kind.
    Total,
}

impl PowerUnit {
    /// Both units.
    pub const ALL: [Self; 2] = [Self::PerVolume, Self::Total];

    /// The unit of a power.
    pub fn of(power: HeaterPower) -> Self {
        match power {
            HeaterPower::PerVolume(_) => Self::PerVolume,
            HeaterPower::Total(_) => Self::Total,
        }
    }

    /// Its symbol.
    pub fn symbol(self) -> &'static str {
        match self {
            Self::PerVolume => "W/m³",
            Self::Total => "W/m",
        }
    }

    /// A power of `value` in this unit.
    pub fn power(self, value: f64) -> HeaterPower {
        match self {
            Self::PerVolume => HeaterPower::PerVolume(value),
            Self::Total => HeaterPower::Total(value),
        }
    }
}

/// The number of a power, in its own unit.
pub fn power_value(power: HeaterPower) -> f64 {
    match power {
        HeaterPower::PerVolume(v) | HeaterPower::Total(v) => v,
    }
}

/// `power` in `unit`, giving the same heat to `cells` cells of side `spacing` metres (per
/// metre of depth a cell holds `spacing²` m³). With no cells the number is kept.
pub fn convert_power(
    power: HeaterPower,
    unit: PowerUnit,
    cells: usize,
    spacing: f64,
) -> HeaterPower {
    let volume = cells as f64 * spacing * spacing;
    match (power, unit) {
        (HeaterPower::PerVolume(v), PowerUnit::Total) if volume > 0.0 => {
            HeaterPower::Total(v * volume)
        }
        (HeaterPower::Total(v), PowerUnit::PerVolume) if volume > 0.0 => {
            HeaterPower::PerVolume(v / volume)
        }
        (power, unit) => unit.power(power_value(power)),
    }
}

/// What a kind does, in a few words (for the list and the palette).
pub fn kind_summary(kind: &CellKind) -> String {
    match (kind.heater, kind.held_temperature) {
        (Some(heater), _) => format!(
            "heater {} {} ({})",
            super::typed::shown(power_value(heater.power)),
            PowerUnit::of(heater.power).symbol(),
            if heater.on { "on" } else { "off" }
        ),
        (None, Some(t)) => format!("held at {t} °C"),
        (None, None) => "material".into(),
    }
}

/// The list of kinds; pushes an edit for each change and a message for each refused value.
pub fn kinds_ui(
    ui: &mut egui::Ui,
    typed: &mut TypedNumbers,
    problem: &HeatProblem,
    edits: &mut Vec<ProblemCommand>,
    messages: &mut Vec<String>,
) {
    let counts = problem.kind_counts();
    for (index, kind) in problem.kinds.iter().enumerate() {
        let Ok(index) = u8::try_from(index) else {
            break;
        };
        let cells = counts.get(usize::from(index)).copied().unwrap_or(0);
        ui.group(|ui| {
            let changed = kind_ui(ui, typed, kind, index, cells, problem.spacing, messages);
            if let Some(kind) = changed {
                edits.push(ProblemCommand::EditKind { index, kind });
            }
        });
    }
}

fn kind_ui(
    ui: &mut egui::Ui,
    typed: &mut TypedNumbers,
    kind: &CellKind,
    index: u8,
    cells: usize,
    spacing: f64,
    messages: &mut Vec<String>,
) -> Option<CellKind> {
    let mut changed = None;
    ui.horizontal(|ui| {
        match kind.heater {
            Some(heater) => {
                let mut on = heater.on;
                if ui
                    .checkbox(&mut on, kind.name.as_str())
                    .on_hover_text("whether the heater heats (a thermostat may switch it)")
                    .changed()
                {
                    changed = Some(with_heater(kind, Heater { on, ..heater }));
                }
            }
            None => {
                ui.strong(kind.name.as_str());
            }
        }
        ui.weak(format!("{} · {cells} cells", kind.material.name));
    });
    if let Some(heater) = kind.heater {
        ui.horizontal(|ui| {
            let value = power_value(heater.power);
            match typed.field(ui, ("power", index), "power", value, VALUE_WIDTH) {
                Typed::Unchanged => {}
                Typed::Value(v) => {
                    let power = PowerUnit::of(heater.power).power(v);
                    changed = Some(with_heater(kind, Heater { power, ..heater }));
                }
                Typed::Refused(text) => messages.push(format!(
                    "\"{text}\" is not a power: {} keeps {value} {}",
                    kind.name,
                    PowerUnit::of(heater.power).symbol()
                )),
            }
            let unit = PowerUnit::of(heater.power);
            let mut chosen = unit;
            egui::ComboBox::from_id_salt(("power unit", index))
                .selected_text(unit.symbol())
                .width(60.0)
                .show_ui(ui, |ui| {
                    for u in PowerUnit::ALL {
                        ui.selectable_value(&mut chosen, u, u.symbol());
                    }
                })
                .response
                .on_hover_text("W/m³ in every cell, or W per metre of depth for all its cells");
            if chosen != unit {
                let power = convert_power(heater.power, chosen, cells, spacing);
                changed = Some(with_heater(kind, Heater { power, ..heater }));
            }
        });
    }
    if let Some(t) = kind.held_temperature {
        ui.horizontal(
            |ui| match typed.field(ui, ("held", index), "held at °C", t, VALUE_WIDTH) {
                Typed::Unchanged => {}
                Typed::Value(v) => {
                    changed = Some(CellKind {
                        held_temperature: Some(v),
                        ..kind.clone()
                    });
                }
                Typed::Refused(text) => messages.push(format!(
                    "\"{text}\" is not a temperature: {} stays at {t} °C",
                    kind.name
                )),
            },
        );
    }
    changed
}

fn with_heater(kind: &CellKind, heater: Heater) -> CellKind {
    CellKind {
        heater: Some(heater),
        ..kind.clone()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn converting_the_unit_keeps_the_heat() {
        // 100 cells of 1 mm: 1e-4 m³ per metre of depth.
        let total = convert_power(HeaterPower::PerVolume(5e5), PowerUnit::Total, 100, 1e-3);
        let HeaterPower::Total(w) = total else {
            panic!("a total power");
        };
        assert!((w - 50.0).abs() < 1e-9);
        let back = convert_power(total, PowerUnit::PerVolume, 100, 1e-3);
        let HeaterPower::PerVolume(p) = back else {
            panic!("a power per volume");
        };
        assert!((p - 5e5).abs() < 1e-6);
        // No cells: the number is kept, in the new unit.
        assert_eq!(
            convert_power(HeaterPower::Total(7.0), PowerUnit::PerVolume, 0, 1e-3),
            HeaterPower::PerVolume(7.0)
        );
    }
}
