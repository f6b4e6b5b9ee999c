//! The simulation thread of the diffusion panel. It owns the [`Simulation`]; the panel sends it
//! [`SimCommand`]s and takes [`Frame`]s (previews, statistics, timings) and [`SimEvent`]s back,
//! so the UI never waits on compute. A frame is only computed once the UI has taken the
//! previous one, so stepping runs as fast as the display shows it and never piles up frames
//! nobody sees.

mod backend;
pub mod export;
mod files;
mod kernels;
pub mod messages;
mod paint;
mod problem;
mod schedule;

use std::time::{Duration, Instant};

use crate::compute::{Backend, BackendKind, StepParams};
use crate::error::{CudaUnavailable, HeatlabError};
use crate::measure::TimingRecord;
use crate::sim::agreement::WindowPolicy;
use crate::sim::{Simulation, Stability};

use crate::render::frame::{colour_frame, reduce_frame, statistics_cost, SpareBuffers};
use crate::session::notice::Level;
pub use crate::session::pacing::{
    auto_steps_per_frame, overlapped_steps_per_frame, AUTO_MAX_FRAME_SECONDS, AUTO_STEPPING_SHARE,
    MAX_STEPS_PER_FRAME, OVERLAPPED_FRAME_RATE,
};
use crate::session::recording::{frame_due, VideoRecorder};
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
            match sim.reset() {
                Ok(()) => {
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
            let every = recording.as_ref().map_or(1, |r| r.every);
            match VideoRecorder::start(&video.path, video.fps, every, video.look) {
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

    /// Whether this frame overlaps stepping with drawing: the steps of the next frame are
    /// queued on the GPU right after this frame's pictures are taken, so the GPU steps while
    /// the host colours, hands the frame over and waits for the display. Only while playing
    /// steadily: a recording or the unstable coefficient's checks need each state on the host.
    fn overlaps_stepping(&self) -> bool {
        self.schedule.playing
            && self.schedule.pending_steps == 0
            && self.recording.is_none()
            && self.sim.as_ref().is_some_and(|sim| {
                sim.backend().kind() == BackendKind::Cuda
                    && Stability::of(sim.params().coeff) != Stability::Unstable
            })
    }

    fn frame(&mut self) {
        let started = Instant::now();
        let overlapped = self.overlaps_stepping();
        let mut split = Vec::new();
        // The steps queued by the previous frame: waiting for them is time the host was ahead.
        let queued = self.finish_queued_steps(&mut split);
        let waited_for_gpu = started.elapsed();
        let Some(step) = self.sim.as_ref().map(Simulation::step_count) else {
            return;
        };
        let every = self.recording.as_ref().map(|r| r.every);
        let steps = self.schedule.steps_for_frame(step, every);
        let record = if overlapped {
            queued
        } else {
            self.step_for_frame(steps, &mut split).or(queued)
        };
        self.schedule.dirty = false;
        let Some(sim) = self.sim.as_mut() else {
            return;
        };
        let stats_due = self.stats.due(self.schedule.playing);
        let reduced = match reduce_frame(sim, self.views, stats_due, &mut self.spares, &mut split) {
            Ok(reduced) => reduced,
            Err(error) => {
                self.schedule.stop();
                self.notice(Level::Error, format!("cannot draw the field: {error}"));
                self.emit(SimEvent::Stopped);
                return;
            }
        };
        let step = sim.step_count();
        let size = sim.initial_size();
        // Probes and the line profile read the device too: before the next steps are queued.
        let samples = self.sample(&mut split);
        let problem = self.problem_frame(stats_due, &mut split);
        if overlapped {
            // The GPU is done with this frame: give it the next frame's steps before colouring.
            let cycle = self.queued_at.map(|at| at.elapsed());
            if let (Some(record), Some(cycle)) = (record.as_ref(), cycle) {
                self.adjust_overlapped_steps(record, cycle.saturating_sub(waited_for_gpu));
            }
            self.queue_steps(steps);
        }
        let pictures = colour_frame(reduced, &mut self.spares, &mut split);
        if pictures.stats.is_some() {
            self.stats.computed(statistics_cost(&split));
        }
        self.shown = ShownRanges {
            field: Some(pictures.field.range),
            laplacian: Some(pictures.laplacian.range),
        };
        if let Some(recording) = self.recording.clone() {
            if frame_due(recording.every, step, steps) {
                let recorded = Instant::now();
                self.record_frame(&recording, step);
                split.push((FramePart::Recording, recorded.elapsed()));
            }
        }
        if !overlapped {
            self.queued_at = None;
            self.adjust_steps_per_frame(record.as_ref(), started.elapsed());
        }
        let wall = started.elapsed();
        self.ctx.put_frame(Frame {
            step,
            size,
            field: pictures.field,
            laplacian: pictures.laplacian,
            stats: pictures.stats,
            steps: record.as_ref().map_or(0, |r| r.steps),
            record,
            split,
            wall,
            playing: self.schedule.is_running(),
            steps_per_frame: self.schedule.steps_per_frame,
            samples,
            problem,
        });
    }

    /// Collects the steps queued by the previous frame (adding their time to `split`).
    fn finish_queued_steps(
        &mut self,
        split: &mut Vec<(FramePart, Duration)>,
    ) -> Option<TimingRecord> {
        let sim = self.sim.as_mut()?;
        match sim.finish_advance() {
            Ok(record) => {
                let record = record?;
                split.push((FramePart::Stepping, Duration::from_secs_f64(record.seconds)));
                Some(record)
            }
            Err(error) => {
                self.schedule.stop();
                self.notice(Level::Error, format!("stepping failed: {error}"));
                self.emit(SimEvent::Stopped);
                None
            }
        }
    }

    /// Queues the next frame's steps on the device.
    fn queue_steps(&mut self, steps: u64) {
        let Some(sim) = self.sim.as_mut() else {
            return;
        };
        if steps == 0 {
            return;
        }
        match sim.start_advance(steps) {
            // `Some` only from a backend that stepped at once (never CUDA); the simulation keeps
            // that timing among its records either way.
            Ok(_) => {
                self.queued_at = Some(Instant::now());
                if self.schedule.took(steps) {
                    self.emit(SimEvent::Stopped);
                }
            }
            Err(error) => {
                self.schedule.stop();
                self.notice(Level::Error, format!("stepping failed: {error}"));
                self.emit(SimEvent::Stopped);
            }
        }
    }

    /// In the automatic mode while stepping overlaps drawing: enough steps per frame that the
    /// GPU never waits for the host (the host's own time per frame, `host`, covered with a
    /// margin) and the frames still come at least [`OVERLAPPED_FRAME_RATE`] times a second when
    /// the GPU is the slower one.
    fn adjust_overlapped_steps(&mut self, record: &TimingRecord, host: Duration) {
        let schedule = &mut self.schedule;
        if !schedule.auto_steps {
            return;
        }
        schedule.steps_per_frame =
            overlapped_steps_per_frame(schedule.steps_per_frame, record, host, MAX_STEPS_PER_FRAME);
    }

    /// Takes the frame's steps (if any), adding their time to `split`; returns their timing.
    fn step_for_frame(
        &mut self,
        steps: u64,
        split: &mut Vec<(FramePart, Duration)>,
    ) -> Option<TimingRecord> {
        if steps == 0 {
            return None;
        }
        let Some(timing) = self.advance(steps) else {
            self.schedule.stop();
            self.emit(SimEvent::Stopped);
            return None;
        };
        split.push((FramePart::Stepping, Duration::from_secs_f64(timing.seconds)));
        if self.schedule.took(steps) {
            self.emit(SimEvent::Stopped);
        }
        Some(timing)
    }

    /// In the automatic mode, moves the steps per frame towards the share of the frame that
    /// stepping should take.
    fn adjust_steps_per_frame(&mut self, record: Option<&TimingRecord>, wall: Duration) {
        let schedule = &mut self.schedule;
        if !(schedule.auto_steps && schedule.playing && schedule.pending_steps == 0) {
            return;
        }
        if let Some(record) = record {
            schedule.steps_per_frame =
                auto_steps_per_frame(schedule.steps_per_frame, record, wall, MAX_STEPS_PER_FRAME);
        }
    }

    /// Advances, checking for non-finite values when the coefficient is unstable (below 0.25
    /// each step is an average of neighbours, so a finite field stays finite). `None` when
    /// stepping stopped; an event or a notice says why.
    fn advance(&mut self, steps: u64) -> Option<TimingRecord> {
        let sim = self.sim.as_mut()?;
        let result = if Stability::of(sim.params().coeff) == Stability::Unstable {
            sim.advance_checked(steps).map(|(record, _)| record)
        } else {
            sim.advance(steps)
        };
        match result {
            Ok(record) => Some(record),
            Err(error @ HeatlabError::NonFinite { .. }) => {
                let good = sim.step_count();
                self.emit(SimEvent::NonFinite {
                    message: format!("{error}; paused at step {good}, the last finite state"),
                    step: good,
                });
                self.schedule.dirty = true;
                None
            }
            Err(error) => {
                self.notice(Level::Error, format!("stepping failed: {error}"));
                None
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
        };
        let Some(sim) = self.sim.as_mut() else {
            return;
        };
        if let Err(error) = export::write(&job, sim, self.views, self.shown, step) {
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
        match export::write(job, sim, self.views, self.shown, step) {
            Ok(paths) => self.emit(SimEvent::Exported(paths)),
            Err(error) => {
                self.notice(Level::Error, format!("export failed: {error}"));
                self.emit(SimEvent::Exported(Vec::new()));
            }
        }
    }
}
