//! Reading remembered settings tolerantly: each setting on its own, so that one bad value
//! spoils only itself; the unreadable file kept beside eframe's.

use std::fmt;
use std::path::{Path, PathBuf};

use ron::value::RawValue;

use super::Settings;

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
    png_cell_pixels,
    file_folder,
    record_every,
    show_plots,
    agreement_check,
    tab,
    kernel,
    live_field,
    speed,
    steady_stop,
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

/// The remembered settings from the RON text eframe's storage holds under
/// [`super::STORAGE_KEY`] (`stored`; `None` when there are none), and the problem to show when
/// some could not be read. `file` is eframe's own `app.ron`: it tells a file that could not be
/// read at all from a first start, and on a problem it is copied to `file.bad` before eframe
/// overwrites it.
pub fn load_remembered(
    stored: Option<String>,
    file: Option<&Path>,
) -> (Option<Settings>, Option<SettingsProblem>) {
    let (settings, problem) = match stored {
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
    use super::super::STORAGE_KEY;
    use super::*;
    use std::collections::HashMap;

    /// eframe's storage as it is after reading an `app.ron`: its texts by key.
    #[derive(Default)]
    struct MemoryStorage(HashMap<String, String>);

    impl MemoryStorage {
        /// The settings' text, as `ui` reads it from eframe's storage.
        fn settings_text(&self) -> Option<String> {
            self.0.get(STORAGE_KEY).cloned()
        }
    }

    /// [`load_remembered`] on what `storage` holds.
    fn load_remembered_from(
        storage: &MemoryStorage,
        file: Option<&Path>,
    ) -> (Option<Settings>, Option<SettingsProblem>) {
        load_remembered(storage.settings_text(), file)
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
