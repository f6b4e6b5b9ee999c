//! The live agreement check as the panel shows it: a status line beside the timings ("bit-identical
//! to the CPU at step 12,000, checked 2 s ago", or the difference and its cell) and a plot of the
//! largest difference of each checked window over the steps.
//!
//! The check itself runs in `sim::agreement`: a background CPU thread steps a snapshot of the
//! field through the advances the simulation made and compares with the running backend's
//! field at the same step, so the GPU never waits for the CPU.

use std::collections::VecDeque;

use eframe::egui::{self, RichText};
use egui_plot::{Line, Plot, PlotPoints, Points};

use super::super::notice::{ERROR, WARNING};
use heatlab_engine::session::diffusion::AgreementReport;

/// Checks kept for the plot.
const HISTORY: usize = 600;
/// The colour of "bit-identical".
const AGREES: egui::Color32 = egui::Color32::from_rgb(90, 190, 110);

/// What the panel knows of the agreement check.
#[derive(Debug, Default)]
pub struct AgreementLog {
    enabled: bool,
    reports: VecDeque<AgreementReport>,
}

/// `12345678` as `12,345,678`.
pub fn group_thousands(value: u64) -> String {
    let digits = value.to_string();
    let mut grouped = String::with_capacity(digits.len() + digits.len() / 3);
    for (i, digit) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i) % 3 == 0 {
            grouped.push(',');
        }
        grouped.push(digit);
    }
    grouped
}

impl AgreementLog {
    /// Whether the check is on.
    pub fn enabled(&self) -> bool {
        self.enabled
    }

    /// Turns the display on or off (the simulation thread is told separately).
    pub fn set_enabled(&mut self, enabled: bool) {
        self.enabled = enabled;
        if !enabled {
            self.reports.clear();
        }
    }

    /// Forgets the checks (a new field).
    pub fn clear(&mut self) {
        self.reports.clear();
    }

    /// Keeps a finished check.
    pub fn record(&mut self, report: AgreementReport) {
        if !self.enabled {
            return;
        }
        if self.reports.len() == HISTORY {
            self.reports.pop_front();
        }
        self.reports.push_back(report);
    }

    /// The latest check.
    pub fn latest(&self) -> Option<&AgreementReport> {
        self.reports.back()
    }

    /// The status line: what the latest check found, when, and the totals.
    pub fn status_ui(&self, ui: &mut egui::Ui) {
        if !self.enabled {
            return;
        }
        let Some(report) = self.latest() else {
            ui.spinner();
            ui.label("checking against the CPU…")
                .on_hover_text(EXPLANATION);
            return;
        };
        let outcome = &report.outcome;
        let ago = outcome.finished.map_or(String::new(), |at| {
            format!(", checked {:.0} s ago", at.elapsed().as_secs_f64())
        });
        let totals = match (report.mismatches, report.checks) {
            (0, 1) => "1 check".to_string(),
            (0, checks) => format!("{checks} checks"),
            (n, checks) => format!("{n} of {checks} checks differ"),
        };
        let step = group_thousands(outcome.to_step);
        let text = match &outcome.difference {
            None => RichText::new(format!(
                "✔ bit-identical to the CPU at step {step}{ago} ({totals})"
            ))
            .color(AGREES),
            Some(cell) => RichText::new(format!(
                "✖ differs from the CPU at step {step}: max |difference| {:.3e}, first at row {}, \
                 column {} ({:e} vs {:e}){ago} ({totals})",
                cell.max_abs_difference, cell.row, cell.col, cell.subject, cell.reference
            ))
            .color(ERROR),
        };
        ui.label(text).on_hover_text(format!(
            "{EXPLANATION}\nLast window: steps {} to {}, stepped by {} in {:.2} s.",
            group_thousands(outcome.from_step),
            step,
            outcome.reference,
            outcome.reference_seconds
        ));
    }

    /// The largest difference of each checked window over the steps (0: bit-identical).
    pub fn plot_ui(&self, ui: &mut egui::Ui, height: f32) {
        let points: Vec<[f64; 2]> = self
            .reports
            .iter()
            .map(|r| {
                let difference = r.outcome.difference.map_or(0.0, |d| d.max_abs_difference);
                [r.outcome.to_step as f64, difference]
            })
            .collect();
        let largest = points.iter().map(|p| p[1]).fold(0.0, f64::max);
        let differs = largest != 0.0;
        // Zeros only would leave the axis to guess a range; a small positive top keeps 0 at
        // the bottom and a difference, however small, visible.
        Plot::new("agreement_plot")
            .height(height)
            .y_axis_min_width(44.0)
            .include_y(0.0)
            .include_y(if differs { largest * 1.1 } else { 1e-6 })
            .show(ui, |plot| {
                let colour = if differs { WARNING } else { AGREES };
                plot.line(
                    Line::new("max |difference|", PlotPoints::from(points.clone())).color(colour),
                );
                plot.points(
                    Points::new("checks", PlotPoints::from(points))
                        .radius(3.0)
                        .color(colour),
                );
            });
    }
}

const EXPLANATION: &str = "The running backend is checked against the CPU reference while it \
runs: a background CPU thread takes the field at one step, steps it through the same advances \
with another method, and compares it bit for bit with the running backend's field at the later \
step. The GPU never waits for it; a new window starts when a check is done.";

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn thousands_are_grouped() {
        assert_eq!(group_thousands(0), "0");
        assert_eq!(group_thousands(999), "999");
        assert_eq!(group_thousands(1000), "1,000");
        assert_eq!(group_thousands(12_345_678), "12,345,678");
    }
}
