//! What the app remembers between runs: every control's value, never the field itself, and
//! the tab it shows. Plain data, with no window in it: the app (`ui`) draws and edits them,
//! `heatlab gui` (`cli`) fills [`Overrides`] from its options.
//!
//! eframe keeps the settings as one RON text under [`STORAGE_KEY`] in its `app.ron` (in
//! `$XDG_DATA_HOME/heatlab/`, by default `~/.local/share/heatlab/`). They are read tolerantly
//! ([`load_remembered`]): a setting that cannot be read falls back to its default and the others
//! are kept; the problem comes back as a [`SettingsProblem`] for the app to show once, and the
//! unreadable file is copied to `app.ron.bad` before eframe overwrites it.

mod remembered;
mod tab;

pub use remembered::{load_remembered, settings_from_ron, SettingsProblem};
pub use tab::Tab;

use std::fmt;
use std::path::PathBuf;

use heatlab_engine::compute::{BackendChoice, Boundary, StepParams, STABLE_COEFF_LIMIT};
use heatlab_engine::field::{JaggedParams, DEFAULT_SEED};
use heatlab_engine::grid::GridSize;
use heatlab_engine::render::{Colormap, RangeMode, ValueRange};

/// The key under which eframe's storage keeps [`Settings`].
pub const STORAGE_KEY: &str = "heatlab-settings";

/// Field-parameter presets.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Preset {
    /// The notebook's 2000x2000 field.
    Notebook,
    /// 512x512: smooth on any machine.
    Small,
    /// 8192x8192: where the GPU's lead shows.
    Large,
}

impl Preset {
    /// Every preset, in the order the panel lists them.
    pub const ALL: [Self; 3] = [Self::Notebook, Self::Small, Self::Large];

    /// The field parameters of this preset (the notebook's seed, exponent, cutoff, percentile).
    pub fn params(self) -> JaggedParams {
        let side = match self {
            Self::Notebook => 2000,
            Self::Small => 512,
            Self::Large => 8192,
        };
        JaggedParams {
            size: GridSize {
                rows: side,
                cols: side,
            },
            ..JaggedParams::default()
        }
    }

    /// A hint shown on hover.
    pub fn hint(self) -> &'static str {
        match self {
            Self::Notebook => "the notebook's field: 2000x2000, seed 3966789",
            Self::Small => "512x512: smooth on any machine, CPU included",
            Self::Large => {
                "8192x8192 (256 MiB): a GPU-sized preset, where the GPU pulls far ahead of \
                 the CPU; on a CPU each step takes about a second"
            }
        }
    }

    /// Whether the preset is meant for a GPU (on a CPU a step takes about a second).
    pub fn gpu_sized(self) -> bool {
        self == Self::Large
    }
}

impl fmt::Display for Preset {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::Notebook => "notebook 2000²",
            Self::Small => "small 512²",
            Self::Large => "large 8192² (GPU)",
        })
    }
}

/// The kind of colour range a view uses, without its numbers (for a selector).
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub enum RangeKind {
    /// The shown values' minimum and maximum.
    MinMax,
    /// Clipped to two percentiles.
    Percentile,
    /// Fixed numbers.
    Fixed,
}

impl RangeKind {
    /// Every kind, in the order a selector lists them.
    pub const ALL: [Self; 3] = [Self::MinMax, Self::Percentile, Self::Fixed];
}

impl fmt::Display for RangeKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::MinMax => "min-max",
            Self::Percentile => "percentile",
            Self::Fixed => "fixed",
        })
    }
}

/// How one view (field or Laplacian) is drawn.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct ViewSettings {
    /// Colours.
    pub colormap: Colormap,
    /// Which range mode is selected.
    pub range_kind: RangeKind,
    /// Bounds of the percentile mode, kept while another mode is selected.
    pub percentile: (f64, f64),
    /// Bounds of the fixed mode, kept while another mode is selected.
    pub fixed: (f32, f32),
}

impl ViewSettings {
    /// The field view's defaults: viridis over min-max, as the tutorial plots it.
    pub fn field_default() -> Self {
        Self {
            colormap: Colormap::Viridis,
            range_kind: RangeKind::MinMax,
            percentile: (1.0, 99.0),
            fixed: (0.0, 1.0),
        }
    }

    /// The Laplacian view's defaults: inferno clipped to the 5th-95th percentile, as the tutorial.
    pub fn laplacian_default() -> Self {
        Self {
            colormap: Colormap::Inferno,
            range_kind: RangeKind::Percentile,
            percentile: (5.0, 95.0),
            fixed: (-0.01, 0.01),
        }
    }

    /// The range mode for the renderer.
    pub fn range_mode(&self) -> RangeMode {
        match self.range_kind {
            RangeKind::MinMax => RangeMode::MinMax,
            RangeKind::Percentile => RangeMode::Percentile {
                low: self.percentile.0.min(self.percentile.1),
                high: self.percentile.0.max(self.percentile.1),
            },
            RangeKind::Fixed => RangeMode::Fixed(ValueRange {
                min: self.fixed.0,
                max: self.fixed.1,
            }),
        }
    }
}

/// Everything the controls hold.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(default)]
pub struct Settings {
    /// Backend the user picked.
    pub backend: BackendChoice,
    /// Parameters of the jagged field.
    pub field: JaggedParams,
    /// Coefficient and boundary.
    pub step: StepParams,
    /// Steps taken per displayed frame while playing.
    pub steps_per_frame: u64,
    /// Let the app choose the steps per frame so that stepping takes most of each frame.
    pub auto_steps: bool,
    /// Steps taken by "Step N".
    pub step_n: u64,
    /// The field view.
    pub field_view: ViewSettings,
    /// The Laplacian view.
    pub laplacian_view: ViewSettings,
    /// Folder that exports go into.
    pub export_dir: PathBuf,
    /// Whether exported PNGs carry a colorbar.
    pub export_colorbar: bool,
    /// The folder of the file last chosen in a file dialog (opened, saved, a map): the next
    /// dialog starts there (`None`: in the export folder).
    #[serde(default)]
    pub file_folder: Option<PathBuf>,
    /// Pixels per cell of exported and recorded PNGs (`None`: automatic).
    #[serde(default)]
    pub png_cell_pixels: Option<usize>,
    /// Record a frame every this many steps.
    pub record_every: u64,
    /// Whether the timing plots are shown.
    pub show_plots: bool,
    /// Whether the running backend is checked against the CPU reference while it runs.
    pub agreement_check: bool,
    /// The top-level tab: the diffusion simulation or a tutorial panel.
    #[serde(default)]
    pub tab: Tab,
    /// The GPU kernel that steps the simulation (a user kernel is not remembered: it must be
    /// validated again, so `user` starts as auto).
    pub kernel: heatlab_engine::compute::KernelChoice,
    /// Whether changing the seed, exponent, cutoff or percentile regenerates the field at once
    /// (when it is generated on the GPU).
    #[serde(default = "live_field_default")]
    pub live_field: bool,
    /// A heat problem's speed while playing.
    #[serde(default)]
    pub speed: ProblemSpeed,
    /// Whether a heat problem's run stops at its steady state, and under which |dT/dt|.
    #[serde(default)]
    pub steady_stop: SteadyStop,
}

/// Stopping a heat problem's run at its steady state: once the largest |dT/dt| over the field
/// falls under a tolerance.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct SteadyStop {
    /// Whether the run stops there.
    pub on: bool,
    /// The tolerance, K/s.
    pub tolerance: f64,
}

impl Default for SteadyStop {
    fn default() -> Self {
        Self {
            on: false,
            tolerance: 1e-3,
        }
    }
}

impl SteadyStop {
    /// The tolerance in force, if the stop is on.
    pub fn tolerance(&self) -> Option<f64> {
        self.on.then_some(self.tolerance)
    }
}

/// A heat problem's speed while playing: as fast as the device goes, or limited to simulated
/// seconds per wall second.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct ProblemSpeed {
    /// Whether the speed is limited.
    pub limited: bool,
    /// The limit, simulated seconds per wall second.
    pub seconds_per_second: f64,
}

impl Default for ProblemSpeed {
    fn default() -> Self {
        Self {
            limited: false,
            seconds_per_second: 1.0,
        }
    }
}

impl ProblemSpeed {
    /// The limit in force, if any.
    pub fn limit(&self) -> Option<f64> {
        self.limited.then_some(self.seconds_per_second)
    }
}

fn live_field_default() -> bool {
    true
}

impl Default for Settings {
    fn default() -> Self {
        Self {
            backend: BackendChoice::Auto,
            field: JaggedParams {
                seed: DEFAULT_SEED,
                ..JaggedParams::default()
            },
            step: StepParams {
                coeff: STABLE_COEFF_LIMIT,
                boundary: Boundary::Dirichlet,
            },
            steps_per_frame: 10,
            // Drawing a large field on the CPU costs more than ten steps: let the app balance it.
            auto_steps: true,
            step_n: 100,
            field_view: ViewSettings::field_default(),
            laplacian_view: ViewSettings::laplacian_default(),
            export_dir: PathBuf::from("heatlab-export"),
            export_colorbar: true,
            png_cell_pixels: None,
            file_folder: None,
            record_every: 100,
            show_plots: true,
            agreement_check: false,
            tab: Tab::Diffusion,
            kernel: heatlab_engine::compute::KernelChoice::Auto,
            live_field: true,
            speed: ProblemSpeed::default(),
            steady_stop: SteadyStop::default(),
        }
    }
}

impl Settings {
    /// Clamps values a hand-edited or old settings file might hold out of range.
    pub fn sanitized(mut self) -> Self {
        if self.field.validate().is_err() {
            self.field = JaggedParams::default();
        }
        // A remembered unstable coefficient would need the unlock, which is not remembered.
        if !(self.step.coeff > 0.0 && self.step.coeff <= STABLE_COEFF_LIMIT) {
            self.step.coeff = STABLE_COEFF_LIMIT;
        }
        self.steps_per_frame = self.steps_per_frame.clamp(1, MAX_STEPS_PER_FRAME);
        self.step_n = self.step_n.clamp(1, MAX_STEP_N);
        self.record_every = self.record_every.max(1);
        if self.kernel == heatlab_engine::compute::KernelChoice::User {
            self.kernel = heatlab_engine::compute::KernelChoice::Auto;
        }
        self
    }
}

pub use heatlab_engine::session::diffusion::MAX_STEPS_PER_FRAME;

/// Upper end of the "Step N" control.
pub const MAX_STEP_N: u64 = 1_000_000;

/// Values given on the command line for one session, applied over the remembered settings.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Overrides {
    /// Field size.
    pub size: Option<GridSize>,
    /// Backend.
    pub backend: Option<BackendChoice>,
    /// Colormap of the field view.
    pub colormap: Option<Colormap>,
    /// Colormap of the Laplacian view.
    pub laplacian_colormap: Option<Colormap>,
    /// Steps per frame.
    pub steps_per_frame: Option<u64>,
    /// The live agreement check.
    pub agreement_check: Option<bool>,
    /// The GPU kernel.
    pub kernel: Option<heatlab_engine::compute::KernelChoice>,
}

impl Overrides {
    /// Writes the given values into `settings`.
    pub fn apply(&self, settings: &mut Settings) {
        if let Some(size) = self.size {
            settings.field.size = size;
        }
        if let Some(backend) = self.backend {
            settings.backend = backend;
        }
        if let Some(map) = self.colormap {
            settings.field_view.colormap = map;
        }
        if let Some(map) = self.laplacian_colormap {
            settings.laplacian_view.colormap = map;
        }
        if let Some(check) = self.agreement_check {
            settings.agreement_check = check;
        }
        if let Some(kernel) = self.kernel {
            settings.kernel = kernel;
        }
        if let Some(steps) = self.steps_per_frame {
            settings.steps_per_frame = steps;
            settings.auto_steps = false;
        }
    }
}
