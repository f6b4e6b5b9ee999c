//! The one run loop every front end drives: `heatlab run` (to its last step, in timed
//! chunks), the app's simulation thread (a frame's steps at a time) and the Python module
//! (`step(n)`).
//!
//! A [`RunLoop`] steps a [`Simulation`] in pieces of about [`PIECE_SECONDS`], asks its driver
//! between pieces whether to stop, checks the field after every advance (non-finite values, a
//! heat problem below absolute zero), books a heat problem's energy on the device (only totals
//! cross to the host) and the heaters its thermostats switch ([`RunLedger`]), keeps one timing
//! row per chunk, and says when frames and video frames are due ([`RunSchedule`]). What is a
//! front end's own (a progress bar, a folder and exit codes; a window's previews and input; a
//! notebook's GIL) stays in its [`RunDriver`].

mod ledger;

use std::time::Instant;

pub use ledger::{EnergyBudget, EnergyWindow, RunLedger, RECORDED_SWITCHES};

use crate::compute::FieldStats;
use crate::error::{HeatlabError, Result};
use crate::measure::TimingRecord;
use crate::problem::temperature::ZERO_CELSIUS_IN_KELVIN;
use crate::session::pacing::Pacer;
use crate::sim::thermostat::HeaterSwitch;
use crate::sim::{Simulation, Stability};

/// Seconds one advance call aims at, so that a stop asked for in the middle of a long chunk
/// comes within about this long.
pub const PIECE_SECONDS: f64 = 0.25;

/// Why a run stopped before its last step.
#[derive(Debug)]
pub enum Halt {
    /// Its driver asked (a signal, a notebook's Ctrl-C).
    Interrupted,
    /// The field went NaN or infinite ([`HeatlabError::NonFinite`] or
    /// [`HeatlabError::NonFiniteWithin`]); the simulation stands at the step of the last
    /// finite state when that is known (`last_good`).
    NonFinite {
        /// What went non-finite, and where.
        error: HeatlabError,
        /// The step of the last finite state, where the simulation now stands.
        last_good: Option<u64>,
    },
    /// A heat problem's field fell below absolute zero ([`HeatlabError::BelowAbsoluteZero`]).
    BelowAbsoluteZero(HeatlabError),
}

/// How a run ended.
#[derive(Debug)]
pub enum RunEnd {
    /// Every step was taken.
    Completed,
    /// It stopped before.
    Halted(Halt),
}

/// What one advance came to.
#[derive(Debug)]
pub enum Advanced {
    /// The steps were taken and the field passed the checks.
    Stepped(TimingRecord),
    /// The run has to stop.
    Halted(Halt),
}

/// When the field is checked for non-finite values and a heat problem for a cell below
/// absolute zero.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FieldChecks {
    /// After every advance, from the field's statistics taken where the field is (a run that
    /// stops at the first bad piece: `heatlab run`, Python).
    EveryAdvance,
    /// When the driver has the field's statistics anyway ([`RunLoop::check`]): the app, at the
    /// pace its statistics are shown.
    ByDriver,
}

/// The steps of a run and when its outputs are due.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RunSchedule {
    /// The step it starts at (a resumed state's).
    pub start_step: u64,
    /// The step it ends at.
    pub end_step: u64,
    /// Steps per timed chunk (one timing row and one energy window each), at least 1.
    pub chunk: u64,
    /// Frames at every multiple of this step (0: only the first and the last).
    pub save_every: u64,
    /// Video frames at every multiple of this step (0: no video).
    pub video_every: u64,
    /// Chunks also end at every multiple of this step (the agreement check's windows; 0: none).
    pub check_every: u64,
}

impl RunSchedule {
    /// The step at which the chunk from `step` stops: a chunk's end, a multiple of an output's
    /// interval, or the last step.
    pub fn next_stop(&self, step: u64) -> u64 {
        // Saturating: a resumed state may stand near the largest step count.
        let mut stop = step.saturating_add(self.chunk.max(1)).min(self.end_step);
        for every in [self.save_every, self.check_every, self.video_every] {
            let next_multiple = step
                .checked_div(every)
                .and_then(|blocks| (blocks + 1).checked_mul(every));
            if let Some(next_multiple) = next_multiple {
                stop = stop.min(next_multiple);
            }
        }
        stop
    }

    /// What is due at `step`, reached by `advanced` steps just taken.
    pub fn due(&self, step: u64, advanced: u64) -> Due {
        Due {
            frames: step == self.start_step
                || step == self.end_step
                || (self.save_every > 0 && step % self.save_every == 0),
            video: self.video_every > 0
                && crate::session::recording::frame_due(self.video_every, step, advanced),
        }
    }
}

/// The outputs due at a step.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Due {
    /// The field and Laplacian frames.
    pub frames: bool,
    /// A video frame.
    pub video: bool,
}

/// One chunk of a run: its steps, their time as one row, and its energy window.
#[derive(Debug, Clone)]
pub struct Chunk {
    /// The step it started at.
    pub from: u64,
    /// The step it ended at.
    pub to: u64,
    /// Its pieces' time as one row (none when no piece ran).
    pub timing: Option<TimingRecord>,
    /// Its energy window, for a heat problem whose balance is known.
    pub energy: Option<EnergyWindow>,
}

/// What a front end adds to [`RunLoop::run`]: when to stop, and what to do with chunks and the
/// outputs due.
pub trait RunDriver {
    /// Whether the run should stop now (asked before every piece).
    fn stop_requested(&self) -> bool;
    /// A chunk ended (a progress bar, a timing log).
    fn chunk_done(&mut self, simulation: &mut Simulation, chunk: &Chunk) -> Result<()>;
    /// Outputs are due at the simulation's step: the first, the save points, the video's
    /// steps, the last, and the last finite state of a run that went non-finite.
    fn outputs_due(&mut self, simulation: &mut Simulation, due: Due) -> Result<()>;
}

/// The run loop's state beside the simulation it steps: the pacing of its pieces, the checks'
/// last step and what it booked.
#[derive(Debug)]
pub struct RunLoop {
    pacer: Pacer,
    checks: FieldChecks,
    /// The step the field last passed the checks at.
    checked_at: u64,
    /// The step and simulated seconds the next energy window starts at.
    energy_from: (u64, f64),
    ledger: RunLedger,
}

impl RunLoop {
    /// A loop checking the field as `checks` says; `keep_windows`: whether the ledger lists
    /// every energy window. [`RunLoop::restart`] starts it at a simulation's field (until then
    /// the first energy window is skipped: it starts the balance).
    pub fn new(checks: FieldChecks, keep_windows: bool) -> Self {
        Self {
            pacer: Pacer::new(PIECE_SECONDS),
            checks,
            checked_at: 0,
            energy_from: (0, 0.0),
            ledger: RunLedger::new(keep_windows),
        }
    }

    /// What the run booked so far.
    pub fn ledger(&self) -> &RunLedger {
        &self.ledger
    }

    /// The ledger, to take what the driver shows.
    pub fn ledger_mut(&mut self) -> &mut RunLedger {
        &mut self.ledger
    }

    /// The field changed other than by stepping (a reset, an edit, a new problem): the checks
    /// and the energy budget start again from here.
    pub fn restart(&mut self, simulation: &mut Simulation) -> Result<()> {
        self.checked_at = simulation.step_count();
        self.energy_from = here(simulation);
        self.ledger.restart_budget();
        self.ledger.switched(simulation.take_switches());
        // Sets the mark the next balance starts from; what it returns spans an edit.
        simulation.energy_since_last_balance()?;
        Ok(())
    }

    /// Advances `steps` steps. A coefficient above the stable limit is stepped through
    /// [`Simulation::advance_checked`] (the step that went non-finite is named, the last finite
    /// state kept); otherwise the field is checked after the advance with
    /// [`FieldChecks::EveryAdvance`].
    pub fn advance(&mut self, simulation: &mut Simulation, steps: u64) -> Result<Advanced> {
        let timing = if Stability::of(simulation.params().coeff) == Stability::Unstable {
            match simulation.advance_checked(steps) {
                Ok((timing, _)) => timing,
                Err(error @ HeatlabError::NonFinite { step, .. }) => {
                    let good = simulation.step_count();
                    self.ledger.switched(simulation.take_switches());
                    return Ok(Advanced::Halted(Halt::NonFinite {
                        error,
                        // A field non-finite where the advance began has no good state.
                        last_good: (step > good).then_some(good),
                    }));
                }
                Err(other) => return Err(other),
            }
        } else {
            simulation.advance(steps)?
        };
        self.ledger.switched(simulation.take_switches());
        if self.checks == FieldChecks::EveryAdvance {
            let stats = simulation.statistics()?;
            if let Some(halt) = self.check(simulation, &stats)? {
                return Ok(Advanced::Halted(halt));
            }
        }
        Ok(Advanced::Stepped(timing))
    }

    /// Checks the field, whose statistics at the simulation's step are `stats`: a non-finite
    /// value (its sum in `f64` is then not finite) names its first cell; a heat problem with a
    /// cell below absolute zero stops. `None` when the field passes.
    pub fn check(
        &mut self,
        simulation: &mut Simulation,
        stats: &FieldStats,
    ) -> Result<Option<Halt>> {
        let step = simulation.step_count();
        if !stats.total.is_finite() {
            // Rare: the field is read once, to say where.
            let (row, col) = simulation.field()?.first_non_finite().unwrap_or_default();
            let error = HeatlabError::NonFiniteWithin {
                from: self.checked_at.min(step),
                to: step,
                row,
                col,
            };
            return Ok(Some(Halt::NonFinite {
                error,
                last_good: None,
            }));
        }
        let below_zero =
            simulation.problem().is_some() && f64::from(stats.min) < -ZERO_CELSIUS_IN_KELVIN;
        if below_zero {
            return Ok(Some(Halt::BelowAbsoluteZero(
                HeatlabError::BelowAbsoluteZero {
                    step,
                    coldest: stats.min,
                },
            )));
        }
        self.checked_at = step;
        Ok(None)
    }

    /// Books the energy since the last window (a heat problem's; none without one, none when
    /// nothing stepped since, or when the field or the map changed meanwhile other than by
    /// stepping: the budget starts again).
    pub fn book_energy(&mut self, simulation: &mut Simulation) -> Result<Option<EnergyWindow>> {
        if simulation.problem().is_none() {
            return Ok(None);
        }
        let balance = simulation.energy_since_last_balance()?;
        let (from_step, from_seconds) = std::mem::replace(&mut self.energy_from, here(simulation));
        let Some(balance) = balance else {
            self.ledger.restart_budget();
            return Ok(None);
        };
        let (to_step, seconds) = self.energy_from;
        if to_step == from_step {
            // Nothing stepped (a paused frame, one right after a reset): no window to book.
            return Ok(None);
        }
        let window = EnergyWindow::new(from_step, to_step, seconds, &balance);
        self.ledger.book(window, from_seconds);
        Ok(Some(window))
    }

    /// The heaters thermostats switched since the last call (kept in the ledger too).
    pub fn take_switches(&mut self, simulation: &mut Simulation) -> Vec<HeaterSwitch> {
        self.ledger.switched(simulation.take_switches());
        self.ledger.take_fresh_switches()
    }

    /// Advances to `stop` in pieces of about [`PIECE_SECONDS`], asking `driver` before each
    /// whether to stop; books the chunk's energy and its pieces' time as one row. The halt,
    /// when the chunk ended early.
    pub fn chunk(
        &mut self,
        simulation: &mut Simulation,
        stop: u64,
        driver: &dyn RunDriver,
    ) -> Result<(Chunk, Option<Halt>)> {
        let from = simulation.step_count();
        let mut halt = None;
        while simulation.step_count() < stop {
            if driver.stop_requested() {
                halt = Some(Halt::Interrupted);
                break;
            }
            let piece = self.pacer.next_piece(stop - simulation.step_count());
            let began = Instant::now();
            match self.advance(simulation, piece)? {
                Advanced::Stepped(_) => self.pacer.learn(piece, began.elapsed()),
                Advanced::Halted(stopped) => {
                    halt = Some(stopped);
                    break;
                }
            }
        }
        let energy = self.book_energy(simulation)?;
        let pieces = simulation.take_timings();
        let chunk = Chunk {
            from,
            to: simulation.step_count(),
            timing: merge_timings(from, simulation, &pieces),
            energy,
        };
        Ok((chunk, halt))
    }

    /// Runs to `schedule.end_step` chunk by chunk: the first outputs at the start, then each
    /// chunk to `driver`, the outputs due where a chunk stops, and the last finite state's
    /// frames when the field went non-finite.
    pub fn run(
        &mut self,
        simulation: &mut Simulation,
        schedule: &RunSchedule,
        driver: &mut dyn RunDriver,
    ) -> Result<RunEnd> {
        driver.outputs_due(
            simulation,
            Due {
                frames: true,
                video: schedule.video_every > 0,
            },
        )?;
        loop {
            let step = simulation.step_count();
            if step >= schedule.end_step {
                return Ok(RunEnd::Completed);
            }
            if driver.stop_requested() {
                return Ok(RunEnd::Halted(Halt::Interrupted));
            }
            let stop = schedule.next_stop(step);
            let (chunk, halt) = self.chunk(simulation, stop, driver)?;
            driver.chunk_done(simulation, &chunk)?;
            match halt {
                None => {
                    let due = schedule.due(stop, stop - step);
                    if due.frames || due.video {
                        driver.outputs_due(simulation, due)?;
                    }
                }
                Some(
                    halt @ Halt::NonFinite {
                        last_good: Some(_), ..
                    },
                ) => {
                    let due = Due {
                        frames: true,
                        video: false,
                    };
                    driver.outputs_due(simulation, due)?;
                    return Ok(RunEnd::Halted(halt));
                }
                Some(halt) => return Ok(RunEnd::Halted(halt)),
            }
        }
    }

    /// Settles the live agreement check at the end of a run: a `completed` run checks its
    /// last, partial window; any other ending cancels the window open.
    pub fn finish(simulation: &mut Simulation, completed: bool) -> Result<()> {
        if simulation.agreement().is_none() {
            return Ok(());
        }
        if completed {
            return simulation.finish_agreement();
        }
        simulation.cancel_agreement();
        Ok(())
    }
}

/// The simulation's step and simulated seconds.
fn here(simulation: &Simulation) -> (u64, f64) {
    (
        simulation.step_count(),
        simulation.simulated_seconds().unwrap_or(0.0),
    )
}

/// One timing row for the pieces of a chunk from step `from` (none when no piece ran).
fn merge_timings(
    from: u64,
    simulation: &Simulation,
    pieces: &[TimingRecord],
) -> Option<TimingRecord> {
    let first = pieces.first()?;
    let steps = pieces.iter().map(|t| t.steps).sum();
    let seconds = pieces.iter().fold(0.0, |sum, t| sum + t.seconds);
    Some(TimingRecord::diffusion(
        from,
        steps,
        &first.backend,
        &first.method,
        simulation.initial_size(),
        seconds,
    ))
}

#[cfg(test)]
mod tests;
