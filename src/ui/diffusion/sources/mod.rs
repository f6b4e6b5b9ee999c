//! The "Sources" section of the diffusion panel: the problem's kinds of cells (each one's
//! material and cell count; heaters with their switch and power; held regions with their
//! temperature), making new heaters and held regions to paint, and the thermostats. It also
//! keeps when each heater was on, for the probe plot.
//!
//! Edits go out as [`DiffusionCommand::Problem`]; values that do not read as numbers, and
//! thermostats without a heater or a probe, are refused here with a notice and nothing is sent.

pub mod creator;
pub mod kinds;
pub mod switches;
pub mod thermostats;
pub mod typed;

use eframe::egui;

use crate::ui::notice::Level;
use heatlab_engine::problem::CellKind;

use super::command::DiffusionCommand;
use super::probes::Probes;
use super::SimState;
use creator::KindDraft;
use switches::{SwitchHistory, ThermostatTrace};
use thermostats::ThermostatDraft;
use typed::TypedNumbers;

/// The sources section's state.
#[derive(Debug, Default)]
pub struct SourcesPanel {
    typed: TypedNumbers,
    draft: KindDraft,
    thermostat: ThermostatDraft,
    /// Kinds made here and not painted yet, newest last.
    made: Vec<CellKind>,
    /// The kind just made, for the paint tools to take as the kind they paint.
    paint_kind: Option<CellKind>,
    switches: SwitchHistory,
    /// Refusals, for the notice area.
    messages: Vec<String>,
    /// What was done, for the notice area.
    done: Vec<String>,
}

impl SourcesPanel {
    /// The section: kinds, new sources, thermostats. `probes` are the placed probes a
    /// thermostat can read.
    pub fn ui(
        &mut self,
        ui: &mut egui::Ui,
        state: &SimState,
        probes: &Probes,
        commands: &mut Vec<DiffusionCommand>,
    ) {
        let problem = state.problem.as_deref();
        if let Some(problem) = problem {
            self.made.retain(|k| !problem.kinds.contains(k));
        }
        let mut edits = Vec::new();
        ui.heading("Sources");
        match problem {
            Some(problem) => {
                kinds::kinds_ui(ui, &mut self.typed, problem, &mut edits, &mut self.messages);
            }
            None => {
                ui.weak(
                    "the tutorial's plate: paint a material, a heater or a held region to \
                         make it a heat problem",
                );
            }
        }
        for kind in &self.made {
            ui.weak(format!(
                "{}: {} (not painted yet)",
                kind.name,
                kinds::kind_summary(kind)
            ));
        }
        egui::CollapsingHeader::new("New heater or held region")
            .default_open(true)
            .show(ui, |ui| {
                let made = self
                    .draft
                    .ui(ui, &mut self.typed, problem, &mut self.messages);
                if let Some(kind) = made {
                    self.offer(kind);
                }
            });
        egui::CollapsingHeader::new("Thermostats")
            .default_open(true)
            .show(ui, |ui| {
                self.thermostat.ui(
                    ui,
                    &mut self.typed,
                    problem,
                    probes,
                    &mut edits,
                    &mut self.messages,
                );
            });
        commands.extend(edits.into_iter().map(DiffusionCommand::Problem));
    }

    fn offer(&mut self, kind: CellKind) {
        self.done.push(format!(
            "made \"{}\": paint it to place it (it is the paint tools' kind now)",
            kind.name
        ));
        if !self.made.contains(&kind) {
            self.made.push(kind.clone());
        }
        self.paint_kind = Some(kind);
    }

    /// The kind the user just made, once: the paint tools take it as the kind they paint.
    pub fn take_paint_kind(&mut self) -> Option<CellKind> {
        self.paint_kind.take()
    }

    /// Kinds made here that are not painted yet (for a palette to list).
    pub fn unpainted_kinds(&self) -> &[CellKind] {
        &self.made
    }

    /// Messages for the notice area: refused values and thermostats (warnings), made kinds.
    pub fn take_messages(&mut self) -> Vec<(Level, String)> {
        let warnings = self.messages.drain(..).map(|m| (Level::Warning, m));
        let done = self.done.drain(..).map(|m| (Level::Info, m));
        warnings.chain(done).collect()
    }

    /// Takes a frame's heater states at `step`.
    pub fn record_heaters(&mut self, step: u64, heaters_on: &[bool]) {
        self.switches.record(step, heaters_on);
    }

    /// Takes a heater's switch by a thermostat at `step` (record a frame's switches before its
    /// heaters' states).
    pub fn record_switch(&mut self, step: u64, kind: u8, on: bool) {
        self.switches.record_switch(step, usize::from(kind), on);
    }

    /// Forgets the heaters' history (a new field).
    pub fn restart(&mut self) {
        self.switches.clear();
    }

    /// What the probe plot draws for each thermostat of the problem now.
    pub fn thermostat_traces(&self, state: &SimState) -> Vec<ThermostatTrace> {
        switches::traces(state.problem.as_deref(), &self.switches)
    }
}
