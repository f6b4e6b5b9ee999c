//! What the three tutorial panels share: the controls on the left, and in the middle the
//! `%timeit` table, the stacked bars of upload / kernel / download, the agreement line, the
//! log-log size sweep that shows where the GPU starts to win, and the kernel's own results.

pub mod controls;
pub mod plots;
pub mod versions;

use std::fmt;

use eframe::egui::{self, Color32, RichText};

use heatlab_engine::error::CudaUnavailable;
use heatlab_engine::tutorial::TutorialKernel;

use super::super::notice::notice_label;
pub use super::format::{
    about_seconds, decade_seconds, format_bytes, log_count_mark, log_value_mark,
};
use super::PanelState;
pub use controls::controls_ui;
use heatlab_engine::session::tutorial::jobs::{JobProgress, Visual};
pub use plots::empty_plot_ui;
use plots::{agreement_ui, bars_ui, sweep_plot_ui, timings_table_ui};
pub use versions::{gpu_wins_from, Part, Version};

/// What the UI knows of the tutorial thread, for drawing.
#[derive(Debug, Clone)]
pub struct Status {
    /// The kernel in flight and whether it is a sweep.
    pub running: Option<(TutorialKernel, bool)>,
    /// Where it stands.
    pub progress: Option<JobProgress>,
    /// The GPU's name.
    pub gpu_name: Option<String>,
    /// Why there is no GPU.
    pub gpu_note: Option<GpuNote>,
    /// Whether the thread said which it is yet.
    pub gpu_known: bool,
}

/// Why a panel has no GPU columns.
#[derive(Debug, Clone, PartialEq)]
pub enum GpuNote {
    /// CUDA cannot be used here.
    Cuda(CudaUnavailable),
    /// The tutorial thread could not start or has stopped.
    Thread(String),
}

impl GpuNote {
    /// A few words for a table cell; the whole note is shown beside the controls.
    pub fn short(&self) -> &str {
        match self {
            Self::Cuda(reason) => reason.summary(),
            Self::Thread(_) => "the tutorial thread stopped",
        }
    }
}

impl fmt::Display for GpuNote {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Cuda(reason) => write!(f, "CUDA is not available: {reason}"),
            Self::Thread(text) => f.write_str(text),
        }
    }
}

/// What a button of the controls asked for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Action {
    /// Nothing.
    None,
    /// Run the kernel once at the panel's size.
    Run,
    /// Run the size sweep.
    Sweep,
    /// Stop the job in flight.
    Cancel,
    /// Write the timings as CSV and JSON.
    Export,
    /// Show the recorded run at the typed path.
    LoadRecorded,
}

/// One sentence on what the kernel computes and what to look for.
fn intro(kernel: TutorialKernel) -> &'static str {
    match kernel {
        TutorialKernel::HiddenLayer => {
            "tanh(greyscale / 255 × weight) for every neuron, greyscales uniform in [0, 255), \
             weights normal(0.5, 0.1). Little arithmetic per byte: the copies decide."
        }
        TutorialKernel::Gaussian => {
            "exp(-((x - mean) / sigma)² / 2) / (sigma √(2π)) over x uniform in [-3, 3). \
             Moving the points to the GPU and the values back costs more than computing them."
        }
        TutorialKernel::MonteCarloPi => {
            "4 × the fraction of random points of the unit square inside the quarter circle. \
             The GPU draws its own numbers (MWC64X) and returns one count: no arrays to copy."
        }
    }
}

/// The least height of the sweep and result plots at the bottom (a smaller window scrolls).
const MIN_RESULT_PLOT_HEIGHT: f32 = 200.0;

/// The middle of the panel: notice, timings table and bars, then the sweep and the results.
pub fn body_ui(ui: &mut egui::Ui, panel: &PanelState, status: &Status) {
    ui.label(RichText::new(intro(panel.kernel)).italics());
    if let Some(notice) = &panel.notice {
        egui::Frame::group(ui.style()).show(ui, |ui| notice_label(ui, notice));
    }
    ui.add_space(4.0);
    let Some(outcome) = &panel.outcome else {
        ui.add_space(20.0);
        ui.label(
            RichText::new("Press Run to time the four versions; then Sweep sizes to see where the GPU starts to win.")
                .size(16.0),
        );
        if !panel.sweep.is_empty() {
            sweep_plot_ui(ui, panel, status, 300.0);
        }
        return;
    };
    let run = &outcome.run;
    if let Some(source) = &outcome.recorded {
        ui.label(
            RichText::new(format!(
                "Recorded run from {}{}: its timings are those of that machine; the plots are \
                 recomputed here from its seed. Run to time this machine.",
                source.display(),
                run.gpu
                    .as_ref()
                    .map(|g| format!(" ({g})"))
                    .unwrap_or_default()
            ))
            .color(Color32::from_rgb(120, 180, 240)),
        );
    }
    let width = ui.available_width();
    // Side by side only where the table (about 700 points) and the bars both fit: a table
    // wider than its share widens the panel past the window and cuts off the right edge.
    if width >= 1250.0 {
        ui.horizontal_top(|ui| {
            ui.allocate_ui_with_layout(
                egui::vec2(width - 480.0, 190.0),
                egui::Layout::top_down(egui::Align::Min),
                |ui| timings_table_ui(ui, run, status),
            );
            ui.allocate_ui_with_layout(
                egui::vec2(ui.available_width(), 190.0),
                egui::Layout::top_down(egui::Align::Min),
                |ui| bars_ui(ui, run, 190.0),
            );
        });
    } else {
        // A narrow window: the table above lower bars, leaving the plots below room to show
        // whole in a window 720 points tall.
        timings_table_ui(ui, run, status);
        bars_ui(ui, run, 150.0);
    }
    ui.add_space(2.0);
    agreement_ui(ui, run, &outcome.visual);
    ui.separator();
    let height = (ui.available_height() - 30.0).max(MIN_RESULT_PLOT_HEIGHT);
    match &outcome.visual {
        Visual::Pi { .. } => {
            ui.columns(3, |columns| {
                sweep_plot_ui(&mut columns[0], panel, status, height);
                super::mc_pi::error_plot_ui(&mut columns[1], panel, height);
                super::mc_pi::scatter_ui(&mut columns[2], &outcome.visual, height);
            });
        }
        visual => {
            ui.columns(2, |columns| {
                sweep_plot_ui(&mut columns[0], panel, status, height);
                match visual {
                    Visual::Histogram { .. } => {
                        super::hidden_layer::histogram_ui(&mut columns[1], visual, height);
                    }
                    _ => super::gaussian::curve_ui(&mut columns[1], outcome, height),
                }
            });
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use heatlab_engine::tutorial::mc_pi::PiEstimate;
    use heatlab_engine::tutorial::{GpuHostArraysTimings, KernelSummary};
    use heatlab_engine::tutorial::{KernelRun, KernelTimings, TimingStats};

    fn stats(mean_s: f64) -> TimingStats {
        TimingStats::from_runs(vec![mean_s])
    }

    /// A run of `n` with CPU (one thread, all threads) and GPU (host total, device) times.
    fn run(n: u64, cpu: [f64; 2], gpu: Option<[f64; 2]>) -> KernelRun {
        KernelRun {
            kernel: TutorialKernel::MonteCarloPi,
            n,
            seed: 1,
            repeats: 1,
            gpu: gpu.map(|_| "test GPU".to_string()),
            result: KernelSummary::MonteCarloPi(PiEstimate::new(n * 3 / 4, n)),
            timings: KernelTimings {
                cpu_one_thread: Some(stats(cpu[0])),
                cpu_all_threads: Some(stats(cpu[1])),
                cpu_threads: 2,
                gpu_host_arrays: gpu.map(|[host, _]| GpuHostArraysTimings {
                    upload: stats(host * 0.4),
                    kernel: stats(host * 0.2),
                    download: stats(host * 0.4),
                    total: stats(host),
                    wall: stats(host),
                }),
                gpu_pinned_arrays: None,
                gpu_pinned_overlapped: None,
                pinned_equals_pageable: None,
                pinned_note: None,
                gpu_device_resident: gpu.map(|[_, device]| stats(device)),
                gpu_device_resident_wall: None,
                device_resident_launches_per_timing: 1,
            },
            max_abs_difference_gpu_cpu: None,
            transfer_bytes: 16,
            gpu_kernel: None,
        }
    }

    #[test]
    fn the_gpu_wins_from_the_first_size_after_which_it_stays_ahead() {
        let sweep = vec![
            run(1_000, [1e-5, 2e-5], Some([5e-5, 5e-6])),
            // Ahead once, then behind again: that does not count.
            run(10_000, [1e-4, 9e-5], Some([8e-5, 6e-6])),
            run(100_000, [1e-3, 6e-4], Some([7e-4, 8e-6])),
            run(1_000_000, [1e-2, 6e-3], Some([2e-3, 2e-5])),
            run(10_000_000, [1e-1, 6e-2], Some([1e-2, 1e-4])),
        ];
        assert_eq!(
            gpu_wins_from(&sweep, Version::GpuHostArrays),
            Some(1_000_000)
        );
        assert_eq!(
            gpu_wins_from(&sweep, Version::GpuDeviceResident),
            Some(1_000)
        );
        // Never ahead at the largest size: no crossover.
        let behind = vec![run(1_000, [1e-5, 1e-5], Some([1e-4, 1e-6]))];
        assert_eq!(gpu_wins_from(&behind, Version::GpuHostArrays), None);
        // No GPU at all.
        let cpu_only = vec![run(1_000, [1e-5, 1e-5], None)];
        assert_eq!(gpu_wins_from(&cpu_only, Version::GpuHostArrays), None);
    }

    #[test]
    fn versions_split_their_time_into_upload_kernel_download() {
        let run = run(1_000, [3.0, 2.0], Some([1.0, 0.1]));
        assert_eq!(
            Version::CpuOneThread.split(&run.timings),
            Some([0.0, 3.0, 0.0])
        );
        let host = Version::GpuHostArrays.split(&run.timings).unwrap();
        assert!((host.iter().sum::<f64>() - 1.0).abs() < 1e-12);
        assert_eq!(
            Version::GpuDeviceResident
                .stats(&run.timings)
                .unwrap()
                .mean_s,
            0.1
        );
        assert_eq!(Version::ALL.len(), 5);
        assert_eq!(
            Part::ALL.map(|p| p.to_string()),
            ["upload", "kernel / compute", "download"]
        );
    }

    #[test]
    fn axis_marks_and_sizes_read_as_numbers() {
        assert_eq!(decade_seconds(0), "1 s");
        assert_eq!(decade_seconds(-2), "10 ms");
        assert_eq!(decade_seconds(-4), "100 µs");
        assert_eq!(decade_seconds(-9), "1 ns");
        assert_eq!(decade_seconds(2), "100 s");
        assert_eq!(about_seconds(0.045), "45 ms");
        assert_eq!(about_seconds(3.21), "3.2 s");
        assert_eq!(about_seconds(600.0), "10 min");
        assert_eq!(about_seconds(9000.0), "2.5 h");
        assert_eq!(format_bytes(16), "16 bytes");
        assert_eq!(format_bytes(12_000_000), "12 MB");
        assert_eq!(format_bytes(1_600_000_000), "1.6 GB");
    }
}
