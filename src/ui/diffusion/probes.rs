//! Probes: up to eight named cells (P1..P8) whose values are sampled every frame, plotted over
//! the steps and exported as CSV. The simulation thread reads only these cells (a gather on the
//! device), never the whole field.

use std::collections::VecDeque;

use eframe::egui::{self, Color32};
use egui_plot::{Line, Plot, PlotPoints};

use heatlab_engine::export::ProbeSeries;
use heatlab_engine::grid::GridSize;
use heatlab_engine::sim::undoable::ProbePlace;

use super::step_clock::StepClock;

/// Probes at most.
pub const MAX_PROBES: usize = 8;
/// Samples kept per probe (the oldest go first).
pub const SERIES_POINTS: usize = 100_000;

/// The colour of probe `number` (1..8), on the views and in the plot.
pub fn probe_color(number: usize) -> Color32 {
    const COLORS: [Color32; MAX_PROBES] = [
        Color32::from_rgb(255, 99, 71),
        Color32::from_rgb(30, 144, 255),
        Color32::from_rgb(50, 205, 50),
        Color32::from_rgb(255, 215, 0),
        Color32::from_rgb(238, 130, 238),
        Color32::from_rgb(0, 206, 209),
        Color32::from_rgb(255, 140, 0),
        Color32::from_rgb(240, 240, 240),
    ];
    COLORS[(number.max(1) - 1) % MAX_PROBES]
}

/// One probe.
#[derive(Debug, Clone)]
pub struct Probe {
    /// 1..8: the probe is named P`number`.
    pub number: usize,
    /// Row of the cell.
    pub row: usize,
    /// Column of the cell.
    pub col: usize,
    series: VecDeque<(u64, f32)>,
}

impl Probe {
    /// P1..P8.
    pub fn name(&self) -> String {
        format!("P{}", self.number)
    }

    /// The latest sample.
    pub fn latest(&self) -> Option<(u64, f32)> {
        self.series.back().copied()
    }

    /// The samples, oldest first.
    pub fn series(&self) -> impl Iterator<Item = &(u64, f32)> {
        self.series.iter()
    }
}

/// The probes placed.
#[derive(Debug, Clone, Default)]
pub struct Probes {
    probes: Vec<Probe>,
    /// The thermostats' setpoints and when their heaters were on, drawn on the plot.
    thermostats: Vec<super::sources::switches::ThermostatTrace>,
    /// Whether the values are temperatures of a heat problem (°C).
    celsius: bool,
}

impl Probes {
    /// The probes, in the order placed.
    pub fn all(&self) -> &[Probe] {
        &self.probes
    }

    /// Says whether the values are temperatures in °C (a heat problem is stepped).
    pub fn set_celsius(&mut self, celsius: bool) {
        self.celsius = celsius;
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.probes.is_empty()
    }

    /// Places a probe with the lowest free number; `None` when all eight are placed.
    pub fn add(&mut self, row: usize, col: usize) -> Option<usize> {
        let number = (1..=MAX_PROBES).find(|n| self.probes.iter().all(|p| p.number != *n))?;
        self.probes.push(Probe {
            number,
            row,
            col,
            series: VecDeque::new(),
        });
        Some(number)
    }

    /// Removes the probe at `index`.
    pub fn remove(&mut self, index: usize) {
        if index < self.probes.len() {
            self.probes.remove(index);
        }
    }

    /// Removes every probe.
    pub fn clear(&mut self) {
        self.probes.clear();
    }

    /// Moves the probe at `index`; a probe at a new cell starts a new series.
    pub fn move_to(&mut self, index: usize, row: usize, col: usize) {
        if let Some(probe) = self.probes.get_mut(index) {
            if (probe.row, probe.col) != (row, col) {
                probe.row = row;
                probe.col = col;
                probe.series.clear();
            }
        }
    }

    /// Where the probes are, for the simulation's undo history.
    pub fn places(&self) -> Vec<ProbePlace> {
        self.probes
            .iter()
            .map(|p| ProbePlace {
                number: p.number as u8,
                row: p.row,
                col: p.col,
            })
            .collect()
    }

    /// Puts the probes where `places` says (undo or redo moved them): a probe still at its
    /// cell keeps its series.
    pub fn place(&mut self, places: &[ProbePlace]) {
        let mut old = std::mem::take(&mut self.probes);
        self.probes = places
            .iter()
            .map(|place| {
                let number = usize::from(place.number);
                match old
                    .iter()
                    .position(|p| (p.number, p.row, p.col) == (number, place.row, place.col))
                {
                    Some(i) => old.swap_remove(i),
                    None => Probe {
                        number,
                        row: place.row,
                        col: place.col,
                        series: VecDeque::new(),
                    },
                }
            })
            .collect();
    }

    /// Row-major indices of the probes' cells.
    pub fn cells(&self, size: GridSize) -> Vec<u32> {
        self.probes
            .iter()
            .map(|p| (p.row * size.cols + p.col) as u32)
            .collect()
    }

    /// Takes the probes' values at `step` (the first of `cells`/`values`, when they are the
    /// probes' cells: a frame sampled before a probe moved is not taken). A repeated sample (the
    /// same step and value, a frame that only redrew) is not kept twice.
    pub fn record(&mut self, step: u64, size: GridSize, cells: &[u32], values: &[f32]) {
        let expected = self.cells(size);
        if cells.len() < expected.len() || cells[..expected.len()] != expected[..] {
            return;
        }
        for (probe, &value) in self.probes.iter_mut().zip(values) {
            let last = probe.series.back().copied();
            if last.is_some_and(|(s, v)| s == step && v.to_bits() == value.to_bits()) {
                continue;
            }
            // Steps went back (a reset or a new field): start over.
            if last.is_some_and(|(s, _)| s > step) {
                probe.series.clear();
            }
            if probe.series.len() == SERIES_POINTS {
                probe.series.pop_front();
            }
            probe.series.push_back((step, value));
        }
    }

    /// Forgets every series (the field was reset or replaced); drops probes outside `size`.
    pub fn restart(&mut self, size: Option<GridSize>) {
        if let Some(size) = size {
            self.probes
                .retain(|p| p.row < size.rows && p.col < size.cols);
        }
        for probe in &mut self.probes {
            probe.series.clear();
        }
    }

    /// The series for the CSV export, with each sample's simulated time when `clock` has it.
    pub fn export_series(&self, clock: &StepClock) -> Vec<ProbeSeries> {
        self.probes
            .iter()
            .map(|p| ProbeSeries {
                name: p.name(),
                row: p.row,
                col: p.col,
                points: p.series.iter().copied().collect(),
                seconds: p
                    .series
                    .iter()
                    .map(|&(step, _)| clock.seconds(step))
                    .collect(),
            })
            .collect()
    }

    /// The thermostats the plot shows with the probes.
    pub fn set_thermostat_traces(
        &mut self,
        traces: Vec<super::sources::switches::ThermostatTrace>,
    ) {
        self.thermostats = traces;
    }

    /// The caption above the plot: what it shows and how the thermostats are drawn.
    pub fn caption(&self) -> String {
        let mut caption = "probe values over time".to_string();
        if !self.thermostats.is_empty() {
            caption.push_str(" · shaded: heater on; solid: setpoint, dashed: its deadband");
        }
        caption
    }

    /// Each probe's value over the steps, or over simulated time while a heat problem runs
    /// (`clock` says).
    pub fn plot_ui(&self, ui: &mut egui::Ui, height: f32, clock: &StepClock) {
        let mut plot = Plot::new("probe_plot");
        if let Some((xs, values)) = self.flat_bounds(clock) {
            plot = plot
                .include_x(xs.0)
                .include_x(xs.1)
                .include_y(values.0)
                .include_y(values.1);
        }
        // No legend over the values: the probes are named in their colours above the plot,
        // and the caption says how the thermostats are drawn.
        let plot = plot
            .height(height)
            .y_axis_min_width(44.0)
            .x_axis_label(clock.axis_label());
        let plot = if self.celsius {
            plot.y_axis_label("°C")
        } else {
            plot
        };
        plot.show(ui, |plot| {
            for probe in &self.probes {
                let points: Vec<[f64; 2]> = probe
                    .series
                    .iter()
                    .map(|&(step, value)| [clock.x(step), f64::from(value)])
                    .collect();
                plot.line(
                    Line::new(probe.name(), PlotPoints::from(points))
                        .color(probe_color(probe.number)),
                );
            }
            super::sources::switches::draw(plot, &self.thermostats, clock);
        });
    }
}

/// Bounds the plot includes when its samples span no x (steps or seconds) or no values (one
/// sample, or a steady value): one either side and 5% of the value (at least 0.001) either
/// side, so that the axis reads 750 ... 830 rather than 789.998 ... 790.002.
pub fn flat_bounds(samples: impl Iterator<Item = (f64, f32)>) -> Option<((f64, f64), (f64, f64))> {
    let mut steps = (f64::INFINITY, f64::NEG_INFINITY);
    let mut values = (f64::INFINITY, f64::NEG_INFINITY);
    for (step, value) in samples {
        let value = f64::from(value);
        steps = (steps.0.min(step), steps.1.max(step));
        if value.is_finite() {
            values = (values.0.min(value), values.1.max(value));
        }
    }
    if !(steps.0.is_finite() && values.0.is_finite()) {
        return None;
    }
    let pad = (values.1.abs().max(values.0.abs()) * 0.05).max(1e-3);
    let flat_values = values.1 - values.0 < pad * 1e-3;
    let flat_steps = steps.1 - steps.0 < 1.0;
    if !(flat_values || flat_steps) {
        return None;
    }
    let steps = if flat_steps {
        (steps.0 - 1.0, steps.1 + 1.0)
    } else {
        steps
    };
    let values = if flat_values {
        (values.0 - pad, values.1 + pad)
    } else {
        values
    };
    Some((steps, values))
}

impl Probes {
    /// [`flat_bounds`] of every probe's samples, placed by `clock`.
    fn flat_bounds(&self, clock: &StepClock) -> Option<((f64, f64), (f64, f64))> {
        let samples = self.probes.iter().flat_map(|p| p.series.iter());
        flat_bounds(samples.map(|&(step, value)| (clock.x(step), value)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn probes_are_numbered_capped_and_sampled() {
        let size = GridSize { rows: 10, cols: 10 };
        let mut probes = Probes::default();
        for i in 0..MAX_PROBES {
            assert_eq!(probes.add(i, i), Some(i + 1));
        }
        assert_eq!(probes.add(9, 9), None, "eight at most");
        probes.remove(2);
        assert_eq!(probes.add(9, 9), Some(3), "the freed name is reused");
        let cells = probes.cells(size);
        let values: Vec<f32> = (0..cells.len()).map(|i| i as f32).collect();
        probes.record(5, size, &cells, &values);
        probes.record(5, size, &cells, &values);
        assert_eq!(
            probes.all()[0].series().count(),
            1,
            "a redraw is not a sample"
        );
        probes.move_to(0, 4, 4);
        assert_eq!(probes.all()[0].series().count(), 0);
        probes.record(6, size, &cells, &values);
        assert_eq!(
            probes.all()[1].series().count(),
            1,
            "stale cells are not taken"
        );
        probes.restart(Some(GridSize { rows: 5, cols: 5 }));
        assert!(probes.all().iter().all(|p| p.row < 5 && p.col < 5));
    }

    #[test]
    fn a_single_sample_gets_readable_bounds_and_a_spread_series_none() {
        let ((s0, s1), (v0, v1)) = flat_bounds([(40.0, 790.0_f32)].into_iter()).unwrap();
        assert_eq!((s0, s1), (39.0, 41.0));
        assert!(
            (v0 - 750.5).abs() < 1e-3 && (v1 - 829.5).abs() < 1e-3,
            "{v0} {v1}"
        );
        let (_, (v0, v1)) = flat_bounds([(1.0, 0.0_f32), (2.0, 0.0)].into_iter()).unwrap();
        assert!((v0 + 1e-3).abs() < 1e-9 && (v1 - 1e-3).abs() < 1e-9);
        assert_eq!(flat_bounds([(1.0, 0.2_f32), (9.0, 0.7)].into_iter()), None);
        assert_eq!(flat_bounds(std::iter::empty()), None);
    }
}
