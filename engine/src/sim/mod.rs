//! A running simulation: the initial field, a backend holding the current one, the step count,
//! timings and statistics. The GUI and the CLI both drive this; it knows nothing of either.

pub mod agreement;
pub mod generate;
mod initial;
pub mod kinds;
mod overwrite;
pub mod paint;
mod preview;
pub mod problem;
pub mod solve;
pub mod steady;
pub mod thermostat;
pub mod undoable;

pub use crate::compute::FieldStats;
use std::time::Duration;

use crate::compute::{Advance, Backend, Boundary, Layer, StepParams, STABLE_COEFF_LIMIT};
use crate::error::{HeatlabError, Result};
use crate::grid::Grid;
use crate::measure::TimingRecord;
use agreement::{AgreementWatch, Outcome, WindowPolicy};
use initial::InitialField;

/// What the coefficient means for stability.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stability {
    /// Below 0.25: every mode decays.
    Stable,
    /// Exactly 0.25: the checkerboard mode does not decay.
    Marginal,
    /// Above 0.25: the checkerboard mode grows without bound.
    Unstable,
}

impl Stability {
    /// Classifies a coefficient.
    pub fn of(coeff: f32) -> Self {
        if coeff < STABLE_COEFF_LIMIT {
            Self::Stable
        } else if coeff == STABLE_COEFF_LIMIT {
            Self::Marginal
        } else {
            Self::Unstable
        }
    }

    /// A sentence for the user, or `None` when there is nothing to say.
    pub fn warning(self) -> Option<&'static str> {
        match self {
            Self::Stable => None,
            Self::Marginal => Some(
                "at coeff = 0.25 the checkerboard mode does not decay: fine-grained noise persists",
            ),
            Self::Unstable => Some(
                "above coeff = 0.25 the scheme is unstable: the field will blow up to infinity",
            ),
        }
    }
}

/// The state of one diffusion run.
pub struct Simulation {
    backend: Box<dyn Backend>,
    initial: InitialField,
    params: StepParams,
    step: u64,
    timings: Vec<TimingRecord>,
    /// The last field seen to be finite, and its step: the state to fall back to.
    last_good: Option<(u64, Grid)>,
    /// The live check against the CPU reference, when it is on.
    agreement: Option<AgreementWatch>,
    /// An advance queued on the device by [`Simulation::start_advance`]: its first step and
    /// its step count, until [`Simulation::finish_advance`] collects its time.
    queued: Option<(u64, u64)>,
    /// Painted strokes, for undo and redo.
    paint: paint::PaintHistory,
    /// The heat problem stepped instead of the uniform stencil, if any.
    problem: Option<problem::ActiveProblem>,
    /// What implicit steps took since it was last taken.
    implicit_work: solve::ImplicitWork,
}

impl Simulation {
    /// Starts a simulation of `initial` on `backend`.
    pub fn new(mut backend: Box<dyn Backend>, initial: Grid, params: StepParams) -> Result<Self> {
        backend.upload(&initial)?;
        // A backend that ran another simulation may still keep that one's initial field.
        backend.forget_initial();
        Ok(Self::holding(
            backend,
            InitialField::on_host(initial),
            params,
            0,
        ))
    }

    /// A simulation whose backend already holds its current field, at `step`.
    fn holding(
        backend: Box<dyn Backend>,
        initial: InitialField,
        params: StepParams,
        step: u64,
    ) -> Self {
        Self {
            backend,
            initial,
            params,
            step,
            timings: Vec::new(),
            last_good: None,
            agreement: None,
            queued: None,
            paint: paint::PaintHistory::default(),
            problem: None,
            implicit_work: solve::ImplicitWork::default(),
        }
    }

    /// Starts a simulation of a newly generated jagged field, generated where `backend` runs
    /// (see [`generate::generate_on`]).
    pub fn generated(
        mut backend: Box<dyn Backend>,
        field: &crate::field::JaggedParams,
        params: StepParams,
        progress: &(dyn Fn(f32) + Sync),
    ) -> Result<(Self, generate::Generation)> {
        let (held, generation) = generate::generate_held(backend.as_mut(), field, progress)?;
        let initial = match held {
            Some(grid) => InitialField::on_host(grid),
            None => InitialField::held_by(backend.as_mut(), field.size)?,
        };
        Ok((Self::holding(backend, initial, params, 0), generation))
    }

    /// Continues a saved run: `current` on `backend` at `step`, with `initial` for Reset.
    pub fn resume(
        mut backend: Box<dyn Backend>,
        initial: Grid,
        current: &Grid,
        step: u64,
        params: StepParams,
    ) -> Result<Self> {
        if current.size() != initial.size() {
            return Err(HeatlabError::InvalidInput(format!(
                "the current field ({}) and the initial one ({}) differ in size",
                current.size(),
                initial.size()
            )));
        }
        backend.upload(current)?;
        backend.forget_initial();
        Ok(Self::holding(
            backend,
            InitialField::on_host(initial),
            params,
            step,
        ))
    }

    /// Steps taken since the initial field.
    pub fn step_count(&self) -> u64 {
        self.step
    }

    /// The coefficient and boundary in use.
    pub fn params(&self) -> StepParams {
        self.params
    }

    /// Changes coefficient or boundary from the next step on.
    pub fn set_params(&mut self, params: StepParams) {
        self.params = params;
    }

    /// The backend.
    pub fn backend(&self) -> &dyn Backend {
        self.backend.as_ref()
    }

    /// The backend, to change what only it knows (such as the CUDA kernel).
    pub fn backend_mut(&mut self) -> &mut dyn Backend {
        self.backend.as_mut()
    }

    /// Every timed chunk so far.
    pub fn timings(&self) -> &[TimingRecord] {
        &self.timings
    }

    /// Takes the timed chunks kept so far, for a caller that writes them as they come (a long
    /// headless run would otherwise keep one record per chunk in memory).
    pub fn take_timings(&mut self) -> Vec<TimingRecord> {
        std::mem::take(&mut self.timings)
    }

    /// Turns the live agreement check on (windows cut by `policy`) or off (`None`; a check in
    /// flight is cancelled).
    pub fn set_agreement_check(&mut self, policy: Option<WindowPolicy>) {
        self.agreement = policy.map(AgreementWatch::new);
    }

    /// The live agreement check, when it is on.
    pub fn agreement(&self) -> Option<&AgreementWatch> {
        self.agreement.as_ref()
    }

    /// Collects the agreement check's outcome if one has finished; never waits.
    pub fn poll_agreement(&mut self) -> Result<Option<Outcome>> {
        match self.agreement.as_mut() {
            Some(watch) => watch.poll(),
            None => Ok(None),
        }
    }

    /// The end of a headless run: checks the window being recorded, however short, and waits
    /// for every check.
    pub fn finish_agreement(&mut self) -> Result<()> {
        match self.agreement.as_mut() {
            Some(watch) => watch.flush(self.backend.as_mut()),
            None => Ok(()),
        }
    }

    /// Cancels the check in flight and drops the window being recorded (a run stopped early:
    /// it must not wait for the CPU to catch up).
    pub fn cancel_agreement(&mut self) {
        if let Some(watch) = self.agreement.as_mut() {
            watch.cancel();
        }
    }

    /// Advances `steps` steps and records their timing.
    pub fn advance(&mut self, steps: u64) -> Result<TimingRecord> {
        // The app's overlapped frames' path, waited for at once.
        match self.start_advance(steps)? {
            Some(record) => Ok(record),
            None => self
                .finish_advance()?
                .ok_or_else(|| HeatlabError::Internal("the queued advance went missing".into())),
        }
    }

    /// Starts advancing `steps` steps. On a device that runs them on its own (CUDA) this
    /// returns `None` at once and the steps are counted already: the caller draws or does host
    /// work meanwhile and collects their time with [`Simulation::finish_advance`] (anything else
    /// asked of the simulation waits for them on the device). Otherwise it steps now and
    /// returns the timing.
    ///
    /// With thermostats the steps are split at their decision steps and taken at once (each
    /// decision reads the field), whatever the device.
    pub fn start_advance(&mut self, steps: u64) -> Result<Option<TimingRecord>> {
        self.settle()?;
        if let Some(record) = self.advance_implicit(steps)? {
            return Ok(Some(record));
        }
        if steps > 0 && self.has_thermostats() {
            return self.advance_with_thermostats(steps).map(Some);
        }
        self.watch_before_advance()?;
        let started = self.backend.start_advance(steps, &self.params)?;
        self.watch_after_advance(steps)?;
        let from = self.step;
        self.step += steps;
        self.count_problem_time(steps);
        match started {
            Advance::Done(elapsed) => Ok(Some(self.record(from, steps, elapsed))),
            Advance::Queued => {
                self.queued = Some((from, steps));
                Ok(None)
            }
        }
    }

    /// Tells the live check that an advance starts (it may open a window).
    fn watch_before_advance(&mut self) -> Result<()> {
        if let Some(watch) = self.agreement.as_mut() {
            let problem = self.problem.as_ref().map(|a| &a.compiled);
            watch.before_advance(self.step, self.backend.as_mut(), problem)?;
        }
        Ok(())
    }

    /// Tells the live check that `steps` steps were taken (or queued).
    fn watch_after_advance(&mut self, steps: u64) -> Result<()> {
        if let Some(watch) = self.agreement.as_mut() {
            let problem = self.problem.as_ref().map(|a| &a.compiled);
            watch.after_advance(steps, self.params, self.backend.as_mut(), problem)?;
        }
        Ok(())
    }

    /// Waits for the advance queued by [`Simulation::start_advance`] and returns its timing;
    /// `None` when none is queued.
    pub fn finish_advance(&mut self) -> Result<Option<TimingRecord>> {
        let Some((from, steps)) = self.queued.take() else {
            return Ok(None);
        };
        let elapsed = self.backend.finish_advance()?;
        Ok(Some(self.record(from, steps, elapsed)))
    }

    /// Whether an advance is queued on the device.
    pub fn has_queued_advance(&self) -> bool {
        self.queued.is_some()
    }

    /// Collects a queued advance (its timing is kept with the others) before the backend is
    /// used in a way that needs its timer or replaces it.
    fn settle(&mut self) -> Result<()> {
        self.finish_advance().map(|_| ())
    }

    /// Keeps the timing of `steps` steps from step `from`.
    fn record(&mut self, from: u64, steps: u64, elapsed: Duration) -> TimingRecord {
        let record = TimingRecord::diffusion(
            from,
            steps,
            &self.backend.kind().to_string(),
            &self.backend.step_method(),
            self.initial.size(),
            elapsed.as_secs_f64(),
        );
        self.timings.push(record.clone());
        record
    }

    /// Total heat, minimum and maximum of the current field (on the device where it can).
    pub fn statistics(&mut self) -> Result<FieldStats> {
        self.backend.statistics()
    }

    /// Advances `steps` steps, then checks the field. If any value went non-finite, finds the
    /// first step that made it so, leaves the simulation at the last good state before it, and
    /// returns [`HeatlabError::NonFinite`] naming that step. On success returns the timing and
    /// the downloaded field.
    pub fn advance_checked(&mut self, steps: u64) -> Result<(TimingRecord, Grid)> {
        let before = match self.last_good.take() {
            Some((step, field)) if step == self.step => field,
            _ => self.download_finite()?,
        };
        let start_step = self.step;
        let record = self.advance(steps)?;
        let after = self.backend.download()?;
        if after.first_non_finite().is_none() {
            self.last_good = Some((self.step, after.clone()));
            return Ok((record, after));
        }
        // Replay one step at a time from the last good state to name the step.
        self.interrupt_agreement();
        self.upload_with_problem(&before)?;
        self.step = start_step;
        let mut good = before;
        loop {
            self.backend.advance(1, &self.params)?;
            let next = self.backend.download()?;
            if let Some((row, col)) = next.first_non_finite() {
                self.upload_with_problem(&good)?;
                return Err(HeatlabError::NonFinite {
                    step: self.step + 1,
                    row,
                    col,
                });
            }
            self.step += 1;
            good = next;
        }
    }

    /// A copy of the current field; [`HeatlabError::NonFinite`] at the current step when it
    /// holds a NaN or an infinity (there is no good state before it to go back to).
    fn download_finite(&mut self) -> Result<Grid> {
        let field = self.backend.download()?;
        match field.first_non_finite() {
            None => Ok(field),
            Some((row, col)) => Err(HeatlabError::NonFinite {
                step: self.step,
                row,
                col,
            }),
        }
    }

    /// A copy of the current field.
    pub fn field(&mut self) -> Result<Grid> {
        self.backend.download()
    }

    /// The Laplacian of the current field under the simulation's boundary.
    pub fn laplacian(&mut self) -> Result<Grid> {
        let boundary: Boundary = self.params.boundary;
        self.backend.laplacian(boundary)
    }

    /// Writes the field or its Laplacian as a `.npy` at `path` where the field is held
    /// ([`Backend::write_npy_where_held`]); `Ok(false)` when the backend does not.
    pub fn write_npy_where_held(&mut self, layer: Layer, path: &std::path::Path) -> Result<bool> {
        let boundary = self.params.boundary;
        self.backend.write_npy_where_held(layer, boundary, path)
    }

    /// Stops recording the agreement window: the field is being replaced.
    fn interrupt_agreement(&mut self) {
        if let Some(watch) = self.agreement.as_mut() {
            watch.interrupt();
        }
    }

    /// Back to the initial field and step 0, with the heaters as the user last set them
    /// (thermostats start over); timings are kept.
    pub fn reset(&mut self) -> Result<()> {
        self.settle()?;
        self.interrupt_agreement();
        self.paint.clear();
        self.restore_initial_field()?;
        self.restore_heaters_as_set()?;
        self.step = 0;
        self.set_simulated_seconds(0.0);
        Ok(())
    }

    /// Stands where a saved state stands: `current` at `step`, `initial` for Reset, `params`.
    pub fn restore(
        &mut self,
        initial: Grid,
        current: &Grid,
        step: u64,
        params: StepParams,
    ) -> Result<()> {
        if current.size() != initial.size() {
            return Err(HeatlabError::InvalidInput(format!(
                "the current field ({}) and the initial one ({}) differ in size",
                current.size(),
                initial.size()
            )));
        }
        self.settle()?;
        self.interrupt_agreement();
        self.upload_with_problem(current)?;
        self.paint.clear();
        self.set_initial(initial);
        self.step = step;
        self.params = params;
        self.last_good = None;
        Ok(())
    }

    /// Moves the current field to another backend, keeping the step count.
    pub fn switch_backend(&mut self, mut backend: Box<dyn Backend>) -> Result<()> {
        self.settle()?;
        self.initial_to_host()?;
        let current = self.backend.download()?;
        backend.upload(&current)?;
        self.backend = backend;
        // What the old backend booked goes with it.
        self.invalidate_energy_mark();
        if let Some(active) = self.problem.take() {
            let applied = self.upload_field(&current, Some(&active));
            self.problem = Some(active);
            applied?;
        }
        Ok(())
    }

    /// Starts over from a newly generated jagged field (step 0), generated where the backend
    /// runs (see [`generate::generate_on`]).
    pub fn regenerate(
        &mut self,
        field: &crate::field::JaggedParams,
        progress: &(dyn Fn(f32) + Sync),
    ) -> Result<generate::Generation> {
        self.settle()?;
        self.interrupt_agreement();
        self.paint.clear();
        self.step = 0;
        match generate::generate_held(self.backend.as_mut(), field, progress) {
            Ok((held, generation)) => {
                // Kept where it was generated: on the GPU it crosses to the host only when
                // something there needs it.
                match held {
                    Some(grid) => self.set_initial(grid),
                    None => self.keep_held_as_initial(field.size)?,
                }
                self.with_problem_after(field.size, |_| Ok(()))?;
                self.set_simulated_seconds(0.0);
                Ok(generation)
            }
            Err(error) => {
                // The backend may hold nothing now: stand at the old initial field again.
                if let Err(restore) = self.restore_initial_field() {
                    log::error!("cannot restore the initial field: {restore}");
                }
                Err(error)
            }
        }
    }

    /// Starts over from a new initial field (step 0).
    pub fn replace_initial(&mut self, initial: Grid) -> Result<()> {
        self.settle()?;
        self.interrupt_agreement();
        self.paint.clear();
        self.upload_with_problem(&initial)?;
        self.set_initial(initial);
        self.step = 0;
        self.set_simulated_seconds(0.0);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_live_check_catches_up_and_survives_a_reset() {
        use crate::compute::{CpuBackend, CpuMethod};
        use crate::grid::GridSize;
        let size = GridSize { rows: 40, cols: 33 };
        let initial =
            Grid::from_vec(size, (0..size.cells()).map(|i| (i % 7) as f32).collect()).unwrap();
        let backend = CpuBackend::with_threads(2).with_method(CpuMethod::Rows);
        let mut sim = Simulation::new(Box::new(backend), initial, StepParams::default()).unwrap();
        sim.set_agreement_check(Some(WindowPolicy::Adaptive {
            target_seconds: 0.01,
        }));
        sim.advance(3).unwrap();
        sim.reset().unwrap(); // the window being recorded is dropped, not compared
        let started = std::time::Instant::now();
        while sim.agreement().unwrap().counts().0 < 3 {
            sim.advance(5).unwrap();
            sim.poll_agreement().unwrap();
            assert!(started.elapsed().as_secs() < 30, "no check finished");
        }
        let watch = sim.agreement().unwrap();
        assert_eq!(watch.counts().1, 0);
        let first = watch.history().next().unwrap();
        assert_eq!(first.from_step, 0);
        assert!(first.to_step > 0 && first.identical());
        assert!(watch.latest().unwrap().to_step <= sim.step_count());
        sim.set_agreement_check(None);
        assert!(sim.agreement().is_none());
    }

    #[test]
    fn a_field_non_finite_from_the_start_has_no_good_step() {
        use crate::compute::{CpuBackend, CpuMethod};
        use crate::grid::GridSize;
        let size = GridSize::new(6, 5).unwrap();
        let mut values = vec![1.0f32; size.cells()];
        values[7] = f32::INFINITY;
        let initial = Grid::from_vec(size, values).unwrap();
        let backend = CpuBackend::with_threads(1).with_method(CpuMethod::Rows);
        let mut sim = Simulation::new(Box::new(backend), initial, StepParams::default()).unwrap();
        let error = sim.advance_checked(4).unwrap_err();
        assert!(
            matches!(
                error,
                HeatlabError::NonFinite {
                    step: 0,
                    row: 1,
                    col: 2
                }
            ),
            "{error}"
        );
        assert_eq!(sim.step_count(), 0);
    }

    #[test]
    fn stability_classes() {
        assert_eq!(Stability::of(0.1), Stability::Stable);
        assert_eq!(Stability::of(0.25), Stability::Marginal);
        assert_eq!(Stability::of(0.3), Stability::Unstable);
        assert!(Stability::of(0.25)
            .warning()
            .unwrap()
            .contains("checkerboard"));
    }
}
