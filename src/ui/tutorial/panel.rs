//! What the three panels share: the controls, the `%timeit` table, the stacked bars of upload /
//! kernel / download, and the log-log size sweep that shows where the GPU starts to win.

use std::fmt;

use eframe::egui::{self, Color32, RichText};
use egui_plot::{
    AxisHints, Bar, BarChart, Corner, GridMark, Legend, Line, MarkerShape, Plot, PlotPoints,
    Points, VLine,
};

use crate::tutorial::{
    format_seconds, CpuRuns, KernelRun, KernelTimings, TimingStats, TutorialKernel,
};
use crate::ui::worker::Level;

use super::worker::{JobProgress, Visual};
use super::{format_count, PanelState};

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
    pub gpu_note: Option<String>,
    /// Whether the thread said which it is yet.
    pub gpu_known: bool,
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

/// One of the four versions a panel compares.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Version {
    /// The CPU, one thread.
    CpuOneThread,
    /// The CPU, all threads.
    CpuAllThreads,
    /// The GPU with host arrays: upload + kernel + download.
    GpuHostArrays,
    /// The GPU with the arrays already on the device: kernel only.
    GpuDeviceResident,
}

impl Version {
    /// Every version, in the order of the table.
    pub const ALL: [Self; 4] = [
        Self::CpuOneThread,
        Self::CpuAllThreads,
        Self::GpuHostArrays,
        Self::GpuDeviceResident,
    ];

    /// Whether it runs on the GPU.
    pub fn is_gpu(self) -> bool {
        matches!(self, Self::GpuHostArrays | Self::GpuDeviceResident)
    }

    /// The timings of this version per run (the whole upload + kernel + download for host
    /// arrays), if it ran.
    pub fn stats(self, timings: &KernelTimings) -> Option<&TimingStats> {
        match self {
            Self::CpuOneThread => timings.cpu_one_thread.as_ref(),
            Self::CpuAllThreads => timings.cpu_all_threads.as_ref(),
            Self::GpuHostArrays => timings.gpu_host_arrays.as_ref().map(|h| &h.total),
            Self::GpuDeviceResident => timings.gpu_device_resident.as_ref(),
        }
    }

    /// Mean seconds of upload, kernel (or CPU compute) and download, if it ran.
    pub fn split(self, timings: &KernelTimings) -> Option<[f64; 3]> {
        match self {
            Self::GpuHostArrays => timings
                .gpu_host_arrays
                .as_ref()
                .map(|h| [h.upload.mean_s, h.kernel.mean_s, h.download.mean_s]),
            _ => self.stats(timings).map(|s| [0.0, s.mean_s, 0.0]),
        }
    }

    /// The colour of its line in the sweep.
    pub fn color(self) -> Color32 {
        match self {
            Self::CpuOneThread => Color32::from_rgb(150, 150, 150),
            Self::CpuAllThreads => Color32::from_rgb(110, 190, 90),
            Self::GpuHostArrays => Color32::from_rgb(240, 150, 50),
            Self::GpuDeviceResident => Color32::from_rgb(225, 70, 70),
        }
    }

    /// A short name for the bars' axis.
    pub fn short(self) -> &'static str {
        match self {
            Self::CpuOneThread => "CPU 1 thread",
            Self::CpuAllThreads => "CPU all threads",
            Self::GpuHostArrays => "GPU host arrays",
            Self::GpuDeviceResident => "GPU on device",
        }
    }
}

impl fmt::Display for Version {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::CpuOneThread => "CPU, one thread",
            Self::CpuAllThreads => "CPU, all threads",
            Self::GpuHostArrays => "GPU, host arrays (upload + kernel + download)",
            Self::GpuDeviceResident => "GPU, device-resident (kernel only)",
        })
    }
}

/// The parts of a run's time in the stacked bars.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Part {
    /// Copying the inputs to the GPU.
    Upload,
    /// The kernel (or the CPU loop).
    Compute,
    /// Copying the output back.
    Download,
}

impl Part {
    /// Every part, in the order they are stacked.
    pub const ALL: [Self; 3] = [Self::Upload, Self::Compute, Self::Download];

    /// Its colour.
    pub fn color(self) -> Color32 {
        match self {
            Self::Upload => Color32::from_rgb(170, 110, 230),
            Self::Compute => Color32::from_rgb(80, 150, 235),
            Self::Download => Color32::from_rgb(235, 120, 190),
        }
    }
}

impl fmt::Display for Part {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::Upload => "upload",
            Self::Compute => "kernel / compute",
            Self::Download => "download",
        })
    }
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
             The GPU draws its own numbers (Philox) and returns one count: no arrays to copy."
        }
    }
}

/// The controls: size, seed, repeats, CPU versions, Run / Cancel with progress, sweep, export.
pub fn controls_ui(ui: &mut egui::Ui, panel: &mut PanelState, status: &Status) -> Action {
    let mut action = Action::None;
    let busy = status.running.is_some();
    ui.heading(panel.kernel.title());
    ui.add_space(4.0);

    ui.label(RichText::new("Size").strong());
    ui.horizontal(|ui| {
        let label = ui.label("n");
        let max = panel.max_n();
        // A drag changes n by about 1% per point, so any size is a short drag away.
        let speed = (panel.n as f64 * 0.01).max(1.0);
        ui.add(
            egui::DragValue::new(&mut panel.n)
                .range(1_000..=max)
                .speed(speed)
                .custom_formatter(|v, _| format!("{}", v as u64)),
        )
        .labelled_by(label.id)
        .on_hover_text(match panel.kernel {
            TutorialKernel::MonteCarloPi => "samples: none are stored, so billions fit",
            _ => "elements: inputs and outputs are float32 arrays of this length",
        });
        ui.label(RichText::new(format_count(panel.n)).weak());
    });
    cost_ui(ui, panel, status.gpu_name.is_some());
    ui.horizontal_wrapped(|ui| {
        for &n in panel.presets() {
            if ui
                .selectable_label(panel.n == n, format_count(n))
                .on_hover_text(format!("n = {n}"))
                .clicked()
            {
                panel.n = n;
            }
        }
    });
    ui.horizontal(|ui| {
        let label = ui.label("seed");
        ui.add(egui::DragValue::new(&mut panel.seed))
            .labelled_by(label.id);
        let label = ui.label("repeats");
        ui.add(egui::DragValue::new(&mut panel.repeats).range(1..=100))
            .labelled_by(label.id)
            .on_hover_text("timed runs of each version: %timeit's \"runs\"");
    });
    egui::ComboBox::from_label("CPU versions")
        .selected_text(cpu_text(panel.cpu))
        .show_ui(ui, |ui| {
            for choice in CpuRuns::ALL {
                ui.selectable_value(&mut panel.cpu, choice, cpu_text(choice));
            }
        });
    if panel.kernel == TutorialKernel::Gaussian {
        ui.horizontal(|ui| {
            let label = ui.label("mean");
            ui.add(
                egui::DragValue::new(&mut panel.params.mean)
                    .speed(0.05)
                    .range(-3.0..=3.0),
            )
            .labelled_by(label.id);
            let label = ui.label("sigma");
            ui.add(
                egui::DragValue::new(&mut panel.params.sigma)
                    .speed(0.02)
                    .range(0.05..=5.0),
            )
            .labelled_by(label.id);
        });
    }
    ui.add_space(6.0);
    ui.horizontal(|ui| {
        let run = ui
            .add_enabled(
                !busy,
                egui::Button::new(RichText::new("Run").strong()).min_size([70.0, 24.0].into()),
            )
            .on_hover_text("time every version at this size");
        if run.clicked() {
            action = Action::Run;
        }
        if ui.add_enabled(busy, egui::Button::new("Cancel")).clicked() {
            action = Action::Cancel;
        }
    });
    if let Some((kernel, sweep)) = status.running {
        let (text, fraction) = match &status.progress {
            Some(progress) => (progress.text(), progress.fraction()),
            None => ("starting".to_string(), 0.0),
        };
        let what = if sweep { "sweep" } else { "run" };
        let owner = if kernel == panel.kernel {
            String::new()
        } else {
            format!("{} {what}: ", kernel.title())
        };
        ui.add(
            egui::ProgressBar::new(fraction)
                .text(format!("{owner}{text} ({:.0}%)", fraction * 100.0)),
        );
    }
    ui.add_space(6.0);
    ui.separator();
    ui.label(RichText::new("Size sweep").strong());
    ui.horizontal(|ui| {
        let label = ui.label("sizes per decade");
        ui.add(egui::DragValue::new(&mut panel.sweep_per_decade).range(1..=5))
            .labelled_by(label.id);
        let label = ui.label("repeats");
        ui.add(egui::DragValue::new(&mut panel.sweep_repeats).range(1..=20))
            .labelled_by(label.id);
    });
    let top = panel.n.max(10_000);
    if ui
        .add_enabled(!busy, egui::Button::new("Sweep sizes"))
        .on_hover_text(format!(
            "run every version at sizes from 1k to {} (log-spaced)",
            format_count(top)
        ))
        .clicked()
    {
        action = Action::Sweep;
    }
    ui.label(RichText::new(format!("from 1k up to n = {}", format_count(top))).weak());
    ui.add_space(6.0);
    ui.separator();
    ui.label(RichText::new("GPU of this machine").strong());
    match (&status.gpu_name, &status.gpu_note) {
        (Some(name), _) => {
            ui.label(name.as_str());
        }
        (None, Some(note)) => {
            ui.label(
                RichText::new(format!("no GPU columns: {note}"))
                    .color(Color32::from_rgb(230, 170, 60)),
            );
        }
        (None, None) if status.gpu_known => {
            ui.label("CPU only (the backend setting is CPU)");
        }
        (None, None) => {
            ui.horizontal(|ui| {
                ui.spinner();
                ui.label("opening the GPU…");
            });
        }
    }
    ui.add_space(6.0);
    ui.separator();
    if ui
        .add_enabled(
            panel.outcome.is_some() || !panel.sweep.is_empty(),
            egui::Button::new("Export timings"),
        )
        .on_hover_text(
            "write the run's and the sweep's timings as CSV and JSON into the export folder",
        )
        .clicked()
    {
        action = Action::Export;
    }
    action
}

/// Seconds per Monte Carlo sample on one CPU thread, measured once.
fn pi_seconds_per_sample() -> f64 {
    static MEASURED: std::sync::OnceLock<f64> = std::sync::OnceLock::new();
    *MEASURED
        .get_or_init(|| crate::tutorial::mc_pi::estimate_cpu_seconds_per_sample().as_secs_f64())
}

/// A rough duration: `45 ms`, `3.2 s`, `4 min`, `2.5 h`.
pub fn about_seconds(seconds: f64) -> String {
    let two = |value: f64| {
        if value >= 10.0 {
            format!("{value:.0}")
        } else {
            format!("{value:.1}")
        }
    };
    if seconds >= 7200.0 {
        format!("{} h", two(seconds / 3600.0))
    } else if seconds >= 120.0 {
        format!("{} min", two(seconds / 60.0))
    } else if seconds >= 1.0 {
        format!("{} s", two(seconds))
    } else if seconds >= 1e-3 {
        format!("{} ms", two(seconds * 1e3))
    } else {
        format!("{} µs", two(seconds * 1e6))
    }
}

/// What the size costs before it runs: host memory for the array kernels (against what is
/// free), the time of one CPU thread for pi.
fn cost_ui(ui: &mut egui::Ui, panel: &PanelState, gpu: bool) {
    let warn = Color32::from_rgb(230, 170, 60);
    match panel.kernel {
        TutorialKernel::MonteCarloPi => {
            if panel.cpu.one_thread() {
                let seconds = pi_seconds_per_sample() * panel.n as f64 * f64::from(panel.repeats);
                let text = format!(
                    "one CPU thread: about {} for {} runs",
                    about_seconds(seconds),
                    panel.repeats
                );
                let text = RichText::new(text);
                ui.label(if seconds > 30.0 {
                    text.color(warn)
                } else {
                    text.weak()
                })
                .on_hover_text("measured on 65536 samples; pick \"all threads only\" for billions");
            } else {
                ui.label(RichText::new("no sample is stored: any n fits in memory").weak());
            }
        }
        kernel => {
            let inputs = if kernel == TutorialKernel::HiddenLayer {
                2
            } else {
                1
            };
            let outputs = u64::from(panel.cpu != CpuRuns::Skip) + u64::from(gpu);
            let needed = panel.n.saturating_mul(4 * (inputs + outputs));
            match crate::memory::host_available_bytes() {
                Some(free) if needed > free as u64 => {
                    ui.label(
                        RichText::new(format!(
                            "needs {} of memory, {} free: Run will be refused",
                            format_bytes(needed),
                            format_bytes(free as u64)
                        ))
                        .color(warn),
                    );
                }
                free => {
                    let free = free
                        .map(|f| format!(" of {} free", format_bytes(f as u64)))
                        .unwrap_or_default();
                    ui.label(
                        RichText::new(format!("float32 arrays: {}{free}", format_bytes(needed)))
                            .weak(),
                    );
                }
            }
        }
    }
}

fn cpu_text(choice: CpuRuns) -> &'static str {
    match choice {
        CpuRuns::Both => "one thread and all threads",
        CpuRuns::AllThreads => "all threads only",
        CpuRuns::OneThread => "one thread only",
        CpuRuns::Skip => "none (GPU only)",
    }
}

/// The middle of the panel: notice, timings table and bars, then the sweep and the results.
pub fn body_ui(ui: &mut egui::Ui, panel: &PanelState, status: &Status) {
    ui.label(RichText::new(intro(panel.kernel)).italics());
    if let Some(notice) = &panel.notice {
        let color = match notice.level {
            Level::Info => ui.visuals().text_color(),
            Level::Warning => Color32::from_rgb(230, 170, 60),
            Level::Error => Color32::from_rgb(240, 90, 80),
        };
        egui::Frame::group(ui.style()).show(ui, |ui| {
            ui.label(RichText::new(&notice.text).color(color));
        });
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
    if width >= 1050.0 {
        ui.horizontal_top(|ui| {
            ui.allocate_ui_with_layout(
                egui::vec2(width * 0.56, 190.0),
                egui::Layout::top_down(egui::Align::Min),
                |ui| timings_table_ui(ui, run, status),
            );
            ui.allocate_ui_with_layout(
                egui::vec2(ui.available_width(), 190.0),
                egui::Layout::top_down(egui::Align::Min),
                |ui| bars_ui(ui, run),
            );
        });
    } else {
        // A narrow window: the table above the bars.
        timings_table_ui(ui, run, status);
        bars_ui(ui, run);
    }
    ui.add_space(2.0);
    agreement_ui(ui, run, &outcome.visual);
    ui.separator();
    let height = (ui.available_height() - 30.0).max(260.0);
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

/// The `%timeit` table: one row per version with mean ± std and the upload / kernel /
/// download split, and the speed-up over one CPU thread.
fn timings_table_ui(ui: &mut egui::Ui, run: &KernelRun, status: &Status) {
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
                let name = match version {
                    Version::CpuAllThreads => format!("CPU, all {} threads", timings.cpu_threads),
                    Version::GpuHostArrays => "GPU, host arrays".to_string(),
                    Version::GpuDeviceResident => "GPU, device-resident".to_string(),
                    Version::CpuOneThread => "CPU, one thread".to_string(),
                };
                ui.label(RichText::new(name).color(version.color()))
                    .on_hover_text(version.to_string());
                match (version.stats(timings), version.split(timings)) {
                    (Some(stats), Some(split)) => {
                        ui.label(RichText::new(stats.display()).strong());
                        if version == Version::GpuHostArrays {
                            for part in split {
                                ui.label(format_seconds(part));
                            }
                        } else {
                            ui.label("—");
                            ui.label(format_seconds(split[1]));
                            ui.label("—");
                        }
                        match baseline {
                            Some(base) if stats.mean_s > 0.0 => {
                                ui.label(format!("{:.1}×", base / stats.mean_s));
                            }
                            _ => {
                                ui.label("—");
                            }
                        }
                    }
                    _ => {
                        let why = if version.is_gpu() {
                            match &status.gpu_note {
                                Some(note) => format!("not run: {}", short_note(note)),
                                None => "not run: no GPU".to_string(),
                            }
                        } else {
                            "not run (see CPU versions)".to_string()
                        };
                        ui.label(RichText::new(why).weak())
                            .on_hover_text(status.gpu_note.clone().unwrap_or_default());
                    }
                }
                ui.end_row();
            }
        });
    if let Some(host) = timings
        .gpu_host_arrays
        .as_ref()
        .filter(|h| !h.wall.runs_s.is_empty())
    {
        ui.label(
            RichText::new(format!(
                "host arrays as a Python caller sees them (wall clock): {}",
                host.wall.display()
            ))
            .weak(),
        );
    }
}

/// The first clause of a fallback note, short enough for a table cell (the whole note is on
/// the left and on hover).
fn short_note(note: &str) -> String {
    let note = note.trim_start_matches("using the CPU only: ");
    let first = note.split(':').next().unwrap_or(note).trim();
    let mut short: String = first.chars().take(36).collect();
    if first.chars().count() > 36 {
        short.push('…');
    }
    short
}

/// Seconds in the unit that suits `largest`: (factor, unit name).
fn time_unit(largest: f64) -> (f64, &'static str) {
    if largest >= 1.0 {
        (1.0, "s")
    } else if largest >= 1e-3 {
        (1e3, "ms")
    } else if largest >= 1e-6 {
        (1e6, "µs")
    } else {
        (1e9, "ns")
    }
}

/// Stacked horizontal bars: upload / kernel (or CPU compute) / download of each version.
fn bars_ui(ui: &mut egui::Ui, run: &KernelRun) {
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
    Plot::new("tutorial_bars")
        .height(160.0)
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
            if (mark.value - index).abs() > 1e-6 || !(0.0..=3.0).contains(&index) {
                return String::new();
            }
            Version::ALL[Version::ALL.len() - 1 - index as usize]
                .short()
                .to_string()
        })
        .include_x(0.0)
        .include_y(-0.5)
        .include_y(3.5)
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
fn agreement_ui(ui: &mut egui::Ui, run: &KernelRun, visual: &Visual) {
    ui.horizontal_wrapped(|ui| {
        match (run.max_abs_difference_gpu_cpu, visual) {
            (Some(diff), Visual::Pi { .. }) => {
                ui.label(format!(
                    "GPU vs CPU: the counts differ by {diff:.0} (same Philox streams)."
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
                "With host arrays {copies:.1}% of the GPU's time is copying, {kernel:.1}% computing \
                 ({} moved per run).",
                format_bytes(run.transfer_bytes)
            ));
        }
    });
}

/// Bytes for people: `16 bytes`, `12 MB`, `800 MB`, `1.6 GB`.
pub fn format_bytes(bytes: u64) -> String {
    let b = bytes as f64;
    if bytes < 1_000 {
        format!("{bytes} bytes")
    } else if b < 1e6 {
        format!("{:.1} kB", b / 1e3)
    } else if b < 1e9 {
        format!("{:.0} MB", b / 1e6)
    } else {
        format!("{:.1} GB", b / 1e9)
    }
}

/// The smallest swept size from which `version` beats the best CPU version at every larger
/// swept size, if it ever does.
pub fn gpu_wins_from(sweep: &[KernelRun], version: Version) -> Option<u64> {
    let mut from = None;
    for run in sweep {
        let best_cpu = [Version::CpuOneThread, Version::CpuAllThreads]
            .iter()
            .filter_map(|v| v.stats(&run.timings).map(|s| s.mean_s))
            .fold(f64::INFINITY, f64::min);
        let gpu = version.stats(&run.timings).map(|s| s.mean_s)?;
        if !best_cpu.is_finite() {
            return None;
        }
        if gpu < best_cpu {
            from.get_or_insert(run.n);
        } else {
            from = None;
        }
    }
    from
}

/// A log10 axis mark of a count as the count it stands for (`1k`, `1M`).
pub fn log_count_mark(mark: GridMark, _: &std::ops::RangeInclusive<f64>) -> String {
    if (mark.value - mark.value.round()).abs() < 1e-6 {
        format_count(10f64.powf(mark.value).round() as u64)
    } else {
        String::new()
    }
}

fn log_seconds_mark(mark: GridMark, _: &std::ops::RangeInclusive<f64>) -> String {
    if (mark.value - mark.value.round()).abs() < 1e-6 {
        decade_seconds(mark.value.round() as i32)
    } else {
        String::new()
    }
}

/// `10^exponent` seconds as `100 ms`, `1 µs`, `10 s`.
pub fn decade_seconds(exponent: i32) -> String {
    let (unit, base) = match exponent {
        e if e >= 0 => ("s", 0),
        -3..=-1 => ("ms", -3),
        -6..=-4 => ("µs", -6),
        _ => ("ns", -9),
    };
    let value = 10f64.powi(exponent - base);
    format!("{value} {unit}")
}

/// A log10 axis mark as the number it stands for (`0.01`, `1e-5`).
pub fn log_value_mark(mark: GridMark, _: &std::ops::RangeInclusive<f64>) -> String {
    let exponent = mark.value.round();
    if (mark.value - exponent).abs() > 1e-6 {
        String::new()
    } else if (-3.0..=3.0).contains(&exponent) {
        format!("{}", 10f64.powi(exponent as i32))
    } else {
        format!("1e{exponent:.0}")
    }
}

/// The sweep: seconds per run against n for each version, both on log scales.
fn sweep_plot_ui(ui: &mut egui::Ui, panel: &PanelState, status: &Status, height: f32) {
    ui.label(RichText::new("size sweep: time per run against n (log-log)").strong());
    let sweep = &panel.sweep;
    let running_sweep = status.running == Some((panel.kernel, true));
    let caption = if sweep.is_empty() {
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
    };
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tutorial::mc_pi::PiEstimate;
    use crate::tutorial::{GpuHostArraysTimings, KernelSummary};

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
                gpu_device_resident: gpu.map(|[_, device]| stats(device)),
                gpu_device_resident_wall: None,
            },
            max_abs_difference_gpu_cpu: None,
            transfer_bytes: 16,
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
        assert_eq!(Version::ALL.len(), 4);
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
