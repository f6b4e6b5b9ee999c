//! The outcome of each lesson: `%timeit` tables, the ladder's plot against size, the errors.

use eframe::egui::{self, Color32, RichText};
use egui_plot::{Corner, Legend, Line, MarkerShape, Plot, PlotPoints, Points};

use heatlab_engine::tutorial::basics::device::DeviceReport;
use heatlab_engine::tutorial::basics::geometry::{Dimensions, GeometryOutcome};
use heatlab_engine::tutorial::basics::maximum::{LadderStep, MaximumLadder};
use heatlab_engine::tutorial::basics::reduce::ReduceReport;
use heatlab_engine::tutorial::basics::row_sums::RowSumsReport;
use heatlab_engine::tutorial::basics::sin_exp::{SinExpReport, SinExpVariant};
use heatlab_engine::tutorial::basics::{BasicsLesson, BasicsOutcome};
use heatlab_engine::tutorial::{format_seconds, TimingStats};

use super::super::tutorial::format::{log_count_mark, log_seconds_mark};

/// What each lesson teaches, in a sentence.
pub(super) fn about(lesson: BasicsLesson) -> &'static str {
    match lesson {
        BasicsLesson::Maximum => "c = max(a, b) over float32 cubes, from a naive indexed loop up to the GPU with the arrays on the device; where does the GPU start to win?",
        BasicsLesson::Geometry => "Adding one to every element: which block and thread touch which element, the threads past the end, and what the guard `if i < n` is for.",
        BasicsLesson::SinExp => "z = sin(x)·exp(y) in float32 (precise and fast math) and float64: the error against the CPU's float64 and the time of each.",
        BasicsLesson::RowSums => "s[i] = Σ_j A[i, j] with one thread per row (the notebook's loop) or one warp per row (coalesced reads).",
        BasicsLesson::Reduce => "Sum and product of float64 values: atomics on one result, a tree in shared memory, warp shuffles.",
        BasicsLesson::Device => "The GPU's own figures: SMs, cores for its compute capability, clocks, memory; peak bandwidth and FLOP/s against a measured copy.",
    }
}

/// Draws `outcome`; `gpu_missing` says why GPU columns are empty.
pub(super) fn outcome_ui(ui: &mut egui::Ui, outcome: &BasicsOutcome, gpu_missing: Option<&str>) {
    if let Some(reason) = gpu_missing {
        ui.label(
            RichText::new(format!("No GPU rungs: {reason}. The CPU's are below."))
                .color(super::super::notice::WARNING),
        );
    }
    match outcome {
        BasicsOutcome::Maximum(ladder) => maximum_ui(ui, ladder),
        BasicsOutcome::Geometry(run) => geometry_outcome_ui(ui, run),
        BasicsOutcome::SinExp(report) => sin_exp_ui(ui, report),
        BasicsOutcome::RowSums(report) => row_sums_ui(ui, report),
        BasicsOutcome::Reduce(report) => reduce_ui(ui, report),
        BasicsOutcome::Device(report) => device_ui(ui, report),
    }
}

fn time_cell(ui: &mut egui::Ui, stats: Option<&TimingStats>) {
    match stats {
        Some(stats) => ui.label(stats.display()),
        None => ui.label(RichText::new("—").weak()),
    };
}

/// The ladder's rungs, in order, with their colours.
const RUNGS: [(&str, Color32); 6] = [
    ("naive loop", Color32::from_rgb(150, 150, 150)),
    ("vectorised loop", Color32::from_rgb(90, 160, 230)),
    ("all CPU threads", Color32::from_rgb(60, 90, 200)),
    ("GPU, pageable", Color32::from_rgb(240, 150, 60)),
    ("GPU, pinned", Color32::from_rgb(230, 100, 40)),
    ("GPU, device-resident", Color32::from_rgb(80, 190, 90)),
];

fn rung_stats(step: &LadderStep) -> [Option<&TimingStats>; 6] {
    let gpu = step.gpu.as_ref();
    [
        Some(&step.naive_loop),
        Some(&step.vectorised_loop),
        Some(&step.all_threads),
        gpu.and_then(|g| g.gpu_host_arrays.as_ref())
            .map(|h| &h.total),
        gpu.and_then(|g| g.gpu_pinned_arrays.as_ref())
            .map(|h| &h.total),
        gpu.and_then(|g| g.gpu_device_resident.as_ref()),
    ]
}

fn maximum_ui(ui: &mut egui::Ui, ladder: &MaximumLadder) {
    egui::Grid::new("basics_ladder")
        .striped(true)
        .show(ui, |ui| {
            ui.strong("size");
            for (name, color) in RUNGS {
                ui.label(RichText::new(name).color(color).strong());
            }
            ui.end_row();
            for step in &ladder.steps {
                ui.label(format!("{}³ = {}", step.side, step.n));
                for stats in rung_stats(step) {
                    time_cell(ui, stats);
                }
                ui.end_row();
            }
        });
    if let Some(step) = ladder.steps.last() {
        if let Some(host) = step.gpu.as_ref().and_then(|g| g.gpu_host_arrays.as_ref()) {
            ui.label(format!(
                "at {}³ the GPU with pageable host arrays spends {} uploading, {} in the kernel, {} downloading",
                step.side,
                format_seconds(host.upload.mean_s),
                format_seconds(host.kernel.mean_s),
                format_seconds(host.download.mean_s)
            ));
        }
    }
    let crossover = |what: &str, n: Option<u64>| match (n, &ladder.gpu) {
        (_, None) => None,
        (Some(n), _) => Some(format!(
            "{what} beats the fastest CPU rung from {n} elements on"
        )),
        (None, _) => Some(format!(
            "{what} beats the fastest CPU rung at none of these sizes"
        )),
    };
    for line in [
        crossover("the GPU with host arrays", ladder.crossover_host_arrays),
        crossover(
            "the GPU with the arrays on the device",
            ladder.crossover_device_resident,
        ),
    ]
    .into_iter()
    .flatten()
    {
        ui.label(RichText::new(line).strong());
    }
    ladder_plot_ui(ui, ladder);
}

/// Time against size for every rung, log-log.
fn ladder_plot_ui(ui: &mut egui::Ui, ladder: &MaximumLadder) {
    Plot::new("basics_ladder_plot")
        .height(260.0)
        .legend(Legend::default().position(Corner::LeftTop))
        .x_axis_label("elements (log scale)")
        .y_axis_label("seconds per run (log scale)")
        .x_axis_formatter(log_count_mark)
        .y_axis_formatter(log_seconds_mark)
        .y_axis_min_width(56.0)
        .show(ui, |plot| {
            for (index, (name, color)) in RUNGS.into_iter().enumerate() {
                let points: Vec<[f64; 2]> = ladder
                    .steps
                    .iter()
                    .filter_map(|step| {
                        rung_stats(step)[index]
                            .filter(|s| s.mean_s > 0.0)
                            .map(|s| [(step.n as f64).log10(), s.mean_s.log10()])
                    })
                    .collect();
                if points.is_empty() {
                    continue;
                }
                plot.line(
                    Line::new(name, PlotPoints::from(points.clone()))
                        .color(color)
                        .width(2.0),
                );
                plot.points(
                    Points::new(name, PlotPoints::from(points))
                        .color(color)
                        .shape(MarkerShape::Circle)
                        .radius(3.0),
                );
            }
        });
}

/// What a geometry run found.
pub(super) fn geometry_outcome_ui(ui: &mut egui::Ui, run: &GeometryOutcome) {
    for line in run.explanation() {
        ui.label(format!("• {line}"));
    }
    match (&run.gpu, run.gpu_equals_cpu) {
        (Some(gpu), Some(true)) => ui.label(format!(
            "{gpu}: its whole buffer, padding included, equals the CPU's model of the launch"
        )),
        (Some(gpu), _) => ui.label(
            RichText::new(format!("{gpu}: its buffer differs from the CPU's model"))
                .color(super::super::notice::ERROR),
        ),
        (None, _) => {
            ui.label(RichText::new("counted on the CPU's model of the launch (no GPU)").weak())
        }
    };
    if let Some(kernel) = &run.kernel {
        ui.label(format!(
            "kernel: {} per launch (array on the device)",
            kernel.per_launch.display()
        ));
    }
}

/// The geometry runs so far: the time of each choice.
pub(super) fn geometry_history_ui(ui: &mut egui::Ui, history: &[GeometryOutcome]) {
    if history.is_empty() {
        return;
    }
    ui.separator();
    ui.strong("launches so far");
    egui::Grid::new("basics_geometry_history")
        .striped(true)
        .show(ui, |ui| {
            for heading in [
                "array",
                "block",
                "grid",
                "guard",
                "threads past end",
                "writes past end",
                "kernel",
            ] {
                ui.strong(heading);
            }
            ui.end_row();
            for run in history.iter().rev().take(12) {
                let options = &run.options;
                ui.label(match options.dimensions {
                    Dimensions::One => format!("{}", options.n),
                    Dimensions::Two => format!("{} x {}", options.rows, options.cols),
                });
                ui.label(format!("{} x {}", options.block[0], options.block[1]));
                ui.label(format!("{} x {}", options.grid[0], options.grid[1]));
                ui.label(if options.guarded { "yes" } else { "no" });
                // Behind a guard they idle; without one they write past the array.
                ui.label(match (run.idle_threads, options.guarded) {
                    (0, _) => "0".to_string(),
                    (n, true) => format!("{n}, idle"),
                    (n, false) => format!("{n}, writing"),
                });
                ui.label(run.tally.writes_past_end.to_string());
                time_cell(ui, run.kernel.as_ref().map(|k| &k.per_launch));
                ui.end_row();
            }
        });
}

fn sin_exp_ui(ui: &mut egui::Ui, report: &SinExpReport) {
    ui.label(format!(
        "n = {}; error = max |z − CPU float64| / max |z|",
        report.n
    ));
    egui::Grid::new("basics_sin_exp")
        .striped(true)
        .show(ui, |ui| {
            for heading in [
                "version",
                "CPU, 1 thread",
                "CPU, all threads",
                "CPU error",
                "GPU, host arrays",
                "upload",
                "kernel",
                "download",
                "GPU, device-resident",
                "GPU error",
            ] {
                ui.strong(heading);
            }
            ui.end_row();
            for row in &report.rows {
                ui.label(row.variant.to_string());
                time_cell(ui, row.cpu_one_thread.as_ref());
                time_cell(ui, row.cpu_all_threads.as_ref());
                ui.label(match (row.variant, row.cpu_max_relative_error) {
                    (SinExpVariant::F64, _) => "the reference".to_string(),
                    (_, Some(error)) => format!("{error:.1e}"),
                    (_, None) => "no CPU twin".to_string(),
                });
                let gpu = row.gpu.as_ref();
                time_cell(ui, gpu.map(|g| &g.host_arrays.total));
                time_cell(ui, gpu.map(|g| &g.host_arrays.upload));
                time_cell(ui, gpu.map(|g| &g.host_arrays.kernel));
                time_cell(ui, gpu.map(|g| &g.host_arrays.download));
                time_cell(ui, gpu.map(|g| &g.device_resident.per_launch));
                ui.label(
                    gpu.map_or_else(|| "—".into(), |g| format!("{:.1e}", g.max_relative_error)),
                );
                ui.end_row();
            }
        });
}

fn row_sums_ui(ui: &mut egui::Ui, report: &RowSumsReport) {
    ui.label(format!(
        "A: {} x {} float32, each row summed in float64",
        report.rows, report.cols
    ));
    egui::Grid::new("basics_row_sums")
        .striped(true)
        .show(ui, |ui| {
            for heading in [
                "version",
                "host arrays",
                "kernel",
                "rows equal to the CPU's",
                "max relative difference",
            ] {
                ui.strong(heading);
            }
            ui.end_row();
            ui.label("CPU, one thread");
            time_cell(ui, Some(&report.cpu_one_thread));
            ui.end_row();
            ui.label(format!("CPU, all {} threads", report.cpu_threads));
            time_cell(ui, Some(&report.cpu_all_threads));
            ui.end_row();
            for kernel in &report.kernels {
                ui.label(format!("GPU, {}", kernel.kernel));
                time_cell(ui, Some(&kernel.host_arrays.total));
                time_cell(ui, Some(&kernel.device_resident.per_launch));
                ui.label(format!("{} of {}", kernel.rows_equal, report.rows));
                ui.label(format!("{:.1e}", kernel.max_relative_difference));
                ui.end_row();
            }
        });
    let sums: Vec<String> = report
        .first_sums
        .iter()
        .map(|s| format!("{s:.3}"))
        .collect();
    ui.label(RichText::new(format!("first sums: {}", sums.join(", "))).weak());
}

fn reduce_ui(ui: &mut egui::Ui, report: &ReduceReport) {
    ui.label(format!(
        "n = {}; the notebook's own product np.prod(x) is {:e} (it underflows), so the product here is over 1 + (x − 0.5)/1024",
        report.n, report.notebook_product
    ));
    egui::Grid::new("basics_reduce")
        .striped(true)
        .show(ui, |ui| {
            for heading in ["", "version", "time", "value", "relative difference"] {
                ui.strong(heading);
            }
            ui.end_row();
            for row in &report.rows {
                let rows: Vec<(String, &TimingStats, f64, Option<f64>)> = [
                    (
                        "CPU, one thread".to_string(),
                        &row.cpu_one_thread,
                        row.cpu_value,
                        None,
                    ),
                    (
                        format!("CPU, all {} threads", report.cpu_threads),
                        &row.cpu_all_threads,
                        row.cpu_all_threads_value,
                        None,
                    ),
                ]
                .into_iter()
                .chain(row.gpu.iter().map(|g| {
                    (
                        format!("GPU, {}", g.kernel),
                        &g.time.per_launch,
                        g.value,
                        Some(g.relative_difference),
                    )
                }))
                .collect();
                for (index, (label, stats, value, difference)) in rows.into_iter().enumerate() {
                    ui.label(if index == 0 {
                        row.op.to_string()
                    } else {
                        String::new()
                    });
                    ui.label(label);
                    time_cell(ui, Some(stats));
                    ui.label(format!("{value:.12e}"));
                    ui.label(difference.map_or_else(String::new, |d| format!("{d:.1e}")));
                    ui.end_row();
                }
            }
        });
}

fn device_ui(ui: &mut egui::Ui, report: &DeviceReport) {
    egui::Grid::new("basics_device")
        .striped(true)
        .show(ui, |ui| {
            for (label, value) in device_rows(report) {
                ui.label(label);
                ui.label(value);
                ui.end_row();
            }
        });
}

/// The device's figures as (label, value) lines.
fn device_rows(report: &DeviceReport) -> Vec<(&'static str, String)> {
    let (major, minor) = report.compute_capability;
    let unknown = || "not reported".to_string();
    let gb = |bytes_per_s: f64| format!("{:.0} GB/s", bytes_per_s / 1e9);
    let mut rows = vec![
        ("name", report.name.clone()),
        ("compute capability", format!("{major}.{minor}")),
        (
            "streaming multiprocessors",
            report.multiprocessors.to_string(),
        ),
        (
            "cores per SM (the notebook's table)",
            report
                .notebook_cores_per_sm
                .map_or_else(|| format!("none for {major}.x"), |c| c.to_string()),
        ),
        (
            "cores per SM (for this capability)",
            report.cores_per_sm.map_or_else(unknown, |c| c.to_string()),
        ),
        (
            "CUDA cores",
            report.cores.map_or_else(unknown, |c| c.to_string()),
        ),
        (
            "clock",
            report
                .clock_mhz
                .map_or_else(unknown, |m| format!("{m:.0} MHz")),
        ),
        (
            "memory clock",
            report
                .memory_clock_mhz
                .map_or_else(unknown, |m| format!("{m:.0} MHz")),
        ),
        (
            "memory bus",
            report
                .memory_bus_bits
                .map_or_else(unknown, |b| format!("{b} bits")),
        ),
        (
            "memory",
            format!(
                "{:.1} GiB",
                report.memory_bytes as f64 / (1u64 << 30) as f64
            ),
        ),
        (
            "peak bandwidth",
            report.peak_bandwidth.map_or_else(unknown, gb),
        ),
        (
            "peak FP32",
            report
                .peak_fp32_flops
                .map_or_else(unknown, |f| format!("{:.1} TFLOP/s", f / 1e12)),
        ),
    ];
    rows.extend(measured_rows(report));
    rows
}

/// The device's measured bandwidths as (label, value) lines.
fn measured_rows(report: &DeviceReport) -> Vec<(&'static str, String)> {
    let unknown = || "not reported".to_string();
    let gb = |bytes_per_s: f64| format!("{:.0} GB/s", bytes_per_s / 1e9);
    vec![
        (
            "measured device copy",
            format!(
                "{}{}",
                gb(report.device_copy_bandwidth),
                report
                    .copy_fraction_of_peak()
                    .map(|f| format!(" ({:.0}% of peak)", f * 100.0))
                    .unwrap_or_default()
            ),
        ),
        (
            "measured upload, pageable",
            gb(report.upload_pageable_bandwidth),
        ),
        (
            "measured upload, pinned",
            report.upload_pinned_bandwidth.map_or_else(unknown, gb),
        ),
    ]
}
