//! Tests of painting kinds: one undo history with the heat brush, the cheap map edit and the
//! live check.

use super::*;
use crate::compute::{CpuBackend, CpuMethod, StepParams};
use crate::grid::{Grid, GridSize};
use crate::problem::material::find;
use crate::problem::{CellKind, HeatProblem, Heater, HeaterPower, Shape};
use crate::sim::agreement::WindowPolicy;
use crate::sim::paint::{Brush, HistoryStep};

/// A plate of aluminium at 20..32 °C, stepped as a problem on the CPU.
pub(crate) fn plate_sim(rows: usize, cols: usize) -> Simulation {
    let size = GridSize::new(rows, cols).unwrap();
    let initial = Grid::from_vec(
        size,
        (0..size.cells()).map(|i| 20.0 + (i % 13) as f32).collect(),
    )
    .unwrap();
    let backend = CpuBackend::with_threads(2).with_method(CpuMethod::Rows);
    let mut sim = Simulation::new(Box::new(backend), initial, StepParams::default()).unwrap();
    let problem = HeatProblem::uniform(size, 1e-3, find("aluminium").unwrap());
    sim.set_problem(Some(problem), true).unwrap();
    sim
}

fn held_copper() -> CellKind {
    CellKind {
        held_temperature: Some(90.0),
        ..CellKind::of(find("copper").unwrap())
    }
}

fn heater() -> CellKind {
    CellKind {
        name: "heater".into(),
        heater: Some(Heater {
            power: HeaterPower::Total(50.0),
            on: true,
        }),
        ..CellKind::of(find("copper").unwrap())
    }
}

const BRUSH: Brush = Brush {
    radius: 3.0,
    amount: 5.0,
    edge: crate::compute::BrushEdge::Soft,
};

#[test]
fn a_stroke_of_kinds_is_one_undo_step_and_comes_back_bit_for_bit() {
    let mut sim = plate_sim(30, 40);
    sim.advance(7).unwrap();
    let field = sim.field().unwrap();
    let map = sim.problem().unwrap().map.clone();
    let disc = Shape::Disc {
        centre: (10.0, 10.0),
        radius: 4.0,
    };
    assert!(sim.paint_kind(&disc, held_copper()).unwrap() > 0);
    let wall = Shape::Wall {
        from: (20.0, 5.0),
        to: (20.0, 35.0),
        width: 2.0,
    };
    assert!(sim.paint_kind(&wall, held_copper()).unwrap() > 0);
    assert_eq!(sim.field().unwrap().get(10, 10), 90.0, "held at 90 °C");
    assert!(sim.end_kind_stroke().unwrap());
    let painted_map = sim.problem().unwrap().map.clone();
    let painted_field = sim.field().unwrap();
    assert_eq!(sim.paint_history().counts(), (1, 0), "one stroke");
    assert_eq!(sim.undo().unwrap(), HistoryStep::Exact);
    assert_eq!(sim.problem().unwrap().map, map);
    assert_eq!(sim.field().unwrap(), field);
    assert_eq!(sim.redo().unwrap(), HistoryStep::Exact);
    assert_eq!(sim.problem().unwrap().map, painted_map);
    assert_eq!(sim.field().unwrap(), painted_field);
    // The compiled problem the backend steps matches a compile of the problem as it stands.
    let compiled = sim.problem().unwrap().compile().unwrap();
    assert_eq!(sim.compiled_problem().unwrap(), &compiled);
}

#[test]
fn heat_and_kinds_share_one_history_and_undo_takes_the_latest() {
    let mut sim = plate_sim(30, 40);
    sim.paint_to(5.0, 5.0, BRUSH).unwrap();
    sim.end_stroke().unwrap();
    let rect = Shape::Rectangle {
        from: (15.0, 15.0),
        to: (25.0, 30.0),
    };
    sim.paint_kind(&rect, heater()).unwrap();
    sim.end_kind_stroke().unwrap();
    let heated = sim.field().unwrap();
    assert_eq!(sim.paint_history().counts(), (2, 0));
    assert!(sim.undo_stroke().unwrap(), "the kinds first");
    assert!(sim.problem().unwrap().map.iter().all(|&k| k == 0));
    assert_eq!(sim.field().unwrap(), heated, "kinds only");
    assert!(sim.undo_stroke().unwrap(), "then the heat");
    assert_eq!(sim.field().unwrap(), sim.initial().unwrap().clone());
    assert_eq!(sim.paint_history().counts(), (0, 2));
}

#[test]
fn undo_after_steps_takes_out_exactly_the_heat_the_stroke_added() {
    let mut sim = plate_sim(30, 40);
    let total = |sim: &mut Simulation| -> f64 {
        sim.field()
            .unwrap()
            .as_slice()
            .iter()
            .map(|&v| f64::from(v))
            .sum()
    };
    sim.advance(3).unwrap();
    let before = total(&mut sim);
    sim.paint_to(12.0, 12.0, BRUSH).unwrap();
    sim.paint_to(12.0, 25.0, BRUSH).unwrap();
    sim.end_stroke().unwrap();
    let added = total(&mut sim) - before;
    assert!(added > 10.0, "{added}");
    sim.advance(40).unwrap(); // insulated: the total stays
    assert_eq!(sim.undo().unwrap(), HistoryStep::AfterSteps(40));
    let after_undo = total(&mut sim);
    assert!(
        (after_undo - before).abs() < 1e-3 * added,
        "{before} -> {after_undo}: the stroke's {added} taken out"
    );
    // No old values pasted in: the painted cells are not back at their step-3 values.
    assert_eq!(sim.redo().unwrap(), HistoryStep::AfterSteps(0));
    assert!((total(&mut sim) - (before + added)).abs() < 1e-3 * added);
}

#[test]
fn one_shape_at_2000_squared_costs_a_pass_over_the_map() {
    let mut sim = plate_sim(2000, 2000);
    let disc = |c: f32| Shape::Disc {
        centre: (1000.0, c),
        radius: 10.0,
    };
    sim.paint_kind(&disc(500.0), heater()).unwrap(); // the new kind
    let started = std::time::Instant::now();
    let shapes = 5;
    for i in 0..shapes {
        sim.paint_kind(&disc(600.0 + 20.0 * i as f32), heater())
            .unwrap();
    }
    let per_shape = started.elapsed() / shapes;
    sim.end_kind_stroke().unwrap();
    println!("one painted disc at 2000x2000 on the CPU: {per_shape:?}");
    assert!(per_shape.as_secs_f64() < 2.0, "{per_shape:?}");
}

#[test]
fn the_live_check_stays_exact_while_painting_kinds() {
    let mut sim = plate_sim(33, 47);
    sim.set_agreement_check(Some(WindowPolicy::Every(6)));
    for round in 0..6 {
        sim.advance(2).unwrap();
        let disc = Shape::Disc {
            centre: (round as f32 * 5.0, 20.0),
            radius: 3.0,
        };
        let kind = if round % 2 == 0 {
            held_copper()
        } else {
            heater()
        };
        sim.paint_kind(&disc, kind).unwrap();
        sim.advance(1).unwrap();
        sim.paint_to(round as f32 * 5.0 + 2.0, 40.0, BRUSH).unwrap();
        sim.end_stroke().unwrap();
        sim.end_kind_stroke().unwrap();
        if round % 3 == 1 {
            sim.undo().unwrap();
            sim.undo().unwrap();
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
fn a_part_moves_and_goes_as_one_undo_step_each_and_the_base_stays() {
    let mut sim = plate_sim(20, 30);
    let copper = CellKind::of(find("copper").unwrap());
    let rect = Shape::Rectangle {
        from: (2.0, 3.0),
        to: (6.0, 8.0),
    };
    assert_eq!(sim.paint_kind(&rect, copper.clone()).unwrap(), 20);
    sim.end_kind_stroke().unwrap();
    let map_of = |sim: &Simulation| sim.problem().unwrap().map.clone();
    let painted = map_of(&sim);
    // Two rows down and ten columns right: 20 cells leave, 20 arrive, none overlap.
    assert_eq!(sim.move_part((3, 4), (2, 10)).unwrap(), 40);
    sim.end_kind_stroke().unwrap();
    let moved = map_of(&sim);
    let at = |map: &[u8], r: usize, c: usize| map[r * 30 + c];
    assert_eq!(at(&moved, 2, 3), 0, "the base where it was");
    assert_eq!(
        at(&moved, 4, 13),
        at(&painted, 2, 3),
        "the part where it went"
    );
    assert_eq!(moved.iter().filter(|&&k| k != 0).count(), 20);
    // Half off the grid: the cells moved past the right side are gone.
    sim.move_part((4, 13), (0, 14)).unwrap();
    sim.end_kind_stroke().unwrap();
    assert_eq!(map_of(&sim).iter().filter(|&&k| k != 0).count(), 12);
    // Deleted: only the base is left.
    sim.delete_part((5, 28)).unwrap();
    sim.end_kind_stroke().unwrap();
    assert!(map_of(&sim).iter().all(|&k| k == 0));
    // Each was one step of undo.
    assert_eq!(sim.paint_history().counts(), (4, 0));
    for _ in 0..3 {
        sim.undo().unwrap();
    }
    assert_eq!(map_of(&sim), painted);
    // The base is not a part; a cell outside the grid is refused.
    assert!(sim
        .move_part((0, 0), (1, 1))
        .unwrap_err()
        .to_string()
        .contains("is the base"));
    assert!(sim
        .delete_part((20, 0))
        .unwrap_err()
        .to_string()
        .contains("outside"));
}
