//! Unit tests of the heat problem model on the CPU reference.

use super::energy::{stored_energy, EnergyBalance};
use super::material::find;
use super::*;
use crate::compute::{Backend, CpuBackend, ProblemUpload};

fn plate(rows: usize, cols: usize) -> HeatProblem {
    let size = GridSize::new(rows, cols).unwrap();
    HeatProblem::uniform(size, 0.001, find("aluminium").unwrap())
}

fn ramp(size: GridSize) -> Grid {
    Grid::from_vec(
        size,
        (0..size.cells()).map(|i| 20.0 + (i % 13) as f32).collect(),
    )
    .unwrap()
}

/// `steps` steps of `problem` from `field` on a CPU backend of `threads` threads, with the
/// energy booked.
fn run(problem: &HeatProblem, field: &Grid, threads: usize, steps: u64) -> (Grid, EnergyExchange) {
    let compiled = problem.compile().unwrap();
    let mut cpu = CpuBackend::with_threads(threads);
    cpu.upload(field).unwrap();
    cpu.set_problem(Some(ProblemUpload::of(&compiled, true)))
        .unwrap();
    cpu.advance(steps, &Default::default()).unwrap();
    (cpu.download().unwrap(), cpu.take_energy_exchange().unwrap())
}

#[test]
fn an_insulated_plate_keeps_its_energy_and_evens_out() {
    let problem = plate(23, 17);
    let field = ramp(problem.size);
    let tables = problem.tables().unwrap();
    let before = stored_energy(&tables, &problem.map, field.as_slice(), field.cols());
    let (after, exchange) = run(&problem, &field, 2, 3000);
    let stored = stored_energy(&tables, &problem.map, after.as_slice(), after.cols());
    assert_eq!(exchange.total(), 0.0);
    assert!(
        ((stored - before) / before).abs() < 1e-6,
        "{before} -> {stored}"
    );
    let (lo, hi) = after
        .as_slice()
        .iter()
        .fold((f32::MAX, f32::MIN), |(lo, hi), &v| (lo.min(v), hi.max(v)));
    assert!(hi - lo < 0.01, "not evened out: {lo}..{hi}");
}

#[test]
fn the_reference_does_not_depend_on_the_thread_count() {
    let mut problem = plate(37, 29);
    let copper = problem
        .kind_index(CellKind::of(find("copper").unwrap()))
        .unwrap();
    problem.paint(copper, |r, c| (r + 2 * c) % 5 == 0);
    problem.sides.left = SideCondition::Fixed { temperature: 80.0 };
    problem.sides.top = SideCondition::Convective {
        h: 50.0,
        ambient: 5.0,
    };
    problem.sides.bottom = SideCondition::Flux { flux: 2000.0 };
    let field = ramp(problem.size);
    let (one, _) = run(&problem, &field, 1, 57);
    let (three, _) = run(&problem, &field, 3, 57);
    assert_eq!(one.as_slice(), three.as_slice());
}

#[test]
fn held_cells_and_heaters_close_the_energy_balance() {
    let mut problem = plate(31, 41);
    let hot = CellKind {
        name: "hot plate".into(),
        held_temperature: Some(90.0),
        ..CellKind::of(find("copper").unwrap())
    };
    let heater = CellKind {
        name: "heater".into(),
        heater: Some(Heater {
            power: HeaterPower::Total(150.0),
            on: true,
        }),
        ..CellKind::of(find("silicon").unwrap())
    };
    let hot = problem.kind_index(hot).unwrap();
    let heater = problem.kind_index(heater).unwrap();
    problem.paint(hot, |r, c| r < 3 && c < 10);
    problem.paint(heater, |r, c| {
        (10..14).contains(&r) && (20..25).contains(&c)
    });
    problem.sides = Sides::all(SideCondition::Convective {
        h: 25.0,
        ambient: 10.0,
    });
    problem.sides.right = SideCondition::Flux { flux: -500.0 };
    let mut field = ramp(problem.size);
    problem.apply_held(&mut field).unwrap();
    let tables = problem.tables().unwrap();
    let (after, exchange) = run(&problem, &field, 2, 500);
    assert!(
        after.as_slice()[0] == 90.0 && after.as_slice()[9] == 90.0,
        "held cells moved"
    );
    let balance = EnergyBalance {
        stored_before: stored_energy(&tables, &problem.map, field.as_slice(), field.cols()),
        stored_after: stored_energy(&tables, &problem.map, after.as_slice(), after.cols()),
        exchange,
    };
    assert!(exchange.sources > 0.0 && exchange.held > 0.0 && exchange.side(Side::Right) < 0.0);
    let sources = 150.0 * 500.0 * tables.dt;
    assert!((exchange.sources - sources).abs() < 1e-6 * sources); // f32 gains
    assert!(
        balance.relative_closing_error() < 1e-5,
        "energy balance does not close: {balance:?}"
    );
}

#[test]
fn the_time_step_is_a_fraction_of_the_stiffest_cell_or_refused_above_it() {
    let mut problem = plate(8, 8);
    let alpha = problem.kinds[0].material.diffusivity();
    // Insulated uniform plate: the limit is dx² / (4 alpha).
    let limit = problem.tables().unwrap().stability_limit;
    assert!((limit - 1e-6 / (4.0 * alpha)).abs() < 1e-12 * limit.max(1.0));
    assert!((problem.tables().unwrap().dt - DEFAULT_STEP_FRACTION * limit).abs() < 1e-15);
    // A fixed side puts its cells half a cell from the boundary: a stiffer limit, dx²/(5 alpha).
    problem.sides.left = SideCondition::Fixed { temperature: 0.0 };
    let fixed = problem.tables().unwrap().stability_limit;
    assert!((fixed - 1e-6 / (5.0 * alpha)).abs() < 1e-9 * fixed);
    problem.time_step = TimeStep::Seconds(fixed * 1.01);
    let error = problem.tables().unwrap_err().to_string();
    assert!(error.contains("stability limit"), "{error}");
    problem.time_step = TimeStep::Seconds(fixed);
    assert_eq!(problem.tables().unwrap().dt, fixed);
}

#[test]
fn bad_problems_are_named() {
    let mut problem = plate(4, 4);
    problem.sides.left = SideCondition::Periodic;
    assert!(problem.check().unwrap_err().to_string().contains("pairs"));
    problem.sides.right = SideCondition::Periodic;
    problem.check().unwrap();
    problem.map[3] = 5;
    assert!(problem.check().unwrap_err().to_string().contains("kind 5"));
    problem.map[3] = 0;
    problem.spacing = 0.0;
    assert!(problem.check().unwrap_err().to_string().contains("spacing"));
    problem.spacing = 0.01;
    problem.sides.top = SideCondition::Convective {
        h: 0.0,
        ambient: 20.0,
    };
    assert!(problem
        .check()
        .unwrap_err()
        .to_string()
        .contains("top side"));
}

#[test]
fn the_live_check_follows_problems() {
    use crate::sim::agreement::WindowPolicy;
    use crate::sim::Simulation;
    let mut problem = plate(19, 23);
    problem.sides.bottom = SideCondition::Fixed { temperature: 50.0 };
    let field = ramp(problem.size);
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

#[test]
fn a_new_side_kind_keeps_the_temperature_it_can() {
    let fixed = SideCondition::Fixed { temperature: 80.0 };
    assert_eq!(
        SideKind::Convective.condition(fixed),
        SideCondition::Convective {
            h: 10.0,
            ambient: 80.0
        }
    );
    assert_eq!(
        SideKind::Fixed.condition(SideCondition::Insulated),
        SideCondition::Fixed { temperature: 20.0 }
    );
    for kind in SideKind::ALL {
        assert_eq!(kind.condition(fixed).kind(), kind);
    }
}

/// `SideKind::ALL` is the one hand-written list of side kinds, which the compiler cannot check:
/// serde's derive on `SideCondition` knows every variant, and names each as `SideKind::name`
/// must (saved states write those names, scenario files the kind's).
#[test]
fn every_side_kind_is_listed_once_and_named_as_serde_names_it() {
    let error = serde_json::from_str::<SideCondition>(r#"{"type":"no such kind"}"#)
        .unwrap_err()
        .to_string();
    let listed = error
        .split_once("expected one of ")
        .map_or("", |(_, names)| names);
    let mut serde_names: Vec<&str> = listed.split('`').skip(1).step_by(2).collect();
    let mut names: Vec<&str> = SideKind::ALL.iter().map(|kind| kind.name()).collect();
    serde_names.sort_unstable();
    names.sort_unstable();
    assert_eq!(names, serde_names, "{error}");
    names.dedup();
    assert_eq!(names.len(), SideKind::ALL.len());
    for kind in SideKind::ALL {
        let written = serde_json::to_value(kind.condition(SideCondition::Insulated)).unwrap();
        assert_eq!(written["type"], kind.name());
        assert_eq!(SideKind::parse(&kind.name().to_uppercase()).unwrap(), kind);
    }
    let unknown = SideKind::parse("sticky").unwrap_err().to_string();
    for kind in SideKind::ALL {
        assert!(unknown.contains(kind.name()), "{unknown}");
    }
}
