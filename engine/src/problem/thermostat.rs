//! A thermostat switches a heater by the temperature at a probe cell, with a setpoint and a
//! deadband. It decides only every `every_steps` steps, from the field at that step, so that a
//! run is reproducible and the CPU reference (which decides at the same steps from the same
//! bit-identical field) agrees with every backend.

use serde::{Deserialize, Serialize};

use crate::error::{HeatlabError, Result};

/// A heater switched by a probe's temperature.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Thermostat {
    /// The index of the kind whose heater it switches.
    pub heater_kind: u8,
    /// The cell it reads (row, column).
    pub probe: (usize, usize),
    /// The temperature it holds, °C.
    pub setpoint: f64,
    /// The width of the band around the setpoint in which it keeps its state, K: it switches
    /// the heater on below `setpoint - deadband / 2` and off above `setpoint + deadband / 2`.
    pub deadband: f64,
    /// Steps between two decisions (at least 1).
    pub every_steps: u64,
}

impl Thermostat {
    /// Whether the heater should be on after reading `temperature`, given whether it is on now.
    pub fn decide(&self, temperature: f32, on: bool) -> bool {
        let t = f64::from(temperature);
        if t < self.setpoint - self.deadband / 2.0 {
            true
        } else if t > self.setpoint + self.deadband / 2.0 {
            false
        } else {
            on
        }
    }

    /// Checks the thermostat against a problem of `rows` x `cols` cells and `kinds` kinds,
    /// where `has_heater(kind)` says whether a kind has a heater.
    pub fn check(
        &self,
        rows: usize,
        cols: usize,
        kinds: usize,
        has_heater: impl Fn(usize) -> bool,
    ) -> Result<()> {
        let kind = usize::from(self.heater_kind);
        if kind >= kinds || !has_heater(kind) {
            return Err(HeatlabError::InvalidInput(format!(
                "a thermostat switches kind {kind}, which is not a heater"
            )));
        }
        if self.probe.0 >= rows || self.probe.1 >= cols {
            return Err(HeatlabError::InvalidInput(format!(
                "a thermostat's probe at row {}, column {} lies outside the {rows}x{cols} grid",
                self.probe.0, self.probe.1
            )));
        }
        if !(self.setpoint.is_finite() && self.deadband.is_finite() && self.deadband >= 0.0) {
            return Err(HeatlabError::InvalidInput(format!(
                "a thermostat needs a finite setpoint and a deadband of 0 K or more, got {} °C \
                 and {} K",
                self.setpoint, self.deadband
            )));
        }
        if self.every_steps == 0 {
            return Err(HeatlabError::InvalidInput(
                "a thermostat decides every 1 or more steps, not every 0".into(),
            ));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn thermostat() -> Thermostat {
        Thermostat {
            heater_kind: 1,
            probe: (2, 3),
            setpoint: 50.0,
            deadband: 2.0,
            every_steps: 10,
        }
    }

    #[test]
    fn decides_with_hysteresis() {
        let t = thermostat();
        assert!(t.decide(48.9, false));
        assert!(!t.decide(51.1, true));
        assert!(t.decide(50.0, true));
        assert!(!t.decide(50.0, false));
    }

    #[test]
    fn check_refuses_a_probe_outside_and_a_kind_without_heater() {
        let t = thermostat();
        assert!(t.check(10, 10, 2, |k| k == 1).is_ok());
        assert!(t.check(2, 10, 2, |k| k == 1).is_err());
        assert!(t.check(10, 10, 2, |_| false).is_err());
        let never = Thermostat {
            every_steps: 0,
            ..thermostat()
        };
        assert!(never.check(10, 10, 2, |k| k == 1).is_err());
    }
}
