//! Stepping a heat problem with thermostats: advances are split at the thermostats' decision
//! steps (every multiple of a thermostat's `every_steps`, counted from the initial field), and
//! at each one the probe cells are read from the backend (only those cells cross to the host)
//! and the heaters switched before the next step. The decisions thus depend only on the field at
//! those steps: however the steps are cut into frames or chunks, on the CPU or on CUDA (which
//! step bit for bit alike), a run switches at the same steps. The live check replays each
//! switch as the tables in effect from its step ([`super::problem::ProblemEdit`]).

use std::time::Duration;

use serde::{Deserialize, Serialize};

use super::Simulation;
use crate::error::Result;
use crate::measure::TimingRecord;

/// A heater switched by a thermostat.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct HeaterSwitch {
    /// The step the decision read the field at; the heater is in its new state from the step
    /// after it on.
    pub step: u64,
    /// The kind whose heater switched.
    pub kind: u8,
    /// Whether it is on now.
    pub on: bool,
    /// The probe's temperature that decided, °C.
    pub temperature: f32,
}

/// Switches kept until taken (the oldest are dropped beyond this: a caller that never takes
/// them keeps memory bounded).
pub const SWITCHES_KEPT: usize = 4096;

impl Simulation {
    /// Whether the problem stepped has thermostats.
    pub(super) fn has_thermostats(&self) -> bool {
        self.problem
            .as_ref()
            .is_some_and(|a| !a.problem.thermostats.is_empty())
    }

    /// Takes the heater switches made since the last call, oldest first.
    pub fn take_switches(&mut self) -> Vec<HeaterSwitch> {
        self.problem
            .as_mut()
            .map(|a| std::mem::take(&mut a.switches))
            .unwrap_or_default()
    }

    /// Advances `steps` steps, deciding at every decision step on the way (at once, whatever
    /// the device), and records their timing.
    pub(super) fn advance_with_thermostats(&mut self, steps: u64) -> Result<TimingRecord> {
        let from = self.step;
        let mut elapsed = Duration::ZERO;
        let mut left = steps;
        while left > 0 {
            self.decide_thermostats()?;
            let chunk = left.min(self.steps_to_next_decision());
            self.watch_before_advance()?;
            elapsed += self.backend.advance(chunk, &self.params)?;
            self.watch_after_advance(chunk)?;
            self.step += chunk;
            self.count_problem_time(chunk);
            left -= chunk;
        }
        Ok(self.record(from, steps, elapsed))
    }

    /// Steps from now to the next step at which a thermostat decides (at least 1).
    fn steps_to_next_decision(&self) -> u64 {
        let step = self.step;
        self.problem
            .iter()
            .flat_map(|a| &a.problem.thermostats)
            .map(|t| {
                let every = t.every_steps.max(1);
                every - step % every
            })
            .min()
            .unwrap_or(u64::MAX)
    }

    /// The thermostats due at this step read their probes and switch their heaters (in their
    /// order: a later one on the same heater sees the earlier one's decision).
    fn decide_thermostats(&mut self) -> Result<()> {
        let step = self.step;
        let Some(active) = self.problem.as_ref() else {
            return Ok(());
        };
        let cols = active.problem.size.cols;
        let due: Vec<_> = active
            .problem
            .thermostats
            .iter()
            .filter(|t| step % t.every_steps.max(1) == 0)
            .cloned()
            .collect();
        if due.is_empty() {
            return Ok(());
        }
        let probes: Vec<u32> = due
            .iter()
            .map(|t| (t.probe.0 * cols + t.probe.1) as u32)
            .collect();
        let temperatures = self.backend.gather(&probes)?;
        let mut kinds = active.problem.kinds.clone();
        let mut switched = Vec::new();
        for (thermostat, temperature) in due.iter().zip(temperatures) {
            let kind = thermostat.heater_kind;
            let Some(heater) = kinds
                .get_mut(usize::from(kind))
                .and_then(|k| k.heater.as_mut())
            else {
                continue;
            };
            let on = thermostat.decide(temperature, heater.on);
            if on != heater.on {
                heater.on = on;
                switched.push(HeaterSwitch {
                    step,
                    kind,
                    on,
                    temperature,
                });
            }
        }
        if switched.is_empty() {
            return Ok(());
        }
        self.switch_heaters(kinds)?;
        if let Some(active) = self.problem.as_mut() {
            active.switches.extend(switched);
            let excess = active.switches.len().saturating_sub(SWITCHES_KEPT);
            active.switches.drain(..excess);
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests;
