//! The `[[thermostat]]` section of a scenario: a heater part switched by a probe's temperature.
//!
//! ```toml
//! [[thermostat]]
//! heater = "element"          # a part with a [parts.heater], by its name
//! probe = [40, 25]            # row, column; or probe_position = [x, y] in m from the top-left
//! setpoint = "60 C"
//! deadband = 2.0              # K: on below 59 °C, off above 61 °C
//! every_steps = 10            # or every_seconds = 0.5 (rounded to whole steps, at least 1)
//! ```

use serde::{Deserialize, Serialize};

use super::build::{temperature, Errors};
use super::file::TemperatureText;
use crate::problem::material::normalise;
use crate::problem::{HeatProblem, StepTables, Thermostat, MAX_STEPS};

/// One `[[thermostat]]` as written.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ThermostatSection {
    /// The name of the part whose heater it switches.
    pub heater: String,
    /// The probe's cell: row, column.
    pub probe: Option<[usize; 2]>,
    /// The probe's position, m from the top-left corner: x (right), y (down).
    pub probe_position: Option<[f64; 2]>,
    /// The temperature it holds.
    pub setpoint: TemperatureText,
    /// The band around the setpoint in which it keeps its state, K.
    #[serde(default)]
    pub deadband: f64,
    /// Steps between two decisions.
    pub every_steps: Option<u64>,
    /// Seconds between two decisions (rounded to whole steps of the problem's time step).
    pub every_seconds: Option<f64>,
}

/// The thermostats of `sections` for `problem` stepped with `tables`, each checked; errors are
/// noted in `errors`.
pub fn build(
    sections: &[ThermostatSection],
    problem: &HeatProblem,
    tables: &StepTables,
    errors: &mut Errors,
) -> Vec<Thermostat> {
    sections
        .iter()
        .enumerate()
        .filter_map(|(at, section)| {
            let what = format!("thermostat {} (heater \"{}\")", at + 1, section.heater);
            let thermostat = one(section, problem, tables, &what, errors)?;
            let check = thermostat.check(
                problem.size.rows,
                problem.size.cols,
                problem.kinds.len(),
                |k| problem.kinds[k].heater.is_some(),
            );
            errors
                .take(check.map_err(|e| crate::HeatlabError::InvalidInput(format!("{what}: {e}"))))
                .map(|()| thermostat)
        })
        .collect()
}

fn one(
    section: &ThermostatSection,
    problem: &HeatProblem,
    tables: &StepTables,
    what: &str,
    errors: &mut Errors,
) -> Option<Thermostat> {
    let heater = problem
        .kinds
        .iter()
        .position(|k| k.heater.is_some() && normalise(&k.name) == normalise(&section.heater));
    let Some(heater) = heater else {
        errors.push(format!(
            "{what}: there is no part of that name with a heater"
        ));
        return None;
    };
    let probe = probe(section, problem, what, errors);
    let setpoint = temperature(&section.setpoint, &format!("{what}: setpoint"), errors);
    let every_steps = match (section.every_steps, section.every_seconds) {
        (Some(steps), None) => Some(steps),
        (None, Some(seconds)) if seconds.is_finite() && seconds > 0.0 => {
            let steps = (seconds / tables.dt).round();
            if steps > MAX_STEPS as f64 {
                errors.push(format!(
                    "{what}: every_seconds = {seconds:e} is {steps:e} steps of {:e} s, more \
                     than the {MAX_STEPS} (2^53) a run can count, so it would never decide: \
                     give a shorter interval",
                    tables.dt
                ));
                return None;
            }
            Some((steps as u64).max(1))
        }
        (None, Some(seconds)) => {
            errors.push(format!(
                "{what}: every_seconds must be a positive number of seconds, got {seconds}"
            ));
            None
        }
        _ => {
            errors.push(format!(
                "{what}: give how often it decides, every_steps or every_seconds (one of them)"
            ));
            None
        }
    };
    // One that first decides after more steps than a run can count never decides.
    let every_steps = every_steps.and_then(|steps| {
        if steps <= MAX_STEPS {
            return Some(steps);
        }
        errors.push(format!(
            "{what}: it decides every {steps} steps, more than the {MAX_STEPS} (2^53) a run \
             can count, so it would never decide: give a shorter interval"
        ));
        None
    });
    Some(Thermostat {
        heater_kind: heater as u8,
        probe: probe?,
        setpoint: setpoint?,
        deadband: section.deadband,
        every_steps: every_steps?,
    })
}

/// The probe's cell from `probe` (row, column) or `probe_position` (x, y in m).
fn probe(
    section: &ThermostatSection,
    problem: &HeatProblem,
    what: &str,
    errors: &mut Errors,
) -> Option<(usize, usize)> {
    match (section.probe, section.probe_position) {
        (Some([row, col]), None) => Some((row, col)),
        (None, Some([x, y])) => {
            let dx = problem.spacing;
            let (width, height) = (problem.size.cols as f64 * dx, problem.size.rows as f64 * dx);
            if !(x >= 0.0 && x < width && y >= 0.0 && y < height) {
                errors.push(format!(
                    "{what}: the probe at x = {x} m, y = {y} m lies outside the {width:.4} m x \
                     {height:.4} m grid"
                ));
                return None;
            }
            Some(((y / dx) as usize, (x / dx) as usize))
        }
        _ => {
            errors.push(format!(
                "{what}: place its probe with probe = [row, column] or probe_position = [x, y] \
                 (one of them)"
            ));
            None
        }
    }
}
