//! Tests of stepping with thermostats: reproducible decisions however the steps are cut, and
//! the live check replaying the switches.

use super::*;
use crate::problem::Thermostat;
use crate::sim::agreement::WindowPolicy;
use crate::sim::kinds::tests::plate_sim;

/// A 24x24 aluminium plate with a heater disc in the middle under a thermostat, its sides
/// cooled by air at 20 °C.
fn thermostat_sim(every_steps: u64) -> Simulation {
    use crate::problem::{CellKind, Heater, HeaterPower, Shape, SideCondition};
    let mut sim = plate_sim(24, 24);
    let heater = CellKind {
        name: "heater".into(),
        heater: Some(Heater {
            power: HeaterPower::Total(4000.0),
            on: false,
        }),
        ..CellKind::of(crate::problem::material::find("aluminium").unwrap())
    };
    let disc = Shape::Disc {
        centre: (12.0, 12.0),
        radius: 3.0,
    };
    sim.paint_kind(&disc, heater).unwrap();
    sim.end_kind_stroke().unwrap();
    let mut problem = sim.problem().unwrap().clone();
    for side in crate::problem::Side::ALL {
        problem.sides.set(
            side,
            SideCondition::Convective {
                h: 5000.0,
                ambient: 20.0,
            },
        );
    }
    problem.thermostats = vec![Thermostat {
        heater_kind: 1,
        probe: (12, 18),
        setpoint: 27.0,
        deadband: 1.0,
        every_steps,
    }];
    sim.set_problem(Some(problem), true).unwrap();
    sim
}

/// Runs `chunks` (advances of these many steps) and returns the field and the switches.
fn run(chunks: &[u64], every_steps: u64) -> (crate::grid::Grid, Vec<HeaterSwitch>) {
    let mut sim = thermostat_sim(every_steps);
    for &steps in chunks {
        sim.advance(steps).unwrap();
    }
    (sim.field().unwrap(), sim.take_switches())
}

#[test]
fn decisions_do_not_depend_on_how_the_steps_are_cut() {
    let whole = run(&[3000], 10);
    let cut: Vec<u64> = [7, 13, 1, 999, 20, 5]
        .iter()
        .cycle()
        .scan(0u64, |done, &s| {
            let s = s.min(3000 - *done);
            *done += s;
            (s > 0).then_some(s)
        })
        .collect();
    assert_eq!(cut.iter().sum::<u64>(), 3000);
    let pieces = run(&cut, 10);
    assert_eq!(whole.0, pieces.0, "the same field");
    assert_eq!(whole.1, pieces.1, "the same switches");
    let ons = whole.1.iter().filter(|s| s.on).count();
    let offs = whole.1.len() - ons;
    assert!(ons >= 2 && offs >= 2, "{:?}", whole.1);
    assert!(whole.1.iter().all(|s| s.step % 10 == 0));
    // Every switch follows the rule from the probe's temperature.
    for switch in &whole.1 {
        if switch.on {
            assert!(switch.temperature < 26.5, "{switch:?}");
        } else {
            assert!(switch.temperature > 27.5, "{switch:?}");
        }
    }
}

#[test]
fn the_heaters_state_follows_the_switches() {
    let mut sim = thermostat_sim(5);
    let mut problem = sim.problem().unwrap().clone();
    problem.thermostats[0].setpoint = 40.0; // the probe reads 27 °C at first
    sim.set_problem(Some(problem), true).unwrap();
    sim.advance(1).unwrap();
    let first = sim.take_switches();
    assert_eq!(first.len(), 1, "{first:?}");
    assert!(first[0].on && first[0].step == 0);
    assert!(sim.problem().unwrap().kinds[1].heater.unwrap().on);
    let source = sim.compiled_problem().unwrap().tables.source[1];
    assert!(source > 0.0);
}

#[test]
fn the_live_check_replays_the_switches_exactly() {
    let mut sim = thermostat_sim(3);
    sim.set_agreement_check(Some(WindowPolicy::Every(50)));
    for _ in 0..20 {
        sim.advance(50).unwrap();
    }
    sim.finish_agreement().unwrap();
    assert!(sim.take_switches().len() >= 4);
    let watch = sim.agreement().unwrap();
    let (checks, mismatches) = watch.counts();
    assert!(checks >= 19, "{checks}");
    assert_eq!(mismatches, 0, "{:?}", watch.first_mismatch());
}

#[test]
fn the_energy_balance_closes_across_switches() {
    let mut sim = thermostat_sim(10);
    assert!(sim.energy_since_last_balance().unwrap().is_none(), "starts");
    sim.advance(2000).unwrap();
    let balance = sim.energy_since_last_balance().unwrap().unwrap();
    assert!(balance.exchange.sources > 0.0);
    assert!(
        balance.relative_closing_error() < 1e-4,
        "{balance:?}: {}",
        balance.relative_closing_error()
    );
}

#[test]
fn reset_puts_the_heaters_back_as_set_and_a_second_run_switches_as_the_first() {
    let mut sim = thermostat_sim(10);
    sim.advance(3000).unwrap();
    let first = (sim.field().unwrap(), sim.take_switches());
    assert!(first.1.len() >= 2, "{:?}", first.1);
    // Stop with the heater in the state the thermostat last left it: on, which is not how the
    // problem was set.
    let last_on = first.1.iter().rposition(|s| s.on).unwrap();
    let mut again = thermostat_sim(10);
    again.advance(first.1[last_on].step + 1).unwrap();
    let heater_on = |sim: &Simulation| sim.problem().unwrap().kinds[1].heater.unwrap().on;
    assert!(heater_on(&again));
    again.take_switches();
    again.reset().unwrap();
    assert!(!heater_on(&again), "back off, as the problem was set");
    again.advance(3000).unwrap();
    assert_eq!(again.take_switches(), first.1, "the same switches");
    assert_eq!(again.field().unwrap(), first.0, "the same field");
    // A heater the user switched stays as the user switched it.
    let mut kinds = again.problem().unwrap().kinds.clone();
    kinds[1].heater.as_mut().unwrap().on = true;
    again.set_heaters(kinds).unwrap();
    again.reset().unwrap();
    assert!(heater_on(&again), "on, as the user set it last");
}
