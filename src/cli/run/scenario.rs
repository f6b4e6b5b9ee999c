//! `heatlab run` with a heat problem (`--scenario`, or a resumed state that holds one): the
//! steps its duration needs, and what `run.json` records of it: the problem, its simulated time
//! and what the run loop booked (the energy balance per chunk and the thermostats' switches).

use heatlab_engine::problem::{EnergyExchange, HeatProblem, Side};
use heatlab_engine::session::run::RunLedger;
use heatlab_engine::sim::Simulation;

/// A heat problem's run as `run.json` gives it.
#[derive(Debug, Clone, serde::Serialize)]
pub(super) struct ProblemRecord {
    /// The scenario's title.
    pub(super) title: String,
    /// The problem (kinds, sides, spacing, time-step rule; not its map).
    pub(super) problem: HeatProblem,
    /// The time step, s.
    pub(super) time_step_seconds: f64,
    /// The largest stable time step, s.
    pub(super) stability_limit_seconds: f64,
    /// Seconds simulated since the initial field.
    pub(super) simulated_seconds: f64,
    /// What the run loop booked: the energy balance of each chunk (`energy`, J per metre of
    /// depth), the whole run's (`budget`) and the heaters thermostats switched.
    #[serde(flatten)]
    pub(super) ledger: RunLedger,
    /// The solver's work (`--steady`, `--implicit`), when it ran.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(super) solver: Option<super::solve::SolverRecord>,
}

impl ProblemRecord {
    /// The record of `sim`'s problem, if it steps one.
    pub(super) fn of(sim: &Simulation, title: &str) -> Option<Self> {
        let problem = sim.problem()?.clone();
        let tables = &sim.compiled_problem()?.tables;
        Some(Self {
            title: title.to_string(),
            time_step_seconds: tables.dt,
            stability_limit_seconds: tables.stability_limit,
            simulated_seconds: sim.simulated_seconds().unwrap_or(0.0),
            problem,
            ledger: RunLedger::default(),
            solver: None,
        })
    }

    /// One line for the terminal at the start.
    pub(super) fn start_line(&self) -> String {
        let sides: Vec<String> = Side::ALL
            .iter()
            .map(|&side| format!("{side} {}", self.problem.sides.get(side)))
            .collect();
        format!(
            "{}: {} cells of {} m, {} kinds of cells; time step {:.4e} s ({:.3} of the stability \
             limit); {}",
            self.title,
            self.problem.size,
            self.problem.spacing,
            self.problem.kinds.len(),
            self.time_step_seconds,
            self.time_step_seconds / self.stability_limit_seconds,
            sides.join(", ")
        )
    }

    /// One line for the terminal at the end.
    pub(super) fn end_line(&self) -> String {
        let ledger = &self.ledger;
        let mut total = EnergyExchange::default();
        for window in &ledger.windows {
            total.add(&window.exchange);
        }
        format!(
            "simulated {:.6} s; energy in (J per metre of depth): heaters {:.6e}, sides {:.6e}, \
             held cells {:.6e}; {} (worst chunk of {}: {:.1e}){}",
            self.simulated_seconds,
            total.sources,
            total.sides.iter().sum::<f64>(),
            total.held,
            ledger.budget.map_or_else(
                || "no energy was booked".to_string(),
                |b| b.window.closing_summary()
            ),
            ledger.windows.len(),
            ledger.worst_relative_closing_error(),
            self.switch_summary()
        )
    }

    /// "; thermostats switched heaters N times", when they did.
    fn switch_summary(&self) -> String {
        let count = self.ledger.switch_count();
        if count == 0 {
            return String::new();
        }
        format!("; thermostats switched heaters {count} times (run.json lists them)")
    }
}
