//! What one tutorial panel shows and remembers while the app runs: its inputs, its last run,
//! its last sweep and its latest message.

use std::path::{Path, PathBuf};

use crate::tutorial::gaussian::GaussianParams;
use crate::tutorial::{CpuRuns, KernelRun, RunOptions, TutorialKernel};

use super::jobs::{Failure, Job, Outcome};
use crate::session::notice::{Level, Notice};

/// Everything one panel shows and remembers while the app runs.
#[derive(Debug, Clone)]
pub struct PanelState {
    /// The kernel.
    pub kernel: TutorialKernel,
    /// Elements or samples.
    pub n: u64,
    /// Seed of the inputs.
    pub seed: u64,
    /// Timed runs of each version.
    pub repeats: u32,
    /// Which CPU versions run.
    pub cpu: CpuRuns,
    /// Mean and sigma (the Gaussian only).
    pub params: GaussianParams,
    /// Sizes per decade of a sweep.
    pub sweep_per_decade: u32,
    /// Timed runs per size of a sweep.
    pub sweep_repeats: u32,
    /// The last finished run.
    pub outcome: Option<Outcome>,
    /// The runs of the last sweep, smallest size first.
    pub sweep: Vec<KernelRun>,
    /// Whether the last sweep went over all its sizes.
    pub sweep_complete: bool,
    /// The latest message (a refusal, a cancellation, an export).
    pub notice: Option<Notice>,
    /// The path typed into "recorded run".
    pub recorded_path: String,
}

impl PanelState {
    /// A panel with the seed's sizes: a million neurons, points or samples.
    pub fn new(kernel: TutorialKernel) -> Self {
        Self {
            kernel,
            n: 1_000_000,
            seed: 42,
            repeats: 5,
            cpu: CpuRuns::Both,
            params: GaussianParams::default(),
            sweep_per_decade: 2,
            sweep_repeats: 3,
            outcome: None,
            sweep: Vec::new(),
            sweep_complete: false,
            notice: None,
            recorded_path: String::new(),
        }
    }

    /// The largest size the size field accepts. Arrays beyond what memory allows are refused
    /// by the library with the size they needed; pi needs no arrays.
    pub fn max_n(&self) -> u64 {
        match self.kernel {
            TutorialKernel::MonteCarloPi => 1_000_000_000_000,
            _ => 10_000_000_000,
        }
    }

    /// The quick sizes offered as buttons.
    pub fn presets(&self) -> &'static [u64] {
        match self.kernel {
            TutorialKernel::MonteCarloPi => &[
                1_000,
                10_000,
                100_000,
                1_000_000,
                100_000_000,
                10_000_000_000,
            ],
            _ => &[1_000, 10_000, 100_000, 1_000_000, 10_000_000, 100_000_000],
        }
    }

    /// The options of a run.
    pub fn options(&self) -> RunOptions {
        RunOptions {
            n: self.n,
            seed: self.seed,
            repeats: self.repeats.max(1),
            cpu: self.cpu,
        }
    }

    /// The job of a run.
    pub fn run_job(&self) -> Job {
        Job::Run {
            kernel: self.kernel,
            options: self.options(),
            params: self.params,
        }
    }

    /// The job of a sweep: sizes from a thousand up to the panel's size.
    pub fn sweep_job(&self) -> Job {
        let max = self.n.max(10_000);
        Job::Sweep {
            kernel: self.kernel,
            sizes: crate::tutorial::sweep_sizes(1_000, max, self.sweep_per_decade),
            options: RunOptions {
                repeats: self.sweep_repeats.max(1),
                ..self.options()
            },
            params: self.params,
        }
    }

    /// Shows `text` in the panel, replacing the previous message.
    pub fn notify(&mut self, level: Level, text: impl Into<String>) {
        self.notice = Some(Notice::new(level, text));
    }

    /// Takes a finished run (or why it failed).
    pub fn finish_run(&mut self, result: std::result::Result<Box<Outcome>, Failure>) {
        match result {
            Ok(outcome) => {
                if outcome.recorded.is_some() {
                    // Recorded runs of several sizes make a sweep of that machine.
                    if self.sweep.iter().any(|run| run.gpu != outcome.run.gpu) {
                        self.sweep.clear();
                    }
                    self.sweep.retain(|run| run.n != outcome.run.n);
                    self.sweep.push(outcome.run.clone());
                    self.sweep.sort_by_key(|run| run.n);
                }
                self.outcome = Some(*outcome);
                self.notice = None;
            }
            Err(failure) if failure.cancelled => {
                self.notify(Level::Warning, "run cancelled: the results shown are older");
            }
            Err(failure) => self.notify(Level::Error, failure.message),
        }
    }

    /// Takes the end of a sweep (all sizes, or why it stopped early).
    pub fn finish_sweep(&mut self, failure: Option<Failure>) {
        match failure {
            None => self.sweep_complete = true,
            Some(failure) if failure.cancelled => self.notify(
                Level::Warning,
                "sweep cancelled: the sizes done so far are shown",
            ),
            Some(failure) => {
                self.notify(Level::Error, format!("sweep stopped: {}", failure.message));
            }
        }
    }

    /// Writes the last run's timings (and the sweep's, when there is one) as CSV and JSON into
    /// `dir`, in the format of the app's other timing logs.
    pub fn export_timings(&mut self, dir: &Path) {
        let mut records = Vec::new();
        if let Some(outcome) = &self.outcome {
            records.extend(outcome.run.timing_records());
        }
        for run in &self.sweep {
            records.extend(run.timing_records());
        }
        if records.is_empty() {
            self.notify(Level::Warning, "nothing to export yet: press Run first");
            return;
        }
        let stem = format!("tutorial_{}_n{}_timings", self.kernel, self.n);
        let csv: PathBuf = dir.join(format!("{stem}.csv"));
        let json: PathBuf = dir.join(format!("{stem}.json"));
        let written = crate::export::ensure_writable_dir(dir)
            .and_then(|()| crate::export::write_timings_csv(&csv, &records))
            .and_then(|()| crate::export::write_timings_json(&json, &records));
        match written {
            Ok(()) => self.notify(
                Level::Info,
                format!(
                    "exported {} timings to {} and {}",
                    records.len(),
                    csv.display(),
                    json.display()
                ),
            ),
            Err(error) => self.notify(Level::Error, format!("export failed: {error}")),
        }
    }
}
