//! What the controls of the diffusion panel ask for. The controls only push commands; the panel
//! applies them after drawing ([`super::DiffusionPanel::apply`]), so every change of state
//! happens in one place. A new control is a new variant and one arm there; a key that asks for
//! one goes in [`shortcuts`].

use eframe::egui;

use crate::settings::ViewSettings;
use heatlab_engine::compute::{BackendChoice, Boundary, KernelChoice};
use heatlab_engine::session::diffusion::ExportKind;

use std::path::PathBuf;

use super::controls::CoefficientInput;
use super::files::VideoChoice;

/// A request from a control of the diffusion panel.
#[derive(Debug, Clone, PartialEq)]
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
    /// Step with this boundary.
    SetBoundary(Boundary),
    /// The coefficient as typed, and its unlock (used when the guard allows it).
    SetCoefficient(CoefficientInput),
    /// Take this many steps per frame.
    SetStepsPerFrame(u64),
    /// Choose the steps per frame automatically, or not.
    SetAutoSteps(bool),
    /// A heat problem's speed while playing.
    SetSpeed(crate::settings::ProblemSpeed),
    /// Stop a heat problem's run at its steady state, or not.
    SetSteadyStop(crate::settings::SteadyStop),
    /// The heat problem's duration in simulated seconds (`None`: no end).
    SetDuration(Option<f64>),
    /// The field view's and the Laplacian view's colormaps and ranges.
    SetViews {
        /// The field view's.
        field: ViewSettings,
        /// The Laplacian view's.
        laplacian: ViewSettings,
    },
    /// Write a file.
    Export(ExportKind),
    /// Start or stop recording a PNG sequence.
    SetRecording(bool),
    /// Record a frame every this many steps (while recording, recording restarts with it).
    SetRecordEvery(u64),
    /// Turn the live agreement check on or off.
    SetAgreementCheck(bool),
    /// Step with this GPU kernel.
    SetKernel(KernelChoice),
    /// Time every kernel on the current field.
    MeasureKernels,
    /// Save the state to this file.
    SaveState(PathBuf),
    /// Open a saved state or an initial field (`.npy`, PNG, JPEG).
    Open(PathBuf),
    /// Start recording a video into the export folder.
    StartVideo(VideoChoice),
    /// Stop recording the video (it is finished and kept).
    StopVideo,
    /// Write the probes' and the line profile's values as CSV into the export folder.
    ExportProbes,
    /// Zoom both views in by two.
    ZoomIn,
    /// Zoom both views out by two.
    ZoomOut,
    /// Show the whole field.
    Fit,
    /// Build or edit the heat problem (materials, sources, sides, thermostats).
    Problem(heatlab_engine::session::diffusion::ProblemCommand),
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
