//! The Kernel lab tab: the diffusion kernel's CUDA source, highlighted, with line numbers and
//! editable; open, save and reset; compile with NVRTC for this GPU (errors marked on their
//! lines); validate in a child process against the CPU reference; then step the simulation
//! with it and see it timed beside the built-in kernels. The built-in kernel chosen in the
//! diffusion view can be read beside it.
//!
//! The panel only asks: compiling and validating run on its thread ([`heatlab_engine::session::lab`]),
//! the field to validate against and "use in simulation" go through the app to the diffusion
//! panel ([`LabCommand`]).

pub mod editor;
pub mod highlight;
mod sections;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::mpsc::Receiver;
use std::time::{Duration, Instant};

use eframe::egui::{self, Color32, RichText};

use heatlab_engine::compute::cuda::user_kernel::{
    compile_diagnostics, UserContract, USER_KERNEL_FILE, USER_KERNEL_TEMPLATE,
};
use heatlab_engine::compute::{CudaKernel, KernelChoice, StepParams};
use heatlab_engine::grid::Grid;
use heatlab_engine::lab::Verdict;

use super::diffusion::kernels::KernelTimings;
use super::notice::{Level, Notice, ERROR, WARNING};
use editor::{ERROR_LINE, WARNING_LINE};
use heatlab_engine::session::lab::{
    self as lab_worker, CompileFailure, LabEvent, LabJob, LabWorker,
};
use heatlab_engine::session::worker::Notify;

/// What the lab asks the app to do (it needs the diffusion panel).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LabCommand {
    /// Validate this source against the current field: the app asks the simulation for a
    /// copy and hands the answer to [`LabPanel::start_validation`].
    Validate(String),
    /// Step the simulation with this (validated) source.
    UseInSimulation(String),
}

/// What the lab shows of the rest of the app.
#[derive(Debug, Clone, Copy)]
pub struct LabContext<'a> {
    /// Why CUDA cannot be used here, when the app found it cannot.
    pub cuda_unavailable: Option<&'a str>,
    /// The kernel chosen in the diffusion view.
    pub chosen: KernelChoice,
    /// The diffusion view's last "measure kernels".
    pub timings: &'a KernelTimings,
    /// Whether the simulation steps with a user kernel now.
    pub user_in_use: bool,
}

/// Which source the editor shows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Shown {
    /// The user's kernel (editable).
    Yours,
    /// The built-in kernel chosen in the diffusion view (read only).
    Builtin,
}

/// Where a compile stands.
#[derive(Debug, Clone, PartialEq)]
enum CompileState {
    NotCompiled,
    Compiling(String),
    Compiled {
        source: String,
        arch: (i32, i32),
        took: Duration,
    },
    Failed {
        source: String,
        failure: CompileFailure,
    },
}

/// Where a validation stands.
#[derive(Debug, Clone)]
enum ValidationState {
    None,
    Running {
        started: Instant,
    },
    Done {
        source: String,
        verdict: Verdict,
        field_note: Option<String>,
    },
}

/// A replacement of unsaved edits, waiting for the user's yes.
#[derive(Debug, Clone, PartialEq)]
enum Pending {
    Open(PathBuf),
    Reset,
}

/// The Kernel lab tab.
pub struct LabPanel {
    source: String,
    /// The text last opened, saved or reset to (to know about unsaved edits).
    baseline: String,
    file: String,
    shown: Shown,
    compile: CompileState,
    validation: ValidationState,
    pending: Option<Pending>,
    notice: Option<Notice>,
    worker: Option<LabWorker>,
    notify: Notify,
    /// The built-in view scrolls to its kernel once per choice.
    scrolled_to: Option<KernelChoice>,
}

impl LabPanel {
    /// The lab with the template; its thread starts on the first compile.
    pub fn new(notify: Notify) -> Self {
        Self {
            source: USER_KERNEL_TEMPLATE.to_string(),
            baseline: USER_KERNEL_TEMPLATE.to_string(),
            file: USER_KERNEL_FILE.to_string(),
            shown: Shown::Yours,
            compile: CompileState::NotCompiled,
            validation: ValidationState::None,
            pending: None,
            notice: None,
            worker: None,
            notify,
            scrolled_to: None,
        }
    }

    /// The source in the editor.
    pub fn source(&self) -> &str {
        &self.source
    }

    /// Replaces the editor's text (as typing would).
    pub fn set_source(&mut self, source: impl Into<String>) {
        self.source = source.into();
    }

    /// One line on where the lab stands (screenshots, tests).
    pub fn status(&self) -> String {
        let compile = match &self.compile {
            CompileState::NotCompiled => "not compiled".to_string(),
            CompileState::Compiling(_) => "compiling".into(),
            CompileState::Compiled { arch, .. } => {
                format!("compiled for sm_{}{}", arch.0, arch.1)
            }
            CompileState::Failed {
                failure: CompileFailure::Nvrtc(_),
                ..
            } => "compile error".into(),
            CompileState::Failed {
                failure: CompileFailure::Unavailable(reason),
                ..
            } => format!("cannot compile: {reason}"),
        };
        match &self.validation {
            ValidationState::None => compile,
            ValidationState::Running { .. } => format!("{compile}; validating"),
            ValidationState::Done { verdict, .. } => format!("{compile}; {}", verdict.summary()),
        }
    }

    /// Whether compiling or validating is under way.
    pub fn is_busy(&self) -> bool {
        matches!(self.compile, CompileState::Compiling(_))
            || matches!(self.validation, ValidationState::Running { .. })
    }

    fn worker(&mut self) -> Option<&LabWorker> {
        if self.worker.as_ref().is_none_or(|w| !w.is_alive()) {
            match lab_worker::spawn(self.notify.clone()) {
                Ok(worker) => self.worker = Some(worker),
                Err(error) => {
                    self.notice = Some(Notice::new(
                        Level::Error,
                        format!("cannot start the lab's thread: {error}"),
                    ));
                    return None;
                }
            }
        }
        self.worker.as_ref()
    }

    fn compile(&mut self) {
        let source = self.source.clone();
        if self
            .worker()
            .is_some_and(|w| w.send(LabJob::Compile(source.clone())))
        {
            self.compile = CompileState::Compiling(source);
        }
    }

    /// Starts validating `source`; the simulation's copy of the field arrives on `field`.
    pub fn start_validation(
        &mut self,
        source: String,
        field: Receiver<Result<(Grid, StepParams), String>>,
    ) {
        let job = LabJob::Validate { source, field };
        if self.worker().is_some_and(|w| w.send(job)) {
            self.validation = ValidationState::Running {
                started: Instant::now(),
            };
        }
    }

    /// Takes what the lab's thread reported.
    pub fn poll(&mut self) {
        let Some(worker) = &self.worker else {
            return;
        };
        let mut events = Vec::new();
        while let Some(event) = worker.try_event() {
            events.push(event);
        }
        for event in events {
            self.receive(event);
        }
    }

    /// Takes in one report of the lab's thread (a compile's or a validation's end).
    pub fn receive(&mut self, event: LabEvent) {
        {
            match event {
                LabEvent::Compiled {
                    source,
                    result,
                    took,
                } => {
                    self.compile = match result {
                        Ok(arch) => CompileState::Compiled { source, arch, took },
                        Err(failure) => CompileState::Failed { source, failure },
                    };
                }
                LabEvent::Validated {
                    source,
                    verdict,
                    field_note,
                } => {
                    self.validation = ValidationState::Done {
                        source,
                        verdict,
                        field_note,
                    };
                }
            }
        }
    }

    /// The compile state of the source in the editor (a compile of an older text is stale).
    fn compiled_now(&self) -> bool {
        matches!(&self.compile, CompileState::Compiled { source, .. } if *source == self.source)
    }

    /// Whether the source in the editor was found bit-identical.
    fn validated_now(&self) -> bool {
        matches!(&self.validation, ValidationState::Done { source, verdict, .. }
            if *source == self.source && verdict.is_identical())
    }

    /// The lines to mark: NVRTC's diagnostics of the source in the editor, and a contract
    /// mistake's line.
    fn marked_lines(
        &self,
        contract: &Result<UserContract, heatlab_engine::compute::cuda::user_kernel::ContractError>,
    ) -> BTreeMap<usize, Color32> {
        let mut marked = BTreeMap::new();
        if let CompileState::Failed {
            source,
            failure: CompileFailure::Nvrtc(log),
        } = &self.compile
        {
            if *source == self.source {
                for diagnostic in compile_diagnostics(log) {
                    let colour = if diagnostic.is_error {
                        ERROR_LINE
                    } else {
                        WARNING_LINE
                    };
                    let entry = marked.entry(diagnostic.line).or_insert(colour);
                    if diagnostic.is_error {
                        *entry = ERROR_LINE;
                    }
                }
            }
        }
        if let Err(error) = contract {
            if let Some(line) = error.line {
                marked.insert(line, ERROR_LINE);
            }
        }
        marked
    }

    /// The whole tab.
    pub fn ui(&mut self, ui: &mut egui::Ui, context: &LabContext<'_>) -> Vec<LabCommand> {
        self.poll();
        if self.is_busy() {
            ui.ctx().request_repaint_after(Duration::from_millis(200));
        }
        let mut commands = Vec::new();
        let contract = UserContract::parse(&self.source);
        egui::Panel::left("lab_controls")
            .resizable(true)
            .default_size(380.0)
            .show(ui, |ui| {
                egui::ScrollArea::vertical().show(ui, |ui| {
                    self.controls_ui(ui, context, &contract, &mut commands);
                });
            });
        egui::CentralPanel::default().show(ui, |ui| self.source_ui(ui, context, &contract));
        commands
    }

    fn controls_ui(
        &mut self,
        ui: &mut egui::Ui,
        context: &LabContext<'_>,
        contract: &Result<UserContract, heatlab_engine::compute::cuda::user_kernel::ContractError>,
        commands: &mut Vec<LabCommand>,
    ) {
        ui.heading("Kernel lab");
        ui.label(
            "Write the diffusion step in CUDA. heatlab compiles it with NVRTC for this GPU, runs \
             it in a separate process against the CPU reference, and only a bit-identical kernel \
             may step the simulation.",
        );
        if let Some(reason) = context.cuda_unavailable {
            ui.colored_label(
                WARNING,
                format!(
                    "Compiling needs an NVIDIA GPU with NVRTC ({reason}). You can still read, \
                     edit, open and save kernels."
                ),
            );
        }
        if let Some(notice) = &self.notice {
            ui.colored_label(super::notice::level_color(notice.level, ui), &notice.text);
        }
        ui.separator();
        self.file_ui(ui);
        ui.separator();
        ui.strong("Contract");
        match contract {
            Ok(contract) => {
                let boundaries: Vec<String> = contract
                    .boundaries
                    .iter()
                    .map(ToString::to_string)
                    .collect();
                ui.label(format!(
                    "user_step(in, out, lapl, rows, cols, coeff, boundary); block {}x{}; {}",
                    contract.block_x,
                    contract.block_y,
                    boundaries.join(", ")
                ));
            }
            Err(error) => {
                ui.colored_label(ERROR, format!("contract: {error}"));
            }
        }
        ui.weak("The template's header and the README say what a kernel must do.");
        ui.separator();
        self.actions_ui(ui, context, contract.is_ok(), commands);
        ui.separator();
        self.compile_ui(ui);
        self.validation_ui(ui);
        ui.separator();
        sections::timings_ui(ui, context);
    }

    /// Open, save and reset.
    fn file_ui(&mut self, ui: &mut egui::Ui) {
        ui.horizontal(|ui| {
            let label = ui.label("file");
            ui.add(egui::TextEdit::singleline(&mut self.file).desired_width(220.0))
                .labelled_by(label.id)
                .on_hover_text("a .cu file to open or save");
        });
        let unsaved = self.source != self.baseline;
        ui.horizontal(|ui| {
            if ui.button("Open").clicked() {
                let path = PathBuf::from(self.file.trim());
                if unsaved {
                    self.pending = Some(Pending::Open(path));
                } else {
                    self.open(&path);
                }
            }
            if ui.button("Save").clicked() {
                self.save(&PathBuf::from(self.file.trim()));
            }
            if ui
                .button("Reset to built-in")
                .on_hover_text("the template: heatlab's shared kernel written to the contract")
                .clicked()
            {
                if unsaved {
                    self.pending = Some(Pending::Reset);
                } else {
                    self.reset();
                }
            }
            if unsaved {
                ui.weak("edited");
            }
        });
        if let Some(pending) = self.pending.clone() {
            ui.horizontal(|ui| {
                ui.colored_label(WARNING, "Discard your unsaved edits?");
                if ui.button("Discard").clicked() {
                    self.pending = None;
                    match pending {
                        Pending::Open(path) => self.open(&path),
                        Pending::Reset => self.reset(),
                    }
                }
                if ui.button("Keep").clicked() {
                    self.pending = None;
                }
            });
        }
    }

    fn open(&mut self, path: &Path) {
        match std::fs::read_to_string(path) {
            Ok(text) => {
                self.source = text.clone();
                self.baseline = text;
                self.notice = Some(Notice::new(
                    Level::Info,
                    format!("opened {}", path.display()),
                ));
            }
            Err(error) => {
                self.notice = Some(Notice::new(
                    Level::Error,
                    format!("cannot open {}: {error}", path.display()),
                ));
            }
        }
    }

    fn save(&mut self, path: &Path) {
        let text = self.source.clone();
        match heatlab_engine::export::write_atomically(path, |out| out.write_all(text.as_bytes())) {
            Ok(()) => {
                self.baseline = text;
                self.notice = Some(Notice::new(
                    Level::Info,
                    format!("saved {}", path.display()),
                ));
            }
            Err(error) => {
                self.notice = Some(Notice::new(Level::Error, format!("cannot save: {error}")));
            }
        }
    }

    fn reset(&mut self) {
        self.source = USER_KERNEL_TEMPLATE.to_string();
        self.baseline = self.source.clone();
        self.notice = Some(Notice::new(Level::Info, "back to the built-in template"));
    }

    /// Compile, validate, use.
    fn actions_ui(
        &mut self,
        ui: &mut egui::Ui,
        context: &LabContext<'_>,
        contract_ok: bool,
        commands: &mut Vec<LabCommand>,
    ) {
        let busy = self.is_busy();
        ui.horizontal_wrapped(|ui| {
            let compile = ui
                .add_enabled(!busy, egui::Button::new("Compile"))
                .on_hover_text("NVRTC, for this GPU's architecture, on the lab's thread");
            if compile.clicked() {
                self.compile();
            }
            let can_validate = !busy && contract_ok && self.compiled_now();
            if ui
                .add_enabled(can_validate, egui::Button::new("Validate"))
                .on_hover_text(
                    "run it in a separate process on small odd fields (every boundary it \
                     declares) and on the current field, against the CPU reference",
                )
                .on_disabled_hover_text("compile this source first")
                .clicked()
            {
                commands.push(LabCommand::Validate(self.source.clone()));
            }
            if ui
                .add_enabled(self.validated_now(), egui::Button::new("Use in simulation"))
                .on_hover_text(
                    "step the simulation with it (choice \"user\" in the diffusion view)",
                )
                .on_disabled_hover_text(
                    "only a kernel validated bit-identical can step the simulation",
                )
                .clicked()
            {
                commands.push(LabCommand::UseInSimulation(self.source.clone()));
            }
        });
        if context.user_in_use && context.chosen == KernelChoice::User {
            ui.label(RichText::new("The simulation steps with your kernel.").strong());
        }
    }
}

/// The lines (1-based, inclusive) of a built-in kernel's body in `diffusion.cu`: from the
/// comments and template line above its device function to the closing brace.
pub fn builtin_lines(source: &str, kernel: CudaKernel) -> Option<(usize, usize)> {
    let needle = match kernel {
        CudaKernel::SeedFaithful => "void seed_diffusion_inplace(",
        CudaKernel::Shared => "void shared_step(",
        CudaKernel::JacobiRows => "void jacobi_step(",
        CudaKernel::JacobiVec4 { .. } => "void jacobi_step_vec4(",
        CudaKernel::Temporal { .. } => "void jacobi_temporal(",
        CudaKernel::Resident { .. } => "void jacobi_resident(",
    };
    let lines: Vec<&str> = source.lines().collect();
    let found = lines.iter().position(|line| line.contains(needle))?;
    let mut first = found;
    while first > 0 && {
        let above = lines[first - 1].trim_start();
        above.starts_with("//") || above.starts_with("template")
    } {
        first -= 1;
    }
    let last = (found..lines.len()).find(|&i| lines[i] == "}")?;
    Some((first + 1, last + 1))
}

#[cfg(test)]
mod tests {
    use super::*;
    use heatlab_engine::compute::cuda::DIFFUSION_SOURCE;

    #[test]
    fn every_builtin_kernel_has_its_lines() {
        for choice in KernelChoice::all() {
            let Some(kernel) = choice.builtin() else {
                continue;
            };
            let (first, last) = builtin_lines(DIFFUSION_SOURCE, kernel).unwrap();
            assert!(first < last, "{kernel}");
        }
        let (first, last) = builtin_lines(DIFFUSION_SOURCE, CudaKernel::Shared).unwrap();
        let text: Vec<&str> = DIFFUSION_SOURCE.lines().collect();
        assert!(text[first - 1..last].join("\n").contains("lapl[i] = l;"));
    }
}
