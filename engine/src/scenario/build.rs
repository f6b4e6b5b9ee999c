//! From a scenario file to a heat problem and its initial field, naming every error found.

use std::path::Path;

use super::file::{
    HeaterSection, PartSection, Region, ScenarioFile, SideSection, TemperatureText, TimeSection,
};
use super::initial::initial_field;
use super::map::read_map;
use crate::field::JaggedParams;
use crate::grid::{Grid, GridSize};
use crate::problem::material::{self, normalise, Material};
use crate::problem::temperature::{celsius_number, parse_celsius};
use crate::problem::{
    CellKind, HeatProblem, Heater, HeaterPower, Side, SideCondition, SideKind, Sides, TimeStep,
    MAX_KINDS,
};

/// The errors found so far; building goes on after each so that all are named at once.
#[derive(Debug, Default)]
pub struct Errors(pub Vec<String>);

impl Errors {
    /// Notes an error.
    pub fn push(&mut self, message: impl Into<String>) {
        self.0.push(message.into());
    }

    /// `Some(value)` on success, else notes the error and gives `None`.
    pub fn take<T>(&mut self, result: crate::Result<T>) -> Option<T> {
        result.map_err(|e| self.push(e.to_string())).ok()
    }
}

/// What a scenario builds.
pub struct Built {
    /// The problem.
    pub problem: HeatProblem,
    /// The field at the start, °C (held cells at their temperatures).
    pub initial: Grid,
}

/// Bytes a build holds for every cell: the cell map (one byte) and the initial field (`f32`).
const BUILD_BYTES_PER_CELL: usize = 5;

/// Builds `file`, whose relative paths are relative to `folder`, for a caller that will hold
/// `held_copies` copies of the field (a run): the memory for them, or the build's own if more,
/// is checked from `[grid]` before anything is built or read.
pub fn build(file: &ScenarioFile, folder: &Path, held_copies: usize) -> Result<Built, Errors> {
    let mut errors = Errors::default();
    let size = grid_size(file, &mut errors);
    if let Some(size) = size {
        if let Err(e) = check_memory(file, size, held_copies) {
            errors.push(e.to_string());
            return Err(errors);
        }
    }
    let (user, refused) = user_materials(file, &mut errors);
    let time_step = time_step(&file.time, &mut errors);
    let sides = sides(file, &mut errors);
    let resolver = Resolver {
        user: &user,
        refused: &refused,
    };
    let base = resolver.part_kind(&file.base, &mut errors);
    let parts: Vec<Option<CellKind>> = file
        .parts
        .iter()
        .map(|part| resolver.part_kind(part, &mut errors))
        .collect();
    let Some(size) = size else {
        return Err(errors);
    };
    let mut problem = HeatProblem {
        size,
        spacing: file.grid.spacing,
        kinds: Vec::new(),
        map: vec![0; size.cells()],
        sides: sides.unwrap_or_default(),
        time_step: time_step.unwrap_or_default(),
        thermostats: Vec::new(),
    };
    let named = named_kinds(base.iter().chain(parts.iter().flatten()), &mut errors);
    if file.base.rect.is_some() || file.base.ellipse.is_some() {
        errors.push("[base] fills the whole grid: it takes no rect or ellipse");
    }
    if file.base.initial.is_some() {
        errors.push("[base] takes no initial: the start is [initial]");
    }
    if let Some(base) = base {
        add_kind(&mut problem, base, &mut errors);
    }
    if let Some(map) = &file.map {
        let lookup = |name: &str| resolver.kind_named(name, &named);
        if let Some(kinds) = errors.take(read_map(map, folder, size, &lookup)) {
            for (index, kind) in kinds.kinds.into_iter().enumerate() {
                let Some(at) = add_kind(&mut problem, kind, &mut errors) else {
                    continue;
                };
                for (cell, &k) in problem.map.iter_mut().zip(&kinds.cells) {
                    if k as usize == index {
                        *cell = at;
                    }
                }
            }
        }
    }
    paint_parts(&mut problem, file, parts, &mut errors);
    if errors.0.is_empty() {
        if let Some(tables) = errors.take(problem.tables()) {
            problem.thermostats =
                super::thermostat::build(&file.thermostats, &problem, &tables, &mut errors);
        }
    }
    let initial = errors.take(initial_field(&file.initial, folder, size));
    match initial {
        Some(mut initial) if errors.0.is_empty() => {
            part_initials(file, problem.spacing, &mut initial, &mut errors);
            errors.take(problem.apply_held(&mut initial));
            if errors.0.is_empty() {
                return Ok(Built { problem, initial });
            }
            Err(errors)
        }
        _ => Err(errors),
    }
}

/// Paints the parts in order; a part without a shape must be one the map names.
fn paint_parts(
    problem: &mut HeatProblem,
    file: &ScenarioFile,
    parts: Vec<Option<CellKind>>,
    errors: &mut Errors,
) {
    let mapped = mapped_names(file);
    for (part, kind) in file.parts.iter().zip(parts) {
        match kind {
            // A part without a shape is a kind the map names (saved scenarios write them so).
            Some(kind)
                if part.rect.is_none()
                    && part.ellipse.is_none()
                    && !mapped.contains(&normalise(&kind.name)) =>
            {
                errors.push(format!(
                    "part \"{}\" needs a rect or an ellipse (one of them), or a [map] that \
                     names it",
                    kind.name
                ));
            }
            Some(_) if part.rect.is_none() && part.ellipse.is_none() => {}
            Some(kind) => paint_part(problem, part, kind, errors),
            None => {}
        }
    }
}

/// The names a `[map]` gives its colours or indices, normalised.
fn mapped_names(file: &ScenarioFile) -> Vec<String> {
    file.map.as_ref().map_or_else(Vec::new, |map| {
        map.colors
            .values()
            .chain(&map.names)
            .map(|name| normalise(name))
            .collect()
    })
}

/// Sets the cells of parts with their own `initial` temperature, in the parts' order.
fn part_initials(file: &ScenarioFile, dx: f64, initial: &mut Grid, errors: &mut Errors) {
    let cols = initial.cols();
    for part in &file.parts {
        let Some(text) = &part.initial else {
            continue;
        };
        let name = part.name.as_deref().unwrap_or(&part.material);
        let Some(celsius) = temperature(text, &format!("part \"{name}\" initial"), errors) else {
            continue;
        };
        let (region, ellipse) = match (part.rect, part.ellipse) {
            (Some(r), None) => (r, false),
            (None, Some(e)) => (e, true),
            (None, None) => {
                errors.push(format!(
                    "part \"{name}\": initial needs the part's rect or ellipse"
                ));
                continue;
            }
            // Both: refused when the part was painted.
            _ => continue,
        };
        for (cell, value) in initial.as_mut_slice().iter_mut().enumerate() {
            let (row, col) = (cell / cols, cell % cols);
            if covers(
                &region,
                ellipse,
                (col as f64 + 0.5) * dx,
                (row as f64 + 0.5) * dx,
            ) {
                *value = celsius as f32;
            }
        }
    }
}

/// Refuses a grid whose build, or the `held_copies` copies of its field a caller holds, would
/// not fit in memory: a 65536² grid's map and field are 21 GiB.
fn check_memory(file: &ScenarioFile, size: GridSize, held_copies: usize) -> crate::Result<()> {
    let generation = file.initial.jagged.as_ref().map_or(0, |_| {
        // Generated while the map is held, with the spectrum's copies beside it.
        JaggedParams {
            size,
            ..JaggedParams::default()
        }
        .host_bytes_needed()
    });
    let build = size
        .cells()
        .saturating_mul(BUILD_BYTES_PER_CELL)
        .saturating_add(generation);
    let held = size.bytes().saturating_mul(held_copies);
    crate::memory::ensure_host_memory(&format!("{size} scenario grid"), build.max(held))
}

fn grid_size(file: &ScenarioFile, errors: &mut Errors) -> Option<GridSize> {
    let spacing = file.grid.spacing;
    if !(spacing.is_finite() && spacing > 0.0) {
        errors.push(format!(
            "[grid] spacing must be a positive length in metres (the side of a cell), got {spacing}"
        ));
    }
    errors.take(
        GridSize::new(file.grid.rows, file.grid.cols)
            .map_err(|e| crate::HeatlabError::InvalidInput(format!("[grid] rows and cols: {e}"))),
    )
}

/// The user's materials that are valid, and the names of those refused (already named in
/// `errors`, so that a part using one is not also called an unknown material).
fn user_materials(file: &ScenarioFile, errors: &mut Errors) -> (Vec<Material>, Vec<String>) {
    let mut user: Vec<Material> = Vec::new();
    let mut refused: Vec<String> = Vec::new();
    for section in &file.materials {
        let name = normalise(&section.name);
        if material::find(&name).is_some() {
            errors.push(format!(
                "material \"{}\" is already in the library; give yours another name",
                section.name
            ));
            continue;
        }
        if user.iter().any(|m| m.name == name) {
            errors.push(format!("material \"{}\" is defined twice", section.name));
            continue;
        }
        let colour = match section.color.as_deref() {
            None => Ok(None),
            Some(text) => crate::import::material_map::parse_colour(text)
                .map(Some)
                .ok_or_else(|| {
                    crate::HeatlabError::InvalidInput(format!(
                        "material \"{}\": color \"{text}\" is not #rrggbb",
                        section.name
                    ))
                }),
        };
        let material = colour.and_then(|colour| {
            Material::new(
                &name,
                section.conductivity,
                section.density,
                section.specific_heat,
            )
            .map(|m| Material { colour, ..m })
        });
        match errors.take(material) {
            Some(material) => user.push(material),
            None => refused.push(name),
        }
    }
    (user, refused)
}

fn time_step(time: &TimeSection, errors: &mut Errors) -> Option<TimeStep> {
    for (name, value) in [
        ("duration", time.duration),
        ("output_every", time.output_every),
    ] {
        if let Some(v) = value.filter(|v| !(v.is_finite() && *v > 0.0)) {
            errors.push(format!("[time] {name} must be positive seconds, got {v}"));
        }
    }
    match (time.step_fraction, time.step) {
        (Some(_), Some(_)) => {
            errors.push("[time] takes step_fraction or step (seconds), not both");
            None
        }
        (Some(f), None) => Some(TimeStep::Fraction(f)),
        (None, Some(s)) => Some(TimeStep::Seconds(s)),
        (None, None) => Some(TimeStep::default()),
    }
}

pub(super) fn temperature(text: &TemperatureText, what: &str, errors: &mut Errors) -> Option<f64> {
    let parsed = match text {
        TemperatureText::Celsius(c) => celsius_number(*c),
        TemperatureText::Text(t) => parse_celsius(t),
    };
    parsed.map_err(|e| errors.push(format!("{what}: {e}"))).ok()
}

fn sides(file: &ScenarioFile, errors: &mut Errors) -> Option<Sides> {
    let written = &file.sides;
    let mut sides = Sides::default();
    for (side, section) in
        Side::ALL
            .into_iter()
            .zip([&written.left, &written.right, &written.top, &written.bottom])
    {
        if let Some(section) = section {
            if let Some(condition) = side_condition(side, section, errors) {
                sides.set(side, condition);
            }
        }
    }
    errors.take(sides.check()).map(|_| sides)
}

fn side_condition(side: Side, s: &SideSection, errors: &mut Errors) -> Option<SideCondition> {
    let what = format!("[sides] {side}");
    let kind = SideKind::parse(&s.kind)
        .map_err(|e| errors.push(format!("{what}: {e}")))
        .ok()?;
    let need = |value: Option<f64>, name: &str, errors: &mut Errors| {
        value.or_else(|| {
            errors.push(format!("{what}: a {kind} side needs {name}"));
            None
        })
    };
    let temp = |value: &Option<TemperatureText>, name: &str, errors: &mut Errors| match value {
        Some(t) => temperature(t, &format!("{what} {name}"), errors),
        None => {
            errors.push(format!("{what}: a {kind} side needs {name}"));
            None
        }
    };
    // A value the kind does not take is a mistake (a flux on a fixed side), not ignored.
    let given = [
        ("temperature", s.temperature.is_some(), SideKind::Fixed),
        ("flux", s.flux.is_some(), SideKind::Flux),
        ("h", s.h.is_some(), SideKind::Convective),
        ("ambient", s.ambient.is_some(), SideKind::Convective),
    ];
    let stray: Vec<&str> = given
        .iter()
        .filter(|&&(_, is_given, takes)| is_given && takes != kind)
        .map(|&(name, _, _)| name)
        .collect();
    if !stray.is_empty() {
        let kind = kind.to_string();
        let article = if kind.starts_with(['a', 'e', 'i', 'o', 'u']) {
            "an"
        } else {
            "a"
        };
        errors.push(format!(
            "{what}: {article} {kind} side takes no {}",
            stray.join(" or ")
        ));
        return None;
    }
    let condition = match kind {
        SideKind::Insulated => SideCondition::Insulated,
        SideKind::Periodic => SideCondition::Periodic,
        SideKind::Fixed => SideCondition::Fixed {
            temperature: temp(&s.temperature, "temperature", errors)?,
        },
        SideKind::Flux => SideCondition::Flux {
            flux: need(s.flux, "flux (W/m² into the plate)", errors)?,
        },
        SideKind::Convective => {
            let h = need(s.h, "h (W/m²/K)", errors);
            let ambient = temp(&s.ambient, "ambient", errors);
            SideCondition::Convective {
                h: h?,
                ambient: ambient?,
            }
        }
    };
    errors.take(condition.check(side)).map(|_| condition)
}

/// Finds materials and kinds by name.
struct Resolver<'a> {
    user: &'a [Material],
    /// The user's materials refused (their error already noted).
    refused: &'a [String],
}

impl Resolver<'_> {
    fn material(&self, name: &str) -> Option<Material> {
        let wanted = normalise(name);
        self.user
            .iter()
            .find(|m| m.name == wanted)
            .cloned()
            .or_else(|| material::find(name))
    }

    fn unknown(&self, name: &str) -> String {
        let mut known: Vec<String> = material::library().into_iter().map(|m| m.name).collect();
        known.extend(self.user.iter().map(|m| m.name.clone()));
        format!("unknown material \"{name}\"; known: {}", known.join(", "))
    }

    /// A part's name or a material's, as a map names it.
    fn kind_named(&self, name: &str, named: &[(String, CellKind)]) -> crate::Result<CellKind> {
        if let Some((_, kind)) = named.iter().find(|(n, _)| normalise(n) == normalise(name)) {
            return Ok(kind.clone());
        }
        self.material(name)
            .map(CellKind::of)
            .ok_or_else(|| crate::HeatlabError::InvalidInput(self.unknown(name)))
    }

    fn part_kind(&self, part: &PartSection, errors: &mut Errors) -> Option<CellKind> {
        let Some(material) = self.material(&part.material) else {
            if !self.refused.contains(&normalise(&part.material)) {
                errors.push(self.unknown(&part.material));
            }
            return None;
        };
        let name = part.name.clone().unwrap_or_else(|| material.name.clone());
        let held = match &part.held {
            Some(t) => Some(temperature(t, &format!("part \"{name}\" held"), errors)?),
            None => None,
        };
        let heater = match &part.heater {
            Some(h) => Some(heater(h, &name, errors)?),
            None => None,
        };
        Some(CellKind {
            name,
            material,
            heater,
            held_temperature: held,
        })
    }
}

fn heater(section: &HeaterSection, name: &str, errors: &mut Errors) -> Option<Heater> {
    let power = match (section.power, section.power_density) {
        (Some(p), None) => HeaterPower::Total(p),
        (None, Some(d)) => HeaterPower::PerVolume(d),
        _ => {
            errors.push(format!(
                "part \"{name}\": a heater takes power (W per metre of depth) or power_density \
                 (W/m³), one of them"
            ));
            return None;
        }
    };
    Some(Heater {
        power,
        on: section.on.unwrap_or(true),
    })
}

fn add_kind(problem: &mut HeatProblem, kind: CellKind, errors: &mut Errors) -> Option<u8> {
    let result = problem.kind_index(kind);
    if result.is_err() && problem.kinds.len() >= MAX_KINDS {
        errors.push(format!(
            "more than {MAX_KINDS} kinds of cells (materials, heaters and held parts together)"
        ));
        return None;
    }
    errors.take(result)
}

fn paint_part(problem: &mut HeatProblem, part: &PartSection, kind: CellKind, errors: &mut Errors) {
    let name = kind.name.clone();
    let (region, ellipse) = match (part.rect, part.ellipse) {
        (Some(r), None) => (r, false),
        (None, Some(e)) => (e, true),
        _ => {
            errors.push(format!(
                "part \"{name}\" needs a rect or an ellipse (one of them)"
            ));
            return;
        }
    };
    if ![region.x, region.y, region.width, region.height]
        .iter()
        .all(|v| v.is_finite())
        || region.width <= 0.0
        || region.height <= 0.0
    {
        errors.push(format!(
            "part \"{name}\": its region needs a positive width and height"
        ));
        return;
    }
    let Some(index) = add_kind(problem, kind, errors) else {
        return;
    };
    let dx = problem.spacing;
    let inside = |row: usize, col: usize| {
        covers(
            &region,
            ellipse,
            (col as f64 + 0.5) * dx,
            (row as f64 + 0.5) * dx,
        )
    };
    let cols = problem.size.cols;
    let covered = (0..problem.map.len()).any(|cell| inside(cell / cols, cell % cols));
    problem.paint(index, inside);
    if !covered {
        errors.push(format!(
            "part \"{name}\" covers no cell centre (the grid is {:.4} m x {:.4} m)",
            problem.size.cols as f64 * dx,
            problem.size.rows as f64 * dx
        ));
    }
}

/// The kinds by name, refusing two different kinds of one name.
fn named_kinds<'a>(
    kinds: impl Iterator<Item = &'a CellKind>,
    errors: &mut Errors,
) -> Vec<(String, CellKind)> {
    let mut named: Vec<(String, CellKind)> = Vec::new();
    for kind in kinds {
        let same_name = named
            .iter()
            .find(|(n, _)| normalise(n) == normalise(&kind.name));
        match same_name {
            Some((_, other)) if other != kind => errors.push(format!(
                "two different parts are called \"{}\": give each its own name",
                kind.name
            )),
            Some(_) => {}
            None => named.push((kind.name.clone(), kind.clone())),
        }
    }
    named
}

/// Whether the point `(x, y)` (m) lies in `region` (an ellipse inside it when `ellipse`).
fn covers(region: &Region, ellipse: bool, x: f64, y: f64) -> bool {
    let inside_box = x >= region.x
        && x < region.x + region.width
        && y >= region.y
        && y < region.y + region.height;
    if !ellipse {
        return inside_box;
    }
    let (cx, cy) = (
        region.x + region.width / 2.0,
        region.y + region.height / 2.0,
    );
    let (u, v) = (
        (x - cx) / (region.width / 2.0),
        (y - cy) / (region.height / 2.0),
    );
    u * u + v * v <= 1.0
}
