//! The kernel section of the diffusion view's side panel: the GPU kernel that steps (each with
//! its one-line description, and why it cannot be chosen when it cannot), the tutorial
//! kernel's race explained, and "measure kernels": µs/step and % of the device copy's
//! bandwidth of every kernel on this device at the current size, measured on the simulation
//! thread exactly as `heatlab bench` measures.

use eframe::egui::{self, RichText};

use heatlab_engine::bench::BenchRow;
use heatlab_engine::compute::{BackendKind, KernelChoice};

use super::super::notice::WARNING;
use super::command::DiffusionCommand;
use super::SimState;
use crate::settings::Settings;

/// The last measurement of the kernels.
#[derive(Debug, Clone, Default)]
pub struct KernelTimings {
    /// The rows of the last measurement (the device copy first).
    pub rows: Vec<BenchRow>,
    /// Whether a measurement is running.
    pub measuring: bool,
}

impl KernelTimings {
    /// A measurement was asked for.
    pub fn started(&mut self) {
        self.measuring = true;
    }

    /// A measurement ended (no rows when it failed).
    pub fn finished(&mut self, rows: Vec<BenchRow>) {
        self.measuring = false;
        if !rows.is_empty() {
            self.rows = rows;
        }
    }

    /// The measured row of `choice`, if the last measurement has one.
    pub fn row_of(&self, choice: KernelChoice) -> Option<&BenchRow> {
        let name = choice.to_string();
        self.rows.iter().find(|row| row.variant == name)
    }
}

/// Why `choice` cannot be picked now, or `None`.
pub fn refusal(choice: KernelChoice, settings: &Settings, state: &SimState) -> Option<String> {
    if choice == KernelChoice::User && !state.backend.as_ref().is_some_and(|b| b.user_kernel) {
        return Some("compile and validate a kernel in the Kernel lab tab first".into());
    }
    let size = state.field_size.unwrap_or(settings.field.size);
    choice.unsupported_reason(size, settings.step.boundary)
}

/// The section: a selector, the chosen kernel's description and notes, and the measurements.
pub fn kernel_section_ui(
    ui: &mut egui::Ui,
    settings: &Settings,
    state: &SimState,
    commands: &mut Vec<DiffusionCommand>,
) {
    let on_gpu = state
        .backend
        .as_ref()
        .is_some_and(|b| b.kind == BackendKind::Cuda);
    let chosen = settings.kernel;
    // Folded by default: the side panel must fit a 1280x800 window down to its exports.
    egui::CollapsingHeader::new(RichText::new(format!("GPU kernel: {chosen}")).strong())
        .id_salt("gpu_kernel_section")
        .default_open(false)
        .show(ui, |ui| {
            selector_ui(ui, settings, state, commands);
            ui.label(RichText::new(chosen.description()).small());
            if !on_gpu {
                ui.weak(
                    "GPU kernels step only on the CUDA backend; the CPU steps with its own loop.",
                );
            }
            measurements_ui(ui, state, on_gpu, commands);
        });
    if !on_gpu && chosen != KernelChoice::Auto {
        ui.weak("(on the CPU backend the CPU's own loop steps: switch to CUDA to use it)");
    }
    if let Some(reason) = refusal(chosen, settings, state) {
        ui.colored_label(
            WARNING,
            format!("{chosen} cannot step now ({reason}): the auto kernel steps instead"),
        );
    }
    if chosen == KernelChoice::Tutorial {
        ui.colored_label(
            WARNING,
            RichText::new(KernelChoice::TUTORIAL_RACE_NOTE).small(),
        );
        if !settings.agreement_check {
            ui.weak("tick \"check against the CPU\" above to watch it drift");
        }
    }
}

/// The list of kernels, each with its description (and measurement) on hover; those that
/// cannot step now are greyed out with the reason.
fn selector_ui(
    ui: &mut egui::Ui,
    settings: &Settings,
    state: &SimState,
    commands: &mut Vec<DiffusionCommand>,
) {
    let chosen = settings.kernel;
    egui::ComboBox::from_label("kernel")
        .selected_text(chosen.to_string())
        .height(480.0)
        .show_ui(ui, |ui| {
            for choice in KernelChoice::all() {
                let refused = refusal(choice, settings, state);
                let mut hint = choice.description().to_string();
                if let Some(row) = state.kernel_timings.row_of(choice) {
                    hint += &format!("\n{}", measured_text(row));
                }
                if let Some(reason) = &refused {
                    hint += &format!("\nnot available: {reason}");
                }
                let button = egui::Button::selectable(chosen == choice, choice.to_string());
                let response = ui.add_enabled(refused.is_none(), button);
                let response = response
                    .on_hover_text(hint.clone())
                    .on_disabled_hover_text(hint);
                if response.clicked() && chosen != choice {
                    commands.push(DiffusionCommand::SetKernel(choice));
                }
            }
        });
}

fn measured_text(row: &BenchRow) -> String {
    let percent = row
        .percent_of_copy
        .map_or_else(String::new, |p| format!(", {p:.0}% of copy"));
    format!("{:.2} µs/step{percent}", row.us_per_step.mean)
}

/// "Measure kernels" and the table of the last measurement.
fn measurements_ui(
    ui: &mut egui::Ui,
    state: &SimState,
    on_gpu: bool,
    commands: &mut Vec<DiffusionCommand>,
) {
    let timings = &state.kernel_timings;
    ui.horizontal(|ui| {
        let ready = on_gpu && state.field_size.is_some() && !timings.measuring;
        if ui
            .add_enabled(ready, egui::Button::new("Measure kernels"))
            .on_hover_text(
                "time the device copy and every kernel on the current field, as `heatlab bench` \
                 does (the simulation waits meanwhile; the field is kept)",
            )
            .clicked()
        {
            commands.push(DiffusionCommand::MeasureKernels);
        }
        if timings.measuring {
            ui.spinner();
        }
    });
    if timings.rows.is_empty() {
        return;
    }
    let in_use = state
        .backend
        .as_ref()
        .and_then(|b| b.method.strip_prefix("cuda-").map(str::to_string));
    egui::Grid::new("kernel_timings")
        .num_columns(4)
        .striped(true)
        .show(ui, |ui| {
            for header in ["kernel", "µs/step", "% copy", "exact"] {
                ui.label(RichText::new(header).small().strong());
            }
            ui.end_row();
            for row in &timings.rows {
                let name = if in_use.as_deref() == Some(row.variant.as_str()) {
                    format!("▶ {}", row.variant)
                } else {
                    row.variant.clone()
                };
                ui.label(RichText::new(name).small().monospace())
                    .on_hover_text(&row.description);
                ui.label(RichText::new(format!("{:.2}", row.us_per_step.mean)).small());
                let percent = row
                    .percent_of_copy
                    .map_or_else(|| "-".into(), |p| format!("{p:.0}%"));
                ui.label(RichText::new(percent).small());
                let exact = match row.exact {
                    Some(true) => "yes",
                    Some(false) => "NO",
                    None => "-",
                };
                ui.label(RichText::new(exact).small());
                ui.end_row();
            }
        });
    if let Some(size) = timings.rows.first().map(|row| row.size.clone()) {
        ui.weak(format!("measured at {size} on this device; ▶ steps now"));
    }
}
