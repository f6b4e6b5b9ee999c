//! Tests of the run loop on the CPU: chunks and outputs where the schedule puts them, the
//! energy booked on the backend equal to the balance of the fields read back, and every halt.

use std::cell::Cell;

use super::*;
use crate::compute::{CpuBackend, StepParams};
use crate::grid::{Grid, GridSize};
use crate::problem::energy::{stored_energy, EnergyBalance};
use crate::problem::{CellKind, Heater, HeaterPower, Shape, Side, SideCondition};
use crate::sim::kinds::tests::plate_sim;

/// Records what the loop tells it; stops after `stop_after` chunks.
#[derive(Default)]
struct Recorder {
    chunks: Vec<Chunk>,
    outputs: Vec<(u64, Due)>,
    stop_after: Option<usize>,
    asked: Cell<u64>,
}

impl RunDriver for Recorder {
    fn stop_requested(&self) -> bool {
        self.asked.set(self.asked.get() + 1);
        self.stop_after.is_some_and(|n| self.chunks.len() >= n)
    }

    fn chunk_done(&mut self, _: &mut Simulation, chunk: &Chunk) -> Result<()> {
        self.chunks.push(chunk.clone());
        Ok(())
    }

    fn outputs_due(&mut self, simulation: &mut Simulation, due: Due) -> Result<()> {
        self.outputs.push((simulation.step_count(), due));
        Ok(())
    }
}

fn started(sim: &mut Simulation, checks: FieldChecks, keep_windows: bool) -> RunLoop {
    let mut run = RunLoop::new(checks, keep_windows);
    run.restart(sim).unwrap();
    run
}

fn schedule(end_step: u64, chunk: u64, save_every: u64, video_every: u64) -> RunSchedule {
    RunSchedule {
        start_step: 0,
        end_step,
        chunk,
        save_every,
        video_every,
        check_every: 0,
    }
}

/// The plate of aluminium with a heater in the middle and cooled sides: energy comes in and
/// goes out.
fn heated_plate(power: f64) -> Simulation {
    let mut sim = plate_sim(20, 24);
    let heater = CellKind {
        name: "heater".into(),
        heater: Some(Heater {
            power: HeaterPower::Total(power),
            on: true,
        }),
        ..CellKind::of(crate::problem::material::find("aluminium").unwrap())
    };
    let disc = Shape::Disc {
        centre: (10.0, 12.0),
        radius: 3.0,
    };
    sim.paint_kind(&disc, heater).unwrap();
    sim.end_kind_stroke().unwrap();
    let mut problem = sim.problem().unwrap().clone();
    problem.sides.set(
        Side::Top,
        SideCondition::Convective {
            h: 200.0,
            ambient: 20.0,
        },
    );
    sim.set_problem(Some(problem), true).unwrap();
    sim
}

#[test]
fn chunks_and_outputs_fall_where_the_schedule_says() {
    let mut sim = heated_plate(50.0);
    let mut run = started(&mut sim, FieldChecks::EveryAdvance, true);
    let mut driver = Recorder::default();
    let end = run
        .run(&mut sim, &schedule(95, 20, 40, 30), &mut driver)
        .unwrap();
    assert!(matches!(end, RunEnd::Completed));
    assert_eq!(sim.step_count(), 95);
    let stops: Vec<(u64, u64)> = driver.chunks.iter().map(|c| (c.from, c.to)).collect();
    assert_eq!(
        stops,
        vec![
            (0, 20),
            (20, 30),
            (30, 40),
            (40, 60),
            (60, 80),
            (80, 90),
            (90, 95)
        ]
    );
    let frames: Vec<u64> = driver
        .outputs
        .iter()
        .filter(|(_, due)| due.frames)
        .map(|&(step, _)| step)
        .collect();
    assert_eq!(frames, vec![0, 40, 80, 95]);
    let video: Vec<u64> = driver
        .outputs
        .iter()
        .filter(|(_, due)| due.video)
        .map(|&(step, _)| step)
        .collect();
    assert_eq!(video, vec![0, 30, 60, 90]);
    let rows: u64 = driver
        .chunks
        .iter()
        .map(|c| c.timing.as_ref().unwrap().steps)
        .sum();
    assert_eq!(rows, 95);
}

#[test]
fn the_energy_booked_on_the_backend_is_the_balance_of_the_fields() {
    let mut sim = heated_plate(50.0);
    let before = sim.field().unwrap();
    let mut run = started(&mut sim, FieldChecks::EveryAdvance, true);
    let mut driver = Recorder::default();
    run.run(&mut sim, &schedule(300, 70, 0, 0), &mut driver)
        .unwrap();
    let after = sim.field().unwrap();
    let compiled = sim.compiled_problem().unwrap();
    let stored = |field: &Grid| {
        stored_energy(
            &compiled.tables,
            &compiled.map,
            field.as_slice(),
            field.cols(),
        )
    };
    let ledger = run.ledger();
    assert_eq!(ledger.windows.len(), 5);
    let budget = ledger.budget.unwrap();
    assert_eq!((budget.from_step, budget.window.to_step), (0, 300));
    // The device's sums are the host's, bit for bit.
    assert_eq!(budget.window.stored_before, stored(&before));
    assert_eq!(budget.window.stored_after, stored(&after));
    for pair in ledger.windows.windows(2) {
        assert_eq!(pair[0].to_step, pair[1].from_step);
        assert_eq!(pair[0].stored_after, pair[1].stored_before);
    }
    let heat_in = budget.window.exchange.sources;
    assert!(heat_in > 0.0, "the heater put in {heat_in}");
    assert!(budget.window.exchange.side(Side::Top) < 0.0);
    let balance: EnergyBalance = budget.window.balance();
    assert!(
        balance.relative_closing_error() < 1e-3,
        "{}",
        balance.relative_closing_error()
    );
}

#[test]
fn a_driver_stops_the_run_between_pieces() {
    let mut sim = heated_plate(50.0);
    let mut run = started(&mut sim, FieldChecks::EveryAdvance, true);
    let mut driver = Recorder {
        stop_after: Some(2),
        ..Recorder::default()
    };
    let end = run
        .run(&mut sim, &schedule(1000, 10, 0, 0), &mut driver)
        .unwrap();
    assert!(matches!(end, RunEnd::Halted(Halt::Interrupted)));
    assert_eq!(sim.step_count(), 20);
    assert!(driver.asked.get() >= 3);
}

#[test]
fn a_heater_that_draws_too_much_stops_below_absolute_zero() {
    let mut sim = heated_plate(-5e7);
    let mut run = started(&mut sim, FieldChecks::EveryAdvance, true);
    let mut driver = Recorder::default();
    let end = run
        .run(&mut sim, &schedule(100_000, 1000, 0, 0), &mut driver)
        .unwrap();
    let RunEnd::Halted(Halt::BelowAbsoluteZero(HeatlabError::BelowAbsoluteZero {
        coldest, ..
    })) = end
    else {
        panic!("{end:?}");
    };
    assert!(f64::from(coldest) < -ZERO_CELSIUS_IN_KELVIN);
    assert!(sim.step_count() < 100_000);
}

#[test]
fn an_unstable_plate_keeps_its_last_finite_state_and_its_frames() {
    let size = GridSize::new(16, 16).unwrap();
    let initial = Grid::from_vec(size, (0..256).map(|i| (i % 7) as f32).collect()).unwrap();
    let params = StepParams {
        coeff: 0.9,
        ..StepParams::default()
    };
    let mut sim = Simulation::new(Box::new(CpuBackend::with_threads(1)), initial, params).unwrap();
    let mut run = started(&mut sim, FieldChecks::EveryAdvance, false);
    let mut driver = Recorder::default();
    let end = run
        .run(&mut sim, &schedule(10_000, 100, 0, 0), &mut driver)
        .unwrap();
    let RunEnd::Halted(Halt::NonFinite {
        error: HeatlabError::NonFinite { step, .. },
        last_good: Some(good),
    }) = end
    else {
        panic!("{end:?}");
    };
    assert_eq!(step, good + 1);
    assert_eq!(sim.step_count(), good);
    assert!(sim.field().unwrap().first_non_finite().is_none());
    assert_eq!(
        driver.outputs.last().map(|(s, d)| (*s, d.frames)),
        Some((good, true))
    );
}

#[test]
fn an_overflowing_source_is_found_by_the_statistics() {
    let mut sim = heated_plate(1e40);
    let mut run = started(&mut sim, FieldChecks::EveryAdvance, false);
    let mut driver = Recorder::default();
    let end = run
        .run(&mut sim, &schedule(1_000_000, 1000, 0, 0), &mut driver)
        .unwrap();
    let RunEnd::Halted(Halt::NonFinite {
        error: HeatlabError::NonFiniteWithin { from, to, .. },
        last_good: None,
    }) = end
    else {
        panic!("{end:?}");
    };
    assert!(
        from < to && to == sim.step_count(),
        "{from} {to} {}",
        sim.step_count()
    );
}

#[test]
fn an_edit_starts_the_budget_again() {
    let mut sim = heated_plate(50.0);
    let mut run = started(&mut sim, FieldChecks::ByDriver, false);
    assert!(matches!(
        run.advance(&mut sim, 10).unwrap(),
        Advanced::Stepped(_)
    ));
    assert!(run.book_energy(&mut sim).unwrap().is_some());
    sim.reset().unwrap();
    assert!(run.book_energy(&mut sim).unwrap().is_none());
    assert_eq!(run.ledger().budget_restarts, 1);
    assert!(run.ledger().windows.is_empty(), "the app keeps no windows");
    run.advance(&mut sim, 5).unwrap();
    let window = run.book_energy(&mut sim).unwrap().unwrap();
    assert_eq!(run.ledger().budget.unwrap().window, window);
}

/// A gallery problem on two CPU threads, booking energy.
fn gallery_sim(name: &str) -> Simulation {
    let scenario = crate::scenario::gallery::find(name)
        .unwrap()
        .scenario()
        .unwrap();
    let backend = CpuBackend::with_threads(2).with_method(crate::compute::CpuMethod::Rows);
    let mut sim = Simulation::new(
        Box::new(backend),
        scenario.initial.clone(),
        StepParams::default(),
    )
    .unwrap();
    sim.set_problem(Some(scenario.problem), true).unwrap();
    sim
}

#[test]
fn every_gallery_balance_closes_within_its_round_off_bound() {
    for entry in crate::scenario::gallery::GALLERY.iter() {
        let mut sim = gallery_sim(entry.name);
        let mut run = started(&mut sim, FieldChecks::EveryAdvance, true);
        run.run(
            &mut sim,
            &schedule(4000, 1000, 0, 0),
            &mut Recorder::default(),
        )
        .unwrap();
        let ledger = run.ledger();
        assert_eq!(ledger.windows.len(), 4, "{}", entry.name);
        for window in &ledger.windows {
            assert!(window.round_off_bound > 0.0, "{}: {window:?}", entry.name);
            assert!(window.within_round_off, "{}: {window:?}", entry.name);
        }
        let budget = ledger.budget.unwrap().window;
        assert!(budget.within_round_off, "{}: {budget:?}", entry.name);
        // Heat that moves only inside (the two blocks, a periodic plate) leaves rounding
        // alone, a small share of what it may be (the scale of one step read 1.0 here).
        if budget.heat_crossed == 0.0 {
            assert!(
                budget.relative_closing_error < 0.1,
                "{}: {budget:?}",
                entry.name
            );
        }
        println!(
            "{}: closing {:.2e} J/m, crossed {:.2e}, bound {:.2e}, relative {:.2e}",
            entry.name,
            budget.closing_error,
            budget.heat_crossed,
            budget.round_off_bound,
            budget.relative_closing_error
        );
    }
}

#[test]
fn a_stalled_steady_state_stays_within_its_round_off_bound() {
    // From the solved steady state the explicit steps barely move the f32 field: the flows
    // booked each step are not all stored, which is what the bound allows for.
    let mut sim = gallery_sim("heat-sink");
    sim.solve_steady(&crate::solve::SolveOptions::default())
        .unwrap();
    let mut run = started(&mut sim, FieldChecks::EveryAdvance, true);
    run.run(
        &mut sim,
        &schedule(20_000, 5000, 0, 0),
        &mut Recorder::default(),
    )
    .unwrap();
    let budget = run.ledger().budget.unwrap().window;
    assert!(budget.heat_crossed > 0.0, "{budget:?}");
    assert!(budget.within_round_off, "{budget:?}");
    // The steady state: stored energy hardly changes while heat goes through.
    let stored_change = (budget.stored_after - budget.stored_before).abs();
    assert!(stored_change < 1e-3 * budget.heat_crossed, "{budget:?}");
    assert!(budget.relative_closing_error < 1e-2, "{budget:?}");
}

#[test]
fn implicit_steps_close_within_their_solves_bound() {
    let mut sim = gallery_sim("heat-sink");
    let dt = 100.0 * sim.compiled_problem().unwrap().tables.dt;
    sim.set_stepping(crate::sim::solve::Stepping::Implicit {
        scheme: crate::solve::ImplicitScheme::BackwardEuler,
        dt,
        options: crate::solve::SolveOptions::default(),
    })
    .unwrap();
    let mut run = started(&mut sim, FieldChecks::EveryAdvance, true);
    run.run(&mut sim, &schedule(20, 5, 0, 0), &mut Recorder::default())
        .unwrap();
    let budget = run.ledger().budget.unwrap().window;
    assert!(budget.heat_crossed > 0.0, "{budget:?}");
    assert!(budget.within_round_off, "{budget:?}");
    assert!(budget.relative_closing_error < 1e-2, "{budget:?}");
}
