//! When the simulation thread steps and how far: playing, a pending "step N", the steps per
//! frame (fixed or automatic), recording points, and how often the full-field statistics are
//! recomputed.

use std::time::{Duration, Instant};

/// How often the full-field statistics are recomputed while playing.
const STATS_INTERVAL: Duration = Duration::from_millis(200);

/// The largest chunk of a "step N" request taken between two frames.
const STEP_N_CHUNK: u64 = 1000;

/// What the simulation thread is asked to do between frames.
#[derive(Debug, Clone)]
pub struct Schedule {
    /// Step continuously.
    pub playing: bool,
    /// Steps of a "step N" request still to take.
    pub pending_steps: u64,
    /// Steps per frame while playing.
    pub steps_per_frame: u64,
    /// Whether the steps per frame follow the display's cost.
    pub auto_steps: bool,
    /// A frame is owed although no step is due (the view or the parameters changed).
    pub dirty: bool,
    /// The step a heat problem's duration ends at: playing stops there once (Play then goes on
    /// past it); a "step N" request that asks for steps past it takes them.
    pub end_step: Option<u64>,
}

impl Default for Schedule {
    fn default() -> Self {
        Self {
            playing: false,
            pending_steps: 0,
            steps_per_frame: 10,
            auto_steps: false,
            dirty: false,
            end_step: None,
        }
    }
}

impl Schedule {
    /// Whether a frame is due.
    pub fn has_work(&self) -> bool {
        self.playing || self.pending_steps > 0 || self.dirty
    }

    /// Whether stepping goes on (playing, or steps pending).
    pub fn is_running(&self) -> bool {
        self.playing || self.pending_steps > 0
    }

    /// Stops playing and drops pending steps; returns whether anything was running.
    pub fn stop(&mut self) -> bool {
        let was_running = self.is_running();
        self.playing = false;
        self.pending_steps = 0;
        was_running
    }

    /// Steps for the next frame, at `step`: a frame's worth while playing, a chunk of a
    /// "step N" request, cut at the next recording point (every `record_every` steps) so that
    /// every recorded step is exactly on that grid.
    pub fn steps_for_frame(&self, step: u64, record_every: Option<u64>) -> u64 {
        let mut steps = if self.pending_steps > 0 {
            self.pending_steps
                .min(STEP_N_CHUNK.max(self.steps_per_frame))
        } else if self.playing {
            self.steps_per_frame
        } else {
            0
        };
        let playing_on = self.pending_steps == 0;
        if let Some(end) = self.end_step.filter(|&end| end > step && playing_on) {
            steps = steps.min(end - step);
        }
        if let Some(every) = record_every {
            let every = every.max(1);
            steps = steps.min(every - step % every);
        }
        steps
    }

    /// Whether playing just reached [`Schedule::end_step`] at `step`: it stops there. The end
    /// is passed either way (a later Play goes on; a "step N" request went past it).
    pub fn reached_end(&mut self, step: u64) -> bool {
        if self.end_step.is_none_or(|end| step < end) {
            return false;
        }
        self.end_step = None;
        let playing = self.playing && self.pending_steps == 0;
        if playing {
            self.stop();
        }
        playing
    }

    /// Counts `steps` taken off a "step N" request; returns whether that request just ended
    /// (and playing is off, so the simulation stops).
    pub fn took(&mut self, steps: u64) -> bool {
        if self.pending_steps == 0 {
            return false;
        }
        self.pending_steps -= steps.min(self.pending_steps);
        self.pending_steps == 0 && !self.playing
    }
}

/// When the full-field statistics were last computed and what they cost.
#[derive(Debug, Clone, Default)]
pub struct StatsClock {
    last: Option<Instant>,
    cost: Duration,
}

impl StatsClock {
    /// Whether statistics are due: always when paused, otherwise a few times a second and never
    /// more than a tenth of the time (large fields).
    pub fn due(&self, playing: bool) -> bool {
        let interval = STATS_INTERVAL.max(self.cost * 10);
        !playing || self.last.is_none_or(|at| at.elapsed() >= interval)
    }

    /// Notes statistics computed now at `cost`.
    pub fn computed(&mut self, cost: Duration) {
        self.last = Some(Instant::now());
        self.cost = cost;
    }

    /// Forgets (a new field).
    pub fn reset(&mut self) {
        self.last = None;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn steps_stop_at_recording_points_and_step_n_chunks() {
        let mut schedule = Schedule {
            pending_steps: 2500,
            ..Schedule::default()
        };
        assert_eq!(schedule.steps_for_frame(0, None), 1000);
        assert_eq!(schedule.steps_for_frame(10, Some(25)), 15);
        assert!(!schedule.took(1000));
        assert!(!schedule.took(1000));
        assert!(schedule.took(1000), "the request ends");
        schedule.playing = true;
        assert_eq!(schedule.steps_for_frame(0, None), 10);
    }

    #[test]
    fn playing_stops_once_at_the_end_of_the_duration() {
        let mut schedule = Schedule {
            playing: true,
            steps_per_frame: 40,
            end_step: Some(100),
            ..Schedule::default()
        };
        assert_eq!(schedule.steps_for_frame(80, None), 20, "cut at the end");
        assert!(!schedule.reached_end(80));
        assert!(schedule.reached_end(100));
        assert!(!schedule.playing);
        schedule.playing = true;
        assert_eq!(
            schedule.steps_for_frame(100, None),
            40,
            "Play goes on past it"
        );
        assert!(!schedule.reached_end(140));
        // A "step N" request over the end takes its steps, and passes the end.
        let mut schedule = Schedule {
            pending_steps: 500,
            end_step: Some(100),
            ..Schedule::default()
        };
        assert_eq!(schedule.steps_for_frame(0, None), 500);
        assert!(!schedule.reached_end(500));
        assert_eq!(schedule.end_step, None);
    }
}
