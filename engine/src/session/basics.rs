//! The GPU basics' thread (a [`Worker`]): opens the GPU once, on the first run, then runs the
//! lessons it is sent, so that the window never waits for a timing.

use std::time::{Duration, Instant};

use crate::compute::BackendChoice;
use crate::tutorial::basics::{
    open_basics_gpu, BasicsGpu, BasicsLesson, BasicsOutcome, BasicsRequest,
};
use crate::tutorial::RunControl;

use super::worker::{Notify, Received, Worker, WorkerContext};

/// Where the GPU stands, as the thread found it.
#[derive(Debug, Clone, PartialEq)]
pub enum GpuState {
    /// Not asked yet (no run so far).
    Unknown,
    /// This GPU runs the GPU rungs.
    Ready(String),
    /// No GPU rungs, and why.
    Missing(String),
}

/// What the thread reports.
#[derive(Debug, Clone)]
pub enum BasicsEvent {
    /// The GPU was opened, or why it was not.
    Gpu(GpuState),
    /// A run ended.
    Finished {
        /// The lesson run.
        lesson: BasicsLesson,
        /// Its outcome, or why it failed.
        result: Result<Box<BasicsOutcome>, String>,
        /// How long it took.
        took: Duration,
    },
}

/// The panel's handle on its thread.
pub type BasicsWorker = Worker<BasicsRequest, BasicsEvent, ()>;

/// Starts the thread; the GPU is chosen as `choice` says (the app's backend setting).
pub fn spawn(notify: Notify, choice: BackendChoice) -> std::io::Result<BasicsWorker> {
    Worker::spawn("heatlab-basics", notify, move |ctx| run(ctx, choice))
}

/// Opens the GPU (or learns why not) and says so.
fn open(
    ctx: &WorkerContext<BasicsRequest, BasicsEvent, ()>,
    choice: BackendChoice,
) -> Option<BasicsGpu> {
    let (gpu, state) = match open_basics_gpu(choice) {
        Ok((Some(gpu), _)) => {
            let name = gpu.name().to_string();
            (Some(gpu), GpuState::Ready(name))
        }
        Ok((None, Some(reason))) => (
            None,
            GpuState::Missing(format!("CUDA is not available: {reason}")),
        ),
        Ok((None, None)) => (
            None,
            GpuState::Missing("the CPU backend is chosen in the settings".into()),
        ),
        Err(error) => {
            log::warn!("GPU basics: the GPU could not be opened: {error}");
            (
                None,
                GpuState::Missing(format!("the GPU could not be opened: {error}")),
            )
        }
    };
    ctx.emit(BasicsEvent::Gpu(state));
    gpu
}

fn run(ctx: WorkerContext<BasicsRequest, BasicsEvent, ()>, choice: BackendChoice) {
    let mut gpu: Option<Option<BasicsGpu>> = None;
    loop {
        match ctx.recv() {
            Received::Shutdown => return,
            Received::Nothing => {}
            Received::Command(request) => {
                let gpu = gpu.get_or_insert_with(|| open(&ctx, choice));
                let started = Instant::now();
                let control = RunControl {
                    cancel: ctx.cancel_flag(),
                    progress: &|_| {},
                };
                // The panel shows the failure to the user; that is where it is handled.
                let result = request
                    .run(gpu.as_ref(), control)
                    .map(Box::new)
                    .map_err(|error| error.to_string());
                ctx.emit(BasicsEvent::Finished {
                    lesson: request.lesson(),
                    result,
                    took: started.elapsed(),
                });
            }
        }
    }
}
