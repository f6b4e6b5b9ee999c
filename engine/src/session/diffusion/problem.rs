//! The heat problem on the simulation thread: edits from the panel (painting kinds of cells,
//! heaters, held regions, sides, thermostats) applied between steps, and the problem's part of
//! each frame.

use std::sync::Arc;
use std::time::{Duration, Instant};

use super::messages::{FramePart, ProblemCommand, ProblemFrame, SimEvent};
use super::SimThread;
use crate::error::{HeatlabError, Result};
use crate::problem::{material, CellKind, HeatProblem, Shape, PLATE_SPACING};
use crate::session::notice::Level;
use crate::session::run::EnergyWindow;
use crate::sim::solve::Stepping;
use crate::sim::steady::{SteadyLook, SteadyWatch};
use crate::sim::Simulation;
use crate::solve::SolveOptions;

/// The least time between two [`SimEvent::Problem`]s while kinds are painted (each one copies
/// the map: 4 MB at 2000²); the stroke's end always sends one.
pub const PROBLEM_EVENT_INTERVAL: Duration = Duration::from_millis(100);

/// When the problem was last sent to the panel, and whether a change is still unsent.
#[derive(Debug, Default)]
pub(super) struct ProblemEvents {
    last: Option<Instant>,
    unsent: bool,
}

impl SimThread {
    /// Applies an edit of the problem; a refused edit leaves the problem as it was.
    pub(super) fn edit_problem(&mut self, command: ProblemCommand) {
        let Some(sim) = self.sim.as_mut() else {
            self.notice(
                Level::Warning,
                "there is no field to build a problem on yet",
            );
            return;
        };
        let mut throttled = false;
        let mut solved = None;
        let result = match command {
            ProblemCommand::Set(problem) => sim.set_problem(problem.map(|p| *p), true),
            ProblemCommand::Paint { shape, kind } => {
                throttled = true;
                paint(sim, &shape, kind)
            }
            ProblemCommand::EndStroke => sim.end_kind_stroke().map(|_| ()),
            ProblemCommand::MovePart { seed, by } => sim
                .move_part(seed, by)
                .and_then(|_| sim.end_kind_stroke().map(|_| ())),
            ProblemCommand::DeletePart(seed) => sim
                .delete_part(seed)
                .and_then(|_| sim.end_kind_stroke().map(|_| ())),
            ProblemCommand::EditKind { index, kind } => {
                on_a_problem(sim).and_then(|()| sim.set_kind(index, kind))
            }
            ProblemCommand::SetSide(side, condition) => {
                on_a_problem(sim).and_then(|()| sim.set_side(side, condition))
            }
            ProblemCommand::SetSides(sides) => {
                on_a_problem(sim).and_then(|()| sim.set_sides(sides))
            }
            ProblemCommand::SetThermostats(thermostats) => {
                on_a_problem(sim).and_then(|()| sim.set_thermostats(thermostats))
            }
            ProblemCommand::SetStepping(stepping) => sim.set_stepping(stepping),
            ProblemCommand::SolveSteady => sim
                .solve_steady(&SolveOptions::default())
                .map(|report| solved = Some(report)),
        };
        if let Some(report) = solved {
            self.notice(
                Level::Info,
                format!(
                    "steady state solved: {} iterations, {:.1} ms, estimated error {:.1e} °C",
                    report.cycles,
                    report.seconds * 1e3,
                    report.estimated_error
                ),
            );
        }
        match result {
            Ok(()) => {
                self.schedule.dirty = true;
                self.stats.reset();
                if throttled {
                    self.emit_problem_throttled();
                } else {
                    self.emit_problem();
                }
            }
            Err(error) => {
                if let Some(sim) = self.sim.as_mut() {
                    // A stroke that failed half-way is ended, so that undo can take it back.
                    if let Err(end) = sim.end_kind_stroke() {
                        log::warn!("ending a failed stroke of kinds: {end}");
                    }
                }
                self.notice(
                    Level::Error,
                    format!("the problem was not changed: {error}"),
                );
            }
        }
    }

    /// Tells the panel the problem as it now stands.
    pub(super) fn emit_problem(&mut self) {
        let problem = self
            .sim
            .as_ref()
            .and_then(Simulation::problem)
            .map(|p| Arc::new(p.clone()));
        self.problem_events = ProblemEvents {
            last: Some(Instant::now()),
            unsent: false,
        };
        let stepping = self
            .sim
            .as_ref()
            .map_or(Stepping::Explicit, Simulation::stepping);
        self.emit(SimEvent::Problem(problem));
        self.emit(SimEvent::Stepping(stepping));
    }

    /// Tells the panel the problem unless it was told less than [`PROBLEM_EVENT_INTERVAL`]
    /// ago (then a later frame or the stroke's end does).
    fn emit_problem_throttled(&mut self) {
        let recent = self
            .problem_events
            .last
            .is_some_and(|at| at.elapsed() < PROBLEM_EVENT_INTERVAL);
        if recent {
            self.problem_events.unsent = true;
        } else {
            self.emit_problem();
        }
    }

    /// Sends a change of the problem held back by the throttle once its interval has passed
    /// (while paused no frame comes to send it).
    pub(super) fn flush_problem_event(&mut self) {
        if self.problem_events.unsent {
            self.emit_problem_throttled();
        }
    }

    /// The problem's part of a frame, when a problem is stepped: with the energy balance when
    /// `balance_due` (its time counted as statistics). Sends a throttled change of the problem
    /// once its interval has passed.
    pub(super) fn problem_frame(
        &mut self,
        balance_due: bool,
        split: &mut Vec<(FramePart, Duration)>,
    ) -> Option<ProblemFrame> {
        self.flush_problem_event();
        let sim = self.sim.as_mut()?;
        sim.problem()?;
        let energy = if balance_due {
            let started = Instant::now();
            let window = self.run.book_energy(sim);
            split.push((FramePart::Statistics, started.elapsed()));
            window.unwrap_or_else(|error| {
                log::warn!("no energy balance this frame: {error}");
                None
            })
        } else {
            None
        };
        let steady_at = match self.steady.as_mut() {
            Some(watch) if balance_due => look_for_steady(sim, watch, split),
            _ => None,
        };
        let switches = self.run.take_switches(sim);
        let budget = self.run.ledger().budget;
        let problem = sim.problem()?;
        let compiled = sim.compiled_problem()?;
        let frame = ProblemFrame {
            simulated_seconds: sim.simulated_seconds().unwrap_or(0.0),
            dt: sim.problem_step_seconds().unwrap_or(compiled.tables.dt),
            duration_seconds: self.duration_seconds,
            change_rate: self.steady.as_ref().and_then(SteadyWatch::rate),
            steady_tolerance: self.steady.as_ref().map(SteadyWatch::tolerance),
            energy: energy.as_ref().map(EnergyWindow::balance),
            budget: energy.and(budget),
            heaters_on: problem
                .kinds
                .iter()
                .map(|k| k.heater.is_some_and(|h| h.on))
                .collect(),
            switches,
        };
        if let Some(rate) = steady_at.filter(|_| self.schedule.playing) {
            self.steady_reached(&frame, rate);
        }
        Some(frame)
    }

    /// Playing stops at the steady state (once: Play goes on past it).
    fn steady_reached(&mut self, frame: &ProblemFrame, rate: f64) {
        self.schedule.stop();
        self.emit(SimEvent::Stopped);
        let tolerance = frame.steady_tolerance.unwrap_or(0.0);
        self.notice(
            Level::Info,
            format!(
                "paused at the steady state: the largest |dT/dt| is {rate:.2e} K/s, under \
                 {tolerance:.2e} K/s, at {} simulated (Play goes on)",
                crate::render::label::simulated_time(frame.simulated_seconds)
            ),
        );
    }

    /// Stops playing once the largest |dT/dt| falls under `tolerance` K/s (`None`: never).
    pub(super) fn set_steady_stop(&mut self, tolerance: Option<f64>) {
        let same = self.steady.as_ref().map(SteadyWatch::tolerance) == tolerance;
        if !same {
            self.steady = tolerance
                .filter(|t| t.is_finite() && *t > 0.0)
                .map(SteadyWatch::new);
            self.schedule.dirty = true;
        }
    }

    /// Sets the problem's duration: playing stops once at the first whole step at or past it
    /// (`None`: no end). A duration already passed sets no stop until Reset.
    pub(super) fn set_duration(&mut self, seconds: Option<f64>) {
        let seconds = seconds.filter(|s| s.is_finite() && *s > 0.0);
        let Some(sim) = self.sim.as_ref() else {
            return;
        };
        let steps = match (seconds, sim.compiled_problem()) {
            (Some(seconds), Some(compiled)) => match compiled.tables.steps_for(seconds) {
                Ok(steps) => Some(steps),
                Err(error) => {
                    self.notice(Level::Error, format!("the duration was not set: {error}"));
                    return;
                }
            },
            _ => None,
        };
        let now = sim.simulated_seconds().unwrap_or(0.0);
        let dt = sim.problem_step_seconds().unwrap_or(0.0);
        let step = sim.step_count();
        self.duration_seconds = seconds;
        self.duration_steps = steps;
        self.schedule.end_step = match seconds {
            Some(seconds) if seconds > now && dt > 0.0 => {
                Some(step.saturating_add(((seconds - now) / dt).ceil() as u64))
            }
            _ => None,
        };
        self.schedule.dirty = true;
    }
}

/// Looks at the field for the steady stop when simulated time passed since its last look (its
/// time counted as statistics). Returns the rate when it fell under the tolerance.
fn look_for_steady(
    sim: &mut Simulation,
    watch: &mut SteadyWatch,
    split: &mut Vec<(FramePart, Duration)>,
) -> Option<f64> {
    let seconds = sim.simulated_seconds()?;
    if !watch.wants(seconds) {
        return None;
    }
    let started = Instant::now();
    let field = match sim.field() {
        Ok(field) => field,
        Err(error) => {
            log::warn!("no look for the steady state this frame: {error}");
            return None;
        }
    };
    let look = watch.look(seconds, field);
    split.push((FramePart::Statistics, started.elapsed()));
    match look {
        SteadyLook::Steady(rate) => Some(rate),
        SteadyLook::NoRate | SteadyLook::Changing(_) => None,
    }
}

/// Makes the tutorial's plate a problem of [`ProblemCommand::PLATE_MATERIAL`] when no problem
/// is stepped: the first edit starts one.
fn on_a_problem(sim: &mut Simulation) -> Result<()> {
    if sim.problem().is_none() {
        let plate = plate_problem(sim)?;
        sim.set_problem(Some(plate), true)?;
    }
    Ok(())
}

/// Paints `shape` with `kind`; on the tutorial's plate, first makes the plate a problem of
/// [`ProblemCommand::PLATE_MATERIAL`].
fn paint(sim: &mut Simulation, shape: &Shape, kind: CellKind) -> Result<()> {
    on_a_problem(sim)?;
    sim.paint_kind(shape, kind).map(|_| ())
}

/// The tutorial's plate as a problem of [`ProblemCommand::PLATE_MATERIAL`].
fn plate_problem(sim: &Simulation) -> Result<HeatProblem> {
    let plate = material::find(ProblemCommand::PLATE_MATERIAL).ok_or_else(|| {
        HeatlabError::InvalidInput(format!(
            "the material library has no {}",
            ProblemCommand::PLATE_MATERIAL
        ))
    })?;
    Ok(HeatProblem::uniform(
        sim.initial_size(),
        PLATE_SPACING,
        plate,
    ))
}
