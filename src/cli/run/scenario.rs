//! `heatlab run` with a heat problem (`--scenario`, or a resumed state that holds one): the
//! steps its duration needs, the frames its output interval asks for, and its energy balance
//! per chunk, which `run.json` records.

use super::record::RunRecord;
use heatlab_engine::error::HeatlabError;
use heatlab_engine::grid::Grid;
use heatlab_engine::problem::energy::EnergyBalance;
use heatlab_engine::problem::{EnergyExchange, HeatProblem, Side};
use heatlab_engine::sim::thermostat::HeaterSwitch;
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
    /// The energy balance of each chunk (J per metre of depth).
    pub(super) energy: Vec<EnergyWindow>,
    /// The heaters thermostats switched, oldest first (the first [`RECORDED_SWITCHES`]).
    pub(super) switches: Vec<HeaterSwitch>,
    /// Switches beyond those listed.
    pub(super) switches_left_out: u64,
}

/// Switches `run.json` lists at most (a long run of a fast thermostat switches often).
pub(super) const RECORDED_SWITCHES: usize = 1000;

/// One chunk's energy balance.
#[derive(Debug, Clone, serde::Serialize)]
pub(super) struct EnergyWindow {
    from_step: u64,
    to_step: u64,
    /// Simulated seconds at `to_step`.
    seconds: f64,
    stored_before: f64,
    stored_after: f64,
    /// Put in by heaters, through the sides (left, right, top, bottom) and by held cells.
    exchange: EnergyExchange,
    /// The change of stored energy less what came in.
    closing_error: f64,
    /// The closing error against the balance's scale (see `EnergyBalance::relative_closing_error`).
    relative_closing_error: f64,
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
            energy: Vec::new(),
            switches: Vec::new(),
            switches_left_out: 0,
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
        let worst = self
            .energy
            .iter()
            .map(|w| w.relative_closing_error)
            .fold(0.0, f64::max);
        let mut total = EnergyExchange::default();
        for window in &self.energy {
            total.add(&window.exchange);
        }
        format!(
            "simulated {:.6} s; energy in (J per metre of depth): heaters {:.6e}, sides {:.6e}, \
             held cells {:.6e}; the balance closes to {:.1e} of its scale (worst of {} \
             chunks){}",
            self.simulated_seconds,
            total.sources,
            total.sides.iter().sum::<f64>(),
            total.held,
            worst,
            self.energy.len(),
            self.switch_summary()
        )
    }

    /// "; thermostats switched heaters N times", when they did.
    fn switch_summary(&self) -> String {
        let count = self.switches.len() as u64 + self.switches_left_out;
        if count == 0 {
            return String::new();
        }
        format!("; thermostats switched heaters {count} times (run.json lists them)")
    }
}

/// The steps a duration of `seconds` takes at `problem`'s time step.
pub(super) fn steps_for(problem: &HeatProblem, seconds: f64) -> Result<u64, HeatlabError> {
    problem.tables()?.steps_for(seconds)
}

/// Books a chunk's energy: the field at its start, and the balance of each piece.
pub(super) struct EnergyBook {
    from_step: u64,
    before: Grid,
    balance: Option<EnergyBalance>,
    switches: Vec<HeaterSwitch>,
}

impl EnergyBook {
    /// Starts a chunk at the simulation's current field (none without a problem).
    pub(super) fn start(sim: &mut Simulation) -> Result<Option<Self>, HeatlabError> {
        if sim.problem().is_none() {
            return Ok(None);
        }
        Ok(Some(Self {
            from_step: sim.step_count(),
            before: sim.field()?,
            balance: None,
            switches: Vec::new(),
        }))
    }

    /// Adds the piece that ended at `field` (and the heaters switched in it).
    pub(super) fn piece(&mut self, sim: &mut Simulation, field: &Grid) -> Result<(), HeatlabError> {
        self.switches.extend(sim.take_switches());
        if let Some(piece) = sim.energy_balance(&self.before, field)? {
            match self.balance.as_mut() {
                Some(balance) => {
                    balance.stored_after = piece.stored_after;
                    balance.exchange.add(&piece.exchange);
                }
                None => self.balance = Some(piece),
            }
        }
        self.before = field.clone();
        Ok(())
    }

    /// Ends the chunk, keeping its window in the record.
    pub(super) fn finish(self, sim: &Simulation, record: &mut RunRecord) {
        let Some(problem) = record.problem.as_mut() else {
            return;
        };
        problem.simulated_seconds = sim.simulated_seconds().unwrap_or(0.0);
        let room = RECORDED_SWITCHES.saturating_sub(problem.switches.len());
        let listed = self.switches.len().min(room);
        problem.switches_left_out += (self.switches.len() - listed) as u64;
        problem.switches.extend(&self.switches[..listed]);
        if let Some(balance) = self.balance {
            problem.energy.push(EnergyWindow {
                from_step: self.from_step,
                to_step: sim.step_count(),
                seconds: problem.simulated_seconds,
                stored_before: balance.stored_before,
                stored_after: balance.stored_after,
                exchange: balance.exchange,
                closing_error: balance.closing_error(),
                relative_closing_error: balance.relative_closing_error(),
            });
        }
    }
}
