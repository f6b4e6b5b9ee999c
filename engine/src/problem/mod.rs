//! Heat problems users build: materials, heat sources, held temperatures and the four sides,
//! in physical units.
//!
//! The model is an explicit finite-volume scheme on the grid's square cells of side `dx`, per
//! metre of depth (see `docs/physics.md`). Cell `i` belongs to a [`CellKind`] (a material,
//! maybe a heater, maybe held at a temperature); its heat capacity is `C_i = rho c_p dx²`
//! (J/m/K) and the face between cells `i` and `j` conducts `G_ij = 2 k_i k_j / (k_i + k_j)`
//! (W/m/K). One step of `dt` seconds:
//!
//! `T_i' = (T_i + (((f_left + f_right) + f_top) + f_bottom)) + s_i`
//!
//! with `f = a_ij (T_j - T_i)` for a face to a neighbour, `a_ij = dt G_ij / C_i`, the side terms
//! of [`SideCondition`], and `s_i = dt Q_i / C_i` for a heater of `Q_i` W/m. Cells of a held kind
//! keep their temperature. Every constant is computed once on the host in `f64` and rounded to
//! `f32` ([`StepTables`]); the CPU ([`step`], the reference) and CUDA evaluate the same `f32`
//! expression in the same order without fused multiply-adds, so they agree bit for bit.
//!
//! The tutorial's problem (one uniform plate stepped with `coeff`) keeps its own kernels.

pub mod demo;
pub mod energy;
pub mod exact;
pub mod material;
pub mod shape;
pub mod side;
pub mod step;
pub(crate) mod tables;
pub mod temperature;
pub mod thermostat;

pub use energy::{EnergyBalance, EnergyExchange, EnergyLedger, RoundOff};
pub use material::Material;
pub use shape::Shape;
pub use side::{Side, SideCondition, SideKind, Sides};
pub use tables::{row_stability_limits, StepTables, MAX_KINDS, MAX_STEPS};
pub use thermostat::Thermostat;

use serde::{Deserialize, Serialize};

/// The side of a cell, m, where nothing else says one: a problem started by painting on the
/// tutorial's plate, a material map imported with no problem and no spacing in its legend.
pub const PLATE_SPACING: f64 = 1e-3;

use crate::error::{HeatlabError, Result};
use crate::grid::{Grid, GridSize};

/// How much power a heater gives.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum HeaterPower {
    /// Volumetric power density, W/m³, in every cell of the kind.
    PerVolume(f64),
    /// The whole kind's power per metre of depth, W/m, shared equally by its cells.
    Total(f64),
}

/// A heat source: a power, switched on or off.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Heater {
    /// Its power.
    pub power: HeaterPower,
    /// Whether it heats now.
    pub on: bool,
}

/// What a cell is: a material, and maybe a heater or a held temperature. The cell map stores
/// the index of a kind per cell.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CellKind {
    /// The name users see (a part's name, or the material's).
    pub name: String,
    /// Its material.
    pub material: Material,
    /// A heat source in its cells, if any.
    pub heater: Option<Heater>,
    /// The temperature (°C) its cells are held at, if any.
    pub held_temperature: Option<f64>,
}

impl CellKind {
    /// A plain material.
    pub fn of(material: Material) -> Self {
        Self {
            name: material.name.clone(),
            material,
            heater: None,
            held_temperature: None,
        }
    }
}

/// A problem ready to step: its tables and the kind of every cell (what backends hold).
#[derive(Debug, Clone, PartialEq)]
pub struct CompiledProblem {
    /// The per-step constants.
    pub tables: StepTables,
    /// The kind of every cell, row-major.
    pub map: Vec<u8>,
    /// Columns of the grid.
    pub cols: usize,
}

/// How the time step is chosen.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TimeStep {
    /// This fraction (0 < f < 1) of the stability limit of the stiffest cell.
    Fraction(f64),
    /// This many seconds, refused above the stability limit.
    Seconds(f64),
}

impl Default for TimeStep {
    fn default() -> Self {
        Self::Fraction(DEFAULT_STEP_FRACTION)
    }
}

/// The fraction of the stability limit used unless a scenario says otherwise.
pub const DEFAULT_STEP_FRACTION: f64 = 0.9;

/// A heat problem on a grid: kinds of cells, which cell is which, the sides, the time step.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct HeatProblem {
    /// Rows and columns.
    pub size: GridSize,
    /// The side of a cell, m.
    pub spacing: f64,
    /// The kinds of cells (at most [`MAX_KINDS`]).
    pub kinds: Vec<CellKind>,
    /// The kind of every cell, row-major (not in the JSON form: state files store it as bytes
    /// after the fields, and run records leave it out).
    #[serde(skip)]
    pub map: Vec<u8>,
    /// The four sides.
    pub sides: Sides,
    /// How the time step is chosen.
    pub time_step: TimeStep,
    /// Thermostats switching heaters by a probe's temperature.
    #[serde(default)]
    pub thermostats: Vec<Thermostat>,
}

impl HeatProblem {
    /// A plate of one material, insulated all round, at the default time step.
    pub fn uniform(size: GridSize, spacing: f64, material: Material) -> Self {
        Self {
            size,
            spacing,
            kinds: vec![CellKind::of(material)],
            map: vec![0; size.cells()],
            sides: Sides::default(),
            time_step: TimeStep::default(),
            thermostats: Vec::new(),
        }
    }

    /// Adds a kind (or finds one equal to it) and returns its index.
    pub fn kind_index(&mut self, kind: CellKind) -> Result<u8> {
        if let Some(index) = self.kinds.iter().position(|k| *k == kind) {
            return Ok(index as u8);
        }
        if self.kinds.len() >= MAX_KINDS {
            return Err(HeatlabError::InvalidInput(format!(
                "a problem has at most {MAX_KINDS} kinds of cells (materials, heaters and held \
                 regions together)"
            )));
        }
        self.kinds.push(kind);
        Ok((self.kinds.len() - 1) as u8)
    }

    /// Sets the kind of the cells for which `inside(row, col)` holds.
    pub fn paint(&mut self, kind: u8, inside: impl Fn(usize, usize) -> bool) {
        let cols = self.size.cols;
        for (index, cell) in self.map.iter_mut().enumerate() {
            if inside(index / cols, index % cols) {
                *cell = kind;
            }
        }
    }

    /// Checks everything a step relies on: the spacing, every kind, the map's size and indices,
    /// the sides and the time step's rule.
    pub fn check(&self) -> Result<()> {
        if !(self.spacing.is_finite() && self.spacing > 0.0) {
            return Err(HeatlabError::InvalidInput(format!(
                "the grid spacing must be a positive length in metres, got {}",
                self.spacing
            )));
        }
        if self.kinds.is_empty() || self.kinds.len() > MAX_KINDS {
            return Err(HeatlabError::InvalidInput(format!(
                "a problem needs 1 to {MAX_KINDS} kinds of cells, it has {}",
                self.kinds.len()
            )));
        }
        for kind in &self.kinds {
            check_kind(kind)?;
        }
        if self.map.len() != self.size.cells() {
            return Err(HeatlabError::InvalidInput(format!(
                "the material map has {} cells but the grid is {}x{}",
                self.map.len(),
                self.size.rows,
                self.size.cols
            )));
        }
        if let Some(bad) = self.map.iter().find(|&&k| k as usize >= self.kinds.len()) {
            return Err(HeatlabError::InvalidInput(format!(
                "the material map names kind {bad} but there are only {} kinds",
                self.kinds.len()
            )));
        }
        self.sides.check()?;
        for thermostat in &self.thermostats {
            thermostat.check(self.size.rows, self.size.cols, self.kinds.len(), |k| {
                self.kinds[k].heater.is_some()
            })?;
        }
        match self.time_step {
            TimeStep::Fraction(f) if !(f > 0.0 && f < 1.0) => {
                Err(HeatlabError::InvalidInput(format!(
                    "the time step fraction must lie between 0 and 1 (of the stability \
                     limit), got {f}"
                )))
            }
            TimeStep::Seconds(s) if !(s.is_finite() && s > 0.0) => Err(HeatlabError::InvalidInput(
                format!("the time step must be positive seconds, got {s}"),
            )),
            _ => Ok(()),
        }
    }

    /// How many cells each kind has.
    pub fn kind_counts(&self) -> Vec<usize> {
        let mut counts = vec![0usize; self.kinds.len()];
        for &kind in &self.map {
            counts[kind as usize] += 1;
        }
        counts
    }

    /// Sets the cells of held kinds to their temperatures (before the first step, and after
    /// a region is painted held).
    pub fn apply_held(&self, field: &mut Grid) -> Result<()> {
        if field.size() != self.size {
            return Err(HeatlabError::InvalidInput(format!(
                "the field is {}x{} but the problem is {}x{}",
                field.rows(),
                field.cols(),
                self.size.rows,
                self.size.cols
            )));
        }
        let held: Vec<Option<f32>> = self
            .kinds
            .iter()
            .map(|k| k.held_temperature.map(|t| t as f32))
            .collect();
        for (value, &kind) in field.as_mut_slice().iter_mut().zip(&self.map) {
            if let Some(t) = held[kind as usize] {
                *value = t;
            }
        }
        Ok(())
    }

    /// The per-step constants of this problem (see the module's documentation).
    pub fn tables(&self) -> Result<StepTables> {
        StepTables::of(self)
    }

    /// The tables and the map, ready for a backend.
    pub fn compile(&self) -> Result<CompiledProblem> {
        Ok(CompiledProblem {
            tables: self.tables()?,
            map: self.map.clone(),
            cols: self.size.cols,
        })
    }

    /// The material map as a grid of kind indices (for pictures and `.npy` exports).
    pub fn map_grid(&self) -> Grid {
        let values = self.map.iter().map(|&k| f32::from(k)).collect();
        // The map always has the grid's cells (checked on every path that builds one).
        Grid::from_vec(self.size, values).unwrap_or_else(|_| Grid::zeros(self.size))
    }
}

fn check_kind(kind: &CellKind) -> Result<()> {
    kind.material.check()?;
    if let Some(t) = kind.held_temperature {
        if !temperature::is_physical(t) {
            return Err(HeatlabError::InvalidInput(format!(
                "\"{}\" is held at {t} °C, below absolute zero or not finite",
                kind.name
            )));
        }
    }
    if let Some(heater) = kind.heater {
        let value = match heater.power {
            HeaterPower::PerVolume(v) | HeaterPower::Total(v) => v,
        };
        if !value.is_finite() {
            return Err(HeatlabError::InvalidInput(format!(
                "\"{}\": the heater's power must be finite",
                kind.name
            )));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests;
