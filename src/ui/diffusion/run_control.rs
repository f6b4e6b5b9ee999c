//! A heat problem's run in physical time: how far it is toward the scenario's duration, the
//! simulated seconds per wall second it reaches, and the speed it may be limited to.

use std::collections::VecDeque;
use std::time::{Duration, Instant};

use eframe::egui;

use heatlab_engine::session::diffusion::ProblemFrame;

use super::command::DiffusionCommand;
use super::energy::seconds_text;
use crate::settings::ProblemSpeed;

/// The wall time the reached speed is measured over.
const RATE_WINDOW: Duration = Duration::from_secs(2);

/// The slowest and fastest speed a user can ask for, simulated seconds per wall second.
const SPEED_RANGE: std::ops::RangeInclusive<f64> = 1e-9..=1e12;

/// The simulated seconds per wall second a run reaches, from the frames' simulated times.
#[derive(Debug, Clone, Default)]
pub struct SimulatedRate {
    seen: VecDeque<(Instant, f64)>,
}

impl SimulatedRate {
    /// A frame showing `seconds` of simulated time at `now`. Time going back (a reset, a new
    /// problem) starts over.
    pub fn record(&mut self, now: Instant, seconds: f64) {
        if self.seen.back().is_some_and(|&(_, last)| seconds < last) {
            self.seen.clear();
        }
        self.seen.push_back((now, seconds));
        while self
            .seen
            .front()
            .is_some_and(|&(at, _)| now.duration_since(at) > RATE_WINDOW)
        {
            self.seen.pop_front();
        }
    }

    /// Forgets what was seen (paused: the rate is of a run under way).
    pub fn clear(&mut self) {
        self.seen.clear();
    }

    /// Simulated seconds per wall second over the last frames, once they span some time.
    pub fn rate(&self) -> Option<f64> {
        let (&(first_at, first), &(last_at, last)) = (self.seen.front()?, self.seen.back()?);
        let wall = last_at.duration_since(first_at).as_secs_f64();
        (wall >= 0.25).then(|| (last - first) / wall)
    }
}

/// The progress toward the scenario's duration and the speed row, for a problem's frame.
pub fn ui(
    ui: &mut egui::Ui,
    frame: &ProblemFrame,
    speed: ProblemSpeed,
    reached: Option<f64>,
    commands: &mut Vec<DiffusionCommand>,
) {
    if let Some(duration) = frame.duration_seconds.filter(|d| *d > 0.0) {
        let done = frame.simulated_seconds / duration;
        // The run stops at the first whole step at or past the duration.
        let reached = frame.simulated_seconds < duration + frame.dt;
        let text = if reached {
            format!(
                "{} of {} simulated ({:.0}%)",
                seconds_text(frame.simulated_seconds),
                seconds_text(duration),
                100.0 * done.min(1.0)
            )
        } else {
            format!(
                "{} simulated, past the scenario's {} (Play goes on)",
                seconds_text(frame.simulated_seconds),
                seconds_text(duration)
            )
        };
        ui.add(egui::ProgressBar::new(done.min(1.0) as f32).text(text))
            .on_hover_text("Play pauses at the scenario's duration once; Play again goes on");
    }
    ui.horizontal_wrapped(|ui| {
        let mut asked = speed;
        ui.label("speed");
        ui.checkbox(&mut asked.limited, "at most").on_hover_text(
            "limit the run to this many simulated seconds per wall second; off: as fast as \
                 the device goes",
        );
        // A drag moves the speed by about 1% a pixel, at any magnitude.
        let drag_speed = 0.01 * asked.seconds_per_second;
        ui.add_enabled(
            asked.limited,
            egui::DragValue::new(&mut asked.seconds_per_second)
                .range(SPEED_RANGE)
                .speed(drag_speed)
                .max_decimals(9)
                .suffix(" s/s"),
        )
        .on_hover_text("simulated seconds per wall second");
        if asked != speed {
            commands.push(DiffusionCommand::SetSpeed(asked));
        }
        if let Some(rate) = reached {
            ui.weak(format!("running at {}/s", seconds_text(rate)))
                .on_hover_text("simulated time per wall second over the last two seconds");
        }
    });
}

/// Where a problem's other controls are.
pub fn problem_note(ui: &mut egui::Ui) {
    ui.weak(
        "the problem's sides are set above the views; its time step follows from its materials \
         and cell size",
    );
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_rate_is_simulated_time_over_wall_time_and_starts_over_when_time_goes_back() {
        let mut rate = SimulatedRate::default();
        let start = Instant::now();
        rate.record(start, 10.0);
        assert_eq!(rate.rate(), None, "one frame spans no time");
        rate.record(start + Duration::from_millis(500), 15.0);
        rate.record(start + Duration::from_millis(1000), 20.0);
        assert_eq!(rate.rate(), Some(10.0));
        // Older than the window: dropped.
        rate.record(start + Duration::from_millis(3000), 40.0);
        assert_eq!(rate.rate(), Some(10.0));
        rate.record(start + Duration::from_millis(3100), 0.0);
        assert_eq!(rate.rate(), None, "a reset starts over");
    }
}
