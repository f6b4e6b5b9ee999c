//! Tests of undoing settings and probes in the one history with strokes.

use super::*;
use crate::problem::material::find;
use crate::problem::{Heater, HeaterPower, Shape};
use crate::sim::kinds::tests::plate_sim;
use crate::sim::paint::{Brush, HistoryStep};

fn convective() -> SideCondition {
    SideCondition::Convective {
        h: 25.0,
        ambient: 20.0,
    }
}

fn probe(number: u8, row: usize, col: usize) -> ProbePlace {
    ProbePlace { number, row, col }
}

#[test]
fn sides_thermostats_kinds_and_probes_undo_in_the_order_they_were_made() {
    let mut sim = plate_sim(20, 30);
    sim.advance(5).unwrap();
    let field = sim.field().unwrap();
    let original = sim.problem().unwrap().clone();
    // A heater kind painted, then switched off: a stroke, then a setting.
    let heater = CellKind {
        name: "heater".into(),
        heater: Some(Heater {
            power: HeaterPower::Total(40.0),
            on: true,
        }),
        ..CellKind::of(find("copper").unwrap())
    };
    let disc = Shape::Disc {
        centre: (10.0, 10.0),
        radius: 3.0,
    };
    sim.paint_kind(&disc, heater.clone()).unwrap();
    sim.end_kind_stroke().unwrap();
    let index = sim.problem().unwrap().kinds.len() as u8 - 1;
    let switched_off = CellKind {
        heater: Some(Heater {
            power: HeaterPower::Total(40.0),
            on: false,
        }),
        ..heater.clone()
    };
    sim.set_kind(index, switched_off.clone()).unwrap();
    sim.set_side(Side::Top, convective()).unwrap();
    let thermostat = Thermostat {
        heater_kind: index,
        probe: (10, 10),
        setpoint: 60.0,
        deadband: 2.0,
        every_steps: 10,
    };
    sim.set_thermostats(vec![thermostat.clone()]).unwrap();
    sim.place_probes(vec![probe(1, 3, 4), probe(2, 15, 20)], true)
        .unwrap();
    assert_eq!(sim.paint_history().counts(), (5, 0));
    let built = sim.problem().unwrap().clone();

    // Back, newest first: probes, thermostats, side, heater switch, stroke.
    let Ok(HistoryStep::Setting(SettingChange::Probes { .. })) = sim.undo() else {
        panic!("the probes come back first");
    };
    assert!(sim.probes().is_empty());
    let Ok(HistoryStep::Setting(change)) = sim.undo() else {
        panic!("then the thermostats");
    };
    assert_eq!(change.to_string(), "the change of the thermostats");
    assert!(sim.problem().unwrap().thermostats.is_empty());
    let Ok(HistoryStep::Setting(change)) = sim.undo() else {
        panic!("then the side");
    };
    assert_eq!(change.to_string(), "the change of the top side");
    assert_eq!(sim.problem().unwrap().sides, original.sides);
    assert_eq!(
        sim.undo().unwrap(),
        HistoryStep::Setting(SettingChange::Kind {
            index,
            before: Box::new(heater.clone()),
            after: Box::new(switched_off.clone()),
        })
    );
    assert_eq!(sim.problem().unwrap().kinds[usize::from(index)], heater);
    assert_eq!(sim.undo().unwrap(), HistoryStep::Exact, "the stroke");
    assert_eq!(sim.problem().unwrap().map, original.map);
    assert_eq!(sim.field().unwrap(), field, "no step ran: bit for bit");
    assert_eq!(sim.paint_history().counts(), (0, 5));

    // And forward again to the problem as built.
    for _ in 0..5 {
        assert_ne!(sim.redo().unwrap(), HistoryStep::Nothing);
    }
    assert_eq!(sim.problem().unwrap(), &built);
    assert_eq!(sim.probes(), [probe(1, 3, 4), probe(2, 15, 20)]);
    assert_eq!(sim.redo().unwrap(), HistoryStep::Nothing);
}

#[test]
fn a_setting_undone_after_steps_leaves_the_field_as_it_stands() {
    let mut sim = plate_sim(12, 16);
    sim.set_side(Side::Left, SideCondition::Fixed { temperature: 80.0 })
        .unwrap();
    sim.advance(50).unwrap();
    let field = sim.field().unwrap();
    assert!(matches!(sim.undo().unwrap(), HistoryStep::Setting(_)));
    assert_eq!(sim.field().unwrap(), field, "the heat that entered stays");
    assert_eq!(sim.problem().unwrap().sides.left, SideCondition::Insulated);
    assert!(sim.simulated_seconds().unwrap() > 0.0, "time goes on");
}

#[test]
fn changes_that_change_nothing_are_not_kept_and_bad_ones_change_nothing() {
    let mut sim = plate_sim(10, 10);
    sim.set_side(Side::Left, SideCondition::Insulated).unwrap();
    sim.set_thermostats(Vec::new()).unwrap();
    sim.place_probes(Vec::new(), true).unwrap();
    assert_eq!(sim.paint_history().counts(), (0, 0), "nothing changed");
    let error = sim
        .place_probes(vec![probe(1, 3, 3), probe(2, 10, 0)], true)
        .unwrap_err();
    assert!(error.to_string().contains("P2 at (10, 0) lies outside"));
    assert!(sim.probes().is_empty());
    // A periodic side without its partner is refused; the sides stay.
    assert!(sim.set_side(Side::Left, SideCondition::Periodic).is_err());
    assert_eq!(sim.problem().unwrap().sides, Sides::default());
    assert_eq!(sim.paint_history().counts(), (0, 0));
    // Probes placed for the user are not kept for undo.
    sim.place_probes(vec![probe(1, 3, 3)], false).unwrap();
    assert_eq!(sim.paint_history().counts(), (0, 0));
    assert_eq!(sim.probes(), [probe(1, 3, 3)]);
}

#[test]
fn a_new_problem_forgets_its_settings_but_the_probes_and_heat_strokes_stay() {
    let mut sim = plate_sim(10, 12);
    sim.set_side(Side::Top, convective()).unwrap();
    let brush = Brush {
        radius: 2.0,
        amount: 3.0,
        edge: crate::compute::BrushEdge::Hard,
    };
    sim.paint_to(5.0, 5.0, brush).unwrap();
    sim.end_stroke().unwrap();
    sim.place_probes(vec![probe(1, 2, 2)], true).unwrap();
    assert_eq!(sim.paint_history().counts(), (3, 0));
    let other = HeatProblem::uniform(sim.initial_size(), 2e-3, find("copper").unwrap());
    sim.set_problem(Some(other), true).unwrap();
    assert_eq!(sim.paint_history().counts(), (2, 0), "the side change went");
    sim.reset().unwrap();
    assert_eq!(sim.paint_history().counts(), (0, 0));
    assert_eq!(sim.probes(), [probe(1, 2, 2)], "probes stay on the field");
}
