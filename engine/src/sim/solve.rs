//! A held problem solved instead of marched: its steady state at once, or implicit steps far
//! above the explicit limit (see [`crate::solve`]). Implicit steps go through the same
//! [`Simulation::start_advance`] as explicit ones, so every run loop takes them alike; with
//! energy booking they book what each step's equation says came in
//! ([`crate::solve::exchange`]), from the fields before and after it (downloaded).

use std::sync::Arc;
use std::time::Duration;

use super::problem::ActiveProblem;
use super::Simulation;
use crate::error::{HeatlabError, Result};
use crate::measure::TimingRecord;
use crate::problem::energy::free_capacity;
use crate::solve::exchange::implicit_exchange;
use crate::solve::{
    check_solvable, ImplicitScheme, ProblemSolver, SolveOptions, SolveReport, SolveRequest,
};

/// How a held problem advances in time.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub enum Stepping {
    /// The explicit scheme, at the problem's time step.
    #[default]
    Explicit,
    /// Implicit steps of `dt` seconds, each solved to `options`.
    Implicit {
        /// The scheme.
        scheme: ImplicitScheme,
        /// The step, s.
        dt: f64,
        /// How hard each step's solve works.
        options: SolveOptions,
    },
}

/// The solver of a problem, kept while the problem stays the same.
#[derive(Debug, Clone)]
pub(super) struct SolverCache {
    problem: crate::problem::HeatProblem,
    solver: Arc<ProblemSolver>,
}

/// What the implicit steps of one advance did.
#[derive(Debug, Clone, Default, PartialEq, serde::Serialize)]
pub struct ImplicitWork {
    /// Implicit steps taken.
    pub steps: u64,
    /// Iterations of the solver over them.
    pub iterations: u64,
    /// The most iterations one step took.
    pub most_iterations: u32,
}

impl ActiveProblem {
    /// The time step of the stepping in force, s.
    pub fn step_seconds(&self) -> f64 {
        match self.stepping {
            Stepping::Explicit => self.compiled.tables.dt,
            Stepping::Implicit { dt, .. } => dt,
        }
    }
}

impl Simulation {
    /// The solver of the held problem (built once per problem, checked for `request`).
    fn problem_solver(&mut self, request: SolveRequest) -> Result<Arc<ProblemSolver>> {
        let active = self.problem.as_mut().ok_or_else(|| {
            HeatlabError::InvalidInput("there is no heat problem to solve".into())
        })?;
        let solver = match &active.solver {
            Some(cache) if cache.problem == active.problem => cache.solver.clone(),
            Some(_) | None => {
                let solver = ProblemSolver::of(&active.problem)?;
                active.solver = Some(SolverCache {
                    problem: active.problem.clone(),
                    solver: solver.clone(),
                });
                solver
            }
        };
        check_solvable(&active.problem, &solver, request)?;
        Ok(solver)
    }

    /// Replaces the field by the held problem's steady state (from the field as the start;
    /// a closed part keeps its stored energy). The step count and simulated time stay; the
    /// live check, which cannot repeat a solve, stops.
    pub fn solve_steady(&mut self, options: &SolveOptions) -> Result<SolveReport> {
        self.settle()?;
        let solver = self.problem_solver(SolveRequest::Steady)?;
        self.cancel_agreement();
        let report = self
            .backend
            .solve_problem(&solver, SolveRequest::Steady, options)?;
        self.invalidate_energy_mark();
        Ok(report)
    }

    /// How the held problem advances from now on. Implicit steps are checked first (a
    /// positive time step, a problem the solver takes); the time so far is kept.
    pub fn set_stepping(&mut self, stepping: Stepping) -> Result<()> {
        self.settle()?;
        if let Stepping::Implicit {
            scheme,
            dt,
            options,
        } = stepping
        {
            if !(dt.is_finite() && dt > 0.0) {
                return Err(HeatlabError::InvalidInput(format!(
                    "an implicit time step must be positive seconds, got {dt}"
                )));
            }
            options.check()?;
            self.problem_solver(SolveRequest::Implicit { scheme, dt })?;
            self.cancel_agreement();
        }
        let active = self
            .problem
            .as_mut()
            .ok_or_else(|| HeatlabError::InvalidInput("there is no heat problem to step".into()))?;
        active.elapsed_seconds = active.seconds();
        active.steps_at_dt = 0;
        active.stepping = stepping;
        Ok(())
    }

    /// Seconds per step of the held problem (the implicit steps' own under implicit stepping).
    pub fn problem_step_seconds(&self) -> Option<f64> {
        self.problem.as_ref().map(ActiveProblem::step_seconds)
    }

    /// How the held problem advances (explicit without a problem).
    pub fn stepping(&self) -> Stepping {
        self.problem
            .as_ref()
            .map_or(Stepping::Explicit, |active| active.stepping)
    }

    /// What the implicit steps took since the last call.
    pub fn take_implicit_work(&mut self) -> ImplicitWork {
        std::mem::take(&mut self.implicit_work)
    }

    /// `steps` implicit steps, one solve each; `None` under explicit stepping.
    pub(super) fn advance_implicit(&mut self, steps: u64) -> Result<Option<TimingRecord>> {
        let Stepping::Implicit {
            scheme,
            dt,
            options,
        } = self.stepping()
        else {
            return Ok(None);
        };
        let request = SolveRequest::Implicit { scheme, dt };
        let solver = self.problem_solver(request)?;
        let book = self.problem.as_ref().is_some_and(|a| a.book_energy);
        let mut before = match book {
            true => Some(self.backend.download()?),
            false => None,
        };
        let mut seconds = 0.0;
        for _ in 0..steps {
            let report = self.backend.solve_problem(&solver, request, &options)?;
            if let Some(start) = before.take() {
                let after = self.backend.download()?;
                if let Some(active) = self.problem.as_mut() {
                    let booked = implicit_exchange(
                        &active.problem,
                        start.as_slice(),
                        after.as_slice(),
                        scheme,
                        dt,
                    )?;
                    active.booked.add(&booked.exchange);
                    let capacity = free_capacity(&active.compiled.tables, &active.kind_counts);
                    active.round_off.implicit_step(
                        capacity,
                        booked.outer_conductance,
                        dt,
                        options.tolerance * report.span,
                    );
                }
                before = Some(after);
            }
            seconds += report.seconds;
            self.implicit_work.steps += 1;
            self.implicit_work.iterations += u64::from(report.cycles);
            self.implicit_work.most_iterations =
                self.implicit_work.most_iterations.max(report.cycles);
            self.step += 1;
            self.count_problem_time(1);
        }
        let from = self.step - steps;
        Ok(Some(self.record(
            from,
            steps,
            Duration::from_secs_f64(seconds),
        )))
    }
}
