//! The heat an implicit step put in, channel by channel, for the energy ledger: what the
//! solved equation says crossed the sides, came from the heaters and from held cells over the
//! step, with the temperatures it was solved at (`T'` for backward Euler, `(T + T')/2` for
//! Crank–Nicolson). Interior faces cancel in pairs, so the stored energy changes by their sum
//! up to the solver's tolerance and the `f32` rounding of the field.

use rayon::prelude::*;

use super::ImplicitScheme;
use crate::error::{HeatlabError, Result};
use crate::problem::step::{neighbour_cells, Wrap};
use crate::problem::tables::{
    heater_power, pair_conductances, side_conductances, side_heat_in, side_outside,
};
use crate::problem::{EnergyExchange, HeatProblem, Side};

/// What one implicit step booked.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct ImplicitExchange {
    /// The heat put in, channel by channel, J/m.
    pub exchange: EnergyExchange,
    /// The conductance of the free cells' faces to the sides and to held cells, W/(m K): what
    /// weighs the solve's error in the balance (see [`crate::problem::RoundOff`]).
    pub outer_conductance: f64,
}

/// The exchange of one implicit step of `dt` seconds of `problem` from `before` to `after`.
pub fn implicit_exchange(
    problem: &HeatProblem,
    before: &[f32],
    after: &[f32],
    scheme: ImplicitScheme,
    dt: f64,
) -> Result<ImplicitExchange> {
    let (rows, cols) = (problem.size.rows, problem.size.cols);
    if before.len() != problem.size.cells() || after.len() != before.len() {
        return Err(HeatlabError::Internal(
            "the fields of an implicit step are not the problem's size".into(),
        ));
    }
    let n = problem.kinds.len();
    let pair = pair_conductances(problem);
    let side_g = side_conductances(problem);
    let counts = problem.kind_counts();
    let power: Vec<f64> = (0..n)
        .map(|i| heater_power(problem, i, counts[i]))
        .collect();
    let held: Vec<Option<f64>> = problem.kinds.iter().map(|k| k.held_temperature).collect();
    let dx = problem.spacing;
    let wrap = Wrap {
        rows: problem.sides.periodic_rows(),
        cols: problem.sides.periodic_columns(),
    };
    let at = |cell: usize| match scheme {
        ImplicitScheme::BackwardEuler => f64::from(after[cell]),
        ImplicitScheme::CrankNicolson => 0.5 * (f64::from(before[cell]) + f64::from(after[cell])),
    };
    let map = &problem.map;
    let per_row: Vec<ImplicitExchange> = (0..rows)
        .into_par_iter()
        .map(|row| {
            let mut row_exchange = EnergyExchange::default();
            let mut row_conductance = 0.0;
            for col in 0..cols {
                let here = row * cols + col;
                let i = map[here] as usize;
                if held[i].is_some() {
                    continue;
                }
                let t = at(here);
                row_exchange.sources += power[i];
                let neighbours = neighbour_cells(wrap, rows, cols, row, col);
                for (side, neighbour) in Side::ALL.into_iter().zip(neighbours) {
                    match neighbour {
                        Some(other) => {
                            let j = map[other] as usize;
                            if let Some(t_held) = held[j] {
                                row_exchange.held += pair[i * n + j] * (t_held - t);
                                row_conductance += pair[i * n + j];
                            }
                        }
                        None => {
                            let condition = problem.sides.get(side);
                            let g = side_g[side.index() * n + i];
                            let flux = side_heat_in(condition).map_or(0.0, |q| q * dx);
                            row_exchange.sides[side.index()] +=
                                g * (side_outside(condition) - t) + flux;
                            row_conductance += g;
                        }
                    }
                }
            }
            ImplicitExchange {
                exchange: row_exchange,
                outer_conductance: row_conductance,
            }
        })
        .collect();
    let mut total = EnergyExchange::default();
    let mut outer_conductance = 0.0;
    for row in &per_row {
        total.add(&row.exchange);
        outer_conductance += row.outer_conductance;
    }
    total.sources *= dt;
    total.held *= dt;
    for side in &mut total.sides {
        *side *= dt;
    }
    Ok(ImplicitExchange {
        exchange: total,
        outer_conductance,
    })
}
