//! The simulation thread of the diffusion panel. It owns the [`Simulation`]; the panel sends it
//! [`SimCommand`]s and takes [`Frame`]s (previews, statistics, timings) and [`SimEvent`]s back,
//! so the UI never waits on compute. A frame is only computed once the UI has taken the
//! previous one, so stepping runs as fast as the display shows it and never piles up frames
//! nobody sees.

mod backend;
pub mod export;
mod files;
mod frame_loop;
mod kernels;
pub mod messages;
mod paint;
mod problem;
mod schedule;

use std::time::{Duration, Instant};

use crate::compute::{Backend, StepParams};
use crate::error::CudaUnavailable;
use crate::measure::TimingRecord;
use crate::session::run::{Advanced, FieldChecks, Halt, RunLoop};
use crate::sim::agreement::WindowPolicy;
use crate::sim::Simulation;

use crate::render::frame::SpareBuffers;
use crate::session::notice::Level;
pub use crate::session::pacing::{
    auto_steps_per_frame, overlapped_steps_per_frame, AUTO_MAX_FRAME_SECONDS, AUTO_STEPPING_SHARE,
    MAX_STEPS_PER_FRAME, OVERLAPPED_FRAME_RATE,
};
use crate::session::recording::VideoRecorder;
use crate::session::worker::{Notify, Received, Worker, WorkerContext};
use crate::state::FieldOrigin;
use export::ShownRanges;
pub use files::Opened;
pub use messages::{
    AgreementReport, BackendStatus, ExportJob, ExportKind, Frame, FramePart, PaintCommand,
    ProblemCommand, ProblemFrame, Recording, Samples, SimCommand, SimEvent, VideoRecording,
    ViewRequest, ViewRequests,
};
use schedule::{Schedule, StatsClock};

/// Seconds of the CPU reference's work per agreement window.
const AGREEMENT_WINDOW_SECONDS: f64 = 1.0;

/// The panel's handle on the simulation thread.
pub type SimWorker = Worker<SimCommand, SimEvent, Frame>;

/// Starts the simulation thread; `notify` asks the UI for a repaint.
pub fn spawn(notify: Notify) -> std::io::Result<SimWorker> {
    Worker::spawn("heatlab-sim", notify, |ctx| SimThread::new(ctx).run())
}

/// The state of the simulation thread.
struct SimThread {
    ctx: WorkerContext<SimCommand, SimEvent, Frame>,
    sim: Option<Simulation>,
    /// A backend made before the first field exists.
    idle_backend: Option<Box<dyn Backend>>,
    cuda_unavailable: Option<CudaUnavailable>,
    /// Whether CUDA has been tried (a CUDA context is costly to make just to ask).
    cuda_checked: bool,
    params: StepParams,
    schedule: Schedule,
    views: ViewRequests,
    recording: Option<Recording>,
    stats: StatsClock,
    /// Ranges of the last frame, so that exports match what is shown.
    shown: ShownRanges,
    /// The simulation's first timing record of the current field (the ones before it timed
    /// fields or problems since replaced): the timing log writes from here.
    timings_from: usize,
    /// Whether the live agreement check is on.
    agreement_check: bool,
    /// When the last overlapped steps were queued: a frame's host cycle runs from there.
    queued_at: Option<Instant>,
    /// Cells each frame samples (probes, line profile).
    sampling: Vec<u32>,
    /// Undo and redo counts last told to the panel.
    paint_counts: (usize, usize),
    /// Where the initial field came from (for saved states).
    origin: Option<FieldOrigin>,
    /// The video being recorded, when the recording is one.
    video: Option<VideoRecorder>,
    /// The GPU kernel the user chose.
    kernel: crate::compute::KernelChoice,
    /// The Kernel lab's validated source, once used (reloaded into a new CUDA backend).
    user_source: Option<String>,
    /// Pixel buffers of pictures the UI has replaced, coloured into again.
    spares: SpareBuffers,
    /// When the problem was last sent to the panel (throttled while kinds are painted).
    problem_events: problem::ProblemEvents,
    /// The run loop's checks and books: the same as `heatlab run`'s.
    run: RunLoop,
    /// Steps of the heat problem's duration (a scenario's), from the initial field.
    duration_steps: Option<u64>,
    /// The same duration in simulated seconds.
    duration_seconds: Option<f64>,
    /// The stop at the steady state, when asked for.
    steady: Option<crate::sim::steady::SteadyWatch>,
}

impl SimThread {
    fn new(ctx: WorkerContext<SimCommand, SimEvent, Frame>) -> Self {
        Self {
            ctx,
            sim: None,
            idle_backend: None,
            cuda_unavailable: None,
            cuda_checked: false,
            params: StepParams::default(),
            schedule: Schedule::default(),
            views: ViewRequests::default(),
            recording: None,
            stats: StatsClock::default(),
            shown: ShownRanges::default(),
            timings_from: 0,
            agreement_check: false,
            queued_at: None,
            sampling: Vec::new(),
            paint_counts: (0, 0),
            origin: None,
            video: None,
            kernel: crate::compute::KernelChoice::Auto,
            user_source: None,
            spares: SpareBuffers::default(),
            problem_events: problem::ProblemEvents::default(),
            run: RunLoop::new(FieldChecks::ByDriver, false),
            duration_steps: None,
            duration_seconds: None,
            steady: None,
        }
    }

    fn emit(&self, event: SimEvent) {
        self.ctx.emit(event);
    }

    fn notice(&self, level: Level, text: impl Into<String>) {
        self.emit(SimEvent::Notice(level, text.into()));
    }

    fn has_work(&self) -> bool {
        self.sim
            .as_ref()
            .is_some_and(|sim| self.schedule.has_work() || sim.has_queued_advance())
    }

    fn run(mut self) {
        loop {
            let received = if self.has_work() && !self.ctx.slot_is_full() {
                self.ctx.try_recv()
            } else {
                // Waiting for the UI to take the last frame, or for something to do.
                let wait = if self.has_work() {
                    Duration::from_millis(2)
                } else {
                    Duration::from_millis(100)
                };
                self.ctx.recv_timeout(wait)
            };
            self.poll_agreement();
            match received {
                Received::Shutdown => {
                    // Closing the window finishes a video being recorded.
                    self.finish_video();
                    return;
                }
                Received::Command(command) => {
                    self.handle(command);
                    self.sync_paint_history();
                }
                Received::Nothing => {
                    self.flush_problem_event();
                    if self.has_work() && !self.ctx.slot_is_full() {
                        self.frame();
                    }
                }
            }
        }
    }

    fn handle(&mut self, command: SimCommand) {
        match command {
            SimCommand::SwitchBackend(choice) => self.switch_backend(choice),
            SimCommand::Generate(params) => self.generate(&params),
            SimCommand::Play => self.schedule.playing = self.sim.is_some(),
            SimCommand::Pause => {
                let was_running = self.schedule.stop();
                // A frame made before the pause must not tell the UI it is still playing.
                self.ctx.update_frame(|frame| frame.playing = false);
                if was_running {
                    self.emit(SimEvent::Stopped);
                }
            }
            SimCommand::Step(steps) => {
                self.schedule.pending_steps = self.schedule.pending_steps.saturating_add(steps);
            }
            SimCommand::Reset => self.reset(),
            SimCommand::SetParams(params) => {
                self.params = params;
                if let Some(sim) = self.sim.as_mut() {
                    sim.set_params(params);
                }
                self.schedule.dirty = true;
            }
            SimCommand::SetStepsPerFrame(steps) => self.schedule.steps_per_frame = steps.max(1),
            SimCommand::SetAutoSteps(auto) => self.schedule.auto_steps = auto,
            SimCommand::SetSpeed(speed) => self.schedule.set_speed(speed),
            SimCommand::SetSteadyStop(tolerance) => self.set_steady_stop(tolerance),
            SimCommand::SetDuration(seconds) => self.set_duration(seconds),
            SimCommand::SetViews(views) => {
                if views != self.views {
                    self.views = views;
                    self.schedule.dirty = true;
                }
            }
            SimCommand::Export(job) => self.export(&job),
            SimCommand::SetRecording(recording) => self.set_recording(recording),
            SimCommand::SaveState(path) => self.save_state(&path),
            SimCommand::Open(path, range) => self.open_file(&path, range),
            SimCommand::OpenScenario(scenario) => self.open_scenario(*scenario),
            SimCommand::SetKernel(kernel) => self.set_kernel(kernel),
            SimCommand::MeasureKernels => self.measure_kernels(),
            SimCommand::SnapshotField(reply) => self.snapshot_field(&reply),
            SimCommand::UseUserKernel(source) => self.use_user_kernel(source),
            SimCommand::ReturnPictures(pictures) => self.spares.take_back(pictures),
            SimCommand::Problem(command) => self.edit_problem(command),
            SimCommand::SetAgreementCheck(on) => {
                self.agreement_check = on;
                let policy = self.agreement_policy();
                if let Some(sim) = self.sim.as_mut() {
                    sim.set_agreement_check(policy);
                }
            }
            SimCommand::Paint(paint) => self.paint(paint),
            SimCommand::SetSampling(cells) => self.set_sampling(cells),
            SimCommand::SetProbes { probes, undoable } => self.place_probes(probes, undoable),
        }
    }

    /// How the live check cuts its windows: about a second of the reference's work each, so
    /// that a result comes every second or two whatever the size.
    fn agreement_policy(&self) -> Option<WindowPolicy> {
        self.agreement_check.then_some(WindowPolicy::Adaptive {
            target_seconds: AGREEMENT_WINDOW_SECONDS,
        })
    }

    /// Passes a finished agreement check on to the panel.
    fn poll_agreement(&mut self) {
        let Some(sim) = self.sim.as_mut() else {
            return;
        };
        match sim.poll_agreement() {
            Ok(None) => {}
            Ok(Some(outcome)) => {
                let (checks, mismatches) = sim.agreement().map_or((0, 0), |w| w.counts());
                self.emit(SimEvent::Agreement(AgreementReport {
                    outcome,
                    checks,
                    mismatches,
                }));
            }
            Err(error) => {
                sim.set_agreement_check(None);
                self.agreement_check = false;
                self.notice(
                    Level::Error,
                    format!("the agreement check stopped: {error}"),
                );
            }
        }
    }

    fn reset(&mut self) {
        if let Some(sim) = self.sim.as_mut() {
            match sim.reset().and_then(|()| self.run.restart(sim)) {
                Ok(()) => {
                    self.schedule.end_step = self.duration_steps;
                    self.schedule.dirty = true;
                    // The heaters may be back as the user set them.
                    self.emit_problem();
                }
                Err(error) => self.notice(Level::Error, format!("reset failed: {error}")),
            }
        }
    }

    fn set_recording(&mut self, recording: Option<Recording>) {
        self.finish_video();
        if let Some(video) = recording.as_ref().and_then(|r| r.video.as_ref()) {
            match VideoRecorder::start(&video.path, video.fps, video.look) {
                Ok(writer) => self.video = Some(writer),
                Err(error) => {
                    self.notice(Level::Error, format!("cannot record: {error}"));
                    self.emit(SimEvent::RecordingStopped);
                    return;
                }
            }
            self.recording = recording;
            // The first frame is the field as it stands.
            if let (Some(recording), Some(step)) = (
                self.recording.clone(),
                self.sim.as_ref().map(Simulation::step_count),
            ) {
                self.record_frame(&recording, step);
            }
            return;
        }
        if let Some(recording) = &recording {
            if let Err(error) = crate::export::ensure_writable_dir(&recording.dir) {
                self.notice(Level::Error, format!("cannot record: {error}"));
                self.emit(SimEvent::RecordingStopped);
                return;
            }
        }
        self.recording = recording;
    }

    /// Advances through the run loop (an unstable coefficient checks every state for
    /// non-finite values; the frames' statistics check the rest, see [`SimThread::check`]).
    /// `None` when stepping stopped; an event or a notice says why.
    fn advance(&mut self, steps: u64) -> Option<TimingRecord> {
        let sim = self.sim.as_mut()?;
        match self.run.advance(sim, steps) {
            Ok(Advanced::Stepped(record)) => Some(record),
            Ok(Advanced::Halted(halt)) => {
                self.halted(halt);
                None
            }
            Err(error) => {
                self.notice(Level::Error, format!("stepping failed: {error}"));
                None
            }
        }
    }

    /// Checks the field, whose statistics a frame just took, as `heatlab run` does after each
    /// piece: stops playing when it went non-finite or a heat problem fell below absolute zero.
    pub(super) fn check(&mut self, stats: &crate::compute::FieldStats) {
        let Some(sim) = self.sim.as_mut() else {
            return;
        };
        match self.run.check(sim, stats) {
            Ok(None) => {}
            Ok(Some(halt)) => {
                if self.schedule.stop() {
                    self.emit(SimEvent::Stopped);
                }
                self.halted(halt);
            }
            Err(error) => log::warn!("checking the field: {error}"),
        }
    }

    /// A new field stands in the simulation: the run loop's checks and energy budget start
    /// from it, and so does the timing log.
    pub(super) fn restart_run(&mut self) {
        if let Some(sim) = self.sim.as_mut() {
            self.timings_from = sim.timings().len();
            if let Err(error) = self.run.restart(sim) {
                log::warn!("restarting the run's books: {error}");
            }
        }
    }

    /// Stepping stopped at the end of the problem's duration.
    pub(super) fn end_reached(&mut self, step: u64) {
        self.emit(SimEvent::Stopped);
        let seconds = self
            .sim
            .as_ref()
            .and_then(Simulation::simulated_seconds)
            .unwrap_or(0.0);
        self.notice(
            Level::Info,
            format!(
                "paused at the end of the duration: {seconds:.6} s simulated, step {step} (Play \
                 goes on past it)"
            ),
        );
    }

    /// Tells the panel why the run loop stopped.
    fn halted(&mut self, halt: Halt) {
        let step = self.sim.as_ref().map_or(0, Simulation::step_count);
        match halt {
            // The session's loop is stopped by Pause, never by the run loop's driver.
            Halt::Interrupted => {}
            Halt::NonFinite { error, last_good } => {
                let message = match last_good {
                    Some(good) => format!("{error}; paused at step {good}, the last finite state"),
                    None => format!("{error}; paused at step {step}"),
                };
                self.emit(SimEvent::NonFinite { message, step });
                self.schedule.dirty = true;
            }
            Halt::BelowAbsoluteZero(error) => {
                self.notice(Level::Error, format!("{error}; paused at step {step}"));
            }
        }
    }

    fn record_frame(&mut self, recording: &Recording, step: u64) {
        if recording.video.is_some() {
            let Some(sim) = self.sim.as_mut() else {
                return;
            };
            let Some(recorder) = self.video.as_mut() else {
                return;
            };
            let colours = export::colours(self.views, self.shown);
            let added = recorder.add(sim, step, &colours, None);
            if let Err(error) = added {
                // The temporary file goes with the writer; an older file of that name stays.
                self.video = None;
                self.recording = None;
                self.notice(Level::Error, format!("recording stopped: {error}"));
                self.emit(SimEvent::RecordingStopped);
            }
            return;
        }
        let job = ExportJob {
            kind: ExportKind::Frames,
            dir: recording.dir.clone(),
            colorbar: recording.colorbar,
            cell_pixels: recording.cell_pixels,
        };
        let Some(sim) = self.sim.as_mut() else {
            return;
        };
        if let Err(error) =
            export::write(&job, sim, self.views, self.shown, step, self.timings_from)
        {
            self.recording = None;
            self.notice(Level::Error, format!("recording stopped: {error}"));
            self.emit(SimEvent::RecordingStopped);
        }
    }

    /// Finishes the video being recorded, if any, and says where it is.
    fn finish_video(&mut self) {
        let Some(recorder) = self.video.take() else {
            return;
        };
        match recorder.finish() {
            Ok(summary) => {
                self.notice(
                    Level::Info,
                    format!(
                        "wrote {}: {} frames of {}x{}",
                        summary.path.display(),
                        summary.frames,
                        summary.size.0,
                        summary.size.1
                    ),
                );
                self.emit(SimEvent::Exported(vec![summary.path]));
            }
            Err(error) => self.notice(Level::Error, format!("the video was not saved: {error}")),
        }
    }

    fn export(&mut self, job: &ExportJob) {
        let Some(sim) = self.sim.as_mut() else {
            self.notice(
                Level::Warning,
                "nothing to export yet: the field is still being generated",
            );
            self.emit(SimEvent::Exported(Vec::new()));
            return;
        };
        let step = sim.step_count();
        match export::write(job, sim, self.views, self.shown, step, self.timings_from) {
            Ok(paths) => self.emit(SimEvent::Exported(paths)),
            Err(error) => {
                self.notice(Level::Error, format!("export failed: {error}"));
                self.emit(SimEvent::Exported(Vec::new()));
            }
        }
    }
}
