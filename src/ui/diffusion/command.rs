//! What the controls of the diffusion panel ask for. The controls only push commands; the panel
//! applies them after drawing ([`super::DiffusionPanel::apply`]), so every change of state
//! happens in one place. A new control is a new variant and one arm there; a key that asks for
//! one goes in [`shortcuts`].

use eframe::egui;

use crate::compute::{BackendChoice, KernelChoice};

use crate::session::diffusion::ExportKind;

/// A request from a control of the diffusion panel.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DiffusionCommand {
    /// Step continuously.
    Play,
    /// Stop stepping.
    Pause,
    /// Take this many steps, then stop.
    Step(u64),
    /// Back to the initial field.
    Reset,
    /// Generate the field with the parameters in the settings and start over.
    Regenerate,
    /// Use this backend.
    SwitchBackend(BackendChoice),
    /// The boundary in the settings changed.
    BoundaryChanged,
    /// The typed coefficient or its unlock changed.
    CoefficientChanged,
    /// The steps per frame in the settings changed.
    StepsPerFrameChanged,
    /// The automatic steps per frame was turned on or off.
    AutoStepsChanged,
    /// A view's colormap or range changed.
    ViewsChanged,
    /// Write a file.
    Export(ExportKind),
    /// Start or stop recording a PNG sequence.
    SetRecording(bool),
    /// The recording interval changed (while recording, recording restarts with it).
    RecordEveryChanged,
    /// The live agreement check was turned on or off.
    AgreementCheckChanged,
    /// Step with this GPU kernel.
    SetKernel(KernelChoice),
    /// Time every kernel on the current field.
    MeasureKernels,
    /// Zoom both views in by two.
    ZoomIn,
    /// Zoom both views out by two.
    ZoomOut,
    /// Show the whole field.
    Fit,
}

/// Space plays or pauses (`playing` says which), S steps once, R resets; nothing while a text
/// field has the keyboard.
pub fn shortcuts(ctx: &egui::Context, playing: bool) -> Vec<DiffusionCommand> {
    if ctx.egui_wants_keyboard_input() {
        return Vec::new();
    }
    let (space, s, r) = ctx.input(|i| {
        (
            i.key_pressed(egui::Key::Space),
            i.key_pressed(egui::Key::S),
            i.key_pressed(egui::Key::R),
        )
    });
    let mut commands = Vec::new();
    if space {
        commands.push(if playing {
            DiffusionCommand::Pause
        } else {
            DiffusionCommand::Play
        });
    }
    if s {
        commands.push(DiffusionCommand::Step(1));
    }
    if r {
        commands.push(DiffusionCommand::Reset);
    }
    commands
}
