//! The Gaussian's results: the computed points against the exact curve.

use eframe::egui::{self, Color32, RichText};
use egui_plot::{Legend, Line, Plot, PlotPoints, Points};

use crate::tutorial::gaussian::{pdf_f64, X_HIGH, X_LOW};

use super::worker::Visual;

/// Points of the exact curve.
const EXACT_POINTS: usize = 400;

/// The first few thousand (x, pdf) the kernel computed, on the exact curve in float64.
pub fn curve_ui(ui: &mut egui::Ui, visual: &Visual, height: f32) {
    let Visual::Curve { params, samples } = visual else {
        return;
    };
    let params = *params;
    ui.label(RichText::new("output: the computed PDF against the exact curve").strong());
    ui.label(
        RichText::new(format!(
            "the first {} of the points as computed (float32), and the formula in float64; mean {}, sigma {}",
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
            plot.points(
                Points::new("computed (float32)", PlotPoints::from(samples.clone()))
                    .color(Color32::from_rgb(80, 150, 235))
                    .radius(1.5),
            );
            plot.line(
                Line::new("exact (float64)", PlotPoints::from(exact))
                    .color(Color32::from_rgb(240, 150, 50))
                    .width(1.5),
            );
        });
}
