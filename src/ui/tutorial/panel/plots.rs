//! The results of a tutorial panel: the `%timeit` table, the stacked upload / kernel /
//! download bars, the GPU-vs-CPU agreement, and the log-log size sweep.

use eframe::egui::{self, RichText};
use egui_plot::{
    AxisHints, Bar, BarChart, Corner, GridMark, Legend, Line, MarkerShape, Plot, PlotPoints,
    Points, VLine,
};

use heatlab_engine::tutorial::{format_seconds, KernelRun, KernelTimings};

use super::super::format::format_count;
use super::super::format::{format_bytes, log_count_mark, log_seconds_mark, time_unit};
use super::super::PanelState;
use super::versions::{gpu_wins_from, Part, Version};
use super::Status;
use heatlab_engine::session::tutorial::jobs::Visual;

/// The `%timeit` table: one row per version with mean ± std and the upload / kernel /
/// download split, and the speed-up over one CPU thread.
pub(super) fn timings_table_ui(ui: &mut egui::Ui, run: &KernelRun, status: &Status) {
    let timings = &run.timings;
    ui.label(
        RichText::new(format!(
            "n = {} ({}), {} timed runs each: mean ± std. dev.{}",
            run.n,
            format_count(run.n),
            run.repeats,
            run.gpu
                .as_ref()
                .map(|g| format!(" GPU: {g}"))
                .unwrap_or_default()
        ))
        .strong(),
    );
    let baseline = Version::CpuOneThread
        .stats(timings)
        .or_else(|| Version::CpuAllThreads.stats(timings))
        .map(|s| s.mean_s);
    egui::Grid::new("timeit_table")
        .striped(true)
        .num_columns(6)
        .spacing([14.0, 4.0])
        .show(ui, |ui| {
            for header in [
                "version",
                "per run",
                "upload",
                "kernel",
                "download",
                "vs 1 thread",
            ] {
                ui.label(RichText::new(header).strong());
            }
            ui.end_row();
            for version in Version::ALL {
                version_row_ui(ui, version, run, baseline, status);
                ui.end_row();
            }
        });
    host_arrays_notes_ui(ui, timings);
}

/// The notes under the table: host arrays timed as a Python caller sees them, the overlapped
/// pinned run, whether pinned and pageable agree, and how device-resident timings are made.
fn host_arrays_notes_ui(ui: &mut egui::Ui, timings: &KernelTimings) {
    if let Some(host) = timings
        .gpu_host_arrays
        .as_ref()
        .filter(|h| !h.wall.runs_s.is_empty())
    {
        ui.label(
            RichText::new(format!(
                "host arrays as a Python caller sees them (wall clock): pageable {}{}",
                host.wall.display(),
                timings
                    .gpu_pinned_arrays
                    .as_ref()
                    .filter(|p| !p.wall.runs_s.is_empty())
                    .map(|p| format!(", pinned {}", p.wall.display()))
                    .unwrap_or_default()
            ))
            .weak(),
        );
    }
    if let Some(overlapped) = &timings.gpu_pinned_overlapped {
        ui.label(format!(
            "GPU, pinned in {} chunks on {} streams (the copies of one chunk overlap the \
             kernel and the copies of the next): {} per run",
            overlapped.chunks,
            overlapped.streams,
            overlapped.total.display()
        ));
    }
    match timings.pinned_equals_pageable {
        Some(true) => {
            ui.label(RichText::new("pinned results = pageable results, bit for bit").weak());
        }
        Some(false) => {
            ui.colored_label(
                ui.visuals().error_fg_color,
                "pinned results differ from pageable results",
            );
        }
        None => {}
    }
    if timings.device_resident_launches_per_timing > 1 {
        ui.label(
            RichText::new(format!(
                "device-resident: each timing is {} launches back to back, divided by {0}",
                timings.device_resident_launches_per_timing
            ))
            .weak(),
        );
    }
}

/// One row of the table: the version's name, mean ± std, its split and its speed-up over
/// `baseline` seconds, or why it did not run.
fn version_row_ui(
    ui: &mut egui::Ui,
    version: Version,
    run: &KernelRun,
    baseline: Option<f64>,
    status: &Status,
) {
    let timings = &run.timings;
    let name = match version {
        Version::CpuAllThreads => format!("CPU, all {} threads", timings.cpu_threads),
        Version::GpuHostArrays => "GPU, pageable host arrays".to_string(),
        Version::GpuPinnedArrays => "GPU, pinned host arrays".to_string(),
        Version::GpuDeviceResident => "GPU, device-resident".to_string(),
        Version::CpuOneThread => "CPU, one thread".to_string(),
    };
    ui.label(RichText::new(name).color(version.color()))
        .on_hover_text(version.to_string());
    let (Some(stats), Some(split)) = (version.stats(timings), version.split(timings)) else {
        if version == Version::GpuPinnedArrays {
            if let Some(note) = &timings.pinned_note {
                ui.label(RichText::new("not run: no page-locked memory").weak())
                    .on_hover_text(note);
                return;
            }
            if timings.gpu_host_arrays.is_some() {
                // A run recorded before heatlab timed pinned arrays.
                ui.label(RichText::new("— (this recording has no pinned timings)").weak());
                return;
            }
        }
        let why = match (version.is_gpu(), &status.gpu_note) {
            (true, Some(note)) => format!("not run: {}", note.short()),
            (true, None) => "not run: no GPU".to_string(),
            (false, _) => "not run (see CPU versions)".to_string(),
        };
        let note = status.gpu_note.as_ref().map(ToString::to_string);
        ui.label(RichText::new(why).weak())
            .on_hover_text(note.unwrap_or_default());
        return;
    };
    ui.label(RichText::new(stats.display()).strong());
    if matches!(version, Version::GpuHostArrays | Version::GpuPinnedArrays) {
        for part in split {
            ui.label(format_seconds(part));
        }
    } else {
        ui.label("—");
        ui.label(format_seconds(split[1]));
        ui.label("—");
    }
    match baseline {
        Some(base) if stats.mean_s > 0.0 => ui.label(format!("{:.1}×", base / stats.mean_s)),
        _ => ui.label("—"),
    };
}

/// Stacked horizontal bars: upload / kernel (or CPU compute) / download of each version, in a
/// plot `height` points tall.
pub(super) fn bars_ui(ui: &mut egui::Ui, run: &KernelRun, height: f32) {
    let timings = &run.timings;
    let largest = Version::ALL
        .iter()
        .filter_map(|v| v.split(timings))
        .map(|s| s.iter().sum::<f64>())
        .fold(0.0, f64::max);
    let (factor, unit) = time_unit(largest.max(1e-9));
    let row = |version: Version| (Version::ALL.len() - 1 - version as usize) as f64;
    let chart = |part: Part| {
        let index = part as usize;
        let bars = Version::ALL
            .iter()
            .filter_map(|&version| {
                version.split(timings).map(|split| {
                    Bar::new(row(version), split[index] * factor)
                        .name(version.short())
                        .fill(part.color())
                })
            })
            .collect();
        BarChart::new(part.to_string(), bars)
            .horizontal()
            .width(0.6)
            .color(part.color())
    };
    let upload = chart(Part::Upload);
    let compute = chart(Part::Compute).stack_on(&[&upload]);
    let download = chart(Part::Download).stack_on(&[&upload, &compute]);
    ui.horizontal(|ui| {
        ui.label(RichText::new("where the time goes (mean per run):").strong());
        for part in Part::ALL {
            let (rect, _) = ui.allocate_exact_size(egui::vec2(11.0, 11.0), egui::Sense::hover());
            ui.painter().rect_filled(rect, 2.0, part.color());
            ui.label(part.to_string());
        }
    });
    let last_row = (Version::ALL.len() - 1) as f64;
    Plot::new("tutorial_bars")
        .height(height)
        .y_axis_min_width(100.0)
        .custom_x_axes(vec![AxisHints::new_x()
            .label(format!("time per run ({unit})"))
            .label_spacing(40.0..=80.0)
            .formatter(|mark: GridMark, _| {
                if mark.value < 0.0 {
                    String::new()
                } else {
                    format!("{}", (mark.value * 1e3).round() / 1e3)
                }
            })])
        .y_axis_formatter(move |mark: GridMark, _| {
            let index = mark.value.round();
            if (mark.value - index).abs() > 1e-6 || !(0.0..=last_row).contains(&index) {
                return String::new();
            }
            Version::ALL[Version::ALL.len() - 1 - index as usize]
                .short()
                .to_string()
        })
        .include_x(0.0)
        .include_y(-0.5)
        .include_y(last_row + 0.5)
        .allow_drag(false)
        .allow_zoom(false)
        .allow_scroll(false)
        .show(ui, |plot| {
            plot.bar_chart(upload);
            plot.bar_chart(compute);
            plot.bar_chart(download);
        });
}

/// The GPU-vs-CPU agreement and the share of the copies.
pub(super) fn agreement_ui(ui: &mut egui::Ui, run: &KernelRun, visual: &Visual) {
    ui.horizontal_wrapped(|ui| {
        match (run.max_abs_difference_gpu_cpu, visual) {
            (Some(diff), Visual::Pi { .. }) => {
                ui.label(format!(
                    "GPU vs CPU: the counts differ by {diff:.0} (the same MWC64X sequence)."
                ));
            }
            (Some(diff), _) => {
                ui.label(format!("GPU vs CPU: max |difference| = {diff:.2e}."));
            }
            (None, _) => {
                ui.label(
                    RichText::new("GPU vs CPU agreement: needs both a GPU run and a CPU run.")
                        .weak(),
                );
            }
        }
        if let Some(host) = &run.timings.gpu_host_arrays {
            let total = host.total.mean_s.max(1e-12);
            let copies = (host.upload.mean_s + host.download.mean_s) / total * 100.0;
            let kernel = host.kernel.mean_s / total * 100.0;
            ui.label(format!(
                "With pageable host arrays {copies:.1}% of the GPU's time is copying, {kernel:.1}% \
                 computing ({} moved per run).",
                format_bytes(run.transfer_bytes)
            ));
        }
        if let (Some(host), Some(pinned)) =
            (&run.timings.gpu_host_arrays, &run.timings.gpu_pinned_arrays)
        {
            if pinned.total.mean_s > 0.0 {
                ui.label(format!(
                    "Pinned host arrays: {:.1}× faster than pageable.",
                    host.total.mean_s / pinned.total.mean_s
                ));
            }
        }
    });
}

/// The sweep: seconds per run against n for each version, both on log scales.
pub(super) fn sweep_plot_ui(ui: &mut egui::Ui, panel: &PanelState, status: &Status, height: f32) {
    ui.label(RichText::new("size sweep: time per run against n (log-log)").strong());
    let sweep = &panel.sweep;
    let running_sweep = status.running == Some((panel.kernel, true));
    let caption = sweep_caption(sweep, status, running_sweep);
    ui.label(RichText::new(caption).weak());
    if sweep.is_empty() {
        empty_plot_ui(ui, height - 20.0, "no sweep yet");
        return;
    }
    let host_win = gpu_wins_from(sweep, Version::GpuHostArrays).filter(|_| sweep.len() > 1);
    Plot::new(("tutorial_sweep", panel.kernel))
        .height(height - 20.0)
        .legend(Legend::default().position(Corner::LeftTop))
        .x_axis_label("n (log scale: log10 n)")
        .y_axis_label("seconds per run (log scale)")
        .x_axis_formatter(log_count_mark)
        .y_axis_formatter(log_seconds_mark)
        .y_axis_min_width(56.0)
        .show(ui, |plot| {
            for version in Version::ALL {
                let points: Vec<[f64; 2]> = sweep
                    .iter()
                    .filter_map(|run| {
                        version
                            .stats(&run.timings)
                            .filter(|s| s.mean_s > 0.0)
                            .map(|s| [(run.n as f64).log10(), s.mean_s.log10()])
                    })
                    .collect();
                if points.is_empty() {
                    continue;
                }
                plot.line(
                    Line::new(version.short(), PlotPoints::from(points.clone()))
                        .color(version.color())
                        .width(2.0),
                );
                plot.points(
                    Points::new(version.short(), PlotPoints::from(points))
                        .color(version.color())
                        .shape(MarkerShape::Circle)
                        .radius(3.0),
                );
            }
            if let Some(n) = host_win {
                plot.vline(
                    VLine::new("GPU (host arrays) wins", (n as f64).log10())
                        .color(Version::GpuHostArrays.color())
                        .style(egui_plot::LineStyle::dashed_loose()),
                );
            }
        });
}

/// What the sweep shows, in a sentence: where the GPU starts to win, or why nothing is drawn.
fn sweep_caption(sweep: &[KernelRun], status: &Status, running_sweep: bool) -> String {
    if sweep.is_empty() {
        if running_sweep {
            "sweeping…".to_string()
        } else {
            "press Sweep sizes to run every version from 1k up to n".to_string()
        }
    } else if sweep.len() < 2 {
        "one size only: sweep to see where the GPU starts to win".to_string()
    } else if status.gpu_name.is_none() && sweep.iter().all(|r| r.timings.gpu_host_arrays.is_none())
    {
        "no GPU here: only the CPU lines are drawn".to_string()
    } else {
        match (
            gpu_wins_from(sweep, Version::GpuHostArrays),
            gpu_wins_from(sweep, Version::GpuDeviceResident),
        ) {
            (Some(host), Some(resident)) if host == sweep[0].n => format!(
                "the GPU wins at every swept size (from n = {}), with host arrays too",
                format_count(host.min(resident))
            ),
            (Some(host), Some(resident)) => format!(
                "the GPU wins from n ≈ {} with host arrays, from n ≈ {} when the data stays on it",
                format_count(host),
                format_count(resident)
            ),
            (None, Some(resident)) => format!(
                "with host arrays the GPU never wins here (the copies cost more); kept on the device it wins from n ≈ {}",
                format_count(resident)
            ),
            (Some(host), None) => format!("the GPU wins from n ≈ {}", format_count(host)),
            (None, None) => "the GPU does not beat the CPU at these sizes".to_string(),
        }
    }
}

/// A framed empty area of a plot's size with a short text, for plots with nothing to draw.
pub fn empty_plot_ui(ui: &mut egui::Ui, height: f32, text: &str) {
    let size = egui::vec2(ui.available_width(), height.max(40.0));
    let (rect, _) = ui.allocate_exact_size(size, egui::Sense::hover());
    let visuals = ui.visuals();
    ui.painter()
        .rect_filled(rect, 4.0, visuals.extreme_bg_color);
    ui.painter().text(
        rect.center(),
        egui::Align2::CENTER_CENTER,
        text,
        egui::FontId::proportional(15.0),
        visuals.weak_text_color(),
    );
}
