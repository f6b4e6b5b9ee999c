//! Bit-for-bit comparison of fields and previews, and what a divergence reports.

use std::fmt;

use crate::compute::StepParams;
use crate::grid::{Grid, GridSize};
use crate::problem::EnergyExchange;
use crate::render::Preview;
pub use crate::sim::agreement::CellDifference;
use crate::sim::agreement::{compare_fields, first_difference};

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
    /// Cells read by index (the column is the position in the list).
    Gathered,
    /// A regenerated field against the CPU's generation (to [`GENERATION_TOLERANCE`]).
    Generated,
    /// The energy a heat problem booked (to [`ENERGY_TOLERANCE`]; the column is the term:
    /// sources, left, right, top, bottom, held cells).
    Energy,
}

impl fmt::Display for Compared {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::Field => "field",
            Self::Laplacian => "Laplacian",
            Self::PreviewValues => "preview values",
            Self::PreviewRange => "preview colour range",
            Self::PreviewPixels => "preview pixels",
            Self::Gathered => "gathered cells",
            Self::Generated => "generated field",
            Self::Energy => "booked energy",
        })
    }
}

/// How far a field generated on the GPU may be from the CPU's in any cell: the two use
/// different FFT algorithms (in practice they agree bit for bit; the bound is the issue's).
pub const GENERATION_TOLERANCE: f64 = 1e-5;

/// The first cell where a generated field is farther than [`GENERATION_TOLERANCE`] from the
/// CPU's generation.
pub fn generated(subject: &Grid, reference: &Grid) -> Option<CellDifference> {
    if subject.size() != reference.size() {
        return compare_fields(subject, reference);
    }
    first_difference(
        subject.as_slice(),
        reference.as_slice(),
        subject.cols(),
        |a: f32, b: f32| (f64::from(a) - f64::from(b)).abs() <= GENERATION_TOLERANCE,
        f64::from,
    )
}

/// How far apart two bookings of the same steps may be, relative to the largest term: the
/// GPU adds its cells' terms in another order than the CPU.
pub const ENERGY_TOLERANCE: f64 = 1e-9;

/// The first term of two energy bookings farther apart than [`ENERGY_TOLERANCE`] of the
/// largest term.
pub fn energies(subject: &EnergyExchange, reference: &EnergyExchange) -> Option<CellDifference> {
    let terms = |e: &EnergyExchange| {
        [
            e.sources, e.sides[0], e.sides[1], e.sides[2], e.sides[3], e.held,
        ]
    };
    let (a, b) = (terms(subject), terms(reference));
    let scale = a.iter().chain(&b).fold(0.0f64, |m, t| m.max(t.abs()));
    let within = |x: f64, y: f64| (x - y).abs() <= ENERGY_TOLERANCE * scale;
    let differing = a.iter().zip(&b).filter(|(x, y)| !within(**x, **y)).count();
    let first = a.iter().zip(&b).position(|(x, y)| !within(*x, *y))?;
    Some(CellDifference {
        row: 0,
        col: first,
        subject: a[first],
        reference: b[first],
        differing_cells: differing,
        max_abs_difference: a
            .iter()
            .zip(&b)
            .map(|(x, y)| (x - y).abs())
            .fold(0.0, f64::max),
    })
}

/// The first difference between two fields, bit for bit.
pub fn grids(subject: &Grid, reference: &Grid) -> Option<CellDifference> {
    compare_fields(subject, reference)
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
    use crate::render::ValueRange;

    #[test]
    fn previews_differ_by_values_range_or_pixel() {
        let size = GridSize { rows: 2, cols: 3 };
        let values = Grid::from_vec(size, vec![0.0, 1.0, 2.0, 3.0, 4.0, 5.0]).unwrap();
        let preview = Preview {
            factor: 1,
            values,
            rgba: vec![7; 24],
            range: ValueRange { min: 0.0, max: 5.0 },
        };
        assert!(previews(&preview, &preview.clone()).is_none());
        let mut other = preview.clone();
        other.range.max = 6.0;
        let (what, cell) = previews(&other, &preview).unwrap();
        assert_eq!((what, cell.col), (Compared::PreviewRange, 1));
        let mut other = preview.clone();
        other.rgba[4 * 4 + 2] = 8; // pixel (1, 1), blue
        let (what, cell) = previews(&other, &preview).unwrap();
        assert_eq!((what, cell.row, cell.col), (Compared::PreviewPixels, 1, 1));
    }

    #[test]
    fn energies_agree_to_the_tolerance_of_the_largest_term() {
        let a = EnergyExchange {
            sources: 1e6,
            sides: [1.0, -2.0, 3.0, 0.0],
            held: 5.0,
        };
        let mut b = a;
        b.sides[1] += 1e-4; // 1e-10 of the largest term
        assert!(energies(&a, &b).is_none());
        b.sides[1] += 1e-2;
        let cell = energies(&a, &b).unwrap();
        assert_eq!((cell.col, cell.differing_cells), (2, 1));
    }
}
