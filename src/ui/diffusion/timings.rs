//! Live timings: per-step speed, frame rate, the per-frame split, the `%timeit`-style summary,
//! and the statistics of the field over time. What they look like is `timings_panel`.

use std::collections::VecDeque;
use std::time::{Duration, Instant};

use eframe::egui;

use heatlab_engine::measure::{format_seconds, MeanStd};
use heatlab_engine::sim::FieldStats;

use heatlab_engine::session::diffusion::{Frame, FramePart};

/// How many frames the plots and averages keep.
const HISTORY: usize = 1200;

/// The window of the rates (frames/s, steps/s): long enough for slow frames of large fields.
const RATE_WINDOW: Duration = Duration::from_secs(3);

/// How many stepping frames the `%timeit` summary averages.
const TIMEIT_FRAMES: usize = 100;

/// One displayed frame's numbers.
#[derive(Debug, Clone, Copy)]
pub struct Sample {
    /// Seconds since the app started.
    pub t: f64,
    /// Steps since the initial field.
    pub step: u64,
    /// Steps taken for this frame.
    pub steps: u64,
    /// Microseconds per step of this frame's steps.
    pub us_per_step: Option<f64>,
    /// Effective bandwidth of this frame's steps.
    pub gb_s: Option<f64>,
    /// The latest statistics of the field.
    pub stats: Option<FieldStats>,
    /// Milliseconds per part, in [`FramePart::ALL`] order.
    pub split_ms: [f64; FramePart::ALL.len()],
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
            format_seconds(self.mean_us * 1e-6),
            format_seconds(self.std_us * 1e-6),
            self.frames
        )?;
        match self.steps_each {
            Some(steps) => write!(f, ", {steps} steps each)"),
            None => f.write_str(")"),
        }
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

    /// Adds `time` spent on `part` on the UI thread (the overlays of a frame, drawn after it
    /// was recorded) to the newest frame.
    pub fn add_to_latest(&mut self, part: FramePart, time: Duration) {
        let index = FramePart::ALL.iter().position(|&p| p == part);
        if let (Some(sample), Some(i)) = (self.history.back_mut(), index) {
            sample.split_ms[i] += time.as_secs_f64() * 1e3;
        }
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
        let stats = MeanStd::of(&values);
        let steps = recent[0].steps;
        Some(TimeitSummary {
            mean_us: stats.mean,
            std_us: stats.std,
            frames: stats.runs,
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

    /// The recent samples, oldest first (for the plots).
    pub(super) fn history(&self) -> impl Iterator<Item = &Sample> {
        self.history.iter()
    }
}

/// The colour of a frame part in the split plot and its caption.
pub fn part_color(part: FramePart) -> egui::Color32 {
    match part {
        FramePart::Stepping => egui::Color32::from_rgb(230, 85, 70),
        FramePart::Laplacian => egui::Color32::from_rgb(90, 160, 240),
        FramePart::Reduce => egui::Color32::from_rgb(200, 120, 230),
        FramePart::DevicePreview => egui::Color32::from_rgb(240, 170, 60),
        FramePart::Colour => egui::Color32::from_rgb(170, 210, 80),
        FramePart::Statistics => egui::Color32::from_rgb(80, 200, 190),
        FramePart::Recording => egui::Color32::from_rgb(160, 160, 160),
        FramePart::Sampling => egui::Color32::from_rgb(250, 120, 170),
        FramePart::TextureUpload => egui::Color32::from_rgb(230, 200, 120),
        FramePart::Overlays => egui::Color32::from_rgb(120, 120, 250),
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
            "12.345 µs ± 500.0 ns per step (mean ± std. dev. of 7 frames, 100 steps each)"
        );
        assert_eq!(format_seconds(2500.0e-6), "2.500 ms");
    }
}
