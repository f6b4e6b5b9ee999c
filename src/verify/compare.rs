//! Bit-for-bit comparison of fields and previews, and what a divergence reports.

use std::fmt;

use crate::compute::StepParams;
use crate::grid::{Grid, GridSize};
use crate::render::Preview;

/// What was being compared when the two sides differed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
pub enum Compared {
    /// The held field, after the operation.
    Field,
    /// The Laplacian the operation took.
    Laplacian,
    /// The reduced values of a preview.
    PreviewValues,
    /// The colour range of a preview.
    PreviewRange,
    /// The RGBA bytes of a preview (the cell is the pixel).
    PreviewPixels,
}

impl fmt::Display for Compared {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::Field => "field",
            Self::Laplacian => "Laplacian",
            Self::PreviewValues => "preview values",
            Self::PreviewRange => "preview colour range",
            Self::PreviewPixels => "preview pixels",
        })
    }
}

/// The first cell (row-major) at which two arrays differ, and how much they differ overall.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize)]
pub struct CellDifference {
    /// Row of the first differing cell.
    pub row: usize,
    /// Column of the first differing cell.
    pub col: usize,
    /// The subject's value there.
    pub subject: f64,
    /// The reference's value there.
    pub reference: f64,
    /// Cells that differ.
    pub differing_cells: usize,
    /// Largest |subject - reference| over the differing cells (NaN if a side is not finite).
    pub max_abs_difference: f64,
}

/// Compares two equally long arrays of `cols` columns bit for bit.
fn first_difference<T: Copy + PartialEq>(
    subject: &[T],
    reference: &[T],
    cols: usize,
    same: impl Fn(T, T) -> bool,
    value: impl Fn(T) -> f64,
) -> Option<CellDifference> {
    let mut found: Option<CellDifference> = None;
    for (index, (&a, &b)) in subject.iter().zip(reference).enumerate() {
        if same(a, b) {
            continue;
        }
        let (a, b) = (value(a), value(b));
        let difference = (a - b).abs();
        match &mut found {
            Some(found) => {
                found.differing_cells += 1;
                found.max_abs_difference = found.max_abs_difference.max(difference);
            }
            None => {
                found = Some(CellDifference {
                    row: index / cols.max(1),
                    col: index % cols.max(1),
                    subject: a,
                    reference: b,
                    differing_cells: 1,
                    max_abs_difference: difference,
                })
            }
        }
    }
    found
}

/// The first difference between two fields, bit for bit (`-0.0` and `0.0` differ, as do
/// NaNs with different payloads). Fields of different sizes differ at cell (0, 0).
pub fn grids(subject: &Grid, reference: &Grid) -> Option<CellDifference> {
    if subject.size() != reference.size() {
        return Some(CellDifference {
            row: 0,
            col: 0,
            subject: subject.size().cells() as f64,
            reference: reference.size().cells() as f64,
            differing_cells: subject.size().cells().max(reference.size().cells()),
            max_abs_difference: f64::NAN,
        });
    }
    first_difference(
        subject.as_slice(),
        reference.as_slice(),
        subject.cols(),
        |a: f32, b: f32| a.to_bits() == b.to_bits(),
        f64::from,
    )
}

/// The first difference between two previews: values, then range, then pixels.
pub fn previews(subject: &Preview, reference: &Preview) -> Option<(Compared, CellDifference)> {
    if let Some(cell) = grids(&subject.values, &reference.values) {
        return Some((Compared::PreviewValues, cell));
    }
    let (a, b) = (subject.range, reference.range);
    if a.min.to_bits() != b.min.to_bits() || a.max.to_bits() != b.max.to_bits() {
        let low_differs = a.min.to_bits() != b.min.to_bits();
        let (sa, sb) = if low_differs {
            (a.min, b.min)
        } else {
            (a.max, b.max)
        };
        return Some((
            Compared::PreviewRange,
            CellDifference {
                row: 0,
                col: usize::from(!low_differs),
                subject: f64::from(sa),
                reference: f64::from(sb),
                differing_cells: 1,
                max_abs_difference: f64::from((sa - sb).abs()),
            },
        ));
    }
    let cols = subject.values.cols() * 4;
    first_difference(
        &subject.rgba,
        &reference.rgba,
        cols,
        |a: u8, b: u8| a == b,
        f64::from,
    )
    .map(|mut cell| {
        cell.col /= 4; // report the pixel, not the byte
        (Compared::PreviewPixels, cell)
    })
}

/// The first operation at which the subject and the reference differed.
#[derive(Debug, Clone, serde::Serialize)]
pub struct Divergence {
    /// The seed that reproduces the sequence (`heatlab verify --seed S --sequences 1`).
    pub sequence_seed: u64,
    /// Index of the operation in its sequence (0 is the first upload).
    pub operation_index: usize,
    /// The operation.
    pub operation: String,
    /// The subject's stepping method at that point.
    pub method: String,
    /// Coefficient and boundary at that point.
    pub params: StepParams,
    /// Field size at that point.
    pub size: GridSize,
    /// What differed.
    pub compared: Compared,
    /// Where and by how much.
    pub cell: CellDifference,
    /// The operations of the sequence up to and including this one.
    pub history: Vec<String>,
}

impl fmt::Display for Divergence {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let cell = &self.cell;
        writeln!(
            f,
            "sequence seed {} (rerun it alone: heatlab verify --seed {} --sequences 1), operation {}: {}",
            self.sequence_seed, self.sequence_seed, self.operation_index, self.operation
        )?;
        writeln!(
            f,
            "  kernel {}, {} field, coeff {}, boundary {}",
            self.method, self.size, self.params.coeff, self.params.boundary
        )?;
        write!(
            f,
            "  {} differs first at row {}, column {}: subject {:e} vs reference {:e} \
             ({} cells differ, max |difference| {:e})",
            self.compared,
            cell.row,
            cell.col,
            cell.subject,
            cell.reference,
            cell.differing_cells,
            cell.max_abs_difference
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn equal_grids_agree_and_one_changed_bit_is_found() {
        let size = GridSize { rows: 3, cols: 4 };
        let a = Grid::from_vec(size, (0..12).map(|i| i as f32 * 0.1).collect()).unwrap();
        assert_eq!(grids(&a, &a.clone()), None);
        let mut b = a.clone();
        let v = b.as_mut_slice()[6];
        b.as_mut_slice()[6] = f32::from_bits(v.to_bits() + 1);
        let found = grids(&b, &a).unwrap();
        assert_eq!((found.row, found.col, found.differing_cells), (1, 2, 1));
        assert!(found.max_abs_difference > 0.0 && found.max_abs_difference < 1e-6);
    }

    #[test]
    fn signed_zeros_differ() {
        let size = GridSize { rows: 1, cols: 1 };
        let plus = Grid::from_vec(size, vec![0.0]).unwrap();
        let minus = Grid::from_vec(size, vec![-0.0]).unwrap();
        assert!(grids(&plus, &minus).is_some());
    }
}
