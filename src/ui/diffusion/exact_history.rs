//! The exact answer's error over simulated time, with the window where the answer holds
//! marked: past an unbounded body's window, or before a steady answer's, the error says
//! nothing of the simulation.

use std::collections::VecDeque;

use eframe::egui::{self, Color32};
use egui_plot::{Line, Plot, PlotPoints, VLine};

use heatlab_engine::scenario::exact::ExactWindow;

use super::energy::seconds_text;

/// Points kept (the oldest go first).
const HISTORY_POINTS: usize = 20_000;

/// The colour of the window's edge.
const EDGE: Color32 = Color32::from_rgb(120, 200, 255);

/// The error along the line at each simulated time, and where the answer holds.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ExactHistory {
    /// `[simulated seconds, error in % of the span]`, in time order.
    points: VecDeque<[f64; 2]>,
    window: Option<ExactWindow>,
}

impl ExactHistory {
    /// The error `error` (a fraction of the span) at `seconds` under `window`. Time going back
    /// (a reset) or another window (another problem) starts over; a time already seen adds
    /// nothing.
    pub fn record(&mut self, seconds: f64, error: f64, window: ExactWindow) {
        let last = self.points.back().map(|p| p[0]);
        if self.window != Some(window) || last.is_some_and(|t| seconds < t) {
            self.points.clear();
            self.window = Some(window);
        }
        if last.is_some_and(|t| seconds == t) {
            return;
        }
        if self.points.len() == HISTORY_POINTS {
            self.points.pop_front();
        }
        self.points.push_back([seconds, 100.0 * error]);
    }

    /// Forgets everything (no answer, another line).
    pub fn clear(&mut self) {
        *self = Self::default();
    }

    /// The points recorded, oldest first.
    pub fn points(&self) -> impl Iterator<Item = &[f64; 2]> {
        self.points.iter()
    }

    /// Whether there is a history to plot.
    pub fn is_plotted(&self) -> bool {
        self.points.len() >= 2
    }

    /// Where the answer holds, for people.
    pub fn window_text(window: ExactWindow) -> String {
        match window {
            ExactWindow::Always => "the answer holds at every time".into(),
            ExactWindow::Until(end) => format!(
                "the answer holds until {}: the far side feels the change after that",
                seconds_text(end)
            ),
            ExactWindow::OnceSteady(start) => format!(
                "a steady answer: it holds from about {} on",
                seconds_text(start)
            ),
        }
    }

    /// The plot, `height` points tall.
    pub fn ui(&self, ui: &mut egui::Ui, height: f32) {
        let Some(window) = self.window else {
            return;
        };
        let points: Vec<[f64; 2]> = self.points.iter().copied().collect();
        Plot::new("exact_error_plot")
            .height(height)
            .y_axis_min_width(44.0)
            .x_axis_label("simulated time (s)")
            .y_axis_label("error, % of span")
            .include_y(0.0)
            .show(ui, |plot| {
                plot.line(Line::new("max |T - T_exact|", PlotPoints::from(points)));
                let edge = match window {
                    ExactWindow::Always => None,
                    ExactWindow::Until(t) => Some(("holds until here", t)),
                    ExactWindow::OnceSteady(t) => Some(("holds from here", t)),
                };
                if let Some((name, t)) = edge {
                    plot.vline(VLine::new(name, t).color(EDGE).width(2.0));
                }
            });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_history_follows_time_and_starts_over_on_a_reset_or_another_answer() {
        let mut history = ExactHistory::default();
        let window = ExactWindow::Until(100.0);
        history.record(1.0, 0.01, window);
        history.record(1.0, 0.02, window);
        history.record(2.0, 0.005, window);
        assert_eq!(
            history.points().copied().collect::<Vec<_>>(),
            vec![[1.0, 1.0], [2.0, 0.5]]
        );
        assert!(history.is_plotted());
        history.record(0.5, 0.0, window);
        assert_eq!(history.points().count(), 1, "a reset starts over");
        history.record(3.0, 0.0, ExactWindow::Always);
        assert_eq!(history.points().count(), 1, "another answer starts over");
        let text = ExactHistory::window_text(window);
        assert!(
            text.contains(&format!("until {}", seconds_text(100.0))),
            "{text}"
        );
    }
}
