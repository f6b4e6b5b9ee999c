//! The energy budget of a heat problem over simulated time: how much the stored energy changed,
//! what came in through the heaters, the sides and from held cells, and the closing error (the
//! change of stored energy less everything that came in), from the run loop's budget each frame carries.
//! Also the simulated time as the status line shows it.

use std::collections::VecDeque;

use eframe::egui::{self, Color32};
use egui_plot::{Line, Plot, PlotPoints};

use heatlab_engine::problem::{EnergyExchange, Side};
use heatlab_engine::session::diffusion::ProblemFrame;
use heatlab_engine::session::run::EnergyWindow;

/// One line of the budget's plot.
struct Series {
    name: String,
    color: Color32,
    look: Look,
    value: Box<dyn Fn(&BudgetPoint) -> f64>,
}

/// How a line of the budget's plot is drawn.
enum Look {
    Plain,
    /// The stored change: what the others explain.
    Wide,
    /// The closing error: what they do not.
    Dashed,
}

/// Points kept (the oldest go first).
pub const BUDGET_POINTS: usize = 20_000;

/// The budget since it started, at one simulated time (J per metre of depth).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct BudgetPoint {
    /// Simulated seconds.
    pub seconds: f64,
    /// The step the budget starts at.
    pub from_step: u64,
    /// Simulated seconds where it starts.
    pub from_seconds: f64,
    /// The whole budget so far: the stored energy at its start and now, what came in, and how
    /// the balance closes.
    pub window: EnergyWindow,
}

impl BudgetPoint {
    /// The change of stored energy since the budget started, J/m.
    pub fn stored_change(&self) -> f64 {
        self.window.stored_after - self.window.stored_before
    }
}

/// The energy budget over time: the run loop's budget as the frames carry it (the figures
/// `heatlab run` records), one point per frame that booked a window.
#[derive(Debug, Clone, Default)]
pub struct EnergyBudget {
    points: VecDeque<BudgetPoint>,
    /// Times the budget started over (an edit, a reset, a new field).
    restarts: u64,
}

impl EnergyBudget {
    /// Takes a frame's budget. A frame without one adds nothing; a budget that started
    /// elsewhere than the points shown (the problem was edited, the field reset or replaced)
    /// starts the plot over.
    pub fn record(&mut self, frame: &ProblemFrame) {
        let Some(budget) = frame.budget else {
            return;
        };
        let continues = self.points.back().is_some_and(|last| {
            last.from_step == budget.from_step
                && last.from_seconds == budget.from_seconds
                && frame.simulated_seconds > last.seconds
        });
        if !continues {
            if !self.points.is_empty() {
                self.restarts += 1;
            }
            self.points.clear();
        }
        if self.points.len() == BUDGET_POINTS {
            self.points.pop_front();
        }
        self.points.push_back(BudgetPoint {
            seconds: frame.simulated_seconds,
            from_step: budget.from_step,
            from_seconds: budget.from_seconds,
            window: budget.window,
        });
    }

    /// Forgets everything (a new field or problem).
    pub fn clear(&mut self) {
        self.points.clear();
    }

    /// The budget over time, oldest first.
    pub fn points(&self) -> impl Iterator<Item = &BudgetPoint> {
        self.points.iter()
    }

    /// The budget now.
    pub fn latest(&self) -> Option<&BudgetPoint> {
        self.points.back()
    }

    /// Times the budget started over.
    pub fn restarts(&self) -> u64 {
        self.restarts
    }

    /// The caption and the plot.
    pub fn ui(&self, ui: &mut egui::Ui, height: f32) {
        ui.horizontal_wrapped(|ui| {
            ui.strong("Energy budget");
            match self.latest() {
                Some(point) => {
                    let b = &point.window;
                    ui.label(format!(
                        "over {}: stored {:+.4e} J/m · sources {:+.4e} · sides {:+.4e} · held \
                         {:+.4e}",
                        seconds_text(point.seconds - self.start_seconds()),
                        point.stored_change(),
                        b.exchange.sources,
                        b.exchange.sides.iter().sum::<f64>(),
                        b.exchange.held,
                    ));
                    let summary = b.closing_summary();
                    if b.within_round_off {
                        ui.label(summary);
                    } else {
                        ui.colored_label(ui.visuals().warn_fg_color, summary);
                    }
                }
                None => {
                    ui.weak("no energy booked yet: the budget starts with the next frames");
                }
            }
        });
        let shown = self.series_shown();
        // A key above the plot instead of a legend over it: the budget's lines start at the
        // left and rise or fall, so no corner of the plot is free for long.
        ui.horizontal_wrapped(|ui| {
            for series in &shown {
                ui.colored_label(series.color, format!("— {}", series.name));
            }
        });
        // The caption wraps in a narrow column: the plot takes what is left.
        let height = ui.available_height().min(height - 24.0).max(60.0);
        Plot::new("energy_plot")
            .height(height)
            .y_axis_min_width(56.0)
            .x_axis_label("simulated time (s)")
            .y_axis_label("J/m")
            .show(ui, |plot| {
                for series in shown {
                    let points: PlotPoints<'_> = self
                        .points
                        .iter()
                        .map(|p| [p.seconds, (series.value)(p)])
                        .collect::<Vec<_>>()
                        .into();
                    let line = Line::new(series.name, points).color(series.color);
                    plot.line(match series.look {
                        Look::Plain => line,
                        Look::Wide => line.width(2.0),
                        Look::Dashed => line.style(egui_plot::LineStyle::dashed_loose()),
                    });
                }
            });
    }

    /// The budget's lines that carry something: the stored change, what came in through the
    /// sources, each side used and held cells, and the closing error.
    fn series_shown(&self) -> Vec<Series> {
        let mut shown = vec![
            Series {
                name: "stored change".into(),
                color: Color32::from_rgb(240, 240, 240),
                look: Look::Wide,
                value: Box::new(BudgetPoint::stored_change),
            },
            Series {
                name: "in through sources".into(),
                color: Color32::from_rgb(255, 140, 0),
                look: Look::Plain,
                value: Box::new(|p| p.window.exchange.sources),
            },
        ];
        for side in Side::ALL {
            if self.side_is_used(side) {
                shown.push(Series {
                    name: format!("in through the {side} side"),
                    color: super::sides::side_color(side),
                    look: Look::Plain,
                    value: Box::new(move |p| p.window.exchange.side(side)),
                });
            }
        }
        if self.points.iter().any(|p| p.window.exchange.held != 0.0) {
            shown.push(Series {
                name: "in from held cells".into(),
                color: Color32::from_rgb(200, 80, 200),
                look: Look::Plain,
                value: Box::new(|p| p.window.exchange.held),
            });
        }
        shown.push(Series {
            name: "closing error".into(),
            color: Color32::from_rgb(255, 60, 60),
            look: Look::Dashed,
            value: Box::new(|p| p.window.closing_error),
        });
        shown
    }

    fn start_seconds(&self) -> f64 {
        self.points.front().map_or(0.0, |p| p.from_seconds)
    }

    fn side_is_used(&self, side: Side) -> bool {
        self.points
            .iter()
            .any(|p| EnergyExchange::side(&p.window.exchange, side) != 0.0)
    }
}

/// A duration in simulated seconds for people: µs, ms, s, min or h as it fits (the engine's
/// one rule, which video frames' counters follow too).
pub fn seconds_text(seconds: f64) -> String {
    heatlab_engine::render::label::simulated_time(seconds)
}

/// The status line's simulated time and time step.
pub fn simulated_time_text(frame: &ProblemFrame) -> String {
    format!(
        "simulated {} · dt {}",
        seconds_text(frame.simulated_seconds),
        seconds_text(frame.dt)
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use heatlab_engine::problem::EnergyBalance;
    use heatlab_engine::session::run::EnergyBudget as Booked;

    fn frame(seconds: f64, budget: Option<(u64, f64, EnergyBalance)>) -> ProblemFrame {
        let budget = budget.map(|(from_step, from_seconds, balance)| Booked {
            from_step,
            from_seconds,
            window: EnergyWindow::new(from_step, 0, seconds, &balance),
        });
        ProblemFrame {
            simulated_seconds: seconds,
            dt: 0.5,
            duration_seconds: None,
            change_rate: None,
            steady_tolerance: None,
            energy: budget.map(|b| b.window.balance()),
            budget,
            heaters_on: Vec::new(),
            switches: Vec::new(),
        }
    }

    fn balance(before: f64, after: f64, sources: f64, sides: [f64; 4]) -> EnergyBalance {
        let exchange = EnergyExchange {
            sources,
            sides,
            held: 0.0,
        };
        EnergyBalance::new(before, after, exchange, 0.0)
    }

    #[test]
    fn the_plot_follows_the_run_loops_budget() {
        let mut budget = EnergyBudget::default();
        budget.record(&frame(1.0, None));
        assert!(
            budget.latest().is_none(),
            "a frame without a budget adds nothing"
        );
        budget.record(&frame(
            1.0,
            Some((0, 0.0, balance(100.0, 130.0, 40.0, [-10.0; 4]))),
        ));
        budget.record(&frame(
            2.0,
            Some((0, 0.0, balance(100.0, 150.0, 80.0, [-10.0; 4]))),
        ));
        let latest = budget.latest().unwrap();
        assert_eq!((latest.seconds, latest.stored_change()), (2.0, 50.0));
        assert_eq!(budget.points().count(), 2);
        assert_eq!(budget.start_seconds(), 0.0);
        assert_eq!(budget.restarts(), 0);
    }

    #[test]
    fn a_budget_that_started_elsewhere_starts_the_plot_over() {
        let mut budget = EnergyBudget::default();
        budget.record(&frame(
            1.0,
            Some((0, 0.0, balance(100.0, 130.0, 30.0, [0.0; 4]))),
        ));
        // An edit at step 8 (4 s) started a new budget.
        budget.record(&frame(
            5.0,
            Some((8, 4.0, balance(200.0, 210.0, 10.0, [0.0; 4]))),
        ));
        assert_eq!(budget.points().count(), 1);
        assert_eq!(budget.start_seconds(), 4.0);
        assert_eq!(budget.restarts(), 1);
        // A reset: back to step 0, time back to the start.
        budget.record(&frame(
            0.5,
            Some((0, 0.0, balance(100.0, 105.0, 5.0, [0.0; 4]))),
        ));
        assert_eq!(budget.points().count(), 1);
        assert_eq!(budget.latest().unwrap().seconds, 0.5);
        assert_eq!(budget.restarts(), 2);
    }

    #[test]
    fn times_read_in_fitting_units() {
        assert_eq!(seconds_text(0.0), "0 s");
        assert_eq!(seconds_text(2.5e-5), "25.000 µs");
        assert_eq!(seconds_text(0.0123), "12.300 ms");
        assert_eq!(seconds_text(12.0), "12.000 s");
        assert_eq!(seconds_text(900.0), "15.00 min");
        assert_eq!(seconds_text(36_000.0), "10.00 h");
        assert_eq!(
            simulated_time_text(&frame(12.0, None)),
            "simulated 12.000 s · dt 500.000 ms"
        );
    }
}
