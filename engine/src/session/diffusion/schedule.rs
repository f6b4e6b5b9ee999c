//! When the simulation thread steps and how far: playing, a pending "step N", the steps per
//! frame (fixed or automatic), recording points, and how often the full-field statistics are
//! recomputed.

use std::time::{Duration, Instant};

/// How often the full-field statistics are recomputed while playing.
const STATS_INTERVAL: Duration = Duration::from_millis(200);

/// The largest chunk of a "step N" request taken between two frames.
const STEP_N_CHUNK: u64 = 1000;

/// The most wall time a speed limit lets steps be owed for: a device slower than the speed
/// asked for runs as fast as it goes, without a burst to catch up later.
const MOST_OWED: Duration = Duration::from_millis(250);

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
    /// A heat problem's speed while playing, simulated seconds per wall second (`None`: as fast
    /// as the device goes, the steps per frame as set).
    speed: Option<f64>,
    /// What the speed owes: steps (with a fraction) not yet taken, and when that was counted.
    owed: f64,
    counted_at: Option<Instant>,
    /// The steps the speed allows this frame, while it applies.
    allowed: Option<u64>,
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
            speed: None,
            owed: 0.0,
            counted_at: None,
            allowed: None,
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
        self.counted_at = None;
        was_running
    }

    /// Sets the speed while playing (simulated seconds per wall second; `None`, or anything
    /// not positive and finite: as fast as the device goes). What was owed is dropped.
    pub fn set_speed(&mut self, speed: Option<f64>) {
        self.speed = speed.filter(|s| s.is_finite() && *s > 0.0);
        self.owed = 0.0;
        self.counted_at = None;
        self.allowed = None;
    }

    /// Counts what the speed owes at `now` for steps of `step_seconds` (`None`: no heat
    /// problem, whose steps have no time: the speed does not apply). Playing without a "step
    /// N" request, the next [`Schedule::steps_for_frame`] takes the whole steps owed (at most
    /// `most`) instead of the steps per frame; the first frame after Play owes none.
    pub fn pace(&mut self, now: Instant, step_seconds: Option<f64>, most: u64) {
        let pacing = self.playing && self.pending_steps == 0;
        let (Some(speed), Some(dt), true) = (self.speed, step_seconds, pacing) else {
            self.allowed = None;
            self.counted_at = None;
            return;
        };
        let elapsed = self
            .counted_at
            .map_or(Duration::ZERO, |at| now.saturating_duration_since(at))
            .min(MOST_OWED);
        self.counted_at = Some(now);
        let most_owed = MOST_OWED.as_secs_f64() * speed / dt;
        self.owed = (self.owed + elapsed.as_secs_f64() * speed / dt).min(most_owed.max(1.0));
        self.allowed = Some((self.owed.floor() as u64).min(most));
    }

    /// Counts `steps` taken off what the speed owed.
    pub fn paced_took(&mut self, steps: u64) {
        if self.allowed.is_some() {
            self.owed = (self.owed - steps as f64).max(0.0);
        }
    }

    /// Steps for the next frame, at `step`: a frame's worth while playing, a chunk of a
    /// "step N" request, cut at the next recording point (every `record_every` steps) so that
    /// every recorded step is exactly on that grid.
    pub fn steps_for_frame(&self, step: u64, record_every: Option<u64>) -> u64 {
        let mut steps = if self.pending_steps > 0 {
            self.pending_steps
                .min(STEP_N_CHUNK.max(self.steps_per_frame))
        } else if self.playing {
            self.allowed.unwrap_or(self.steps_per_frame)
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

    #[test]
    fn a_speed_limit_takes_the_steps_its_simulated_seconds_owe() {
        let mut schedule = Schedule {
            playing: true,
            steps_per_frame: 7,
            ..Schedule::default()
        };
        let start = Instant::now();
        let at = |ms: u64| start + Duration::from_millis(ms);
        // 2 simulated seconds per wall second at 0.01 s a step: 200 steps a second.
        schedule.set_speed(Some(2.0));
        schedule.pace(at(0), Some(0.01), 1000);
        assert_eq!(
            schedule.steps_for_frame(0, None),
            0,
            "Play owes nothing yet"
        );
        let mut taken = 0;
        for frame in 1..=60 {
            schedule.pace(at(frame * 16), Some(0.01), 1000);
            let steps = schedule.steps_for_frame(taken, None);
            schedule.paced_took(steps);
            taken += steps;
        }
        // 0.96 s of wall time: 192 steps, the fraction carried to the next frame.
        assert_eq!(taken, 192);
        // A long stall owes at most a quarter of a second, and the cap holds.
        schedule.pace(at(60 * 16 + 5000), Some(0.01), 1000);
        assert_eq!(schedule.steps_for_frame(taken, None), 50);
        schedule.pace(at(60 * 16 + 10_000), Some(0.01), 20);
        assert_eq!(schedule.steps_for_frame(taken, None), 20);
        // The plate (steps without time), a "step N" request, or no speed: as set.
        schedule.pace(at(20_000), None, 1000);
        assert_eq!(schedule.steps_for_frame(taken, None), 7);
        schedule.set_speed(None);
        schedule.pace(at(21_000), Some(0.01), 1000);
        assert_eq!(schedule.steps_for_frame(taken, None), 7);
        schedule.set_speed(Some(f64::NAN));
        schedule.pace(at(22_000), Some(0.01), 1000);
        schedule.pace(at(23_000), Some(0.01), 1000);
        assert_eq!(
            schedule.steps_for_frame(taken, None),
            7,
            "as fast as it goes"
        );
    }

    #[test]
    fn a_slow_speed_takes_a_step_once_it_is_owed() {
        let mut schedule = Schedule {
            playing: true,
            ..Schedule::default()
        };
        let start = Instant::now();
        // One step of 10 s at 1 simulated second per wall second: one step in 10 s.
        schedule.set_speed(Some(1.0));
        let mut taken = 0;
        for frame in 0..=700 {
            schedule.pace(start + Duration::from_millis(frame * 16), Some(10.0), 1000);
            let steps = schedule.steps_for_frame(taken, None);
            schedule.paced_took(steps);
            taken += steps;
        }
        assert_eq!(taken, 1, "11.2 s of wall time");
    }
}
