//! The gallery: classic heat problems shipped inside heatlab, each a scenario file of
//! `assets/scenarios/` with what to look for in its `description`, and, where one exists, the
//! exact answer it is measured against ([`super::exact`]). `heatlab run --scenario NAME` and
//! `heatlab scenario check NAME` take a gallery name as well as a file; the app opens them
//! from its Gallery menu.

use std::path::Path;
use std::sync::LazyLock;

use super::exact::ExactKind;
use super::file::ScenarioFile;
use super::{Scenario, ScenarioErrors};

/// One problem of the gallery.
#[derive(Debug)]
pub struct GalleryEntry {
    /// Its name (the file's stem), as `heatlab run --scenario NAME` takes it.
    pub name: &'static str,
    /// The menu it is listed under.
    pub topic: Topic,
    /// The scenario file.
    pub text: &'static str,
    /// The exact answer it is measured against, if it has one.
    pub exact: Option<ExactKind>,
}

/// The gallery's menus.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Topic {
    /// Steady conduction through walls and bars.
    Conduction,
    /// Fins, heat sinks and bridges: where heat takes a short cut.
    Engineering,
    /// Things warming and cooling over time.
    Transients,
    /// Sources, sides that wrap, the tutorial's plate.
    Sources,
}

impl Topic {
    /// Every topic, in menu order.
    pub const ALL: [Self; 4] = [
        Self::Conduction,
        Self::Engineering,
        Self::Transients,
        Self::Sources,
    ];

    /// The menu's title.
    pub fn title(self) -> &'static str {
        match self {
            Self::Conduction => "Steady conduction",
            Self::Engineering => "Fins, sinks and bridges",
            Self::Transients => "Warming and cooling",
            Self::Sources => "Sources and plates",
        }
    }
}

macro_rules! entry {
    ($name:literal, $topic:ident, $exact:expr) => {
        GalleryEntry {
            name: $name,
            topic: Topic::$topic,
            text: include_str!(concat!("../../../assets/scenarios/", $name, ".toml")),
            exact: $exact,
        }
    };
}

/// Every problem of the gallery.
pub static GALLERY: [GalleryEntry; 13] = [
    entry!("linear-profile", Conduction, Some(ExactKind::Layers)),
    entry!("composite-wall", Conduction, Some(ExactKind::Layers)),
    entry!(
        "square-one-hot-side",
        Conduction,
        Some(ExactKind::SquareOneHotSide)
    ),
    entry!("fin", Engineering, Some(ExactKind::Fin)),
    entry!("heat-sink", Engineering, None),
    entry!("thermal-bridge", Engineering, None),
    entry!("block-cooling", Transients, Some(ExactKind::BlockCooling)),
    entry!("semi-infinite", Transients, Some(ExactKind::SemiInfinite)),
    entry!("two-blocks-contact", Transients, Some(ExactKind::Contact)),
    entry!("heater-plate", Sources, None),
    entry!("heater-thermostat", Sources, None),
    entry!("periodic-plate", Sources, None),
    entry!("jagged-plate", Sources, None),
];

/// The title and description of every entry, read once from their files.
static HEADINGS: LazyLock<Vec<(String, String)>> = LazyLock::new(|| {
    GALLERY
        .iter()
        .map(|entry| match toml::from_str::<ScenarioFile>(entry.text) {
            Ok(file) => (file.title, super::reflow(&file.description)),
            // A test builds every entry; the menu still lists one that would not parse.
            Err(_) => (entry.name.to_string(), String::new()),
        })
        .collect()
});

impl GalleryEntry {
    /// Its title.
    pub fn title(&self) -> &'static str {
        self.heading().0.as_str()
    }

    /// What to look for in it.
    pub fn description(&self) -> &'static str {
        self.heading().1.as_str()
    }

    fn heading(&self) -> &'static (String, String) {
        let index = GALLERY
            .iter()
            .position(|e| std::ptr::eq(e, self))
            .unwrap_or_default();
        &HEADINGS[index]
    }

    /// Builds its scenario (gallery files name no other file).
    pub fn scenario(&self) -> Result<Scenario, ScenarioErrors> {
        let mut scenario = super::parse(self.text, Path::new(".")).map_err(|mut e| {
            e.source = format!("gallery problem {}", self.name);
            e
        })?;
        scenario.gallery = Some(self.name);
        Ok(scenario)
    }
}

/// The entry called `name` (its file's stem).
pub fn find(name: &str) -> Option<&'static GalleryEntry> {
    GALLERY.iter().find(|entry| entry.name == name)
}

/// The entries of `topic`, in menu order.
pub fn of_topic(topic: Topic) -> impl Iterator<Item = &'static GalleryEntry> {
    GALLERY.iter().filter(move |entry| entry.topic == topic)
}

/// Reads the scenario `file`, or the gallery's problem of that name when no such file exists
/// (so a file always wins over a gallery name).
pub fn load_file_or_named(file: &Path) -> Result<Scenario, ScenarioErrors> {
    load_file_or_named_for(file, 0)
}

/// As [`load_file_or_named`], for a caller that will hold `held_copies` copies of the field
/// (a run): the memory they need is checked from the file's `[grid]` before anything is built.
pub fn load_file_or_named_for(file: &Path, held_copies: usize) -> Result<Scenario, ScenarioErrors> {
    // A folder is never a scenario file: one named like a gallery problem (`./fin`) does not
    // hide the problem.
    if !file.exists() || file.is_dir() {
        if let Some(entry) = file.to_str().and_then(find) {
            return entry.scenario();
        }
    }
    super::load_for(file, held_copies).map_err(|mut errors| {
        if !file.exists() {
            errors.errors.push(
                "no gallery problem has that name either (heatlab scenario list names them)"
                    .to_string(),
            );
        }
        errors
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_gallery_problem_builds_and_says_what_to_look_for() {
        assert!(GALLERY.len() >= 10);
        for entry in &GALLERY {
            let scenario = entry
                .scenario()
                .unwrap_or_else(|e| panic!("{}: {e}", entry.name));
            assert_eq!(scenario.title(), entry.title(), "{}", entry.name);
            assert!(
                entry.description().len() > 100,
                "{}: a description of what to look for",
                entry.name
            );
            assert!(scenario.duration().is_some(), "{}", entry.name);
            assert_eq!(scenario.gallery, Some(entry.name));
            assert!(find(entry.name).is_some_and(|e| std::ptr::eq(e, entry)));
        }
        let listed: usize = Topic::ALL.iter().map(|&t| of_topic(t).count()).sum();
        assert_eq!(listed, GALLERY.len(), "every entry is in a menu");
    }

    #[test]
    fn a_file_wins_over_a_gallery_name() {
        let dir = tempfile::tempdir().unwrap();
        let named = load_file_or_named(Path::new("fin")).unwrap();
        assert_eq!(named.gallery, Some("fin"));
        let file = dir.path().join("fin");
        std::fs::write(&file, find("linear-profile").unwrap().text).unwrap();
        let read = load_file_or_named(&file).unwrap();
        assert_eq!(read.gallery, None);
        assert_eq!(read.title(), "Linear profile between two plates");
        let missing = load_file_or_named(Path::new("no-such-problem")).unwrap_err();
        assert!(
            missing.to_string().contains("heatlab scenario list"),
            "{missing}"
        );
    }
}
