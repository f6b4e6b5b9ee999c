//! Painting kinds of cells (materials, heaters, held regions) onto a heat problem: each shape
//! gives its cells a kind between steps, and the shapes of one drag are one stroke in the same
//! undo history as the heat brush's strokes.
//!
//! A shape costs what it touches plus the new tables: the map's cells are set in place (no copy
//! of the problem), the tables are computed again (the stability limit is a pass over the map),
//! the backend takes the map and the tables (no compile) and the live check records the cells
//! and the tables, not the map. Measured at 2000x2000 on the 2-core build machine (release):
//! see `one_shape_at_2000_squared_costs_a_pass_over_the_map` below.
//!
//! Undo gives the stroke's cells their kinds back. Cells the stroke made held got their kind's
//! temperature; undo puts their old values back only while no step has run since the stroke
//! (then the field is restored bit for bit), after steps they keep the temperatures they have
//! now (see [`super::paint::UNDO_AFTER_STEPPING`]).

use std::sync::Arc;

use super::paint::{HistoryStep, KindEntry};
use super::Simulation;
use crate::compute::{CellValues, FieldEdit};
use crate::error::{HeatlabError, Result};
use crate::grid::GridSize;
use crate::problem::{CellKind, Shape};

/// A stroke of kinds being painted.
#[derive(Debug)]
pub(super) struct OpenKindStroke {
    /// The step it began at.
    started_at: u64,
    /// Per cell of the field: bit 0 when in `cells`, bit 1 when in `held_cells`.
    touched: Vec<u8>,
    cells: Vec<u32>,
    /// The kinds of `cells` before the stroke.
    before: Vec<u8>,
    /// Cells the stroke set to a held temperature, and their values just before.
    held_cells: Vec<u32>,
    held_before: Vec<f32>,
}

/// A finished stroke of kinds.
#[derive(Debug, Clone)]
pub(super) struct KindStroke {
    cells: Arc<[u32]>,
    before: Arc<[u8]>,
    after: Arc<[u8]>,
    held_cells: Arc<[u32]>,
    held_before: Arc<[f32]>,
    held_after: Arc<[f32]>,
    /// No step ran while it was painted.
    exact_when_made: bool,
}

impl KindStroke {
    /// Bytes it keeps.
    pub(super) fn bytes(&self) -> usize {
        self.cells.len() * 6 + self.held_cells.len() * 12
    }
}

impl Simulation {
    /// Paints `shape` with `kind` (added to the problem's kinds when new), as part of the stroke
    /// of kinds being painted (one is started). Cells that become held take the kind's
    /// temperature. Returns the number of cells that changed kind.
    pub fn paint_kind(&mut self, shape: &Shape, kind: CellKind) -> Result<usize> {
        self.settle()?;
        let active = self.problem.as_mut().ok_or_else(no_problem)?;
        let kinds_before = active.problem.kinds.len();
        let index = active.problem.kind_index(kind)?;
        let cells = shape.cells(active.problem.size, &active.problem.map);
        self.paint_cells(cells, index, kinds_before)
    }

    /// Gives `cells` kind `index` as part of the open stroke of kinds (one is started); on a
    /// failure the kinds beyond `kinds_before` (added for this paint) go again. Returns the
    /// number of cells that changed kind.
    fn paint_cells(&mut self, cells: Vec<u32>, index: u8, kinds_before: usize) -> Result<usize> {
        let active = self.problem.as_mut().ok_or_else(no_problem)?;
        let size = active.problem.size;
        let map = &active.problem.map;
        let cells: Vec<u32> = cells
            .into_iter()
            .filter(|&c| map[c as usize] != index)
            .collect();
        if cells.is_empty() {
            active.problem.kinds.truncate(kinds_before);
            return Ok(0);
        }
        let step = self.step;
        let stroke = self.paint.open_kinds.get_or_insert_with(|| OpenKindStroke {
            started_at: step,
            touched: vec![0; size.cells()],
            cells: Vec::new(),
            before: Vec::new(),
            held_cells: Vec::new(),
            held_before: Vec::new(),
        });
        let mut fresh = 0;
        for &cell in &cells {
            let seen = &mut stroke.touched[cell as usize];
            if *seen & 1 == 0 {
                *seen |= 1;
                stroke.cells.push(cell);
                stroke.before.push(map[cell as usize]);
                fresh += 1;
            }
        }
        let cells: Arc<[u32]> = cells.into();
        let edited = self.edit_map(Arc::clone(&cells), vec![index; cells.len()].into());
        if let Err(error) = edited {
            if let Some(stroke) = self.paint.open_kinds.as_mut() {
                let kept = stroke.cells.len() - fresh;
                for &cell in &stroke.cells[kept..] {
                    stroke.touched[cell as usize] &= !1;
                }
                stroke.cells.truncate(kept);
                stroke.before.truncate(kept);
            }
            if let Some(active) = self.problem.as_mut() {
                active.problem.kinds.truncate(kinds_before);
            }
            return Err(error);
        }
        self.hold_painted(&cells)?;
        Ok(cells.len())
    }

    /// Moves the part at `seed` (the 4-connected cells of its kind) by `by` (rows, columns)
    /// within the open stroke of kinds: its cells take the problem's first kind (the base) and
    /// the cells it moves onto take its kind; cells moved off the grid are gone. The field's
    /// values stay where they are. Returns the number of cells that changed kind.
    pub fn move_part(&mut self, seed: (usize, usize), by: (i64, i64)) -> Result<usize> {
        self.settle()?;
        let (region, part, size) = self.part_at(seed)?;
        let shifted: Vec<u32> = region
            .iter()
            .filter_map(|&cell| {
                let row = (cell as usize / size.cols) as i64 + by.0;
                let col = (cell as usize % size.cols) as i64 + by.1;
                let inside =
                    (0..size.rows as i64).contains(&row) && (0..size.cols as i64).contains(&col);
                inside.then(|| (row as usize * size.cols + col as usize) as u32)
            })
            .collect();
        let landing: std::collections::HashSet<u32> = shifted.iter().copied().collect();
        let left: Vec<u32> = region
            .into_iter()
            .filter(|c| !landing.contains(c))
            .collect();
        let kinds = self.problem.as_ref().map_or(0, |a| a.problem.kinds.len());
        let cleared = self.paint_cells(left, 0, kinds)?;
        Ok(cleared + self.paint_cells(shifted, part, kinds)?)
    }

    /// Deletes the part at `seed` within the open stroke of kinds: its cells take the
    /// problem's first kind (the base). Returns the number of cells that changed kind.
    pub fn delete_part(&mut self, seed: (usize, usize)) -> Result<usize> {
        self.settle()?;
        let (region, _, _) = self.part_at(seed)?;
        let kinds = self.problem.as_ref().map_or(0, |a| a.problem.kinds.len());
        self.paint_cells(region, 0, kinds)
    }

    /// The part at `seed`: its cells, its kind and the grid's size. The base (the first kind)
    /// is not a part.
    fn part_at(&self, seed: (usize, usize)) -> Result<(Vec<u32>, u8, GridSize)> {
        let active = self.problem.as_ref().ok_or_else(no_problem)?;
        let (size, map) = (active.problem.size, &active.problem.map);
        if seed.0 >= size.rows || seed.1 >= size.cols {
            return Err(HeatlabError::InvalidInput(format!(
                "the cell ({}, {}) lies outside the {size} grid",
                seed.0, seed.1
            )));
        }
        let part = map[seed.0 * size.cols + seed.1];
        if part == 0 {
            return Err(HeatlabError::InvalidInput(format!(
                "the cell ({}, {}) is the base ({}), not a part painted over it",
                seed.0, seed.1, active.problem.kinds[0].name
            )));
        }
        let region = Shape::FloodFill { seed }.cells(size, map);
        Ok((region, part, size))
    }

    /// Sets the held cells among `cells` to their temperatures, keeping the values they had
    /// for the open stroke's undo.
    fn hold_painted(&mut self, cells: &[u32]) -> Result<()> {
        let Some(held) = self.held_values(Some(cells))? else {
            return Ok(());
        };
        let values = self.backend.gather(&held.cells)?;
        if let Some(stroke) = self.paint.open_kinds.as_mut() {
            for (&cell, value) in held.cells.iter().zip(values) {
                let seen = &mut stroke.touched[cell as usize];
                if *seen & 2 == 0 {
                    *seen |= 2;
                    stroke.held_cells.push(cell);
                    stroke.held_before.push(value);
                }
            }
        }
        self.edit(FieldEdit::Set(held))
    }

    /// Ends the stroke of kinds being painted and keeps it for undo. Returns whether it
    /// changed any cell.
    pub fn end_kind_stroke(&mut self) -> Result<bool> {
        let Some(stroke) = self.paint.open_kinds.take() else {
            return Ok(false);
        };
        if stroke.cells.is_empty() {
            return Ok(false);
        }
        let map = self
            .problem
            .as_ref()
            .map(|a| &a.problem.map)
            .ok_or_else(|| {
                HeatlabError::Internal("the problem went away during a stroke of kinds".into())
            })?;
        let after: Vec<u8> = stroke.cells.iter().map(|&c| map[c as usize]).collect();
        let held_after = self.backend.gather(&stroke.held_cells)?;
        let record = KindStroke {
            cells: stroke.cells.into(),
            before: stroke.before.into(),
            after: after.into(),
            held_cells: stroke.held_cells.into(),
            held_before: stroke.held_before.into(),
            held_after: held_after.into(),
            exact_when_made: stroke.started_at == self.step,
        };
        self.paint.push_kinds(record, self.step);
        Ok(true)
    }

    /// Gives a stroke's cells their kinds before it (`back`) or after it again; the held
    /// cells' values follow only when no step ran since the stroke was last applied.
    pub(super) fn apply_kind_stroke(
        &mut self,
        entry: &mut KindEntry,
        back: bool,
    ) -> Result<HistoryStep> {
        let stroke = &entry.stroke;
        let kinds = if back { &stroke.before } else { &stroke.after };
        self.edit_map(Arc::clone(&stroke.cells), Arc::clone(kinds))?;
        let exact = entry.exact && entry.applied_at == self.step;
        if exact && !stroke.held_cells.is_empty() {
            let values = if back {
                &stroke.held_before
            } else {
                &stroke.held_after
            };
            self.edit(FieldEdit::Set(CellValues {
                cells: Arc::clone(&stroke.held_cells),
                values: Arc::clone(values),
            }))?;
        } else if !back {
            // Cells held again take their temperature.
            let cells = Arc::clone(&stroke.cells);
            if let Some(held) = self.held_values(Some(&cells))? {
                self.edit(FieldEdit::Set(held))?;
            }
        }
        let outcome = if exact {
            HistoryStep::Exact
        } else {
            HistoryStep::AfterSteps(self.step.saturating_sub(entry.applied_at))
        };
        entry.exact = exact;
        entry.applied_at = self.step;
        Ok(outcome)
    }
}

impl KindEntry {
    /// A stroke just ended at `step`.
    pub(super) fn new(stroke: KindStroke, step: u64) -> Self {
        Self {
            exact: stroke.exact_when_made,
            stroke,
            applied_at: step,
        }
    }
}

#[cfg(test)]
pub(crate) mod tests;

fn no_problem() -> HeatlabError {
    HeatlabError::InvalidInput("kinds are painted on a heat problem: set one first".into())
}
