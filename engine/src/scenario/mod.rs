//! Scenario files: heat problems written as TOML (grid and spacing, materials, the material
//! map, parts with heaters or held temperatures, the initial temperature, the four sides, the
//! time step, duration and outputs). `heatlab run --scenario FILE` runs one and
//! `heatlab scenario check FILE` names every error in one.
//!
//! ```toml
//! title = "Composite wall"
//! [grid]
//! rows = 4
//! cols = 100
//! spacing = 0.002            # m, the side of a cell
//! [time]
//! duration = 3600.0          # s
//! [base]
//! material = "brick"
//! [[parts]]
//! material = "polystyrene-foam"
//! rect = { x = 0.1, y = 0.0, width = 0.1, height = 0.008 }
//! [sides]
//! left = { type = "fixed", temperature = "20 C" }
//! right = { type = "convective", h = 25.0, ambient = "-5 C" }
//! ```

mod build;
pub mod exact;
pub mod file;
pub mod gallery;
mod initial;
mod map;
pub mod new;
pub mod save;
pub mod thermostat;

use std::fmt;
use std::path::{Path, PathBuf};

pub use file::ScenarioFile;

use crate::error::HeatlabError;
use crate::grid::Grid;
use crate::problem::HeatProblem;

/// The longest scenario file read (a real one is a few kilobytes).
const MAX_SCENARIO_BYTES: u64 = 1 << 20;

/// A scenario, built.
#[derive(Debug, Clone)]
pub struct Scenario {
    /// The file as written.
    pub file: ScenarioFile,
    /// The file's text (saved with states and shown in the app).
    pub text: String,
    /// Where it was read from, if from a file.
    pub path: Option<PathBuf>,
    /// The gallery problem it is, if one (see [`gallery`]).
    pub gallery: Option<&'static str>,
    /// The problem it builds.
    pub problem: HeatProblem,
    /// The field it starts from, °C.
    pub initial: Grid,
}

impl Scenario {
    /// The title, or the file's name.
    pub fn title(&self) -> String {
        if !self.file.title.is_empty() {
            return self.file.title.clone();
        }
        self.path
            .as_ref()
            .and_then(|p| p.file_stem())
            .map_or_else(|| "scenario".into(), |s| s.to_string_lossy().into_owned())
    }

    /// Seconds to simulate, if the file says.
    pub fn duration(&self) -> Option<f64> {
        self.file.time.duration
    }

    /// Seconds between saved frames, if the file says.
    pub fn output_every(&self) -> Option<f64> {
        self.file.time.output_every
    }
}

/// Every error a scenario has.
#[derive(Debug, Clone)]
pub struct ScenarioErrors {
    /// The file (or "scenario" for text).
    pub source: String,
    /// Each error, for people.
    pub errors: Vec<String>,
}

impl fmt::Display for ScenarioErrors {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.errors.as_slice() {
            [one] => write!(f, "{}: {one}", self.source),
            many => {
                write!(f, "{} has {} errors:", self.source, many.len())?;
                for error in many {
                    write!(f, "\n  - {error}")?;
                }
                Ok(())
            }
        }
    }
}

impl std::error::Error for ScenarioErrors {}

impl ScenarioErrors {
    /// As the library's error (for callers that report one message).
    pub fn into_error(self) -> HeatlabError {
        HeatlabError::InvalidInput(self.to_string())
    }
}

/// Reads and builds the scenario in `path` (its relative paths are relative to its folder).
pub fn load(path: &Path) -> Result<Scenario, ScenarioErrors> {
    load_for(path, 0)
}

/// As [`load`], for a caller that will hold `held_copies` copies of the field (a run): the
/// memory they need is checked from `[grid]` before anything is built.
pub fn load_for(path: &Path, held_copies: usize) -> Result<Scenario, ScenarioErrors> {
    let source = path.display().to_string();
    let one = |error: String| ScenarioErrors {
        source: source.clone(),
        errors: vec![error],
    };
    let text = read_text(path).map_err(|e| one(e.to_string()))?;
    let file = followed_links(path);
    let folder = file.parent().unwrap_or(Path::new("."));
    let mut scenario = parse_for(&text, folder, held_copies).map_err(|mut e| {
        e.source = source.clone();
        e
    })?;
    scenario.path = Some(path.to_path_buf());
    Ok(scenario)
}

/// Builds the scenario in `text`, with relative paths relative to `folder`.
pub fn parse(text: &str, folder: &Path) -> Result<Scenario, ScenarioErrors> {
    parse_for(text, folder, 0)
}

/// As [`parse`], for a caller that will hold `held_copies` copies of the field.
pub fn parse_for(
    text: &str,
    folder: &Path,
    held_copies: usize,
) -> Result<Scenario, ScenarioErrors> {
    let errors = |errors| ScenarioErrors {
        source: "scenario".into(),
        errors,
    };
    let file: ScenarioFile = toml::from_str(text).map_err(|e| errors(vec![toml_error(&e)]))?;
    let built = build::build(&file, folder, held_copies).map_err(|e| errors(e.0))?;
    Ok(Scenario {
        file,
        text: text.to_string(),
        path: None,
        gallery: None,
        problem: built.problem,
        initial: built.initial,
    })
}

/// TOML's message in one paragraph, with its line.
fn toml_error(error: &toml::de::Error) -> String {
    error
        .to_string()
        .trim()
        .replace('\n', " ")
        .replace("  ", " ")
}

/// `path` with the symbolic links of its last component followed: a scenario's relative
/// paths are relative to the folder of the file itself, wherever a link to it lies.
fn followed_links(path: &Path) -> PathBuf {
    let mut file = path.to_path_buf();
    // Linux's own limit on links followed in one lookup; a loop fails the read anyway.
    for _ in 0..40 {
        match std::fs::read_link(&file) {
            Ok(target) => {
                file = match file.parent() {
                    Some(folder) => folder.join(target),
                    None => target,
                }
            }
            Err(_) => break,
        }
    }
    file
}

fn read_text(path: &Path) -> crate::Result<String> {
    use std::io::Read;
    let file = std::fs::File::open(path).map_err(|e| HeatlabError::io("opening", path, e))?;
    if file.metadata().is_ok_and(|m| m.is_dir()) {
        return Err(HeatlabError::InvalidInput(
            "it is a folder, not a scenario file".into(),
        ));
    }
    let mut bytes = Vec::new();
    file.take(MAX_SCENARIO_BYTES + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| HeatlabError::io("reading", path, e))?;
    if bytes.len() as u64 > MAX_SCENARIO_BYTES {
        return Err(HeatlabError::InvalidInput(format!(
            "{} is larger than a scenario file can be ({} KiB)",
            path.display(),
            MAX_SCENARIO_BYTES >> 10
        )));
    }
    String::from_utf8(bytes)
        .map_err(|_| HeatlabError::InvalidInput(format!("{} is not UTF-8 text", path.display())))
}

#[cfg(test)]
mod tests;

/// A description as people read it: the lines of a paragraph joined (a TOML text breaks its
/// lines where the file does), paragraphs kept apart by a blank line.
pub fn reflow(text: &str) -> String {
    text.split("\n\n")
        .map(|paragraph| paragraph.split_whitespace().collect::<Vec<_>>().join(" "))
        .filter(|paragraph| !paragraph.is_empty())
        .collect::<Vec<_>>()
        .join("\n\n")
}
