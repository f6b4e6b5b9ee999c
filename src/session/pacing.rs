//! The automatic steps-per-frame controller: as many steps per frame as keep stepping at a
//! fixed share of each frame, without letting the animation drop below 10 frames per second.

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

/// Frames per second the overlapped mode keeps when the GPU is the slower side.
pub const OVERLAPPED_FRAME_RATE: f64 = 80.0;

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
    if record.steps == 0 || record.seconds <= 0.0 {
        return current;
    }
    let per_step = record.seconds / record.steps as f64;
    let target = (1.0 / OVERLAPPED_FRAME_RATE)
        .max(host.as_secs_f64() * OVERLAP_MARGIN)
        .min(AUTO_MAX_FRAME_SECONDS);
    let wanted = (target / per_step).round().max(1.0);
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

    #[test]
    fn overlapped_steps_cover_the_host_or_keep_the_frame_rate() {
        let size = GridSize::square(100).unwrap();
        // 1000 steps of 10 us: 10 ms of GPU work per frame.
        let record = TimingRecord::diffusion(0, 1000, "cuda", "test", size, 0.010);
        // A quick host (2 ms): frames at 80/s, 12.5 ms of steps = 1250; a quarter of the way.
        assert_eq!(
            overlapped_steps_per_frame(1000, &record, Duration::from_millis(2), MAX),
            1063
        );
        // A slow host (20 ms): 22 ms of steps = 2200 keep the GPU busy.
        assert_eq!(
            overlapped_steps_per_frame(1000, &record, Duration::from_millis(20), MAX),
            1300
        );
        // Already there: stays.
        let record = TimingRecord::diffusion(0, 1250, "cuda", "test", size, 0.0125);
        assert_eq!(
            overlapped_steps_per_frame(1250, &record, Duration::from_millis(2), MAX),
            1250
        );
        // Never more than 10 frames per second's worth.
        let record = TimingRecord::diffusion(0, 10, "cuda", "test", size, 0.010);
        assert_eq!(
            overlapped_steps_per_frame(10, &record, Duration::from_secs(1), MAX),
            33
        );
    }
}
