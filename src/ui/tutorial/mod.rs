//! The tutorial panels of the app (issue 4): the hidden layer, the Gaussian PDF and Monte Carlo
//! pi, each timed on the CPU (one thread, all threads) and on the GPU (host arrays: upload +
//! kernel + download; device-resident: kernel only), with a size sweep that shows where the GPU
//! starts to win. The kernels run on their own thread
//! ([`heatlab_engine::session::tutorial::runner`]); the UI never waits on them.

pub mod format;
pub mod gaussian;
pub mod hidden_layer;
pub mod mc_pi;
pub mod panel;

use std::collections::VecDeque;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use eframe::egui;

use heatlab_engine::compute::BackendChoice;
use heatlab_engine::tutorial::gaussian::GaussianParams;
use heatlab_engine::tutorial::{KernelRun, TutorialKernel};

use super::notice::Level;
pub use crate::settings::Tab;
pub use format::format_count;
use heatlab_engine::session::tutorial::runner;
pub use heatlab_engine::session::tutorial::PanelState;
use heatlab_engine::session::tutorial::TutorialWorker;
pub use heatlab_engine::session::tutorial::{Job, JobProgress, Outcome, TutorialEvent, Visual};
use heatlab_engine::session::worker::Notify;
pub use panel::{Action, GpuNote};

/// Reads a run recorded with `heatlab kernel --json`; the error says, in one sentence, why the
/// file cannot be shown.
pub fn read_recorded_run(path: &Path) -> std::result::Result<KernelRun, String> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| format!("cannot read {}: {e}", path.display()))?;
    serde_json::from_str(&text).map_err(|e| {
        format!(
            "{} is not a run of `heatlab kernel --json`: {e}",
            path.display()
        )
    })
}

/// What a tab says of a recorded run that is shown in another tab, its kernel's.
pub fn recorded_elsewhere(path: &Path, kernel: TutorialKernel) -> String {
    format!(
        "the recorded run {} is of {}, shown in its tab",
        path.display(),
        kernel.title()
    )
}

/// How often a running job's progress is redrawn.
const PROGRESS_REDRAW: Duration = Duration::from_millis(250);

/// How long after a job starts its progress is first redrawn.
const FIRST_PROGRESS_REDRAW: Duration = Duration::from_millis(500);

/// The three tutorial panels and the thread that runs their kernels (started the first time a
/// tutorial tab is shown).
pub struct TutorialPanels {
    choice: BackendChoice,
    worker: Option<TutorialWorker>,
    worker_error: Option<String>,
    gpu_name: Option<String>,
    gpu_unavailable: Option<heatlab_engine::error::CudaUnavailable>,
    gpu_known: bool,
    panels: Vec<PanelState>,
    running: Option<Job>,
    /// When the job in flight was sent: its first progress redraw waits (see `panel_ui`).
    running_since: Instant,
    queue: VecDeque<Job>,
}

impl Default for TutorialPanels {
    fn default() -> Self {
        Self::new(BackendChoice::Auto)
    }
}

impl TutorialPanels {
    /// Panels whose GPU columns use `choice` (`Auto`: the GPU when it works).
    pub fn new(choice: BackendChoice) -> Self {
        Self {
            choice,
            worker: None,
            worker_error: None,
            gpu_name: None,
            gpu_unavailable: None,
            gpu_known: false,
            panels: TutorialKernel::ALL
                .into_iter()
                .map(PanelState::new)
                .collect(),
            running: None,
            running_since: Instant::now(),
            queue: VecDeque::new(),
        }
    }

    fn index(kernel: TutorialKernel) -> usize {
        TutorialKernel::ALL
            .iter()
            .position(|&k| k == kernel)
            .unwrap_or(0)
    }

    /// The state of one panel.
    pub fn panel(&self, kernel: TutorialKernel) -> &PanelState {
        &self.panels[Self::index(kernel)]
    }

    /// The state of one panel, to change its inputs (tests and the screenshot mode).
    pub fn panel_state_mut(&mut self, kernel: TutorialKernel) -> &mut PanelState {
        &mut self.panels[Self::index(kernel)]
    }

    /// Whether a job runs or waits.
    pub fn is_busy(&self) -> bool {
        self.running.is_some() || !self.queue.is_empty()
    }

    /// The job in flight.
    pub fn running(&self) -> Option<&Job> {
        self.running.as_ref()
    }

    /// The GPU's name once the tutorial thread opened it.
    pub fn gpu_name(&self) -> Option<&str> {
        self.gpu_name.as_deref()
    }

    /// Why the GPU columns are empty, once known.
    pub fn gpu_note(&self) -> Option<GpuNote> {
        match (&self.worker_error, &self.gpu_unavailable) {
            (Some(error), _) => Some(GpuNote::Thread(error.clone())),
            (None, Some(reason)) => Some(GpuNote::Cuda(reason.clone())),
            (None, None) => None,
        }
    }

    /// Where the running job stands.
    pub fn progress(&self) -> Option<JobProgress> {
        self.worker.as_ref().and_then(TutorialWorker::peek_frame)
    }

    /// Queues a run then a sweep of `kernel` (the screenshot mode).
    pub fn start_demo(&mut self, ctx: &egui::Context, kernel: TutorialKernel) {
        let panel = self.panel(kernel);
        let (run, sweep) = (panel.run_job(), panel.sweep_job());
        self.submit(ctx, run);
        self.submit(ctx, sweep);
    }

    /// Whether a demo of `kernel` has finished: nothing runs, and a run and a sweep (or a
    /// notice saying why not) are there to show.
    pub fn demo_done(&self, kernel: TutorialKernel) -> bool {
        let panel = self.panel(kernel);
        let recorded = panel.outcome.as_ref().is_some_and(|o| o.recorded.is_some());
        !self.is_busy()
            && (panel.outcome.is_some() && (panel.sweep_complete || recorded)
                || panel.notice.is_some())
    }

    /// Shows a run recorded with `heatlab kernel --json` (for instance on a GPU machine) in its
    /// panel; its result plots are recomputed on this CPU. Returns the run's kernel.
    pub fn load_recorded(
        &mut self,
        ctx: &egui::Context,
        path: &Path,
    ) -> std::result::Result<TutorialKernel, String> {
        let run = read_recorded_run(path)?;
        let kernel = run.kernel;
        let panel = self.panel_state_mut(kernel);
        panel.n = run.n;
        panel.seed = run.seed;
        panel.repeats = run.repeats;
        if let heatlab_engine::tutorial::KernelSummary::Gaussian { mean, sigma, .. } = run.result {
            panel.params = GaussianParams { mean, sigma };
        }
        self.submit(
            ctx,
            Job::Recorded {
                run: Box::new(run),
                source: path.to_path_buf(),
            },
        );
        Ok(kernel)
    }

    fn ensure_worker(&mut self, ctx: &egui::Context) {
        if self.worker.is_some() || self.worker_error.is_some() {
            return;
        }
        let ctx = ctx.clone();
        let notify: Notify = std::sync::Arc::new(move || ctx.request_repaint());
        match runner::spawn(self.choice, notify) {
            Ok(worker) => self.worker = Some(worker),
            Err(error) => {
                log::error!("cannot start the tutorial thread: {error}");
                self.worker_error = Some(format!("cannot start the tutorial thread: {error}"));
            }
        }
    }

    /// Runs `job` now, or after the job in flight.
    pub fn submit(&mut self, ctx: &egui::Context, job: Job) {
        self.ensure_worker(ctx);
        self.queue.push_back(job);
        self.start_next();
    }

    fn start_next(&mut self) {
        if self.running.is_some() {
            return;
        }
        let Some(job) = self.queue.pop_front() else {
            return;
        };
        if job.is_sweep() {
            let panel = self.panel_state_mut(job.kernel());
            panel.sweep.clear();
            panel.sweep_complete = false;
        }
        let sent = self.worker.as_ref().is_some_and(|worker| {
            worker.clear_cancel();
            worker.is_alive() && worker.send(job.clone())
        });
        if !sent {
            let text = self
                .worker_error
                .clone()
                .unwrap_or_else(|| "the tutorial thread has stopped; restart heatlab".into());
            self.panel_state_mut(job.kernel())
                .notify(Level::Error, text);
            self.queue.clear();
            return;
        }
        self.running = Some(job);
        self.running_since = Instant::now();
    }

    /// Stops the job in flight and drops the queued ones.
    pub fn cancel(&mut self) {
        self.queue.clear();
        if let Some(worker) = &self.worker {
            worker.cancel();
        }
    }

    /// Takes the tutorial thread's events.
    pub fn poll(&mut self) {
        let mut events = Vec::new();
        if let Some(worker) = &self.worker {
            while let Some(event) = worker.try_event() {
                events.push(event);
            }
        }
        for event in events {
            self.handle_event(event);
        }
        self.start_next();
    }

    fn handle_event(&mut self, event: TutorialEvent) {
        match event {
            TutorialEvent::Gpu { name, unavailable } => {
                self.gpu_name = name;
                self.gpu_unavailable = unavailable;
                self.gpu_known = true;
            }
            TutorialEvent::RunFinished { kernel, result } => {
                self.running = None;
                self.panel_state_mut(kernel).finish_run(result);
            }
            TutorialEvent::SweepPoint { kernel, run } => {
                self.panel_state_mut(kernel).sweep.push(*run);
            }
            TutorialEvent::SweepFinished { kernel, failure } => {
                self.running = None;
                self.panel_state_mut(kernel).finish_sweep(failure);
            }
        }
    }

    /// Applies what a panel's controls asked for; exports go into `export_dir`.
    pub fn apply(
        &mut self,
        ctx: &egui::Context,
        kernel: TutorialKernel,
        action: Action,
        export_dir: &Path,
    ) {
        match action {
            Action::None => {}
            Action::Run => {
                let job = self.panel(kernel).run_job();
                self.submit(ctx, job);
            }
            Action::Sweep => {
                let job = self.panel(kernel).sweep_job();
                self.submit(ctx, job);
            }
            Action::Cancel => self.cancel(),
            Action::Export => self.panel_state_mut(kernel).export_timings(export_dir),
            Action::LoadRecorded => {
                let path = PathBuf::from(self.panel(kernel).recorded_path.trim());
                match self.load_recorded(ctx, &path) {
                    Ok(loaded) if loaded != kernel => self
                        .panel_state_mut(kernel)
                        .notify(Level::Warning, recorded_elsewhere(&path, loaded)),
                    Ok(_) => {}
                    Err(error) => self.panel_state_mut(kernel).notify(Level::Error, error),
                }
            }
        }
    }

    /// The panel of `kernel`: controls on the left, timings and plots in the middle. Returns
    /// what its controls asked for, for the app to apply.
    pub fn panel_ui(&mut self, ui: &mut egui::Ui, kernel: TutorialKernel) -> Action {
        self.ensure_worker(ui.ctx());
        self.poll();
        let status = panel::Status {
            running: self
                .running
                .as_ref()
                .map(|job| (job.kernel(), job.is_sweep())),
            progress: self.progress(),
            gpu_name: self.gpu_name.clone(),
            gpu_note: self.gpu_note(),
            gpu_known: self.gpu_known,
        };
        let panel = &mut self.panels[Self::index(kernel)];
        let action = egui::Panel::left("tutorial_controls")
            .resizable(false)
            .exact_size(300.0)
            .show(ui, |ui| {
                egui::ScrollArea::vertical()
                    .show(ui, |ui| panel::controls_ui(ui, panel, &status))
                    .inner
            })
            .inner;
        egui::CentralPanel::default().show(ui, |ui| {
            // A small window scrolls rather than squeezing the plots.
            egui::ScrollArea::vertical()
                .auto_shrink(false)
                .show(ui, |ui| panel::body_ui(ui, panel, &status));
        });
        if self.is_busy() {
            // The progress bar moves a few times a second: redrawing more often would take
            // CPU time from the CPU versions being timed (with a software renderer, a lot). A
            // job of a few milliseconds is not redrawn at all before its end (which redraws).
            let since = self.running_since.elapsed();
            let wait = PROGRESS_REDRAW.max(FIRST_PROGRESS_REDRAW.saturating_sub(since));
            ui.ctx().request_repaint_after(wait);
        }
        action
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_read_like_the_presets() {
        assert_eq!(format_count(999), "999");
        assert_eq!(format_count(1_000), "1k");
        assert_eq!(format_count(31_623), "31.6k");
        assert_eq!(format_count(1_000_000), "1M");
        assert_eq!(format_count(100_000_000), "100M");
        assert_eq!(format_count(1_000_000_000), "1e9");
        assert_eq!(format_count(10_000_000_000), "1e10");
        assert_eq!(format_count(2_500_000_000), "2.50e9");
    }

    #[test]
    fn a_sweep_goes_from_a_thousand_to_the_panel_size() {
        let mut panel = PanelState::new(TutorialKernel::Gaussian);
        panel.n = 100_000;
        panel.sweep_per_decade = 1;
        let Job::Sweep { sizes, options, .. } = panel.sweep_job() else {
            panic!("a sweep");
        };
        assert_eq!(sizes, vec![1_000, 10_000, 100_000]);
        assert_eq!(options.repeats, panel.sweep_repeats);
        // Small panels still sweep a decade.
        panel.n = 1_000;
        let Job::Sweep { sizes, .. } = panel.sweep_job() else {
            panic!("a sweep");
        };
        assert_eq!(sizes, vec![1_000, 10_000]);
    }

    #[test]
    fn settings_without_a_tab_load_on_the_diffusion_tab() {
        let settings: crate::ui::Settings = serde_json::from_str("{}").unwrap();
        assert_eq!(settings.tab, Tab::Diffusion);
        let text = serde_json::to_string(&crate::ui::Settings {
            tab: Tab::MonteCarloPi,
            ..Default::default()
        })
        .unwrap();
        assert!(text.contains("\"tab\":\"mc-pi\""), "{text}");
    }
}
