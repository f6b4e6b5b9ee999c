//! The controls on the left of a tutorial panel: size, seed, repeats and CPU versions, Run and
//! Cancel with progress, the sweep, the GPU of this machine, export. Each group is a function;
//! buttons return an [`Action`] for the panels to apply.

use eframe::egui::{self, RichText};

use heatlab_engine::tutorial::{CpuRuns, TutorialKernel};

use super::super::super::notice::WARNING;
use super::super::format::format_count;
use super::super::format::{about_seconds, format_bytes};
use super::super::PanelState;
use super::{Action, Status};

/// The controls: size, seed, repeats, CPU versions, Run / Cancel with progress, sweep, export.
pub fn controls_ui(ui: &mut egui::Ui, panel: &mut PanelState, status: &Status) -> Action {
    let mut action = Action::None;
    let busy = status.running.is_some();
    ui.heading(panel.kernel.title());
    ui.add_space(4.0);
    size_ui(ui, panel, status);
    inputs_ui(ui, panel);
    ui.add_space(6.0);
    run_ui(ui, panel, status, &mut action);
    ui.add_space(6.0);
    ui.separator();
    sweep_ui(ui, panel, busy, &mut action);
    ui.add_space(6.0);
    ui.separator();
    gpu_ui(ui, status);
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

/// n with its presets and what it costs.
fn size_ui(ui: &mut egui::Ui, panel: &mut PanelState, status: &Status) {
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
}

/// Seed, repeats, CPU versions, and the Gaussian's mean and sigma.
fn inputs_ui(ui: &mut egui::Ui, panel: &mut PanelState) {
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
}

/// Run and Cancel, and the progress of the job in flight (of any panel).
fn run_ui(ui: &mut egui::Ui, panel: &PanelState, status: &Status, action: &mut Action) {
    let busy = status.running.is_some();
    ui.horizontal(|ui| {
        let run = ui
            .add_enabled(
                !busy,
                egui::Button::new(RichText::new("Run").strong()).min_size([70.0, 24.0].into()),
            )
            .on_hover_text("time every version at this size");
        if run.clicked() {
            *action = Action::Run;
        }
        if ui.add_enabled(busy, egui::Button::new("Cancel")).clicked() {
            *action = Action::Cancel;
        }
    });
    let Some((kernel, sweep)) = status.running else {
        return;
    };
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
        egui::ProgressBar::new(fraction).text(format!("{owner}{text} ({:.0}%)", fraction * 100.0)),
    );
}

/// The sweep's sizes per decade, repeats and its button.
fn sweep_ui(ui: &mut egui::Ui, panel: &mut PanelState, busy: bool, action: &mut Action) {
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
        *action = Action::Sweep;
    }
    ui.label(RichText::new(format!("from 1k up to n = {}", format_count(top))).weak());
}

/// The GPU of this machine, or why there is none.
fn gpu_ui(ui: &mut egui::Ui, status: &Status) {
    ui.label(RichText::new("GPU of this machine").strong());
    match (&status.gpu_name, &status.gpu_note) {
        (Some(name), _) => {
            ui.label(name.as_str());
        }
        (None, Some(note)) => {
            ui.label(RichText::new(format!("no GPU columns: {note}")).color(WARNING));
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
}

/// Seconds per Monte Carlo sample on one CPU thread, measured once.
fn pi_seconds_per_sample() -> f64 {
    static MEASURED: std::sync::OnceLock<f64> = std::sync::OnceLock::new();
    *MEASURED.get_or_init(|| {
        heatlab_engine::tutorial::mc_pi::estimate_cpu_seconds_per_sample().as_secs_f64()
    })
}

/// What the size costs before it runs: host memory for the array kernels (against what is
/// free), the time of one CPU thread for pi.
fn cost_ui(ui: &mut egui::Ui, panel: &PanelState, gpu: bool) {
    let warn = WARNING;
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
            match heatlab_engine::memory::host_available_bytes() {
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
