//! The per-step constants of a heat problem, computed once on the host in `f64` and rounded to
//! the `f32` values both backends use.

use rayon::prelude::*;

use super::step::{neighbour_cells, Wrap};
use super::{HeatProblem, HeaterPower, Side, SideCondition, TimeStep};
use crate::error::{HeatlabError, Result};

/// The most kinds of cells a problem may have (the map stores a `u8` per cell and the pair
/// table grows with the square of the count).
pub const MAX_KINDS: usize = 64;

/// The most steps a run may take: 2^53, below which every count and `step * dt` is exact in
/// `f64`.
pub const MAX_STEPS: u64 = 1 << 53;

/// Everything one step needs besides the field and the map, for `n` kinds of cells.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct StepTables {
    /// Number of kinds, `n`.
    pub kinds: usize,
    /// `a_ij = dt G_ij / C_i` at `[i * n + j]`: the gain of the face from a cell of kind `i`
    /// to a neighbour of kind `j`.
    pub pair: Vec<f32>,
    /// `s_i = dt Q_i / C_i`: a cell's rise per step from its heater (0 for none, off, held).
    pub source: Vec<f32>,
    /// Whether cells of a kind are held at their temperature (their value never changes).
    pub held: Vec<bool>,
    /// A side face's gain at `[side * n + i]`: `dt G_side / C_i` (fixed, convective).
    pub side_gain: Vec<f32>,
    /// A side face's constant rise at `[side * n + i]`: `dt q'' dx / C_i` (flux).
    pub side_bias: Vec<f32>,
    /// The temperature beyond each side (fixed: the side's; convective: the fluid's), °C.
    pub outside: [f32; 4],
    /// Whether top and bottom wrap.
    pub periodic_rows: bool,
    /// Whether left and right wrap.
    pub periodic_cols: bool,
    /// The time step, s.
    pub dt: f64,
    /// The largest stable time step, s (infinite where no cell exchanges heat).
    pub stability_limit: f64,
    /// Heat capacity `C_i = rho c_p dx²` of each kind, J/(m·K) per metre of depth.
    pub capacity: Vec<f64>,
}

impl StepTables {
    /// The tables of `problem` (checked first).
    pub fn of(problem: &HeatProblem) -> Result<Self> {
        problem.check()?;
        let limits = row_stability_limits(problem, 0..problem.size.rows);
        let limit = limits.into_iter().fold(f64::INFINITY, f64::min);
        Self::with_map_facts(problem, &problem.kind_counts(), limit)
    }

    /// The tables of `problem` (checked by the caller) from what the passes over its map give:
    /// the cells of each kind and the stability limit, the least of [`row_stability_limits`].
    /// A caller that keeps those up to date as the map changes (painting) thus needs no pass
    /// over the whole map, and gets what [`StepTables::of`] gives.
    pub fn with_map_facts(
        problem: &HeatProblem,
        counts: &[usize],
        stability_limit: f64,
    ) -> Result<Self> {
        let n = problem.kinds.len();
        let dx = problem.spacing;
        check_conductivities(problem)?;
        let capacity = capacities(problem);
        let conductance = pair_conductances(problem);
        let side_g = side_conductances(problem);
        let dt = time_step(problem.time_step, stability_limit)?;
        check_time_step(problem, dt, &capacity)?;
        let mut tables = Self {
            kinds: n,
            pair: vec![0.0; n * n],
            source: vec![0.0; n],
            held: problem
                .kinds
                .iter()
                .map(|k| k.held_temperature.is_some())
                .collect(),
            side_gain: vec![0.0; 4 * n],
            side_bias: vec![0.0; 4 * n],
            outside: [0.0; 4],
            periodic_rows: problem.sides.periodic_rows(),
            periodic_cols: problem.sides.periodic_columns(),
            dt,
            stability_limit,
            capacity,
        };
        for i in 0..n {
            let per_capacity = dt / tables.capacity[i];
            for j in 0..n {
                tables.pair[i * n + j] = (per_capacity * conductance[i * n + j]) as f32;
            }
            let count = counts.get(i).copied().unwrap_or(0);
            tables.source[i] = (per_capacity * heater_power(problem, i, count)) as f32;
            for side in Side::ALL {
                let at = side.index() * n + i;
                tables.side_gain[at] = (per_capacity * side_g[at]) as f32;
                if let Some(flux) = side_heat_in(problem.sides.get(side)) {
                    tables.side_bias[at] = (per_capacity * flux * dx) as f32;
                }
            }
        }
        for side in Side::ALL {
            tables.outside[side.index()] = side_outside(problem.sides.get(side)) as f32;
        }
        Ok(tables)
    }

    /// These tables with the heaters of `problem` as they stand now (switched, or of another
    /// power) for a map of `counts` cells per kind: only the sources change, computed as
    /// [`StepTables::of`] computes them (no pass over the map).
    pub fn with_heaters(&self, problem: &HeatProblem, counts: &[usize]) -> Self {
        let mut tables = self.clone();
        for (i, source) in tables.source.iter_mut().enumerate() {
            let per_capacity = self.dt / self.capacity[i];
            let count = counts.get(i).copied().unwrap_or(0);
            *source = (per_capacity * heater_power(problem, i, count)) as f32;
        }
        tables
    }

    /// The steps a duration of `seconds` takes at this time step (rounded up); refused when the
    /// duration is not positive seconds or the count is over [`MAX_STEPS`], which a run's step
    /// counter and its times (`step * dt` in `f64`) hold exactly.
    pub fn steps_for(&self, seconds: f64) -> Result<u64> {
        if !(seconds.is_finite() && seconds > 0.0) {
            return Err(HeatlabError::InvalidInput(format!(
                "a duration must be positive seconds, got {seconds}"
            )));
        }
        let steps = (seconds / self.dt).ceil();
        if steps > MAX_STEPS as f64 {
            return Err(HeatlabError::InvalidInput(format!(
                "a duration of {seconds:e} s at a time step of {:e} s takes {steps:e} steps, \
                 more than the {MAX_STEPS} (2^53) a run can count: give a shorter duration or \
                 a longer time step",
                self.dt
            )));
        }
        Ok(steps as u64)
    }

    /// The face gain from a cell of kind `i` to one of kind `j`.
    #[inline]
    pub fn gain(&self, i: usize, j: usize) -> f32 {
        self.pair[i * self.kinds + j]
    }

    /// The tables as one `f32` array for a device: `pair` (n²), `source` (n), `side_gain`
    /// (4n), `side_bias` (4n), `outside` (4), `held` as 0/1 (n). [`StepTables::offsets`]
    /// says where each part starts.
    pub fn packed(&self) -> Vec<f32> {
        let mut packed = Vec::with_capacity(self.offsets().total);
        packed.extend_from_slice(&self.pair);
        packed.extend_from_slice(&self.source);
        packed.extend_from_slice(&self.side_gain);
        packed.extend_from_slice(&self.side_bias);
        packed.extend_from_slice(&self.outside);
        packed.extend(self.held.iter().map(|&h| if h { 1.0f32 } else { 0.0 }));
        packed
    }

    /// Where each part of [`StepTables::packed`] starts.
    pub fn offsets(&self) -> PackedOffsets {
        let n = self.kinds;
        let source = n * n;
        let side_gain = source + n;
        let side_bias = side_gain + 4 * n;
        let outside = side_bias + 4 * n;
        let held = outside + 4;
        PackedOffsets {
            source,
            side_gain,
            side_bias,
            outside,
            held,
            total: held + n,
        }
    }
}

/// Offsets (in `f32`s) of the parts of [`StepTables::packed`]; `pair` starts at 0.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PackedOffsets {
    /// `source`.
    pub source: usize,
    /// `side_gain`.
    pub side_gain: usize,
    /// `side_bias`.
    pub side_bias: usize,
    /// `outside`.
    pub outside: usize,
    /// `held` (0.0 or 1.0).
    pub held: usize,
    /// The length of the array.
    pub total: usize,
}

/// The conductance (W/m/K per metre of depth) of the face between a cell of kind `i` and one
/// of kind `j`, at `[i * n + j]`: `2 k_i k_j / (k_i + k_j)` between free cells (the two half
/// cells in series; 0 when both are 0); `2 k` of the free one between a free cell and a held
/// one, whose temperature lies on the face (half a cell from the free centre, as on a fixed
/// side), so that a held region's boundary is its outline and not its cells' centres.
pub(crate) fn pair_conductances(problem: &HeatProblem) -> Vec<f64> {
    let k: Vec<f64> = problem
        .kinds
        .iter()
        .map(|c| c.material.conductivity)
        .collect();
    let held: Vec<bool> = problem
        .kinds
        .iter()
        .map(|c| c.held_temperature.is_some())
        .collect();
    let n = k.len();
    let mut g = vec![0.0; n * n];
    for i in 0..n {
        for j in 0..n {
            let sum = k[i] + k[j];
            g[i * n + j] = match (held[i], held[j]) {
                (false, true) => 2.0 * k[i],
                (true, false) => 2.0 * k[j],
                (false, false) | (true, true) if sum > 0.0 => 2.0 * k[i] * k[j] / sum,
                (false, false) | (true, true) => 0.0,
            };
        }
    }
    g
}

/// The conductance (W/m/K) between an edge cell of each kind and what lies beyond each side,
/// at `[side * n + i]` ([`side_conductance`]).
pub(crate) fn side_conductances(problem: &HeatProblem) -> Vec<f64> {
    let n = problem.kinds.len();
    let dx = problem.spacing;
    let mut g = vec![0.0; 4 * n];
    for side in Side::ALL {
        for (i, kind) in problem.kinds.iter().enumerate() {
            let k = kind.material.conductivity;
            g[side.index() * n + i] = side_conductance(problem.sides.get(side), k, dx);
        }
    }
    g
}

// A side's three terms, one function each. A new kind of side adds an arm to each: what
// crosses it by conduction, what it adds as a fixed flux, what lies beyond it.

/// The conductance (W/m/K) between an edge cell of conductivity `k` and what lies beyond a side
/// of `condition`: `2 k` to a fixed temperature (half a cell away), `dx / (1/h + dx/2k)` to a
/// fluid (0 from a cell that conducts nothing); 0 for insulated, flux and periodic sides (a
/// periodic side's faces are ordinary faces to the opposite edge).
fn side_conductance(condition: SideCondition, k: f64, dx: f64) -> f64 {
    match condition {
        SideCondition::Fixed { .. } => 2.0 * k,
        SideCondition::Convective { h, .. } if k > 0.0 => dx / (1.0 / h + dx / (2.0 * k)),
        SideCondition::Convective { .. } => 0.0,
        SideCondition::Insulated | SideCondition::Flux { .. } | SideCondition::Periodic => 0.0,
    }
}

/// The heat flux a side of `condition` gives into the plate, W/m²: a flux side's; none for the
/// others.
pub(crate) fn side_heat_in(condition: SideCondition) -> Option<f64> {
    match condition {
        SideCondition::Flux { flux } => Some(flux),
        SideCondition::Insulated
        | SideCondition::Fixed { .. }
        | SideCondition::Convective { .. }
        | SideCondition::Periodic => None,
    }
}

/// The temperature beyond a side of `condition`, °C: a fixed side's, a convective side's fluid;
/// 0 for the others (whose side gain is 0).
pub(crate) fn side_outside(condition: SideCondition) -> f64 {
    match condition {
        SideCondition::Fixed { temperature } => temperature,
        SideCondition::Convective { ambient, .. } => ambient,
        SideCondition::Insulated | SideCondition::Flux { .. } | SideCondition::Periodic => 0.0,
    }
}

/// `C_i = rho c_p dx²` of each kind.
pub(crate) fn capacities(problem: &HeatProblem) -> Vec<f64> {
    let dx = problem.spacing;
    problem
        .kinds
        .iter()
        .map(|k| k.material.volumetric_heat_capacity() * dx * dx)
        .collect()
}

/// For each row in `rows`, the largest `dt` for which every free cell of the row has gains
/// summing to at most 1 (the new value is then a weighted mean of old ones: no overshoot), s;
/// the problem's stability limit is the least over all rows. A cell's limit depends on its
/// kind and its four neighbours' kinds, so a painted cell changes its own row and the rows
/// beside it.
pub fn row_stability_limits(problem: &HeatProblem, span: std::ops::Range<usize>) -> Vec<f64> {
    let g = pair_conductances(problem);
    let side_g = side_conductances(problem);
    let capacity = capacities(problem);
    let n = problem.kinds.len();
    let (rows, cols) = (problem.size.rows, problem.size.cols);
    let held: Vec<bool> = problem
        .kinds
        .iter()
        .map(|k| k.held_temperature.is_some())
        .collect();
    let map = &problem.map;
    let wrap = Wrap {
        rows: problem.sides.periodic_rows(),
        cols: problem.sides.periodic_columns(),
    };
    let first = span.start;
    map[span.start * cols..span.end * cols]
        .par_chunks(cols)
        .enumerate()
        .map(|(offset, kinds)| {
            let row = first + offset;
            let mut limit = f64::INFINITY;
            for (col, &kind) in kinds.iter().enumerate() {
                let i = kind as usize;
                if held[i] {
                    continue;
                }
                let face = |side: Side, neighbour: Option<usize>| match neighbour {
                    Some(cell) => g[i * n + map[cell] as usize],
                    None => side_g[side.index() * n + i],
                };
                let [left, right, top, bottom] = neighbour_cells(wrap, rows, cols, row, col);
                let total = face(Side::Left, left)
                    + face(Side::Right, right)
                    + face(Side::Top, top)
                    + face(Side::Bottom, bottom);
                if total > 0.0 {
                    limit = limit.min(capacity[i] / total);
                }
            }
            limit
        })
        .collect()
}

fn time_step(rule: TimeStep, limit: f64) -> Result<f64> {
    match rule {
        TimeStep::Fraction(fraction) if limit.is_finite() => Ok(fraction * limit),
        TimeStep::Fraction(_) => Err(HeatlabError::InvalidInput(
            "no heat moves between cells in this problem, so there is no stability limit to \
             take a fraction of: give the time step in seconds"
                .into(),
        )),
        TimeStep::Seconds(dt) if dt > limit => Err(HeatlabError::InvalidInput(format!(
            "a time step of {dt} s is above the stability limit of {limit:.6e} s for this \
             problem (the stiffest cell); take at most that, or a fraction of it"
        ))),
        TimeStep::Seconds(dt) => Ok(dt),
    }
}

/// Refuses a conductivity over `f32::MAX`: the conductances (up to `k`) would not fit the `f32`
/// tables, and `2 k_i k_j` overflows `f64` from about 1e154 on, leaving no stability limit.
fn check_conductivities(problem: &HeatProblem) -> Result<()> {
    let largest = f64::from(f32::MAX);
    match problem.kinds.iter().find(|kind| {
        !kind.material.conductivity.is_finite() || kind.material.conductivity > largest
    }) {
        Some(kind) => Err(HeatlabError::InvalidInput(format!(
            "the conductivity of {} ({}) is {:e} W/m/K, too large: the conductances between \
             cells would overflow the f32 tables (at most {largest:e} W/m/K)",
            kind.name, kind.material.name, kind.material.conductivity
        ))),
        None => Ok(()),
    }
}

/// Refuses a time step that cannot be stepped: zero, subnormal or not finite, naming the kind
/// with the least heat capacity per cell and the spacing that make it so.
fn check_time_step(problem: &HeatProblem, dt: f64, capacity: &[f64]) -> Result<()> {
    if dt.is_normal() {
        return Ok(());
    }
    if let TimeStep::Seconds(_) = problem.time_step {
        return Err(HeatlabError::InvalidInput(format!(
            "a time step of {dt:e} s cannot be stepped: it is below the smallest normal f64 \
             ({:e} s)",
            f64::MIN_POSITIVE
        )));
    }
    let least = capacity
        .iter()
        .enumerate()
        .min_by(|a, b| a.1.total_cmp(b.1))
        .map(|(i, _)| &problem.kinds[i]);
    let cells = least.map_or_else(String::new, |kind| {
        let material = &kind.material;
        format!(
            ": cells of {} (rho {:e} kg/m³, c_p {:e} J/kg/K) at a spacing of {:e} m hold {:e} \
             J/K per metre of depth, too little heat to step",
            kind.name,
            material.density,
            material.specific_heat,
            problem.spacing,
            material.volumetric_heat_capacity() * problem.spacing * problem.spacing
        )
    });
    Err(HeatlabError::InvalidInput(format!(
        "the time step comes to {dt:e} s, which cannot be stepped{cells}"
    )))
}

/// A heater's power per cell, W/m, for a kind with `count` cells.
pub(crate) fn heater_power(problem: &HeatProblem, kind: usize, count: usize) -> f64 {
    let cell = &problem.kinds[kind];
    match cell.heater {
        Some(heater) if heater.on && cell.held_temperature.is_none() => match heater.power {
            HeaterPower::PerVolume(density) => density * problem.spacing * problem.spacing,
            HeaterPower::Total(power) if count > 0 => power / count as f64,
            HeaterPower::Total(_) => 0.0,
        },
        _ => 0.0,
    }
}
