//! `heatlab run --steady` and `--implicit`: a heat problem solved instead of marched.

use heatlab_engine::error::HeatlabError;
use heatlab_engine::problem::HeatProblem;
use heatlab_engine::sim::solve::{ImplicitWork, Stepping};
use heatlab_engine::sim::Simulation;
use heatlab_engine::solve::{ImplicitScheme, SolveOptions, SolveReport};

use super::args::RunArgs;
use super::scenario::ProblemRecord;
use crate::cli::output::note;

/// Implicit steps are this many explicit time steps unless --dt says otherwise.
pub(super) const DEFAULT_IMPLICIT_MULTIPLE: f64 = 100.0;

/// How a run advances a heat problem.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub(super) enum SolvePlan {
    /// Explicit steps (the tutorial's plate always).
    March,
    /// The steady state, solved once.
    Steady(SolveOptions),
    /// Implicit steps.
    Implicit {
        /// The scheme.
        scheme: ImplicitScheme,
        /// The step, s (`None`: [`DEFAULT_IMPLICIT_MULTIPLE`] explicit steps).
        dt: Option<f64>,
        /// Each step's solve.
        options: SolveOptions,
    },
}

impl SolvePlan {
    /// The plan of `args` (checked).
    pub(super) fn from_args(args: &RunArgs) -> Result<Self, HeatlabError> {
        let options = SolveOptions {
            tolerance: args.tolerance,
            max_cycles: args.max_iterations,
            ..SolveOptions::default()
        };
        let plan = match (args.steady, args.implicit) {
            (true, _) => Self::Steady(options),
            (false, Some(scheme)) => Self::Implicit {
                scheme,
                dt: args.dt,
                options,
            },
            (false, None) => Self::March,
        };
        match plan {
            Self::March => Ok(plan),
            Self::Steady(options) | Self::Implicit { options, .. } => {
                options.check()?;
                if let Self::Implicit { dt: Some(dt), .. } = plan {
                    if !(dt.is_finite() && dt > 0.0) {
                        return Err(HeatlabError::InvalidInput(format!(
                            "--dt must be positive seconds, got {dt}"
                        )));
                    }
                }
                Ok(plan)
            }
        }
    }

    /// The option that asked for a solver, for messages.
    fn option(self) -> &'static str {
        match self {
            Self::March => "",
            Self::Steady(_) => "--steady",
            Self::Implicit { .. } => "--implicit",
        }
    }

    /// Refuses a solver for a run without a heat problem.
    pub(super) fn check_has_problem(self, has_problem: bool) -> Result<(), HeatlabError> {
        match self {
            Self::Steady(_) | Self::Implicit { .. } if !has_problem => {
                Err(HeatlabError::InvalidInput(format!(
                    "{} solves a heat problem (--scenario, or --resume of a state with one); \
                     the tutorial's plate is stepped",
                    self.option()
                )))
            }
            Self::March | Self::Steady(_) | Self::Implicit { .. } => Ok(()),
        }
    }

    /// The time step of `problem` under this plan, s.
    pub(super) fn step_seconds(self, problem: &HeatProblem) -> Result<f64, HeatlabError> {
        let explicit = problem.tables()?.dt;
        Ok(match self {
            Self::March | Self::Steady(_) => explicit,
            Self::Implicit { dt, .. } => dt.unwrap_or(DEFAULT_IMPLICIT_MULTIPLE * explicit),
        })
    }

    /// The steps `seconds` take at this plan's time step (rounded up).
    pub(super) fn steps_for(
        self,
        problem: &HeatProblem,
        seconds: f64,
    ) -> Result<u64, HeatlabError> {
        match self {
            Self::March | Self::Steady(_) => problem.tables()?.steps_for(seconds),
            Self::Implicit { .. } => {
                let dt = self.step_seconds(problem)?;
                if !(seconds.is_finite() && seconds > 0.0) {
                    return Err(HeatlabError::InvalidInput(format!(
                        "a duration must be positive seconds, got {seconds}"
                    )));
                }
                Ok((seconds / dt).ceil() as u64)
            }
        }
    }

    /// Sets `simulation` to step as planned, solving the steady state here (said on the
    /// terminal and kept in `record`).
    pub(super) fn start(
        self,
        simulation: &mut Simulation,
        record: Option<&mut ProblemRecord>,
    ) -> Result<(), HeatlabError> {
        if let Some(report) = self.apply(simulation)? {
            let solved = SolverRecord::Steady(report);
            note(&solved.line());
            if let Some(record) = record {
                record.solver = Some(solved);
            }
        }
        Ok(())
    }

    /// Sets `simulation` to step as planned; the steady state is solved here (`Some` report).
    fn apply(self, simulation: &mut Simulation) -> Result<Option<SolveReport>, HeatlabError> {
        match self {
            Self::March => Ok(None),
            Self::Steady(options) => simulation.solve_steady(&options).map(Some),
            Self::Implicit {
                scheme, options, ..
            } => {
                let problem = simulation.problem().cloned().ok_or_else(|| {
                    HeatlabError::InvalidInput("--implicit needs a heat problem".into())
                })?;
                let dt = self.step_seconds(&problem)?;
                simulation.set_stepping(Stepping::Implicit {
                    scheme,
                    dt,
                    options,
                })?;
                Ok(None)
            }
        }
    }
}

/// Keeps what implicit steps took in `record` (and says it), after the run.
pub(super) fn finish(simulation: &mut Simulation, record: &mut ProblemRecord) {
    if let Stepping::Implicit { scheme, dt, .. } = simulation.stepping() {
        let implicit = SolverRecord::Implicit {
            scheme,
            dt,
            work: simulation.take_implicit_work(),
        };
        note(&implicit.line());
        record.solver = Some(implicit);
    }
}

/// What the solver did in a run, as run.json gives it.
#[derive(Debug, Clone, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub(super) enum SolverRecord {
    /// The steady state's solve.
    Steady(SolveReport),
    /// The implicit steps.
    Implicit {
        /// The scheme.
        scheme: ImplicitScheme,
        /// The step, s.
        dt: f64,
        /// Steps, iterations and the most one step took.
        work: ImplicitWork,
    },
}

impl SolverRecord {
    /// One line for the terminal.
    pub(super) fn line(&self) -> String {
        match self {
            Self::Steady(report) => format!(
                "steady state: {} iterations ({} grids), max residual {:.3e} -> {:.3e} W/m, \
                 estimated error {:.2e} °C of a {:.4} °C span, {:.1} ms",
                report.cycles,
                report.levels,
                report.residual_history.first().copied().unwrap_or(0.0),
                report.residual_history.last().copied().unwrap_or(0.0),
                report.estimated_error,
                report.span,
                report.seconds * 1e3
            ),
            Self::Implicit { scheme, dt, work } => format!(
                "{} implicit steps of {dt:.4e} s ({scheme}): {} solver iterations, at most {} \
                 per step",
                work.steps, work.iterations, work.most_iterations
            ),
        }
    }
}
