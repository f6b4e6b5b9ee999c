//! Random but reproducible heat problems for differential checks: materials with properties
//! spanning foams to metals, heaters (on and off, per volume and total), held cells, every side
//! condition, and layouts from one material to a different kind in every cell; and the edits a
//! user makes between steps (paint a region, switch a heater).

use rand_core::{Rng, SeedableRng};
use rand_pcg::Pcg64;

use crate::error::Result;
use crate::grid::GridSize;
use crate::problem::{
    CellKind, HeatProblem, Heater, HeaterPower, Material, SideCondition, SideKind, Sides,
    StepTables, TimeStep, MAX_KINDS,
};

/// How kinds are laid out on the grid.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Layout {
    /// Every cell a random kind.
    Random,
    /// Horizontal stripes of a few rows each.
    RowStripes,
    /// Vertical stripes of a few columns each.
    ColumnStripes,
    /// Rectangles of random kinds painted over kind 0.
    Blocks,
}

/// Draws from a seed.
struct Draw(Pcg64);

impl Draw {
    fn below(&mut self, n: usize) -> usize {
        (self.0.next_u64() % n.max(1) as u64) as usize
    }

    fn chance(&mut self, percent: usize) -> bool {
        self.below(100) < percent
    }

    /// A number in `[low, high)` spread evenly over its logarithm.
    fn log_uniform(&mut self, low: f64, high: f64) -> f64 {
        let t = self.below(1 << 20) as f64 / f64::from(1u32 << 20);
        (low.ln() + t * (high.ln() - low.ln())).exp()
    }

    fn uniform(&mut self, low: f64, high: f64) -> f64 {
        low + (high - low) * self.below(1 << 20) as f64 / f64::from(1u32 << 20)
    }
}

/// A random side condition, of any kind of [`SideKind::ALL`] but periodic (whose pairs
/// [`sides`] chooses together).
fn side(draw: &mut Draw) -> SideCondition {
    let kinds: Vec<SideKind> = SideKind::ALL
        .into_iter()
        .filter(|&kind| kind != SideKind::Periodic)
        .collect();
    match kinds[draw.below(kinds.len())] {
        SideKind::Insulated => SideCondition::Insulated,
        SideKind::Fixed => SideCondition::Fixed {
            temperature: draw.uniform(-40.0, 300.0),
        },
        SideKind::Flux => SideCondition::Flux {
            flux: draw.uniform(-5e4, 5e4),
        },
        SideKind::Convective => SideCondition::Convective {
            h: draw.log_uniform(1.0, 5e3),
            ambient: draw.uniform(-20.0, 80.0),
        },
        SideKind::Periodic => SideCondition::Periodic,
    }
}

/// Random sides: each pair periodic or two independent conditions.
fn sides(draw: &mut Draw) -> Sides {
    let mut sides = Sides::all(SideCondition::Insulated);
    if draw.chance(30) {
        sides.left = SideCondition::Periodic;
        sides.right = SideCondition::Periodic;
    } else {
        sides.left = side(draw);
        sides.right = side(draw);
    }
    if draw.chance(30) {
        sides.top = SideCondition::Periodic;
        sides.bottom = SideCondition::Periodic;
    } else {
        sides.top = side(draw);
        sides.bottom = side(draw);
    }
    sides
}

/// A random kind: a material from foam to copper, maybe a heater, maybe held.
fn kind(draw: &mut Draw, index: usize) -> Result<CellKind> {
    let conductivity = if draw.chance(5) {
        0.0
    } else {
        draw.log_uniform(0.02, 400.0)
    };
    let material = Material::new(
        &format!("material {index}"),
        conductivity,
        draw.log_uniform(1.0, 9000.0),
        draw.log_uniform(100.0, 4200.0),
    )?;
    let mut kind = CellKind::of(material);
    kind.name = format!("kind {index}");
    if draw.chance(25) {
        let power = if draw.chance(50) {
            HeaterPower::PerVolume(draw.uniform(-1e6, 1e7))
        } else {
            HeaterPower::Total(draw.uniform(-100.0, 1000.0))
        };
        kind.heater = Some(Heater {
            power,
            on: draw.chance(70),
        });
    }
    if draw.chance(12) {
        kind.held_temperature = Some(draw.uniform(-20.0, 200.0));
    }
    Ok(kind)
}

/// Paints `problem`'s map with `layout` over its `kinds` kinds.
fn lay_out(draw: &mut Draw, problem: &mut HeatProblem, layout: Layout) {
    let kinds = problem.kinds.len();
    let cols = problem.size.cols;
    match layout {
        Layout::Random => {
            for cell in problem.map.iter_mut() {
                *cell = draw.below(kinds) as u8;
            }
        }
        Layout::RowStripes | Layout::ColumnStripes => {
            let width = 1 + draw.below(9);
            for (index, cell) in problem.map.iter_mut().enumerate() {
                let along = if layout == Layout::RowStripes {
                    index / cols
                } else {
                    index % cols
                };
                *cell = ((along / width) % kinds) as u8;
            }
        }
        Layout::Blocks => {
            for _ in 0..1 + draw.below(12) {
                let kind = draw_kind(kinds, draw);
                paint_rectangle(draw, problem, kind);
            }
        }
    }
}

fn draw_kind(kinds: usize, draw: &mut Draw) -> u8 {
    draw.below(kinds) as u8
}

/// Paints a random rectangle (up to the whole grid) with `kind`.
fn paint_rectangle(draw: &mut Draw, problem: &mut HeatProblem, kind: u8) {
    let (rows, cols) = (problem.size.rows, problem.size.cols);
    let (r0, c0) = (draw.below(rows), draw.below(cols));
    let (r1, c1) = (
        r0 + 1 + draw.below(rows - r0),
        c0 + 1 + draw.below(cols - c0),
    );
    problem.paint(kind, |r, c| (r0..r1).contains(&r) && (c0..c1).contains(&c));
}

/// The tables of `problem` at its time step; where that rule fails after an edit, at the
/// other rule: one second where no heat moves between cells (no limit to take a fraction
/// of), 0.9 of the limit where a given step is above it.
pub fn tables_of(problem: &mut HeatProblem) -> Result<StepTables> {
    match problem.tables() {
        Ok(tables) => Ok(tables),
        Err(_) => {
            problem.time_step = match problem.time_step {
                TimeStep::Seconds(_) => TimeStep::Fraction(0.9),
                TimeStep::Fraction(_) => TimeStep::Seconds(1.0),
            };
            problem.tables()
        }
    }
}

/// A random problem of `kinds` kinds (1 to [`MAX_KINDS`]) on `size`, laid out by `layout`.
pub fn random_problem_with(
    seed: u64,
    size: GridSize,
    kinds: usize,
    layout: Layout,
) -> Result<HeatProblem> {
    let mut draw = Draw(Pcg64::seed_from_u64(seed));
    let kinds = kinds.clamp(1, MAX_KINDS);
    let spacing = draw.log_uniform(1e-4, 1.0);
    let mut problem = HeatProblem::uniform(size, spacing, kind(&mut draw, 0)?.material);
    problem.kinds = (0..kinds)
        .map(|index| kind(&mut draw, index))
        .collect::<Result<_>>()?;
    problem.sides = sides(&mut draw);
    problem.time_step = TimeStep::Fraction(draw.uniform(0.3, 0.99));
    lay_out(&mut draw, &mut problem, layout);
    Ok(problem)
}

/// A random problem on `size`: 1 to 64 kinds in a random layout.
pub fn random_problem(seed: u64, size: GridSize) -> Result<HeatProblem> {
    let mut draw = Draw(Pcg64::seed_from_u64(seed ^ 0x9e37_79b9_7f4a_7c15));
    let kinds = [1, 2, 3, 4, 7, 16, 33, 64][draw.below(8)];
    let layout = [
        Layout::Random,
        Layout::RowStripes,
        Layout::ColumnStripes,
        Layout::Blocks,
    ][draw.below(4)];
    random_problem_with(seed, size, kinds, layout)
}

/// Paints a random region of `problem` (a rectangle or scattered cells) with one of its kinds.
pub fn edit_map(seed: u64, problem: &mut HeatProblem) {
    let mut draw = Draw(Pcg64::seed_from_u64(seed));
    let kind = draw_kind(problem.kinds.len(), &mut draw);
    if draw.chance(50) {
        paint_rectangle(&mut draw, problem, kind);
    } else {
        for _ in 0..1 + draw.below(64) {
            let cell = draw.below(problem.map.len());
            problem.map[cell] = kind;
        }
    }
}

/// Switches a heater of `problem` (one of its kinds gets a heater if none has one).
pub fn switch_heater(seed: u64, problem: &mut HeatProblem) {
    let mut draw = Draw(Pcg64::seed_from_u64(seed));
    let heaters: Vec<usize> = (0..problem.kinds.len())
        .filter(|&i| problem.kinds[i].heater.is_some())
        .collect();
    if heaters.is_empty() {
        let index = draw.below(problem.kinds.len());
        problem.kinds[index].heater = Some(Heater {
            power: HeaterPower::PerVolume(draw.uniform(1e4, 1e7)),
            on: true,
        });
        return;
    }
    let index = heaters[draw.below(heaters.len())];
    if let Some(heater) = problem.kinds[index].heater.as_mut() {
        heater.on = !heater.on;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn random_problems_are_valid_reproducible_and_varied() {
        let size = GridSize { rows: 17, cols: 23 };
        let mut side_kinds = std::collections::HashSet::new();
        for seed in 0..200 {
            let mut a = random_problem(seed, size).unwrap();
            assert_eq!(a, random_problem(seed, size).unwrap());
            tables_of(&mut a).unwrap();
            for condition in [a.sides.left, a.sides.top] {
                side_kinds.insert(std::mem::discriminant(&condition));
            }
            edit_map(seed, &mut a);
            switch_heater(seed, &mut a);
            tables_of(&mut a).unwrap();
        }
        assert_eq!(side_kinds.len(), 5, "every side condition is drawn");
    }
}
