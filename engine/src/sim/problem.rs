//! A heat problem held by a simulation: it steps with the problem's scheme, keeps its
//! simulated time in seconds and books its energy.
//!
//! Edits of the map (painted shapes, their undo) and of the heaters (a thermostat's switch, a
//! heater switched by hand) change the problem in place: the map's cells and the tables, not a
//! new compile of everything, and the agreement window records the edit itself
//! ([`ProblemEdit`]), not a copy of the map.

use std::ops::Range;
use std::sync::Arc;

use super::Simulation;
use crate::compute::{FieldEdit, ProblemUpload};
use crate::error::{HeatlabError, Result};
use crate::grid::{Grid, GridSize};
use crate::problem::energy::{free_capacity, EnergyBalance, RoundOff};
use crate::problem::{
    row_stability_limits, CellKind, CompiledProblem, EnergyExchange, HeatProblem, StepTables,
};

/// Where an energy balance starts: the stored energy and the field's largest magnitude.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) struct EnergyMark {
    /// J/m.
    stored: f64,
    /// °C.
    largest_magnitude: f64,
}

/// The problem a simulation steps.
#[derive(Debug, Clone)]
pub struct ActiveProblem {
    /// The problem as the user built it (heaters as the thermostats last switched them).
    pub problem: HeatProblem,
    /// Its tables and map as the backend holds them.
    pub compiled: CompiledProblem,
    /// Whether the backend books the energy every step.
    pub book_energy: bool,
    /// Simulated seconds since the initial field at the step where the time step last changed
    /// (the time step may change with the map): the time now adds `steps_at_dt` steps of the
    /// time step, as one product, so that it does not depend on how the steps were cut into
    /// advances (a run's chunks, the app's frames).
    pub elapsed_seconds: f64,
    /// Steps taken at the present time step since `elapsed_seconds`.
    pub(super) steps_at_dt: u64,
    /// Cells of each kind, kept with the map (a heater of a total power shares it by them).
    pub(super) kind_counts: Vec<usize>,
    /// Each row's stability limit, kept with the map (see [`row_stability_limits`]).
    pub(super) row_limits: Vec<f64>,
    /// Energy the backend booked under tables since replaced, not yet taken.
    pub(super) booked: EnergyExchange,
    /// The stored energy at the last balance; `None` once the field or the map changed other
    /// than by stepping (the next balance starts from there).
    pub(super) energy_mark: Option<EnergyMark>,
    /// The steps' round-off since the last balance.
    pub(super) round_off: RoundOff,
    /// Heater switches made by thermostats, not yet taken (see [`Simulation::take_switches`]).
    pub(super) switches: Vec<super::thermostat::HeaterSwitch>,
    /// Each kind's heater as the user last set it (`None`: no heater), which thermostats do
    /// not change: Reset goes back to it.
    pub(super) heaters_as_set: Vec<Option<bool>>,
    /// Explicit steps, or implicit ones of their own time step.
    pub(super) stepping: super::solve::Stepping,
    /// The solver, once one was asked for, while the problem stays.
    pub(super) solver: Option<super::solve::SolverCache>,
}

impl ActiveProblem {
    /// Simulated seconds since the initial field.
    pub fn seconds(&self) -> f64 {
        self.elapsed_seconds + self.steps_at_dt as f64 * self.step_seconds()
    }

    /// Before the time step becomes `dt`: the time so far becomes the base the new time
    /// step's steps add to (nothing changes while the time step stays).
    fn fold_time(&mut self, dt: f64) {
        if matches!(self.stepping, super::solve::Stepping::Implicit { .. }) {
            return;
        }
        if dt.to_bits() != self.compiled.tables.dt.to_bits() {
            self.elapsed_seconds = self.seconds();
            self.steps_at_dt = 0;
        }
    }
}

/// Whether each kind's heater is on (`None`: the kind has no heater).
fn heater_states(kinds: &[CellKind]) -> Vec<Option<bool>> {
    kinds
        .iter()
        .map(|kind| kind.heater.as_ref().map(|heater| heater.on))
        .collect()
}

/// Cells of a problem's map given new kinds, and the tables from then on: what a painted
/// shape, its undo or a switched heater changes (no cells: the tables alone).
#[derive(Debug, Clone, PartialEq)]
pub struct ProblemEdit {
    /// Row-major cells.
    pub cells: Arc<[u32]>,
    /// The kind each cell becomes, as many as `cells`.
    pub kinds: Arc<[u8]>,
    /// The tables from then on.
    pub tables: StepTables,
}

impl ProblemEdit {
    /// Applies the edit to `problem`.
    pub fn apply(&self, problem: &mut CompiledProblem) -> Result<()> {
        let cells = problem.map.len();
        let bad_cell = self.cells.iter().any(|&c| c as usize >= cells);
        let bad_kind = self.kinds.iter().any(|&k| k as usize >= self.tables.kinds);
        if self.cells.len() != self.kinds.len() || bad_cell || bad_kind {
            return Err(HeatlabError::Internal(
                "a problem edit names cells or kinds the problem does not have".into(),
            ));
        }
        for (&cell, &kind) in self.cells.iter().zip(self.kinds.iter()) {
            problem.map[cell as usize] = kind;
        }
        problem.tables = self.tables.clone();
        Ok(())
    }
}

impl Simulation {
    /// Steps a heat problem from now on (`None`: back to the uniform stencil of the step
    /// parameters). With `book_energy` the backend also books the energy that enters each step
    /// (see [`Simulation::energy_balance`]). The field is kept; held cells are set to their
    /// temperatures (an edit the live check repeats). Strokes of kinds and changes of the
    /// problem's settings leave the undo history unless the problem is the one stepped now.
    pub fn set_problem(&mut self, problem: Option<HeatProblem>, book_energy: bool) -> Result<()> {
        let same = self.problem() == problem.as_ref();
        self.install_problem(problem, book_energy)?;
        if !same {
            self.paint.forget_problem_entries();
        }
        Ok(())
    }

    /// [`Simulation::set_problem`] for an edit of the problem stepped now (a setting changed or
    /// put back): its strokes of kinds stay in the undo history while the map and its kinds do.
    pub(super) fn install_problem(
        &mut self,
        problem: Option<HeatProblem>,
        book_energy: bool,
    ) -> Result<()> {
        if problem.is_some() {
            crate::compute::brush::ensure_cells_addressable(self.initial.size())?;
        }
        self.settle()?;
        let old = self.problem.take();
        let elapsed_seconds = old.as_ref().map_or(0.0, ActiveProblem::seconds);
        let active = match problem {
            Some(problem) => match self.activate(problem, book_energy, elapsed_seconds) {
                Ok(active) => Some(active),
                Err(error) => {
                    self.problem = old;
                    return Err(error);
                }
            },
            None => None,
        };
        let same_cells = match (&old, &active) {
            (Some(old), Some(new)) => {
                new.problem.map == old.problem.map
                    && new.problem.kinds.len() >= old.problem.kinds.len()
            }
            _ => false,
        };
        if !same_cells {
            self.paint.forget_problem_entries();
        }
        self.backend.set_problem(
            active
                .as_ref()
                .map(|a| ProblemUpload::of(&a.compiled, book_energy)),
        )?;
        if let Some(watch) = self.agreement.as_mut() {
            watch.record_problem(active.as_ref().map(|a| &a.compiled));
        }
        self.problem = active;
        if let Some(held) = self.held_values(None)? {
            self.edit(FieldEdit::Set(held))?;
        }
        self.invalidate_energy_mark();
        Ok(())
    }

    /// The checked, compiled form of `problem` for this simulation.
    fn activate(
        &self,
        problem: HeatProblem,
        book_energy: bool,
        elapsed_seconds: f64,
    ) -> Result<ActiveProblem> {
        if problem.size != self.initial.size() {
            return Err(HeatlabError::InvalidInput(format!(
                "the problem is {} but the field is {}",
                problem.size,
                self.initial.size()
            )));
        }
        problem.check()?;
        let row_limits = row_stability_limits(&problem, 0..problem.size.rows);
        let kind_counts = problem.kind_counts();
        let limit = row_limits.iter().copied().fold(f64::INFINITY, f64::min);
        let compiled = CompiledProblem {
            tables: StepTables::with_map_facts(&problem, &kind_counts, limit)?,
            map: problem.map.clone(),
            cols: problem.size.cols,
        };
        Ok(ActiveProblem {
            heaters_as_set: heater_states(&problem.kinds),
            kind_counts,
            row_limits,
            problem,
            compiled,
            book_energy,
            elapsed_seconds,
            steps_at_dt: 0,
            booked: EnergyExchange::default(),
            energy_mark: None,
            round_off: RoundOff::default(),
            switches: Vec::new(),
            stepping: super::solve::Stepping::Explicit,
            solver: None,
        })
    }

    /// The cells of held kinds (among `cells`, or all) whose values are not their kinds'
    /// temperatures, with those temperatures; `None` when there are none.
    pub(super) fn held_values(
        &mut self,
        cells: Option<&[u32]>,
    ) -> Result<Option<crate::compute::CellValues>> {
        let Some(active) = self.problem.as_ref() else {
            return Ok(None);
        };
        let held: Vec<Option<f32>> = active
            .problem
            .kinds
            .iter()
            .map(|k| k.held_temperature.map(|t| t as f32))
            .collect();
        if held.iter().all(Option::is_none) {
            return Ok(None);
        }
        let map = &active.problem.map;
        let candidates: Vec<u32> = match cells {
            Some(cells) => cells
                .iter()
                .copied()
                .filter(|&c| held[map[c as usize] as usize].is_some())
                .collect(),
            None => (0..map.len() as u32)
                .filter(|&c| held[map[c as usize] as usize].is_some())
                .collect(),
        };
        let targets: Vec<f32> = candidates
            .iter()
            .filter_map(|&c| held[map[c as usize] as usize])
            .collect();
        let now = self.backend.gather(&candidates)?;
        let (cells, values): (Vec<u32>, Vec<f32>) = candidates
            .iter()
            .zip(targets.iter().zip(now))
            .filter(|(_, (&target, now))| target.to_bits() != now.to_bits())
            .map(|(&cell, (&target, _))| (cell, target))
            .unzip();
        Ok((!cells.is_empty()).then(|| crate::compute::CellValues {
            cells: cells.into(),
            values: values.into(),
        }))
    }

    /// Gives `cells` the kinds `kinds` (kinds the problem already has) and steps with the
    /// tables of the new map from now on: the backend takes the map and the tables again (no
    /// compile), the live check records the edit. Cells that became held are not set to their
    /// temperatures here (see [`Simulation::held_values`]). A refused map (a time step in
    /// seconds above the new stability limit) leaves everything as it was.
    pub(super) fn edit_map(&mut self, cells: Arc<[u32]>, kinds: Arc<[u8]>) -> Result<()> {
        self.settle()?;
        let active = self.problem.as_mut().ok_or_else(no_problem)?;
        let old: Vec<u8> = cells
            .iter()
            .map(|&c| active.problem.map[c as usize])
            .collect();
        let set = |problem: &mut HeatProblem, counts: &mut [usize], kinds: &[u8]| {
            for (&cell, &kind) in cells.iter().zip(kinds) {
                let slot = &mut problem.map[cell as usize];
                counts[*slot as usize] -= 1;
                counts[kind as usize] += 1;
                *slot = kind;
            }
        };
        active.kind_counts.resize(active.problem.kinds.len(), 0);
        set(&mut active.problem, &mut active.kind_counts, &kinds);
        let spans = row_spans(&active.problem, &cells);
        update_row_limits(active, &spans);
        let tables = active.problem.check().and_then(|()| {
            let limit = active
                .row_limits
                .iter()
                .copied()
                .fold(f64::INFINITY, f64::min);
            StepTables::with_map_facts(&active.problem, &active.kind_counts, limit)
        });
        let tables = match tables {
            Ok(tables) => tables,
            Err(error) => {
                set(&mut active.problem, &mut active.kind_counts, &old);
                update_row_limits(active, &spans);
                return Err(error);
            }
        };
        let edit = Arc::new(ProblemEdit {
            cells,
            kinds,
            tables,
        });
        active.fold_time(edit.tables.dt);
        edit.apply(&mut active.compiled)?;
        self.backend.set_problem(Some(ProblemUpload::of(
            &active.compiled,
            active.book_energy,
        )))?;
        if let Some(watch) = self.agreement.as_mut() {
            watch.record_problem_edit(&edit);
        }
        // Heat capacities moved with the map: the next balance starts afresh.
        self.invalidate_energy_mark();
        Ok(())
    }

    /// Replaces the problem's kinds by `kinds` that differ from them only in their heaters
    /// (switched, or of another power): only the tables' sources change, and a backend that
    /// can takes the tables alone; the energy booked so far is kept. Kinds that differ in more
    /// than their heaters are refused.
    pub fn set_heaters(&mut self, kinds: Vec<CellKind>) -> Result<()> {
        let as_set = heater_states(&kinds);
        self.switch_heaters(kinds)?;
        if let Some(active) = self.problem.as_mut() {
            active.heaters_as_set = as_set;
        }
        Ok(())
    }

    /// Puts the heaters back as the user last set them (after thermostats switched them): what
    /// Reset does, so that a run from the initial field again switches as the first did.
    pub(super) fn restore_heaters_as_set(&mut self) -> Result<()> {
        let Some(active) = self.problem.as_ref() else {
            return Ok(());
        };
        if heater_states(&active.problem.kinds) == active.heaters_as_set {
            return Ok(());
        }
        let mut kinds = active.problem.kinds.clone();
        for (kind, on) in kinds.iter_mut().zip(&active.heaters_as_set) {
            if let (Some(heater), Some(on)) = (kind.heater.as_mut(), on) {
                heater.on = *on;
            }
        }
        self.switch_heaters(kinds)
    }

    /// [`Simulation::set_heaters`] for a thermostat: the heaters as the user set them stay.
    pub(super) fn switch_heaters(&mut self, kinds: Vec<CellKind>) -> Result<()> {
        self.settle()?;
        let active = self.problem.as_mut().ok_or_else(no_problem)?;
        let heaters_only = kinds.len() == active.problem.kinds.len()
            && kinds.iter().zip(&active.problem.kinds).all(|(new, old)| {
                new.name == old.name
                    && new.material == old.material
                    && new.held_temperature == old.held_temperature
            });
        if !heaters_only {
            return Err(HeatlabError::InvalidInput(
                "only heaters can be switched this way".into(),
            ));
        }
        let old = std::mem::replace(&mut active.problem.kinds, kinds);
        if let Err(error) = active.problem.check() {
            active.problem.kinds = old;
            return Err(error);
        }
        let tables = active
            .compiled
            .tables
            .with_heaters(&active.problem, &active.kind_counts);
        let result = match self.backend.set_problem_tables(&tables) {
            Err(HeatlabError::Unsupported(_)) => {
                // The whole problem again; what the backend booked so far is kept here.
                let taken = self.backend.take_energy_exchange();
                let upload = ProblemUpload {
                    tables: &tables,
                    map: &active.compiled.map,
                    book_energy: active.book_energy,
                    booked_rows: None,
                };
                taken.and_then(|exchange| {
                    active.booked.add(&exchange);
                    self.backend.set_problem(Some(upload))
                })
            }
            other => other,
        };
        if let Err(error) = result {
            active.problem.kinds = old;
            return Err(error);
        }
        let edit = Arc::new(ProblemEdit {
            cells: Arc::from(Vec::new()),
            kinds: Arc::from(Vec::new()),
            tables,
        });
        active.fold_time(edit.tables.dt);
        active.compiled.tables = edit.tables.clone();
        if let Some(watch) = self.agreement.as_mut() {
            watch.record_problem_edit(&edit);
        }
        Ok(())
    }

    /// The heat problem stepped, if any.
    pub fn problem(&self) -> Option<&HeatProblem> {
        self.problem.as_ref().map(|a| &a.problem)
    }

    /// The problem's tables and map, if any.
    pub fn compiled_problem(&self) -> Option<&CompiledProblem> {
        self.problem.as_ref().map(|a| &a.compiled)
    }

    /// Seconds simulated since the initial field, when a problem is stepped.
    pub fn simulated_seconds(&self) -> Option<f64> {
        self.problem.as_ref().map(ActiveProblem::seconds)
    }

    /// Sets the simulated time (a resumed state's).
    pub fn set_simulated_seconds(&mut self, seconds: f64) {
        if let Some(active) = self.problem.as_mut() {
            active.elapsed_seconds = seconds;
            active.steps_at_dt = 0;
        }
    }

    /// The energy balance since the previous call: the stored energy now (summed where the
    /// field is, only the total crossing to the host), what the backend booked meanwhile, and
    /// the round-off bound of the steps between. `None` without a problem that books energy,
    /// and on the first call after the field or the map changed other than by stepping
    /// (painting, undo, a new field), which starts the next balance.
    pub fn energy_since_last_balance(&mut self) -> Result<Option<EnergyBalance>> {
        self.settle()?;
        if !self.problem.as_ref().is_some_and(|a| a.book_energy) {
            return Ok(None);
        }
        let stored = self.backend.stored_energy()?;
        let stats = self.backend.statistics()?;
        let taken = self.backend.take_energy_exchange()?;
        let Some(active) = self.problem.as_mut() else {
            return Ok(None);
        };
        let mut exchange = std::mem::take(&mut active.booked);
        exchange.add(&taken);
        let round_off = std::mem::take(&mut active.round_off);
        let mark = EnergyMark {
            stored,
            largest_magnitude: stats.largest_magnitude(),
        };
        let capacity = free_capacity(&active.compiled.tables, &active.kind_counts);
        Ok(active.energy_mark.replace(mark).map(|before| {
            let magnitude = before.largest_magnitude.max(mark.largest_magnitude);
            EnergyBalance::new(
                before.stored,
                stored,
                exchange,
                round_off.bound(capacity, magnitude),
            )
        }))
    }

    /// The field or the map changed other than by stepping: the next energy balance starts
    /// from there.
    pub(super) fn invalidate_energy_mark(&mut self) {
        if let Some(active) = self.problem.as_mut() {
            active.energy_mark = None;
            active.round_off = RoundOff::default();
        }
    }

    /// Adds the simulated time of `steps` steps.
    /// Adds the simulated time of `steps` steps (and, for explicit ones, their round-off; an
    /// implicit step books its own, see [`RoundOff::implicit_step`]).
    pub(super) fn count_problem_time(&mut self, steps: u64) {
        if let Some(active) = self.problem.as_mut() {
            active.steps_at_dt += steps;
            match active.stepping {
                super::solve::Stepping::Explicit => active.round_off.explicit_steps += steps,
                super::solve::Stepping::Implicit { .. } => {}
            }
        }
    }

    /// Uploads `field` and gives the backend `problem` again (a backend may drop its problem
    /// with its buffers when a field is uploaded).
    pub(super) fn upload_field(
        &mut self,
        field: &Grid,
        problem: Option<&ActiveProblem>,
    ) -> Result<()> {
        self.backend.upload(field)?;
        self.give_problem(field.size(), problem)
    }

    /// Gives the backend, which holds a field of `size`, `problem` again (or none, when it has
    /// another size).
    pub(super) fn give_problem(
        &mut self,
        size: GridSize,
        problem: Option<&ActiveProblem>,
    ) -> Result<()> {
        match problem {
            Some(active) if active.problem.size == size => self.backend.set_problem(Some(
                ProblemUpload::of(&active.compiled, active.book_energy),
            )),
            _ => self.backend.set_problem(None),
        }
    }

    /// Uploads `field` with the simulation's own problem; a problem of another size is dropped.
    pub(super) fn upload_with_problem(&mut self, field: &Grid) -> Result<()> {
        let active = self.problem.take();
        let result = self.upload_field(field, active.as_ref());
        self.problem = active.filter(|a| a.problem.size == field.size());
        self.invalidate_energy_mark();
        result
    }
}

/// The runs of rows whose stability limits the edit of `cells` changes: their rows and the
/// rows beside them (across a wrapping side too).
fn row_spans(problem: &HeatProblem, cells: &[u32]) -> Vec<Range<usize>> {
    let (rows, cols) = (problem.size.rows, problem.size.cols.max(1));
    let wraps = problem.sides.periodic_rows();
    let mut touched = vec![false; rows];
    for &cell in cells {
        let row = cell as usize / cols;
        touched[row] = true;
        if row > 0 {
            touched[row - 1] = true;
        } else if wraps {
            touched[rows - 1] = true;
        }
        if row + 1 < rows {
            touched[row + 1] = true;
        } else if wraps {
            touched[0] = true;
        }
    }
    let mut spans: Vec<Range<usize>> = Vec::new();
    for (row, _) in touched.iter().enumerate().filter(|(_, &t)| t) {
        match spans.last_mut() {
            Some(span) if span.end == row => span.end = row + 1,
            _ => spans.push(row..row + 1),
        }
    }
    spans
}

/// Computes the stability limits of the rows in `spans` again from the map as it stands.
fn update_row_limits(active: &mut ActiveProblem, spans: &[Range<usize>]) {
    for span in spans {
        let limits = row_stability_limits(&active.problem, span.clone());
        active.row_limits[span.clone()].copy_from_slice(&limits);
    }
}

pub(super) fn no_problem() -> HeatlabError {
    HeatlabError::InvalidInput("there is no heat problem to edit: set or paint one first".into())
}
