//! The automatic steps-per-frame controller: as many steps per frame as keep stepping at a
//! fixed share of each frame, without letting the animation drop below 10 frames per second.

use std::time::Duration;

use crate::measure::TimingRecord;

/// Share of a frame's time that the automatic steps-per-frame gives to stepping.
pub const AUTO_STEPPING_SHARE: f64 = 0.75;

/// Longest frame the automatic steps-per-frame aims for (10 frames per second).
pub const AUTO_MAX_FRAME_SECONDS: f64 = 0.1;

/// The next steps per frame in the automatic mode: enough steps that stepping takes
/// [`AUTO_STEPPING_SHARE`] of the frame (within [`AUTO_MAX_FRAME_SECONDS`]), given what the
/// display took this frame, moving a quarter of the way there each frame so that one slow
/// frame does not swing it. At most `max`.
pub fn auto_steps_per_frame(current: u64, record: &TimingRecord, wall: Duration, max: u64) -> u64 {
    let stepping = record.seconds;
    if record.steps == 0 || stepping <= 0.0 {
        return current;
    }
    let per_step = stepping / record.steps as f64;
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
}
