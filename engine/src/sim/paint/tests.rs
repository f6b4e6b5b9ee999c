//! Tests of strokes of heat: dabs along the path, undo and redo, the live check, the bound.

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
