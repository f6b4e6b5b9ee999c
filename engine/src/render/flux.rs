//! Heat flux `q = -k grad T` (W/m²) as the model sees it: through each face of a cell the
//! conductance of the two half cells in series (the harmonic mean of their conductivities, as
//! in `docs/physics.md`), and a cell's flux the mean of its two faces along each axis. Used for
//! the arrows on the field picture, the hovered cell's flux and the flow through a line.
//!
//! Directions are in cells of the picture: `x` along the columns (to the right), `y` down the
//! rows.

use rayon::prelude::*;

use super::contour::{block_centre, Window};
use crate::grid::{Grid, GridSize};
use crate::problem::HeatProblem;

/// The conductivity of each cell: from a problem's kinds and map, or one value everywhere
/// (the tutorial's plate, in arbitrary units).
#[derive(Debug, Clone, PartialEq)]
pub struct Conductivity<'a> {
    /// W/(m·K) per kind.
    per_kind: Vec<f64>,
    /// The kind of every cell, row-major, when there are kinds.
    map: Option<&'a [u8]>,
    /// Columns of the field.
    cols: usize,
}

impl<'a> Conductivity<'a> {
    /// One conductivity everywhere.
    pub fn uniform(conductivity: f64) -> Self {
        Self {
            per_kind: vec![conductivity],
            map: None,
            cols: 0,
        }
    }

    /// A problem's conductivities, cell by cell.
    pub fn of(problem: &'a HeatProblem) -> Self {
        Self {
            per_kind: problem
                .kinds
                .iter()
                .map(|kind| kind.material.conductivity)
                .collect(),
            map: (problem.map.len() == problem.size.cells()).then_some(problem.map.as_slice()),
            cols: problem.size.cols,
        }
    }

    /// The conductivity of cell `(row, col)` (W/(m·K)); 0 for a cell outside the map.
    pub fn at(&self, row: usize, col: usize) -> f64 {
        let kind = match self.map {
            Some(map) => match map.get(row * self.cols + col) {
                Some(&kind) => usize::from(kind),
                None => return 0.0,
            },
            None => 0,
        };
        self.per_kind.get(kind).copied().unwrap_or(0.0)
    }
}

/// The conductance of a face between conductivities `a` and `b`: their harmonic mean, 0 when
/// both are perfect insulators.
pub fn face_conductivity(a: f64, b: f64) -> f64 {
    if a + b > 0.0 {
        2.0 * a * b / (a + b)
    } else {
        0.0
    }
}

/// A cell's temperature (°C) and conductivity (W/(m·K)).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct CellSample {
    /// Temperature.
    pub temperature: f64,
    /// Conductivity.
    pub conductivity: f64,
}

/// A cell and its four neighbours (`None` beyond the field's edge).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Stencil {
    /// The cell.
    pub centre: CellSample,
    /// Column - 1.
    pub left: Option<CellSample>,
    /// Column + 1.
    pub right: Option<CellSample>,
    /// Row - 1.
    pub up: Option<CellSample>,
    /// Row + 1.
    pub down: Option<CellSample>,
}

/// The heat flux at a stencil's cell, W/m² (`[x, y]`), for centres `spacing` metres apart:
/// along each axis the mean of the fluxes through the cell's faces on that axis, a face beyond
/// the edge left out.
pub fn cell_flux(stencil: &Stencil, spacing: f64) -> [f64; 2] {
    let centre = stencil.centre;
    let along = |before: Option<CellSample>, after: Option<CellSample>| {
        let faces: Vec<f64> = [
            before.map(|b| {
                face_conductivity(b.conductivity, centre.conductivity)
                    * (centre.temperature - b.temperature)
            }),
            after.map(|a| {
                face_conductivity(centre.conductivity, a.conductivity)
                    * (a.temperature - centre.temperature)
            }),
        ]
        .into_iter()
        .flatten()
        .collect();
        if faces.is_empty() || spacing <= 0.0 {
            0.0
        } else {
            -faces.iter().sum::<f64>() / (faces.len() as f64 * spacing)
        }
    };
    [
        along(stencil.left, stencil.right),
        along(stencil.up, stencil.down),
    ]
}

/// A preview of a field of `field` cells reduced by `factor`, with each cell's conductivity and
/// the cells' side in metres: what the flux at a value of the preview needs.
pub struct FluxSource<'a> {
    /// The preview's values (block means).
    pub values: &'a Grid,
    /// Cells per value along each axis.
    pub factor: usize,
    /// The full field's size.
    pub field: GridSize,
    /// Conductivity per cell of the full field.
    pub conductivity: &'a Conductivity<'a>,
    /// A cell's side, m (1 for the tutorial's plate).
    pub spacing: f64,
}

impl FluxSource<'_> {
    /// The flux (W/m², `[x, y]`) at the preview's value `(row, col)`: neighbouring values are
    /// `factor` cells apart, and each block's conductivity is its centre cell's.
    pub fn flux_at(&self, row: usize, col: usize) -> [f64; 2] {
        let (rows, cols) = (self.values.rows(), self.values.cols());
        let factor = self.factor.max(1);
        let sample = |r: usize, c: usize| CellSample {
            temperature: f64::from(self.values.get(r, c)),
            conductivity: self.conductivity.at(
                (r * factor + factor / 2).min(self.field.rows.saturating_sub(1)),
                (c * factor + factor / 2).min(self.field.cols.saturating_sub(1)),
            ),
        };
        let stencil = Stencil {
            centre: sample(row, col),
            left: (col > 0).then(|| sample(row, col - 1)),
            right: (col + 1 < cols).then(|| sample(row, col + 1)),
            up: (row > 0).then(|| sample(row - 1, col)),
            down: (row + 1 < rows).then(|| sample(row + 1, col)),
        };
        cell_flux(&stencil, self.spacing * factor as f64)
    }

    /// The flux at cell `(row, col)` of the full field (from the value whose block holds it).
    pub fn flux_at_cell(&self, row: usize, col: usize) -> Option<[f64; 2]> {
        let factor = self.factor.max(1);
        let (r, c) = (row / factor, col / factor);
        (r < self.values.rows() && c < self.values.cols()).then(|| self.flux_at(r, c))
    }
}

/// An arrow: where it starts (cells of the full field, `[x, y]`) and the flux there (W/m²).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Arrow {
    /// Its foot, the centre of the value's block.
    pub at: [f32; 2],
    /// The heat flux there, `[x, y]`.
    pub flux: [f64; 2],
}

/// How many preview values apart arrows go so that they are about `pixels` apart on screen,
/// where one value is `pixels_per_value` wide: at least 1 (one arrow per value when zoomed in).
pub fn arrow_step(pixels: f32, pixels_per_value: f32) -> usize {
    if pixels_per_value <= 0.0 || !pixels_per_value.is_finite() {
        return 1;
    }
    ((pixels / pixels_per_value).round() as usize).max(1)
}

/// Arrows every `step` values within `window`, on a lattice fixed to the field (so that they
/// stay put while the view pans).
pub fn arrows(source: &FluxSource<'_>, window: &Window, step: usize) -> Vec<Arrow> {
    let step = step.max(1);
    let first = |start: usize| start.div_ceil(step) * step + step / 2;
    let rows: Vec<usize> = (first(window.rows.start.saturating_sub(step / 2))..window.rows.end)
        .step_by(step)
        .filter(|r| window.rows.contains(r))
        .collect();
    let cols: Vec<usize> = (first(window.cols.start.saturating_sub(step / 2))..window.cols.end)
        .step_by(step)
        .filter(|c| window.cols.contains(c))
        .collect();
    rows.par_iter()
        .flat_map_iter(|&row| {
            cols.iter().map(move |&col| Arrow {
                at: [
                    block_centre(col, source.factor, source.field.cols),
                    block_centre(row, source.factor, source.field.rows),
                ],
                flux: source.flux_at(row, col),
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::problem::{material, CellKind};

    fn grid(rows: usize, cols: usize, value: impl Fn(usize, usize) -> f32) -> Grid {
        Grid::from_fn(GridSize::new(rows, cols).unwrap(), value)
    }

    #[test]
    fn a_linear_field_gives_k_times_the_slope_down_the_gradient() {
        // T rises by 0.5 °C per cell to the right and falls by 0.25 per cell downwards.
        let values = grid(10, 12, |r, c| 20.0 + 0.5 * c as f32 - 0.25 * r as f32);
        let size = values.size();
        let problem = HeatProblem::uniform(size, 0.002, material::find("copper").unwrap());
        let k = 401.0;
        let conductivity = Conductivity::of(&problem);
        let source = FluxSource {
            values: &values,
            factor: 1,
            field: size,
            conductivity: &conductivity,
            spacing: 0.002,
        };
        for (row, col) in [(0, 0), (4, 5), (9, 11), (0, 11)] {
            let [qx, qy] = source.flux_at(row, col);
            assert!((qx - (-k * 0.5 / 0.002)).abs() < 1e-6 * k * 250.0, "{qx}");
            assert!((qy - (k * 0.25 / 0.002)).abs() < 1e-6 * k * 125.0, "{qy}");
        }
        let arrows = arrows(&source, &Window::all(&values), 4);
        // Values 2 and 6 along the rows, 2, 6 and 10 along the columns.
        assert_eq!(arrows.len(), 6);
        assert_eq!(arrows[0].at, [2.5, 2.5]);
        assert!(arrows.iter().all(|a| a.flux[0] < 0.0 && a.flux[1] > 0.0));
        // Reduced by 2: the same slope per metre.
        let reduced = grid(5, 6, |r, c| {
            20.0 + 0.5 * (2 * c) as f32 - 0.25 * (2 * r) as f32
        });
        let source = FluxSource {
            values: &reduced,
            factor: 2,
            ..source
        };
        let [qx, qy] = source.flux_at(2, 3);
        assert!((qx + k * 250.0).abs() < 1e-3 && (qy - k * 125.0).abs() < 1e-3);
        assert_eq!(source.flux_at_cell(5, 7), Some([qx, qy]));
        assert_eq!(source.flux_at_cell(10, 0), None);
    }

    #[test]
    fn a_face_between_kinds_conducts_like_the_harmonic_mean() {
        // Copper on the left half, foam-like insulation on the right.
        let size = GridSize::new(1, 4).unwrap();
        let mut problem = HeatProblem::uniform(size, 1.0, material::find("copper").unwrap());
        let hardwood = problem
            .kind_index(CellKind::of(material::find("hardwood").unwrap()))
            .unwrap();
        problem.map[2] = hardwood;
        problem.map[3] = hardwood;
        let conductivity = Conductivity::of(&problem);
        let values = grid(1, 4, |_, c| [10.0, 10.0, 0.0, 0.0][c]);
        let source = FluxSource {
            values: &values,
            factor: 1,
            field: size,
            conductivity: &conductivity,
            spacing: 1.0,
        };
        let g = face_conductivity(401.0, 0.16);
        assert!(g < 0.33);
        // Cell 1: its right face carries g * 10, its left none.
        assert!((source.flux_at(0, 1)[0] - g * 10.0 / 2.0).abs() < 1e-9);
        assert!((source.flux_at(0, 2)[0] - g * 10.0 / 2.0).abs() < 1e-9);
        assert_eq!(source.flux_at(0, 0), [0.0, 0.0]);
        assert_eq!(face_conductivity(0.0, 0.0), 0.0);
        assert_eq!(Conductivity::uniform(1.0).at(3, 9), 1.0);
    }

    #[test]
    fn arrows_are_spaced_for_the_screen_and_fixed_to_the_field() {
        assert_eq!(arrow_step(24.0, 1.0), 24);
        assert_eq!(arrow_step(24.0, 40.0), 1);
        assert_eq!(arrow_step(24.0, 0.0), 1);
        let values = grid(100, 100, |_, c| c as f32);
        let conductivity = Conductivity::uniform(1.0);
        let source = FluxSource {
            values: &values,
            factor: 1,
            field: values.size(),
            conductivity: &conductivity,
            spacing: 1.0,
        };
        let panned = |start: usize| {
            let window = Window {
                rows: 0..10,
                cols: start..start + 30,
            };
            arrows(&source, &window, 10)
                .iter()
                .map(|a| a.at[0])
                .collect::<Vec<f32>>()
        };
        assert_eq!(panned(0), vec![5.5, 15.5, 25.5]);
        assert_eq!(panned(3)[..2], [5.5, 15.5]);
        assert!(panned(3).iter().all(|&x| x >= 3.0));
    }
}
