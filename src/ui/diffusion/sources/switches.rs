//! When each thermostat's heater was on, from the heaters' states that frames carry, drawn on
//! the probe plot as shaded spans of steps with the setpoint and its deadband.

use std::collections::VecDeque;

use super::super::step_clock::StepClock;
use eframe::egui::Color32;
use egui_plot::{HLine, LineStyle, PlotUi, Span};

use heatlab_engine::problem::HeatProblem;

/// Samples kept per heater (the oldest go first).
const HISTORY_POINTS: usize = 100_000;

/// The shade of a heater's on spans.
const ON_FILL: Color32 = Color32::from_rgba_premultiplied(90, 45, 0, 60);
/// The setpoint's line.
const SETPOINT: Color32 = Color32::from_rgb(255, 140, 0);

/// Whether each kind's heater was on, step by step as frames told it.
#[derive(Debug, Clone, Default)]
pub struct SwitchHistory {
    /// Per kind: (step, on) at each frame where it changed, and the latest frame.
    kinds: Vec<VecDeque<(u64, bool)>>,
    last_step: Option<u64>,
}

impl SwitchHistory {
    /// Takes a frame's heater states at `step`. Steps going back (a reset, a new field) start
    /// the history over.
    pub fn record(&mut self, step: u64, heaters_on: &[bool]) {
        if self.last_step.is_some_and(|last| step < last) {
            self.kinds.clear();
        }
        self.last_step = Some(step);
        if self.kinds.len() < heaters_on.len() {
            self.kinds.resize_with(heaters_on.len(), VecDeque::new);
        }
        for (kind, &on) in heaters_on.iter().enumerate() {
            self.push(kind, step, on);
        }
    }

    /// Takes a switch of kind `kind`'s heater that happened at `step` (between frames, as a
    /// thermostat decided), before the frame that tells it is recorded.
    pub fn record_switch(&mut self, step: u64, kind: usize, on: bool) {
        if self.kinds.len() <= kind {
            self.kinds.resize_with(kind + 1, VecDeque::new);
        }
        self.push(kind, step, on);
    }

    fn push(&mut self, kind: usize, step: u64, on: bool) {
        let Some(series) = self.kinds.get_mut(kind) else {
            return;
        };
        if series.back().is_some_and(|&(last, _)| step < last) {
            return;
        }
        // Only changes are kept, and the last sample, which says how far a span reaches.
        let len = series.len();
        if len >= 2 && series[len - 1].1 == on && series[len - 2].1 == on {
            series[len - 1].0 = step;
            return;
        }
        if series.len() == HISTORY_POINTS {
            series.pop_front();
        }
        series.push_back((step, on));
    }

    /// Forgets everything.
    pub fn clear(&mut self) {
        self.kinds.clear();
        self.last_step = None;
    }

    /// The spans of steps in which kind `kind`'s heater was on (from the frame it was first
    /// seen on to the frame it was first seen off, or the latest frame).
    pub fn on_spans(&self, kind: usize) -> Vec<(u64, u64)> {
        let Some(series) = self.kinds.get(kind) else {
            return Vec::new();
        };
        let mut spans = Vec::new();
        let mut since = None;
        for &(step, on) in series {
            match (on, since) {
                (true, None) => since = Some(step),
                (false, Some(start)) => {
                    spans.push((start, step));
                    since = None;
                }
                _ => {}
            }
        }
        if let (Some(start), Some(&(last, _))) = (since, series.back()) {
            spans.push((start, last));
        }
        spans
    }
}

/// What the probe plot draws for one thermostat.
#[derive(Debug, Clone, PartialEq)]
pub struct ThermostatTrace {
    /// The heater's name.
    pub heater: String,
    /// °C.
    pub setpoint: f64,
    /// K.
    pub deadband: f64,
    /// Steps in which the heater was on.
    pub on_spans: Vec<(u64, u64)>,
}

/// The traces of `problem`'s thermostats from `history`.
pub fn traces(problem: Option<&HeatProblem>, history: &SwitchHistory) -> Vec<ThermostatTrace> {
    let Some(problem) = problem else {
        return Vec::new();
    };
    problem
        .thermostats
        .iter()
        .map(|t| ThermostatTrace {
            heater: problem
                .kinds
                .get(usize::from(t.heater_kind))
                .map_or_else(|| format!("kind {}", t.heater_kind), |k| k.name.clone()),
            setpoint: t.setpoint,
            deadband: t.deadband,
            on_spans: history.on_spans(usize::from(t.heater_kind)),
        })
        .collect()
}

/// Draws the traces on a plot over steps: the heater's on spans shaded, the setpoint and the
/// edges of its deadband as lines.
pub fn draw(plot: &mut PlotUi<'_>, traces: &[ThermostatTrace], clock: &StepClock) {
    for trace in traces {
        let name = format!("{} on", trace.heater);
        for &(from, to) in &trace.on_spans {
            plot.span(
                Span::new(name.clone(), clock.x(from)..=clock.x(to))
                    .fill(ON_FILL)
                    .border_width(0.0),
            );
        }
        let setpoint = format!("{} setpoint", trace.heater);
        plot.hline(HLine::new(setpoint.clone(), trace.setpoint).color(SETPOINT));
        if trace.deadband > 0.0 {
            for edge in [-0.5, 0.5] {
                plot.hline(
                    HLine::new(setpoint.clone(), trace.setpoint + edge * trace.deadband)
                        .color(SETPOINT)
                        .style(LineStyle::dashed_dense()),
                );
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn on_spans_run_from_switching_on_to_switching_off() {
        let mut history = SwitchHistory::default();
        for (step, states) in [
            (0, [false, true]),
            (10, [true, true]),
            (20, [true, true]),
            (30, [false, true]),
            (40, [false, true]),
            (50, [true, true]),
            (60, [true, true]),
        ] {
            history.record(step, &states);
        }
        assert_eq!(history.on_spans(0), vec![(10, 30), (50, 60)]);
        assert_eq!(history.on_spans(1), vec![(0, 60)]);
        assert!(history.on_spans(2).is_empty());
        // Only changes and the latest frame are kept.
        assert_eq!(history.kinds[1].len(), 2);
        // A switch between frames makes the span exact.
        history.record_switch(63, 0, false);
        history.record(70, &[false, true]);
        assert_eq!(history.on_spans(0), vec![(10, 30), (50, 63)]);
        // A reset starts over.
        history.record(5, &[true]);
        assert_eq!(history.on_spans(0), vec![(5, 5)]);
        assert!(history.on_spans(1).is_empty());
    }
}
