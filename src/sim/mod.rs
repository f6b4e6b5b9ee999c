//! A running simulation: the initial field, a backend holding the current one, the step count,
//! timings and statistics. The GUI and the CLI both drive this; it knows nothing of either.

pub mod agreement;
mod preview;

use rayon::prelude::*;

use crate::compute::{Backend, Boundary, StepParams, STABLE_COEFF_LIMIT};
use crate::error::{HeatlabError, Result};
use crate::grid::Grid;
use crate::measure::TimingRecord;
use agreement::{AgreementWatch, Outcome, WindowPolicy};

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

/// Total heat, minimum and maximum of a field.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct FieldStats {
    /// Sum of all cells (in f64).
    pub total: f64,
    /// Smallest value.
    pub min: f32,
    /// Largest value.
    pub max: f32,
}

impl FieldStats {
    /// Statistics of `field`.
    pub fn of(field: &Grid) -> Self {
        let (total, min, max) = field
            .as_slice()
            .par_chunks(1 << 14)
            .map(|chunk| {
                chunk.iter().fold(
                    (0.0f64, f32::INFINITY, f32::NEG_INFINITY),
                    |(s, lo, hi), &v| (s + f64::from(v), lo.min(v), hi.max(v)),
                )
            })
            .reduce(
                || (0.0, f32::INFINITY, f32::NEG_INFINITY),
                |(s1, lo1, hi1), (s2, lo2, hi2)| (s1 + s2, lo1.min(lo2), hi1.max(hi2)),
            );
        Self { total, min, max }
    }
}

/// The state of one diffusion run.
pub struct Simulation {
    backend: Box<dyn Backend>,
    initial: Grid,
    params: StepParams,
    step: u64,
    timings: Vec<TimingRecord>,
    /// The last field seen to be finite, and its step: the state to fall back to.
    last_good: Option<(u64, Grid)>,
    /// The live check against the CPU reference, when it is on.
    agreement: Option<AgreementWatch>,
}

impl Simulation {
    /// Starts a simulation of `initial` on `backend`.
    pub fn new(mut backend: Box<dyn Backend>, initial: Grid, params: StepParams) -> Result<Self> {
        backend.upload(&initial)?;
        Ok(Self {
            backend,
            initial,
            params,
            step: 0,
            timings: Vec::new(),
            last_good: None,
            agreement: None,
        })
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

    /// The initial field.
    pub fn initial(&self) -> &Grid {
        &self.initial
    }

    /// Every timed chunk so far.
    pub fn timings(&self) -> &[TimingRecord] {
        &self.timings
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
        if let Some(watch) = self.agreement.as_mut() {
            watch.before_advance(self.step, self.backend.as_mut())?;
        }
        let elapsed = self.backend.advance(steps, &self.params)?;
        if let Some(watch) = self.agreement.as_mut() {
            watch.after_advance(steps, self.params, self.backend.as_mut())?;
        }
        let record = TimingRecord::diffusion(
            self.step,
            steps,
            &self.backend.kind().to_string(),
            &self.backend.step_method(),
            self.initial.size(),
            elapsed.as_secs_f64(),
        );
        self.step += steps;
        self.timings.push(record.clone());
        Ok(record)
    }

    /// Advances `steps` steps, then checks the field. If any value went non-finite, finds the
    /// first step that made it so, leaves the simulation at the last good state before it, and
    /// returns [`HeatlabError::NonFinite`] naming that step. On success returns the timing and
    /// the downloaded field.
    pub fn advance_checked(&mut self, steps: u64) -> Result<(TimingRecord, Grid)> {
        let before = match self.last_good.take() {
            Some((step, field)) if step == self.step => field,
            _ => self.backend.download()?,
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
        self.backend.upload(&before)?;
        self.step = start_step;
        let mut good = before;
        loop {
            self.backend.advance(1, &self.params)?;
            let next = self.backend.download()?;
            if let Some((row, col)) = next.first_non_finite() {
                self.backend.upload(&good)?;
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

    /// A copy of the current field.
    pub fn field(&mut self) -> Result<Grid> {
        self.backend.download()
    }

    /// The Laplacian of the current field under the simulation's boundary.
    pub fn laplacian(&mut self) -> Result<Grid> {
        let boundary: Boundary = self.params.boundary;
        self.backend.laplacian(boundary)
    }

    /// Stops recording the agreement window: the field is being replaced.
    fn interrupt_agreement(&mut self) {
        if let Some(watch) = self.agreement.as_mut() {
            watch.interrupt();
        }
    }

    /// Back to the initial field and step 0 (timings are kept).
    pub fn reset(&mut self) -> Result<()> {
        self.interrupt_agreement();
        self.backend.upload(&self.initial)?;
        self.step = 0;
        Ok(())
    }

    /// Moves the current field to another backend, keeping the step count.
    pub fn switch_backend(&mut self, mut backend: Box<dyn Backend>) -> Result<()> {
        let current = self.backend.download()?;
        backend.upload(&current)?;
        self.backend = backend;
        Ok(())
    }

    /// Starts over from a new initial field (step 0).
    pub fn replace_initial(&mut self, initial: Grid) -> Result<()> {
        self.interrupt_agreement();
        self.backend.upload(&initial)?;
        self.initial = initial;
        self.step = 0;
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
