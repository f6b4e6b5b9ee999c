//! A material map from a file: a PNG whose colours name materials or parts, or a `.npy` of
//! integer indices into a list of names.

use std::path::Path;

use super::file::MapSection;
use crate::error::{HeatlabError, Result};
use crate::grid::GridSize;
use crate::import::material_map::{self, Advice, Legend, LegendEntry, MapOptions};
use crate::import::Input;
use crate::problem::CellKind;

/// The kinds a map names and the index into them of every cell.
pub struct MapKinds {
    /// The kinds, in the order of their indices.
    pub kinds: Vec<CellKind>,
    /// Every cell's index into `kinds`, row-major.
    pub cells: Vec<u8>,
}

/// Reads the map `section` describes for a grid of `size`; `lookup` finds a kind by name.
pub fn read_map(
    section: &MapSection,
    folder: &Path,
    size: GridSize,
    lookup: &dyn Fn(&str) -> Result<CellKind>,
) -> Result<MapKinds> {
    match (&section.image, &section.npy) {
        (Some(image), None) => image_map(section, &folder.join(image), size, lookup),
        (None, Some(npy)) => npy_map(section, &folder.join(npy), size, lookup),
        _ => Err(HeatlabError::InvalidInput(
            "[map] takes an image (with colors) or an npy (with names), one of them".into(),
        )),
    }
}

fn bad(path: &Path, why: impl std::fmt::Display) -> HeatlabError {
    HeatlabError::InvalidInput(format!("material map {}: {why}", path.display()))
}

fn check_size(path: &Path, rows: usize, cols: usize, size: GridSize) -> Result<()> {
    if (rows, cols) != (size.rows, size.cols) {
        return Err(bad(
            path,
            format!(
                "is {rows}x{cols} (rows x columns) but the grid is {}x{}",
                size.rows, size.cols
            ),
        ));
    }
    Ok(())
}

/// The map of an image whose colours `section` names, read as the app imports maps
/// ([`material_map::read_map`]) with every colour matched exactly.
fn image_map(
    section: &MapSection,
    path: &Path,
    size: GridSize,
    lookup: &dyn Fn(&str) -> Result<CellKind>,
) -> Result<MapKinds> {
    // Read once: a FIFO's writer is gone after its first reader.
    let png = material_map::read_png(path)?;
    let (rows, cols) = material_map::png_size(path, &png)?;
    check_size(path, rows, cols, size)?;
    let mut entries = Vec::new();
    let mut errors = Vec::new();
    for (text, name) in &section.colors {
        match (material_map::parse_colour(text), lookup(name)) {
            (Some(colour), Ok(kind)) => entries.push(LegendEntry { colour, kind }),
            (None, _) => errors.push(format!("\"{text}\" is not a colour (write \"#rrggbb\")")),
            (_, Err(e)) => errors.push(format!("colour {text}: {e}")),
        }
    }
    if !errors.is_empty() {
        return Err(bad(path, errors.join("; ")));
    }
    let legend = Legend {
        entries,
        spacing: None,
    };
    let exact = MapOptions {
        tolerance: 0,
        scale: false,
    };
    let imported = material_map::decode_map(path, &png, size, &legend, exact, Advice::Scenario)?;
    Ok(MapKinds {
        kinds: legend.entries.into_iter().map(|entry| entry.kind).collect(),
        cells: imported.cells,
    })
}

fn npy_map(
    section: &MapSection,
    path: &Path,
    size: GridSize,
    lookup: &dyn Fn(&str) -> Result<CellKind>,
) -> Result<MapKinds> {
    let kinds = section
        .names
        .iter()
        .map(|name| lookup(name))
        .collect::<Result<Vec<_>>>()?;
    if kinds.is_empty() || kinds.len() > crate::problem::MAX_KINDS {
        return Err(bad(
            path,
            format!(
                "[map] names must list 1 to {} names",
                crate::problem::MAX_KINDS
            ),
        ));
    }
    // Streamed, the header first: its shape is checked against the grid before any data is
    // read, and no more than the shape's data is read (`/dev/zero` or an endless pipe).
    let input = Input::open(path, &|why| bad(path, why))?;
    let npy = npyz::NpyFile::new(input.reader)
        .map_err(|e| bad(path, format!("is not a readable .npy array ({e})")))?;
    let shape = npy.shape().to_vec();
    if shape.len() != 2 {
        return Err(bad(path, format!("is {shape:?}; a map is a 2-D array")));
    }
    check_size(path, shape[0] as usize, shape[1] as usize, size)?;
    if npy.order() != npyz::Order::C {
        return Err(bad(
            path,
            "is in Fortran order; save it with np.ascontiguousarray",
        ));
    }
    let cells = map_indices(npy, kinds.len()).map_err(|why| bad(path, why))?;
    Ok(MapKinds { kinds, cells })
}

/// Every cell's index into `names` names, from an integer array of any width and sign.
fn map_indices(
    npy: npyz::NpyFile<impl std::io::Read>,
    names: usize,
) -> std::result::Result<Vec<u8>, String> {
    use npyz::{DType, TypeChar};
    let DType::Plain(type_str) = npy.dtype() else {
        return Err("is not an array of plain numbers".into());
    };
    match (type_str.type_char(), type_str.size_field()) {
        (TypeChar::Uint, 1) => indices::<u8>(npy, names),
        (TypeChar::Uint, 2) => indices::<u16>(npy, names),
        (TypeChar::Uint, 4) => indices::<u32>(npy, names),
        (TypeChar::Uint, 8) => indices::<u64>(npy, names),
        (TypeChar::Int, 1) => indices::<i8>(npy, names),
        (TypeChar::Int, 2) => indices::<i16>(npy, names),
        (TypeChar::Int, 4) => indices::<i32>(npy, names),
        (TypeChar::Int, 8) => indices::<i64>(npy, names),
        _ => Err(format!(
            "holds {type_str}; a map holds integer indices (e.g. np.save(name, a.astype(np.uint8)))"
        )),
    }
}

/// The values of `npy`, of type `T`, as indices below `names`.
fn indices<T>(
    npy: npyz::NpyFile<impl std::io::Read>,
    names: usize,
) -> std::result::Result<Vec<u8>, String>
where
    T: npyz::Deserialize + TryInto<u8> + Copy + std::fmt::Display,
{
    let data = npy
        .data::<T>()
        .map_err(|e| format!("cannot be read ({e})"))?;
    let mut cells = Vec::with_capacity(usize::try_from(data.len()).unwrap_or(0));
    for value in data {
        let value = value.map_err(|e| format!("cannot be read ({e})"))?;
        match value
            .try_into()
            .ok()
            .filter(|&v: &u8| usize::from(v) < names)
        {
            Some(index) => cells.push(index),
            None => {
                return Err(format!(
                    "holds {value}, not an index into its {names} names"
                ))
            }
        }
    }
    Ok(cells)
}
