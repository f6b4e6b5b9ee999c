//! The Kernel lab's sections that show results: the compiler's output, the validation's
//! verdict, the source with its marked lines, and the kernels' timings.

use std::collections::BTreeMap;

use eframe::egui::{self, Color32, RichText};

use heatlab_engine::compute::cuda::user_kernel::{
    compile_diagnostics, UserContract, USER_KERNEL_FILE,
};
use heatlab_engine::compute::cuda::DIFFUSION_SOURCE;
use heatlab_engine::compute::KernelChoice;
use heatlab_engine::lab::verdict::describe_case;
use heatlab_engine::lab::{CaseOutcome, Verdict};
use heatlab_engine::session::lab::CompileFailure;

use super::editor::code_editor_ui;
use super::{builtin_lines, CompileState, LabContext, LabPanel, Shown, ValidationState};
use crate::ui::notice::{ERROR, WARNING};

impl LabPanel {
    pub(super) fn compile_ui(&mut self, ui: &mut egui::Ui) {
        let stale = |source: &String| *source != self.source;
        match &self.compile {
            CompileState::NotCompiled => {
                ui.weak("not compiled yet");
            }
            CompileState::Compiling(_) => {
                ui.horizontal(|ui| {
                    ui.spinner();
                    ui.label("compiling with NVRTC…");
                });
            }
            CompileState::Compiled { source, arch, took } => {
                let text = format!(
                    "compiled for compute_{}{} in {:.0} ms{}",
                    arch.0,
                    arch.1,
                    took.as_secs_f64() * 1e3,
                    if stale(source) { " (edited since)" } else { "" }
                );
                ui.label(text);
            }
            CompileState::Failed {
                source: _,
                failure: CompileFailure::Unavailable(reason),
            } => {
                ui.colored_label(
                    WARNING,
                    format!("compiling needs an NVIDIA GPU with NVRTC: {reason}"),
                );
            }
            CompileState::Failed {
                source,
                failure: CompileFailure::Nvrtc(log),
            } => {
                let diagnostics = compile_diagnostics(log);
                let errors = diagnostics.iter().filter(|d| d.is_error).count();
                ui.colored_label(
                    ERROR,
                    format!(
                        "NVRTC: {errors} error(s){}; marked ▶ in the editor",
                        if stale(source) { " (edited since)" } else { "" }
                    ),
                );
                egui::CollapsingHeader::new("NVRTC log")
                    .default_open(true)
                    .show(ui, |ui| {
                        ui.label(RichText::new(log.trim()).monospace().small());
                    });
            }
        }
    }

    pub(super) fn validation_ui(&mut self, ui: &mut egui::Ui) {
        match &self.validation {
            ValidationState::None => {}
            ValidationState::Running { started, .. } => {
                ui.horizontal(|ui| {
                    ui.spinner();
                    ui.label(format!(
                        "validating in a separate process… {:.0} s",
                        started.elapsed().as_secs_f64()
                    ));
                });
            }
            ValidationState::Done {
                source,
                verdict,
                field_note,
            } => {
                let colour = match verdict {
                    Verdict::Identical { .. } => Color32::from_rgb(90, 190, 110),
                    Verdict::Differs { .. } => WARNING,
                    _ => ERROR,
                };
                ui.colored_label(colour, verdict.summary());
                if *source != self.source {
                    ui.weak("(for an earlier version of the source)");
                }
                if let Some(note) = field_note {
                    ui.weak(note);
                }
                if let Verdict::Compile(log) = verdict {
                    ui.label(RichText::new(log.trim()).monospace().small());
                }
                let cases = match verdict {
                    Verdict::Identical { cases, .. } | Verdict::Differs { cases, .. } => {
                        cases.as_slice()
                    }
                    _ => &[],
                };
                if !cases.is_empty() {
                    egui::CollapsingHeader::new(format!("{} cases", cases.len()))
                        .default_open(!verdict.is_identical())
                        .show(ui, |ui| {
                            for case in cases {
                                let colour = if case.outcome == CaseOutcome::Identical {
                                    ui.visuals().weak_text_color()
                                } else {
                                    WARNING
                                };
                                ui.colored_label(
                                    colour,
                                    RichText::new(describe_case(case)).small(),
                                );
                            }
                        });
                }
            }
        }
    }

    pub(super) fn source_ui(
        &mut self,
        ui: &mut egui::Ui,
        context: &LabContext<'_>,
        contract: &Result<UserContract, heatlab_engine::compute::cuda::user_kernel::ContractError>,
    ) {
        let builtin = match context.chosen {
            KernelChoice::Auto | KernelChoice::User => None,
            choice => choice.builtin(),
        };
        let tabs = ui.horizontal(|ui| {
            let yours = ui.selectable_value(
                &mut self.shown,
                Shown::Yours,
                format!("your kernel ({USER_KERNEL_FILE})"),
            );
            let label = match builtin {
                Some(_) => format!("built-in: {} (diffusion.cu)", context.chosen),
                None => "built-in kernels (diffusion.cu)".to_string(),
            };
            let builtin = ui.selectable_value(&mut self.shown, Shown::Builtin, label);
            (yours.id, builtin.id)
        });
        let (yours_id, builtin_id) = tabs.inner;
        ui.separator();
        match self.shown {
            Shown::Yours => {
                let marked = self.marked_lines(contract);
                code_editor_ui(
                    ui,
                    "lab_source",
                    yours_id,
                    &mut self.source,
                    &marked,
                    true,
                    None,
                );
            }
            Shown::Builtin => {
                let range = builtin.and_then(|kernel| builtin_lines(DIFFUSION_SOURCE, kernel));
                let mut marked = BTreeMap::new();
                if let Some((first, last)) = range {
                    ui.weak(format!(
                        "lines {first}–{last}: the {} kernel the diffusion view chose (read only)",
                        context.chosen
                    ));
                    for line in first..=last {
                        marked.insert(line, Color32::from_rgba_premultiplied(30, 60, 110, 90));
                    }
                }
                let scroll = (self.scrolled_to != Some(context.chosen))
                    .then_some(range.map(|(first, _)| first))
                    .flatten();
                self.scrolled_to = Some(context.chosen);
                let mut text = DIFFUSION_SOURCE.to_string();
                code_editor_ui(
                    ui,
                    "lab_builtin",
                    builtin_id,
                    &mut text,
                    &marked,
                    false,
                    scroll,
                );
            }
        }
    }
}

/// The diffusion view's last measurement, the user's kernel among the built-in ones.
pub(super) fn timings_ui(ui: &mut egui::Ui, context: &LabContext<'_>) {
    ui.strong("Timed beside the built-in kernels");
    let rows = &context.timings.rows;
    if rows.is_empty() {
        ui.weak(
            "Use it in the simulation, then \"Measure kernels\" in the diffusion view's GPU \
             kernel section: every kernel is timed on the current field, in µs/step and % of \
             the device copy's bandwidth.",
        );
        return;
    }
    egui::Grid::new("lab_timings").striped(true).show(ui, |ui| {
        for row in rows {
            let name = if row.variant == "user" {
                RichText::new("user (yours)").strong()
            } else {
                RichText::new(&row.variant)
            };
            ui.label(name.small().monospace());
            ui.label(RichText::new(format!("{:.2} µs/step", row.us_per_step.mean)).small());
            let percent = row
                .percent_of_copy
                .map_or_else(|| "-".into(), |p| format!("{p:.0}% of copy"));
            ui.label(RichText::new(percent).small());
            ui.end_row();
        }
    });
    if let Some(row) = rows.first() {
        ui.weak(format!("measured at {}", row.size));
    }
}
