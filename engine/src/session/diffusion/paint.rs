//! The brush and the probes on the simulation thread: strokes, undo and redo applied between
//! steps, and the few cells read for the probes and the line profile each frame.

use std::time::{Duration, Instant};

use super::messages::{FramePart, PaintCommand, Samples, SimEvent};
use super::SimThread;
use crate::session::notice::Level;
use crate::sim::paint::HistoryStep;
use crate::sim::undoable::ProbePlace;

impl SimThread {
    /// Applies a paint command. The next frame is drawn even while paused, with fresh
    /// statistics, so that the total-heat plot shows the jump.
    pub(super) fn paint(&mut self, command: PaintCommand) {
        let Some(sim) = self.sim.as_mut() else {
            return;
        };
        let mut said = None;
        let probes_before = sim.probes().to_vec();
        let result = match command {
            PaintCommand::StrokeTo { row, col, brush } => {
                sim.paint_to(row, col, brush).map(|dabs| dabs > 0)
            }
            PaintCommand::EndStroke => sim.end_stroke().map(|_| false),
            PaintCommand::Undo => sim
                .undo()
                .map(|done| took_back(done, Direction::Undo, &mut said)),
            PaintCommand::Redo => sim
                .redo()
                .map(|done| took_back(done, Direction::Redo, &mut said)),
        };
        match result {
            Ok(false) => {}
            Ok(true) => {
                self.schedule.dirty = true;
                self.stats.reset();
                let history = matches!(command, PaintCommand::Undo | PaintCommand::Redo);
                if history && self.sim.as_ref().is_some_and(|sim| sim.problem().is_some()) {
                    self.emit_problem();
                }
                if let Some(probes) = self
                    .sim
                    .as_ref()
                    .map(|sim| sim.probes().to_vec())
                    .filter(|probes| *probes != probes_before)
                {
                    self.emit(SimEvent::Probes(probes));
                }
            }
            Err(error) => {
                // A stroke that failed half-way is ended, so that undo can take back what it did.
                if let Err(end) = sim.end_stroke() {
                    log::warn!("ending a failed stroke: {end}");
                }
                self.notice(Level::Error, format!("painting failed: {error}"));
            }
        }
        if let Some(text) = said {
            self.notice(Level::Info, text);
        }
    }

    /// Tells the panel how many strokes undo and redo can take back when that changed.
    pub(super) fn sync_paint_history(&mut self) {
        let counts = self
            .sim
            .as_ref()
            .map_or((0, 0), |sim| sim.paint_history().counts());
        if self.paint_counts != counts {
            self.paint_counts = counts;
            self.emit(SimEvent::PaintHistory(counts.0, counts.1));
        }
    }

    /// Places the probes (see [`crate::sim::Simulation::place_probes`]); a refused placement
    /// says why and the panel is told where the probes stand.
    pub(super) fn place_probes(&mut self, probes: Vec<ProbePlace>, undoable: bool) {
        let Some(sim) = self.sim.as_mut() else {
            return;
        };
        if let Err(error) = sim.place_probes(probes, undoable) {
            let placed = sim.probes().to_vec();
            self.notice(
                Level::Warning,
                format!("the probes were not moved: {error}"),
            );
            self.emit(SimEvent::Probes(placed));
        }
    }

    /// Sets the cells every frame samples; the next frame carries them even while paused.
    pub(super) fn set_sampling(&mut self, cells: Vec<u32>) {
        if cells != self.sampling {
            self.sampling = cells;
            self.schedule.dirty = true;
        }
    }

    /// The sampled cells' values now (only those cells cross to the host), adding the time to
    /// `split`. A failure stops sampling with a notice instead of stopping the simulation.
    pub(super) fn sample(&mut self, split: &mut Vec<(FramePart, Duration)>) -> Option<Samples> {
        if self.sampling.is_empty() {
            return None;
        }
        let sim = self.sim.as_mut()?;
        let started = Instant::now();
        let sampled = sim.sample(&self.sampling);
        split.push((FramePart::Sampling, started.elapsed()));
        match sampled {
            Ok(values) => Some(Samples {
                cells: self.sampling.clone(),
                values,
            }),
            Err(error) => {
                self.sampling.clear();
                self.notice(Level::Warning, format!("probes stopped: {error}"));
                None
            }
        }
    }
}

/// Which way a stroke went through the history.
#[derive(Debug, Clone, Copy)]
enum Direction {
    Undo,
    Redo,
}

/// Whether an undo or a redo did anything; when steps had run since the stroke, or a setting
/// changed back, `said` gets a notice of what it did (see
/// [`crate::sim::paint::UNDO_AFTER_STEPPING`]).
fn took_back(done: HistoryStep, direction: Direction, said: &mut Option<String>) -> bool {
    match done {
        HistoryStep::Nothing => return false,
        HistoryStep::Exact => {}
        HistoryStep::AfterSteps(steps) => {
            *said = Some(match direction {
                Direction::Undo => format!(
                    "undone {steps} steps after the stroke: the painted heat is taken out where \
                     it was painted (heat that spread meanwhile stays where it went); painted \
                     materials change back at the temperatures their cells have reached"
                ),
                Direction::Redo => format!(
                    "redone {steps} steps after the undo: the painted heat is put back where it \
                     was painted (heat that spread meanwhile stays where it went); the painted \
                     materials return at the temperatures their cells have reached"
                ),
            });
        }
        HistoryStep::Setting(change) => {
            *said = Some(match direction {
                Direction::Undo => format!("undone: {change}"),
                Direction::Redo => format!("redone: {change}"),
            });
        }
    }
    true
}
