//! The energy balance of a heat problem: stored energy against what sources, sides and held
//! cells put in, booked in `f64`.
//!
//! Interior faces between free cells move heat from one to the other and cancel in pairs, so
//! the stored energy `E = sum of C_i T_i` over free cells changes by what the heaters give, what
//! crosses the sides and what flows in from held cells. Each step's flows are taken from the
//! field the step reads; with the same `f32` gains as the step, the balance closes to the
//! round-off of the `f32` field.

use rayon::prelude::*;
use serde::{Deserialize, Serialize};

use super::step::{neighbour_cells, Wrap};
use super::{Side, StepTables};
use crate::grid::RowSpan;

/// Energy put into the plate (J per metre of depth; negative: taken out).
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct EnergyExchange {
    /// By heaters.
    pub sources: f64,
    /// Through each side, in the order of [`Side::ALL`].
    pub sides: [f64; 4],
    /// From held cells into their free neighbours.
    pub held: f64,
}

impl EnergyExchange {
    /// Everything put in.
    pub fn total(&self) -> f64 {
        self.sources + self.sides.iter().sum::<f64>() + self.held
    }

    /// Adds another window's exchange.
    pub fn add(&mut self, other: &Self) {
        self.sources += other.sources;
        for (mine, theirs) in self.sides.iter_mut().zip(other.sides) {
            *mine += theirs;
        }
        self.held += other.held;
    }

    /// Through one side.
    pub fn side(&self, side: Side) -> f64 {
        self.sides[side.index()]
    }
}

/// What books the energy of a problem: the cells that exchange heat with the outside (free
/// cells on a side that does not wrap, or beside a held cell) and the heaters' power per step.
#[derive(Debug, Clone, PartialEq)]
pub struct EnergyLedger {
    cells: Vec<u32>,
    /// Free cells of each kind: what the heaters' power is summed over.
    free_cells: Vec<usize>,
    sources_per_step: f64,
}

impl EnergyLedger {
    /// The ledger of `map` under `tables` (`map` has `rows * cols` cells). Without held kinds
    /// only the cells on the sides can exchange heat, and only they are looked at.
    pub fn new(tables: &StepTables, map: &[u8], cols: usize) -> Self {
        Self::of_rows(tables, map, cols, None)
    }

    /// The ledger of the rows `booked` of `map` alone (all rows when `None`): a band of a
    /// field split over ranks books its own rows, not the halo rows held beside them, and
    /// the bands' ledgers together book what the whole field's does.
    pub fn of_rows(tables: &StepTables, map: &[u8], cols: usize, booked: Option<RowSpan>) -> Self {
        let cols = cols.max(1);
        let rows = map.len() / cols;
        let booked = booked.unwrap_or(RowSpan {
            first: 0,
            count: rows,
        });
        let booked_rows = booked.first.min(rows)..(booked.first + booked.count).min(rows);
        let mut free_cells = vec![0usize; tables.kinds];
        for &kind in &map[booked_rows.start * cols..booked_rows.end * cols] {
            free_cells[kind as usize] += 1;
        }
        for (count, &held) in free_cells.iter_mut().zip(&tables.held) {
            if held {
                *count = 0;
            }
        }
        let wrap = Wrap::of(tables);
        let exchanges = |here: usize| {
            !tables.held[map[here] as usize]
                && neighbour_cells(wrap, rows, cols, here / cols, here % cols)
                    .iter()
                    .any(|n| n.is_none_or(|cell| tables.held[map[cell] as usize]))
        };
        let cells: Vec<u32> = if tables.held.iter().any(|&h| h) {
            booked_rows
                .into_par_iter()
                .flat_map_iter(|row| (row * cols..(row + 1) * cols).filter(|&c| exchanges(c)))
                .map(|c| c as u32)
                .collect()
        } else {
            // Row-major, as the full pass would find them.
            booked_rows
                .flat_map(|row| {
                    let edge_row = row == 0 || row + 1 == rows;
                    let inner: Vec<usize> = if edge_row {
                        (row * cols..(row + 1) * cols).collect()
                    } else if cols > 1 {
                        vec![row * cols, row * cols + cols - 1]
                    } else {
                        vec![row * cols]
                    };
                    inner
                })
                .filter(|&c| exchanges(c))
                .map(|c| c as u32)
                .collect()
        };
        let sources_per_step = sources_per_step(tables, &free_cells);
        Self {
            cells,
            free_cells,
            sources_per_step,
        }
    }

    /// The same ledger under new tables of the same kinds and held cells (a heater switched
    /// or its power changed): only the heaters' power per step changes, without a pass over
    /// the map.
    pub fn retable(&mut self, tables: &StepTables) {
        self.sources_per_step = sources_per_step(tables, &self.free_cells);
    }

    /// The cells whose faces exchange heat with the outside (row-major indices).
    pub fn cells(&self) -> &[u32] {
        &self.cells
    }

    /// What the heaters put in per step, J/m.
    pub fn sources_per_step(&self) -> f64 {
        self.sources_per_step
    }

    /// What one step from `field` puts in.
    pub fn step_exchange(
        &self,
        tables: &StepTables,
        map: &[u8],
        field: &[f32],
        cols: usize,
    ) -> EnergyExchange {
        let rows = map.len() / cols.max(1);
        let mut exchange = EnergyExchange {
            sources: self.sources_per_step,
            ..EnergyExchange::default()
        };
        for &here in &self.cells {
            let here = here as usize;
            let kind = map[here] as usize;
            let capacity = tables.capacity[kind];
            let v = f64::from(field[here]);
            let neighbours =
                neighbour_cells(Wrap::of(tables), rows, cols, here / cols, here % cols);
            for (side, neighbour) in Side::ALL.into_iter().zip(neighbours) {
                match neighbour {
                    None => {
                        let at = side.index() * tables.kinds + kind;
                        let gain = f64::from(tables.side_gain[at]);
                        let outside = f64::from(tables.outside[side.index()]);
                        let bias = f64::from(tables.side_bias[at]);
                        exchange.sides[side.index()] += capacity * (gain * (outside - v) + bias);
                    }
                    Some(cell) if tables.held[map[cell] as usize] => {
                        let gain = f64::from(tables.gain(kind, map[cell] as usize));
                        exchange.held += capacity * gain * (f64::from(field[cell]) - v);
                    }
                    Some(_) => {}
                }
            }
        }
        exchange
    }
}

/// What the heaters put in per step, J/m: per kind, its free cells' count times each one's
/// `C_i s_i` (summed by kind, so that new tables need no pass over the map).
fn sources_per_step(tables: &StepTables, free_cells: &[usize]) -> f64 {
    free_cells
        .iter()
        .enumerate()
        .map(|(kind, &count)| count as f64 * tables.capacity[kind] * f64::from(tables.source[kind]))
        .sum()
}

/// Columns of a row summed on their own before the row adds them up (see [`stored_energy`]):
/// the order both backends sum in, so that the GPU's total equals the CPU's.
pub const STORED_ENERGY_CHUNK: usize = 256;

/// Each kind's weight in the stored energy: its heat capacity, 0 for held kinds (their energy
/// is not the plate's to keep); cells of weight 0 are skipped.
pub fn stored_energy_weights(tables: &StepTables) -> Vec<f64> {
    tables
        .capacity
        .iter()
        .zip(&tables.held)
        .map(|(&capacity, &held)| if held { 0.0 } else { capacity })
        .collect()
}

/// The energy stored in the free cells of `field` (rows of `cols` cells), `sum of C_i T_i` with
/// T in °C, J/m. Summed in `f64` in a fixed order that a GPU can follow: each row's chunks of
/// [`STORED_ENERGY_CHUNK`] columns on their own, the chunks of a row in order, then the rows in
/// order (`kernels/energy.cu` sums the same way).
pub fn stored_energy(tables: &StepTables, map: &[u8], field: &[f32], cols: usize) -> f64 {
    total_of_rows(&stored_energy_by_row(tables, map, field, cols))
}

/// The sums of each row of [`stored_energy`], in row order (a field split over ranks adds its
/// bands' rows in that order, and so gets the same total).
pub fn stored_energy_by_row(
    tables: &StepTables,
    map: &[u8],
    field: &[f32],
    cols: usize,
) -> Vec<f64> {
    let weights = stored_energy_weights(tables);
    let cols = cols.max(1);
    map.par_chunks(cols)
        .zip(field.par_chunks(cols))
        .map(|(kinds, values)| {
            let mut row = 0.0;
            for (kinds, values) in kinds
                .chunks(STORED_ENERGY_CHUNK)
                .zip(values.chunks(STORED_ENERGY_CHUNK))
            {
                let mut chunk = 0.0;
                for (&kind, &value) in kinds.iter().zip(values) {
                    let weight = weights[kind as usize];
                    if weight != 0.0 {
                        chunk += weight * f64::from(value);
                    }
                }
                row += chunk;
            }
            row
        })
        .collect()
}

/// The rows' sums of [`stored_energy`] added up in row order (the last step on either backend).
pub fn total_of_rows(rows: &[f64]) -> f64 {
    rows.iter().fold(0.0, |total, row| total + row)
}

/// Units of `f32` round-off of the largest magnitude an explicit step may leave unbooked per
/// cell (see [`RoundOff`]).
pub const EXPLICIT_ROUNDING_UNITS: f64 = 2.0;

/// Heat a window's steps may lose or gain to the `f32` field's rounding, accumulated step by
/// step (the bound itself needs the field's largest magnitude, known at the window's ends).
///
/// An explicit step rounds every free cell's new value twice (adding the increment, then the
/// source), at most `f32::EPSILON` of the largest magnitude `M` together, and rounds inside the
/// increment, a few units of the faces' flows, which stay below `M` in any field a stable step
/// makes: [`EXPLICIT_ROUNDING_UNITS`] units per cell and step, so the stored energy moves by at
/// most `2 * EPSILON * M * C` per step unbooked (`C` the free cells' heat capacity). A stalled
/// steady state approaches it: increments too small for the field to hold are booked as
/// flows but never stored. An implicit step of `dt` leaves the error `e` of its solve: the
/// balance then misses `sum C_i e_i + dt sum G_b e_b` over the faces `G_b` to sides and held
/// cells, at most `(C + dt G) (tolerance * span + EPSILON * M)`.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct RoundOff {
    /// Explicit steps taken.
    pub explicit_steps: u64,
    /// The implicit steps' `C + dt G` added up, J/(m K).
    pub implicit_weight: f64,
    /// The implicit steps' `(C + dt G) * tolerance * span` added up, J/m.
    pub implicit_solve_heat: f64,
}

impl RoundOff {
    /// Books one implicit step of `dt` seconds on a problem whose free cells hold `capacity`
    /// (J/(m K)) and whose faces to sides and held cells conduct `outer_conductance` (W/(m K)),
    /// solved to `error` (°C: the tolerance times the span).
    pub fn implicit_step(&mut self, capacity: f64, outer_conductance: f64, dt: f64, error: f64) {
        let weight = capacity + dt * outer_conductance;
        self.implicit_weight += weight;
        self.implicit_solve_heat += weight * error;
    }

    /// The bound, J/m, for free cells of heat capacity `capacity` (J/(m K)) whose values stay
    /// within `largest_magnitude` (°C).
    pub fn bound(&self, capacity: f64, largest_magnitude: f64) -> f64 {
        let per_kelvin =
            EXPLICIT_ROUNDING_UNITS * self.explicit_steps as f64 * capacity + self.implicit_weight;
        f64::from(f32::EPSILON) * largest_magnitude * per_kelvin + self.implicit_solve_heat
    }
}

/// The heat capacity of the free cells, J/(m K): each kind's [`stored_energy_weights`] times
/// its cells (`kind_counts`).
pub fn free_capacity(tables: &StepTables, kind_counts: &[usize]) -> f64 {
    stored_energy_weights(tables)
        .iter()
        .zip(kind_counts)
        .map(|(&weight, &count)| weight * count as f64)
        .sum()
}

/// A window's energy balance.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct EnergyBalance {
    /// Stored energy at the window's start, J/m.
    pub stored_before: f64,
    /// Stored energy at its end, J/m.
    pub stored_after: f64,
    /// What came in meanwhile.
    pub exchange: EnergyExchange,
    /// The heat that crossed the sides, came from heaters or from held cells, in or out, J/m:
    /// each channel's magnitude, added up window by window (so heat that came in early and
    /// left later counts both times).
    #[serde(default)]
    pub heat_crossed: f64,
    /// What the `f32` field's rounding may account for over the window's steps, J/m (see
    /// [`RoundOff`]).
    #[serde(default)]
    pub round_off_bound: f64,
}

impl EnergyBalance {
    /// The balance of one window: stored energy at both ends, what came in, and the round-off
    /// bound of its steps.
    pub fn new(
        stored_before: f64,
        stored_after: f64,
        exchange: EnergyExchange,
        round_off_bound: f64,
    ) -> Self {
        let e = &exchange;
        let heat_crossed =
            e.sources.abs() + e.held.abs() + e.sides.iter().map(|s| s.abs()).sum::<f64>();
        Self {
            stored_before,
            stored_after,
            exchange,
            heat_crossed,
            round_off_bound,
        }
    }

    /// This window followed by `later` (which starts where this one ends), as one.
    pub fn then(&self, later: &Self) -> Self {
        let mut exchange = self.exchange;
        exchange.add(&later.exchange);
        Self {
            stored_before: self.stored_before,
            stored_after: later.stored_after,
            exchange,
            heat_crossed: self.heat_crossed + later.heat_crossed,
            round_off_bound: self.round_off_bound + later.round_off_bound,
        }
    }

    /// The change of stored energy less what came in: 0 up to round-off, J/m.
    pub fn closing_error(&self) -> f64 {
        (self.stored_after - self.stored_before) - self.exchange.total()
    }

    /// The closing error against the heat that crossed plus the `f32` round-off bound: below
    /// 1 whenever the error is within the bound; about the error's share of the heat that
    /// crossed when that dominates; for a closed problem (nothing crossed) its share of what
    /// rounding may lose. 0 for a balance of nothing at all.
    pub fn relative_closing_error(&self) -> f64 {
        let scale = self.heat_crossed + self.round_off_bound;
        if scale > 0.0 {
            self.closing_error().abs() / scale
        } else {
            0.0
        }
    }

    /// Whether the closing error is within the `f32` round-off bound of the window's steps.
    pub fn within_round_off(&self) -> bool {
        self.closing_error().abs() <= self.round_off_bound
    }
}
