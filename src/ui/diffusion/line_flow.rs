//! The line tool's heat flow: the heat crossing the drawn line per second and per metre of
//! depth, `-∫ k dT/dn ds` (W/m), over the steps. Each frame samples the line's cells and their
//! four neighbours; each point's flux is the model's (`render::flux::cell_flux`: faces of
//! harmonic-mean conductance) and the integral is the trapezoid rule along the line. Positive:
//! heat crossing from the left of the line to its right, looking from its start to its end.

use std::collections::VecDeque;
use std::sync::Arc;

use super::step_clock::StepClock;
use eframe::egui;
use egui_plot::{Line, Plot, PlotPoints};

use heatlab_engine::grid::GridSize;
use heatlab_engine::problem::HeatProblem;
use heatlab_engine::render::flux::{cell_flux, CellSample, Conductivity, Stencil};

/// Flow samples kept (the oldest go first).
const SERIES_POINTS: usize = 100_000;

/// The share of the line plot's height the flow's plot takes.
const PLOT_SHARE: f32 = 0.3;

/// A line's points, the neighbours sampled for them and the flow through it over the steps.
#[derive(Debug, Clone, Default)]
pub struct LineFlow {
    /// Each point's cell (row, col).
    points: Vec<(usize, usize)>,
    /// Each point's left, right, upper and lower neighbour: its index in `cells` (`None`
    /// beyond the field's edge).
    neighbours: Vec<[Option<usize>; 4]>,
    /// The neighbours' cells, sampled every frame after the line's own.
    cells: Vec<u32>,
    /// Unit normal (`[x, y]`: columns, rows), to the right of the line's direction.
    normal: [f64; 2],
    /// The line's length, in cells.
    length: f64,
    /// The problem stepped (`None`: the tutorial's plate, `k = 1`, cells of side 1).
    problem: Option<Arc<HeatProblem>>,
    /// (step, flow).
    series: VecDeque<(u64, f64)>,
}

impl LineFlow {
    /// Follows a new line through `line` (its cells, row-major in a field of `size`) from
    /// `start` to `end` (row, col, in cells).
    pub fn set(&mut self, line: &[u32], start: (f32, f32), end: (f32, f32), size: GridSize) {
        let (dr, dc) = (f64::from(end.0 - start.0), f64::from(end.1 - start.1));
        self.length = dr.hypot(dc);
        self.normal = if self.length > 0.0 {
            [-dr / self.length, dc / self.length]
        } else {
            [0.0, 0.0]
        };
        self.points.clear();
        self.neighbours.clear();
        self.cells.clear();
        for &cell in line {
            let (row, col) = (cell as usize / size.cols, cell as usize % size.cols);
            self.points.push((row, col));
            let mut around = [None; 4];
            let candidates = [
                (col > 0).then(|| (row, col - 1)),
                (col + 1 < size.cols).then(|| (row, col + 1)),
                (row > 0).then(|| (row - 1, col)),
                (row + 1 < size.rows).then(|| (row + 1, col)),
            ];
            for (slot, candidate) in around.iter_mut().zip(candidates) {
                if let Some((r, c)) = candidate {
                    *slot = Some(self.cells.len());
                    self.cells.push((r * size.cols + c) as u32);
                }
            }
            self.neighbours.push(around);
        }
        self.series.clear();
    }

    /// The neighbours' cells to sample, after the line's own.
    pub fn cells(&self) -> &[u32] {
        &self.cells
    }

    /// Uses `problem`'s conductivities and cell size from now on.
    pub fn set_problem(&mut self, problem: Option<Arc<HeatProblem>>) {
        self.problem = problem;
    }

    /// A cell's side in metres, with a heat problem.
    pub fn spacing(&self) -> Option<f64> {
        self.problem.as_ref().map(|p| p.spacing)
    }

    /// Takes the problem away (the line is cleared; the problem stays for the next).
    pub fn take_problem(&mut self) -> Option<Arc<HeatProblem>> {
        self.problem.take()
    }

    /// Forgets the series (the field was reset or replaced).
    pub fn restart(&mut self) {
        self.series.clear();
    }

    /// The flow at `step` from the line's values and its neighbours' (`cells` must be
    /// [`Self::cells`]: a frame sampled for another line is not taken).
    pub fn record(&mut self, step: u64, line: &[f32], cells: &[u32], values: &[f32]) {
        if cells != self.cells.as_slice() || line.len() != self.points.len() || line.is_empty() {
            return;
        }
        let conductivity = match self.problem.as_deref() {
            Some(problem) => Conductivity::of(problem),
            None => Conductivity::uniform(1.0),
        };
        let sample = |(row, col): (usize, usize), temperature: f32| CellSample {
            temperature: f64::from(temperature),
            conductivity: conductivity.at(row, col),
        };
        let stencils: Vec<Stencil> = self
            .points
            .iter()
            .zip(line)
            .zip(&self.neighbours)
            .map(|((&(row, col), &value), around)| {
                let at = |slot: usize, r: usize, c: usize| {
                    around[slot]
                        .and_then(|i| values.get(i))
                        .map(|&v| sample((r, c), v))
                };
                Stencil {
                    centre: sample((row, col), value),
                    left: at(0, row, col.wrapping_sub(1)),
                    right: at(1, row, col + 1),
                    up: at(2, row.wrapping_sub(1), col),
                    down: at(3, row + 1, col),
                }
            })
            .collect();
        let spacing = self.problem.as_ref().map_or(1.0, |p| p.spacing);
        let flow = flow_through(&stencils, self.normal, self.length * spacing, spacing);
        if self.series.back().is_some_and(|&(s, _)| s > step) {
            self.series.clear();
        }
        if self.series.back().is_some_and(|&(s, _)| s == step) {
            self.series.pop_back();
        }
        if self.series.len() == SERIES_POINTS {
            self.series.pop_front();
        }
        self.series.push_back((step, flow));
    }

    /// The latest flow: (step, W/m).
    pub fn latest(&self) -> Option<(u64, f64)> {
        self.series.back().copied()
    }

    /// The flow's readout and plot over the steps (over simulated time with a heat problem) at
    /// the top of the line plot's `height`.
    pub fn ui(&self, ui: &mut egui::Ui, height: f32, clock: &StepClock) {
        let unit = if self.problem.is_some() {
            "W/m"
        } else {
            "(arbitrary units)"
        };
        let text = match self.latest() {
            Some((_, flow)) => format!("heat flow through the line {flow:.4e} {unit}"),
            None => format!("heat flow through the line: … {unit}"),
        };
        ui.label(text).on_hover_text(
            "-∫ k dT/dn ds along the line, per metre of depth; positive: heat crossing from \
             the left of the line to its right, seen from its start",
        );
        let plot_height = (height * PLOT_SHARE).max(60.0);
        Plot::new("line_flow_plot")
            .height(plot_height)
            .y_axis_min_width(44.0)
            .x_axis_label(clock.axis_label())
            .show(ui, |plot| {
                let points: Vec<[f64; 2]> =
                    self.series.iter().map(|&(s, f)| [clock.x(s), f]).collect();
                plot.line(Line::new(format!("flow {unit}"), PlotPoints::from(points)));
            });
    }
}

/// `-∫ q·n ds` along points `spacing` metres apart in the field, `length` metres in all, with
/// the trapezoid rule: heat per second and metre of depth crossing the line along `normal`.
pub fn flow_through(stencils: &[Stencil], normal: [f64; 2], length: f64, spacing: f64) -> f64 {
    let n = stencils.len();
    if n < 2 || length <= 0.0 {
        return 0.0;
    }
    let ds = length / (n - 1) as f64;
    stencils
        .iter()
        .enumerate()
        .map(|(i, stencil)| {
            let weight = if i == 0 || i == n - 1 { 0.5 } else { 1.0 };
            let [qx, qy] = cell_flux(stencil, spacing);
            weight * (qx * normal[0] + qy * normal[1]) * ds
        })
        .sum()
}

#[cfg(test)]
mod tests {
    use super::*;
    use heatlab_engine::problem::material;

    /// A field of `size` with T = 30 + slope·col (per cell), sampled as the app samples the
    /// line: its cells, then their neighbours.
    fn sampled(flow: &LineFlow, line: &[u32], size: GridSize, slope: f32) -> (Vec<f32>, Vec<f32>) {
        let value = |cell: u32| 30.0 + slope * (cell as usize % size.cols) as f32;
        (
            line.iter().map(|&c| value(c)).collect(),
            flow.cells().iter().map(|&c| value(c)).collect(),
        )
    }

    #[test]
    fn a_linear_field_carries_k_times_the_slope_times_the_length() {
        let size = GridSize::new(40, 30).unwrap();
        let spacing = 0.001;
        let problem = HeatProblem::uniform(size, spacing, material::find("iron").unwrap());
        let mut flow = LineFlow::default();
        flow.set_problem(Some(Arc::new(problem)));
        // A line down column 12 from row 5 to row 25: 20 cells long, 21 points.
        let line: Vec<u32> = (5..=25).map(|r| (r * size.cols + 12) as u32).collect();
        flow.set(&line, (5.0, 12.0), (25.0, 12.0), size);
        assert_eq!(flow.cells().len(), 21 * 4);
        // 0.5 °C per cell rising to the right: heat flows left, which is the right-hand side
        // of a line drawn downwards.
        let (own, around) = sampled(&flow, &line, size, 0.5);
        let cells = flow.cells().to_vec();
        flow.record(7, &own, &cells, &around);
        let (step, watts) = flow.latest().unwrap();
        assert_eq!(step, 7);
        // k · (dT/dx) · length = 80.2 · (0.5 / 0.001) · (20 · 0.001) W/m.
        let expected = 80.2 * 0.5 / spacing * 20.0 * spacing;
        assert!(
            (watts - expected).abs() < 1e-9 * expected,
            "{watts} vs {expected}"
        );
        // Drawn upwards, the same heat crosses the other way.
        let reversed: Vec<u32> = line.iter().rev().copied().collect();
        flow.set(&reversed, (25.0, 12.0), (5.0, 12.0), size);
        let (own, around) = sampled(&flow, &reversed, size, 0.5);
        let cells = flow.cells().to_vec();
        flow.record(8, &own, &cells, &around);
        assert!((flow.latest().unwrap().1 + expected).abs() < 1e-9 * expected);
        // A line along the gradient is crossed by nothing.
        let along: Vec<u32> = (3..=20).map(|c| (10 * size.cols + c) as u32).collect();
        flow.set(&along, (10.0, 3.0), (10.0, 20.0), size);
        let (own, around) = sampled(&flow, &along, size, 0.5);
        let cells = flow.cells().to_vec();
        flow.record(9, &own, &cells, &around);
        assert!(flow.latest().unwrap().1.abs() < 1e-9);
        // Samples of another line are not taken.
        flow.record(10, &own, &cells[1..], &around[1..]);
        assert_eq!(flow.latest().unwrap().0, 9);
    }

    #[test]
    fn without_a_problem_k_is_one_and_cells_are_the_unit() {
        let size = GridSize::new(10, 10).unwrap();
        let mut flow = LineFlow::default();
        // A line on the field's left edge: the neighbours beyond it are left out.
        let line: Vec<u32> = (0..10).map(|r| (r * size.cols) as u32).collect();
        flow.set(&line, (0.0, 0.0), (9.0, 0.0), size);
        // Right of every point, above all but the first, below all but the last.
        assert_eq!(flow.cells().len(), 10 + 9 + 9);
        let (own, around) = sampled(&flow, &line, size, -2.0);
        let cells = flow.cells().to_vec();
        flow.record(1, &own, &cells, &around);
        // Heat flows right (against the normal, which points left): -1 · 2 · 9.
        assert!((flow.latest().unwrap().1 + 18.0).abs() < 1e-9);
    }
}
