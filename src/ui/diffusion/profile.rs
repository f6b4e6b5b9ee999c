//! The line tool: a segment drawn on a view, and the values of the cells along it, sampled every
//! frame (a gather of those cells only) and plotted against the distance along the segment.

use eframe::egui;
use egui_plot::{Line, LineStyle, Plot, PlotPoints};

use heatlab_engine::grid::GridSize;

use heatlab_engine::scenario::exact::ExactWindow;

use super::exact_history::ExactHistory;
use super::line_flow::LineFlow;

/// The least height of a plot under the views, in points: the area scrolls rather than
/// squeezing a plot below it.
pub const MIN_PLOT_HEIGHT: f32 = 110.0;

/// Points along a segment at most (one per cell up to this).
pub const MAX_PROFILE_POINTS: usize = 4096;

/// An exact answer along the segment, at the time of the values shown.
#[derive(Debug, Clone, PartialEq)]
pub struct ExactLine {
    /// Which answer, for the legend.
    pub name: &'static str,
    /// The exact temperature at each sampled cell (`None` where it is not measured).
    pub values: Vec<Option<f64>>,
    /// The largest `|T - T_exact|` along the line relative to the answer's span.
    pub error: Option<f64>,
    /// The simulated seconds it is for.
    pub seconds: f64,
    /// When the answer holds.
    pub window: ExactWindow,
}

/// A segment and the values along it.
#[derive(Debug, Clone, Default)]
pub struct LineProfile {
    /// Start and end, in cells (row, col).
    segment: Option<((f32, f32), (f32, f32))>,
    /// The cells sampled along the segment and their distance from the start, in cells.
    cells: Vec<u32>,
    distances: Vec<f64>,
    /// The latest values along the segment and their step.
    values: Option<(u64, Vec<f32>)>,
    /// The heat flow through the segment.
    flow: LineFlow,
    /// The exact answer along it, when the problem has one.
    exact: Option<ExactLine>,
    /// The exact answer's error along it over simulated time.
    history: ExactHistory,
    /// The field the cells were sampled on (a row-major index means nothing on another).
    size: Option<GridSize>,
}

impl LineProfile {
    /// The segment, if one is drawn.
    pub fn segment(&self) -> Option<((f32, f32), (f32, f32))> {
        self.segment
    }

    /// Whether a segment is drawn.
    pub fn is_set(&self) -> bool {
        self.segment.is_some()
    }

    /// Draws the segment from `start` to `end` (cells) on a field of `size`: one sample per
    /// cell along its longer side, the nearest cell to each point.
    pub fn set(&mut self, start: (f32, f32), end: (f32, f32), size: GridSize) {
        let clamp = |(row, col): (f32, f32)| {
            (
                row.clamp(0.0, size.rows as f32 - 1.0),
                col.clamp(0.0, size.cols as f32 - 1.0),
            )
        };
        let (start, end) = (clamp(start), clamp(end));
        if self.segment == Some((start, end)) && self.size == Some(size) {
            return;
        }
        let (dr, dc) = (end.0 - start.0, end.1 - start.1);
        let length = f64::from(dr * dr + dc * dc).sqrt();
        let points = ((dr.abs().max(dc.abs()).ceil() as usize) + 1).min(MAX_PROFILE_POINTS);
        self.cells.clear();
        self.distances.clear();
        for i in 0..points {
            let t = if points == 1 {
                0.0
            } else {
                i as f32 / (points - 1) as f32
            };
            let row = (start.0 + dr * t).round() as usize;
            let col = (start.1 + dc * t).round() as usize;
            self.cells.push((row * size.cols + col) as u32);
            self.distances.push(f64::from(t) * length);
        }
        self.segment = Some((start, end));
        self.size = Some(size);
        self.values = None;
        self.flow.set(&self.cells, start, end, size);
    }

    /// The exact answer along the segment (the panel sets it every frame; `None`: none).
    pub fn set_exact(&mut self, exact: Option<ExactLine>) {
        self.exact = exact.filter(|e| e.values.len() == self.cells.len());
        match &self.exact {
            Some(ExactLine {
                error: Some(error),
                seconds,
                window,
                ..
            }) => self.history.record(*seconds, *error, *window),
            Some(_) => {}
            None => self.history.clear(),
        }
    }

    /// The exact answer's error over simulated time.
    pub fn exact_history(&self) -> &ExactHistory {
        &self.history
    }

    /// The exact answer drawn, if any.
    pub fn exact(&self) -> Option<&ExactLine> {
        self.exact.as_ref()
    }

    /// The exact answer's error for people, if one is drawn.
    pub fn error_text(&self) -> Option<String> {
        let exact = self.exact.as_ref()?;
        let holds = match exact.window.contains(exact.seconds) {
            true => String::new(),
            false => " (outside the time where it holds: the error says nothing here)".into(),
        };
        Some(match exact.error {
            Some(error) => format!(
                "exact answer ({}) at {:.4} s: max |T - T_exact| = {:.3}% of the span{holds}; {}",
                exact.name,
                exact.seconds,
                error * 100.0,
                ExactHistory::window_text(exact.window)
            ),
            None => format!(
                "exact answer ({}): not measured along this line",
                exact.name
            ),
        })
    }

    /// The plot's distance per cell and its axis label: mm on a heat problem, cells on the
    /// tutorial's plate.
    pub fn distance_axis(&self) -> (f64, &'static str) {
        match self.flow.spacing() {
            Some(spacing) => (1e3 * spacing, "distance along the line (mm)"),
            None => (1.0, "distance along the line (cells)"),
        }
    }

    /// Removes the segment.
    pub fn clear(&mut self) {
        let problem = self.flow.take_problem();
        *self = Self::default();
        self.flow.set_problem(problem);
    }

    /// The heat flow through the segment.
    pub fn flow(&self) -> &LineFlow {
        &self.flow
    }

    /// The problem whose conductivities and cell size the heat flow uses.
    pub fn set_problem(
        &mut self,
        problem: Option<std::sync::Arc<heatlab_engine::problem::HeatProblem>>,
    ) {
        self.flow.set_problem(problem);
    }

    /// The cells sampled along the segment.
    pub fn cells(&self) -> &[u32] {
        &self.cells
    }

    /// Takes the values along the segment when `cells` start with its cells (the heat flow's
    /// cells follow).
    pub fn record(&mut self, step: u64, cells: &[u32], values: &[f32]) {
        let n = self.cells.len();
        if cells.starts_with(&self.cells) && n > 0 && values.len() >= n {
            self.values = Some((step, values[..n].to_vec()));
            self.flow
                .record(step, &values[..n], &cells[n..], &values[n..]);
        }
    }

    /// The latest values along the segment: (step, values).
    pub fn values(&self) -> Option<(u64, &[f32])> {
        self.values.as_ref().map(|(step, v)| (*step, v.as_slice()))
    }

    /// Drops values and a segment that no longer fits (the field was replaced); a segment that
    /// fits a field of another size is sampled again on it (its cells' indices change with the
    /// number of columns).
    pub fn restart(&mut self, size: Option<GridSize>) {
        self.values = None;
        self.history.clear();
        self.flow.restart();
        if let (Some(((r0, c0), (r1, c1))), Some(size)) = (self.segment, size) {
            let fits = |r: f32, c: f32| r < size.rows as f32 && c < size.cols as f32;
            if !(fits(r0, c0) && fits(r1, c1)) {
                self.clear();
            } else if self.size != Some(size) {
                self.set((r0, c0), (r1, c1), size);
            }
        }
    }

    /// The values against the distance along the segment, under the flow's plot, in the
    /// `height` the column has for both; the profile takes what the flow and the texts leave
    /// (their lines wrap in a narrow column), at least [`MIN_PLOT_HEIGHT`].
    pub fn plot_ui(&self, ui: &mut egui::Ui, height: f32, clock: &super::step_clock::StepClock) {
        let top = ui.cursor().top();
        self.flow.ui(ui, height, clock);
        if let Some(text) = self.error_text() {
            ui.label(text);
        }
        let mut height = (height - (ui.cursor().top() - top)).max(MIN_PLOT_HEIGHT);
        // The error over time below the profile, when an exact answer is measured.
        let history = self.history.is_plotted();
        if history {
            height = (height / 2.0).max(MIN_PLOT_HEIGHT);
        }
        let (per_cell, axis) = self.distance_axis();
        // No legend over the values: the caption above says which line is which.
        Plot::new("profile_plot")
            .height(height)
            .y_axis_min_width(44.0)
            .x_axis_label(axis)
            .show(ui, |plot| {
                if let Some((step, values)) = self.values() {
                    let points: Vec<[f64; 2]> = self
                        .distances
                        .iter()
                        .zip(values)
                        .map(|(&d, &v)| [per_cell * d, f64::from(v)])
                        .collect();
                    plot.line(Line::new(format!("step {step}"), PlotPoints::from(points)));
                }
                if let Some(exact) = &self.exact {
                    let points: Vec<[f64; 2]> = self
                        .distances
                        .iter()
                        .zip(&exact.values)
                        .filter_map(|(&d, v)| v.map(|v| [per_cell * d, v]))
                        .collect();
                    plot.line(
                        Line::new("exact", PlotPoints::from(points))
                            .style(LineStyle::dashed_loose()),
                    );
                }
            });
        if history {
            self.history.ui(ui, height);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_segment_samples_one_cell_per_step_along_its_longer_side() {
        let size = GridSize { rows: 10, cols: 20 };
        let mut profile = LineProfile::default();
        profile.set((2.0, 1.0), (2.0, 11.0), size);
        let expected: Vec<u32> = (1..=11).map(|c| 2 * 20 + c).collect();
        assert_eq!(profile.cells(), expected.as_slice());
        profile.set((0.0, 0.0), (9.0, 19.0), size);
        assert_eq!(profile.cells().len(), 20);
        assert_eq!(*profile.cells().last().unwrap(), 199);
        // Ends beyond the field are pulled onto it.
        profile.set((-5.0, -5.0), (50.0, 3.0), size);
        assert!(profile.cells().iter().all(|&c| c < 200));
        let cells = profile.cells().to_vec();
        profile.record(3, &cells, &vec![1.0; cells.len()]);
        assert_eq!(profile.values().unwrap().0, 3);
        profile.record(4, &cells[1..], &vec![2.0; cells.len() - 1]);
        assert_eq!(profile.values().unwrap().0, 3, "stale cells are not taken");
    }

    #[test]
    fn a_new_field_drops_a_segment_that_does_not_fit_and_resamples_one_that_does() {
        // A fin's line along its 120 columns on a field of 50x80: off the field, gone.
        let fin = GridSize { rows: 2, cols: 120 };
        let mut profile = LineProfile::default();
        profile.set((0.0, 0.0), (0.0, 119.0), fin);
        profile.restart(GridSize::new(50, 80).ok());
        assert!(!profile.is_set() && profile.cells().is_empty());
        // A short line that fits a wider field: the same cells, indexed with the new columns.
        profile.set((1.0, 0.0), (1.0, 3.0), fin);
        assert_eq!(profile.cells(), &[120, 121, 122, 123]);
        profile.restart(GridSize::new(50, 80).ok());
        assert!(profile.is_set());
        assert_eq!(profile.cells(), &[80, 81, 82, 83]);
    }
}
