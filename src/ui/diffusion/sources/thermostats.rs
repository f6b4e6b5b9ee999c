//! The thermostat editor: a heater, the probe it reads (a placed probe or a typed cell), the
//! setpoint, the deadband and how often it decides; the problem's thermostats, each removable.
//! A thermostat that lacks a heater or a probe is refused with the reason, and nothing is sent.

use eframe::egui;

use heatlab_engine::problem::{HeatProblem, Thermostat};
use heatlab_engine::session::diffusion::ProblemCommand;

use super::super::probes::Probes;
use super::typed::{Typed, TypedNumbers};

/// Width of a value field, in points.
const VALUE_WIDTH: f32 = 56.0;

/// Which cell the thermostat reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ProbeChoice {
    /// None chosen yet.
    #[default]
    None,
    /// The probe named P`number`.
    Probe(usize),
    /// The typed cell.
    Cell,
}

/// Why a thermostat cannot be added.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum ThermostatRefusal {
    /// No problem, so no heater.
    #[error("a thermostat needs a heater: make one under Sources and paint it first")]
    NoProblem,
    /// No heater chosen (or the chosen kind has none).
    #[error("choose the heater the thermostat switches (a painted heater)")]
    NoHeater,
    /// No probe chosen.
    #[error(
        "choose the probe the thermostat reads: place one with the Probe tool (P) or type a cell"
    )]
    NoProbe,
    /// The chosen probe is gone.
    #[error("probe P{0} was removed: choose another")]
    ProbeGone(usize),
    /// The typed cell is not in the grid.
    #[error("the cell at row {row}, column {col} lies outside the {rows}x{cols} grid")]
    CellOutside {
        /// Typed row.
        row: f64,
        /// Typed column.
        col: f64,
        /// Rows of the grid.
        rows: usize,
        /// Columns of the grid.
        cols: usize,
    },
    /// A negative deadband.
    #[error("the deadband must be 0 K or more, not {0} K")]
    Deadband(f64),
    /// A decision interval that is not a whole number of steps.
    #[error("a thermostat decides every whole number of steps (1 or more), not every {0}")]
    Interval(f64),
}

/// The thermostat being set up.
#[derive(Debug, Clone, PartialEq)]
pub struct ThermostatDraft {
    /// The kind whose heater it switches.
    pub heater: Option<u8>,
    /// The cell it reads.
    pub probe: ProbeChoice,
    /// The typed cell (row, column).
    pub cell: (f64, f64),
    /// °C.
    pub setpoint: f64,
    /// K.
    pub deadband: f64,
    /// Steps between decisions.
    pub every_steps: f64,
}

impl Default for ThermostatDraft {
    fn default() -> Self {
        Self {
            heater: None,
            probe: ProbeChoice::None,
            cell: (0.0, 0.0),
            setpoint: 60.0,
            deadband: 2.0,
            every_steps: 10.0,
        }
    }
}

impl ThermostatDraft {
    /// The thermostat this draft makes in `problem` with the placed `probes`, or why not.
    pub fn build(
        &self,
        problem: Option<&HeatProblem>,
        probes: &Probes,
    ) -> Result<Thermostat, ThermostatRefusal> {
        let problem = problem.ok_or(ThermostatRefusal::NoProblem)?;
        let heater_kind = self
            .heater
            .filter(|&k| {
                problem
                    .kinds
                    .get(usize::from(k))
                    .is_some_and(|kind| kind.heater.is_some())
            })
            .ok_or(ThermostatRefusal::NoHeater)?;
        let (rows, cols) = (problem.size.rows, problem.size.cols);
        let probe = match self.probe {
            ProbeChoice::None => return Err(ThermostatRefusal::NoProbe),
            ProbeChoice::Probe(number) => probes
                .all()
                .iter()
                .find(|p| p.number == number)
                .map(|p| (p.row, p.col))
                .ok_or(ThermostatRefusal::ProbeGone(number))?,
            ProbeChoice::Cell => {
                let (row, col) = self.cell;
                let inside = |v: f64, n: usize| v >= 0.0 && v.fract() == 0.0 && v < n as f64;
                if !(inside(row, rows) && inside(col, cols)) {
                    return Err(ThermostatRefusal::CellOutside {
                        row,
                        col,
                        rows,
                        cols,
                    });
                }
                (row as usize, col as usize)
            }
        };
        if probe.0 >= rows || probe.1 >= cols {
            return Err(ThermostatRefusal::CellOutside {
                row: probe.0 as f64,
                col: probe.1 as f64,
                rows,
                cols,
            });
        }
        // Typed values are finite (the fields refuse the rest).
        if self.deadband < 0.0 {
            return Err(ThermostatRefusal::Deadband(self.deadband));
        }
        if self.every_steps < 1.0 || self.every_steps.fract() != 0.0 {
            return Err(ThermostatRefusal::Interval(self.every_steps));
        }
        Ok(Thermostat {
            heater_kind,
            probe,
            setpoint: self.setpoint,
            deadband: self.deadband,
            every_steps: self.every_steps as u64,
        })
    }

    /// The editor and the problem's thermostats; pushes what to send and why something was
    /// refused.
    pub fn ui(
        &mut self,
        ui: &mut egui::Ui,
        typed: &mut TypedNumbers,
        problem: Option<&HeatProblem>,
        probes: &Probes,
        edits: &mut Vec<ProblemCommand>,
        messages: &mut Vec<String>,
    ) {
        if let Some(problem) = problem {
            existing_ui(ui, problem, edits);
        }
        self.heater_ui(ui, problem);
        self.probe_ui(ui, typed, probes, messages);
        let mut number = |ui: &mut egui::Ui, what: &str, label: &str, value: &mut f64| match typed
            .field(ui, ("thermostat", what), label, *value, VALUE_WIDTH)
        {
            Typed::Value(v) => *value = v,
            Typed::Refused(text) => messages.push(format!("\"{text}\" is not a {what}")),
            Typed::Unchanged => {}
        };
        ui.horizontal(|ui| {
            number(ui, "setpoint", "setpoint °C", &mut self.setpoint);
            number(ui, "deadband", "deadband K", &mut self.deadband);
        });
        ui.horizontal(|ui| {
            number(
                ui,
                "number of steps",
                "decides every (steps)",
                &mut self.every_steps,
            );
        });
        if ui
            .button("Add thermostat")
            .on_hover_text("replaces the thermostat of the same heater, if there is one")
            .clicked()
        {
            match self.build(problem, probes) {
                Ok(thermostat) => {
                    let mut all: Vec<Thermostat> =
                        problem.map(|p| p.thermostats.clone()).unwrap_or_default();
                    all.retain(|t| t.heater_kind != thermostat.heater_kind);
                    all.push(thermostat);
                    edits.push(ProblemCommand::SetThermostats(all));
                }
                Err(refusal) => messages.push(format!("no thermostat added: {refusal}")),
            }
        }
    }

    fn heater_ui(&mut self, ui: &mut egui::Ui, problem: Option<&HeatProblem>) {
        let heaters: Vec<(u8, &str)> = problem
            .into_iter()
            .flat_map(|p| p.kinds.iter().enumerate())
            .filter(|(_, k)| k.heater.is_some())
            .filter_map(|(i, k)| Some((u8::try_from(i).ok()?, k.name.as_str())))
            .collect();
        if self.heater.is_none() && heaters.len() == 1 {
            self.heater = Some(heaters[0].0);
        }
        let selected = heaters
            .iter()
            .find(|(i, _)| Some(*i) == self.heater)
            .map_or("(none)", |(_, name)| name);
        ui.horizontal(|ui| {
            let label = ui.label("heater");
            egui::ComboBox::from_id_salt("thermostat heater")
                .selected_text(selected)
                .width(140.0)
                .show_ui(ui, |ui| {
                    for (index, name) in &heaters {
                        ui.selectable_value(&mut self.heater, Some(*index), *name);
                    }
                })
                .response
                .labelled_by(label.id);
        });
    }

    fn probe_ui(
        &mut self,
        ui: &mut egui::Ui,
        typed: &mut TypedNumbers,
        probes: &Probes,
        messages: &mut Vec<String>,
    ) {
        if self.probe == ProbeChoice::None {
            if let Some(first) = probes.all().first() {
                self.probe = ProbeChoice::Probe(first.number);
            }
        }
        let selected = match self.probe {
            ProbeChoice::None => "(none)".to_string(),
            ProbeChoice::Probe(n) => format!("P{n}"),
            ProbeChoice::Cell => "a cell".to_string(),
        };
        ui.horizontal(|ui| {
            let label = ui.label("probe");
            egui::ComboBox::from_id_salt("thermostat probe")
                .selected_text(selected)
                .width(72.0)
                .show_ui(ui, |ui| {
                    for probe in probes.all() {
                        let text = format!("{} ({}, {})", probe.name(), probe.row, probe.col);
                        ui.selectable_value(
                            &mut self.probe,
                            ProbeChoice::Probe(probe.number),
                            text,
                        );
                    }
                    ui.selectable_value(&mut self.probe, ProbeChoice::Cell, "a cell");
                })
                .response
                .labelled_by(label.id);
            if self.probe == ProbeChoice::Cell {
                for (what, value) in [("row", &mut self.cell.0), ("column", &mut self.cell.1)] {
                    match typed.field(ui, ("probe cell", what), what, *value, 44.0) {
                        Typed::Value(v) => *value = v,
                        Typed::Refused(text) => {
                            messages.push(format!("\"{text}\" is not a {what}"));
                        }
                        Typed::Unchanged => {}
                    }
                }
            }
        });
    }
}

/// The problem's thermostats, each with a button that removes it.
fn existing_ui(ui: &mut egui::Ui, problem: &HeatProblem, edits: &mut Vec<ProblemCommand>) {
    let mut remove = None;
    for (i, t) in problem.thermostats.iter().enumerate() {
        let heater = problem
            .kinds
            .get(usize::from(t.heater_kind))
            .map_or("?", |k| k.name.as_str());
        ui.horizontal(|ui| {
            ui.label(format!(
                "{heater}: {} °C ± {} K at ({}, {}), every {} steps",
                t.setpoint,
                t.deadband / 2.0,
                t.probe.0,
                t.probe.1,
                t.every_steps
            ));
            if ui
                .small_button("×")
                .on_hover_text("remove this thermostat")
                .clicked()
            {
                remove = Some(i);
            }
        });
    }
    if let Some(i) = remove {
        let mut all = problem.thermostats.clone();
        all.remove(i);
        edits.push(ProblemCommand::SetThermostats(all));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use heatlab_engine::grid::GridSize;
    use heatlab_engine::problem::{material, CellKind, Heater, HeaterPower};

    fn problem_with_heater() -> HeatProblem {
        let aluminium = material::find("aluminium").unwrap();
        let mut problem =
            HeatProblem::uniform(GridSize::new(8, 10).unwrap(), 1e-3, aluminium.clone());
        let heater = CellKind {
            heater: Some(Heater {
                power: HeaterPower::Total(5.0),
                on: true,
            }),
            ..CellKind::of(aluminium)
        };
        problem.kind_index(heater).unwrap();
        problem
    }

    #[test]
    fn a_thermostat_needs_a_heater_and_a_probe() {
        let problem = problem_with_heater();
        let mut probes = Probes::default();
        let mut draft = ThermostatDraft::default();
        assert_eq!(
            draft.build(None, &probes),
            Err(ThermostatRefusal::NoProblem)
        );
        assert_eq!(
            draft.build(Some(&problem), &probes),
            Err(ThermostatRefusal::NoHeater)
        );
        draft.heater = Some(0);
        assert_eq!(
            draft.build(Some(&problem), &probes),
            Err(ThermostatRefusal::NoHeater),
            "kind 0 is no heater"
        );
        draft.heater = Some(1);
        assert_eq!(
            draft.build(Some(&problem), &probes),
            Err(ThermostatRefusal::NoProbe)
        );
        draft.probe = ProbeChoice::Probe(1);
        assert_eq!(
            draft.build(Some(&problem), &probes),
            Err(ThermostatRefusal::ProbeGone(1))
        );
        probes.add(3, 4);
        let thermostat = draft.build(Some(&problem), &probes).unwrap();
        assert_eq!(thermostat.heater_kind, 1);
        assert_eq!(thermostat.probe, (3, 4));
        assert_eq!(thermostat.every_steps, 10);
        assert!(thermostat
            .check(8, 10, 2, |k| problem.kinds[k].heater.is_some())
            .is_ok());
    }

    #[test]
    fn a_typed_cell_must_lie_in_the_grid_and_numbers_must_make_sense() {
        let problem = problem_with_heater();
        let probes = Probes::default();
        let mut draft = ThermostatDraft {
            heater: Some(1),
            probe: ProbeChoice::Cell,
            cell: (8.0, 2.0),
            ..ThermostatDraft::default()
        };
        assert!(matches!(
            draft.build(Some(&problem), &probes),
            Err(ThermostatRefusal::CellOutside {
                rows: 8,
                cols: 10,
                ..
            })
        ));
        draft.cell = (7.0, 9.0);
        assert_eq!(draft.build(Some(&problem), &probes).unwrap().probe, (7, 9));
        draft.deadband = -1.0;
        assert_eq!(
            draft.build(Some(&problem), &probes),
            Err(ThermostatRefusal::Deadband(-1.0))
        );
        draft.deadband = 1.0;
        draft.every_steps = 2.5;
        assert_eq!(
            draft.build(Some(&problem), &probes),
            Err(ThermostatRefusal::Interval(2.5))
        );
    }
}
