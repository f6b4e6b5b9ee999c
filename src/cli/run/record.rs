//! What `heatlab run` keeps of a run and writes at its end, however it ended: how it ended
//! ([`Ending`]), what it did ([`RunRecord`]), the agreement checks ([`AgreementRecord`]) and
//! `run.json` ([`RunSummary`]).

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Instant;

use anyhow::Context;

use super::folder::display_name;
use super::scenario::ProblemRecord;
use super::{RecordedPlan, RunPlan};
use crate::cli::interrupt::{Interrupted, StopSignal};
use crate::cli::output::note;
use heatlab_engine::compute::Backend;
use heatlab_engine::error::HeatlabError;
use heatlab_engine::export::{self, TimingCsvWriter, TimingRecord};

/// The timing log of a run, in its folder.
pub(super) const TIMINGS_CSV: &str = "timings.csv";
/// The record of a run, in its folder.
pub(super) const RUN_JSON: &str = "run.json";
use heatlab_engine::sim::agreement::{AgreementWatch, Outcome, WindowPolicy};

/// How a run ended.
#[derive(Debug)]
pub(super) enum Ending {
    /// Every step was taken.
    Completed,
    /// A signal stopped it.
    Interrupted(StopSignal),
    /// The field went NaN or infinite ([`HeatlabError::NonFinite`]); the step of the last
    /// finite frame, kept in the folder, when there was one.
    NonFinite {
        error: HeatlabError,
        last_good: Option<u64>,
    },
    /// A heat problem's field fell below absolute zero
    /// ([`HeatlabError::BelowAbsoluteZero`]).
    BelowAbsoluteZero(HeatlabError),
    /// Anything else: a failed export, out of memory, a backend error, a panic.
    Failed(anyhow::Error),
}

impl Ending {
    /// The one word `run.json` gives as `status`.
    fn status(&self) -> &'static str {
        match self {
            Self::Completed => "completed",
            Self::Interrupted(_) => "interrupted",
            Self::NonFinite { .. } => "non-finite",
            Self::BelowAbsoluteZero(_) => "below-absolute-zero",
            Self::Failed(_) => "failed",
        }
    }

    /// What `run.json` gives as `reason`.
    fn reason(&self) -> Option<String> {
        match self {
            Self::Completed => None,
            Self::Interrupted(signal) => Some(format!("interrupted by {signal}")),
            Self::NonFinite { error, .. } | Self::BelowAbsoluteZero(error) => {
                Some(error.to_string())
            }
            Self::Failed(error) => Some(format!("{error:#}")),
        }
    }
}

/// What a run did so far: everything that `run.json` and `timings.csv` record.
#[derive(Debug)]
pub(super) struct RunRecord {
    started: Instant,
    pub(super) backend: String,
    pub(super) device: String,
    pub(super) method: String,
    fallback_note: Option<String>,
    pub(super) generation_seconds: f64,
    /// Where the field was generated ("GPU (cuFFT)" or "CPU"), once it was.
    pub(super) generated_on: Option<String>,
    pub(super) steps_completed: u64,
    /// `timings.csv`, written row by row (its first failure, once one happened).
    timings_csv: Option<Result<TimingCsvWriter, HeatlabError>>,
    /// Steps and seconds of every timed chunk, for the totals.
    timed_steps: u64,
    timed_seconds: f64,
    pub(super) files: Vec<PathBuf>,
    pub(super) agreement: Option<AgreementRecord>,
    /// The heat problem stepped, and its energy balance.
    pub(super) problem: Option<ProblemRecord>,
}

/// The agreement checks of a run (`--check-every`), as run.json gives them.
#[derive(Debug, Clone, serde::Serialize)]
pub(super) struct AgreementRecord {
    /// Steps per window.
    check_every: u64,
    /// Windows checked.
    checks: u64,
    /// Windows whose field differed from the reference's.
    mismatches: u64,
    /// The first window that differed.
    first_mismatch: Option<Outcome>,
    /// Every window, in order (the last 600 of a longer run).
    windows: Vec<Outcome>,
}

impl AgreementRecord {
    pub(super) fn of(watch: &AgreementWatch) -> Self {
        let (checks, mismatches) = watch.counts();
        Self {
            check_every: match watch.policy() {
                WindowPolicy::Every(steps) => steps,
                WindowPolicy::Adaptive { .. } => 0,
            },
            checks,
            mismatches,
            first_mismatch: watch.first_mismatch().cloned(),
            windows: watch.history().cloned().collect(),
        }
    }

    /// One line for the terminal.
    fn summary(&self) -> String {
        let reference = self
            .windows
            .first()
            .map_or("the CPU", |o| o.reference.as_str());
        match &self.first_mismatch {
            None => format!(
                "agreement: {} windows of up to {} steps checked against {reference}: all bit-identical",
                self.checks, self.check_every
            ),
            Some(outcome) => {
                let cell = outcome.difference.as_ref();
                format!(
                    "agreement: {} of {} windows differ from {reference}; the first, steps {}-{}, at \
                     row {}, column {}: {:e} vs {:e} (max |difference| {:e})",
                    self.mismatches,
                    self.checks,
                    outcome.from_step,
                    outcome.to_step,
                    cell.map_or(0, |c| c.row),
                    cell.map_or(0, |c| c.col),
                    cell.map_or(0.0, |c| c.subject),
                    cell.map_or(0.0, |c| c.reference),
                    cell.map_or(0.0, |c| c.max_abs_difference),
                )
            }
        }
    }
}

impl RunRecord {
    /// The record of a run on `backend` writing into the folder `out`.
    pub(super) fn new(backend: &dyn Backend, fallback_note: Option<String>, out: &Path) -> Self {
        Self {
            started: Instant::now(),
            backend: backend.kind().to_string(),
            device: backend.device_name(),
            method: backend.step_method(),
            fallback_note,
            generation_seconds: 0.0,
            generated_on: None,
            steps_completed: 0,
            timings_csv: Some(TimingCsvWriter::create(&out.join(TIMINGS_CSV))),
            timed_steps: 0,
            timed_seconds: 0.0,
            files: Vec::new(),
            agreement: None,
            problem: None,
        }
    }

    /// Lists files written, each once (the last finite frame of a run that went non-finite
    /// may be a save point's, written again).
    pub(super) fn add_files(&mut self, paths: Vec<PathBuf>) {
        for path in paths {
            if !self.files.contains(&path) {
                self.files.push(path);
            }
        }
    }

    /// Keeps a timed chunk: in the totals, and as a row of `timings.csv`.
    pub(super) fn add_timing(&mut self, timing: &TimingRecord) {
        self.timed_steps += timing.steps;
        self.timed_seconds += timing.seconds;
        if let Some(Ok(writer)) = &mut self.timings_csv {
            if let Err(error) = writer.push(timing) {
                // The first failure is kept for the end; the temporary file goes now.
                self.timings_csv = Some(Err(error));
            }
        }
    }

    /// All the timed chunks as one.
    fn total_timing(&self, plan: &RunPlan) -> TimingRecord {
        TimingRecord::diffusion(
            0,
            self.timed_steps,
            &self.backend,
            &self.method,
            plan.field.size,
            self.timed_seconds,
        )
    }

    /// Writes `timings.csv` and `run.json`, whatever the ending, then reports the ending:
    /// `Ok` only for a completed run whose record was written.
    pub(super) fn finish(mut self, plan: &RunPlan, ending: Ending) -> anyhow::Result<()> {
        let record_error = self.write(plan, &ending).err();
        let step = self.steps_completed;
        let out = plan.out.display();
        let record = match &record_error {
            None => format!("run.json and timings.csv are in {out}"),
            Some(error) => format!("its record could not be written ({error})"),
        };
        if let Some(agreement) = &self.agreement {
            note(&agreement.summary());
        }
        // A steady solve takes no steps: it has no time or energy to tell of (its own line
        // said what it did).
        let steady = |problem: &&ProblemRecord| {
            matches!(problem.solver, Some(super::solve::SolverRecord::Steady(_)))
        };
        if let Some(problem) = self.problem.as_ref().filter(|p| !steady(p)) {
            note(&problem.end_line());
        }
        match ending {
            Ending::Completed => {
                if let Some(error) = record_error {
                    return Err(error).context("the run completed but its record was not saved");
                }
                self.report_completion(plan);
                match self.agreement.as_ref().filter(|a| a.mismatches > 0) {
                    Some(_) => Err(anyhow::anyhow!(
                        "the run's field differed from the CPU reference (run.json lists every window)"
                    )),
                    None => Ok(()),
                }
            }
            Ending::Interrupted(signal) => Err(anyhow::Error::new(Interrupted(signal)).context(
                format!("stopped at step {step} of {}; {record}", plan.end_step()),
            )),
            Ending::NonFinite { error, last_good } => {
                let kept = match (last_good, &record_error) {
                    (Some(good), None) => format!(
                        "the last good frame (step {good}), run.json and timings.csv are in {out}"
                    ),
                    (Some(good), Some(_)) => {
                        format!("the last good frame (step {good}) is in {out}; {record}")
                    }
                    (None, _) => format!("no frame of the run was finite; {record}"),
                };
                Err(anyhow::Error::new(error).context(format!("stopped; {kept}")))
            }
            Ending::BelowAbsoluteZero(error) => {
                Err(anyhow::Error::new(error).context(format!("stopped; {record}")))
            }
            Ending::Failed(error) => {
                Err(error.context(format!("the run stopped at step {step}; {record}")))
            }
        }
    }

    /// Writes `timings.csv`, then `run.json` (also when the first failed, with the failure).
    fn write(&mut self, plan: &RunPlan, ending: &Ending) -> heatlab_engine::Result<()> {
        let csv_path = plan.out.join(TIMINGS_CSV);
        let csv = match self.timings_csv.take() {
            Some(Ok(writer)) => writer.commit(),
            Some(Err(error)) => Err(error),
            None => Err(HeatlabError::Internal(
                "timings.csv was already written".into(),
            )),
        };
        if csv.is_ok() {
            self.files.push(csv_path);
        }
        let summary = RunSummary::new(plan, self, ending);
        let json = export::write_json(&plan.out.join(RUN_JSON), &summary);
        csv.and(json)
    }

    fn report_completion(&self, plan: &RunPlan) {
        let total = self.total_timing(plan);
        note(&format!(
            "{} steps in {:.3} s stepping ({:.2} us/step, {:.1} GB/s effective); wrote {} files to {}",
            self.steps_completed.saturating_sub(plan.start_step),
            total.seconds,
            total.us_per_step,
            total.effective_gb_s,
            self.files.len() + 1,
            plan.out.display()
        ));
    }
}

/// `run.json` as it stood after the last chunk, for rank 0's last words: when a signal finds
/// rank 0 waiting for ranks that `mpirun` is ending (a rank died), rank 0 cannot end the run
/// itself before `mpirun` kills it, so this is written for it ([`Interrupt::when_stranded`]).
///
/// [`Interrupt::when_stranded`]: crate::cli::interrupt::Interrupt::when_stranded
#[derive(Debug, Clone, Default)]
pub(super) struct LastChunkRecord {
    kept: Arc<Mutex<Option<KeptRecord>>>,
}

#[derive(Debug)]
#[cfg_attr(
    not(feature = "distributed"),
    expect(
        dead_code,
        reason = "read by rank 0's last words, in a build with `distributed`"
    )
)]
struct KeptRecord {
    path: PathBuf,
    summary: RunSummary,
}

impl LastChunkRecord {
    /// Keeps `record` as `run.json` would say it if the run stopped now.
    pub(super) fn keep(&self, plan: &RunPlan, record: &RunRecord) {
        let summary = RunSummary::new(plan, record, &Ending::Interrupted(StopSignal::Terminate));
        let kept = KeptRecord {
            path: plan.out.join(RUN_JSON),
            summary,
        };
        *self.kept.lock().unwrap_or_else(PoisonError::into_inner) = Some(kept);
    }

    /// Writes the kept `run.json` (status "interrupted", with why), then ends the process as a
    /// second signal would: encoders stopped, temporary files removed, `signal`'s status.
    #[cfg(feature = "distributed")]
    pub(super) fn write_and_exit(&self, signal: StopSignal) -> ! {
        let kept = self
            .kept
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .take();
        let said = match kept {
            None => "nothing was running yet".to_string(),
            Some(KeptRecord { path, mut summary }) => {
                let step = summary.steps_completed;
                summary.reason = Some(format!(
                    "interrupted by {signal} while rank 0 waited for the other ranks (mpirun \
                     names a rank that ended); the record as it stood after step {step}"
                ));
                match export::write_json(&path, &summary) {
                    Ok(()) => format!("{} says step {step}", path.display()),
                    Err(error) => format!("its record could not be written ({error})"),
                }
            }
        };
        crate::cli::interrupt::stop_now(
            signal,
            &format!("while rank 0 waited for the other ranks ({said})"),
        )
    }
}

/// What `run.json` holds.
#[derive(Debug, serde::Serialize)]
struct RunSummary {
    heatlab_version: &'static str,
    /// "completed", "interrupted", "non-finite", "below-absolute-zero" or "failed".
    status: &'static str,
    /// Why a run that did not complete stopped.
    reason: Option<String>,
    parameters: RecordedPlan,
    backend: String,
    device: String,
    method: String,
    fallback_note: Option<String>,
    steps_completed: u64,
    field_generation_seconds: f64,
    field_generated_on: Option<String>,
    stepping_seconds: f64,
    us_per_step: f64,
    steps_per_s: f64,
    effective_gb_s: f64,
    wall_seconds: f64,
    files: Vec<String>,
    /// The `--check-every` windows, when asked for.
    agreement: Option<AgreementRecord>,
    /// The heat problem, its simulated time and energy balance.
    problem: Option<ProblemRecord>,
}

impl RunSummary {
    fn new(plan: &RunPlan, record: &RunRecord, ending: &Ending) -> Self {
        let total = record.total_timing(plan);
        Self {
            heatlab_version: env!("CARGO_PKG_VERSION"),
            status: ending.status(),
            reason: ending.reason(),
            parameters: RecordedPlan::of(plan, record.problem.is_some()),
            backend: record.backend.clone(),
            device: record.device.clone(),
            method: record.method.clone(),
            fallback_note: record.fallback_note.clone(),
            steps_completed: record.steps_completed,
            field_generation_seconds: record.generation_seconds,
            field_generated_on: record.generated_on.clone(),
            stepping_seconds: total.seconds,
            us_per_step: total.us_per_step,
            steps_per_s: total.steps_per_s,
            effective_gb_s: total.effective_gb_s,
            wall_seconds: record.started.elapsed().as_secs_f64(),
            files: record.files.iter().map(|p| display_name(p)).collect(),
            agreement: record.agreement.clone(),
            problem: record.problem.clone(),
        }
    }
}
