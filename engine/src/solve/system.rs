//! The linear system of a heat problem's finite-volume scheme, in `f64`: what the explicit step
//! marches towards, written as `A T = b` for the free cells.
//!
//! For a free cell `i` the explicit step's change per second is
//! `(Σ_faces G (T_j - T_i) + Σ_sides (G_s (T_s - T_i) + q'' dx) + Q_i) / C_i`, with the same
//! conductances as [`crate::problem::StepTables`] (before they are rounded to `f32`). Moving
//! what does not depend on the free cells' temperatures to the right:
//!
//! `(Σ_faces to free cells G + Σ_faces to held cells G + Σ_sides G_s) T_i - Σ_free j G T_j`
//! `= Q_i + Σ_sides (G_s T_s + q'' dx) + Σ_held j G T_j`
//!
//! Held cells are not unknowns: their faces join the diagonal and their temperatures the right
//! side. Each free cell stores the conductance of its east and south faces to free cells (a
//! periodic side wraps), the stiffness diagonal, its heat capacity and the right side.

use rayon::prelude::*;

use crate::error::{HeatlabError, Result};
use crate::problem::step::{neighbour_cells, Wrap};
use crate::problem::tables::{
    capacities, heater_power, pair_conductances, side_conductances, side_heat_in, side_outside,
};
use crate::problem::{HeatProblem, Side};

/// The `f64` coefficients of one grid of cells: the problem's own (level 0) or a coarser one
/// built from it ([`super::hierarchy`]).
#[derive(Debug, Clone, PartialEq)]
pub struct Coefficients {
    /// Rows.
    pub rows: usize,
    /// Columns.
    pub cols: usize,
    /// Whether the cell is an unknown (1) or held (0).
    pub free: Vec<u8>,
    /// Conductance of the face to the east neighbour (column + 1, wrapping where the columns
    /// are periodic), W/(m·K); 0 where there is none or either cell is held.
    pub east: Vec<f64>,
    /// Conductance of the face to the south neighbour (row + 1, wrapping where the rows are
    /// periodic), W/(m·K); 0 where there is none or either cell is held.
    pub south: Vec<f64>,
    /// The part of the diagonal along the rows (west and east): faces to held cells and the
    /// left and right sides' conductances, W/(m·K).
    pub extra_x: Vec<f64>,
    /// The part of the diagonal along the columns (north and south): faces to held cells and
    /// the top and bottom sides' conductances, W/(m·K).
    pub extra_y: Vec<f64>,
    /// The stiffness diagonal: `(((((G_w + G_e) + G_n) + G_s) + extra_x) + extra_y)`.
    pub diagonal: Vec<f64>,
    /// Heat capacity per metre of depth, J/(m·K) (0 for held cells).
    pub capacity: Vec<f64>,
    /// Whether the left and right sides wrap.
    pub periodic_cols: bool,
    /// Whether the top and bottom sides wrap.
    pub periodic_rows: bool,
}

impl Coefficients {
    /// A `rows × cols` grid of held cells with no faces (to be filled), wrapping as told.
    pub fn empty(rows: usize, cols: usize, periodic_rows: bool, periodic_cols: bool) -> Self {
        let cells = rows * cols;
        Self {
            rows,
            cols,
            free: vec![0; cells],
            east: vec![0.0; cells],
            south: vec![0.0; cells],
            extra_x: vec![0.0; cells],
            extra_y: vec![0.0; cells],
            diagonal: Vec::new(),
            capacity: vec![0.0; cells],
            periodic_cols,
            periodic_rows,
        }
    }

    /// Cells.
    pub fn cells(&self) -> usize {
        self.rows * self.cols
    }

    /// The west neighbour of `(row, col)` and its face's conductance (the neighbour's east).
    #[inline(always)]
    pub fn west(&self, row: usize, col: usize) -> Option<usize> {
        if col > 0 {
            Some(row * self.cols + col - 1)
        } else if self.periodic_cols && self.cols > 1 {
            Some(row * self.cols + self.cols - 1)
        } else {
            None
        }
    }

    /// The north neighbour of `(row, col)` (its face is the neighbour's south).
    #[inline(always)]
    pub fn north(&self, row: usize, col: usize) -> Option<usize> {
        if row > 0 {
            Some((row - 1) * self.cols + col)
        } else if self.periodic_rows && self.rows > 1 {
            Some((self.rows - 1) * self.cols + col)
        } else {
            None
        }
    }

    /// The east neighbour of `(row, col)`.
    #[inline(always)]
    pub fn east_of(&self, row: usize, col: usize) -> Option<usize> {
        if col + 1 < self.cols {
            Some(row * self.cols + col + 1)
        } else if self.periodic_cols && self.cols > 1 {
            Some(row * self.cols)
        } else {
            None
        }
    }

    /// The south neighbour of `(row, col)`.
    #[inline(always)]
    pub fn south_of(&self, row: usize, col: usize) -> Option<usize> {
        if row + 1 < self.rows {
            Some((row + 1) * self.cols + col)
        } else if self.periodic_rows && self.rows > 1 {
            Some(col)
        } else {
            None
        }
    }

    /// Fills `diagonal` from the faces and the extras, in the order both backends use.
    pub(super) fn sum_diagonal(&mut self) {
        let cols = self.cols;
        let mut diagonal = vec![0.0; self.cells()];
        diagonal
            .par_chunks_mut(cols.max(1))
            .enumerate()
            .for_each(|(row, out)| {
                for (col, d) in out.iter_mut().enumerate() {
                    let here = row * cols + col;
                    if self.free[here] == 0 {
                        continue;
                    }
                    let west = self.west(row, col).map_or(0.0, |w| self.east[w]);
                    let north = self.north(row, col).map_or(0.0, |n| self.south[n]);
                    *d = ((((west + self.east[here]) + north) + self.south[here])
                        + self.extra_x[here])
                        + self.extra_y[here];
                }
            });
        self.diagonal = diagonal;
    }
}

/// What a cell's faces need: the conductances and the sides' terms.
struct Faces<'a> {
    pair: &'a [f64],
    side_g: &'a [f64],
    side_flux: &'a [f64],
    outside: &'a [f64],
    held_t: &'a [Option<f64>],
    kinds: usize,
    wrap: Wrap,
}

impl Faces<'_> {
    /// Fills free cell `here`'s east and south conductances and extras in `c`; returns what
    /// its faces add to `b` (sides and held neighbours).
    fn assemble(&self, c: &mut Coefficients, map: &[u8], here: usize) -> f64 {
        let (rows, cols) = (c.rows, c.cols);
        let (row, col) = (here / cols, here % cols);
        let n = self.kinds;
        let i = map[here] as usize;
        let mut b = 0.0;
        let neighbours = neighbour_cells(self.wrap, rows, cols, row, col);
        for (side, neighbour) in Side::ALL.into_iter().zip(neighbours) {
            let (extra, t) = match neighbour {
                // A face of a one-cell-wide periodic grid joins the cell to itself.
                Some(other) if other == here => continue,
                Some(other) => {
                    let j = map[other] as usize;
                    match self.held_t[j] {
                        Some(t) => (self.pair[i * n + j], t),
                        None => {
                            let g = self.pair[i * n + j];
                            match side {
                                Side::Right => c.east[here] = g,
                                Side::Bottom => c.south[here] = g,
                                Side::Left | Side::Top => {}
                            }
                            continue;
                        }
                    }
                }
                None => {
                    b += self.side_flux[side.index()];
                    (
                        self.side_g[side.index() * n + i],
                        self.outside[side.index()],
                    )
                }
            };
            b += extra * t;
            match side {
                Side::Left | Side::Right => c.extra_x[here] += extra,
                Side::Top | Side::Bottom => c.extra_y[here] += extra,
            }
        }
        b
    }
}

/// A heat problem's system: its coefficients, the right side and the held temperatures.
#[derive(Debug, Clone, PartialEq)]
pub struct ConductionSystem {
    /// The problem's own grid.
    pub coefficients: Coefficients,
    /// `b`: heaters, sides and held neighbours, W/m (0 for held cells).
    pub rhs: Vec<f64>,
    /// The temperature of each held cell (°C), `NaN` for free ones.
    pub held: Vec<f64>,
}

impl ConductionSystem {
    /// The system of `problem` (checked first).
    pub fn of(problem: &HeatProblem) -> Result<Self> {
        problem.check()?;
        let (rows, cols) = (problem.size.rows, problem.size.cols);
        let n = problem.kinds.len();
        let dx = problem.spacing;
        let pair = pair_conductances(problem);
        let side_g = side_conductances(problem);
        let capacity = capacities(problem);
        let counts = problem.kind_counts();
        let held_t: Vec<Option<f64>> = problem.kinds.iter().map(|k| k.held_temperature).collect();
        let power: Vec<f64> = (0..n)
            .map(|i| heater_power(problem, i, counts[i]))
            .collect();
        let side_flux: Vec<f64> = Side::ALL
            .iter()
            .map(|&s| side_heat_in(problem.sides.get(s)).map_or(0.0, |q| q * dx))
            .collect();
        let outside: Vec<f64> = Side::ALL
            .iter()
            .map(|&s| side_outside(problem.sides.get(s)))
            .collect();
        let wrap = Wrap {
            rows: problem.sides.periodic_rows(),
            cols: problem.sides.periodic_columns(),
        };
        let map = &problem.map;
        let cells = rows * cols;
        let mut c = Coefficients::empty(rows, cols, wrap.rows, wrap.cols);
        let faces = Faces {
            pair: &pair,
            side_g: &side_g,
            side_flux: &side_flux,
            outside: &outside,
            held_t: &held_t,
            kinds: n,
            wrap,
        };
        let mut rhs = vec![0.0; cells];
        let mut held = vec![f64::NAN; cells];
        for here in 0..cells {
            let i = map[here] as usize;
            if let Some(t) = held_t[i] {
                held[here] = t;
                continue;
            }
            c.free[here] = 1;
            c.capacity[here] = capacity[i];
            rhs[here] = power[i] + faces.assemble(&mut c, map, here);
        }
        c.sum_diagonal();
        let system = Self {
            coefficients: c,
            rhs,
            held,
        };
        system.check_finite()?;
        Ok(system)
    }

    /// Refuses coefficients that are not finite (a heater's power over `f64`'s range).
    fn check_finite(&self) -> Result<()> {
        let bad = self
            .rhs
            .iter()
            .chain(&self.coefficients.diagonal)
            .any(|v| !v.is_finite());
        if bad {
            return Err(HeatlabError::InvalidInput(
                "the problem's heat sources or conductances are too large to solve for (not \
                 finite in f64)"
                    .into(),
            ));
        }
        Ok(())
    }
}
