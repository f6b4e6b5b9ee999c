//! The Gaussian's results: the computed points against the exact curve.

use eframe::egui::{self, Color32, RichText};
use egui_plot::{Legend, Line, Plot, PlotPoints, Points};

use heatlab_engine::tutorial::gaussian::{pdf_f64, X_HIGH, X_LOW};

use heatlab_engine::tutorial::KernelSummary;

use heatlab_engine::session::tutorial::jobs::{Outcome, Visual};

/// Points of the exact curve.
const EXACT_POINTS: usize = 400;

/// The first few thousand (x, pdf) the kernel computed, on the exact curve in float64.
pub fn curve_ui(ui: &mut egui::Ui, outcome: &Outcome, height: f32) {
    let Visual::Curve { params, samples } = &outcome.visual else {
        return;
    };
    let params = *params;
    ui.label(RichText::new("output: the computed PDF against the exact curve").strong());
    let worst = match outcome.run.result {
        KernelSummary::Gaussian {
            max_abs_error_vs_f64,
            ..
        } => format!(
            "; over all {} points max |float32 − float64| = {max_abs_error_vs_f64:.1e}",
            outcome.run.n
        ),
        _ => String::new(),
    };
    ui.label(
        RichText::new(format!(
            "the first {} points as computed (float32, blue dots) under the formula in float64 (orange line), \
             mean {}, sigma {}{worst}",
            samples.len(),
            params.mean,
            params.sigma
        ))
        .weak(),
    );
    let exact: Vec<[f64; 2]> = (0..=EXACT_POINTS)
        .map(|i| {
            let x = X_LOW + (X_HIGH - X_LOW) * i as f64 / EXACT_POINTS as f64;
            [x, pdf_f64(x, params)]
        })
        .collect();
    Plot::new("gaussian_curve")
        .height(height - 20.0)
        .legend(Legend::default())
        .x_axis_label("x")
        .y_axis_label("pdf(x)")
        .y_axis_min_width(56.0)
        .include_y(0.0)
        .show(ui, |plot| {
            // The dots first, the curve over them (drawn in this order), wide enough to show
            // through thousands of dots on it.
            plot.points(
                Points::new("computed (float32)", PlotPoints::from(samples.clone()))
                    .color(Color32::from_rgb(80, 150, 235))
                    .radius(1.5),
            );
            plot.line(
                Line::new("exact (float64)", PlotPoints::from(exact))
                    .color(Color32::from_rgb(240, 150, 50))
                    .width(2.5)
                    .allow_band(false),
            );
        });
}
