//! What a validation case found: its error at each resolution, the observed order of
//! convergence, and its checks against stated tolerances.

use std::fmt::Write as _;

use serde::Serialize;

/// The error of one case on one grid.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Resolution {
    /// Cells across the direction the case resolves (the one that doubles).
    pub across: usize,
    /// Rows × columns.
    pub rows: usize,
    /// Columns.
    pub cols: usize,
    /// Steps taken.
    pub steps: u64,
    /// The time step, s.
    pub dt_s: f64,
    /// The error against the exact answer (see the case's `error_measure`).
    pub error: f64,
    /// The observed order of convergence from the previous (coarser) resolution.
    pub order: Option<f64>,
    /// For a steady case the scheme solves exactly: the same error after a window of steps
    /// started from the exact answer (rounded to `f32`) instead of a cold plate.
    pub error_from_exact: Option<f64>,
}

/// Which way a check's value must lie from its limit.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Bound {
    /// The value must be at most the limit.
    AtMost,
    /// The value must be at least the limit.
    AtLeast,
}

/// One pass/fail check of a case.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Check {
    /// What is checked, for people.
    pub what: String,
    /// The measured value.
    pub value: f64,
    /// The bound it must meet.
    pub bound: Bound,
    /// The limit.
    pub limit: f64,
}

impl Check {
    /// A value that must be at most `limit`.
    pub fn at_most(what: impl Into<String>, value: f64, limit: f64) -> Self {
        Self {
            what: what.into(),
            value,
            bound: Bound::AtMost,
            limit,
        }
    }

    /// A value that must be at least `limit`.
    pub fn at_least(what: impl Into<String>, value: f64, limit: f64) -> Self {
        Self {
            what: what.into(),
            value,
            bound: Bound::AtLeast,
            limit,
        }
    }

    /// Whether the value meets the bound (a NaN never does).
    pub fn passed(&self) -> bool {
        match self.bound {
            Bound::AtMost => self.value <= self.limit,
            Bound::AtLeast => self.value >= self.limit,
        }
    }
}

/// The order of convergence a case expects.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Expected {
    /// The scheme reproduces the answer exactly: the error is round-off at any resolution.
    Exact,
    /// Errors fall as `dx^order` (the time step follows `dx²`).
    Order(f64),
}

/// The larger of two errors, NaN if either is (`f64::max` would drop a NaN and pass).
pub(super) fn worse(a: f64, b: f64) -> f64 {
    if a.is_nan() || b.is_nan() {
        f64::NAN
    } else {
        a.max(b)
    }
}

/// `f32`'s unit round-off, 2⁻²⁴.
pub const F32_ROUND_OFF: f64 = 5.960_464_477_539_063e-8;

/// How far below the expected order the observed one may fall.
pub const ORDER_SLACK: f64 = 0.3;

/// One validation case's outcome.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CaseReport {
    /// Short name (`linear`, `composite`, ...).
    pub name: &'static str,
    /// What the case is.
    pub title: &'static str,
    /// How the error is measured.
    pub error_measure: &'static str,
    /// The expected order.
    pub expected: Expected,
    /// The error at each resolution, coarsest first.
    pub resolutions: Vec<Resolution>,
    /// The pass/fail checks.
    pub checks: Vec<Check>,
}

impl CaseReport {
    /// A case with its resolutions; the observed orders are filled in from the errors (each
    /// resolution has twice the cells across of the one before).
    pub fn new(
        name: &'static str,
        title: &'static str,
        error_measure: &'static str,
        expected: Expected,
        mut resolutions: Vec<Resolution>,
    ) -> Self {
        for at in 1..resolutions.len() {
            let refinement = resolutions[at].across as f64 / resolutions[at - 1].across as f64;
            resolutions[at].order =
                observed_order(resolutions[at - 1].error, resolutions[at].error, refinement);
        }
        Self {
            name,
            title,
            error_measure,
            expected,
            resolutions,
            checks: Vec::new(),
        }
    }

    /// Adds the checks of the error itself: every resolution's error at most `tolerance` for an
    /// exact case; for a converging one, the finest error at most `tolerance` and the finest
    /// pair's observed order at least the expected one less [`ORDER_SLACK`].
    pub fn check_errors(&mut self, tolerance: f64) {
        let largest = self.resolutions.iter().map(|r| r.error).fold(0.0, worse);
        match self.expected {
            Expected::Exact => self.checks.push(Check::at_most(
                "largest error at any resolution",
                largest,
                tolerance,
            )),
            Expected::Order(order) => {
                let finest = self.resolutions.last();
                self.checks.push(Check::at_most(
                    "error at the finest resolution",
                    finest.map_or(f64::NAN, |r| r.error),
                    tolerance,
                ));
                self.checks.push(Check::at_least(
                    "observed order, finest pair",
                    finest.and_then(|r| r.order).unwrap_or(f64::NAN),
                    order - ORDER_SLACK,
                ));
            }
        }
    }

    /// Adds the check of a steady case the scheme solves exactly, started cold: iterating in
    /// `f32` stalls where every cell's update rounds away (below half a unit in the last place
    /// of its value), short of the steady state by about `2⁻²⁴ N²` of the temperature scale for
    /// `N` cells across (the slowest mode's decay time grows as `N²`). The check is each
    /// resolution's error in those units, at most `factor`.
    pub fn check_stall(&mut self, factor: f64) {
        let value = self
            .resolutions
            .iter()
            .map(|r| r.error / (F32_ROUND_OFF * (r.across as f64).powi(2)))
            .fold(0.0, worse);
        self.checks.push(Check::at_most(
            "largest error started cold, in units of 2⁻²⁴ N² (the f32 stall)",
            value,
            factor,
        ));
    }

    /// Adds the check that started from the exact answer, every resolution stays within
    /// `tolerance` of it: the exact answer is the scheme's steady state, to round-off.
    pub fn check_from_exact(&mut self, tolerance: f64) {
        let value = self
            .resolutions
            .iter()
            .map(|r| r.error_from_exact.unwrap_or(f64::NAN))
            .fold(0.0, worse);
        self.checks.push(Check::at_most(
            "largest error started from the exact answer",
            value,
            tolerance,
        ));
    }

    /// Whether every check passed (and there was one).
    pub fn passed(&self) -> bool {
        !self.checks.is_empty() && self.checks.iter().all(Check::passed)
    }

    /// The case as text: a table of resolutions, then the checks.
    pub fn text(&self) -> String {
        let mut text = String::new();
        let expected = match self.expected {
            Expected::Exact => "exact to round-off".to_string(),
            Expected::Order(order) => format!("order {order}"),
        };
        let verdict = if self.passed() { "pass" } else { "FAIL" };
        let _ = writeln!(text, "{} [{verdict}]: {}", self.name, self.title);
        let _ = writeln!(
            text,
            "  error: {}; expected: {expected}",
            self.error_measure
        );
        let _ = writeln!(
            text,
            "  {:>9} {:>8} {:>11} {:>11} {:>6} {:>11}",
            "cells", "steps", "dt (s)", "error", "order", "from exact"
        );
        for r in &self.resolutions {
            let order = match (self.expected, r.order) {
                (Expected::Order(_), Some(order)) => format!("{order:.2}"),
                _ => "-".to_string(),
            };
            let from_exact = r
                .error_from_exact
                .map_or("-".to_string(), |e| format!("{e:.3e}"));
            let _ = writeln!(
                text,
                "  {:>9} {:>8} {:>11.4e} {:>11.3e} {:>6} {:>11}",
                format!("{}x{}", r.rows, r.cols),
                r.steps,
                r.dt_s,
                r.error,
                order,
                from_exact
            );
        }
        for check in &self.checks {
            let relation = match check.bound {
                Bound::AtMost => "<=",
                Bound::AtLeast => ">=",
            };
            let mark = if check.passed() { "ok" } else { "FAILED" };
            let _ = writeln!(
                text,
                "  {mark}: {} {:.3e} {relation} {:.3e}",
                check.what, check.value, check.limit
            );
        }
        text
    }
}

/// Every case's outcome on one backend.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PhysicsReport {
    /// The backend (`cpu` or `cuda`).
    pub backend: String,
    /// Its device.
    pub device: String,
    /// The cases, in the order run.
    pub cases: Vec<CaseReport>,
    /// Wall time of the whole run, s.
    pub elapsed_s: f64,
}

impl PhysicsReport {
    /// Whether every case passed.
    pub fn passed(&self) -> bool {
        !self.cases.is_empty() && self.cases.iter().all(CaseReport::passed)
    }

    /// The names of the cases that failed.
    pub fn failed(&self) -> Vec<&'static str> {
        self.cases
            .iter()
            .filter(|c| !c.passed())
            .map(|c| c.name)
            .collect()
    }

    /// The whole report as text.
    pub fn text(&self) -> String {
        let mut text = format!(
            "Physics validation on {} ({}): errors against exact answers; order = log2 of the \
             error ratio when the cells across double\n\n",
            self.backend, self.device
        );
        for case in &self.cases {
            text.push_str(&case.text());
            text.push('\n');
        }
        let passed = self.cases.iter().filter(|c| c.passed()).count();
        let _ = writeln!(
            text,
            "{passed} of {} cases passed in {:.1} s",
            self.cases.len(),
            self.elapsed_s
        );
        text
    }
}

/// The observed order of convergence between two errors, the second on a grid `refinement`
/// times finer: `log(coarse/fine) / log(refinement)`. `None` where either error is 0.
pub fn observed_order(coarse: f64, fine: f64, refinement: f64) -> Option<f64> {
    (coarse > 0.0 && fine > 0.0).then(|| (coarse / fine).ln() / refinement.ln())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn resolution(across: usize, error: f64) -> Resolution {
        Resolution {
            across,
            rows: across,
            cols: across,
            steps: 1,
            dt_s: 1.0,
            error,
            order: None,
            error_from_exact: None,
        }
    }

    #[test]
    fn orders_come_from_error_ratios_and_gate_the_verdict() {
        let resolutions = vec![
            resolution(8, 1.6e-2),
            resolution(16, 4e-3),
            resolution(32, 1e-3),
        ];
        let mut case = CaseReport::new("t", "t", "t", Expected::Order(2.0), resolutions);
        assert!((case.resolutions[2].order.unwrap() - 2.0).abs() < 1e-12);
        case.check_errors(2e-3);
        assert!(case.passed(), "{}", case.text());
        let slow = vec![
            resolution(8, 4e-3),
            resolution(16, 2e-3),
            resolution(32, 1e-3),
        ];
        let mut case = CaseReport::new("t", "t", "t", Expected::Order(2.0), slow);
        case.check_errors(2e-3);
        assert!(!case.passed());
        assert!(case.text().contains("FAILED: observed order"));
    }

    #[test]
    fn a_nan_error_fails_and_no_checks_is_no_pass() {
        let case = CaseReport::new(
            "t",
            "t",
            "t",
            Expected::Exact,
            vec![resolution(8, f64::NAN)],
        );
        assert!(!case.passed());
        let mut case = case;
        case.check_errors(1.0);
        assert!(!case.passed());
    }

    #[test]
    fn order_of_halving_errors() {
        assert_eq!(observed_order(4.0, 1.0, 2.0), Some(2.0));
        assert_eq!(observed_order(0.0, 1.0, 2.0), None);
    }
}
