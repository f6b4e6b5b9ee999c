//! What a Python `Simulation` holds: the engine's simulation and the run loop that steps it,
//! shared (behind one lock) with the device views handed out, which keep its GPU buffers alive.
//! The notebook's side of the run loop is [`NotebookDriver`]: Ctrl-C between pieces.

use std::sync::{Arc, Mutex, MutexGuard, TryLockError};

use pyo3::exceptions::PyRuntimeError;
use pyo3::prelude::*;

use heatlab_engine::compute::CudaBackend;
use heatlab_engine::error::HeatlabError;
use heatlab_engine::measure::TimingRecord;
use heatlab_engine::session::run::{
    Chunk, Due, FieldChecks, Halt, RunDriver, RunEnd, RunLoop, RunSchedule,
};
use heatlab_engine::sim::Simulation;
use heatlab_engine::state::FieldOrigin;

/// Timing rows a simulation keeps (the oldest go first).
const TIMING_ROWS_KEPT: usize = 100_000;

/// A simulation and its run loop.
pub struct Running {
    /// The engine's simulation.
    pub sim: Simulation,
    /// The loop that steps it (checks, energy, pacing of Ctrl-C).
    pub run: RunLoop,
    /// Where its initial field came from (kept in saved states).
    pub origin: FieldOrigin,
    /// The timing rows of the chunks stepped, oldest first.
    pub timings: Vec<TimingRecord>,
    /// Whether a view of its GPU buffers was handed out: before heatlab writes them again, it
    /// waits for every stream of the context (a consumer's kernel may still read them).
    pub views_shared: bool,
}

/// A [`Running`] shared by a `Simulation` and the views of its buffers.
pub type SharedRunning = Arc<Mutex<Running>>;

/// The lock of `shared`, or why it cannot be taken now: another thread is using the
/// simulation (a long `step`), or an earlier call panicked.
pub fn lock(shared: &SharedRunning) -> PyResult<MutexGuard<'_, Running>> {
    match shared.try_lock() {
        Ok(guard) => Ok(guard),
        Err(TryLockError::WouldBlock) => Err(PyRuntimeError::new_err(
            "this Simulation is in use by another thread (a step or a copy is running); a \
             Simulation is used from one thread at a time",
        )),
        Err(TryLockError::Poisoned(_)) => Err(PyRuntimeError::new_err(
            "this Simulation is unusable: an earlier call failed inside heatlab (a bug)",
        )),
    }
}

/// How a `step` call ended.
pub enum StepEnd {
    /// Every step was taken.
    Completed,
    /// Ctrl-C: the Python error to raise (KeyboardInterrupt).
    Interrupted(PyErr),
    /// The run stopped on its own: the error, and the step of the last finite state.
    Halted(HeatlabError),
}

impl Running {
    /// A simulation ready to step, its run loop started at its field.
    pub fn new(mut sim: Simulation, origin: FieldOrigin) -> Result<Self, HeatlabError> {
        let mut run = RunLoop::new(FieldChecks::EveryAdvance, false);
        run.restart(&mut sim)?;
        Ok(Self {
            sim,
            run,
            origin,
            timings: Vec::new(),
            views_shared: false,
        })
    }

    /// The CUDA backend, for what only it does (views of its buffers).
    pub fn cuda(&mut self) -> PyResult<&mut CudaBackend> {
        self.sim
            .backend_mut()
            .cuda_mut()
            .ok_or_else(|| PyRuntimeError::new_err("this simulation does not run on CUDA"))
    }

    /// Waits for other libraries' work on shared buffers before heatlab writes them.
    pub fn before_writing(&mut self) -> Result<(), HeatlabError> {
        if !self.views_shared {
            return Ok(());
        }
        match self.sim.backend().cuda() {
            Some(cuda) => cuda.synchronize_context(),
            None => Ok(()),
        }
    }

    /// The field changed other than by stepping: checks and the energy budget start again.
    pub fn restart(&mut self) -> Result<(), HeatlabError> {
        self.run.restart(&mut self.sim)
    }

    /// Steps `steps` steps through the run loop, asking Python between pieces whether Ctrl-C
    /// was pressed.
    pub fn step(&mut self, steps: u64) -> Result<StepEnd, HeatlabError> {
        self.before_writing()?;
        let start_step = self.sim.step_count();
        let end_step = start_step.checked_add(steps).ok_or_else(|| {
            HeatlabError::InvalidInput(format!(
                "the simulation stands at step {start_step}: {steps} more steps would pass the \
                 largest step count heatlab keeps ({})",
                u64::MAX
            ))
        })?;
        // One chunk a call: one timing row and one energy window per `step`, its pieces paced
        // at about a quarter of a second (a chunk of 1000 steps, `heatlab run`'s default,
        // would wait for the GPU every 1000 steps: 2% of the rate at 2000²).
        let schedule = RunSchedule {
            start_step,
            end_step,
            chunk: steps.max(1),
            save_every: 0,
            video_every: 0,
            check_every: 0,
        };
        let mut driver = NotebookDriver {
            interrupt: std::cell::RefCell::new(None),
            timings: &mut self.timings,
        };
        let end = self.run.run(&mut self.sim, &schedule, &mut driver)?;
        let interrupt = driver.interrupt.into_inner();
        Ok(match end {
            RunEnd::Completed => StepEnd::Completed,
            RunEnd::Halted(Halt::Interrupted) => StepEnd::Interrupted(
                interrupt
                    .unwrap_or_else(|| pyo3::exceptions::PyKeyboardInterrupt::new_err("stopped")),
            ),
            RunEnd::Halted(Halt::NonFinite { error, .. }) => StepEnd::Halted(error),
            RunEnd::Halted(Halt::BelowAbsoluteZero(error)) => StepEnd::Halted(error),
        })
    }
}

/// The notebook's side of the run loop: Ctrl-C (Python's pending signals, checked with the
/// thread attached between pieces) stops it; chunk timings are kept.
struct NotebookDriver<'a> {
    /// The KeyboardInterrupt (or the signal handler's error) that stopped the run.
    interrupt: std::cell::RefCell<Option<PyErr>>,
    timings: &'a mut Vec<TimingRecord>,
}

impl RunDriver for NotebookDriver<'_> {
    fn stop_requested(&self) -> bool {
        if self.interrupt.borrow().is_some() {
            return true;
        }
        match Python::attach(|py| py.check_signals()) {
            Ok(()) => false,
            Err(error) => {
                *self.interrupt.borrow_mut() = Some(error);
                true
            }
        }
    }

    fn chunk_done(&mut self, _: &mut Simulation, chunk: &Chunk) -> heatlab_engine::Result<()> {
        if let Some(timing) = &chunk.timing {
            if self.timings.len() == TIMING_ROWS_KEPT {
                self.timings.remove(0);
            }
            self.timings.push(timing.clone());
        }
        Ok(())
    }

    fn outputs_due(&mut self, _: &mut Simulation, _: Due) -> heatlab_engine::Result<()> {
        Ok(())
    }
}
