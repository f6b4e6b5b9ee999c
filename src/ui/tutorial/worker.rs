//! The tutorial thread. It owns the GPU of the tutorial kernels and runs one job at a time (a
//! run or a size sweep) with the blocking library calls of [`crate::tutorial`]; the UI sends
//! [`Job`]s, reads the shared progress while a job runs and takes [`Event`]s back. Only small
//! summaries travel back (a histogram, a few thousand points), never the arrays of size n.

use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{self, Receiver, Sender};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;

use crate::compute::BackendChoice;
use crate::error::{HeatlabError, Result};
use crate::tutorial::gaussian::{self, GaussianParams};
use crate::tutorial::mc_pi::{self, PiEstimate, PiPoint};
use crate::tutorial::{
    self, hidden_layer, ArrayStats, KernelRun, RunControl, RunOptions, RunPhase, RunProgress,
    TutorialGpu, TutorialKernel,
};

/// Bins of the hidden layer's histogram.
pub const HISTOGRAM_BINS: usize = 60;
/// Points of the Gaussian sent back for the plot of the sampled curve.
pub const CURVE_SAMPLES: usize = 3000;

/// What the UI asks the tutorial thread to do.
#[derive(Debug, Clone, PartialEq)]
pub enum Job {
    /// One run of a kernel.
    Run {
        /// Which kernel.
        kernel: TutorialKernel,
        /// Size, seed, repeats and CPU versions.
        options: RunOptions,
        /// The Gaussian's parameters (ignored by the other kernels).
        params: GaussianParams,
    },
    /// The kernel over several sizes, one short run each.
    Sweep {
        /// Which kernel.
        kernel: TutorialKernel,
        /// The sizes, smallest first.
        sizes: Vec<u64>,
        /// Seed, repeats and CPU versions of every size (`n` is replaced).
        options: RunOptions,
        /// The Gaussian's parameters (ignored by the other kernels).
        params: GaussianParams,
    },
    /// Show a run recorded elsewhere (`heatlab kernel --json`, say on a GPU machine): its
    /// result plots are recomputed on this CPU from the same seed.
    Recorded {
        /// The recorded run.
        run: Box<KernelRun>,
        /// The file it came from.
        source: PathBuf,
    },
}

impl Job {
    /// The kernel the job runs.
    pub fn kernel(&self) -> TutorialKernel {
        match self {
            Self::Run { kernel, .. } | Self::Sweep { kernel, .. } => *kernel,
            Self::Recorded { run, .. } => run.kernel,
        }
    }

    /// Whether this is a sweep.
    pub fn is_sweep(&self) -> bool {
        matches!(self, Self::Sweep { .. })
    }
}

/// The results of a run that the panel draws.
#[derive(Debug, Clone, PartialEq)]
pub enum Visual {
    /// The hidden layer's activations as a histogram over `[low, high]`.
    Histogram {
        /// Lower end of the first bin.
        low: f32,
        /// Upper end of the last bin.
        high: f32,
        /// Count of each bin.
        counts: Vec<u64>,
        /// Minimum, maximum and mean of the activations.
        stats: ArrayStats,
    },
    /// The first points of the Gaussian PDF as computed (x, pdf).
    Curve {
        /// Mean and sigma.
        params: GaussianParams,
        /// The sampled points.
        samples: Vec<[f64; 2]>,
    },
    /// The Monte Carlo estimate and the first sample points.
    Pi {
        /// The estimate with its standard error.
        estimate: PiEstimate,
        /// The first few thousand points.
        points: Vec<PiPoint>,
    },
}

/// A finished run.
#[derive(Debug, Clone, PartialEq)]
pub struct Outcome {
    /// Timings, agreement and summary.
    pub run: KernelRun,
    /// What the results plots draw.
    pub visual: Visual,
    /// The file of a recorded run; `None` for a run on this machine.
    pub recorded: Option<PathBuf>,
}

/// Why a job ended without a result.
#[derive(Debug, Clone, PartialEq)]
pub struct Failure {
    /// The user pressed Cancel.
    pub cancelled: bool,
    /// What went wrong, for people (includes the size needed when memory ran short).
    pub message: String,
}

impl From<HeatlabError> for Failure {
    fn from(error: HeatlabError) -> Self {
        Self {
            cancelled: matches!(error, HeatlabError::Cancelled),
            message: error.to_string(),
        }
    }
}

/// What the tutorial thread reports.
#[derive(Debug, Clone)]
pub enum Event {
    /// The GPU it opened (its name), or why it runs on the CPU only.
    Gpu {
        /// The GPU's name.
        name: Option<String>,
        /// Why there is no GPU.
        note: Option<String>,
    },
    /// A run ended.
    RunFinished {
        /// Which kernel.
        kernel: TutorialKernel,
        /// The result, or why there is none.
        result: std::result::Result<Box<Outcome>, Failure>,
    },
    /// One size of a sweep is done.
    SweepPoint {
        /// Which kernel.
        kernel: TutorialKernel,
        /// The run at that size.
        run: Box<KernelRun>,
    },
    /// A sweep ended (all sizes, or stopped early by `failure`).
    SweepFinished {
        /// Which kernel.
        kernel: TutorialKernel,
        /// Why it stopped early.
        failure: Option<Failure>,
    },
}

/// Where the running job stands, shared with the UI.
#[derive(Debug, Clone, PartialEq)]
pub struct JobProgress {
    /// The latest report of the library.
    pub progress: RunProgress,
    /// For a sweep: the size being run, its index and the number of sizes.
    pub sweep: Option<(u64, usize, usize)>,
}

impl JobProgress {
    /// A line for the progress bar.
    pub fn text(&self) -> String {
        match self.sweep {
            Some((n, index, count)) => format!(
                "sweep {}/{count}, n = {}: {}",
                index + 1,
                super::format_count(n),
                self.progress.phase
            ),
            None => self.progress.phase.to_string(),
        }
    }

    /// Progress in [0, 1]: of the phase for a run, of the whole sweep for a sweep.
    pub fn fraction(&self) -> f32 {
        let phase = self.progress.fraction();
        let fraction = match self.sweep {
            Some((_, index, count)) => (index as f64 + phase) / count.max(1) as f64,
            None => phase,
        };
        fraction as f32
    }
}

type ProgressSlot = Arc<Mutex<Option<JobProgress>>>;

enum Command {
    Start(Job),
    Shutdown,
}

/// The UI's handle on the tutorial thread.
pub struct TutorialWorker {
    commands: Sender<Command>,
    events: Receiver<Event>,
    cancel: Arc<AtomicBool>,
    progress: ProgressSlot,
    thread: Option<JoinHandle<()>>,
}

impl TutorialWorker {
    /// Starts the thread, which first opens the GPU (`choice`); `notify` is called whenever an
    /// event is ready (a repaint request).
    pub fn spawn(
        choice: BackendChoice,
        notify: Arc<dyn Fn() + Send + Sync>,
    ) -> std::io::Result<Self> {
        let (command_tx, command_rx) = mpsc::channel();
        let (event_tx, event_rx) = mpsc::channel();
        let cancel = Arc::new(AtomicBool::new(false));
        let progress: ProgressSlot = Arc::new(Mutex::new(None));
        let thread = {
            let cancel = Arc::clone(&cancel);
            let progress = Arc::clone(&progress);
            std::thread::Builder::new()
                .name("heatlab-tutorial".into())
                .spawn(move || {
                    work(choice, &command_rx, &event_tx, &cancel, &progress, &*notify);
                })?
        };
        Ok(Self {
            commands: command_tx,
            events: event_rx,
            cancel,
            progress,
            thread: Some(thread),
        })
    }

    /// Queues a job (jobs run one after the other).
    pub fn start(&self, job: Job) {
        self.cancel.store(false, Ordering::Relaxed);
        let _ = self.commands.send(Command::Start(job));
    }

    /// Asks the running job to stop at its next chunk.
    pub fn cancel(&self) {
        self.cancel.store(true, Ordering::Relaxed);
    }

    /// The next event, if any.
    pub fn try_event(&self) -> Option<Event> {
        self.events.try_recv().ok()
    }

    /// Where the running job stands.
    pub fn progress(&self) -> Option<JobProgress> {
        self.progress.lock().ok().and_then(|slot| slot.clone())
    }

    /// Whether the thread is still there.
    pub fn is_alive(&self) -> bool {
        self.thread.as_ref().is_some_and(|t| !t.is_finished())
    }
}

impl Drop for TutorialWorker {
    fn drop(&mut self) {
        // A running job stops at its next chunk; the thread is not waited for, so closing the
        // window never hangs on a long kernel.
        self.cancel.store(true, Ordering::Relaxed);
        let _ = self.commands.send(Command::Shutdown);
        drop(self.thread.take());
    }
}

fn work(
    choice: BackendChoice,
    commands: &Receiver<Command>,
    events: &Sender<Event>,
    cancel: &AtomicBool,
    progress: &ProgressSlot,
    notify: &(dyn Fn() + Send + Sync),
) {
    let send = |event: Event| {
        let _ = events.send(event);
        notify();
    };
    let (gpu, note) = match tutorial::open_gpu(choice) {
        Ok(opened) => opened,
        Err(error) => (None, Some(format!("the GPU cannot be used: {error}"))),
    };
    send(Event::Gpu {
        name: gpu.as_ref().map(|gpu| gpu.name().to_string()),
        note,
    });
    while let Ok(Command::Start(job)) = commands.recv() {
        let set_progress = |value: Option<JobProgress>| {
            if let Ok(mut slot) = progress.lock() {
                *slot = value;
            }
        };
        match job {
            Job::Run {
                kernel,
                options,
                params,
            } => {
                let report = |p: RunProgress| {
                    set_progress(Some(JobProgress {
                        progress: p,
                        sweep: None,
                    }));
                };
                let control = RunControl {
                    cancel,
                    progress: &report,
                };
                report(RunProgress {
                    phase: RunPhase::GeneratingInputs,
                    done: 0,
                    total: 1,
                });
                let result = run_once(kernel, &options, params, gpu.as_ref(), control)
                    .map(Box::new)
                    .map_err(Failure::from);
                set_progress(None);
                send(Event::RunFinished { kernel, result });
            }
            Job::Recorded { run, source } => {
                let kernel = run.kernel;
                let report = |p: RunProgress| {
                    set_progress(Some(JobProgress {
                        progress: p,
                        sweep: None,
                    }));
                };
                let control = RunControl {
                    cancel,
                    progress: &report,
                };
                let result = recorded_visual(&run, control)
                    .map(|visual| {
                        Box::new(Outcome {
                            run: *run,
                            visual,
                            recorded: Some(source),
                        })
                    })
                    .map_err(Failure::from);
                set_progress(None);
                send(Event::RunFinished { kernel, result });
            }
            Job::Sweep {
                kernel,
                sizes,
                options,
                params,
            } => {
                let mut failure = None;
                for (index, &n) in sizes.iter().enumerate() {
                    let sweep = Some((n, index, sizes.len()));
                    let report = |p: RunProgress| {
                        set_progress(Some(JobProgress { progress: p, sweep }));
                    };
                    let control = RunControl {
                        cancel,
                        progress: &report,
                    };
                    let options = RunOptions { n, ..options };
                    match run_once(kernel, &options, params, gpu.as_ref(), control) {
                        Ok(outcome) => send(Event::SweepPoint {
                            kernel,
                            run: Box::new(outcome.run),
                        }),
                        Err(error) => {
                            failure = Some(Failure::from(error));
                            break;
                        }
                    }
                }
                set_progress(None);
                send(Event::SweepFinished { kernel, failure });
            }
        }
    }
}

/// Runs a kernel once and keeps what the panel draws.
fn run_once(
    kernel: TutorialKernel,
    options: &RunOptions,
    params: GaussianParams,
    gpu: Option<&TutorialGpu>,
    control: RunControl<'_>,
) -> Result<Outcome> {
    Ok(match kernel {
        TutorialKernel::HiddenLayer => {
            let output = hidden_layer::run(options, gpu, control)?;
            Outcome {
                run: output.run,
                visual: histogram_of(&output.activations),
                recorded: None,
            }
        }
        TutorialKernel::Gaussian => {
            let output = gaussian::run(options, params, gpu, control)?;
            let samples = output
                .x
                .iter()
                .zip(&output.pdf)
                .take(CURVE_SAMPLES)
                .map(|(&x, &p)| [f64::from(x), f64::from(p)])
                .collect();
            Outcome {
                run: output.run,
                visual: Visual::Curve {
                    params: output.params,
                    samples,
                },
                recorded: None,
            }
        }
        TutorialKernel::MonteCarloPi => {
            let output = mc_pi::run(options, gpu, control)?;
            Outcome {
                run: output.run,
                visual: Visual::Pi {
                    estimate: output.estimate,
                    points: output.points,
                },
                recorded: None,
            }
        }
    })
}

/// The histogram of the hidden layer's activations, over their own range.
fn histogram_of(activations: &[f32]) -> Visual {
    let stats = ArrayStats::of(activations);
    let (mut low, mut high) = (stats.min as f32, stats.max as f32);
    if high <= low {
        low -= 0.5;
        high += 0.5;
    }
    Visual::Histogram {
        low,
        high,
        counts: tutorial::histogram(activations, HISTOGRAM_BINS, low, high),
        stats,
    }
}

/// Largest hidden layer whose histogram is recomputed for a recorded run.
const RECORDED_HIDDEN_MAX: u64 = 20_000_000;

/// The result plots of a recorded run, recomputed on this CPU from its seed: the hidden
/// layer's activations (all of them up to 20 million neurons), the first points of the
/// Gaussian, and pi's first points with the recorded count.
fn recorded_visual(run: &KernelRun, control: RunControl<'_>) -> Result<Visual> {
    let options = RunOptions {
        n: run.n,
        seed: run.seed,
        repeats: 1,
        cpu: tutorial::CpuRuns::AllThreads,
    };
    options.validate()?;
    Ok(match run.kernel {
        TutorialKernel::HiddenLayer => {
            if run.n > RECORDED_HIDDEN_MAX {
                return Err(HeatlabError::InvalidInput(format!(
                    "a recorded hidden layer of {} neurons is more than this panel recomputes \
                     for its histogram ({RECORDED_HIDDEN_MAX})",
                    run.n
                )));
            }
            let n = options.n_elements()?;
            let inputs = hidden_layer::generate_inputs(n, run.seed, control)?;
            let mut activations = vec![0.0f32; n];
            hidden_layer::activate_cpu(
                &inputs,
                &mut activations,
                tutorial::CpuThreads::All,
                control,
            )?;
            histogram_of(&activations)
        }
        TutorialKernel::Gaussian => {
            let params = match run.result {
                tutorial::KernelSummary::Gaussian { mean, sigma, .. } => {
                    GaussianParams { mean, sigma }
                }
                _ => GaussianParams::default(),
            };
            let count = options.n_elements()?.min(CURVE_SAMPLES);
            // The points are drawn in order, so the first ones of a long run are these.
            let x = gaussian::generate_x(count, run.seed, control)?;
            Visual::Curve {
                params,
                samples: x
                    .iter()
                    .map(|&x| [f64::from(x), f64::from(gaussian::pdf(x, params))])
                    .collect(),
            }
        }
        TutorialKernel::MonteCarloPi => {
            let estimate = match run.result {
                tutorial::KernelSummary::MonteCarloPi(estimate) => estimate,
                _ => {
                    return Err(HeatlabError::InvalidInput(
                        "the recorded pi run has no estimate".into(),
                    ))
                }
            };
            let count = usize::try_from(run.n)
                .map_or(mc_pi::SCATTER_POINTS, |n| n.min(mc_pi::SCATTER_POINTS));
            Visual::Pi {
                estimate,
                points: mc_pi::first_points(run.seed, count),
            }
        }
    })
}
