//! Unit tests of the heat problem model: its time step and the problems it refuses.

use super::material::find;
use super::*;

fn plate(rows: usize, cols: usize) -> HeatProblem {
    let size = GridSize::new(rows, cols).unwrap();
    HeatProblem::uniform(size, 0.001, find("aluminium").unwrap())
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

#[test]
fn time_steps_and_step_counts_that_cannot_be_run_are_refused_with_their_reason() {
    let mut problem = plate(4, 4);
    problem.kinds[0].material.density = 1e-300;
    problem.kinds[0].material.specific_heat = 1e-300;
    let error = problem.tables().unwrap_err().to_string();
    assert!(error.contains("time step comes to 0e0 s"), "{error}");
    assert!(error.contains("cells of aluminium"), "{error}");

    let mut problem = plate(4, 4);
    problem.time_step = TimeStep::Seconds(1e-320);
    let error = problem.tables().unwrap_err().to_string();
    assert!(error.contains("1e-320 s cannot be stepped"), "{error}");

    let mut problem = plate(4, 4);
    problem.kinds[0].material.conductivity = 1e308;
    let error = problem.tables().unwrap_err().to_string();
    assert!(error.contains("is 1e308 W/m/K, too large"), "{error}");
    assert!(!error.contains("no heat moves"), "{error}");

    let tables = plate(4, 4).tables().unwrap();
    assert_eq!(tables.steps_for(tables.dt * 2.5).unwrap(), 3);
    let most = tables.dt * tables::MAX_STEPS as f64;
    assert_eq!(tables.steps_for(most).unwrap(), tables::MAX_STEPS);
    let error = tables.steps_for(most * 2.0).unwrap_err().to_string();
    assert!(error.contains("(2^53) a run can count"), "{error}");
    assert!(tables.steps_for(f64::INFINITY).is_err());
    assert!(tables.steps_for(1e300).is_err());
}
