//! Watching a run come to its steady state: the largest |dT/dt| over the field, from two copies
//! of the field taken some simulated time apart (a few times a second of wall time), and a stop
//! when it falls under a tolerance.
//!
//! The rate is the largest change of any cell between the two copies over the simulated time
//! between them: an average over that interval, so one step's round-off does not decide it.
//! Explicit float32 steps near the steady state stall (the changes fall under a unit in the last
//! place), and the rate then reads 0 K/s.

use crate::grid::Grid;

/// The largest |a − b| over the cells (`NaN` when a cell is not finite in either).
pub fn largest_change(a: &Grid, b: &Grid) -> f64 {
    let mut largest = 0.0f64;
    for (&x, &y) in a.as_slice().iter().zip(b.as_slice()) {
        let change = (f64::from(x) - f64::from(y)).abs();
        if change.is_nan() {
            return f64::NAN;
        }
        largest = largest.max(change);
    }
    largest
}

/// The rate of change between copies of the field, and whether the run should stop at its
/// steady state.
#[derive(Debug, Clone)]
pub struct SteadyWatch {
    /// Stop once the largest |dT/dt| is under this, K/s.
    tolerance: f64,
    /// The last copy and its simulated time, s.
    last: Option<(f64, Grid)>,
    /// The latest rate, K/s.
    rate: Option<f64>,
    /// Whether falling under the tolerance stops the run (once: after a stop, the run goes on
    /// when Play is pressed again, until the rate rises above the tolerance or time goes back).
    armed: bool,
}

/// What one look at the field found.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum SteadyLook {
    /// No simulated time passed since the last copy (the first one, or paused): no rate yet.
    NoRate,
    /// The largest |dT/dt| since the last copy, K/s, above the tolerance (or the stop spent).
    Changing(f64),
    /// The rate fell under the tolerance: stop here.
    Steady(f64),
}

impl SteadyWatch {
    /// A watch that stops under `tolerance` K/s.
    pub fn new(tolerance: f64) -> Self {
        Self {
            tolerance,
            last: None,
            rate: None,
            armed: true,
        }
    }

    /// The tolerance, K/s.
    pub fn tolerance(&self) -> f64 {
        self.tolerance
    }

    /// The latest rate, K/s.
    pub fn rate(&self) -> Option<f64> {
        self.rate
    }

    /// Whether a look at `seconds` can say something: simulated time moved since the last copy
    /// (a paused run is not copied again).
    pub fn wants(&self, seconds: f64) -> bool {
        self.last.as_ref().is_none_or(|(at, _)| *at != seconds)
    }

    /// Takes the field at `seconds` of simulated time. Time going back (a reset, a new problem)
    /// starts over and arms the stop again.
    pub fn look(&mut self, seconds: f64, field: Grid) -> SteadyLook {
        let previous = match self.last.take() {
            Some((at, _)) if seconds < at => {
                self.rate = None;
                self.armed = true;
                None
            }
            other => other,
        };
        let look = match previous {
            Some((at, ref old)) if seconds > at && old.size() == field.size() => {
                let rate = largest_change(old, &field) / (seconds - at);
                self.rate = Some(rate);
                if rate < self.tolerance && self.armed {
                    self.armed = false;
                    SteadyLook::Steady(rate)
                } else {
                    if rate >= self.tolerance {
                        self.armed = true;
                    }
                    SteadyLook::Changing(rate)
                }
            }
            Some((at, old)) if seconds == at => {
                // Paused: keep the older copy, so that the next rate spans real time.
                self.last = Some((at, old));
                return SteadyLook::NoRate;
            }
            _ => SteadyLook::NoRate,
        };
        self.last = Some((seconds, field));
        look
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::grid::GridSize;

    fn grid(values: &[f32]) -> Grid {
        Grid::from_vec(GridSize::new(1, values.len()).unwrap(), values.to_vec()).unwrap()
    }

    #[test]
    fn the_rate_is_the_largest_change_over_the_time_between_and_stops_once() {
        let mut watch = SteadyWatch::new(0.5);
        assert_eq!(watch.look(0.0, grid(&[1.0, 2.0, 3.0])), SteadyLook::NoRate);
        assert_eq!(
            watch.look(2.0, grid(&[1.0, 6.0, 2.0])),
            SteadyLook::Changing(2.0),
            "4 K in 2 s"
        );
        assert_eq!(watch.look(2.0, grid(&[9.0, 9.0, 9.0])), SteadyLook::NoRate);
        assert_eq!(
            watch.look(4.0, grid(&[1.5, 6.0, 2.0])),
            SteadyLook::Steady(0.25),
            "paused frames kept the older copy"
        );
        assert_eq!(
            watch.look(6.0, grid(&[1.5, 6.0, 2.5])),
            SteadyLook::Changing(0.25),
            "a stop happens once"
        );
        assert_eq!(
            watch.look(7.0, grid(&[1.5, 8.0, 2.5])),
            SteadyLook::Changing(2.0)
        );
        assert_eq!(
            watch.look(9.0, grid(&[1.5, 8.0, 2.5])),
            SteadyLook::Steady(0.0),
            "armed again once it changed faster"
        );
        assert_eq!(watch.look(1.0, grid(&[1.0, 1.0, 1.0])), SteadyLook::NoRate);
        assert_eq!(watch.rate(), None, "time went back");
        assert_eq!(
            watch.look(2.0, grid(&[1.0, 1.0, 1.0])),
            SteadyLook::Steady(0.0)
        );
    }

    #[test]
    fn a_non_finite_field_is_no_steady_state() {
        let mut watch = SteadyWatch::new(1.0);
        watch.look(0.0, grid(&[1.0, 2.0]));
        let SteadyLook::Changing(rate) = watch.look(1.0, grid(&[1.0, f32::NAN])) else {
            panic!("a NaN is not steady");
        };
        assert!(rate.is_nan());
    }
}
