//! The tutorial thread. It owns the GPU of the tutorial kernels and runs one job at a time (a
//! run or a size sweep) with the blocking library calls of [`crate::tutorial`]; the panels send
//! [`Job`]s, read the progress of the running job from the worker's slot and take
//! [`TutorialEvent`]s back.

use crate::compute::BackendChoice;
use crate::error::{CudaUnavailable, HeatlabError, Result};
use crate::tutorial::gaussian::{self, GaussianParams};
use crate::tutorial::mc_pi;
use crate::tutorial::{
    self, hidden_layer, ArrayStats, KernelRun, RunControl, RunOptions, RunPhase, RunProgress,
    TutorialGpu, TutorialKernel,
};

use super::jobs::{
    Failure, Job, JobProgress, Outcome, TutorialEvent, Visual, CURVE_SAMPLES, HISTOGRAM_BINS,
};
use crate::session::worker::{Notify, Received, SlotWriter, Worker, WorkerContext};

/// The panels' handle on the tutorial thread.
pub type TutorialWorker = Worker<Job, TutorialEvent, JobProgress>;

/// Starts the thread, which first opens the GPU (`choice`); `notify` asks for a repaint.
pub fn spawn(choice: BackendChoice, notify: Notify) -> std::io::Result<TutorialWorker> {
    Worker::spawn("heatlab-tutorial", notify, move |ctx| work(choice, &ctx))
}

fn work(choice: BackendChoice, ctx: &WorkerContext<Job, TutorialEvent, JobProgress>) {
    let (gpu, unavailable) = match tutorial::open_gpu(choice) {
        Ok(opened) => opened,
        Err(error) => (None, Some(CudaUnavailable::from_error(&error))),
    };
    ctx.emit(TutorialEvent::Gpu {
        name: gpu.as_ref().map(|gpu| gpu.name().to_string()),
        unavailable,
    });
    let progress = ctx.slot_writer();
    while let Received::Command(job) = ctx.recv() {
        let event = run_job(job, gpu.as_ref(), ctx, &progress);
        progress.store(None);
        ctx.emit(event);
    }
}

/// Runs one job to its end (or its cancellation), reporting sweep points as they come.
fn run_job(
    job: Job,
    gpu: Option<&TutorialGpu>,
    ctx: &WorkerContext<Job, TutorialEvent, JobProgress>,
    progress: &SlotWriter<JobProgress>,
) -> TutorialEvent {
    let cancel = ctx.cancel_flag();
    let control_for = |sweep: Option<(u64, usize, usize)>| {
        move |p: RunProgress| {
            progress.store(Some(JobProgress { progress: p, sweep }));
        }
    };
    match job {
        Job::Run {
            kernel,
            options,
            params,
        } => {
            let report = control_for(None);
            report(RunProgress {
                phase: RunPhase::GeneratingInputs,
                done: 0,
                total: 1,
            });
            let control = RunControl {
                cancel,
                progress: &report,
            };
            let result = run_once(kernel, &options, params, gpu, control)
                .map(Box::new)
                .map_err(Failure::from);
            TutorialEvent::RunFinished { kernel, result }
        }
        Job::Recorded { run, source } => {
            let kernel = run.kernel;
            let report = control_for(None);
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
            TutorialEvent::RunFinished { kernel, result }
        }
        Job::Sweep {
            kernel,
            sizes,
            options,
            params,
        } => {
            let mut failure = None;
            for (index, &n) in sizes.iter().enumerate() {
                let report = control_for(Some((n, index, sizes.len())));
                let control = RunControl {
                    cancel,
                    progress: &report,
                };
                let options = RunOptions { n, ..options };
                match run_once(kernel, &options, params, gpu, control) {
                    // The panel redraws a few times a second while a job runs; a redraw
                    // now would share the cores with the next size's timed runs.
                    Ok(outcome) => ctx.post(TutorialEvent::SweepPoint {
                        kernel,
                        run: Box::new(outcome.run),
                    }),
                    Err(error) => {
                        failure = Some(Failure::from(error));
                        break;
                    }
                }
            }
            TutorialEvent::SweepFinished { kernel, failure }
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
