//! Saving a heat problem as a scenario file: what the app's "Save scenario…" writes. The kinds
//! of cells become `[base]` and `[[parts]]` (parts without a shape, named by the map), the
//! cell map a `.npy` of indices beside the file, the start a temperature or a `.npy` of
//! temperatures beside it; [`super::load`] reads it back into the same problem.

use std::path::{Path, PathBuf};

use npyz::WriterBuilder;

use super::file::{
    GridSection, HeaterSection, InitialSection, MapSection, MaterialSection, PartSection,
    ScenarioFile, SideSection, SidesSection, TemperatureText, TimeSection,
};
use super::thermostat::ThermostatSection;
use crate::error::{HeatlabError, Result};
use crate::export::{write_atomically, write_npy};
use crate::grid::Grid;
use crate::problem::material::{self, Material};
use crate::problem::{CellKind, HeatProblem, HeaterPower, SideCondition, TimeStep};

/// What a scenario file is written from.
#[derive(Debug, Clone, Copy)]
pub struct ScenarioToSave<'a> {
    /// Its title.
    pub title: &'a str,
    /// What to look for in it.
    pub description: &'a str,
    /// The problem.
    pub problem: &'a HeatProblem,
    /// The field it starts from, °C.
    pub initial: &'a Grid,
    /// Seconds `heatlab run --scenario` simulates, if known.
    pub duration: Option<f64>,
}

/// The files written: the scenario, then those beside it.
#[derive(Debug, Clone, PartialEq)]
pub struct Saved {
    /// Every file written.
    pub files: Vec<PathBuf>,
    /// What the scenario format cannot hold and was left out (for a notice).
    pub left_out: Vec<String>,
}

/// Writes `scenario` to `path` (a `.toml`), with `STEM.map.npy` and `STEM.initial.npy` beside
/// it when needed; every file is written atomically.
pub fn save(path: &Path, scenario: ScenarioToSave<'_>) -> Result<Saved> {
    let problem = scenario.problem;
    problem.check()?;
    if scenario.initial.size() != problem.size {
        return Err(HeatlabError::InvalidInput(format!(
            "the field is {} but the problem is {}",
            scenario.initial.size(),
            problem.size
        )));
    }
    let stem = path
        .file_stem()
        .map_or_else(|| "scenario".into(), |s| s.to_string_lossy().into_owned());
    let folder = path.parent().unwrap_or(Path::new(""));
    let mut files = vec![path.to_path_buf()];
    let (materials, material_names) = materials_of(problem);
    let names = unique_names(&problem.kinds);
    let section =
        |index: usize| part_section(&problem.kinds[index], &names[index], &material_names[index]);
    let mut file = ScenarioFile {
        title: scenario.title.to_string(),
        description: scenario.description.to_string(),
        grid: GridSection {
            rows: problem.size.rows,
            cols: problem.size.cols,
            spacing: problem.spacing,
        },
        time: time_section(problem.time_step, scenario.duration),
        materials,
        base: section(0),
        map: None,
        parts: (1..problem.kinds.len()).map(section).collect(),
        initial: InitialSection::default(),
        sides: sides_section(problem),
        thermostats: problem
            .thermostats
            .iter()
            .map(|t| ThermostatSection {
                heater: names[usize::from(t.heater_kind)].clone(),
                probe: Some([t.probe.0, t.probe.1]),
                probe_position: None,
                setpoint: TemperatureText::Celsius(t.setpoint),
                deadband: t.deadband,
                every_steps: Some(t.every_steps),
                every_seconds: None,
            })
            .collect(),
    };
    if problem.map.iter().any(|&k| k != 0) {
        let map = folder.join(format!("{stem}.map.npy"));
        write_map(&map, problem)?;
        file.map = Some(MapSection {
            npy: Some(format!("{stem}.map.npy")),
            names: names.clone(),
            ..MapSection::default()
        });
        files.push(map);
    }
    let values = scenario.initial.as_slice();
    match values.first() {
        Some(&first) if values.iter().all(|&v| v == first) => {
            file.initial.temperature = Some(TemperatureText::Celsius(f64::from(first)));
        }
        _ => {
            let start = folder.join(format!("{stem}.initial.npy"));
            write_npy(&start, scenario.initial)?;
            file.initial.npy = Some(format!("{stem}.initial.npy"));
            files.push(start);
        }
    }
    let text = toml::to_string(&file)
        .map_err(|e| HeatlabError::Internal(format!("writing the scenario as TOML: {e}")))?;
    write_atomically(path, |w| w.write_all(text.as_bytes()))?;
    Ok(Saved {
        files,
        left_out: Vec::new(),
    })
}

/// The `[[materials]]` to write (those not in the library as they are) and each kind's
/// material name in the file.
fn materials_of(problem: &HeatProblem) -> (Vec<MaterialSection>, Vec<String>) {
    let mut own: Vec<Material> = Vec::new();
    let same = |a: &Material, b: &Material| {
        (a.conductivity, a.density, a.specific_heat) == (b.conductivity, b.density, b.specific_heat)
    };
    let names = problem
        .kinds
        .iter()
        .map(|kind| {
            let m = &kind.material;
            if material::find(&m.name).is_some_and(|library| same(&library, m)) {
                return m.name.clone();
            }
            if let Some(known) = own
                .iter()
                .find(|o| same(o, m) && o.name.starts_with(&m.name))
            {
                return known.name.clone();
            }
            let mut name = m.name.clone();
            let mut n = 1;
            while material::find(&name).is_some() || own.iter().any(|o| o.name == name) {
                n += 1;
                name = format!("{}-{n}", m.name);
            }
            own.push(Material {
                name: name.clone(),
                ..m.clone()
            });
            name
        })
        .collect();
    let sections = own
        .into_iter()
        .map(|m| MaterialSection {
            name: m.name,
            conductivity: m.conductivity,
            density: m.density,
            specific_heat: m.specific_heat,
            color: m.colour.map(crate::import::material_map::colour_text),
        })
        .collect();
    (sections, names)
}

/// Each kind's name, made unique with " 2", " 3"… (a file's parts have one name each).
fn unique_names(kinds: &[CellKind]) -> Vec<String> {
    let mut names: Vec<String> = Vec::with_capacity(kinds.len());
    for kind in kinds {
        let base = if kind.name.trim().is_empty() {
            kind.material.name.clone()
        } else {
            kind.name.clone()
        };
        let mut name = base.clone();
        let mut n = 1;
        let taken = |name: &str, names: &[String]| {
            names
                .iter()
                .any(|other| material::normalise(other) == material::normalise(name))
        };
        while taken(&name, &names) {
            n += 1;
            name = format!("{base} {n}");
        }
        names.push(name);
    }
    names
}

fn part_section(kind: &CellKind, name: &str, material: &str) -> PartSection {
    PartSection {
        name: Some(name.to_string()),
        material: material.to_string(),
        heater: kind.heater.map(|heater| {
            let (power, power_density) = match heater.power {
                HeaterPower::Total(p) => (Some(p), None),
                HeaterPower::PerVolume(d) => (None, Some(d)),
            };
            HeaterSection {
                power,
                power_density,
                on: Some(heater.on),
            }
        }),
        held: kind.held_temperature.map(TemperatureText::Celsius),
        ..PartSection::default()
    }
}

fn time_section(step: TimeStep, duration: Option<f64>) -> TimeSection {
    let (step_fraction, step) = match step {
        TimeStep::Fraction(f) => (Some(f), None),
        TimeStep::Seconds(s) => (None, Some(s)),
    };
    TimeSection {
        step_fraction,
        step,
        duration,
        output_every: None,
    }
}

fn side_section(condition: SideCondition) -> SideSection {
    let mut section = SideSection {
        kind: condition.kind().name().to_string(),
        temperature: None,
        flux: None,
        h: None,
        ambient: None,
    };
    match condition {
        SideCondition::Fixed { temperature } => {
            section.temperature = Some(TemperatureText::Celsius(temperature));
        }
        SideCondition::Flux { flux } => section.flux = Some(flux),
        SideCondition::Convective { h, ambient } => {
            section.h = Some(h);
            section.ambient = Some(TemperatureText::Celsius(ambient));
        }
        SideCondition::Insulated | SideCondition::Periodic => {}
    }
    section
}

fn sides_section(problem: &HeatProblem) -> SidesSection {
    let sides = &problem.sides;
    SidesSection {
        left: Some(side_section(sides.left)),
        right: Some(side_section(sides.right)),
        top: Some(side_section(sides.top)),
        bottom: Some(side_section(sides.bottom)),
    }
}

/// The cell map as a `.npy` of `u8` indices, `(rows, cols)`.
fn write_map(path: &Path, problem: &HeatProblem) -> Result<()> {
    let shape = [problem.size.rows as u64, problem.size.cols as u64];
    write_atomically(path, |writer| {
        let mut npy = npyz::WriteOptions::new()
            .default_dtype()
            .shape(&shape)
            .writer(writer)
            .begin_nd()?;
        npy.extend(problem.map.iter().copied())?;
        npy.finish()
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::grid::GridSize;
    use crate::problem::{Heater, Sides};

    fn problem() -> HeatProblem {
        let size = GridSize::new(12, 16).unwrap();
        let copper = material::find("copper").unwrap();
        let mut problem = HeatProblem::uniform(size, 0.002, copper);
        let own = Material::new("soft-rubber", 0.15, 1100.0, 2000.0).unwrap();
        let heater = CellKind {
            name: "coil".into(),
            heater: Some(Heater {
                power: HeaterPower::PerVolume(2e6),
                on: false,
            }),
            ..CellKind::of(own)
        };
        let index = problem.kind_index(heater).unwrap();
        problem.paint(index, |row, col| row < 3 && col > 4);
        let held = CellKind {
            name: "ice".into(),
            held_temperature: Some(-3.25),
            ..CellKind::of(material::find("ice").unwrap())
        };
        let index = problem.kind_index(held).unwrap();
        problem.paint(index, |row, col| row > 9 && col < 2);
        problem.sides = Sides {
            left: SideCondition::Convective {
                h: 12.5,
                ambient: 18.0,
            },
            right: SideCondition::Flux { flux: -250.0 },
            top: SideCondition::Periodic,
            bottom: SideCondition::Periodic,
        };
        problem.time_step = TimeStep::Fraction(0.8);
        problem
    }

    #[test]
    fn a_saved_scenario_loads_as_the_same_problem() {
        let dir = tempfile::tempdir().unwrap();
        let problem = problem();
        let mut initial = Grid::zeros(problem.size);
        for (i, v) in initial.as_mut_slice().iter_mut().enumerate() {
            *v = 20.0 + (i % 7) as f32 * 0.3;
        }
        problem.apply_held(&mut initial).unwrap();
        let path = dir.path().join("built.toml");
        let saved = save(
            &path,
            ScenarioToSave {
                title: "Built in the app",
                description: "Look at the coil.",
                problem: &problem,
                initial: &initial,
                duration: Some(30.0),
            },
        )
        .unwrap();
        assert_eq!(saved.files.len(), 3, "{saved:?}");
        let loaded = super::super::load(&path).unwrap();
        assert_eq!(loaded.problem, problem);
        assert_eq!(loaded.initial, initial);
        assert_eq!(loaded.title(), "Built in the app");
        assert_eq!(loaded.file.description, "Look at the coil.");
        assert_eq!(loaded.duration(), Some(30.0));
        // A uniform start and a plain plate need no files beside it.
        let plain = HeatProblem::uniform(problem.size, 0.01, material::find("brick").unwrap());
        let mut uniform = Grid::zeros(problem.size);
        uniform.as_mut_slice().fill(-4.5);
        let path = dir.path().join("plain.toml");
        let saved = save(
            &path,
            ScenarioToSave {
                title: "",
                description: "",
                problem: &plain,
                initial: &uniform,
                duration: None,
            },
        )
        .unwrap();
        assert_eq!(saved.files, vec![path.clone()]);
        let loaded = super::super::load(&path).unwrap();
        assert_eq!(loaded.problem, plain);
        assert_eq!(loaded.initial, uniform);
    }

    #[test]
    fn names_are_made_unique_and_edited_materials_renamed() {
        let copper = material::find("copper").unwrap();
        let hot = Material {
            conductivity: 300.0,
            ..copper.clone()
        };
        let kinds = vec![
            CellKind::of(copper.clone()),
            CellKind::of(hot.clone()),
            CellKind::of(hot),
        ];
        assert_eq!(unique_names(&kinds), ["copper", "copper 2", "copper 3"]);
        let mut problem = HeatProblem::uniform(GridSize::new(2, 2).unwrap(), 0.1, copper);
        problem.kinds = kinds;
        let (own, names) = materials_of(&problem);
        assert_eq!(names, ["copper", "copper-2", "copper-2"]);
        assert_eq!(own.len(), 1);
        assert_eq!(own[0].conductivity, 300.0);
    }
}
