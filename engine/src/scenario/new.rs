//! A new problem as the app's "New problem" form describes it: a grid of cells of one size, one
//! material (from the library or the user's own), a uniform initial temperature, a title, a
//! description and a duration, insulated all round. It is written as a scenario file's sections
//! and built by the same checks as a file, so that it saves, reopens and runs like one.

use std::path::Path;

use super::file::{
    GridSection, InitialSection, MaterialSection, PartSection, ScenarioFile, TemperatureText,
    TimeSection,
};
use super::{build, Scenario, ScenarioErrors};
use crate::problem::Material;

/// What the form asks for.
#[derive(Debug, Clone, PartialEq)]
pub struct NewProblem {
    /// A short title (may be empty).
    pub title: String,
    /// What to look for (may be empty).
    pub description: String,
    /// Rows of cells (top to bottom).
    pub rows: usize,
    /// Columns of cells (left to right).
    pub cols: usize,
    /// The side of a cell, m.
    pub spacing: f64,
    /// The material that fills the grid: a library name, or one of `own_materials`.
    pub material: String,
    /// Materials of the user's own (written as the scenario's `[[materials]]`).
    pub own_materials: Vec<Material>,
    /// The temperature everywhere at the start, °C.
    pub initial_temperature: f64,
    /// Simulated seconds the run lasts (`None`: no end).
    pub duration: Option<f64>,
}

impl NewProblem {
    /// The scenario file it is.
    pub fn file(&self) -> ScenarioFile {
        ScenarioFile {
            title: self.title.trim().to_string(),
            description: self.description.trim().to_string(),
            grid: GridSection {
                rows: self.rows,
                cols: self.cols,
                spacing: self.spacing,
            },
            time: TimeSection {
                duration: self.duration,
                ..TimeSection::default()
            },
            materials: self
                .own_materials
                .iter()
                .map(|m| MaterialSection {
                    name: m.name.clone(),
                    conductivity: m.conductivity,
                    density: m.density,
                    specific_heat: m.specific_heat,
                    color: m.colour.map(crate::import::material_map::colour_text),
                })
                .collect(),
            base: PartSection {
                material: self.material.clone(),
                ..PartSection::default()
            },
            initial: InitialSection {
                temperature: Some(TemperatureText::Celsius(self.initial_temperature)),
                ..InitialSection::default()
            },
            ..ScenarioFile::default()
        }
    }

    /// Builds it as a scenario; every error is named, as for a file. `held_copies` copies of
    /// the field are checked to fit before anything is built.
    pub fn build(&self, held_copies: usize) -> Result<Scenario, ScenarioErrors> {
        let file = self.file();
        let errors = |errors| ScenarioErrors {
            source: "the new problem".into(),
            errors,
        };
        let text = toml::to_string(&file).map_err(|e| errors(vec![e.to_string()]))?;
        let built = build::build(&file, Path::new("."), held_copies).map_err(|e| errors(e.0))?;
        Ok(Scenario {
            file,
            text,
            path: None,
            gallery: None,
            problem: built.problem,
            initial: built.initial,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn copper_bar() -> NewProblem {
        NewProblem {
            title: "A copper bar".into(),
            description: "It cools.".into(),
            rows: 20,
            cols: 200,
            spacing: 5e-4,
            material: "copper".into(),
            own_materials: Vec::new(),
            initial_temperature: 60.0,
            duration: Some(30.0),
        }
    }

    #[test]
    fn a_new_problem_builds_saves_and_reads_back_as_the_same_scenario() {
        let scenario = copper_bar().build(0).unwrap();
        assert_eq!(scenario.title(), "A copper bar");
        assert_eq!(scenario.duration(), Some(30.0));
        assert_eq!(scenario.problem.size.rows, 20);
        assert_eq!(scenario.problem.size.cols, 200);
        assert_eq!(scenario.problem.spacing, 5e-4);
        assert_eq!(scenario.problem.kinds.len(), 1);
        assert_eq!(scenario.problem.kinds[0].material.name, "copper");
        assert!(scenario.initial.as_slice().iter().all(|&t| t == 60.0));
        // Its text is a scenario file that builds the same problem.
        let again = super::super::parse(&scenario.text, Path::new(".")).unwrap();
        assert_eq!(again.problem, scenario.problem);
        assert_eq!(again.initial, scenario.initial);
    }

    #[test]
    fn a_material_of_the_users_own_fills_the_grid() {
        let foam = Material {
            colour: Some([250, 240, 120]),
            ..Material::new("my foam", 0.03, 30.0, 1400.0).unwrap()
        };
        let problem = NewProblem {
            material: "my foam".into(),
            own_materials: vec![foam.clone()],
            ..copper_bar()
        };
        let scenario = problem.build(0).unwrap();
        let material = &scenario.problem.kinds[0].material;
        assert_eq!(
            (
                material.conductivity,
                material.density,
                material.specific_heat
            ),
            (0.03, 30.0, 1400.0)
        );
        assert!(scenario.text.contains("[[materials]]"));
        assert!(
            scenario.text.contains("color = \"#faf078\""),
            "{}",
            scenario.text
        );
        assert_eq!(material.colour, Some([250, 240, 120]));
        let again = super::super::parse(&scenario.text, Path::new(".")).unwrap();
        assert_eq!(again.problem, scenario.problem, "read back from the text");
        // A colour that does not read is named.
        let bad = "[grid]\nrows = 2\ncols = 2\nspacing = 0.001\n[[materials]]\nname = \"x\"\n\
                   conductivity = 1\ndensity = 1\nspecific_heat = 1\ncolor = \"#12\"\n\
                   [base]\nmaterial = \"x\"\n";
        let errors = super::super::parse(bad, Path::new("."))
            .unwrap_err()
            .to_string();
        assert!(errors.contains("color \"#12\" is not #rrggbb"), "{errors}");
        // The palette and the maps draw it in its colour.
        let colours = crate::import::material_map::kind_colours(&scenario.problem.kinds);
        assert_eq!(colours[0], [250, 240, 120]);
    }

    #[test]
    fn bad_values_are_named_all_at_once() {
        let problem = NewProblem {
            rows: 0,
            spacing: -1.0,
            material: "unobtainium".into(),
            ..copper_bar()
        };
        let errors = problem.build(0).unwrap_err().to_string();
        for said in ["rows", "spacing", "unknown material \"unobtainium\""] {
            assert!(errors.contains(said), "{said} in {errors}");
        }
        let below_absolute_zero = NewProblem {
            initial_temperature: -300.0,
            ..copper_bar()
        };
        let errors = below_absolute_zero.build(0).unwrap_err().to_string();
        assert!(errors.contains("-300"), "{errors}");
    }
}
