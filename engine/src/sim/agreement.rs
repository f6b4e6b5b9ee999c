//! Live agreement: checks a running backend against the CPU reference by catching up.
//!
//! The CPU cannot keep pace with the GPU, so the check works on windows: keep the field at
//! step k, record every advance (steps, coefficient, boundary) the simulation makes, keep the
//! running backend's field at the window's end k+m, and let a background thread step the
//! snapshot through the recorded advances with another method and compare, bit for bit. While
//! it does, the running backend goes on; when it is done, the next window starts.
//!
//! The reference is the CPU's row method for a GPU backend, and another CPU method (blocked or
//! rows) for a CPU backend, so that a CPU run is checked too.

use std::collections::VecDeque;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use crate::compute::{
    Backend, BackendKind, CpuBackend, CpuMethod, FieldEdit, ProblemUpload, StepParams,
};
use crate::error::{HeatlabError, Result};
use crate::grid::Grid;
use crate::problem::CompiledProblem;
pub use crate::sim::problem::ProblemEdit;

/// Advances the reference takes between looks at the cancel flag.
const CANCEL_GRANULARITY: u64 = 64;
/// Outcomes kept for the plot.
const HISTORY: usize = 600;

/// The first cell (row-major) at which two fields differ, and how much they differ overall.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize)]
pub struct CellDifference {
    /// Row of the first differing cell.
    pub row: usize,
    /// Column of the first differing cell.
    pub col: usize,
    /// The checked backend's value there.
    pub subject: f64,
    /// The reference's value there.
    pub reference: f64,
    /// Cells that differ.
    pub differing_cells: usize,
    /// Largest |subject - reference| over the differing cells (NaN if a side is not finite).
    pub max_abs_difference: f64,
}

/// The first difference between two equally long arrays of `cols` columns under `same`.
pub fn first_difference<T: Copy>(
    subject: &[T],
    reference: &[T],
    cols: usize,
    same: impl Fn(T, T) -> bool,
    value: impl Fn(T) -> f64,
) -> Option<CellDifference> {
    let mut found: Option<CellDifference> = None;
    for (index, (&a, &b)) in subject.iter().zip(reference).enumerate() {
        if same(a, b) {
            continue;
        }
        let (a, b) = (value(a), value(b));
        let difference = (a - b).abs();
        match &mut found {
            Some(found) => {
                found.differing_cells += 1;
                found.max_abs_difference = found.max_abs_difference.max(difference);
            }
            None => {
                found = Some(CellDifference {
                    row: index / cols.max(1),
                    col: index % cols.max(1),
                    subject: a,
                    reference: b,
                    differing_cells: 1,
                    max_abs_difference: difference,
                })
            }
        }
    }
    found
}

/// The first difference between two fields, bit for bit (`-0.0` and `0.0` differ, as do NaNs
/// with different payloads). Fields of different sizes differ at cell (0, 0).
pub fn compare_fields(subject: &Grid, reference: &Grid) -> Option<CellDifference> {
    if subject.size() != reference.size() {
        return Some(CellDifference {
            row: 0,
            col: 0,
            subject: subject.size().cells() as f64,
            reference: reference.size().cells() as f64,
            differing_cells: subject.size().cells().max(reference.size().cells()),
            max_abs_difference: f64::NAN,
        });
    }
    first_difference(
        subject.as_slice(),
        reference.as_slice(),
        subject.cols(),
        |a: f32, b: f32| a.to_bits() == b.to_bits(),
        f64::from,
    )
}

/// The reference method for a backend: another method than the one it steps with.
pub fn reference_method(backend: &dyn Backend) -> CpuMethod {
    let blocked = CpuMethod::Blocked {
        steps_per_pass: 8,
        band_rows: 64,
    };
    match backend.kind() {
        BackendKind::Cuda => CpuMethod::Rows,
        BackendKind::Cpu if backend.step_method().starts_with("cpu-rows") => blocked,
        BackendKind::Cpu => CpuMethod::Rows,
    }
}

/// Threads the reference may use. In the app: a quarter of the cores beside a GPU (the thread
/// that drives the GPU, the one that draws and the previews' own parallel work need the rest:
/// at 2000² on 16 cores, frames came 32% less often with all but two or with half of them, 15%
/// less often with a quarter; steps per second were not lower with any), one beside a CPU
/// backend (which uses the others). In a headless run, which waits for every window, all.
pub fn reference_threads(kind: BackendKind, policy: WindowPolicy) -> usize {
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    match (policy, kind) {
        (WindowPolicy::Every(_), _) => cores,
        (WindowPolicy::Adaptive { .. }, BackendKind::Cuda) => (cores / 4).max(1),
        (WindowPolicy::Adaptive { .. }, BackendKind::Cpu) => 1,
    }
}

/// One thing done to the field within a window.
#[derive(Debug, Clone)]
pub enum WindowEntry {
    /// Steps and the parameters they were taken with.
    Advance(u64, StepParams),
    /// A brush dab or cells set (undo, redo), which the reference repeats in its place.
    Edit(FieldEdit),
    /// A heat problem set (or cleared: back to the uniform stencil) from here on.
    Problem(Option<Arc<CompiledProblem>>),
    /// Cells of the problem's map given new kinds and the tables from here on (a painted
    /// shape, its undo, a heater switched by a thermostat): the edit, not the whole map.
    ProblemEdit(Arc<ProblemEdit>),
}

/// A stretch of a run: the field at its start and every advance (and edit) made in it.
#[derive(Debug, Clone)]
pub struct Window {
    /// Step of `start`.
    pub from_step: u64,
    /// The field at `from_step`.
    pub start: Grid,
    /// The heat problem stepped at `from_step`, if any.
    pub problem: Option<Arc<CompiledProblem>>,
    /// Each advance and edit, in order.
    pub advances: Vec<WindowEntry>,
    /// When recording began.
    pub opened: Instant,
}

impl Window {
    /// Steps recorded so far.
    pub fn steps(&self) -> u64 {
        self.advances
            .iter()
            .map(|entry| match entry {
                WindowEntry::Advance(steps, _) => *steps,
                WindowEntry::Edit(_) | WindowEntry::Problem(_) | WindowEntry::ProblemEdit(_) => 0,
            })
            .sum()
    }
}

/// One finished check.
#[derive(Debug, Clone, serde::Serialize)]
pub struct Outcome {
    /// Step the window started at.
    pub from_step: u64,
    /// Step it ended at (the compared field's step).
    pub to_step: u64,
    /// The reference's method.
    pub reference: String,
    /// `None`: bit-identical.
    pub difference: Option<CellDifference>,
    /// Seconds the reference took to catch up.
    pub reference_seconds: f64,
    /// When the check finished.
    #[serde(skip)]
    pub finished: Option<Instant>,
}

impl Outcome {
    /// Whether the fields were bit-identical.
    pub fn identical(&self) -> bool {
        self.difference.is_none()
    }
}

/// The reference's upload of a window's problem (it books no energy).
fn problem_upload(problem: &Option<CompiledProblem>) -> Option<ProblemUpload<'_>> {
    problem.as_ref().map(|p| ProblemUpload::of(p, false))
}

/// Applies `edit` to the reference's own copy of the problem and gives it to `reference`.
fn replay_problem_edit(
    reference: &mut CpuBackend,
    problem: &mut Option<CompiledProblem>,
    edit: &ProblemEdit,
) -> Result<()> {
    let held = problem.as_mut().ok_or_else(|| {
        HeatlabError::Internal("a problem edit was recorded without a problem".into())
    })?;
    edit.apply(held)?;
    reference.set_problem(problem_upload(problem))
}

/// Steps `window` on a CPU reference and compares the result with `subject_end`.
fn check_window(
    window: Window,
    subject_end: Grid,
    method: CpuMethod,
    threads: usize,
    cancel: &AtomicBool,
) -> Result<Outcome> {
    let started = Instant::now();
    let mut reference = CpuBackend::with_threads(threads).with_method(method);
    reference.upload(&window.start)?;
    let mut problem = window.problem.as_deref().cloned();
    reference.set_problem(problem_upload(&problem))?;
    for entry in &window.advances {
        let (steps, params) = match entry {
            WindowEntry::Advance(steps, params) => (*steps, *params),
            WindowEntry::Edit(edit) => {
                edit.apply(&mut reference)?;
                continue;
            }
            WindowEntry::Problem(set) => {
                problem = set.as_deref().cloned();
                reference.set_problem(problem_upload(&problem))?;
                continue;
            }
            WindowEntry::ProblemEdit(edit) => {
                replay_problem_edit(&mut reference, &mut problem, edit)?;
                continue;
            }
        };
        let mut left = steps;
        while left > 0 {
            if cancel.load(Ordering::Relaxed) {
                return Err(HeatlabError::Cancelled);
            }
            let now = left.min(CANCEL_GRANULARITY);
            reference.advance(now, &params)?;
            left -= now;
        }
    }
    let expected = reference.download()?;
    Ok(Outcome {
        from_step: window.from_step,
        to_step: window.from_step + window.steps(),
        reference: reference.step_method(),
        difference: compare_fields(&subject_end, &expected),
        reference_seconds: started.elapsed().as_secs_f64(),
        finished: Some(Instant::now()),
    })
}

/// A background check in flight.
struct Job {
    handle: JoinHandle<Result<Outcome>>,
    cancel: Arc<AtomicBool>,
}

/// How windows are cut.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum WindowPolicy {
    /// As long as the reference needs about this long, a new window as soon as the last check
    /// is done (the app: never waits).
    Adaptive {
        /// Seconds of reference work per window.
        target_seconds: f64,
    },
    /// Every window spans this many steps and every window is checked; the caller ends its
    /// advances on multiples of it and waits for a busy reference (the headless run).
    Every(u64),
}

/// The agreement check of one simulation: the window being recorded, the check in flight and
/// the outcomes so far.
pub struct AgreementWatch {
    policy: WindowPolicy,
    recording: Option<Window>,
    job: Option<Job>,
    /// Steps per window under the adaptive policy, tuned from the reference's speed.
    window_steps: u64,
    history: VecDeque<Outcome>,
    /// Checks that found a difference, all time.
    mismatches: u64,
    /// Checks done, all time.
    checks: u64,
    /// The first check that found a difference.
    first_mismatch: Option<Outcome>,
}

impl AgreementWatch {
    /// A watch that cuts windows by `policy`.
    pub fn new(policy: WindowPolicy) -> Self {
        Self {
            policy,
            recording: None,
            job: None,
            window_steps: match policy {
                WindowPolicy::Adaptive { .. } => 64,
                WindowPolicy::Every(steps) => steps.max(1),
            },
            history: VecDeque::new(),
            mismatches: 0,
            checks: 0,
            first_mismatch: None,
        }
    }

    /// Records that the simulation steps `problem` from now on (`None`: the uniform stencil).
    /// A copy is taken only while a window is being recorded (a new window copies the
    /// problem of its start, given to [`AgreementWatch::before_advance`]).
    pub fn record_problem(&mut self, problem: Option<&CompiledProblem>) {
        if let Some(window) = self.recording.as_mut() {
            let copy = problem.map(|p| Arc::new(p.clone()));
            window.advances.push(WindowEntry::Problem(copy));
        }
    }

    /// Records an edit of the problem's map or tables (see [`WindowEntry::ProblemEdit`]).
    pub fn record_problem_edit(&mut self, edit: &Arc<ProblemEdit>) {
        if let Some(window) = self.recording.as_mut() {
            window
                .advances
                .push(WindowEntry::ProblemEdit(Arc::clone(edit)));
        }
    }

    /// Outcomes so far, oldest first (the last few hundred).
    pub fn history(&self) -> impl DoubleEndedIterator<Item = &Outcome> {
        self.history.iter()
    }

    /// The latest outcome.
    pub fn latest(&self) -> Option<&Outcome> {
        self.history.back()
    }

    /// Checks done and how many of them found a difference.
    pub fn counts(&self) -> (u64, u64) {
        (self.checks, self.mismatches)
    }

    /// The first check that found a difference, all time.
    pub fn first_mismatch(&self) -> Option<&Outcome> {
        self.first_mismatch.as_ref()
    }

    /// The window policy.
    pub fn policy(&self) -> WindowPolicy {
        self.policy
    }

    /// Hands the window being recorded to the reference now, however short it is (the end of
    /// a headless run), and waits for every check.
    pub fn flush(&mut self, backend: &mut dyn Backend) -> Result<()> {
        self.wait()?;
        let Some(window) = self.recording.take() else {
            return Ok(());
        };
        if window.advances.is_empty() {
            return Ok(());
        }
        let end = backend.download()?;
        let threads = reference_threads(backend.kind(), self.policy);
        self.spawn(window, end, reference_method(backend), threads)?;
        self.wait()?;
        Ok(())
    }

    /// Whether a check is running in the background.
    pub fn is_checking(&self) -> bool {
        self.job.is_some()
    }

    /// Forgets the window being recorded (the field was replaced). A check in flight compares
    /// fields taken before, so it stands.
    pub fn interrupt(&mut self) {
        self.recording = None;
    }

    /// Called by the simulation after it edited the field: the window being recorded repeats
    /// the edit in its place, so that the reference ends where the backend does. Without a
    /// window, the next one starts from a snapshot taken after the edit.
    pub fn record_edit(&mut self, edit: &FieldEdit) {
        if let Some(window) = self.recording.as_mut() {
            window.advances.push(WindowEntry::Edit(edit.clone()));
        }
    }

    /// Called by the simulation before an advance from `step`, stepping `problem`: starts a
    /// window if none is being recorded and the reference is free (or the policy checks every
    /// window).
    pub fn before_advance(
        &mut self,
        step: u64,
        backend: &mut dyn Backend,
        problem: Option<&CompiledProblem>,
    ) -> Result<()> {
        if self
            .job
            .as_ref()
            .is_some_and(|job| job.handle.is_finished())
        {
            self.poll()?;
        }
        if self.recording.is_some() {
            return Ok(());
        }
        let free = self.job.is_none() || matches!(self.policy, WindowPolicy::Every(_));
        if free {
            self.recording = Some(Window {
                from_step: step,
                start: backend.download()?,
                problem: problem.map(|p| Arc::new(p.clone())),
                advances: Vec::new(),
                opened: Instant::now(),
            });
        }
        Ok(())
    }

    /// Called by the simulation after an advance: records it and, at the window's end, hands
    /// the window to the reference (and, checking every window, starts the next one stepping
    /// `problem`).
    pub fn after_advance(
        &mut self,
        steps: u64,
        params: StepParams,
        backend: &mut dyn Backend,
        problem: Option<&CompiledProblem>,
    ) -> Result<()> {
        let Some(window) = self.recording.as_mut() else {
            return Ok(());
        };
        window.advances.push(WindowEntry::Advance(steps, params));
        let complete = self
            .recording
            .as_ref()
            .is_some_and(|window| self.window_is_complete(window));
        if !complete {
            return Ok(());
        }
        let end = backend.download()?;
        if self.job.is_some() {
            self.wait()?; // only the every-window policy records while a check runs
        }
        let Some(window) = self.recording.take() else {
            return Ok(());
        };
        let to_step = window.from_step + window.steps();
        if let WindowPolicy::Every(_) = self.policy {
            // The next window starts where this one ends, from the field already downloaded.
            self.recording = Some(Window {
                from_step: to_step,
                start: end.clone(),
                problem: problem.map(|p| Arc::new(p.clone())),
                advances: Vec::new(),
                opened: Instant::now(),
            });
        }
        let threads = reference_threads(backend.kind(), self.policy);
        self.spawn(window, end, reference_method(backend), threads)
    }

    /// Whether a window has enough steps for the reference (or, in the app, has been
    /// recorded for as long as the reference should work: a slowly stepped field still gets a
    /// result every second or two).
    fn window_is_complete(&self, window: &Window) -> bool {
        let steps = window.steps();
        match self.policy {
            WindowPolicy::Every(every) => steps >= every,
            WindowPolicy::Adaptive { target_seconds } => {
                steps >= self.window_steps
                    || (steps > 0 && window.opened.elapsed().as_secs_f64() >= target_seconds)
            }
        }
    }

    fn spawn(
        &mut self,
        window: Window,
        end: Grid,
        method: CpuMethod,
        threads: usize,
    ) -> Result<()> {
        let cancel = Arc::new(AtomicBool::new(false));
        let flag = Arc::clone(&cancel);
        let handle = std::thread::Builder::new()
            .name("heatlab-agreement".into())
            .spawn(move || check_window(window, end, method, threads, &flag))
            .map_err(|e| HeatlabError::io("starting the agreement check", "thread", e))?;
        self.job = Some(Job { handle, cancel });
        Ok(())
    }

    fn record(&mut self, outcome: Outcome) {
        self.checks += 1;
        if !outcome.identical() {
            self.mismatches += 1;
            if self.first_mismatch.is_none() {
                self.first_mismatch = Some(outcome.clone());
            }
        }
        if let WindowPolicy::Adaptive { target_seconds } = self.policy {
            let per_step =
                outcome.reference_seconds / (outcome.to_step - outcome.from_step).max(1) as f64;
            if per_step > 0.0 {
                self.window_steps = ((target_seconds / per_step) as u64).clamp(1, 1 << 20);
            }
        }
        if self.history.len() == HISTORY {
            self.history.pop_front();
        }
        self.history.push_back(outcome);
    }

    fn finish(&mut self, job: Job) -> Result<Option<Outcome>> {
        let outcome = job
            .handle
            .join()
            .map_err(|_| HeatlabError::AgreementCheckPanicked)??;
        self.record(outcome.clone());
        Ok(Some(outcome))
    }

    /// The outcome of the check in flight if it has finished; never waits.
    pub fn poll(&mut self) -> Result<Option<Outcome>> {
        match self.job.take() {
            Some(job) if job.handle.is_finished() => self.finish(job),
            job => {
                self.job = job;
                Ok(None)
            }
        }
    }

    /// Waits for the check in flight, if any, and returns its outcome.
    pub fn wait(&mut self) -> Result<Option<Outcome>> {
        match self.job.take() {
            Some(job) => self.finish(job),
            None => Ok(None),
        }
    }

    /// How long ago the latest check finished.
    pub fn since_latest(&self) -> Option<Duration> {
        self.latest()?.finished.map(|at| at.elapsed())
    }
}

impl AgreementWatch {
    /// Stops the check in flight (its outcome is not wanted) and forgets the window being
    /// recorded. The reference's thread returns within one short advance.
    pub fn cancel(&mut self) {
        self.recording = None;
        if let Some(job) = self.job.take() {
            job.cancel.store(true, Ordering::Relaxed);
            if job.handle.join().is_err() {
                log::warn!("the agreement check's thread panicked");
            }
        }
    }
}

impl Drop for AgreementWatch {
    fn drop(&mut self) {
        self.cancel();
    }
}

#[cfg(test)]
mod tests;
