//! The timings area under the views: a header line of live figures (with the toggles that
//! change what is shown), the `%timeit`-style summary, the per-frame split, and a row of plots.
//! A new figure goes into [`header_ui`]; a new plot is a [`TimingPlot`] variant.

use eframe::egui::{self, RichText};
use egui_plot::{Line, Plot, PlotPoints};

use heatlab_engine::measure::format_seconds;
use heatlab_engine::sim::FieldStats;

use super::agreement::AgreementLog;
use super::brush::{PaintTools, Tool};
use super::timings::{part_color, Sample, Timings};
use heatlab_engine::session::diffusion::FramePart;

/// The plots of the timings area, left to right.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TimingPlot {
    /// Microseconds per step over time.
    Speed,
    /// Where each frame's time went, over time.
    Split,
    /// Total heat over the steps.
    Heat,
    /// Minimum and maximum over the steps.
    MinMax,
    /// The agreement check's largest difference over the steps (while the check is on).
    Agreement,
}

/// The colours of the max and min lines, as their caption names them.
const MAX_COLOR: egui::Color32 = egui::Color32::from_rgb(230, 90, 80);
const MIN_COLOR: egui::Color32 = egui::Color32::from_rgb(80, 150, 240);

impl TimingPlot {
    /// Every plot, in the order they are laid out.
    pub const ALL: [Self; 5] = [
        Self::Speed,
        Self::Split,
        Self::Heat,
        Self::MinMax,
        Self::Agreement,
    ];

    /// The caption above the plot.
    fn caption(self) -> &'static str {
        match self {
            Self::Speed => "µs per step over time (s)",
            Self::Split => "per-frame split (ms) over time (s)",
            Self::Heat => "total heat over steps",
            Self::MinMax => "max (red) and min (blue) over steps",
            Self::Agreement => "max |difference| from the CPU over steps",
        }
    }
}

/// The whole timings area. `show_plots` is the toggle beside the figures. While there are
/// probes or a line (or their tool is in use), their plots take the place of the timing plots,
/// in the same area: placing the first probe moves nothing. Returns whether the probes' CSV
/// export was asked for.
pub fn timings_ui(
    ui: &mut egui::Ui,
    timings: &Timings,
    agreement: &AgreementLog,
    show_plots: &mut bool,
    tools: &mut PaintTools,
) -> bool {
    ui.horizontal_wrapped(|ui| {
        header_ui(ui, timings);
        ui.separator();
        ui.checkbox(show_plots, "plots");
    });
    if agreement.enabled() {
        ui.horizontal_wrapped(|ui| agreement.status_ui(ui));
    }
    if probe_plots_wanted(tools) {
        // The probe plots need the height the summary and the split would take.
        return tools.plots_ui(ui);
    }
    if let Some(summary) = timings.timeit() {
        ui.label(RichText::new(summary.to_string()).monospace());
    }
    split_ui(ui, timings);
    if *show_plots {
        plots_ui(ui, timings, agreement);
    }
    false
}

/// Whether the probe and line plots are shown (in the place of the timing plots): while there
/// are probes or a line, or their tool is in use.
pub fn probe_plots_wanted(tools: &PaintTools) -> bool {
    tools.has_plots() || matches!(tools.tool, Tool::Probe | Tool::Line)
}

/// The live figures: time per step, rates, effective bandwidth.
fn header_ui(ui: &mut egui::Ui, timings: &Timings) {
    ui.strong("Timings");
    ui.separator();
    match timings.latest_step_timing() {
        Some((us, gb_s)) => {
            ui.label(format!("{} per step", format_seconds(us * 1e-6)));
            ui.separator();
            ui.label(format!("{:.0} steps/s stepping", 1e6 / us.max(1e-9)));
            ui.separator();
            ui.label(format!(
                "{:.0} steps/s wall",
                timings.wall_steps_per_second()
            ));
            ui.separator();
            ui.label(format!("{:.1} frames/s", timings.frames_per_second()));
            ui.separator();
            ui.label(format!("{gb_s:.1} GB/s effective")).on_hover_text(
                "one read and one write of the field per step, over the stepping time",
            );
        }
        None => {
            ui.weak("press Play or Step to measure");
        }
    }
}

/// The mean time of each part of a frame, in the colours of the split plot.
fn split_ui(ui: &mut egui::Ui, timings: &Timings) {
    let split = timings.mean_split();
    if split.is_empty() {
        return;
    }
    let total: f64 = split.iter().map(|(_, ms)| ms).sum();
    ui.horizontal_wrapped(|ui| {
        ui.label(format!("per frame ({total:.2} ms):"));
        for (part, ms) in &split {
            ui.label(
                RichText::new(format!(
                    "{part} {ms:.2} ms ({:.0}%)",
                    100.0 * ms / total.max(1e-12)
                ))
                .monospace()
                .color(part_color(*part)),
            );
        }
    });
}

/// The plots side by side, each in its own column.
fn plots_ui(ui: &mut egui::Ui, timings: &Timings, agreement: &AgreementLog) {
    let height = (ui.available_height() - 24.0).max(60.0);
    let plots: Vec<TimingPlot> = TimingPlot::ALL
        .into_iter()
        .filter(|plot| *plot != TimingPlot::Agreement || agreement.enabled())
        .collect();
    ui.columns(plots.len(), |columns| {
        for (column, plot) in columns.iter_mut().zip(plots) {
            column.label(plot.caption());
            match plot {
                TimingPlot::Agreement => agreement.plot_ui(column, height),
                _ => plot_ui(column, timings, plot, height),
            }
        }
    });
}

fn over_time(timings: &Timings, value: impl Fn(&Sample) -> Option<f64>) -> Vec<[f64; 2]> {
    timings
        .history()
        .filter_map(|s| value(s).map(|y| [s.t, y]))
        .collect()
}

/// The index ranges of `frames` (time in seconds, steps taken) between pauses: a new run
/// starts after a frame that took no steps, and after a gap in time much longer than the frames
/// before it.
pub fn split_runs(frames: &[(f64, u64)]) -> Vec<std::ops::Range<usize>> {
    let mut runs = Vec::new();
    let mut start = 0;
    let mut interval = f64::INFINITY;
    for i in 1..frames.len() {
        let gap = frames[i].0 - frames[i - 1].0;
        let paused = frames[i - 1].1 == 0 || frames[i].1 == 0;
        if paused || gap > (4.0 * interval).max(1.0) {
            runs.push(start..i);
            start = i;
            interval = f64::INFINITY;
        } else {
            interval = gap;
        }
    }
    if start < frames.len() {
        runs.push(start..frames.len());
    }
    runs
}

fn over_steps(timings: &Timings, value: impl Fn(&FieldStats) -> f64) -> Vec<[f64; 2]> {
    timings
        .history()
        .filter_map(|s| s.stats.map(|stats| [s.step as f64, value(&stats)]))
        .collect()
}

fn plot_ui(ui: &mut egui::Ui, timings: &Timings, plot: TimingPlot, height: f32) {
    let frame = Plot::new(("timing_plot", plot as usize))
        .height(height)
        .y_axis_min_width(44.0);
    match plot {
        // No legends over the lines: each caption above names what its plot shows (and the
        // min and max plot's colours).
        TimingPlot::Speed => {
            frame.show(ui, |plot| {
                let points = over_time(timings, |s| s.us_per_step);
                plot.line(Line::new("µs/step", PlotPoints::from(points)));
            });
        }
        // No legend: the coloured split line above the plots names each colour. Lines, never
        // bands (egui_plot fills dense lines as polygons), and none across a pause.
        TimingPlot::Split => {
            let frames: Vec<(f64, u64)> = timings.history().map(|s| (s.t, s.steps)).collect();
            frame.show(ui, |plot| {
                for (i, part) in FramePart::ALL.iter().enumerate() {
                    let points = over_time(timings, |s| Some(s.split_ms[i]));
                    if !points.iter().any(|p| p[1] > 0.0) {
                        continue;
                    }
                    for run in split_runs(&frames) {
                        let run_points = points[run].to_vec();
                        plot.line(
                            Line::new(part.to_string(), PlotPoints::from(run_points))
                                .color(part_color(*part))
                                .allow_band(false),
                        );
                    }
                }
            });
        }
        TimingPlot::Heat => {
            frame.show(ui, |plot| {
                let points = over_steps(timings, |s| s.total);
                plot.line(Line::new("total heat", PlotPoints::from(points)));
            });
        }
        TimingPlot::Agreement => {}
        TimingPlot::MinMax => {
            frame.show(ui, |plot| {
                let max = over_steps(timings, |s| f64::from(s.max));
                let min = over_steps(timings, |s| f64::from(s.min));
                plot.line(Line::new("max", PlotPoints::from(max)).color(MAX_COLOR));
                plot.line(Line::new("min", PlotPoints::from(min)).color(MIN_COLOR));
            });
        }
    }
}

#[cfg(test)]
mod tests {
    use super::split_runs;

    #[test]
    fn the_split_plot_breaks_at_pauses_and_long_gaps() {
        // Steady frames, a paused redraw, steady again, then a long gap with no frame at all.
        let frames = [
            (0.0, 5),
            (0.1, 5),
            (0.2, 5),
            (0.3, 0),
            (0.4, 5),
            (0.5, 5),
            (9.0, 5),
            (9.1, 5),
        ];
        assert_eq!(split_runs(&frames), vec![0..3, 3..4, 4..6, 6..8]);
        assert_eq!(split_runs(&frames[..3]), vec![0..3]);
        assert!(split_runs(&[]).is_empty());
    }
}
