//! The simulation thread's frame loop: the steps of a frame (taken at once, or queued on the
//! GPU to overlap the drawing of the frame before), the pictures reduced by the backend, and
//! the steps per frame adapted to what the display costs.

use std::time::{Duration, Instant};

use super::export::ShownRanges;
use super::messages::Frame;
use super::{FramePart, ProblemFrame, Samples, SimEvent, SimThread};
use crate::compute::BackendKind;
use crate::measure::TimingRecord;
use crate::render::frame::{
    colour_frame, queue_frame, reduce_frame, statistics_cost, take_queued_frame, QueuedFrame,
    ReducedFrame,
};
use crate::session::notice::Level;
use crate::session::pacing::{
    auto_steps_per_frame, overlapped_steps_per_frame, MAX_STEPS_PER_FRAME,
};
use crate::session::recording::frame_due;
use crate::sim::{Simulation, Stability};

/// A frame's pictures, reduced or queued on the device.
enum Drawn {
    Reduced(ReducedFrame),
    Queued(QueuedFrame),
}

impl SimThread {
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

    pub(super) fn frame(&mut self) {
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
        let step_seconds = self.sim.as_ref().and_then(Simulation::problem_step_seconds);
        self.schedule
            .pace(Instant::now(), step_seconds, MAX_STEPS_PER_FRAME);
        let steps = self.schedule.steps_for_frame(step, every);
        self.schedule.paced_took(steps);
        let record = if overlapped {
            queued
        } else {
            self.step_for_frame(steps, &mut split).or(queued)
        };
        self.schedule.dirty = false;
        let Some(sim) = self.sim.as_ref() else {
            return;
        };
        let (step, size) = (sim.step_count(), sim.initial_size());
        if self.schedule.reached_end(step) {
            self.end_reached(step);
        }
        let stats_due = self.stats.due(self.schedule.playing);
        let queue_next = overlapped.then(|| {
            let cycle = self.queued_at.map(|at| at.elapsed());
            (
                steps,
                record.clone(),
                cycle.map(|c| c.saturating_sub(waited_for_gpu)),
            )
        });
        let Some((reduced, samples, problem)) =
            self.reduce_and_queue(stats_due, queue_next, &mut split)
        else {
            return;
        };
        let pictures = colour_frame(reduced, &mut self.spares, &mut split);
        if let Some(stats) = pictures.stats.as_ref() {
            self.stats.computed(statistics_cost(&split));
            self.check(stats);
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

    /// The backend's half of the frame (pictures, samples, the problem's part) and, when
    /// `queue_next` says so (stepping overlaps drawing), the next frame's steps queued on the
    /// device: `(steps, the last advance's record, the host's time since it was queued)`.
    /// Where the frame reads nothing else from the device (no statistics or energy due, no
    /// probes), the previews are queued first, the steps behind them, and only the previews
    /// are waited for, so that the GPU steps on while the host takes them; otherwise
    /// everything is read before the steps are queued. `None` when drawing failed (stopped,
    /// with a notice).
    fn reduce_and_queue(
        &mut self,
        stats_due: bool,
        queue_next: Option<(u64, Option<TimingRecord>, Option<Duration>)>,
        split: &mut Vec<(FramePart, Duration)>,
    ) -> Option<(ReducedFrame, Option<Samples>, Option<ProblemFrame>)> {
        let pipelined = queue_next.is_some() && !stats_due && self.sampling.is_empty();
        let sim = self.sim.as_mut()?;
        let queued = if pipelined {
            queue_frame(sim, self.views, split)
        } else {
            Ok(None)
        };
        let drawn = match queued {
            Ok(Some(queued)) => Ok(Drawn::Queued(queued)),
            Ok(None) => reduce_frame(sim, self.views, stats_due, &mut self.spares, split)
                .map(Drawn::Reduced),
            Err(error) => Err(error),
        };
        // Probes and the line profile read the device too: before the next steps are queued.
        let samples = self.sample(split);
        let problem = self.problem_frame(stats_due, split);
        // A frame that could not be drawn stops stepping: no next steps then.
        // Nor when the frame stopped playing (the steady state reached).
        let still_playing = self.schedule.playing;
        if let Some((steps, record, host)) = queue_next.filter(|_| drawn.is_ok() && still_playing) {
            // The GPU is done with this frame: give it the next frame's steps before colouring.
            if let (Some(record), Some(host)) = (record.as_ref(), host) {
                self.adjust_overlapped_steps(record, host);
            }
            self.queue_steps(steps);
        }
        let reduced = match drawn {
            Ok(Drawn::Reduced(reduced)) => Ok(reduced),
            Ok(Drawn::Queued(queued)) => {
                let sim = self.sim.as_mut()?;
                take_queued_frame(sim, queued, &mut self.spares, split)
            }
            Err(error) => Err(error),
        };
        match reduced {
            Ok(reduced) => Some((reduced, samples, problem)),
            Err(error) => {
                self.schedule.stop();
                self.notice(Level::Error, format!("cannot draw the field: {error}"));
                self.emit(SimEvent::Stopped);
                None
            }
        }
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
}
