//! A heat problem's run in physical time: its duration (typed, or the scenario's) and how far
//! it is toward it, the stop at the steady state, the simulated seconds per wall second it
//! reaches, and the speed it may be limited to.

use std::collections::VecDeque;
use std::time::{Duration, Instant};

use eframe::egui;

use heatlab_engine::session::diffusion::ProblemFrame;

use heatlab_engine::render::label::parse_simulated_time;

use super::super::notice::ERROR;
use super::command::DiffusionCommand;
use super::energy::seconds_text;
use crate::settings::{ProblemSpeed, Settings, SteadyStop};

/// The wall time the reached speed is measured over.
const RATE_WINDOW: Duration = Duration::from_secs(2);

/// The slowest and fastest speed a user can ask for, simulated seconds per wall second.
const SPEED_RANGE: std::ops::RangeInclusive<f64> = 1e-9..=1e12;

/// The tolerances of the steady stop a user can ask for, K/s.
const TOLERANCE_RANGE: std::ops::RangeInclusive<f64> = 1e-12..=1e6;

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

/// The run's controls that keep what is typed between frames: the duration as text.
#[derive(Debug, Clone, Default)]
pub struct RunControl {
    /// The duration as typed.
    duration_text: String,
    /// The duration the text was last filled from (`None`: not yet).
    shown_duration: Option<Option<f64>>,
    /// Why the typed duration was refused (the duration in force stays).
    duration_error: Option<String>,
    /// Whether the duration's field had the keyboard at the last frame (its text is then the
    /// user's, not refilled).
    editing: bool,
}

impl RunControl {
    /// The duration, the progress toward it, the steady stop and the speed, once a frame of
    /// the problem came; and where the problem's other controls are.
    pub fn ui(
        &mut self,
        ui: &mut egui::Ui,
        frame: Option<&ProblemFrame>,
        settings: &Settings,
        reached: Option<f64>,
        commands: &mut Vec<DiffusionCommand>,
    ) {
        if let Some(frame) = frame {
            self.duration_ui(ui, frame, commands);
            progress_ui(ui, frame);
            steady_ui(ui, frame, settings.steady_stop, commands);
            speed_ui(ui, settings.speed, reached, commands);
        }
        ui.weak(
            "the problem's sides are set above the views; its time step follows from its \
             materials and cell size",
        );
    }

    /// "run for [30.00 min]": applied when the field is left (Enter or a click elsewhere) and
    /// the text reads as a time; empty: no end.
    fn duration_ui(
        &mut self,
        ui: &mut egui::Ui,
        frame: &ProblemFrame,
        commands: &mut Vec<DiffusionCommand>,
    ) {
        if !self.editing && self.shown_duration != Some(frame.duration_seconds) {
            self.duration_text = frame.duration_seconds.map(seconds_text).unwrap_or_default();
            self.shown_duration = Some(frame.duration_seconds);
            self.duration_error = None;
        }
        let hover = "simulated time from the initial field at which Play pauses (once: Play \
                     again goes on), such as 30 min, 2 h or 90 s; empty: no end";
        let (committed, editing) = duration_field(ui, &mut self.duration_text, hover);
        self.editing = editing;
        if let Some(asked) = committed {
            self.commit_duration(asked, frame.duration_seconds, commands);
        }
        if let Some(error) = &self.duration_error {
            ui.colored_label(ERROR, format!("duration not changed: {error}"));
        }
    }

    /// Applies the typed duration when it reads, or says why not.
    fn commit_duration(
        &mut self,
        asked: Result<Option<f64>, String>,
        current: Option<f64>,
        commands: &mut Vec<DiffusionCommand>,
    ) {
        match asked {
            Ok(seconds) => {
                self.duration_error = None;
                if seconds != current {
                    commands.push(DiffusionCommand::SetDuration(seconds));
                }
                // Written back as the app writes times once the run reports it.
                self.shown_duration = None;
            }
            Err(error) => self.duration_error = Some(error),
        }
    }
}

/// The "run for" field, `hover` its hover text: a simulated time typed with its unit (empty:
/// no end). Returns what was committed this frame (Enter or the field left): the seconds, no
/// end, or why the text does not read; and whether the field has the keyboard.
pub fn duration_field(
    ui: &mut egui::Ui,
    text: &mut String,
    hover: &str,
) -> (Option<Result<Option<f64>, String>>, bool) {
    ui.horizontal(|ui| {
        let label = ui.label("run for");
        let response = ui
            .add(
                egui::TextEdit::singleline(text)
                    .desired_width(90.0)
                    .hint_text("no end"),
            )
            .on_hover_text(hover)
            .labelled_by(label.id);
        let committed = response.lost_focus().then(|| {
            let typed = text.trim();
            match typed.is_empty() {
                true => Ok(None),
                false => parse_simulated_time(typed)
                    .map(Some)
                    .map_err(|e| e.to_string()),
            }
        });
        (committed, response.has_focus())
    })
    .inner
}

/// The bar toward the duration.
fn progress_ui(ui: &mut egui::Ui, frame: &ProblemFrame) {
    let Some(duration) = frame.duration_seconds.filter(|d| *d > 0.0) else {
        return;
    };
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
            "{} simulated, past the duration of {} (Play goes on)",
            seconds_text(frame.simulated_seconds),
            seconds_text(duration)
        )
    };
    ui.add(egui::ProgressBar::new(done.min(1.0) as f32).text(text))
        .on_hover_text("Play pauses at the duration once; Play again goes on");
}

/// "stop at the steady state: |dT/dt| under [1e-3] K/s", and the rate now.
fn steady_ui(
    ui: &mut egui::Ui,
    frame: &ProblemFrame,
    stop: SteadyStop,
    commands: &mut Vec<DiffusionCommand>,
) {
    let mut asked = stop;
    let drag_speed = 0.01 * stop.tolerance;
    ui.horizontal_wrapped(|ui| {
        ui.checkbox(&mut asked.on, "stop at the steady state: |dT/dt| under")
            .on_hover_text(
                "pause once the largest change of temperature over the field, per simulated \
                 second, falls under the tolerance (measured a few times a second between two \
                 copies of the field)",
            );
        ui.add_enabled(
            asked.on,
            egui::DragValue::new(&mut asked.tolerance)
                .range(TOLERANCE_RANGE)
                .speed(drag_speed)
                .custom_formatter(|value, _| format!("{value:.1e}"))
                .suffix(" K/s"),
        );
    });
    if let Some(rate) = frame.change_rate.filter(|_| stop.on) {
        let text = format!("largest |dT/dt| now: {rate:.2e} K/s");
        ui.weak(text);
    }
    if asked != stop {
        commands.push(DiffusionCommand::SetSteadyStop(asked));
    }
}

/// The speed limit and the speed reached.
fn speed_ui(
    ui: &mut egui::Ui,
    speed: ProblemSpeed,
    reached: Option<f64>,
    commands: &mut Vec<DiffusionCommand>,
) {
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
