//! Edits that undo and redo take back besides strokes: a kind's settings (its heater switched
//! or of another power, its material or held temperature), the sides, the thermostats, and the
//! probes placed on the field. They share the strokes' history (see [`super::paint`]), so that
//! Ctrl+Z takes back whatever was done last.
//!
//! None of them touches the field's values: undo puts the setting back as it was and the field
//! stays as it is (a side held at a temperature sets nothing; a kind that became held had its
//! cells set then, and keeps those values when undone, as painted materials do).

use std::fmt;

use super::problem::no_problem;
use super::Simulation;
use crate::error::{HeatlabError, Result};
use crate::problem::{CellKind, HeatProblem, Side, SideCondition, Sides, Thermostat};

/// A probe on the field: P`number` at a cell.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct ProbePlace {
    /// 1..8: the probe is named P`number`.
    pub number: u8,
    /// Row of the cell.
    pub row: usize,
    /// Column of the cell.
    pub col: usize,
}

/// One undoable change of a setting, with what it was before and after.
#[derive(Debug, Clone, PartialEq)]
pub enum SettingChange {
    /// Kind `index` was replaced.
    Kind {
        /// The kind's index in the problem's kinds.
        index: u8,
        /// What it was.
        before: Box<CellKind>,
        /// What it became.
        after: Box<CellKind>,
    },
    /// The sides' conditions changed.
    Sides {
        /// What they were.
        before: Sides,
        /// What they became.
        after: Sides,
    },
    /// The thermostats were replaced.
    Thermostats {
        /// What they were.
        before: Vec<Thermostat>,
        /// What they became.
        after: Vec<Thermostat>,
    },
    /// Probes were placed, moved or removed.
    Probes {
        /// Where they were.
        before: Vec<ProbePlace>,
        /// Where they are.
        after: Vec<ProbePlace>,
    },
}

impl SettingChange {
    /// Memory the history counts for it.
    pub(super) fn bytes(&self) -> usize {
        match self {
            Self::Kind { .. } | Self::Sides { .. } => 256,
            Self::Thermostats { before, after } => {
                (before.len() + after.len()) * std::mem::size_of::<Thermostat>()
            }
            Self::Probes { before, after } => {
                (before.len() + after.len()) * std::mem::size_of::<ProbePlace>()
            }
        }
    }

    /// Whether it belongs to the heat problem (and goes when the problem is replaced); probes
    /// belong to the field.
    pub(super) fn of_problem(&self) -> bool {
        match self {
            Self::Kind { .. } | Self::Sides { .. } | Self::Thermostats { .. } => true,
            Self::Probes { .. } => false,
        }
    }
}

impl fmt::Display for SettingChange {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Kind { after, .. } => write!(f, "the change of {}", after.name),
            Self::Sides { before, after } => {
                let changed: Vec<String> = Side::ALL
                    .into_iter()
                    .filter(|&side| before.get(side) != after.get(side))
                    .map(|side| side.to_string())
                    .collect();
                match changed.as_slice() {
                    [one] => write!(f, "the change of the {one} side"),
                    _ => write!(f, "the change of the {} sides", changed.join(" and ")),
                }
            }
            Self::Thermostats { .. } => f.write_str("the change of the thermostats"),
            Self::Probes { .. } => f.write_str("the change of the probes"),
        }
    }
}

impl Simulation {
    /// The probes placed on the field, as last set or undone.
    pub fn probes(&self) -> &[ProbePlace] {
        &self.paint.probes
    }

    /// Places the probes (replacing those there were). With `undoable`, undo can take the change
    /// back; otherwise (probes placed for the user, or cleared with an old field) it is not kept.
    /// A probe outside the field is refused and nothing changes.
    pub fn place_probes(&mut self, probes: Vec<ProbePlace>, undoable: bool) -> Result<()> {
        let size = self.initial.size();
        if let Some(outside) = probes
            .iter()
            .find(|p| p.row >= size.rows || p.col >= size.cols)
        {
            return Err(HeatlabError::InvalidInput(format!(
                "probe P{} at ({}, {}) lies outside the {size} field",
                outside.number, outside.row, outside.col
            )));
        }
        if probes == self.paint.probes {
            return Ok(());
        }
        let before = std::mem::replace(&mut self.paint.probes, probes.clone());
        if undoable {
            self.paint.push_setting(SettingChange::Probes {
                before,
                after: probes,
            });
        }
        Ok(())
    }

    /// Replaces kind `index` of the problem (kept for undo): only the tables' sources when only
    /// its heater changed (switched or of another power), otherwise the whole problem.
    pub fn set_kind(&mut self, index: u8, kind: CellKind) -> Result<()> {
        let problem = self.problem().ok_or_else(no_problem)?;
        let before = problem
            .kinds
            .get(usize::from(index))
            .cloned()
            .ok_or_else(|| {
                HeatlabError::InvalidInput(format!("there is no kind {index} to change"))
            })?;
        if before == kind {
            return Ok(());
        }
        self.replace_kind(index, kind.clone())?;
        self.paint.push_setting(SettingChange::Kind {
            index,
            before: Box::new(before),
            after: Box::new(kind),
        });
        Ok(())
    }

    /// Sets one side's condition (kept for undo).
    pub fn set_side(&mut self, side: Side, condition: SideCondition) -> Result<()> {
        let mut sides = self.problem().ok_or_else(no_problem)?.sides;
        sides.set(side, condition);
        self.set_sides(sides)
    }

    /// Sets the four sides' conditions (kept for undo).
    pub fn set_sides(&mut self, sides: Sides) -> Result<()> {
        let before = self.problem().ok_or_else(no_problem)?.sides;
        if before == sides {
            return Ok(());
        }
        self.change_problem(|problem| problem.sides = sides)?;
        self.paint.push_setting(SettingChange::Sides {
            before,
            after: sides,
        });
        Ok(())
    }

    /// Replaces the thermostats (kept for undo).
    pub fn set_thermostats(&mut self, thermostats: Vec<Thermostat>) -> Result<()> {
        let before = self.problem().ok_or_else(no_problem)?.thermostats.clone();
        if before == thermostats {
            return Ok(());
        }
        let after = thermostats.clone();
        self.change_problem(|problem| problem.thermostats = thermostats)?;
        self.paint
            .push_setting(SettingChange::Thermostats { before, after });
        Ok(())
    }

    /// Puts a setting back as it was before the change (`back`) or as it was after it.
    pub(super) fn apply_setting(&mut self, change: &SettingChange, back: bool) -> Result<()> {
        fn pick<T>(back: bool, before: T, after: T) -> T {
            if back {
                before
            } else {
                after
            }
        }
        match change {
            SettingChange::Kind {
                index,
                before,
                after,
            } => self.replace_kind(*index, pick(back, before, after).as_ref().clone()),
            SettingChange::Sides { before, after } => {
                let sides = *pick(back, before, after);
                self.change_problem(|problem| problem.sides = sides)
            }
            SettingChange::Thermostats { before, after } => {
                let thermostats = pick(back, before, after).clone();
                self.change_problem(|problem| problem.thermostats = thermostats)
            }
            SettingChange::Probes { before, after } => {
                let probes = pick(back, before, after).clone();
                self.place_probes(probes, false)
            }
        }
    }

    /// Replaces kind `index`: only the tables' sources when only its heater changed.
    fn replace_kind(&mut self, index: u8, kind: CellKind) -> Result<()> {
        let mut kinds = self.problem().ok_or_else(no_problem)?.kinds.clone();
        let slot = kinds.get_mut(usize::from(index)).ok_or_else(|| {
            HeatlabError::InvalidInput(format!("there is no kind {index} to change"))
        })?;
        let heater_only = slot.name == kind.name
            && slot.material == kind.material
            && slot.held_temperature == kind.held_temperature;
        *slot = kind;
        if heater_only {
            return self.set_heaters(kinds);
        }
        self.change_problem(|problem| problem.kinds = kinds)
    }

    /// Applies `change` to a copy of the problem, checks it and steps it from now on; a refused
    /// change leaves the problem as it was.
    fn change_problem(&mut self, change: impl FnOnce(&mut HeatProblem)) -> Result<()> {
        let mut problem = self.problem().ok_or_else(no_problem)?.clone();
        change(&mut problem);
        problem.check()?;
        let book_energy = self
            .problem
            .as_ref()
            .is_none_or(|active| active.book_energy);
        self.install_problem(Some(problem), book_energy)
    }
}

#[cfg(test)]
mod tests;
