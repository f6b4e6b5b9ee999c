//! The tutorial panels of the app (issue 4): the hidden layer, the Gaussian PDF and Monte Carlo
//! pi, each timed on the CPU (one thread, all threads) and on the GPU (host arrays: upload +
//! kernel + download; device-resident: kernel only), with a size sweep that shows where the GPU
//! starts to win. The kernels run on their own thread ([`worker`]); the UI never waits on them.

pub mod gaussian;
pub mod hidden_layer;
pub mod mc_pi;
pub mod panel;
pub mod worker;

use std::collections::VecDeque;
use std::fmt;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use eframe::egui;

use crate::compute::BackendChoice;
use crate::tutorial::gaussian::GaussianParams;
use crate::tutorial::{CpuRuns, KernelRun, RunOptions, TutorialKernel};

use super::worker::Level;
use worker::{Event, Job, JobProgress, Outcome, TutorialWorker};

/// The app's top-level tabs: the diffusion simulation or one of the tutorial panels.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Hash, Default, serde::Serialize, serde::Deserialize,
)]
#[serde(rename_all = "kebab-case")]
pub enum Tab {
    /// The heat diffusion simulation.
    #[default]
    Diffusion,
    /// The hidden layer of a neural network.
    HiddenLayer,
    /// The Gaussian PDF.
    Gaussian,
    /// Monte Carlo pi.
    #[serde(rename = "mc-pi")]
    MonteCarloPi,
}

impl Tab {
    /// Every tab, in the order the tab bar lists them.
    pub const ALL: [Self; 4] = [
        Self::Diffusion,
        Self::HiddenLayer,
        Self::Gaussian,
        Self::MonteCarloPi,
    ];

    /// The tutorial kernel of this tab, or `None` for the diffusion tab.
    pub fn kernel(self) -> Option<TutorialKernel> {
        match self {
            Self::Diffusion => None,
            Self::HiddenLayer => Some(TutorialKernel::HiddenLayer),
            Self::Gaussian => Some(TutorialKernel::Gaussian),
            Self::MonteCarloPi => Some(TutorialKernel::MonteCarloPi),
        }
    }

    /// The name on the command line (`diffusion`, `hidden-layer`, `gaussian`, `mc-pi`).
    pub fn cli_name(self) -> String {
        match self.kernel() {
            None => "diffusion".into(),
            Some(kernel) => kernel.to_string(),
        }
    }
}

impl fmt::Display for Tab {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self.kernel() {
            None => "Diffusion",
            Some(kernel) => kernel.title(),
        })
    }
}

impl std::str::FromStr for Tab {
    type Err = crate::HeatlabError;

    fn from_str(text: &str) -> crate::Result<Self> {
        Self::ALL
            .into_iter()
            .find(|tab| tab.cli_name().eq_ignore_ascii_case(text.trim()))
            .ok_or_else(|| {
                crate::HeatlabError::InvalidInput(format!(
                    "unknown tab '{text}' (expected diffusion, hidden-layer, gaussian or mc-pi)"
                ))
            })
    }
}

/// A count for people: `1k`, `31.6k`, `1M`, `100M`, `1e9`.
pub fn format_count(n: u64) -> String {
    let trim = |value: f64, unit: &str| {
        let text = format!("{value:.1}");
        format!("{}{unit}", text.trim_end_matches(".0"))
    };
    let x = n as f64;
    if n < 1_000 {
        n.to_string()
    } else if n < 1_000_000 {
        trim(x / 1e3, "k")
    } else if n < 1_000_000_000 {
        trim(x / 1e6, "M")
    } else {
        let exponent = x.log10().floor();
        let mantissa = x / 10f64.powf(exponent);
        if (mantissa - 1.0).abs() < 1e-9 {
            format!("1e{exponent:.0}")
        } else {
            format!("{mantissa:.2}e{exponent:.0}")
        }
    }
}

/// A message shown in a panel.
#[derive(Debug, Clone, PartialEq)]
pub struct PanelNotice {
    /// How serious.
    pub level: Level,
    /// What to say.
    pub text: String,
}

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
    pub notice: Option<PanelNotice>,
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

    fn notify(&mut self, level: Level, text: impl Into<String>) {
        self.notice = Some(PanelNotice {
            level,
            text: text.into(),
        });
    }
}

/// The three tutorial panels and the thread that runs their kernels (started the first time a
/// tutorial tab is shown).
pub struct TutorialPanels {
    choice: BackendChoice,
    worker: Option<TutorialWorker>,
    worker_error: Option<String>,
    gpu_name: Option<String>,
    gpu_note: Option<String>,
    gpu_known: bool,
    panels: Vec<PanelState>,
    running: Option<Job>,
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
            gpu_note: None,
            gpu_known: false,
            panels: TutorialKernel::ALL
                .into_iter()
                .map(PanelState::new)
                .collect(),
            running: None,
            queue: VecDeque::new(),
        }
    }

    /// The state of one panel.
    pub fn panel(&self, kernel: TutorialKernel) -> &PanelState {
        let index = TutorialKernel::ALL
            .iter()
            .position(|&k| k == kernel)
            .unwrap_or(0);
        &self.panels[index]
    }

    fn panel_mut(&mut self, kernel: TutorialKernel) -> &mut PanelState {
        let index = TutorialKernel::ALL
            .iter()
            .position(|&k| k == kernel)
            .unwrap_or(0);
        &mut self.panels[index]
    }

    /// The state of one panel, to change its inputs (tests and the screenshot mode).
    pub fn panel_state_mut(&mut self, kernel: TutorialKernel) -> &mut PanelState {
        self.panel_mut(kernel)
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
    pub fn gpu_note(&self) -> Option<&str> {
        self.gpu_note.as_deref()
    }

    /// Where the running job stands.
    pub fn progress(&self) -> Option<JobProgress> {
        self.worker.as_ref().and_then(TutorialWorker::progress)
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
        let text = std::fs::read_to_string(path)
            .map_err(|e| format!("cannot read {}: {e}", path.display()))?;
        let run: KernelRun = serde_json::from_str(&text).map_err(|e| {
            format!(
                "{} is not a run of `heatlab kernel --json`: {e}",
                path.display()
            )
        })?;
        let kernel = run.kernel;
        let panel = self.panel_mut(kernel);
        panel.n = run.n;
        panel.seed = run.seed;
        panel.repeats = run.repeats;
        if let crate::tutorial::KernelSummary::Gaussian { mean, sigma, .. } = run.result {
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
        let notify: Arc<dyn Fn() + Send + Sync> = Arc::new(move || ctx.request_repaint());
        match TutorialWorker::spawn(self.choice, notify) {
            Ok(worker) => self.worker = Some(worker),
            Err(error) => {
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
        if !self.worker.as_ref().is_some_and(TutorialWorker::is_alive) {
            let text = self
                .worker_error
                .clone()
                .unwrap_or_else(|| "the tutorial thread has stopped; restart heatlab".into());
            self.panel_mut(job.kernel()).notify(Level::Error, text);
            self.queue.clear();
            return;
        }
        if job.is_sweep() {
            let panel = self.panel_mut(job.kernel());
            panel.sweep.clear();
            panel.sweep_complete = false;
        }
        if let Some(worker) = &self.worker {
            worker.start(job.clone());
        }
        self.running = Some(job);
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

    fn handle_event(&mut self, event: Event) {
        match event {
            Event::Gpu { name, note } => {
                self.gpu_name = name;
                self.gpu_note = note;
                self.gpu_known = true;
            }
            Event::RunFinished { kernel, result } => {
                self.running = None;
                let panel = self.panel_mut(kernel);
                match result {
                    Ok(outcome) => {
                        if outcome.recorded.is_some() {
                            // Recorded runs of several sizes make a sweep of that machine.
                            if panel.sweep.iter().any(|run| run.gpu != outcome.run.gpu) {
                                panel.sweep.clear();
                            }
                            panel.sweep.retain(|run| run.n != outcome.run.n);
                            panel.sweep.push(outcome.run.clone());
                            panel.sweep.sort_by_key(|run| run.n);
                        }
                        panel.outcome = Some(*outcome);
                        panel.notice = None;
                    }
                    Err(failure) if failure.cancelled => {
                        panel.notify(Level::Warning, "run cancelled: the results shown are older");
                    }
                    Err(failure) => panel.notify(Level::Error, failure.message),
                }
            }
            Event::SweepPoint { kernel, run } => self.panel_mut(kernel).sweep.push(*run),
            Event::SweepFinished { kernel, failure } => {
                self.running = None;
                let panel = self.panel_mut(kernel);
                match failure {
                    None => panel.sweep_complete = true,
                    Some(failure) if failure.cancelled => panel.notify(
                        Level::Warning,
                        "sweep cancelled: the sizes done so far are shown",
                    ),
                    Some(failure) => {
                        panel.notify(Level::Error, format!("sweep stopped: {}", failure.message))
                    }
                }
            }
        }
    }

    /// Writes the last run's timings (and the sweep's, when there is one) as CSV and JSON into
    /// `dir`, in the format of the app's other timing logs.
    fn export(&mut self, kernel: TutorialKernel, dir: &Path) {
        let panel = self.panel_mut(kernel);
        let mut records = Vec::new();
        if let Some(outcome) = &panel.outcome {
            records.extend(outcome.run.timing_records());
        }
        for run in &panel.sweep {
            records.extend(run.timing_records());
        }
        if records.is_empty() {
            panel.notify(Level::Warning, "nothing to export yet: press Run first");
            return;
        }
        let stem = format!("tutorial_{kernel}_n{}_timings", panel.n);
        let csv: PathBuf = dir.join(format!("{stem}.csv"));
        let json: PathBuf = dir.join(format!("{stem}.json"));
        let written = std::fs::create_dir_all(dir)
            .map_err(|e| crate::HeatlabError::io("creating folder", dir, e))
            .and_then(|()| crate::export::write_timings_csv(&csv, &records))
            .and_then(|()| crate::export::write_timings_json(&json, &records));
        match written {
            Ok(()) => panel.notify(
                Level::Info,
                format!(
                    "exported {} timings to {} and {}",
                    records.len(),
                    csv.display(),
                    json.display()
                ),
            ),
            Err(error) => panel.notify(Level::Error, format!("export failed: {error}")),
        }
    }

    /// The panel of `kernel`: controls on the left, timings and plots in the middle. Exports go
    /// into `export_dir`.
    pub fn panel_ui(&mut self, ui: &mut egui::Ui, kernel: TutorialKernel, export_dir: &Path) {
        let ctx = ui.ctx().clone();
        self.ensure_worker(&ctx);
        self.poll();
        let progress = self.progress();
        let status = panel::Status {
            running: self
                .running
                .as_ref()
                .map(|job| (job.kernel(), job.is_sweep())),
            progress,
            gpu_name: self.gpu_name.clone(),
            gpu_note: self.worker_error.clone().or_else(|| self.gpu_note.clone()),
            gpu_known: self.gpu_known,
        };
        let action = {
            let panel = self.panel_mut(kernel);
            egui::Panel::left("tutorial_controls")
                .resizable(false)
                .exact_size(300.0)
                .show(ui, |ui| {
                    egui::ScrollArea::vertical()
                        .show(ui, |ui| panel::controls_ui(ui, panel, &status))
                        .inner
                })
                .inner
        };
        match action {
            panel::Action::None => {}
            panel::Action::Run => {
                let job = self.panel(kernel).run_job();
                self.submit(&ctx, job);
            }
            panel::Action::Sweep => {
                let job = self.panel(kernel).sweep_job();
                self.submit(&ctx, job);
            }
            panel::Action::Cancel => self.cancel(),
            panel::Action::Export => self.export(kernel, export_dir),
            panel::Action::LoadRecorded => {
                let path = PathBuf::from(self.panel(kernel).recorded_path.trim());
                match self.load_recorded(&ctx, &path) {
                    Ok(loaded) if loaded != kernel => self.panel_mut(kernel).notify(
                        Level::Warning,
                        format!("that run is of the {} kernel: see its tab", loaded.title()),
                    ),
                    Ok(_) => {}
                    Err(error) => self.panel_mut(kernel).notify(Level::Error, error),
                }
            }
        }
        let panel = self.panel(kernel);
        egui::CentralPanel::default().show(ui, |ui| {
            // A small window scrolls rather than squeezing the plots.
            egui::ScrollArea::vertical()
                .auto_shrink(false)
                .show(ui, |ui| panel::body_ui(ui, panel, &status));
        });
        if self.is_busy() {
            // The progress bar moves a few times a second: redrawing more often would take
            // CPU time from the CPU versions being timed (with a software renderer, a lot).
            ctx.request_repaint_after(Duration::from_millis(250));
        }
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
    fn tabs_parse_from_their_command_line_names() {
        for tab in Tab::ALL {
            assert_eq!(tab.cli_name().parse::<Tab>().unwrap(), tab);
        }
        assert_eq!("mc-pi".parse::<Tab>().unwrap(), Tab::MonteCarloPi);
        assert!("pi".parse::<Tab>().is_err());
        assert_eq!(Tab::Gaussian.to_string(), "Gaussian PDF");
        assert_eq!(Tab::default(), Tab::Diffusion);
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
