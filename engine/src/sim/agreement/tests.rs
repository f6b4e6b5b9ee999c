//! Tests of `sim/agreement.rs`.
use super::*;
use crate::compute::Boundary;
use crate::grid::GridSize;

fn field(rows: usize, cols: usize) -> Grid {
    let size = GridSize { rows, cols };
    Grid::from_vec(
        size,
        (0..size.cells()).map(|i| ((i * 37) % 11) as f32).collect(),
    )
    .unwrap()
}

#[test]
fn one_changed_bit_is_found_and_equal_fields_agree() {
    let a = field(3, 4);
    assert_eq!(compare_fields(&a, &a.clone()), None);
    let mut b = a.clone();
    let v = b.as_mut_slice()[6];
    b.as_mut_slice()[6] = f32::from_bits(v.to_bits() + 1);
    let found = compare_fields(&b, &a).unwrap();
    assert_eq!((found.row, found.col, found.differing_cells), (1, 2, 1));
    let size = GridSize { rows: 1, cols: 1 };
    let plus = Grid::from_vec(size, vec![0.0]).unwrap();
    let minus = Grid::from_vec(size, vec![-0.0]).unwrap();
    assert!(compare_fields(&plus, &minus).is_some());
}

#[test]
fn every_window_is_checked_and_a_wrong_end_is_caught() {
    let params = StepParams {
        coeff: 0.2,
        boundary: Boundary::Periodic,
    };
    let mut backend = CpuBackend::with_threads(2).with_method(CpuMethod::Rows);
    backend.upload(&field(20, 9)).unwrap();
    let mut watch = AgreementWatch::new(WindowPolicy::Every(10));
    for step in (0..40).step_by(5) {
        watch.before_advance(step, &mut backend, None).unwrap();
        backend.advance(5, &params).unwrap();
        watch.after_advance(5, params, &mut backend, None).unwrap();
    }
    watch.wait().unwrap();
    let ranges: Vec<(u64, u64)> = watch.history().map(|o| (o.from_step, o.to_step)).collect();
    assert_eq!(ranges, [(0, 10), (10, 20), (20, 30), (30, 40)]);
    assert!(watch.history().all(Outcome::identical));
    assert!(watch.latest().unwrap().reference.starts_with("cpu-blocked"));
    // A window whose recorded advances do not match what the backend did differs.
    watch.before_advance(40, &mut backend, None).unwrap();
    backend.advance(11, &params).unwrap();
    watch.after_advance(10, params, &mut backend, None).unwrap();
    let outcome = watch.wait().unwrap().unwrap();
    assert!(!outcome.identical());
    assert_eq!(watch.counts(), (5, 1));
}

#[test]
fn the_live_check_follows_problems() {
    use crate::compute::CpuBackend;
    use crate::problem::material::find;
    use crate::problem::{HeatProblem, SideCondition};
    use crate::sim::Simulation;
    let size = GridSize::new(19, 23).unwrap();
    let mut problem = HeatProblem::uniform(size, 0.001, find("aluminium").unwrap());
    problem.sides.bottom = SideCondition::Fixed { temperature: 50.0 };
    let field = field(19, 23);
    let backend = CpuBackend::with_threads(2);
    let mut sim = Simulation::new(Box::new(backend), field, Default::default()).unwrap();
    sim.set_agreement_check(Some(WindowPolicy::Every(10)));
    sim.advance(10).unwrap(); // uniform stencil
    sim.set_problem(Some(problem.clone()), true).unwrap();
    sim.advance(10).unwrap();
    sim.advance(10).unwrap();
    problem.sides.bottom = SideCondition::Periodic;
    problem.sides.top = SideCondition::Periodic;
    sim.set_problem(Some(problem), true).unwrap();
    sim.advance(10).unwrap();
    sim.finish_agreement().unwrap();
    let watch = sim.agreement().unwrap();
    assert_eq!(watch.counts(), (4, 0));
    let seconds = sim.simulated_seconds().unwrap();
    assert!(seconds > 0.0);
}
