//! Painting heat onto a running simulation: strokes of brush dabs laid along the pointer's path,
//! and undo and redo of whole strokes (of heat, and of kinds painted on a heat problem: one
//! history, see [`super::kinds`]).
//!
//! A stroke is the dabs between pressing and releasing. Dabs are spaced a quarter of the radius
//! apart along the path (however fast the pointer moved between two frames, so a fast drag leaves
//! no gaps), and applied between steps.
//!
//! Undo semantics ([`UNDO_AFTER_STEPPING`] says it to users): each stroke keeps its cells'
//! values before it and after it, and the heat each dab added to each cell (computed on the host
//! with the brush's own arithmetic from the values gathered before the dab, so exactly what the
//! backend added). While no step has run since the stroke (nor during it), undo writes the
//! values before it back and redo the values after it: the field is restored bit for bit. Once
//! steps have run, undo takes exactly the heat the stroke added out of the cells it painted (and
//! redo puts it back): the heat that spread beyond them stays where it went, so the total heat
//! falls by what the stroke added and nothing of the old field is pasted into the new one.
//! Reset or a new field clears the history; the history keeps the latest strokes up to
//! [`HISTORY_BYTES`] (and [`HISTORY_STROKES`] strokes).

use std::collections::{HashMap, VecDeque};
use std::sync::Arc;

use super::kinds::{KindStroke, OpenKindStroke};
use super::undoable::{ProbePlace, SettingChange};
use super::Simulation;
use crate::compute::brush::{BrushEdge, BrushStamp, CellValues, FieldEdit};
use crate::error::Result;
use crate::grid::GridSize;

/// What undo does once the simulation has stepped, for the brush's tooltip and notices.
pub const UNDO_AFTER_STEPPING: &str = "Undo right after a stroke restores the field exactly. \
    Once the simulation has stepped, undo takes out exactly the heat the stroke added, from the \
    cells it painted: heat that has spread since stays where it went, so those cells may end \
    cooler than their surroundings. Undoing painted materials gives the cells their former \
    materials back at the temperatures they have reached.";

/// What an undo or a redo did.
#[derive(Debug, Clone, PartialEq)]
pub enum HistoryStep {
    /// There was nothing to take back or repeat.
    Nothing,
    /// No step ran since: the field (and the map) stand exactly as before (or after) the stroke.
    Exact,
    /// This many steps ran since the stroke was last applied or taken back: its heat was taken
    /// out (or put back) where it was painted, and painted kinds changed back without their
    /// cells' values (see [`UNDO_AFTER_STEPPING`]).
    AfterSteps(u64),
    /// A setting or the probes were put back (or changed again); the field is untouched.
    Setting(SettingChange),
}

/// Memory the undo history may use (cell indices and values before and after each stroke).
pub const HISTORY_BYTES: usize = 256 << 20;
/// Strokes the undo history keeps at most.
pub const HISTORY_STROKES: usize = 100;
/// Dab spacing as a fraction of the radius.
pub const DAB_SPACING: f32 = 0.25;

/// The brush as the user set it: what each dab of a stroke is made of.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Brush {
    /// Radius in cells.
    pub radius: f32,
    /// Heat added per dab at full weight (negative: removed).
    pub amount: f32,
    /// Soft or hard edge.
    pub edge: BrushEdge,
}

impl Brush {
    /// A dab of this brush centred at (`row`, `col`).
    pub fn stamp(&self, row: f32, col: f32) -> BrushStamp {
        BrushStamp {
            row,
            col,
            radius: self.radius,
            amount: self.amount,
            edge: self.edge,
        }
    }

    /// Distance between dabs along a stroke, in cells.
    pub fn spacing(&self) -> f32 {
        (self.radius.max(0.5) * DAB_SPACING).max(0.5)
    }
}

/// The dab centres after `last` on the way to `to`, `spacing` apart; the last one becomes the
/// next anchor (what is left of the way is carried into the next segment).
pub fn dabs_towards(last: (f32, f32), to: (f32, f32), spacing: f32) -> Vec<(f32, f32)> {
    let (dr, dc) = (to.0 - last.0, to.1 - last.1);
    let distance = (dr * dr + dc * dc).sqrt();
    if !distance.is_finite() || !spacing.is_finite() || spacing <= 0.0 {
        return Vec::new();
    }
    let count = (distance / spacing).floor() as usize;
    (1..=count)
        .map(|i| {
            let t = i as f32 * spacing / distance;
            (last.0 + dr * t, last.1 + dc * t)
        })
        .collect()
}

/// A stroke being painted.
#[derive(Debug, Default)]
struct OpenStroke {
    /// The step it began at.
    started_at: u64,
    /// The centre of the last dab.
    anchor: Option<(f32, f32)>,
    /// Cells touched so far, in the order first touched.
    cells: Vec<u32>,
    /// Their values just before the stroke first touched them.
    before: Vec<f32>,
    /// The heat each dab added to each of `cells`.
    added: Vec<f32>,
    /// Index in `cells` of each touched cell.
    seen: HashMap<u32, usize>,
    dabs: usize,
}

/// A finished stroke: the cells it touched, their values before and after, the heat it added.
#[derive(Debug, Clone)]
struct StrokeRecord {
    cells: Arc<[u32]>,
    before: Arc<[f32]>,
    after: Arc<[f32]>,
    added: Arc<[f32]>,
    /// The step at which it was last applied or taken back.
    applied_at: u64,
    /// Whether its cells then held exactly `after` (applied) or `before` (taken back).
    exact: bool,
}

/// A stroke of kinds in the history, and where it stands.
#[derive(Debug, Clone)]
pub(super) struct KindEntry {
    pub(super) stroke: KindStroke,
    /// The step at which it was last applied or taken back.
    pub(super) applied_at: u64,
    /// Whether the held cells' values were then exactly those of the stroke.
    pub(super) exact: bool,
}

/// One step of the history.
#[derive(Debug, Clone)]
enum Entry {
    Heat(StrokeRecord),
    Kinds(KindEntry),
    /// A setting or the probes (see [`super::undoable`]).
    Setting(SettingChange),
}

impl Entry {
    fn bytes(&self) -> usize {
        match self {
            Self::Heat(record) => record.cells.len() * 16,
            Self::Kinds(entry) => entry.stroke.bytes(),
            Self::Setting(change) => change.bytes(),
        }
    }

    /// Whether it belongs to the heat problem: it goes when the problem is replaced.
    fn of_problem(&self) -> bool {
        match self {
            Self::Heat(_) => false,
            Self::Kinds(_) => true,
            Self::Setting(change) => change.of_problem(),
        }
    }
}

/// Strokes that can be undone and redone, and the strokes being painted.
#[derive(Debug, Default)]
pub struct PaintHistory {
    open: Option<OpenStroke>,
    /// The stroke of kinds being painted.
    pub(super) open_kinds: Option<OpenKindStroke>,
    undo: VecDeque<Entry>,
    redo: Vec<Entry>,
    /// The probes placed (kept when the history is cleared: they stay on the field).
    pub(super) probes: Vec<ProbePlace>,
}

impl PaintHistory {
    /// Strokes (of heat and of kinds) that undo and redo can take back or repeat.
    pub fn counts(&self) -> (usize, usize) {
        (self.undo.len(), self.redo.len())
    }

    /// Whether a stroke is being painted.
    pub fn is_painting(&self) -> bool {
        self.open.is_some() || self.open_kinds.is_some()
    }

    /// Whether a stroke of kinds is being painted.
    pub fn is_painting_kinds(&self) -> bool {
        self.open_kinds.is_some()
    }

    /// Forgets every stroke and change (reset, or the field was replaced); the probes stay.
    pub fn clear(&mut self) {
        *self = Self {
            probes: std::mem::take(&mut self.probes),
            ..Self::default()
        };
    }

    /// Forgets the strokes of kinds and the changes of the problem's settings (the problem was
    /// replaced: their kinds and sides mean nothing now).
    pub(super) fn forget_problem_entries(&mut self) {
        self.open_kinds = None;
        self.undo.retain(|entry| !entry.of_problem());
        self.redo.retain(|entry| !entry.of_problem());
    }

    /// Keeps a change of a setting or of the probes.
    pub(super) fn push_setting(&mut self, change: SettingChange) {
        self.push(Entry::Setting(change));
    }

    /// Keeps a finished stroke of kinds, ended at `step`.
    pub(super) fn push_kinds(&mut self, stroke: KindStroke, step: u64) {
        self.push(Entry::Kinds(KindEntry::new(stroke, step)));
    }

    fn push(&mut self, entry: Entry) {
        self.redo.clear();
        self.undo.push_back(entry);
        let mut bytes: usize = self.undo.iter().map(Entry::bytes).sum();
        // The newest stroke is always kept, however large.
        while self.undo.len() > 1 && (bytes > HISTORY_BYTES || self.undo.len() > HISTORY_STROKES) {
            if let Some(dropped) = self.undo.pop_front() {
                bytes -= dropped.bytes();
            }
        }
    }
}

/// Calls `touch` with every cell of `stamp` and its weight.
fn for_each_weighted(stamp: &BrushStamp, size: GridSize, mut touch: impl FnMut(u32, f32)) {
    let Some(rect) = stamp.bounds(size) else {
        return;
    };
    for row in rect.row..rect.row + rect.rows {
        for col in rect.col..rect.col + rect.cols {
            if let Some(weight) = stamp.weight(row, col) {
                touch((row * size.cols + col) as u32, weight);
            }
        }
    }
}

impl Simulation {
    /// Changes the held field other than by stepping: applies `edit` on the backend and records
    /// it in the agreement window, so that the live check repeats it.
    pub fn edit(&mut self, edit: FieldEdit) -> Result<()> {
        crate::compute::brush::ensure_cells_addressable(self.initial.size())?;
        edit.apply(self.backend.as_mut())?;
        // The last good field no longer is the current one, nor is the energy stored.
        self.last_good = None;
        self.invalidate_energy_mark();
        if let Some(watch) = self.agreement.as_mut() {
            watch.record_edit(&edit);
        }
        Ok(())
    }

    /// Extends the stroke being painted to (`row`, `col`) in cells (fractions allowed; the
    /// first call of a stroke dabs at that point), with dabs of `brush` along the way. Returns
    /// the number of dabs applied.
    pub fn paint_to(&mut self, row: f32, col: f32, brush: Brush) -> Result<usize> {
        crate::compute::brush::ensure_cells_addressable(self.initial.size())?;
        let step = self.step;
        let stroke = self.paint.open.get_or_insert_with(|| OpenStroke {
            started_at: step,
            ..OpenStroke::default()
        });
        let centres = match stroke.anchor {
            None => vec![(row, col)],
            Some(anchor) => dabs_towards(anchor, (row, col), brush.spacing()),
        };
        let stamps: Vec<BrushStamp> = centres.iter().map(|&(r, c)| brush.stamp(r, c)).collect();
        if stamps.is_empty() {
            return Ok(0);
        }
        for stamp in &stamps {
            stamp.check()?;
        }
        // The cells of these dabs (once each), their values now, and what each dab adds to
        // them: the brush's arithmetic on the host gives what the backend will hold.
        let size = self.initial.size();
        let mut local: HashMap<u32, usize> = HashMap::new();
        let mut cells = Vec::new();
        for stamp in &stamps {
            stamp.for_each_cell(size, |cell| {
                local.entry(cell as u32).or_insert_with(|| {
                    cells.push(cell as u32);
                    cells.len() - 1
                });
            });
        }
        let before = self.backend.gather(&cells)?;
        let mut values = before.clone();
        let mut added = vec![0.0f32; cells.len()];
        for stamp in &stamps {
            for_each_weighted(stamp, size, |cell, weight| {
                if let Some(&i) = local.get(&cell) {
                    let next = stamp.stamped(values[i], weight);
                    added[i] += next - values[i];
                    values[i] = next;
                }
            });
        }
        for (i, &cell) in cells.iter().enumerate() {
            match stroke.seen.get(&cell) {
                Some(&at) => stroke.added[at] += added[i],
                None => {
                    stroke.seen.insert(cell, stroke.cells.len());
                    stroke.cells.push(cell);
                    stroke.before.push(before[i]);
                    stroke.added.push(added[i]);
                }
            }
        }
        stroke.anchor = centres.last().copied();
        stroke.dabs += stamps.len();
        for stamp in &stamps {
            self.edit(FieldEdit::Brush(*stamp))?;
        }
        Ok(stamps.len())
    }

    /// Ends the stroke being painted and keeps it for undo. Returns whether it touched any cell.
    pub fn end_stroke(&mut self) -> Result<bool> {
        let Some(stroke) = self.paint.open.take() else {
            return Ok(false);
        };
        if stroke.cells.is_empty() {
            return Ok(false);
        }
        let after = self.backend.gather(&stroke.cells)?;
        self.paint.push(Entry::Heat(StrokeRecord {
            cells: stroke.cells.into(),
            before: stroke.before.into(),
            after: after.into(),
            added: stroke.added.into(),
            applied_at: self.step,
            exact: stroke.started_at == self.step,
        }));
        Ok(true)
    }

    /// Takes back the latest stroke (ending those being painted first). Returns whether there
    /// was one.
    pub fn undo_stroke(&mut self) -> Result<bool> {
        self.undo().map(|done| done != HistoryStep::Nothing)
    }

    /// Paints the latest undone stroke again. Returns whether there was one.
    pub fn redo_stroke(&mut self) -> Result<bool> {
        self.redo().map(|done| done != HistoryStep::Nothing)
    }

    /// Takes back the latest stroke, of heat or of kinds (ending those being painted first),
    /// and says how (see [`UNDO_AFTER_STEPPING`]).
    pub fn undo(&mut self) -> Result<HistoryStep> {
        self.end_stroke()?;
        self.end_kind_stroke()?;
        let Some(mut entry) = self.paint.undo.pop_back() else {
            return Ok(HistoryStep::Nothing);
        };
        match self.apply_entry(&mut entry, true) {
            Ok(done) => {
                self.paint.redo.push(entry);
                Ok(done)
            }
            Err(error) => {
                self.paint.undo.push_back(entry);
                Err(error)
            }
        }
    }

    /// Paints the latest undone stroke again, and says how.
    pub fn redo(&mut self) -> Result<HistoryStep> {
        self.end_stroke()?;
        self.end_kind_stroke()?;
        let Some(mut entry) = self.paint.redo.pop() else {
            return Ok(HistoryStep::Nothing);
        };
        match self.apply_entry(&mut entry, false) {
            Ok(done) => {
                self.paint.undo.push_back(entry);
                Ok(done)
            }
            Err(error) => {
                self.paint.redo.push(entry);
                Err(error)
            }
        }
    }

    /// Takes an entry back (`back`) or applies it again.
    fn apply_entry(&mut self, entry: &mut Entry, back: bool) -> Result<HistoryStep> {
        match entry {
            Entry::Heat(record) => self.apply_heat_stroke(record, back),
            Entry::Kinds(entry) => self.apply_kind_stroke(entry, back),
            Entry::Setting(change) => self
                .apply_setting(change, back)
                .map(|()| HistoryStep::Setting(change.clone())),
        }
    }

    /// Writes a heat stroke's values back (no step since: exact) or takes its heat out of (or
    /// puts it back into) its cells.
    fn apply_heat_stroke(&mut self, record: &mut StrokeRecord, back: bool) -> Result<HistoryStep> {
        let exact = record.exact && record.applied_at == self.step;
        let values: Arc<[f32]> = if exact {
            Arc::clone(if back { &record.before } else { &record.after })
        } else {
            let now = self.backend.gather(&record.cells)?;
            now.iter()
                .zip(record.added.iter())
                .map(|(&value, &added)| if back { value - added } else { value + added })
                .collect()
        };
        self.edit(FieldEdit::Set(CellValues {
            cells: Arc::clone(&record.cells),
            values,
        }))?;
        let done = if exact {
            HistoryStep::Exact
        } else {
            HistoryStep::AfterSteps(self.step.saturating_sub(record.applied_at))
        };
        record.exact = exact;
        record.applied_at = self.step;
        Ok(done)
    }

    /// Strokes that can be undone and redone.
    pub fn paint_history(&self) -> &PaintHistory {
        &self.paint
    }

    /// The values of a few cells (probes, profiles), without copying the field.
    pub fn sample(&mut self, cells: &[u32]) -> Result<Vec<f32>> {
        self.backend.gather(cells)
    }
}

#[cfg(test)]
mod tests;
