//! Monte Carlo pi's results: the estimate, its error against the sample count, and the first
//! points with the quarter circle.

use eframe::egui::{self, Color32, RichText};
use egui_plot::{Legend, Line, MarkerShape, Plot, PlotPoints, Points};

use heatlab_engine::tutorial::KernelSummary;

use super::PanelState;
use heatlab_engine::session::tutorial::jobs::Visual;

/// Points of the quarter circle.
const ARC_POINTS: usize = 200;

/// `4 √(p (1 − p))` with `p = π/4`: the standard error of the estimate is this over √n.
pub fn error_scale() -> f64 {
    let p = std::f64::consts::FRAC_PI_4;
    4.0 * (p * (1.0 - p)).sqrt()
}

/// The estimate as the panel states it: `π ≈ 3.14159 ± 0.00164`.
pub fn estimate_text(estimate: f64, standard_error: f64) -> String {
    format!("π ≈ {estimate:.6} ± {standard_error:.6}")
}

/// The estimate with its standard error, and |error| against n from the sweep with the
/// 1/√n line.
pub fn error_plot_ui(ui: &mut egui::Ui, panel: &PanelState, height: f32) {
    if let Some(Visual::Pi { estimate, .. }) = panel.outcome.as_ref().map(|o| &o.visual) {
        ui.label(
            RichText::new(estimate_text(estimate.estimate, estimate.standard_error))
                .size(18.0)
                .strong(),
        );
        let sigmas = estimate.error.abs() / estimate.standard_error.max(f64::MIN_POSITIVE);
        ui.label(
            RichText::new(format!(
                "{} of {} inside; error {:+.1e} = {sigmas:.1} σ",
                estimate.inside, estimate.samples, estimate.error
            ))
            .weak(),
        );
    }
    let measured: Vec<[f64; 2]> = panel
        .sweep
        .iter()
        .filter_map(|run| match run.result {
            KernelSummary::MonteCarloPi(estimate) if estimate.error != 0.0 => {
                Some([(run.n as f64).log10(), estimate.error.abs().log10()])
            }
            _ => None,
        })
        .collect();
    let (low, high) = match (panel.sweep.first(), panel.sweep.last()) {
        (Some(first), Some(last)) => ((first.n as f64).log10(), (last.n as f64).log10()),
        _ => (3.0, (panel.n.max(10_000) as f64).log10()),
    };
    let reference: Vec<[f64; 2]> = [low, high]
        .iter()
        .map(|&x| [x, error_scale().log10() - 0.5 * x])
        .collect();
    if measured.is_empty() {
        ui.label(RichText::new("|error| against n: press Sweep sizes").weak());
    } else {
        ui.label(RichText::new("|estimate − π| against n (log-log): falls as 1/√n").weak());
    }
    Plot::new("pi_error")
        .height(height - 44.0)
        .legend(Legend::default())
        .x_axis_label("samples n (log scale: log10 n)")
        .y_axis_label("|error| (log scale)")
        .y_axis_formatter(super::format::log_value_mark)
        .x_axis_formatter(super::format::log_count_mark)
        .y_axis_min_width(48.0)
        .show(ui, |plot| {
            plot.line(
                Line::new("standard error 1.64/√n", PlotPoints::from(reference))
                    .color(Color32::from_rgb(150, 150, 150))
                    .style(egui_plot::LineStyle::dashed_dense()),
            );
            plot.points(
                Points::new("|estimate − π| of the sweep", PlotPoints::from(measured))
                    .color(Color32::from_rgb(225, 70, 70))
                    .shape(MarkerShape::Diamond)
                    .radius(4.0),
            );
        });
}

/// The first few thousand points, inside and outside the quarter circle.
pub fn scatter_ui(ui: &mut egui::Ui, visual: &Visual, height: f32) {
    let Visual::Pi { points, .. } = visual else {
        return;
    };
    let (inside, outside): (Vec<_>, Vec<_>) = points.iter().partition(|p| p.inside);
    let to_xy = |points: Vec<&heatlab_engine::tutorial::mc_pi::PiPoint>| -> Vec<[f64; 2]> {
        points
            .into_iter()
            .map(|p| [f64::from(p.x), f64::from(p.y)])
            .collect()
    };
    ui.label(
        RichText::new(format!(
            "the first {} samples: {} inside, {} outside",
            points.len(),
            inside.len(),
            outside.len()
        ))
        .strong(),
    );
    ui.label(RichText::new("4 × inside / all ≈ π").weak());
    let arc: Vec<[f64; 2]> = (0..=ARC_POINTS)
        .map(|i| {
            let angle = std::f64::consts::FRAC_PI_2 * i as f64 / ARC_POINTS as f64;
            [angle.cos(), angle.sin()]
        })
        .collect();
    Plot::new("pi_scatter")
        .height(height - 44.0)
        .data_aspect(1.0)
        .legend(Legend::default())
        .include_x(0.0)
        .include_x(1.0)
        .include_y(0.0)
        // Room above the unit square for the legend: it covers no sample there.
        .include_y(1.4)
        .show(ui, |plot| {
            plot.points(
                Points::new("inside", PlotPoints::from(to_xy(inside)))
                    .color(Color32::from_rgb(80, 150, 235))
                    .radius(1.5),
            );
            plot.points(
                Points::new("outside", PlotPoints::from(to_xy(outside)))
                    .color(Color32::from_rgb(240, 150, 50))
                    .radius(1.5),
            );
            plot.line(
                Line::new("x² + y² = 1", PlotPoints::from(arc))
                    .color(Color32::from_rgb(225, 70, 70))
                    .width(2.0),
            );
        });
}
