//! What the app remembers between runs: every control's value, never the field itself.
//!
//! eframe keeps the settings as one RON text under [`STORAGE_KEY`] in its `app.ron` (in
//! `$XDG_DATA_HOME/heatlab/`, by default `~/.local/share/heatlab/`). They are read tolerantly
//! ([`load_remembered`]): a setting that cannot be read falls back to its default and the others
//! are kept; the problem comes back as a [`SettingsProblem`] for the app to show once, and the
//! unreadable file is copied to `app.ron.bad` before eframe overwrites it.

use std::fmt;
use std::path::{Path, PathBuf};

use ron::value::RawValue;

use crate::compute::{BackendChoice, Boundary, StepParams, STABLE_COEFF_LIMIT};
use crate::field::{JaggedParams, DEFAULT_SEED};
use crate::grid::GridSize;
use crate::render::{Colormap, RangeMode, ValueRange};

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
    /// Record a frame every this many steps.
    pub record_every: u64,
    /// Whether the timing plots are shown.
    pub show_plots: bool,
    /// Whether the running backend is checked against the CPU reference while it runs.
    pub agreement_check: bool,
    /// The top-level tab: the diffusion simulation or a tutorial panel.
    #[serde(default)]
    pub tab: super::tutorial::Tab,
    /// The GPU kernel that steps the simulation (a user kernel is not remembered: it must be
    /// validated again, so `user` starts as auto).
    pub kernel: crate::compute::KernelChoice,
    /// Whether changing the seed, exponent, cutoff or percentile regenerates the field at once
    /// (when it is generated on the GPU).
    #[serde(default = "live_field_default")]
    pub live_field: bool,
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
            record_every: 100,
            show_plots: true,
            agreement_check: false,
            tab: super::tutorial::Tab::Diffusion,
            kernel: crate::compute::KernelChoice::Auto,
            live_field: true,
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
        if self.kernel == crate::compute::KernelChoice::User {
            self.kernel = crate::compute::KernelChoice::Auto;
        }
        self
    }
}

pub use crate::session::diffusion::MAX_STEPS_PER_FRAME;

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
    pub kernel: Option<crate::compute::KernelChoice>,
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

/// Why remembered settings were not all used; the app shows it once as a notice.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SettingsProblem {
    /// What could not be read, with the reader's message.
    pub reason: String,
    /// The settings that fell back to their defaults.
    pub defaulted: Vec<&'static str>,
    /// Where the unreadable file was kept, when it was.
    pub kept_as: Option<PathBuf>,
}

impl fmt::Display for SettingsProblem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "settings could not be read: {}; using defaults for: {}",
            self.reason,
            self.defaulted.join(", ")
        )?;
        if let Some(path) = &self.kept_as {
            write!(f, " (the unreadable file is kept as {})", path.display())?;
        }
        Ok(())
    }
}

/// One setting's RON text, read later on its own so that one bad value spoils only itself.
#[derive(Debug, Default)]
struct RawField(Option<Box<RawValue>>);

impl<'de> serde::Deserialize<'de> for RawField {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        <Box<RawValue>>::deserialize(deserializer).map(|raw| Self(Some(raw)))
    }
}

/// Declares [`RawSettings`] with one [`RawField`] per named setting, and the merge that reads
/// each over [`Settings::default`].
macro_rules! tolerant_settings {
    ($($name:ident),* $(,)?) => {
        /// [`Settings`] with every value still unread.
        #[derive(Debug, Default, serde::Deserialize)]
        #[serde(default, rename = "Settings")]
        struct RawSettings {
            $($name: RawField,)*
        }

        /// The names of every setting, for "using defaults for: ...".
        const SETTING_NAMES: &[&str] = &[$(stringify!($name)),*];

        impl RawSettings {
            /// The defaults, with each setting that reads replaced by its value; the settings
            /// that do not read are listed with their reader's message.
            fn merge(self) -> (Settings, Vec<(&'static str, String)>) {
                let mut settings = Settings::default();
                let mut unreadable = Vec::new();
                $(
                    if let Some(raw) = self.$name.0 {
                        match raw.into_rust() {
                            Ok(value) => settings.$name = value,
                            Err(error) => unreadable.push((stringify!($name), error.to_string())),
                        }
                    }
                )*
                (settings, unreadable)
            }
        }
    };
}

tolerant_settings!(
    backend,
    field,
    step,
    steps_per_frame,
    auto_steps,
    step_n,
    field_view,
    laplacian_view,
    export_dir,
    export_colorbar,
    record_every,
    show_plots,
    agreement_check,
    tab,
    kernel,
    live_field,
);

/// Reads the settings' RON text: every setting that reads, defaults for the others, and what
/// went wrong (`None` when everything read).
pub fn settings_from_ron(text: &str) -> (Settings, Option<SettingsProblem>) {
    let raw: RawSettings = match ron::from_str(text) {
        Ok(raw) => raw,
        Err(error) => {
            let problem = SettingsProblem {
                reason: error.to_string(),
                defaulted: SETTING_NAMES.to_vec(),
                kept_as: None,
            };
            return (Settings::default(), Some(problem));
        }
    };
    let (settings, unreadable) = raw.merge();
    let problem = (!unreadable.is_empty()).then(|| SettingsProblem {
        reason: unreadable
            .iter()
            .map(|(name, error)| format!("{name}: {error}"))
            .collect::<Vec<_>>()
            .join("; "),
        defaulted: unreadable.iter().map(|(name, _)| *name).collect(),
        kept_as: None,
    });
    (settings, problem)
}

/// The remembered settings from eframe's storage (`None` when there are none), and the problem
/// to show when some could not be read. Reads eframe's own `app.ron` to tell a file that could
/// not be read at all from a first start.
pub fn load_remembered(
    storage: &dyn eframe::Storage,
) -> (Option<Settings>, Option<SettingsProblem>) {
    let file = eframe::storage_dir(super::APP_ID).map(|dir| dir.join("app.ron"));
    load_remembered_from(storage, file.as_deref())
}

/// [`load_remembered`] with the storage's file given: on a problem, `file` is copied to
/// `file.bad` before eframe overwrites it.
pub fn load_remembered_from(
    storage: &dyn eframe::Storage,
    file: Option<&Path>,
) -> (Option<Settings>, Option<SettingsProblem>) {
    let (settings, problem) = match storage.get_string(STORAGE_KEY) {
        Some(text) => {
            let (settings, problem) = settings_from_ron(&text);
            (Some(settings), problem)
        }
        // No settings: a first start, or a file that eframe could not read and will replace.
        None => (None, file.and_then(unreadable_storage_file)),
    };
    let problem = problem.map(|mut problem| {
        problem.kept_as = file.and_then(keep_bad_copy);
        problem
    });
    (settings, problem)
}

/// The problem with eframe's `app.ron` when it exists but is not the map of texts it writes.
fn unreadable_storage_file(file: &Path) -> Option<SettingsProblem> {
    let text = std::fs::read_to_string(file).ok()?;
    let error = ron::from_str::<std::collections::HashMap<String, String>>(&text).err()?;
    Some(SettingsProblem {
        reason: format!("{} is not valid: {error}", file.display()),
        defaulted: SETTING_NAMES.to_vec(),
        kept_as: None,
    })
}

/// Copies `file` to `file.bad`; the copy's path, or `None` when there was nothing to copy.
fn keep_bad_copy(file: &Path) -> Option<PathBuf> {
    let mut name = file.file_name()?.to_os_string();
    name.push(".bad");
    let bad = file.with_file_name(name);
    std::fs::copy(file, &bad).ok().map(|_| bad)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    /// eframe's storage as it is after reading an `app.ron`.
    #[derive(Default)]
    struct MemoryStorage(HashMap<String, String>);

    impl eframe::Storage for MemoryStorage {
        fn get_string(&self, key: &str) -> Option<String> {
            self.0.get(key).cloned()
        }
        fn set_string(&mut self, key: &str, value: String) {
            self.0.insert(key.to_owned(), value);
        }
        fn remove_string(&mut self, key: &str) {
            self.0.remove(key);
        }
        fn flush(&mut self) {}
    }

    fn remembered() -> Settings {
        Settings {
            steps_per_frame: 37,
            step_n: 555,
            export_colorbar: false,
            ..Settings::default()
        }
    }

    /// An `app.ron` as eframe writes it, holding `value` under the settings' key.
    fn storage_with(dir: &Path, value: &str) -> (MemoryStorage, PathBuf) {
        let mut map = HashMap::new();
        map.insert(STORAGE_KEY.to_string(), value.to_string());
        let file = dir.join("app.ron");
        std::fs::write(&file, ron::to_string(&map).unwrap()).unwrap();
        (MemoryStorage(map), file)
    }

    #[test]
    fn settings_that_read_come_back_with_no_problem() {
        let dir = tempfile::tempdir().unwrap();
        let text = ron::to_string(&remembered()).unwrap();
        let (storage, file) = storage_with(dir.path(), &text);
        let (settings, problem) = load_remembered_from(&storage, Some(&file));
        assert_eq!(settings, Some(remembered()));
        assert_eq!(problem, None);
        assert!(!dir.path().join("app.ron.bad").exists());
        // Nothing stored and no file: a first start.
        let (none, quiet) = load_remembered_from(&MemoryStorage::default(), None);
        assert_eq!((none, quiet), (None, None));
    }

    #[test]
    fn a_mistyped_setting_falls_back_alone_and_is_reported() {
        let dir = tempfile::tempdir().unwrap();
        let text = ron::to_string(&remembered()).unwrap();
        assert!(text.contains("steps_per_frame:37"), "{text}");
        let mistyped = text.replace("steps_per_frame:37", "steps_per_frame:\"ten\"");
        let (storage, file) = storage_with(dir.path(), &mistyped);
        let original = std::fs::read(&file).unwrap();
        let (settings, problem) = load_remembered_from(&storage, Some(&file));
        let settings = settings.unwrap();
        assert_eq!(
            settings.steps_per_frame,
            Settings::default().steps_per_frame
        );
        assert_eq!(settings.step_n, 555, "the other settings are kept");
        assert!(!settings.export_colorbar);
        let problem = problem.unwrap();
        assert_eq!(problem.defaulted, ["steps_per_frame"]);
        let shown = problem.to_string();
        assert!(
            shown.starts_with("settings could not be read: steps_per_frame: "),
            "{shown}"
        );
        assert!(
            shown.contains("; using defaults for: steps_per_frame"),
            "{shown}"
        );
        let bad = dir.path().join("app.ron.bad");
        assert_eq!(problem.kept_as.as_deref(), Some(bad.as_path()));
        assert_eq!(std::fs::read(bad).unwrap(), original);
    }

    #[test]
    fn a_corrupt_settings_text_gives_every_default_and_says_so() {
        let dir = tempfile::tempdir().unwrap();
        let (storage, file) = storage_with(dir.path(), "(backend:Auto,field:(size:");
        let (settings, problem) = load_remembered_from(&storage, Some(&file));
        assert_eq!(settings, Some(Settings::default()));
        let problem = problem.unwrap();
        assert_eq!(problem.defaulted, SETTING_NAMES);
        assert!(dir.path().join("app.ron.bad").exists());
    }

    #[test]
    fn a_corrupt_storage_file_is_reported_and_kept() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("app.ron");
        std::fs::write(&file, "{\"heatlab-settings\": \"(backend:Au").unwrap();
        // eframe could not read it, so its storage is empty.
        let (settings, problem) = load_remembered_from(&MemoryStorage::default(), Some(&file));
        assert_eq!(settings, None);
        let problem = problem.unwrap();
        assert!(problem.reason.contains("app.ron is not valid"), "{problem}");
        assert_eq!(problem.defaulted.len(), SETTING_NAMES.len());
        let bad = dir.path().join("app.ron.bad");
        assert_eq!(
            std::fs::read_to_string(bad).unwrap(),
            "{\"heatlab-settings\": \"(backend:Au"
        );
    }

    #[test]
    fn every_setting_is_read_field_by_field() {
        // A setting added to `Settings` but not to `tolerant_settings!` would be lost silently.
        let value = serde_json::to_value(Settings::default()).unwrap();
        let mut names: Vec<String> = value.as_object().unwrap().keys().cloned().collect();
        names.sort();
        let mut expected: Vec<String> = SETTING_NAMES.iter().map(|s| s.to_string()).collect();
        expected.sort();
        assert_eq!(names, expected);
    }
}
