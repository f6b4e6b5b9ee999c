//! The panels of the window: controls on the left, the status line, notices, the two views
//! with their readout, and the timings. Each is a `*_ui` method of the app.

use std::path::Path;

use eframe::egui::{self, Color32, RichText};

use crate::compute::{BackendChoice, BackendKind, Boundary, STABLE_COEFF_LIMIT};
use crate::sim::Stability;

use super::super::export::{format_value, ExportKind};
use super::super::folder_dialog::FolderDialog;
use super::super::settings::{Preset, MAX_STEPS_PER_FRAME, MAX_STEP_N};
use super::super::timings::{format_us, part_color};
use super::super::view::{self, Viewport};
use super::super::worker::{Command, Level};
use super::{HeatlabApp, MAX_NOTICES_SHOWN};

impl HeatlabApp {
    pub(super) fn backend_ui(&mut self, ui: &mut egui::Ui) {
        ui.heading("Backend");
        let mut choice = self.settings.backend;
        ui.horizontal(|ui| {
            for option in BackendChoice::ALL {
                ui.selectable_value(&mut choice, option, option.to_string().to_uppercase());
            }
        });
        if choice != self.settings.backend {
            self.settings.backend = choice;
            self.send(Command::SwitchBackend(choice));
        }
        match &self.backend {
            Some(status) => {
                ui.label(format!("device: {}", status.device));
                ui.weak(format!("kernel: {}", status.method));
                if status.kind == BackendKind::Cpu {
                    if let Some(reason) = &status.cuda_unavailable {
                        let reason = reason.trim_start_matches("CUDA is not available: ");
                        ui.label(
                            RichText::new(format!("CUDA unavailable: {reason}"))
                                .small()
                                .color(Color32::from_rgb(220, 170, 60)),
                        );
                    }
                }
            }
            None => {
                ui.horizontal(|ui| {
                    ui.spinner();
                    ui.label("starting the backend…");
                });
            }
        }
    }

    pub(super) fn field_ui(&mut self, ui: &mut egui::Ui) {
        ui.heading("Field");
        ui.horizontal_wrapped(|ui| {
            ui.label("presets:");
            for preset in Preset::ALL {
                if ui
                    .button(preset.to_string())
                    .on_hover_text(preset.hint())
                    .clicked()
                {
                    self.settings.field = preset.params();
                    self.regenerate();
                }
            }
        });
        let field = &mut self.settings.field;
        egui::Grid::new("field_params")
            .num_columns(2)
            .show(ui, |ui| {
                let label = ui.label("rows");
                ui.add(
                    egui::DragValue::new(&mut field.size.rows)
                        .range(8..=crate::grid::MAX_SIDE)
                        .speed(8.0),
                )
                .labelled_by(label.id);
                ui.end_row();
                let label = ui.label("cols");
                ui.add(
                    egui::DragValue::new(&mut field.size.cols)
                        .range(8..=crate::grid::MAX_SIDE)
                        .speed(8.0),
                )
                .labelled_by(label.id);
                ui.end_row();
                let label = ui.label("seed");
                ui.add(egui::DragValue::new(&mut field.seed).speed(1.0))
                    .labelled_by(label.id);
                ui.end_row();
                let label = ui.label("exponent");
                ui.add(
                    egui::DragValue::new(&mut field.exponent)
                        .range(-4.0..=0.0)
                        .speed(0.01),
                )
                .labelled_by(label.id)
                .on_hover_text(
                    "power of the radial FFT filter, radius ** exponent (more negative: smoother)",
                );
                ui.end_row();
                let label = ui.label("cutoff");
                ui.add(
                    egui::DragValue::new(&mut field.cutoff)
                        .range(0.0..=1.0)
                        .speed(0.005),
                )
                .labelled_by(label.id)
                .on_hover_text("cells farther than cutoff × rows from the centre are zero");
                ui.end_row();
                let label = ui.label("percentile");
                ui.add(
                    egui::DragValue::new(&mut field.percentile)
                        .range(0.0..=100.0)
                        .speed(0.5),
                )
                .labelled_by(label.id)
                .on_hover_text("values not above this percentile are zero");
                ui.end_row();
            });
        let stale = self.generated_with != Some(self.settings.field);
        ui.horizontal(|ui| {
            let generating = self.progress.is_some();
            let button = egui::Button::new(if stale { "Regenerate *" } else { "Regenerate" });
            if ui
                .add_enabled(!generating, button)
                .on_hover_text("generate the jagged field with these parameters and start over")
                .clicked()
            {
                self.regenerate();
            }
            let mib = self.settings.field.size.bytes() as f64 / (1 << 20) as f64;
            let decimals = if mib < 10.0 { 1 } else { 0 };
            ui.weak(format!("{mib:.decimals$} MiB per copy"));
        });
        if let Some((what, fraction)) = &self.progress {
            ui.add(
                egui::ProgressBar::new(*fraction)
                    .text(what.as_str())
                    .animate(true),
            );
        }
    }

    pub(super) fn simulation_ui(&mut self, ui: &mut egui::Ui) {
        ui.heading("Simulation");
        ui.horizontal(|ui| {
            let ready = self.field_size.is_some();
            if self.playing {
                if ui.button("Pause").on_hover_text("pause (Space)").clicked() {
                    self.pause();
                }
            } else if ui
                .add_enabled(ready, egui::Button::new("Play"))
                .on_hover_text("step continuously (Space)")
                .clicked()
            {
                self.play();
            }
            if ui
                .add_enabled(ready, egui::Button::new("Step"))
                .on_hover_text("take one step (S)")
                .clicked()
            {
                self.step_by(1);
            }
            if ui
                .add_enabled(
                    ready,
                    egui::Button::new(format!("Step {}", self.settings.step_n)),
                )
                .on_hover_text("take this many steps, then stop")
                .clicked()
            {
                let steps = self.settings.step_n;
                self.step_by(steps);
            }
            if ui
                .add_enabled(ready, egui::Button::new("Reset"))
                .on_hover_text("back to the initial field, step 0 (R)")
                .clicked()
            {
                self.reset();
            }
        });
        ui.label(
            RichText::new(format!("step {}", self.step))
                .monospace()
                .size(15.0),
        );
        egui::Grid::new("sim_params").num_columns(2).show(ui, |ui| {
            let label = ui.label("steps per frame");
            ui.horizontal(|ui| {
                let auto = self.settings.auto_steps;
                if ui
                    .add_enabled(
                        !auto,
                        egui::DragValue::new(&mut self.settings.steps_per_frame)
                            .range(1..=MAX_STEPS_PER_FRAME)
                            .speed(1.0),
                    )
                    .labelled_by(label.id)
                    .changed()
                {
                    self.send(Command::SetStepsPerFrame(self.settings.steps_per_frame));
                }
                if ui
                    .checkbox(&mut self.settings.auto_steps, "auto")
                    .on_hover_text(
                        "choose the steps per frame so that stepping takes 3/4 of each frame \
                         and drawing the rest",
                    )
                    .changed()
                {
                    self.send(Command::SetAutoSteps(self.settings.auto_steps));
                    self.send(Command::SetStepsPerFrame(self.settings.steps_per_frame));
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
        });
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
            self.settings.step.boundary = boundary;
            self.send(Command::SetParams(self.settings.step));
        }
        ui.weak(self.settings.step.boundary.description());
        self.coefficient_ui(ui);
    }

    pub(super) fn coefficient_ui(&mut self, ui: &mut egui::Ui) {
        let max = if self.unlock_unstable { 0.5 } else { 0.3 };
        let slider = egui::Slider::new(&mut self.coeff_input, 0.001..=max)
            .text("coefficient")
            .max_decimals(4)
            .clamping(egui::SliderClamping::Edits);
        if ui
            .add(slider)
            .on_hover_text("f -= coefficient × Laplacian; stable up to 0.25")
            .changed()
        {
            self.apply_coefficient();
        }
        if ui
            .checkbox(&mut self.unlock_unstable, "unlock coefficients above 0.25")
            .on_hover_text(
                "lets the scheme blow up on purpose; heatlab stops at the last finite state",
            )
            .changed()
        {
            if !self.unlock_unstable && self.settings.step.coeff > STABLE_COEFF_LIMIT {
                self.coeff_input = STABLE_COEFF_LIMIT;
            }
            self.apply_coefficient();
        }
        let refused = self.coeff_input > STABLE_COEFF_LIMIT && !self.unlock_unstable;
        if refused {
            ui.colored_label(
                Color32::from_rgb(240, 90, 80),
                format!(
                    "refused: above 0.25 the scheme blows up. Still using {}; tick the unlock to run it anyway.",
                    self.settings.step.coeff
                ),
            );
        } else if let Some(warning) = Stability::of(self.settings.step.coeff).warning() {
            let color = match Stability::of(self.settings.step.coeff) {
                Stability::Unstable => Color32::from_rgb(240, 90, 80),
                _ => Color32::from_rgb(220, 170, 60),
            };
            ui.colored_label(color, format!("Warning: {warning}"));
        }
    }

    pub(super) fn export_ui(&mut self, ui: &mut egui::Ui) {
        ui.heading("Export");
        ui.horizontal(|ui| {
            let label = ui.label("folder");
            if ui
                .button("Browse…")
                .on_hover_text("choose the export folder")
                .clicked()
            {
                self.folder_dialog =
                    Some(FolderDialog::new(Path::new(self.export_dir_text.trim())));
            }
            ui.add(
                egui::TextEdit::singleline(&mut self.export_dir_text).desired_width(f32::INFINITY),
            )
            .labelled_by(label.id)
            .on_hover_text("created if missing; files are named like heatlab run's");
        });
        ui.checkbox(&mut self.settings.export_colorbar, "colorbar in PNGs");
        ui.horizontal_wrapped(|ui| {
            for kind in ExportKind::ALL {
                let ready = self.field_size.is_some();
                if ui
                    .add_enabled(ready, egui::Button::new(kind.to_string()))
                    .clicked()
                {
                    self.export(kind);
                }
            }
        });
        ui.horizontal(|ui| {
            let mut recording = self.recording;
            let checkbox = ui
                .checkbox(&mut recording, "record PNGs")
                .on_hover_text("writes field_STEP.png and laplacian_STEP.png into FOLDER/frames");
            if checkbox.changed() {
                self.set_recording(recording);
            }
            let every = ui.label("every");
            let changed = ui
                .add(
                    egui::DragValue::new(&mut self.settings.record_every)
                        .range(1..=1_000_000)
                        .suffix(" steps"),
                )
                .labelled_by(every.id)
                .changed();
            if changed && self.recording {
                self.set_recording(true);
            }
        });
        if self.exports_pending > 0 {
            ui.horizontal(|ui| {
                ui.spinner();
                ui.label("writing…");
            });
        }
    }

    pub(super) fn status_ui(&mut self, ui: &mut egui::Ui) {
        ui.horizontal_wrapped(|ui| {
            ui.strong("heatlab");
            ui.separator();
            match self.field_size {
                Some(size) => ui.label(format!("{size} field")),
                None => ui.label("no field yet"),
            };
            ui.separator();
            ui.label(format!("step {}", self.step));
            ui.separator();
            ui.label(format!(
                "coeff {} · {}",
                self.settings.step.coeff, self.settings.step.boundary
            ));
            if let Some(status) = &self.backend {
                ui.separator();
                ui.label(format!(
                    "{} · {}",
                    status.kind.to_string().to_uppercase(),
                    status.device
                ));
            }
            if let Some(stats) = self.stats {
                ui.separator();
                ui.label(format!(
                    "total heat {:.6e} · min {} · max {}",
                    stats.total,
                    format_value(stats.min),
                    format_value(stats.max)
                ));
            }
            if self.playing {
                ui.separator();
                ui.colored_label(Color32::from_rgb(90, 200, 120), "playing");
            }
        });
    }

    pub(super) fn notices_ui(&mut self, ui: &mut egui::Ui) {
        let mut dismiss = None;
        for (i, notice) in self
            .notices
            .iter()
            .enumerate()
            .rev()
            .take(MAX_NOTICES_SHOWN)
        {
            let color = match notice.level {
                Level::Info => ui.visuals().weak_text_color(),
                Level::Warning => Color32::from_rgb(220, 170, 60),
                Level::Error => Color32::from_rgb(240, 90, 80),
            };
            ui.horizontal(|ui| {
                if ui.small_button("×").on_hover_text("dismiss").clicked() {
                    dismiss = Some(i);
                }
                ui.add(egui::Label::new(RichText::new(&notice.text).color(color)).wrap());
            });
        }
        if let Some(i) = dismiss {
            self.notices.remove(i);
        }
    }

    pub(super) fn timings_ui(&mut self, ui: &mut egui::Ui) {
        ui.horizontal_wrapped(|ui| {
            ui.strong("Timings");
            ui.separator();
            match self.timings.latest_step_timing() {
                Some((us, gb_s)) => {
                    ui.label(format!("{} per step", format_us(us)));
                    ui.separator();
                    ui.label(format!("{:.0} steps/s stepping", 1e6 / us.max(1e-9)));
                    ui.separator();
                    ui.label(format!(
                        "{:.0} steps/s wall",
                        self.timings.wall_steps_per_second()
                    ));
                    ui.separator();
                    ui.label(format!("{:.1} frames/s", self.timings.frames_per_second()));
                    ui.separator();
                    ui.label(format!("{gb_s:.1} GB/s effective")).on_hover_text(
                        "one read and one write of the field per step, over the stepping time",
                    );
                }
                None => {
                    ui.weak("press Play or Step to measure");
                }
            }
            ui.separator();
            ui.checkbox(&mut self.settings.show_plots, "plots");
        });
        if let Some(summary) = self.timings.timeit() {
            ui.label(RichText::new(summary.to_string()).monospace());
        }
        let split = self.timings.mean_split();
        if !split.is_empty() {
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
        if self.settings.show_plots {
            self.timings.plots_ui(ui);
        }
    }

    pub(super) fn views_ui(&mut self, ui: &mut egui::Ui) {
        let mut hovered = None;
        let field_range = self.field_view.range();
        let laplacian_range = self.laplacian_view.range();
        let readout_height = 22.0;
        ui.columns(2, |columns| {
            let (left, right) = columns.split_at_mut(1);
            let left = &mut left[0];
            let right = &mut right[0];
            left.strong("Field");
            if view::view_controls_ui(left, "Field", &mut self.settings.field_view, field_range) {
                self.sent_views = None;
            }
            right.strong("Laplacian  (4f − neighbours)");
            if view::view_controls_ui(
                right,
                "Laplacian",
                &mut self.settings.laplacian_view,
                laplacian_range,
            ) {
                self.sent_views = None;
            }
            let height =
                (left.available_height().min(right.available_height()) - readout_height).max(64.0);
            let mut viewport = self.viewport;
            left.allocate_ui(egui::vec2(left.available_width(), height), |ui| {
                hovered = hovered.or(view::picture_ui(
                    ui,
                    &mut self.field_view,
                    self.settings.field_view.colormap,
                    &mut viewport,
                    "field",
                ));
            });
            right.allocate_ui(egui::vec2(right.available_width(), height), |ui| {
                hovered = hovered.or(view::picture_ui(
                    ui,
                    &mut self.laplacian_view,
                    self.settings.laplacian_view.colormap,
                    &mut viewport,
                    "Laplacian",
                ));
            });
            self.viewport = viewport;
        });
        self.hovered = hovered;
        ui.horizontal(|ui| {
            self.zoom_buttons_ui(ui);
            self.readout_ui(ui);
        });
    }

    pub(super) fn zoom_buttons_ui(&mut self, ui: &mut egui::Ui) {
        if ui.small_button("−").on_hover_text("zoom out").clicked() {
            self.viewport.zoom_by(0.5);
        }
        if ui
            .small_button("+")
            .on_hover_text("zoom in (or scroll over a view)")
            .clicked()
        {
            self.viewport.zoom_by(2.0);
        }
        if ui
            .small_button("fit")
            .on_hover_text("show the whole field (or double-click a view)")
            .clicked()
        {
            self.viewport = Viewport::default();
        }
    }

    pub(super) fn readout_ui(&mut self, ui: &mut egui::Ui) {
        match self.hovered {
            Some((row, col)) => {
                let value = self.field_view.value_at(row, col);
                let laplacian = self.laplacian_view.value_at(row, col);
                let mut text = format!("row {row}, col {col}");
                if let Some((v, factor)) = value {
                    text += &format!("   field {}", readout_value(v));
                    if let Some((l, _)) = laplacian {
                        text += &format!("   Laplacian {}", readout_value(l));
                    }
                    if factor > 1 {
                        text += &format!("   (means of {factor}×{factor} cells: the view is reduced; zoom in for single cells)");
                    }
                }
                ui.monospace(text);
            }
            None => {
                ui.weak(format!(
                    "zoom {:.1}× · scroll to zoom, drag to pan, double-click to fit · hover for values",
                    self.viewport.zoom
                ));
            }
        }
    }
}

/// A hovered value with enough digits to compare neighbours.
fn readout_value(value: f32) -> String {
    let magnitude = value.abs();
    if value == 0.0 || (1e-2..1e4).contains(&magnitude) {
        format!("{value:.6}")
    } else {
        format!("{value:.5e}")
    }
}
