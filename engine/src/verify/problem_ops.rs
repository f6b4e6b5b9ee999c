//! The heat-problem operations of a sequence on both sides: set a random problem, paint its
//! map, switch a heater (the tables alone handed over, as a thermostat does), drop it; and the energy each side booked, compared after every
//! advance.

use super::compare::{self, CellDifference, Compared};
use super::problems::{edit_map, random_problem, switch_heater, tables_of};
use super::{Operation, Pair, Subject};
use crate::compute::{Backend, CpuBackend, ProblemUpload};
use crate::error::{HeatlabError, Result};
use crate::problem::{EnergyExchange, HeatProblem, StepTables};
use crate::solve::{check_solvable, ProblemSolver, SolveOptions, SolveRequest};

/// The problem both sides hold.
pub(super) struct HeldProblem {
    problem: HeatProblem,
    tables: StepTables,
    book_energy: bool,
    /// Energy the subject's field took up while stepped on another backend (switch backend).
    booked_elsewhere: EnergyExchange,
}

impl HeldProblem {
    fn upload(&self) -> ProblemUpload<'_> {
        ProblemUpload {
            tables: &self.tables,
            map: &self.problem.map,
            book_energy: self.book_energy,
            booked_rows: None,
        }
    }
}

type Found = Option<(Compared, CellDifference)>;

impl Pair<'_> {
    /// Runs a heat-problem operation on both sides. A backend under development
    /// ([`Subject::Other`]) may not step heat problems yet: both sides then skip it.
    pub(super) fn apply_problem(&mut self, operation: &Operation) -> Result<Found> {
        if let Subject::Other(_) = self.subject {
            return Ok(None);
        }
        let found = self.compare_energy()?;
        if found.is_some() {
            return Ok(found);
        }
        match operation {
            Operation::SetProblem {
                seed,
                book_energy,
                kernel,
            } => {
                if let Subject::Cuda(cuda) = &mut *self.subject {
                    cuda.set_material_kernel(*kernel)?;
                }
                let mut problem = random_problem(*seed, self.size)?;
                let tables = tables_of(&mut problem)?;
                self.problem = Some(HeldProblem {
                    problem,
                    tables,
                    book_energy: *book_energy,
                    booked_elsewhere: EnergyExchange::default(),
                });
            }
            Operation::EditMap { seed } => self.change_problem(|p| edit_map(*seed, p))?,
            Operation::SwitchHeater { seed } => {
                self.change_problem(|p| switch_heater(*seed, p))?;
                // Only the sources change: both sides take the tables alone, as a
                // thermostat's switch hands them over (map and booking kept).
                if let Some(held) = self.problem.as_ref() {
                    self.subject.backend().set_problem_tables(&held.tables)?;
                    self.reference.set_problem_tables(&held.tables)?;
                    return Ok(None);
                }
            }
            Operation::Solve(_) if matches!(self.subject, Subject::Ranks(_)) => return Ok(None),
            Operation::Solve(request) => return self.solve(*request).map(|()| None),
            _ => self.problem = None,
        }
        self.hand_over_problem()?;
        Ok(None)
    }

    /// Solves the held problem (without its thermostats) on both sides, when the solver takes
    /// it; a solve that fails must fail alike on both.
    fn solve(&mut self, request: SolveRequest) -> Result<()> {
        let Some(held) = self.problem.as_ref() else {
            return Ok(());
        };
        let mut problem = held.problem.clone();
        problem.thermostats.clear();
        let solver = ProblemSolver::of(&problem)?;
        if check_solvable(&problem, &solver, request).is_err() {
            return Ok(());
        }
        let options = SolveOptions::default();
        let subject = self
            .subject
            .backend()
            .solve_problem(&solver, request, &options);
        let reference = self.reference.solve_problem(&solver, request, &options);
        match (subject, reference) {
            (Ok(subject), Ok(reference))
                if subject.residual_history == reference.residual_history =>
            {
                Ok(())
            }
            (Ok(subject), Ok(reference)) => Err(HeatlabError::Internal(format!(
                "the solve's residuals differ: {:?} against the reference's {:?}",
                subject.residual_history, reference.residual_history
            ))),
            (Err(subject), Err(reference)) if subject.to_string() == reference.to_string() => {
                Ok(())
            }
            (subject, reference) => Err(HeatlabError::Internal(format!(
                "the solve ended differently: {:?} against the reference's {:?}",
                subject.map(|r| r.cycles),
                reference.map(|r| r.cycles)
            ))),
        }
    }

    /// Changes the held problem with `change` and recomputes its tables.
    fn change_problem(&mut self, change: impl FnOnce(&mut HeatProblem)) -> Result<()> {
        if let Some(held) = self.problem.as_mut() {
            change(&mut held.problem);
            held.tables = tables_of(&mut held.problem)?;
        }
        Ok(())
    }

    /// Gives both sides the held problem (or none).
    fn hand_over_problem(&mut self) -> Result<()> {
        let upload = self.problem.as_ref().map(HeldProblem::upload);
        self.subject.backend().set_problem(upload)?;
        self.reference.set_problem(upload)
    }

    /// Drops the held problem on both sides (a new field was uploaded).
    pub(super) fn drop_problem(&mut self) -> Result<()> {
        if self.problem.take().is_some() {
            self.hand_over_problem()?;
        }
        Ok(())
    }

    /// Steps `steps` steps of the subject's field on a fresh CPU backend with the held
    /// problem, if any, keeping what it booked.
    pub(super) fn step_elsewhere(&mut self, elsewhere: &mut CpuBackend, steps: u64) -> Result<()> {
        let Some(held) = self.problem.as_mut() else {
            return elsewhere.advance(steps, &self.params).map(|_| ());
        };
        elsewhere.set_problem(Some(held.upload()))?;
        elsewhere.advance(steps, &self.params)?;
        let booked = elsewhere.take_energy_exchange()?;
        held.booked_elsewhere.add(&booked);
        Ok(())
    }

    /// Takes the energy both sides booked since the last comparison and compares it.
    pub(super) fn compare_energy(&mut self) -> Result<Found> {
        let Some(held) = self.problem.as_mut().filter(|held| held.book_energy) else {
            return Ok(None);
        };
        let mut subject = std::mem::take(&mut held.booked_elsewhere);
        subject.add(&self.subject.backend().take_energy_exchange()?);
        let reference = self.reference.take_energy_exchange()?;
        Ok(compare::energies(&subject, &reference).map(|cell| (Compared::Energy, cell)))
    }
}
