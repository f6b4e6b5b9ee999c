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
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HistoryStep {
    /// There was nothing to take back or repeat.
    Nothing,
    /// No step ran since: the field (and the map) stand exactly as before (or after) the stroke.
    Exact,
    /// This many steps ran since the stroke was last applied or taken back: its heat was taken
    /// out (or put back) where it was painted, and painted kinds changed back without their
    /// cells' values (see [`UNDO_AFTER_STEPPING`]).
    AfterSteps(u64),
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
}

impl Entry {
    fn bytes(&self) -> usize {
        match self {
            Self::Heat(record) => record.cells.len() * 16,
            Self::Kinds(entry) => entry.stroke.bytes(),
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

    /// Forgets everything (the field was replaced).
    pub fn clear(&mut self) {
        *self = Self::default();
    }

    /// Forgets the strokes of kinds (the problem was replaced: their kinds mean nothing now).
    pub(super) fn forget_kind_strokes(&mut self) {
        self.open_kinds = None;
        self.undo.retain(|entry| matches!(entry, Entry::Heat(_)));
        self.redo.retain(|entry| matches!(entry, Entry::Heat(_)));
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
mod tests {
    use super::*;
    use crate::compute::{CpuBackend, CpuMethod, StepParams};
    use crate::grid::{Grid, GridSize};
    use crate::sim::agreement::WindowPolicy;

    fn sim(rows: usize, cols: usize) -> Simulation {
        let size = GridSize { rows, cols };
        let initial = Grid::from_vec(
            size,
            (0..size.cells()).map(|i| (i % 13) as f32 * 0.01).collect(),
        )
        .unwrap();
        let backend = CpuBackend::with_threads(2).with_method(CpuMethod::Rows);
        Simulation::new(Box::new(backend), initial, StepParams::default()).unwrap()
    }

    const BRUSH: Brush = Brush {
        radius: 3.0,
        amount: 0.5,
        edge: BrushEdge::Soft,
    };

    #[test]
    fn dabs_are_evenly_spaced_and_carry_the_rest_over() {
        let dabs = dabs_towards((0.0, 0.0), (0.0, 10.0), 2.0);
        assert_eq!(
            dabs,
            [(0.0, 2.0), (0.0, 4.0), (0.0, 6.0), (0.0, 8.0), (0.0, 10.0)]
        );
        assert!(dabs_towards((0.0, 0.0), (0.0, 1.5), 2.0).is_empty());
        assert!(dabs_towards((0.0, 0.0), (f32::NAN, 1.0), 2.0).is_empty());
    }

    #[test]
    fn a_fast_drag_leaves_no_gap() {
        let mut sim = sim(20, 200);
        sim.paint_to(10.0, 5.0, BRUSH).unwrap();
        // One frame's jump across most of the field.
        let dabs = sim.paint_to(10.0, 190.0, BRUSH).unwrap();
        assert_eq!(dabs, 246, "185 cells at 0.75 apart");
        sim.end_stroke().unwrap();
        let painted = sim.field().unwrap();
        let initial = sim.initial().unwrap().clone();
        for col in 5..=190 {
            assert!(
                painted.get(10, col) > initial.get(10, col),
                "gap at column {col}"
            );
        }
        assert_eq!(
            painted.get(2, 100),
            initial.get(2, 100),
            "outside the radius"
        );
    }

    #[test]
    fn undo_and_redo_restore_the_field_bit_for_bit() {
        let mut sim = sim(30, 40);
        sim.advance(5).unwrap();
        let before = sim.field().unwrap();
        sim.paint_to(4.0, 4.0, BRUSH).unwrap();
        sim.paint_to(20.0, 30.0, BRUSH).unwrap();
        sim.end_stroke().unwrap();
        let first = sim.field().unwrap();
        let remove = Brush {
            amount: -0.2,
            ..BRUSH
        };
        sim.paint_to(10.0, 10.0, remove).unwrap();
        sim.paint_to(12.0, 25.0, remove).unwrap();
        let second = sim.field().unwrap();
        assert_ne!(first, second);
        assert!(
            sim.undo_stroke().unwrap(),
            "ends the open stroke and undoes it"
        );
        assert_eq!(sim.field().unwrap(), first);
        assert!(sim.undo_stroke().unwrap());
        assert_eq!(sim.field().unwrap(), before);
        assert!(!sim.undo_stroke().unwrap(), "nothing left");
        assert_eq!(sim.paint_history().counts(), (0, 2));
        assert!(sim.redo_stroke().unwrap());
        assert_eq!(sim.field().unwrap(), first);
        assert!(sim.redo_stroke().unwrap());
        assert_eq!(sim.field().unwrap(), second);
        assert!(!sim.redo_stroke().unwrap());
        // A new stroke after an undo drops what could be redone.
        sim.undo_stroke().unwrap();
        sim.paint_to(1.0, 1.0, BRUSH).unwrap();
        sim.end_stroke().unwrap();
        assert_eq!(sim.paint_history().counts(), (2, 0));
        sim.reset().unwrap();
        assert_eq!(sim.paint_history().counts(), (0, 0));
    }

    #[test]
    fn the_live_check_repeats_paints_and_undos_without_a_false_mismatch() {
        let mut sim = sim(33, 47);
        sim.set_agreement_check(Some(WindowPolicy::Every(6)));
        for round in 0..6 {
            sim.advance(2).unwrap();
            sim.paint_to(round as f32 * 5.0, 3.0, BRUSH).unwrap();
            sim.advance(1).unwrap();
            sim.paint_to(round as f32 * 5.0 + 2.0, 40.0, BRUSH).unwrap();
            sim.end_stroke().unwrap();
            if round % 2 == 1 {
                sim.undo_stroke().unwrap();
            }
            sim.advance(3).unwrap();
        }
        sim.finish_agreement().unwrap();
        let watch = sim.agreement().unwrap();
        let (checks, mismatches) = watch.counts();
        assert!(checks >= 5, "{checks} checks");
        assert_eq!(mismatches, 0, "{:?}", watch.first_mismatch());
    }

    #[test]
    fn a_paint_left_out_of_the_window_is_caught() {
        // The check is not blind to edits: one the window does not know about is a mismatch.
        let mut sim = sim(16, 16);
        sim.set_agreement_check(Some(WindowPolicy::Every(4)));
        sim.advance(2).unwrap();
        sim.backend.apply_brush(&BRUSH.stamp(8.0, 8.0)).unwrap();
        sim.advance(2).unwrap();
        sim.finish_agreement().unwrap();
        assert_eq!(sim.agreement().unwrap().counts(), (1, 1));
    }

    #[test]
    fn the_history_is_bounded() {
        let mut history = PaintHistory::default();
        for _ in 0..HISTORY_STROKES + 5 {
            history.push(Entry::Heat(StrokeRecord {
                cells: vec![0].into(),
                before: vec![0.0].into(),
                after: vec![1.0].into(),
                added: vec![1.0].into(),
                applied_at: 0,
                exact: true,
            }));
        }
        assert_eq!(history.counts(), (HISTORY_STROKES, 0));
        let huge = HISTORY_BYTES / 16 + 1;
        history.push(Entry::Heat(StrokeRecord {
            cells: vec![0; huge].into(),
            before: vec![0.0; huge].into(),
            after: vec![0.0; huge].into(),
            added: vec![0.0; huge].into(),
            applied_at: 0,
            exact: true,
        }));
        assert_eq!(history.counts(), (1, 0), "the newest stroke is kept alone");
    }
}
