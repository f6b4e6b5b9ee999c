//! Exact answers of the gallery's classic problems: the temperature at a cell's centre at a
//! time, and the error of a simulated field against it (the largest `|T - T_exact|` over the
//! cells where the answer holds, relative to the problem's temperature span).
//!
//! Every answer takes its values (materials, sizes, side conditions, starting temperatures)
//! from the problem and initial field it is built for, and refuses a problem it does not
//! describe, so an edited problem is never measured against the wrong answer.

use crate::error::{HeatlabError, Result};
use crate::grid::{Grid, GridSize};
use crate::problem::exact::{rectangle_theta, SlabSeries};
use crate::problem::{HeatProblem, Material, Side, SideCondition};

/// Which exact answer a problem has (its values come from the problem).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ExactKind {
    /// Steady 1-D conduction through layers in series between two fixed or convective sides.
    Layers,
    /// A straight fin from a fixed base, convective faces, a convective or insulated tip.
    Fin,
    /// A uniform block cooling through four convective sides: two plane-wall series.
    BlockCooling,
    /// A semi-infinite solid whose left face is suddenly held: an error function.
    SemiInfinite,
    /// Two long bars at two temperatures put in contact: an error function on each side.
    Contact,
    /// A rectangle with its top side hot and the others cold, steady: a Fourier series.
    SquareOneHotSide,
}

/// When an exact answer describes the problem's field.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum ExactWindow {
    /// At every time (a transient answer of the whole, bounded problem).
    Always,
    /// Until these simulated seconds: an answer for an unbounded body holds while the far
    /// side has not felt the change (its far face moves by 1% of the span then).
    Until(f64),
    /// From about these simulated seconds on: a steady answer holds once the slowest mode of
    /// the start has decayed to 1% (ln 100 of its time constant).
    OnceSteady(f64),
}

impl ExactWindow {
    /// Whether the answer holds at `seconds`.
    pub fn contains(self, seconds: f64) -> bool {
        match self {
            Self::Always => true,
            Self::Until(end) => seconds <= end,
            Self::OnceSteady(start) => seconds >= start,
        }
    }
}

/// `z` with `erfc(z) = 0.01`: an error-function answer's change reaches 1% at `x = 2 z √(αt)`.
const ERFC_ONE_PERCENT: f64 = 1.821_386;

/// Time constants a slowest mode takes to decay to 1%: ln 100.
const TO_ONE_PERCENT: f64 = 4.605_170;

/// The formula of an exact answer and its values.
#[derive(Debug, Clone)]
enum Formula {
    /// The steady temperature of each column.
    Layers(Vec<f64>),
    Fin {
        base: f64,
        ambient: f64,
        m: f64,
        length: f64,
        /// `h_tip / (m k)`: 0 for an insulated tip.
        tip: f64,
    },
    BlockCooling {
        across: SlabSeries,
        down: SlabSeries,
        alpha: f64,
        start: f64,
        ambient: f64,
    },
    SemiInfinite {
        face: f64,
        start: f64,
        alpha: f64,
    },
    Contact {
        /// Column of the first cell of the right bar.
        interface: usize,
        contact: f64,
        left: (f64, f64),
        right: (f64, f64),
    },
    Square {
        hot: f64,
        cold: f64,
    },
}

/// An exact answer for one problem.
#[derive(Debug, Clone)]
pub struct ExactAnswer {
    kind: ExactKind,
    formula: Formula,
    window: ExactWindow,
    size: GridSize,
    spacing: f64,
    span: f64,
}

fn refuse(kind: ExactKind, why: &str) -> HeatlabError {
    HeatlabError::InvalidInput(format!(
        "the {} answer does not describe this problem: {why}",
        kind.name()
    ))
}

impl ExactKind {
    /// Its name, for people.
    pub fn name(self) -> &'static str {
        match self {
            Self::Layers => "series-resistance (steady)",
            Self::Fin => "fin (steady, cosh)",
            Self::BlockCooling => "plane-wall series product",
            Self::SemiInfinite => "semi-infinite solid (erf)",
            Self::Contact => "contact of two long bars (erf)",
            Self::SquareOneHotSide => "Fourier series (steady)",
        }
    }
}

/// The one material of a problem without sources or held cells.
fn one_material(kind: ExactKind, problem: &HeatProblem) -> Result<Material> {
    let first = &problem.kinds[problem.map.first().copied().unwrap_or(0) as usize];
    let plain = problem
        .kinds
        .iter()
        .all(|k| k.heater.is_none() && k.held_temperature.is_none());
    let same = problem
        .map
        .iter()
        .all(|&k| problem.kinds[k as usize].material == first.material);
    if !(plain && same) {
        return Err(refuse(
            kind,
            "it needs one material without heaters or held cells",
        ));
    }
    Ok(first.material.clone())
}

/// The temperature of every cell if they are all the same.
fn uniform(kind: ExactKind, initial: &Grid) -> Result<f64> {
    let first = initial.as_slice().first().copied().unwrap_or(0.0);
    if initial.as_slice().iter().any(|&v| v != first) {
        return Err(refuse(kind, "it starts at one temperature"));
    }
    Ok(f64::from(first))
}

/// A convective side's `h` and fluid temperature; `None` for the other kinds.
fn convective(side: SideCondition) -> Option<(f64, f64)> {
    match side {
        SideCondition::Convective { h, ambient } => Some((h, ambient)),
        SideCondition::Insulated
        | SideCondition::Fixed { .. }
        | SideCondition::Flux { .. }
        | SideCondition::Periodic => None,
    }
}

/// A fixed side's temperature; `None` for the other kinds.
fn fixed(side: SideCondition) -> Option<f64> {
    match side {
        SideCondition::Fixed { temperature } => Some(temperature),
        SideCondition::Insulated
        | SideCondition::Flux { .. }
        | SideCondition::Convective { .. }
        | SideCondition::Periodic => None,
    }
}

/// Whether top and bottom carry no heat (a 1-D strip).
fn strip(problem: &HeatProblem) -> bool {
    let quiet = |condition| match condition {
        SideCondition::Insulated | SideCondition::Periodic => true,
        SideCondition::Fixed { .. }
        | SideCondition::Flux { .. }
        | SideCondition::Convective { .. } => false,
    };
    quiet(problem.sides.top) && quiet(problem.sides.bottom)
}

impl ExactAnswer {
    /// The answer of `kind` for `problem` started from `initial`; refused (with the reason)
    /// when the problem is not one it describes.
    pub fn new(kind: ExactKind, problem: &HeatProblem, initial: &Grid) -> Result<Self> {
        let (formula, span, window) = match kind {
            ExactKind::Layers => layers(problem)?,
            ExactKind::Fin => fin(problem)?,
            ExactKind::BlockCooling => block(problem, initial)?,
            ExactKind::SemiInfinite => semi_infinite(problem, initial)?,
            ExactKind::Contact => contact(problem, initial)?,
            ExactKind::SquareOneHotSide => square(problem)?,
        };
        if !(span.is_finite() && span > 0.0) {
            return Err(refuse(kind, "its temperatures are all the same"));
        }
        Ok(Self {
            kind,
            formula,
            window,
            size: problem.size,
            spacing: problem.spacing,
            span,
        })
    }

    /// Which answer it is.
    pub fn kind(&self) -> ExactKind {
        self.kind
    }

    /// When it describes the field.
    pub fn window(&self) -> ExactWindow {
        self.window
    }

    /// The grid it is for.
    pub fn size(&self) -> GridSize {
        self.size
    }

    /// The temperature span errors are relative to, K.
    pub fn span(&self) -> f64 {
        self.span
    }

    /// The line the app draws to compare (row, column at each end): along the middle row, or
    /// down the middle column of the square.
    pub fn line(&self) -> ((f32, f32), (f32, f32)) {
        let (rows, cols) = (self.size.rows as f32, self.size.cols as f32);
        match self.formula {
            Formula::Square { .. } => {
                let col = (cols / 2.0).floor();
                ((0.0, col), (rows - 1.0, col))
            }
            _ => {
                let row = ((rows - 1.0) / 2.0).floor();
                ((row, 0.0), (row, cols - 1.0))
            }
        }
    }

    /// The exact temperature (°C) at the centre of cell `(row, col)` after `seconds`; `None`
    /// where the answer is not measured (the square's hot corners).
    pub fn temperature(&self, row: usize, col: usize, seconds: f64) -> Option<f64> {
        let dx = self.spacing;
        let x = (col as f64 + 0.5) * dx;
        let y = (row as f64 + 0.5) * dx;
        let width = self.size.cols as f64 * dx;
        let height = self.size.rows as f64 * dx;
        let value = match &self.formula {
            Formula::Layers(columns) => *columns.get(col)?,
            &Formula::Fin {
                base,
                ambient,
                m,
                length,
                tip,
            } => {
                let shape = |d: f64| (m * d).cosh() + tip * (m * d).sinh();
                ambient + (base - ambient) * shape(length - x) / shape(length)
            }
            Formula::BlockCooling {
                across,
                down,
                alpha,
                start,
                ambient,
            } => {
                if seconds <= 0.0 {
                    return Some(*start);
                }
                let (a, b) = (width / 2.0, height / 2.0);
                let theta = across.theta((x - a) / a, alpha * seconds / (a * a))
                    * down.theta((y - b) / b, alpha * seconds / (b * b));
                ambient + (start - ambient) * theta
            }
            &Formula::SemiInfinite { face, start, alpha } => {
                if seconds <= 0.0 {
                    return Some(start);
                }
                face + (start - face) * libm::erf(x / (2.0 * (alpha * seconds).sqrt()))
            }
            &Formula::Contact {
                interface,
                contact,
                left,
                right,
            } => {
                let at = interface as f64 * dx;
                let ((start, alpha), distance) = if col < interface {
                    (left, at - x)
                } else {
                    (right, x - at)
                };
                if seconds <= 0.0 {
                    return Some(start);
                }
                contact + (start - contact) * libm::erf(distance / (2.0 * (alpha * seconds).sqrt()))
            }
            &Formula::Square { hot, cold } => {
                // The hot corners, at the top (y is measured down from it).
                let corner = |cx: f64| ((x - cx).powi(2) + y.powi(2)).sqrt();
                if corner(0.0).min(corner(width)) < width / 4.0 {
                    return None;
                }
                cold + (hot - cold) * rectangle_theta(width, height, x, height - y)
            }
        };
        Some(value)
    }

    /// The largest `|T - T_exact|` over the cells where the answer holds, relative to the
    /// span, of `field` after `seconds`.
    pub fn error(&self, field: &Grid, seconds: f64) -> f64 {
        let cells: Vec<u32> = (0..field.as_slice().len() as u32).collect();
        self.error_at(&cells, field.as_slice(), seconds)
            .unwrap_or(0.0)
    }

    /// The same over some cells (row-major indices) and their values: `None` when the answer
    /// holds at none of them.
    pub fn error_at(&self, cells: &[u32], values: &[f32], seconds: f64) -> Option<f64> {
        let cols = self.size.cols;
        cells
            .iter()
            .zip(values)
            .filter_map(|(&cell, &value)| {
                let (row, col) = (cell as usize / cols, cell as usize % cols);
                let exact = self.temperature(row, col, seconds)?;
                Some((f64::from(value) - exact).abs() / self.span)
            })
            .reduce(f64::max)
    }
}

/// Each column's steady temperature in a strip of layers: the heat flux is the same through
/// every layer, `q = ΔT / R` with `R` the film, the half cells and the whole cells in series.
/// An answer's formula, its temperature span and when it holds.
type Built = (Formula, f64, ExactWindow);

fn layers(problem: &HeatProblem) -> Result<Built> {
    let kind = ExactKind::Layers;
    let cols = problem.size.cols;
    let dx = problem.spacing;
    let rows_alike = problem
        .map
        .chunks(cols)
        .all(|row| row == &problem.map[..cols]);
    let plain = problem
        .kinds
        .iter()
        .all(|k| k.heater.is_none() && k.held_temperature.is_none());
    if !(strip(problem) && rows_alike && plain) {
        return Err(refuse(
            kind,
            "it needs layers across a strip insulated above and below",
        ));
    }
    // The outside temperature and the film's resistance (m²K/W) of a side.
    let outside = |side: Side| {
        let condition = problem.sides.get(side);
        fixed(condition)
            .map(|temperature| (temperature, 0.0))
            .or_else(|| convective(condition).map(|(h, ambient)| (ambient, 1.0 / h)))
            .ok_or_else(|| refuse(kind, "its left and right sides must be fixed or convective"))
    };
    let (hot, film_left) = outside(Side::Left)?;
    let (cold, film_right) = outside(Side::Right)?;
    let resistance: Vec<f64> = problem.map[..cols]
        .iter()
        .map(|&k| dx / problem.kinds[k as usize].material.conductivity)
        .collect();
    let total = film_left + resistance.iter().sum::<f64>() + film_right;
    let flux = (hot - cold) / total;
    let mut before = film_left;
    let temperatures = resistance
        .iter()
        .map(|&r| {
            let t = hot - flux * (before + r / 2.0);
            before += r;
            t
        })
        .collect();
    // The slowest mode: conduction across the layers (their travel times added), and each
    // film's lumped time (the strip's heat capacity behind it).
    let materials = || {
        problem.map[..cols]
            .iter()
            .map(|&k| &problem.kinds[k as usize].material)
    };
    let travel: f64 = materials().map(|m| dx / m.diffusivity().sqrt()).sum();
    let capacity: f64 = materials().map(|m| m.volumetric_heat_capacity() * dx).sum();
    let film_time = (film_left + film_right) * capacity;
    let tau = travel * travel / std::f64::consts::PI.powi(2) + film_time;
    let window = ExactWindow::OnceSteady(TO_ONE_PERCENT * tau);
    Ok((Formula::Layers(temperatures), (hot - cold).abs(), window))
}

fn fin(problem: &HeatProblem) -> Result<Built> {
    let kind = ExactKind::Fin;
    let material = one_material(kind, problem)?;
    let base = fixed(problem.sides.left).ok_or_else(|| refuse(kind, "its base (left) is fixed"))?;
    let faces = convective(problem.sides.top)
        .filter(|&top| Some(top) == convective(problem.sides.bottom))
        .ok_or_else(|| refuse(kind, "its faces (top and bottom) are convective alike"))?;
    let (h, ambient) = faces;
    let k = material.conductivity;
    let thickness = problem.size.rows as f64 * problem.spacing;
    let m = (2.0 * h / (k * thickness)).sqrt();
    let tip = match problem.sides.right {
        SideCondition::Insulated => Some(0.0),
        SideCondition::Convective { h, ambient: a } => (a == ambient).then(|| h / (m * k)),
        SideCondition::Fixed { .. } | SideCondition::Flux { .. } | SideCondition::Periodic => None,
    }
    .ok_or_else(|| {
        refuse(
            kind,
            "its tip (right) is insulated or convective to the same air",
        )
    })?;
    let length = problem.size.cols as f64 * problem.spacing;
    let formula = Formula::Fin {
        base,
        ambient,
        m,
        length,
        tip,
    };
    // The slowest mode of a fin from a fixed base: a quarter wave along it, and the faces' loss.
    let quarter = std::f64::consts::FRAC_PI_2 / length;
    let tau = 1.0 / (material.diffusivity() * (quarter * quarter + m * m));
    let window = ExactWindow::OnceSteady(TO_ONE_PERCENT * tau);
    Ok((formula, (base - ambient).abs(), window))
}

fn block(problem: &HeatProblem, initial: &Grid) -> Result<Built> {
    let kind = ExactKind::BlockCooling;
    let material = one_material(kind, problem)?;
    let start = uniform(kind, initial)?;
    let (h, ambient) = convective(problem.sides.left)
        .filter(|&left| {
            Side::ALL
                .iter()
                .all(|&s| convective(problem.sides.get(s)) == Some(left))
        })
        .ok_or_else(|| refuse(kind, "its four sides are convective alike"))?;
    let k = material.conductivity;
    let half = |cells: usize| cells as f64 * problem.spacing / 2.0;
    let formula = Formula::BlockCooling {
        across: SlabSeries::new(h * half(problem.size.cols) / k),
        down: SlabSeries::new(h * half(problem.size.rows) / k),
        alpha: material.diffusivity(),
        start,
        ambient,
    };
    Ok((formula, (start - ambient).abs(), ExactWindow::Always))
}

fn semi_infinite(problem: &HeatProblem, initial: &Grid) -> Result<Built> {
    let kind = ExactKind::SemiInfinite;
    let material = one_material(kind, problem)?;
    let start = uniform(kind, initial)?;
    let face = fixed(problem.sides.left).ok_or_else(|| refuse(kind, "its left face is fixed"))?;
    if !(strip(problem) && problem.sides.right == SideCondition::Insulated) {
        return Err(refuse(kind, "its other sides are insulated"));
    }
    let alpha = material.diffusivity();
    let formula = Formula::SemiInfinite { face, start, alpha };
    let depth = problem.size.cols as f64 * problem.spacing;
    let window = ExactWindow::Until(unfelt_until(depth, alpha));
    Ok((formula, (face - start).abs(), window))
}

/// The simulated seconds until a change at one end of a body `depth` deep (m) of diffusivity
/// `alpha` moves the other end by 1% (the error function's reach).
fn unfelt_until(depth: f64, alpha: f64) -> f64 {
    let reach = depth / (2.0 * ERFC_ONE_PERCENT);
    reach * reach / alpha
}

fn contact(problem: &HeatProblem, initial: &Grid) -> Result<Built> {
    let kind = ExactKind::Contact;
    let cols = problem.size.cols;
    let row = &problem.map[..cols];
    let interface = row.iter().position(|&k| k != row[0]).unwrap_or(cols);
    let two_bars = problem.map.chunks(cols).all(|r| r == row)
        && interface < cols
        && row[interface..].iter().all(|&k| k == row[interface])
        && Side::ALL
            .iter()
            .all(|&s| problem.sides.get(s) == SideCondition::Insulated);
    if !two_bars {
        return Err(refuse(
            kind,
            "it needs two bars side by side, insulated all round",
        ));
    }
    let bar = |columns: std::ops::Range<usize>, index: u8| -> Result<(f64, f64, f64)> {
        let start = f64::from(initial.as_slice()[columns.start]);
        let alike = initial
            .as_slice()
            .chunks(cols)
            .all(|r| r[columns.clone()].iter().all(|&v| f64::from(v) == start));
        let kind_of = &problem.kinds[index as usize];
        if !alike || kind_of.heater.is_some() || kind_of.held_temperature.is_some() {
            return Err(refuse(
                kind,
                "each bar starts at one temperature, without sources",
            ));
        }
        let m = &kind_of.material;
        let effusivity = (m.conductivity * m.volumetric_heat_capacity()).sqrt();
        Ok((start, m.diffusivity(), effusivity))
    };
    let (t1, a1, e1) = bar(0..interface, row[0])?;
    let (t2, a2, e2) = bar(interface..cols, row[interface])?;
    let formula = Formula::Contact {
        interface,
        contact: (e1 * t1 + e2 * t2) / (e1 + e2),
        left: (t1, a1),
        right: (t2, a2),
    };
    let dx = problem.spacing;
    let left_until = unfelt_until(interface as f64 * dx, a1);
    let right_until = unfelt_until((cols - interface) as f64 * dx, a2);
    let window = ExactWindow::Until(left_until.min(right_until));
    Ok((formula, (t1 - t2).abs(), window))
}

fn square(problem: &HeatProblem) -> Result<Built> {
    let kind = ExactKind::SquareOneHotSide;
    let material = one_material(kind, problem)?;
    let sides = &problem.sides;
    let hot = fixed(sides.top).ok_or_else(|| refuse(kind, "its top side is fixed"))?;
    let cold = fixed(sides.left)
        .filter(|&c| fixed(sides.right) == Some(c) && fixed(sides.bottom) == Some(c))
        .ok_or_else(|| refuse(kind, "its other three sides are fixed at one temperature"))?;
    // The slowest mode of a rectangle with fixed sides: half a wave each way.
    let (width, height) = (
        problem.size.cols as f64 * problem.spacing,
        problem.size.rows as f64 * problem.spacing,
    );
    let wavenumber2 =
        std::f64::consts::PI.powi(2) * (1.0 / (width * width) + 1.0 / (height * height));
    let window = ExactWindow::OnceSteady(TO_ONE_PERCENT / (material.diffusivity() * wavenumber2));
    Ok((Formula::Square { hot, cold }, (hot - cold).abs(), window))
}

#[cfg(test)]
mod tests;
