//! How many steps to take at a time, from how fast the last ones went: the app's automatic
//! steps per frame (stepping at a fixed share of each frame, without letting the animation drop
//! below 10 frames per second, or covering the host's work while stepping overlaps drawing) and
//! `heatlab run`'s [`Pacer`] (advance calls of about a quarter second, so that a stop asked for
//! comes soon). Both measure the speed the one way, [`seconds_per_step`].

use std::time::Duration;

use crate::measure::TimingRecord;

/// Most steps per frame, set by hand or automatically.
pub const MAX_STEPS_PER_FRAME: u64 = 10_000;

/// Share of a frame's time that the automatic steps-per-frame gives to stepping.
pub const AUTO_STEPPING_SHARE: f64 = 0.75;

/// Longest frame the automatic steps-per-frame aims for (10 frames per second).
pub const AUTO_MAX_FRAME_SECONDS: f64 = 0.1;

/// The next steps per frame in the automatic mode: enough steps that stepping takes
/// [`AUTO_STEPPING_SHARE`] of the frame (within [`AUTO_MAX_FRAME_SECONDS`]), given what the
/// display took this frame, moving a quarter of the way there each frame so that one slow
/// frame does not swing it. At most `max`.
pub fn auto_steps_per_frame(current: u64, record: &TimingRecord, wall: Duration, max: u64) -> u64 {
    let Some(per_step) = seconds_per_step(record.steps, record.seconds) else {
        return current;
    };
    let stepping = record.seconds;
    let display = (wall.as_secs_f64() - stepping).max(0.0);
    let share = (AUTO_STEPPING_SHARE / (1.0 - AUTO_STEPPING_SHARE) * display / per_step).ceil();
    // ... but never so many that the animation drops below 10 frames per second.
    let smooth = ((AUTO_MAX_FRAME_SECONDS - display) / per_step)
        .floor()
        .max(1.0);
    let wanted = share.min(smooth);
    let next = (current as f64 * 0.75 + wanted * 0.25).round();
    (next as u64).clamp(1, max.max(1))
}

/// Frames per second the overlapped mode keeps when the GPU is the slower side: above 60, and
/// no more, since each frame costs the GPU a gap (the previews and statistics are read between
/// two frames' steps): at 80 frames/s the app stepped at 90% of the bench's rate on the H200
/// (2000² heat sink), at 64 the gap is a smaller share.
pub const OVERLAPPED_FRAME_RATE: f64 = 64.0;

/// How much longer than the host's own work per frame the GPU's steps per frame are made in
/// the overlapped mode, so that the GPU does not wait when the host's time varies.
const OVERLAP_MARGIN: f64 = 1.1;

/// The next steps per frame in the automatic mode while stepping overlaps drawing (the GPU
/// steps the next frame while the host draws this one): the GPU's steps per frame cover the
/// host's own time per frame, `host` (what it does besides waiting for the GPU), with a
/// margin, so that the GPU never waits; and while the host is quicker, frames come
/// [`OVERLAPPED_FRAME_RATE`] times a second. A quarter of the way there each frame, at most
/// `max`, never past [`AUTO_MAX_FRAME_SECONDS`] of steps.
pub fn overlapped_steps_per_frame(
    current: u64,
    record: &TimingRecord,
    host: Duration,
    max: u64,
) -> u64 {
    let Some(per_step) = seconds_per_step(record.steps, record.seconds) else {
        return current;
    };
    let target = (1.0 / OVERLAPPED_FRAME_RATE)
        .max(host.as_secs_f64() * OVERLAP_MARGIN)
        .min(AUTO_MAX_FRAME_SECONDS);
    let wanted = (target / per_step).round().max(1.0);
    let next = (current as f64 * 0.75 + wanted * 0.25).round();
    (next as u64).clamp(1, max.max(1))
}

/// Seconds per step of `steps` steps that took `seconds`; `None` when nothing was measured.
pub fn seconds_per_step(steps: u64, seconds: f64) -> Option<f64> {
    (steps > 0 && seconds > 0.0).then(|| seconds / steps as f64)
}

/// Sizes the advance calls of a run from the speed of the last one, so that each takes about
/// `piece_seconds`.
#[derive(Debug)]
pub struct Pacer {
    piece_seconds: f64,
    seconds_per_step: Option<f64>,
}

impl Pacer {
    /// A pacer aiming at calls of `piece_seconds`, not knowing the speed yet.
    pub fn new(piece_seconds: f64) -> Self {
        Self {
            piece_seconds,
            seconds_per_step: None,
        }
    }

    /// Steps for the next call: one step until the speed is known, then about `piece_seconds`
    /// worth, at most `remaining` (all of them when steps take no measurable time).
    pub fn next_piece(&self, remaining: u64) -> u64 {
        match self.seconds_per_step {
            Some(per_step) if per_step > 0.0 => {
                ((self.piece_seconds / per_step) as u64).clamp(1, remaining.max(1))
            }
            Some(_) => remaining,
            None => remaining.min(1),
        }
    }

    /// Learns the speed from a call of `steps` steps that took `elapsed`.
    pub fn learn(&mut self, steps: u64, elapsed: Duration) {
        if steps > 0 {
            // A call too quick to measure: the rest go in one piece.
            self.seconds_per_step =
                Some(seconds_per_step(steps, elapsed.as_secs_f64()).unwrap_or(0.0));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::grid::GridSize;

    const MAX: u64 = 10_000;

    #[test]
    fn automatic_steps_move_towards_three_quarters_stepping() {
        let size = GridSize::square(100).unwrap();
        // 10 steps took 10 ms, drawing 30 ms. Stepping 3/4 of the frame would be 90 steps,
        // but 10 frames/s leave 70 ms: 70 steps. A quarter of the way from 10: 25.
        let record = TimingRecord::diffusion(0, 10, "cpu", "test", size, 0.010);
        assert_eq!(
            auto_steps_per_frame(10, &record, Duration::from_millis(40), MAX),
            25
        );
        // Drawing takes 80 ms: only 20 ms are left for steps within 10 frames per second.
        assert_eq!(
            auto_steps_per_frame(10, &record, Duration::from_millis(90), MAX),
            13
        );
        // Already there (60 ms of steps, 20 ms drawing): stays.
        let record = TimingRecord::diffusion(0, 60, "cpu", "test", size, 0.060);
        assert_eq!(
            auto_steps_per_frame(60, &record, Duration::from_millis(80), MAX),
            60
        );
    }

    #[test]
    fn overlapped_steps_cover_the_host_or_keep_the_frame_rate() {
        let size = GridSize::square(100).unwrap();
        // 1000 steps of 10 us: 10 ms of GPU work per frame.
        let record = TimingRecord::diffusion(0, 1000, "cuda", "test", size, 0.010);
        // A quick host (2 ms): frames at 64/s, 15.6 ms of steps = 1563; a quarter of the way.
        assert_eq!(
            overlapped_steps_per_frame(1000, &record, Duration::from_millis(2), MAX),
            1141
        );
        // A slow host (20 ms): 22 ms of steps = 2200 keep the GPU busy.
        assert_eq!(
            overlapped_steps_per_frame(1000, &record, Duration::from_millis(20), MAX),
            1300
        );
        // Already there: stays.
        let record = TimingRecord::diffusion(0, 1563, "cuda", "test", size, 0.01563);
        assert_eq!(
            overlapped_steps_per_frame(1563, &record, Duration::from_millis(2), MAX),
            1563
        );
        // Never more than 10 frames per second's worth.
        let record = TimingRecord::diffusion(0, 10, "cuda", "test", size, 0.010);
        assert_eq!(
            overlapped_steps_per_frame(10, &record, Duration::from_secs(1), MAX),
            33
        );
    }

    #[test]
    fn pieces_aim_at_a_quarter_second() {
        let mut pacer = Pacer::new(0.25);
        assert_eq!(pacer.next_piece(1000), 1);
        pacer.learn(1, Duration::from_millis(10));
        assert_eq!(pacer.next_piece(1000), 25);
        pacer.learn(25, Duration::from_micros(250));
        assert_eq!(pacer.next_piece(1000), 1000);
    }
}
