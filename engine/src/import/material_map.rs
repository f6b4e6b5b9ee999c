//! Material maps as pictures: a PNG with one pixel per cell whose colours say which kind of
//! cell each is, read through a legend (colours and the kinds they paint), and the current map
//! written the same way with its legend beside it, so that it can be edited in a paint
//! program and read back.
//!
//! A pixel takes the legend colour nearest to it (the largest difference of its red, green
//! and blue) within a tolerance, so the soft edges a paint program may leave still read; a
//! colour farther than that from every legend colour is refused, naming the colour and a pixel
//! where it occurs. An image of another size than the grid is refused unless scaling was asked
//! for (nearest neighbour).

use std::collections::HashMap;
use std::io::Write;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::error::{HeatlabError, Result};
use crate::export::atomic::write_atomically;
use crate::export::png::write_png_rgb;
use crate::grid::GridSize;
use crate::memory::ensure_host_memory;
use crate::problem::{material, CellKind, HeatProblem, Sides, TimeStep, MAX_KINDS, PLATE_SPACING};

/// An 8-bit red, green, blue colour.
pub type Rgb = [u8; 3];

/// How far (the largest of the red, green and blue differences) a pixel may lie from its legend
/// colour unless the user says otherwise.
pub const DEFAULT_TOLERANCE: u8 = 12;

/// The colour of each library material in maps, palettes and exported pictures: near the
/// material's look where it has one, and every two at least 32 apart in some channel (more
/// than twice [`DEFAULT_TOLERANCE`]).
const LIBRARY_COLOURS: [(&str, Rgb); 24] = [
    ("copper", [0xb8, 0x73, 0x33]),
    ("silver", [0xc0, 0xc0, 0xd0]),
    ("gold", [0xff, 0xd7, 0x00]),
    ("aluminium", [0x8f, 0xa3, 0xb8]),
    ("aluminium-2024", [0x5f, 0x7f, 0x9f]),
    ("brass", [0xb5, 0xa6, 0x42]),
    ("iron", [0x60, 0x60, 0x60]),
    ("carbon-steel", [0x30, 0x38, 0x40]),
    ("stainless-steel", [0xb0, 0x70, 0xb0]),
    ("titanium", [0x8c, 0x28, 0x64]),
    ("silicon", [0x2a, 0x4d, 0x8f]),
    ("glass", [0xa8, 0xe0, 0xe0]),
    ("pyrex", [0x50, 0xc0, 0xc0]),
    ("brick", [0xb2, 0x22, 0x22]),
    ("concrete", [0xc8, 0xbe, 0x8c]),
    ("granite", [0x96, 0x6e, 0x6e]),
    ("hardwood", [0x78, 0x3c, 0x0a]),
    ("softwood", [0xe6, 0xa0, 0x64]),
    ("polystyrene-foam", [0xff, 0xf5, 0xfa]),
    ("glass-fibre", [0xf0, 0xe6, 0x50]),
    ("water", [0x1e, 0x5a, 0xff]),
    ("air", [0xdc, 0xfa, 0xf0]),
    ("fr4", [0x2e, 0x8b, 0x57]),
    ("ice", [0x82, 0xb4, 0xff]),
];

/// The colour of the library material `name`, if it is one.
pub fn library_colour(name: &str) -> Option<Rgb> {
    LIBRARY_COLOURS
        .iter()
        .find(|(n, _)| *n == name)
        .map(|&(_, colour)| colour)
}

/// `#rrggbb`.
pub fn colour_text([r, g, b]: Rgb) -> String {
    format!("#{r:02x}{g:02x}{b:02x}")
}

/// Parses `#rrggbb` (or `rrggbb`).
pub fn parse_colour(text: &str) -> Option<Rgb> {
    let text = text.trim();
    let hex = text.strip_prefix('#').unwrap_or(text);
    if hex.len() != 6 || !hex.chars().all(|c| c.is_ascii_hexdigit()) {
        return None;
    }
    let value = u32::from_str_radix(hex, 16).ok()?;
    Some([(value >> 16) as u8, (value >> 8) as u8, value as u8])
}

/// The largest of the red, green and blue differences.
pub fn colour_distance(a: Rgb, b: Rgb) -> u8 {
    (0..3).map(|i| a[i].abs_diff(b[i])).max().unwrap_or(0)
}

/// A colour made from `seed`, for kinds that are not plain library materials.
fn hashed_colour(seed: &str, attempt: u32) -> Rgb {
    // FNV-1a: stable across runs and platforms, so a kind keeps its colour.
    let mut hash: u32 = 0x811c_9dc5;
    for byte in seed.bytes().chain(attempt.to_le_bytes()) {
        hash = (hash ^ u32::from(byte)).wrapping_mul(0x0100_0193);
    }
    let [a, b, c, _] = hash.to_le_bytes();
    // Away from the extremes, so that outlines and text stay readable on top.
    [40 + a % 176, 40 + b % 176, 40 + c % 176]
}

/// The colour of every kind, in order, every two more than twice [`DEFAULT_TOLERANCE`] apart:
/// a kind whose material is a library one takes the material's colour unless an earlier kind
/// has it; the others get a colour made from their name. A kind's colour depends only on the
/// kinds before it, so a problem's kinds keep theirs when more kinds follow.
pub fn kind_colours(kinds: &[CellKind]) -> Vec<Rgb> {
    let mut colours: Vec<Rgb> = Vec::with_capacity(kinds.len());
    let free = |colours: &[Rgb], candidate: Rgb| {
        colours
            .iter()
            .all(|&c| colour_distance(c, candidate) > 2 * DEFAULT_TOLERANCE)
    };
    let library = material::library();
    for kind in kinds {
        let library =
            library_colour(&kind.material.name).filter(|_| library.contains(&kind.material));
        // A colour chosen for the material first (kept only while no earlier kind has it).
        let mut chosen = kind
            .material
            .colour
            .or(library)
            .filter(|&c| free(&colours, c));
        let mut attempt = 0;
        while chosen.is_none() {
            let candidate = hashed_colour(&kind.name, attempt);
            // After many tries (a crowded legend) take it anyway: nearest still decides.
            if free(&colours, candidate) || attempt > 1000 {
                chosen = Some(candidate);
            }
            attempt += 1;
        }
        colours.extend(chosen);
    }
    colours
}

/// One colour of a legend and the kind it paints.
#[derive(Debug, Clone, PartialEq)]
pub struct LegendEntry {
    /// The colour.
    pub colour: Rgb,
    /// The kind of cell.
    pub kind: CellKind,
}

/// The colours a map may use and what they paint.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Legend {
    /// The colours, in order.
    pub entries: Vec<LegendEntry>,
    /// The side of a cell, m, when the legend says one.
    pub spacing: Option<f64>,
}

impl Legend {
    /// The kinds with their [`kind_colours`].
    pub fn of_kinds(kinds: &[CellKind]) -> Self {
        let entries = kinds
            .iter()
            .zip(kind_colours(kinds))
            .map(|(kind, colour)| LegendEntry {
                colour,
                kind: kind.clone(),
            })
            .collect();
        Self {
            entries,
            spacing: None,
        }
    }

    /// The palette's legend: the problem's kinds first, then every library material that is
    /// not one of them, each with its [`kind_colours`] colour (as the palette shows them).
    pub fn palette(problem_kinds: &[CellKind]) -> Self {
        let mut kinds = problem_kinds.to_vec();
        for material in material::library() {
            let kind = CellKind::of(material);
            if !kinds.contains(&kind) {
                kinds.push(kind);
            }
        }
        Self::of_kinds(&kinds)
    }

    /// The entry nearest to `colour` (index, distance).
    fn nearest(&self, colour: Rgb) -> Option<(usize, u8)> {
        self.entries
            .iter()
            .enumerate()
            .map(|(i, e)| {
                let d = e.colour.iter().zip(colour).map(|(&a, b)| {
                    let d = i32::from(a) - i32::from(b);
                    d * d
                });
                (i, d.sum::<i32>(), colour_distance(e.colour, colour))
            })
            .min_by_key(|&(_, squared, _)| squared)
            .map(|(i, _, distance)| (i, distance))
    }
}

/// The legend file written beside a map: `map.png` has `map.legend.toml`.
pub fn legend_path(map: &Path) -> PathBuf {
    map.with_extension("legend.toml")
}

#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct LegendFile {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    spacing: Option<f64>,
    kinds: Vec<LegendRow>,
}

#[derive(Serialize, Deserialize)]
struct LegendRow {
    colour: String,
    #[serde(flatten)]
    kind: CellKind,
}

const LEGEND_HEADER: &str = "# heatlab material map legend: each colour of the picture beside \
this file and the kind of cell it paints\n# (name, material with k W/(m K), rho kg/m^3 and c_p \
J/(kg K), optional heater and held_temperature in degrees C).\n";

/// Reads a legend file (as [`write_map`] writes them).
pub fn read_legend(path: &Path) -> Result<Legend> {
    let bad = |why: String| HeatlabError::InvalidInput(format!("legend {}: {why}", path.display()));
    let text = std::fs::read_to_string(path).map_err(|e| HeatlabError::io("reading", path, e))?;
    let file: LegendFile = toml::from_str(&text).map_err(|e| bad(e.to_string()))?;
    let mut legend = Legend {
        entries: Vec::with_capacity(file.kinds.len()),
        spacing: file.spacing,
    };
    for row in file.kinds {
        let colour = parse_colour(&row.colour).ok_or_else(|| {
            bad(format!(
                "\"{}\" is not a colour (write \"#rrggbb\")",
                row.colour
            ))
        })?;
        if let Some(other) = legend.entries.iter().find(|e| e.colour == colour) {
            return Err(bad(format!(
                "{} names both \"{}\" and \"{}\"",
                row.colour, other.kind.name, row.kind.name
            )));
        }
        legend.entries.push(LegendEntry {
            colour,
            kind: row.kind,
        });
    }
    if legend.entries.is_empty() {
        return Err(bad("names no colours".into()));
    }
    Ok(legend)
}

/// Writes `problem`'s map to `path` as a PNG (one pixel per cell, each kind in its
/// [`kind_colours`] colour) and its legend to [`legend_path`]; returns the legend's path.
pub fn write_map(path: &Path, problem: &HeatProblem) -> Result<PathBuf> {
    let colours = kind_colours(&problem.kinds);
    let mut rgb = Vec::with_capacity(problem.map.len() * 3);
    for &kind in &problem.map {
        let colour = colours.get(usize::from(kind)).ok_or_else(|| {
            HeatlabError::InvalidInput(format!("the map names kind {kind}, which is missing"))
        })?;
        rgb.extend_from_slice(colour);
    }
    let file = LegendFile {
        spacing: Some(problem.spacing),
        kinds: problem
            .kinds
            .iter()
            .zip(&colours)
            .map(|(kind, &colour)| LegendRow {
                colour: colour_text(colour),
                kind: kind.clone(),
            })
            .collect(),
    };
    let text = toml::to_string(&file).map_err(|e| HeatlabError::Encode {
        path: legend_path(path),
        message: e.to_string(),
    })?;
    write_png_rgb(path, problem.size.cols, problem.size.rows, &rgb)?;
    let legend = legend_path(path);
    write_atomically(&legend, |writer: &mut dyn Write| {
        writer.write_all(LEGEND_HEADER.as_bytes())?;
        writer.write_all(text.as_bytes())
    })?;
    Ok(legend)
}

/// How a map image is read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MapOptions {
    /// How far a pixel may lie from its legend colour (see [`colour_distance`]).
    pub tolerance: u8,
    /// Scale an image of another size onto the grid (nearest neighbour) instead of refusing it.
    pub scale: bool,
}

impl Default for MapOptions {
    fn default() -> Self {
        Self {
            tolerance: DEFAULT_TOLERANCE,
            scale: false,
        }
    }
}

/// A map read from an image: each cell's index into the legend's entries.
#[derive(Debug, Clone, PartialEq)]
pub struct ImportedMap {
    /// Every cell's legend entry, row-major.
    pub cells: Vec<u8>,
    /// The image's size (rows, columns) when it was scaled onto the grid.
    pub scaled_from: Option<(usize, usize)>,
}

fn refuse(path: &Path, why: impl std::fmt::Display) -> HeatlabError {
    HeatlabError::InvalidInput(format!("material map {}: {why}", path.display()))
}

/// Reads the PNG at `path` as a map of a grid of `size` through `legend`.
pub fn read_map(
    path: &Path,
    size: GridSize,
    legend: &Legend,
    options: MapOptions,
) -> Result<ImportedMap> {
    let png = read_png(path)?;
    decode_map(path, &png, size, legend, options, Advice::App)
}

/// The bytes of the PNG at `path`, read once (a FIFO can be read only once) and refused at
/// its first bytes when it is not a PNG (`/dev/zero` never ends).
pub(crate) fn read_png(path: &Path) -> Result<Vec<u8>> {
    let refuse_here = |why: &str| refuse(path, why);
    let input = super::Input::open(path, &refuse_here)?;
    if image::guess_format(&input.start).ok() != Some(image::ImageFormat::Png) {
        return Err(refuse(path, "is not a PNG image"));
    }
    input.read_all(path, &refuse_here)
}

/// The size of a PNG, (rows, columns).
pub(crate) fn png_size(path: &Path, png: &[u8]) -> Result<(usize, usize)> {
    let reader =
        image::ImageReader::with_format(std::io::Cursor::new(png), image::ImageFormat::Png);
    let (width, height) = reader.into_dimensions().map_err(|e| {
        refuse(
            path,
            format!("is a damaged PNG image ({})", super::one_line(&e)),
        )
    })?;
    Ok((height as usize, width as usize))
}

/// What a refusal of a map advises: the app's map import has a tolerance and a scaling
/// option; a scenario's map has neither, its colours name materials exactly.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Advice {
    /// Raise the tolerance, tick "scale to the field".
    App,
    /// Name the colour in the scenario's `[map] colors`.
    Scenario,
}

/// The map in `png` (the bytes of the file at `path`) of a grid of `size` through `legend`.
pub(crate) fn decode_map(
    path: &Path,
    png: &[u8],
    size: GridSize,
    legend: &Legend,
    options: MapOptions,
    advice: Advice,
) -> Result<ImportedMap> {
    if legend.entries.is_empty() || legend.entries.len() > usize::from(u8::MAX) + 1 {
        return Err(refuse(path, "the legend must name 1 to 256 colours"));
    }
    let damaged = |e: image::ImageError| {
        refuse(
            path,
            format!("is a damaged PNG image ({})", super::one_line(&e)),
        )
    };
    let (rows, cols) = png_size(path, png)?;
    let scaled = (rows, cols) != (size.rows, size.cols);
    if scaled && !options.scale {
        return Err(refuse(
            path,
            format!(
                "is {cols}×{rows} pixels but the field is {}×{} cells (columns × rows); \
                 paint it at the field's size, or tick \"scale to the field\" to resize it \
                 (nearest neighbour)",
                size.cols, size.rows
            ),
        ));
    }
    ensure_host_memory(
        "material map image",
        rows.saturating_mul(cols).saturating_mul(8),
    )?;
    let mut reader =
        image::ImageReader::with_format(std::io::Cursor::new(png), image::ImageFormat::Png);
    reader.no_limits();
    let pixels = reader.decode().map_err(damaged)?.into_rgb8();
    let mut found: HashMap<Rgb, u8> = HashMap::new();
    let mut cells = Vec::with_capacity(size.cells());
    for row in 0..size.rows {
        // Nearest neighbour: the pixel under the cell's centre.
        let y = if scaled {
            (row * 2 + 1) * rows / (size.rows * 2)
        } else {
            row
        };
        for col in 0..size.cols {
            let x = if scaled {
                (col * 2 + 1) * cols / (size.cols * 2)
            } else {
                col
            };
            let colour = pixels.get_pixel(x as u32, y as u32).0;
            let index = match found.get(&colour) {
                Some(&index) => index,
                None => {
                    let index =
                        match_colour(path, legend, colour, (y, x), options.tolerance, advice)?;
                    found.insert(colour, index);
                    index
                }
            };
            cells.push(index);
        }
    }
    Ok(ImportedMap {
        cells,
        scaled_from: scaled.then_some((rows, cols)),
    })
}

/// The legend entry of `colour`, first seen at `pixel` (row, column of the image).
fn match_colour(
    path: &Path,
    legend: &Legend,
    colour: Rgb,
    (row, col): (usize, usize),
    tolerance: u8,
    advice: Advice,
) -> Result<u8> {
    let Some((index, distance)) = legend.nearest(colour) else {
        return Err(refuse(path, "the legend names no colours"));
    };
    if distance <= tolerance {
        return Ok(index as u8);
    }
    let nearest = &legend.entries[index];
    let first = format!(
        "colour {} (first at row {row}, column {col} of the image) is none of the",
        colour_text(colour)
    );
    let nearest = format!(
        "the nearest is {} ({}), {distance} away",
        colour_text(nearest.colour),
        nearest.kind.name
    );
    let why = match advice {
        Advice::App => format!(
            "{first} legend's colours; {nearest}, more than the tolerance {tolerance}. Repaint \
             it with a legend colour or raise the tolerance"
        ),
        Advice::Scenario => format!(
            "{first} colours of [map] colors, which must match exactly; {nearest}. Repaint it \
             with one of those colours or add it to [map] colors"
        ),
    };
    Err(refuse(path, why))
}

/// `base` (or, without one, a new insulated problem of `size`) with the imported map: the
/// legend's kinds the map uses are added to the problem's kinds (existing ones reused, so
/// heaters and thermostats keep their kinds), checked.
pub fn problem_with_map(
    base: Option<&HeatProblem>,
    size: GridSize,
    legend: &Legend,
    imported: &ImportedMap,
) -> Result<HeatProblem> {
    let mut problem = match base {
        Some(base) => base.clone(),
        None => HeatProblem {
            size,
            spacing: legend.spacing.unwrap_or(PLATE_SPACING),
            kinds: Vec::new(),
            map: Vec::new(),
            sides: Sides::default(),
            time_step: TimeStep::default(),
            thermostats: Vec::new(),
        },
    };
    if problem.size != size || imported.cells.len() != size.cells() {
        return Err(HeatlabError::InvalidInput(format!(
            "the material map has {} cells but the field is {}×{}",
            imported.cells.len(),
            size.rows,
            size.cols
        )));
    }
    let mut used = vec![false; legend.entries.len()];
    for &cell in &imported.cells {
        if let Some(slot) = used.get_mut(usize::from(cell)) {
            *slot = true;
        }
    }
    let mut index = vec![0u8; legend.entries.len()];
    for (entry, (slot, _)) in legend
        .entries
        .iter()
        .zip(index.iter_mut().zip(&used))
        .filter(|(_, (_, &u))| u)
    {
        *slot = problem.kind_index(entry.kind.clone()).map_err(|_| {
            HeatlabError::InvalidInput(format!(
                "the map and the problem together have more than {MAX_KINDS} kinds of cells"
            ))
        })?;
    }
    problem.map = imported
        .cells
        .iter()
        .map(|&cell| index.get(usize::from(cell)).copied().unwrap_or(0))
        .collect();
    problem.check()?;
    Ok(problem)
}

#[cfg(test)]
mod tests;
