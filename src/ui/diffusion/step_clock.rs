//! Steps as simulated time: the probes, the heat flow through a line and the thermostats'
//! switches are kept by step (what the frames carry), and plotted against simulated seconds
//! while a heat problem runs. Each frame gives a (step, seconds) mark; a mark on the line of
//! the two before it (the same time step) replaces the last, so only the marks where the time
//! step changed are kept, and a step between marks is placed exactly on its segment.

use std::collections::VecDeque;

/// Marks kept at most (a time step changed this often in one run).
const MARKS: usize = 10_000;

/// The simulated time of each step seen, as few marks as describe it.
#[derive(Debug, Clone, Default)]
pub struct StepClock {
    marks: VecDeque<(u64, f64)>,
}

impl StepClock {
    /// A frame at `step`, `seconds` simulated (`None`: the tutorial's plate, which has no
    /// physical time: the clock empties). Steps going back (a reset, a new field) start over.
    pub fn record(&mut self, step: u64, seconds: Option<f64>) {
        let Some(seconds) = seconds.filter(|s| s.is_finite()) else {
            self.marks.clear();
            return;
        };
        match self.marks.back() {
            Some(&(last, _)) if step < last => self.marks.clear(),
            Some(&(last, _)) if step == last => {
                self.marks.pop_back();
            }
            _ => {}
        }
        let n = self.marks.len();
        if n >= 2 {
            let (s0, t0) = self.marks[n - 2];
            let (s1, t1) = self.marks[n - 1];
            let before = (t1 - t0) / (s1 - s0) as f64;
            let after = (seconds - t1) / (step - s1) as f64;
            if (before - after).abs() <= 1e-9 * before.abs().max(after.abs()) {
                self.marks.pop_back();
            }
        }
        if self.marks.len() == MARKS {
            self.marks.pop_front();
        }
        self.marks.push_back((step, seconds));
    }

    /// Whether steps have a simulated time (a heat problem runs).
    pub fn is_physical(&self) -> bool {
        !self.marks.is_empty()
    }

    /// The simulated time of `step`: on its segment between marks, or along the nearest
    /// segment beyond them; `None` without marks.
    pub fn seconds(&self, step: u64) -> Option<f64> {
        let n = self.marks.len();
        let first = *self.marks.front()?;
        if n == 1 {
            return (step == first.0).then_some(first.1);
        }
        let i = self
            .marks
            .partition_point(|&(s, _)| s <= step)
            .clamp(1, n - 1);
        let ((s0, t0), (s1, t1)) = (self.marks[i - 1], self.marks[i]);
        let rate = (t1 - t0) / (s1 - s0) as f64;
        Some(t0 + rate * (step as f64 - s0 as f64))
    }

    /// Where `step` goes on a plot's x axis: its simulated seconds, or the step itself on the
    /// plate (or before the clock can say).
    pub fn x(&self, step: u64) -> f64 {
        self.seconds(step).unwrap_or(step as f64)
    }

    /// The x axis's label.
    pub fn axis_label(&self) -> &'static str {
        if self.is_physical() {
            "simulated time (s)"
        } else {
            "step"
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn steps_map_to_time_through_the_marks_where_the_step_changed() {
        let mut clock = StepClock::default();
        assert_eq!(clock.seconds(5), None);
        assert_eq!(clock.axis_label(), "step");
        for step in (0..=100).step_by(10) {
            clock.record(step, Some(step as f64 * 0.5));
        }
        // The time step halves at step 100.
        for step in (110..=200).step_by(10) {
            clock.record(step, Some(50.0 + (step - 100) as f64 * 0.25));
        }
        assert_eq!(clock.marks.len(), 3, "{:?}", clock.marks);
        assert_eq!(clock.seconds(37), Some(18.5));
        assert_eq!(clock.seconds(150), Some(62.5));
        assert_eq!(clock.seconds(220), Some(80.0), "beyond: the last segment");
        assert_eq!(clock.x(150), 62.5);
        assert_eq!(clock.axis_label(), "simulated time (s)");
        clock.record(20, Some(10.0));
        assert_eq!(clock.marks.len(), 1, "a reset starts over");
        clock.record(30, None);
        assert!(!clock.is_physical());
        assert_eq!(clock.x(30), 30.0);
    }
}
