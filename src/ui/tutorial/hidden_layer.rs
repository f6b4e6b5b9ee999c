//! The hidden layer's results: a histogram of its activations.

use eframe::egui::{self, Color32, RichText};
use egui_plot::{Bar, BarChart, Plot};

use heatlab_engine::session::tutorial::jobs::Visual;

/// The histogram of the activations `tanh(greyscale / 255 × weight)`.
pub fn histogram_ui(ui: &mut egui::Ui, visual: &Visual, height: f32) {
    let Visual::Histogram {
        low,
        high,
        counts,
        stats,
    } = visual
    else {
        return;
    };
    ui.label(RichText::new("output: histogram of the activations").strong());
    ui.label(
        RichText::new(format!(
            "min {:.4}, max {:.4}, mean {:.4}",
            stats.min, stats.max, stats.mean
        ))
        .weak(),
    );
    let width = f64::from(high - low) / counts.len().max(1) as f64;
    let bars = counts
        .iter()
        .enumerate()
        .map(|(i, &count)| {
            Bar::new(f64::from(*low) + (i as f64 + 0.5) * width, count as f64).width(width * 0.95)
        })
        .collect();
    Plot::new("hidden_layer_histogram")
        .height(height - 20.0)
        .x_axis_label("activation")
        .y_axis_label("neurons")
        .y_axis_min_width(56.0)
        .include_y(0.0)
        .show(ui, |plot| {
            plot.bar_chart(
                BarChart::new("activations", bars).color(Color32::from_rgb(80, 150, 235)),
            );
        });
}
