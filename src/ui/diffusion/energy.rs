//! The energy budget of a heat problem over simulated time: how much the stored energy changed,
//! what came in through the heaters, the sides and from held cells, and the closing error (the
//! change of stored energy less everything that came in), from the balance each frame carries.
//! Also the simulated time as the status line shows it.

use std::collections::VecDeque;

use eframe::egui::{self, Color32};
use egui_plot::{Legend, Line, Plot, PlotPoints};

use heatlab_engine::problem::energy::EnergyBalance;
use heatlab_engine::problem::{EnergyExchange, Side};
use heatlab_engine::session::diffusion::ProblemFrame;

/// Points kept (the oldest go first).
pub const BUDGET_POINTS: usize = 20_000;

/// Two stored energies closer than this fraction of their size are the same energy: a window
/// that starts where the previous one ended continues the budget.
const CONTINUITY: f64 = 1e-9;

/// The budget since it started, at one simulated time (J per metre of depth).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct BudgetPoint {
    /// Simulated seconds.
    pub seconds: f64,
    /// The whole budget so far: the stored energy at its start and now, and what came in.
    pub balance: EnergyBalance,
}

impl BudgetPoint {
    /// The change of stored energy since the budget started, J/m.
    pub fn stored_change(&self) -> f64 {
        self.balance.stored_after - self.balance.stored_before
    }
}

/// The energy budget, summed window by window from the frames' balances.
#[derive(Debug, Clone, Default)]
pub struct EnergyBudget {
    points: VecDeque<BudgetPoint>,
    /// Times the budget started over (an edit, a reset, a missed window).
    restarts: u64,
}

impl EnergyBudget {
    /// Takes a frame's balance. A frame without one adds nothing; a window that does not start
    /// where the previous one ended (the problem was edited, the field reset, or a frame was
    /// not shown) or an earlier simulated time starts the budget over, because what came in
    /// between is not known.
    pub fn record(&mut self, frame: &ProblemFrame) {
        let Some(window) = frame.energy else {
            return;
        };
        let continues = self.points.back().is_some_and(|last| {
            frame.simulated_seconds > last.seconds
                && same_energy(last.balance.stored_after, window.stored_before)
        });
        if !continues {
            if !self.points.is_empty() {
                self.restarts += 1;
            }
            self.points.clear();
        }
        let balance = match self.points.back() {
            Some(last) => {
                let mut exchange = last.balance.exchange;
                exchange.add(&window.exchange);
                EnergyBalance {
                    stored_before: last.balance.stored_before,
                    stored_after: window.stored_after,
                    exchange,
                }
            }
            None => window,
        };
        if self.points.len() == BUDGET_POINTS {
            self.points.pop_front();
        }
        self.points.push_back(BudgetPoint {
            seconds: frame.simulated_seconds,
            balance,
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
                    let b = &point.balance;
                    ui.label(format!(
                        "over {}: stored {:+.4e} J/m · sources {:+.4e} · sides {:+.4e} · held \
                         {:+.4e}",
                        seconds_text(point.seconds - self.start_seconds()),
                        point.stored_change(),
                        b.exchange.sources,
                        b.exchange.sides.iter().sum::<f64>(),
                        b.exchange.held,
                    ));
                    ui.label(format!(
                        "closing error {:.3e} J/m ({:.2e} relative)",
                        b.closing_error(),
                        b.relative_closing_error()
                    ));
                }
                None => {
                    ui.weak("no energy booked yet: the budget starts with the next frames");
                }
            }
        });
        // The caption wraps in a narrow column: the plot takes what is left.
        let height = ui.available_height().min(height - 24.0).max(60.0);
        Plot::new("energy_plot")
            .height(height)
            .y_axis_min_width(56.0)
            .legend(Legend::default())
            .x_axis_label("simulated time (s)")
            .y_axis_label("J/m")
            .show(ui, |plot| {
                let series = |value: &dyn Fn(&BudgetPoint) -> f64| -> PlotPoints<'_> {
                    self.points
                        .iter()
                        .map(|p| [p.seconds, value(p)])
                        .collect::<Vec<_>>()
                        .into()
                };
                plot.line(
                    Line::new("stored change", series(&BudgetPoint::stored_change))
                        .color(Color32::from_rgb(240, 240, 240))
                        .width(2.0),
                );
                plot.line(
                    Line::new(
                        "in through sources",
                        series(&|p| p.balance.exchange.sources),
                    )
                    .color(Color32::from_rgb(255, 140, 0)),
                );
                for side in Side::ALL {
                    if self.side_is_used(side) {
                        plot.line(
                            Line::new(
                                format!("in through the {side} side"),
                                series(&|p| p.balance.exchange.side(side)),
                            )
                            .color(super::sides::side_color(side)),
                        );
                    }
                }
                if self.points.iter().any(|p| p.balance.exchange.held != 0.0) {
                    plot.line(
                        Line::new("in from held cells", series(&|p| p.balance.exchange.held))
                            .color(Color32::from_rgb(200, 80, 200)),
                    );
                }
                plot.line(
                    Line::new("closing error", series(&|p| p.balance.closing_error()))
                        .color(Color32::from_rgb(255, 60, 60))
                        .style(egui_plot::LineStyle::dashed_loose()),
                );
            });
    }

    fn start_seconds(&self) -> f64 {
        // The first window began one frame before the first point; that frame's length is not
        // known, so the budget's span is counted from its first point.
        self.points.front().map_or(0.0, |p| p.seconds)
    }

    fn side_is_used(&self, side: Side) -> bool {
        self.points
            .iter()
            .any(|p| EnergyExchange::side(&p.balance.exchange, side) != 0.0)
    }
}

fn same_energy(a: f64, b: f64) -> bool {
    (a - b).abs() <= CONTINUITY * a.abs().max(b.abs()).max(f64::MIN_POSITIVE)
}

/// A duration in simulated seconds for people: µs, ms, s, min or h as it fits.
pub fn seconds_text(seconds: f64) -> String {
    let magnitude = seconds.abs();
    if magnitude == 0.0 {
        "0 s".into()
    } else if magnitude < 1e-3 {
        format!("{:.3} µs", seconds * 1e6)
    } else if magnitude < 1.0 {
        format!("{:.3} ms", seconds * 1e3)
    } else if magnitude < 600.0 {
        format!("{seconds:.3} s")
    } else if magnitude < 7200.0 {
        format!("{:.2} min", seconds / 60.0)
    } else {
        format!("{:.2} h", seconds / 3600.0)
    }
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

    fn frame(seconds: f64, energy: Option<EnergyBalance>) -> ProblemFrame {
        ProblemFrame {
            simulated_seconds: seconds,
            dt: 0.5,
            energy,
            heaters_on: Vec::new(),
            switches: Vec::new(),
        }
    }

    fn window(before: f64, after: f64, sources: f64, sides: [f64; 4], held: f64) -> EnergyBalance {
        EnergyBalance {
            stored_before: before,
            stored_after: after,
            exchange: EnergyExchange {
                sources,
                sides,
                held,
            },
        }
    }

    #[test]
    fn windows_add_up_and_the_closing_error_is_what_is_not_accounted_for() {
        let mut budget = EnergyBudget::default();
        budget.record(&frame(1.0, None));
        assert!(
            budget.latest().is_none(),
            "a frame without a balance adds nothing"
        );
        // 100 -> 130: 40 from heaters, 10 out through the left side.
        budget.record(&frame(
            1.0,
            Some(window(100.0, 130.0, 40.0, [-10.0, 0.0, 0.0, 0.0], 0.0)),
        ));
        // 130 -> 150: 40 from heaters, 15 out left, 5 out right, and 0.5 J/m unaccounted for.
        budget.record(&frame(
            2.0,
            Some(window(130.0, 150.0, 40.0, [-15.0, -5.0, 0.0, 0.0], 0.5)),
        ));
        let latest = budget.latest().unwrap();
        assert_eq!(latest.seconds, 2.0);
        assert_eq!(latest.stored_change(), 50.0);
        assert_eq!(latest.balance.exchange.sources, 80.0);
        assert_eq!(latest.balance.exchange.sides, [-25.0, -5.0, 0.0, 0.0]);
        assert_eq!(latest.balance.exchange.held, 0.5);
        assert!((latest.balance.closing_error() - (50.0 - 50.5)).abs() < 1e-12);
        // Over the scale of what moved: 50 stored, 80 in, 30 out, 0.5 held (and the stored
        // energy's own rounding, 150 f32 epsilons).
        let scale = 50.0 + 80.0 + 30.0 + 0.5 + 150.0 * f64::from(f32::EPSILON);
        assert!((latest.balance.relative_closing_error() - 0.5 / scale).abs() < 1e-12);
        assert_eq!(budget.points().count(), 2);
        assert_eq!(budget.restarts(), 0);
    }

    #[test]
    fn a_window_that_does_not_continue_the_last_starts_over() {
        let mut budget = EnergyBudget::default();
        budget.record(&frame(1.0, Some(window(100.0, 130.0, 30.0, [0.0; 4], 0.0))));
        // An edit changed the stored energy between the windows: what came in then is unknown.
        budget.record(&frame(2.0, Some(window(200.0, 210.0, 10.0, [0.0; 4], 0.0))));
        assert_eq!(budget.points().count(), 1);
        assert_eq!(budget.latest().unwrap().stored_change(), 10.0);
        assert_eq!(budget.restarts(), 1);
        // Time went back (a reset).
        budget.record(&frame(0.5, Some(window(210.0, 215.0, 5.0, [0.0; 4], 0.0))));
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
