//! The side panel of the diffusion view, one section after another: backend, field,
//! simulation, export. Each section is a function that draws its controls from the settings and
//! what the simulation reported, and pushes [`DiffusionCommand`]s; none changes the simulation
//! itself. A new section (a toggle and its status line) is one more function in [`Controls::ui`].

use eframe::egui::{self, RichText};

use heatlab_engine::compute::{
    BackendChoice, BackendKind, Boundary, StepParams, STABLE_COEFF_LIMIT,
};
use heatlab_engine::field::JaggedParams;
use heatlab_engine::problem::HeatProblem;
use heatlab_engine::session::diffusion::ProblemCommand;
use heatlab_engine::sim::generate::GenerationPlace;
use heatlab_engine::sim::solve::Stepping;
use heatlab_engine::sim::Stability;
use heatlab_engine::solve::{ImplicitScheme, SolveOptions};

use super::super::folder::FolderField;
use super::super::notice::{ERROR, WARNING};
use super::command::DiffusionCommand;
use super::SimState;
use crate::settings::{Preset, Settings, MAX_STEPS_PER_FRAME, MAX_STEP_N};
use heatlab_engine::session::diffusion::ExportKind;

/// The coefficient as typed, and whether coefficients above 0.25 are allowed.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct CoefficientInput {
    /// The value the box shows; `settings.step.coeff` is the one in use. A typed value counts
    /// once it is committed (Enter or the box losing focus), never keystroke by keystroke.
    pub typed: f32,
    /// Whether the user unlocked unstable coefficients.
    pub unlock_unstable: bool,
    /// The last committed value the guard refused (the box went back to the one in use).
    pub refused: Option<f32>,
}

impl CoefficientInput {
    /// A box showing `coeff`, locked to stable coefficients.
    pub fn new(coeff: f32) -> Self {
        Self {
            typed: coeff,
            unlock_unstable: false,
            refused: None,
        }
    }

    /// The typed coefficient with `boundary`, when the guard allows it.
    pub fn accepted(&self, boundary: Boundary) -> Option<StepParams> {
        let params = StepParams {
            coeff: self.typed,
            boundary,
        };
        // A refusal is shown next to the control; the running coefficient is kept.
        params.validate(self.unlock_unstable).ok().map(|()| params)
    }
}

/// Everything the side panel draws from and writes to for one frame.
pub struct Controls<'a> {
    /// The controls' values.
    pub settings: &'a mut Settings,
    /// What the simulation thread reported.
    pub state: &'a SimState,
    /// The coefficient slider and its unlock.
    pub coefficient: &'a CoefficientInput,
    /// The export folder.
    pub folder: &'a mut FolderField,
    /// The field parameters of the field on screen.
    pub generated_with: Option<JaggedParams>,
    /// Whether the recording under way is a video (not a PNG sequence).
    pub video_recording: bool,
    /// Seconds per step on the field on screen, as last measured.
    pub seconds_per_step: Option<f64>,
    /// What the controls ask for.
    pub commands: &'a mut Vec<DiffusionCommand>,
    /// The tools on the pictures (the Problem section chooses the Material tool's kind).
    pub tools: &'a mut super::brush::PaintTools,
    /// The run's duration as typed.
    pub run_control: &'a mut super::run_control::RunControl,
}

impl Controls<'_> {
    /// Every section, top to bottom. While a heat problem runs, the tutorial plate's field
    /// parameters are folded away and its coefficient and boundary are not shown: the problem
    /// steps with its own materials, cell size and sides.
    pub fn ui(&mut self, ui: &mut egui::Ui) {
        self.backend_ui(ui);
        ui.separator();
        match self.state.problem.as_deref() {
            Some(problem) => self.problem_field_ui(ui, problem),
            None => self.field_ui(ui),
        }
        ui.separator();
        self.simulation_ui(ui);
        super::kernels::kernel_section_ui(ui, self.settings, self.state, self.commands);
        ui.separator();
        self.export_ui(ui);
    }

    fn backend_ui(&mut self, ui: &mut egui::Ui) {
        ui.heading("Backend");
        let mut choice = self.settings.backend;
        // Known once the backend started: a choice that cannot work is greyed out, with why.
        let cuda_unavailable = self
            .state
            .backend
            .as_ref()
            .filter(|status| status.kind == BackendKind::Cpu)
            .and_then(|status| status.cuda_unavailable.as_ref());
        ui.horizontal(|ui| {
            for option in BackendChoice::ALL {
                let reason = cuda_unavailable.filter(|_| option == BackendChoice::Cuda);
                ui.add_enabled_ui(reason.is_none(), |ui| {
                    let text = option.to_string().to_uppercase();
                    let response = ui.selectable_value(&mut choice, option, text);
                    if let Some(reason) = reason {
                        response.on_disabled_hover_text(format!("CUDA unavailable: {reason}"));
                    }
                });
            }
        });
        if choice != self.settings.backend {
            self.commands.push(DiffusionCommand::SwitchBackend(choice));
        }
        self.agreement_ui(ui);
        let Some(status) = &self.state.backend else {
            ui.horizontal(|ui| {
                ui.spinner();
                ui.label("starting the backend…");
            });
            return;
        };
        ui.label(format!("device: {}", status.device));
        ui.weak(format!("kernel: {}", status.method));
        if let (BackendKind::Cpu, Some(reason)) = (status.kind, &status.cuda_unavailable) {
            ui.label(
                RichText::new(format!("CUDA unavailable: {reason}"))
                    .small()
                    .color(WARNING),
            );
        }
    }

    /// The live agreement check's toggle.
    fn agreement_ui(&mut self, ui: &mut egui::Ui) {
        let mut on = self.settings.agreement_check;
        let toggle = ui.checkbox(&mut on, "check against the CPU").on_hover_text(
            "While it runs, a background CPU thread catches up with the backend from a \
                 snapshot and compares the fields bit for bit; the result shows beside the timings",
        );
        if toggle.changed() {
            self.commands.push(DiffusionCommand::SetAgreementCheck(on));
        }
    }

    fn field_ui(&mut self, ui: &mut egui::Ui) {
        ui.heading("Field");
        self.plate_ui(ui);
        self.progress_ui(ui);
    }

    /// The Field section while a heat problem runs: its grid, and the tutorial's plate folded
    /// (a new plate replaces the problem; Regenerate asks first).
    fn problem_field_ui(
        &mut self,
        ui: &mut egui::Ui,
        problem: &heatlab_engine::problem::HeatProblem,
    ) {
        ui.heading("Field");
        // The cell size in mm without float noise: 2.5, not 2.5000000000000004.
        let mm = format!("{:.4}", problem.spacing * 1e3);
        let mm = mm.trim_end_matches('0').trim_end_matches('.');
        ui.label(format!(
            "the problem's grid: {} cells of {mm} mm",
            problem.size
        ));
        egui::CollapsingHeader::new("Tutorial plate")
            .id_salt("tutorial plate")
            .default_open(false)
            .show(ui, |ui| {
                ui.weak(
                    "a jagged plate with the tutorial's coefficient and boundary; generating one \
                     replaces the problem (you are asked first)",
                );
                self.plate_ui(ui);
            });
        self.progress_ui(ui);
    }

    /// The plate's presets, parameters and Regenerate.
    fn plate_ui(&mut self, ui: &mut egui::Ui) {
        ui.horizontal_wrapped(|ui| {
            ui.label("presets:");
            for preset in Preset::ALL {
                let hint = self.preset_hint(preset);
                let button = ui.button(preset.to_string()).on_hover_text(hint);
                if button.clicked() {
                    self.settings.field = preset.params();
                    self.commands.push(DiffusionCommand::Regenerate);
                }
            }
        });
        field_params_ui(ui, &mut self.settings.field);
        let stale = self.generated_with != Some(self.settings.field);
        let generating = self.state.progress.is_some();
        ui.horizontal(|ui| {
            let button = egui::Button::new(if stale { "Regenerate *" } else { "Regenerate" });
            if ui
                .add_enabled(!generating, button)
                .on_hover_text("generate the jagged field with these parameters and start over")
                .clicked()
            {
                self.commands.push(DiffusionCommand::Regenerate);
            }
            self.generation_ui(ui);
        });
    }

    /// The progress of a generation under way.
    fn progress_ui(&self, ui: &mut egui::Ui) {
        if let Some((what, fraction)) = &self.state.progress {
            ui.add(
                egui::ProgressBar::new(*fraction)
                    .text(what.as_str())
                    .animate(true),
            );
        }
    }

    /// The preset's hint; for a GPU-sized preset on the CPU, with the time a step would take,
    /// scaled from the field on screen.
    fn preset_hint(&self, preset: Preset) -> String {
        let mut hint = preset.hint().to_string();
        let on_cpu = self
            .state
            .backend
            .as_ref()
            .is_some_and(|status| status.kind == BackendKind::Cpu);
        if let (true, true, Some(seconds), Some(size)) = (
            preset.gpu_sized(),
            on_cpu,
            self.seconds_per_step,
            self.state.field_size,
        ) {
            let cells = preset.params().size.cells() as f64;
            let estimate = seconds * cells / size.cells().max(1) as f64;
            hint.push_str(&format!(
                "\non this CPU about {} per step (scaled from the field on screen); the \
                 steps per frame are scaled down with the size",
                heatlab_engine::measure::format_seconds(estimate)
            ));
        }
        hint
    }

    /// Beside Regenerate: the "live" toggle, the field's size in memory, and where the last
    /// field was generated and how long it took (in full on hover, with the reason when the
    /// GPU could not).
    fn generation_ui(&mut self, ui: &mut egui::Ui) {
        let generation = self.state.last_generation.as_ref();
        let on_gpu = generation.is_some_and(|g| g.place == GenerationPlace::Gpu);
        let hint = if on_gpu {
            "regenerate while you drag the seed, exponent, cutoff or percentile"
        } else {
            "regenerating while dragging needs the field generated on the GPU (CUDA with cuFFT)"
        };
        // Disabled, the box is clear (the choice is kept for a field generated on the GPU).
        let mut live = self.settings.live_field && on_gpu;
        let toggle = ui
            .add_enabled(on_gpu, egui::Checkbox::new(&mut live, "live"))
            .on_hover_text(hint)
            .on_disabled_hover_text(hint);
        if toggle.changed() {
            self.settings.live_field = live;
        }
        let mib = self.settings.field.size.bytes() as f64 / (1 << 20) as f64;
        let decimals = if mib < 10.0 { 1 } else { 0 };
        let mut text = format!("{mib:.decimals$} MiB");
        let mut hover = format!("{mib:.decimals$} MiB per copy of the field");
        if let Some(generation) = generation {
            let place = match generation.place {
                GenerationPlace::Gpu => "GPU",
                GenerationPlace::Cpu { .. } => "CPU",
            };
            text.push_str(&format!(
                " · {place} {}",
                super::generation_time(generation.wall)
            ));
            hover.push_str(&format!(
                "\nlast generated on the {} in {}",
                generation.place,
                super::generation_time(generation.wall)
            ));
            if let Some(device) = generation.device {
                hover.push_str(&format!(
                    " ({} between GPU events)",
                    super::generation_time(device)
                ));
            }
            if let Some(why) = generation.fallback() {
                hover.push_str(&format!("\n{why}"));
            }
        }
        ui.weak(text).on_hover_text(hover);
    }

    fn simulation_ui(&mut self, ui: &mut egui::Ui) {
        ui.heading("Simulation");
        self.transport_ui(ui);
        ui.label(
            RichText::new(format!("step {}", self.state.step))
                .monospace()
                .size(15.0),
        );
        self.pace_ui(ui);
        if self.state.problem.is_some() {
            let (frame, rate) = (self.state.problem_frame.as_ref(), self.state.simulated_rate);
            self.run_control
                .ui(ui, frame, self.settings, rate, self.commands);
            return;
        }
        let mut boundary = self.settings.step.boundary;
        egui::ComboBox::from_label("boundary")
            .selected_text(boundary.to_string())
            .show_ui(ui, |ui| {
                for option in Boundary::ALL {
                    ui.selectable_value(&mut boundary, option, option.to_string())
                        .on_hover_text(option.description());
                }
            });
        if boundary != self.settings.step.boundary {
            self.commands.push(DiffusionCommand::SetBoundary(boundary));
        }
        ui.weak(boundary.description());
        self.coefficient_ui(ui);
    }

    /// Play or Pause, Step, Step N, Reset.
    fn transport_ui(&mut self, ui: &mut egui::Ui) {
        let ready = self.state.field_size.is_some();
        let step_n = self.settings.step_n;
        ui.horizontal(|ui| {
            let mut button = |ui: &mut egui::Ui, text: &str, hint: &str, command| {
                if ui
                    .add_enabled(ready, egui::Button::new(text))
                    .on_hover_text(hint)
                    .clicked()
                {
                    self.commands.push(command);
                }
            };
            if self.state.playing {
                button(ui, "Pause", "pause (Space)", DiffusionCommand::Pause);
            } else {
                button(
                    ui,
                    "Play",
                    "step continuously (Space)",
                    DiffusionCommand::Play,
                );
            }
            button(ui, "Step", "take one step (S)", DiffusionCommand::Step(1));
            let text = format!("Step {step_n}");
            let hint = "take this many steps, then stop";
            button(ui, &text, hint, DiffusionCommand::Step(step_n));
            let hint = "back to the initial field, step 0 (R)";
            button(ui, "Reset", hint, DiffusionCommand::Reset);
        });
    }

    /// Steps per frame (or automatic) and N of "Step N".
    fn pace_ui(&mut self, ui: &mut egui::Ui) {
        egui::Grid::new("sim_params").num_columns(2).show(ui, |ui| {
            let label = ui.label("steps per frame");
            ui.horizontal(|ui| {
                let mut auto = self.settings.auto_steps;
                let mut steps = self.settings.steps_per_frame;
                let drag = egui::DragValue::new(&mut steps)
                    .range(1..=MAX_STEPS_PER_FRAME)
                    .speed(1.0);
                if ui.add_enabled(!auto, drag).labelled_by(label.id).changed() {
                    self.commands
                        .push(DiffusionCommand::SetStepsPerFrame(steps));
                }
                if ui
                    .checkbox(&mut auto, "auto")
                    .on_hover_text(
                        "choose the steps per frame so that stepping takes 3/4 of each frame \
                         and drawing the rest",
                    )
                    .changed()
                {
                    self.commands.push(DiffusionCommand::SetAutoSteps(auto));
                }
            });
            ui.end_row();
            let label = ui.label("N for Step N");
            ui.add(
                egui::DragValue::new(&mut self.settings.step_n)
                    .range(1..=MAX_STEP_N)
                    .speed(10.0),
            )
            .labelled_by(label.id);
            ui.end_row();
            if let Some(problem) = self.state.problem.as_deref() {
                ui.label("time steps");
                self.stepping_ui(ui, problem);
                ui.end_row();
            }
        });
    }

    /// Explicit steps, or implicit ones of 100 explicit steps (for long physical times).
    fn stepping_ui(&mut self, ui: &mut egui::Ui, problem: &HeatProblem) {
        let mut implicit = matches!(self.state.stepping, Stepping::Implicit { .. });
        let text = match self.state.stepping {
            Stepping::Explicit => "implicit ×100".to_string(),
            Stepping::Implicit { dt, .. } => format!("implicit, {dt:.3e} s"),
        };
        let hint = "backward-Euler steps of 100 explicit time steps, each solved by multigrid \
                    conjugate gradients: slower per step, far faster per simulated second; \
                    for long physical times. The energy budget books what each step's equation moves.";
        if !ui
            .checkbox(&mut implicit, text)
            .on_hover_text(hint)
            .changed()
        {
            return;
        }
        let stepping = match (implicit, problem.tables()) {
            (false, _) => Stepping::Explicit,
            (true, Ok(tables)) => Stepping::Implicit {
                scheme: ImplicitScheme::BackwardEuler,
                dt: 100.0 * tables.dt,
                options: SolveOptions::default(),
            },
            (true, Err(error)) => {
                log::warn!("implicit steps need the explicit step: {error}");
                return;
            }
        };
        self.commands
            .push(DiffusionCommand::Problem(ProblemCommand::SetStepping(
                stepping,
            )));
    }

    fn coefficient_ui(&mut self, ui: &mut egui::Ui) {
        let mut input = *self.coefficient;
        let max = if input.unlock_unstable { 0.5 } else { 0.3 };
        // A typed value applies when committed: "0.3" typed over "0.250" must not run "0" first.
        let slider = egui::Slider::new(&mut input.typed, 0.001..=max)
            .text("coefficient")
            .max_decimals(4)
            .update_while_editing(false)
            .clamping(egui::SliderClamping::Edits);
        let mut changed = ui
            .add(slider)
            .on_hover_text(
                "f -= coefficient × Laplacian; stable up to 0.25. A typed value applies on \
                 Enter or when the box loses focus",
            )
            .changed();
        if ui
            .checkbox(&mut input.unlock_unstable, "unlock coefficients above 0.25")
            .on_hover_text(
                "lets the scheme blow up on purpose; heatlab stops at the last finite state",
            )
            .changed()
        {
            if !input.unlock_unstable && self.settings.step.coeff > STABLE_COEFF_LIMIT {
                input.typed = STABLE_COEFF_LIMIT;
            }
            // "Tick the unlock to run it anyway": the refused value runs once unlocked.
            if let (true, Some(refused)) = (input.unlock_unstable, input.refused) {
                input.typed = refused;
            }
            changed = true;
        }
        if changed {
            self.commands.push(DiffusionCommand::SetCoefficient(input));
        }
        let in_use = self.settings.step.coeff;
        if let Some(refused) = input.refused {
            ui.colored_label(
                ERROR,
                format!(
                    "{refused} refused: above 0.25 the scheme blows up. Still using {in_use}; \
                     tick the unlock to run it anyway."
                ),
            );
        } else if let Some(warning) = Stability::of(in_use).warning() {
            let color = match Stability::of(in_use) {
                Stability::Unstable => ERROR,
                _ => WARNING,
            };
            ui.colored_label(color, format!("Warning: {warning}"));
        }
    }

    fn export_ui(&mut self, ui: &mut egui::Ui) {
        ui.heading("Export");
        self.folder.ui(ui);
        super::export_options::ui(ui, self.settings, self.state.field_size);
        let ready = self.state.field_size.is_some();
        ui.horizontal_wrapped(|ui| {
            for kind in ExportKind::ALL {
                let button = egui::Button::new(kind.to_string());
                if ui.add_enabled(ready, button).clicked() {
                    self.commands.push(DiffusionCommand::Export(kind));
                }
            }
        });
        ui.horizontal(|ui| {
            // A video being recorded is not a PNG sequence: the box stays clear meanwhile.
            let mut recording = self.state.recording && !self.video_recording;
            let hint = if self.video_recording {
                "a video is being recorded; ticking this records PNGs instead (the video is \
                 finished and kept)"
            } else {
                "writes field_STEP.png and laplacian_STEP.png into FOLDER/frames"
            };
            let checkbox = ui
                .checkbox(&mut recording, "record PNGs")
                .on_hover_text(hint);
            if checkbox.changed() {
                self.commands
                    .push(DiffusionCommand::SetRecording(recording));
            }
            let every = ui.label("every");
            let mut record_every = self.settings.record_every;
            let interval = egui::DragValue::new(&mut record_every)
                .range(1..=1_000_000)
                .suffix(" steps");
            if ui.add(interval).labelled_by(every.id).changed() {
                self.commands
                    .push(DiffusionCommand::SetRecordEvery(record_every));
            }
        });
        if self.state.exports_pending > 0 {
            ui.horizontal(|ui| {
                ui.spinner();
                ui.label("writing…");
            });
        }
    }
}

/// Size, seed, exponent, cutoff and percentile of the jagged field.
fn field_params_ui(ui: &mut egui::Ui, field: &mut JaggedParams) {
    let row = |ui: &mut egui::Ui, name: &str, value: egui::DragValue<'_>, hint: &str| {
        let label = ui.label(name);
        let response = ui.add(value).labelled_by(label.id);
        if !hint.is_empty() {
            response.on_hover_text(hint);
        }
        ui.end_row();
    };
    let side = 8..=heatlab_engine::grid::MAX_SIDE;
    egui::Grid::new("field_params")
        .num_columns(2)
        .show(ui, |ui| {
            let rows = egui::DragValue::new(&mut field.size.rows)
                .range(side.clone())
                .speed(8.0);
            row(ui, "rows", rows, "");
            let cols = egui::DragValue::new(&mut field.size.cols)
                .range(side)
                .speed(8.0);
            row(ui, "cols", cols, "");
            row(
                ui,
                "seed",
                egui::DragValue::new(&mut field.seed).speed(1.0),
                "",
            );
            let exponent = egui::DragValue::new(&mut field.exponent)
                .range(-4.0..=0.0)
                .speed(0.01);
            let hint =
                "power of the radial FFT filter, radius ** exponent (more negative: smoother)";
            row(ui, "exponent", exponent, hint);
            let cutoff = egui::DragValue::new(&mut field.cutoff)
                .range(0.0..=1.0)
                .speed(0.005);
            let hint = "cells farther than cutoff × rows from the centre are zero";
            row(ui, "cutoff", cutoff, hint);
            let percentile = egui::DragValue::new(&mut field.percentile)
                .range(0.0..=100.0)
                .speed(0.5);
            row(
                ui,
                "percentile",
                percentile,
                "values not above this percentile are zero",
            );
        });
}
