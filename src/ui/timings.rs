//! Live timings: per-step speed, frame rate, the per-frame split, the `%timeit`-style summary,
//! and the statistics of the field over time, with their plots.

use std::collections::VecDeque;
use std::time::{Duration, Instant};

use eframe::egui;
use egui_plot::{Legend, Line, Plot, PlotPoints};

use crate::sim::FieldStats;

use super::worker::{Frame, FramePart};

/// How many frames the plots and averages keep.
const HISTORY: usize = 1200;

/// The window of the rates (frames/s, steps/s): long enough for slow frames of large fields.
const RATE_WINDOW: Duration = Duration::from_secs(3);

/// How many stepping frames the `%timeit` summary averages.
const TIMEIT_FRAMES: usize = 100;

/// One displayed frame's numbers.
#[derive(Debug, Clone, Copy)]
struct Sample {
    /// Seconds since the app started.
    t: f64,
    step: u64,
    steps: u64,
    us_per_step: Option<f64>,
    gb_s: Option<f64>,
    stats: Option<FieldStats>,
    /// Milliseconds per part, in [`FramePart::ALL`] order.
    split_ms: [f64; FramePart::ALL.len()],
}

/// The timings of the frames shown so far.
pub struct Timings {
    start: Instant,
    history: VecDeque<Sample>,
    /// Arrival times of recent frames that took steps (for frames per second).
    arrivals: VecDeque<Instant>,
}

impl Default for Timings {
    fn default() -> Self {
        Self {
            start: Instant::now(),
            history: VecDeque::with_capacity(HISTORY),
            arrivals: VecDeque::new(),
        }
    }
}

/// A `%timeit`-like summary: mean and standard deviation of microseconds per step.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct TimeitSummary {
    /// Mean microseconds per step.
    pub mean_us: f64,
    /// Standard deviation over the frames.
    pub std_us: f64,
    /// Frames averaged.
    pub frames: usize,
    /// Steps per frame, when every frame took the same number.
    pub steps_each: Option<u64>,
}

impl std::fmt::Display for TimeitSummary {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{} ± {} per step (mean ± std. dev. of {} frames",
            format_us(self.mean_us),
            format_us(self.std_us),
            self.frames
        )?;
        match self.steps_each {
            Some(steps) => write!(f, ", {steps} steps each)"),
            None => f.write_str(")"),
        }
    }
}

/// Microseconds as `%timeit` prints them: ns, µs, ms or s.
pub fn format_us(us: f64) -> String {
    if us < 1.0 {
        format!("{:.1} ns", us * 1e3)
    } else if us < 1e3 {
        format!("{us:.2} µs")
    } else if us < 1e6 {
        format!("{:.2} ms", us / 1e3)
    } else {
        format!("{:.2} s", us / 1e6)
    }
}

impl Timings {
    /// Records a frame; `upload` is the texture upload measured on the UI thread.
    pub fn record(&mut self, frame: &Frame, upload: Duration) {
        let now = Instant::now();
        if frame.steps > 0 {
            self.arrivals.push_back(now);
        }
        while self
            .arrivals
            .front()
            .is_some_and(|&at| now.duration_since(at) > RATE_WINDOW)
        {
            self.arrivals.pop_front();
        }
        let mut split_ms = [0.0; FramePart::ALL.len()];
        let mut add = |part: FramePart, time: Duration| {
            if let Some(i) = FramePart::ALL.iter().position(|&p| p == part) {
                split_ms[i] += time.as_secs_f64() * 1e3;
            }
        };
        for &(part, time) in &frame.split {
            add(part, time);
        }
        add(FramePart::TextureUpload, upload);
        let last_stats = self.history.back().and_then(|s| s.stats);
        let sample = Sample {
            t: now.duration_since(self.start).as_secs_f64(),
            step: frame.step,
            steps: frame.steps,
            us_per_step: frame.record.as_ref().map(|r| r.us_per_step),
            gb_s: frame.record.as_ref().map(|r| r.effective_gb_s),
            stats: frame.stats.or(last_stats),
            split_ms,
        };
        if self.history.len() == HISTORY {
            self.history.pop_front();
        }
        self.history.push_back(sample);
    }

    /// Frames with steps shown per second, over the last few seconds.
    pub fn frames_per_second(&self) -> f64 {
        match (self.arrivals.front(), self.arrivals.back()) {
            (Some(first), Some(last)) if self.arrivals.len() > 1 => {
                let span = last.duration_since(*first).as_secs_f64();
                if span > 0.0 {
                    (self.arrivals.len() - 1) as f64 / span
                } else {
                    0.0
                }
            }
            _ => 0.0,
        }
    }

    /// Steps per second of wall time over the last few seconds (what the eye sees).
    pub fn wall_steps_per_second(&self) -> f64 {
        let Some(last) = self.history.back() else {
            return 0.0;
        };
        let recent: Vec<&Sample> = self
            .history
            .iter()
            .filter(|s| last.t - s.t <= RATE_WINDOW.as_secs_f64())
            .collect();
        match (recent.first(), recent.len()) {
            (Some(first), n) if n > 1 && last.t > first.t => {
                let steps: u64 = recent.iter().skip(1).map(|s| s.steps).sum();
                steps as f64 / (last.t - first.t)
            }
            _ => 0.0,
        }
    }

    /// The newest frame that took steps: microseconds per step and effective GB/s.
    pub fn latest_step_timing(&self) -> Option<(f64, f64)> {
        self.history
            .iter()
            .rev()
            .find_map(|s| Some((s.us_per_step?, s.gb_s?)))
    }

    /// Mean and standard deviation of µs/step over the last frames that took steps.
    pub fn timeit(&self) -> Option<TimeitSummary> {
        let recent: Vec<&Sample> = self
            .history
            .iter()
            .rev()
            .filter(|s| s.us_per_step.is_some())
            .take(TIMEIT_FRAMES)
            .collect();
        if recent.is_empty() {
            return None;
        }
        let values: Vec<f64> = recent.iter().filter_map(|s| s.us_per_step).collect();
        let n = values.len() as f64;
        let mean = values.iter().sum::<f64>() / n;
        let variance = values.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / n;
        let steps = recent[0].steps;
        Some(TimeitSummary {
            mean_us: mean,
            std_us: variance.sqrt(),
            frames: values.len(),
            steps_each: recent.iter().all(|s| s.steps == steps).then_some(steps),
        })
    }

    /// Mean milliseconds per part over the last frames that took steps (or over all recent frames).
    pub fn mean_split(&self) -> Vec<(FramePart, f64)> {
        let recent: Vec<&Sample> = self.history.iter().rev().take(60).collect();
        if recent.is_empty() {
            return Vec::new();
        }
        FramePart::ALL
            .iter()
            .enumerate()
            .map(|(i, &part)| {
                (
                    part,
                    recent.iter().map(|s| s.split_ms[i]).sum::<f64>() / recent.len() as f64,
                )
            })
            .filter(|&(_, ms)| ms > 0.0)
            .collect()
    }

    /// Forgets everything (a new field, a new backend).
    pub fn clear(&mut self) {
        self.history.clear();
        self.arrivals.clear();
    }

    /// The time-series plots: speed, per-frame split, total heat, minimum and maximum.
    pub fn plots_ui(&self, ui: &mut egui::Ui) {
        let height = (ui.available_height() - 4.0).max(80.0);
        let series = |f: &dyn Fn(&Sample) -> Option<f64>| -> Vec<[f64; 2]> {
            self.history
                .iter()
                .filter_map(|s| f(s).map(|y| [s.t, y]))
                .collect()
        };
        let by_step = |f: &dyn Fn(&FieldStats) -> f64| -> Vec<[f64; 2]> {
            self.history
                .iter()
                .filter_map(|s| s.stats.map(|stats| [s.step as f64, f(&stats)]))
                .collect()
        };
        ui.columns(4, |columns| {
            columns[0].label("µs per step over time (s)");
            Plot::new("speed_plot")
                .height(height - 20.0)
                .y_axis_min_width(44.0)
                .legend(Legend::default())
                .show(&mut columns[0], |plot| {
                    plot.line(Line::new(
                        "µs/step",
                        PlotPoints::from(series(&|s| s.us_per_step)),
                    ));
                });
            columns[1].label("per-frame split (ms) over time (s)");
            // No legend: the coloured split line above the plots names each colour.
            Plot::new("split_plot")
                .height(height - 20.0)
                .y_axis_min_width(44.0)
                .show(&mut columns[1], |plot| {
                    for (i, part) in FramePart::ALL.iter().enumerate() {
                        let points = series(&|s| Some(s.split_ms[i]));
                        if points.iter().any(|p| p[1] > 0.0) {
                            plot.line(
                                Line::new(part.to_string(), PlotPoints::from(points))
                                    .color(part_color(*part)),
                            );
                        }
                    }
                });
            columns[2].label("total heat over steps");
            Plot::new("heat_plot")
                .height(height - 20.0)
                .y_axis_min_width(44.0)
                .legend(Legend::default())
                .show(&mut columns[2], |plot| {
                    plot.line(Line::new(
                        "total heat",
                        PlotPoints::from(by_step(&|s| s.total)),
                    ));
                });
            columns[3].label("min and max over steps");
            Plot::new("minmax_plot")
                .height(height - 20.0)
                .y_axis_min_width(44.0)
                .legend(Legend::default())
                .show(&mut columns[3], |plot| {
                    plot.line(Line::new(
                        "max",
                        PlotPoints::from(by_step(&|s| f64::from(s.max))),
                    ));
                    plot.line(Line::new(
                        "min",
                        PlotPoints::from(by_step(&|s| f64::from(s.min))),
                    ));
                });
        });
    }
}

/// The colour of a frame part in the split plot and its caption.
pub fn part_color(part: FramePart) -> egui::Color32 {
    match part {
        FramePart::Stepping => egui::Color32::from_rgb(230, 85, 70),
        FramePart::Laplacian => egui::Color32::from_rgb(90, 160, 240),
        FramePart::Colormap => egui::Color32::from_rgb(170, 210, 80),
        FramePart::Download => egui::Color32::from_rgb(200, 120, 230),
        FramePart::DevicePreview => egui::Color32::from_rgb(240, 170, 60),
        FramePart::Statistics => egui::Color32::from_rgb(80, 200, 190),
        FramePart::Recording => egui::Color32::from_rgb(160, 160, 160),
        FramePart::TextureUpload => egui::Color32::from_rgb(230, 200, 120),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn timeit_formats_like_ipython() {
        let summary = TimeitSummary {
            mean_us: 12.345,
            std_us: 0.5,
            frames: 7,
            steps_each: Some(100),
        };
        assert_eq!(
            summary.to_string(),
            "12.35 µs ± 500.0 ns per step (mean ± std. dev. of 7 frames, 100 steps each)"
        );
        assert_eq!(format_us(2500.0), "2.50 ms");
    }
}
