//! A field split over thread ranks against the same run on one CPU backend: every gallery
//! problem (materials, heaters, held cells, sides, thermostats, wrapping rows), the plate under
//! every boundary, cells gathered and written, bit for bit; the energy booked within rounding.

#![expect(
    clippy::unwrap_used,
    reason = "tests: a failed unwrap is the test's failure"
)]

use std::path::Path;

use heatlab_engine::compute::{
    Backend, BackendChoice, Boundary, CpuBackend, CpuMethod, KernelChoice, StepParams,
};
use heatlab_engine::distributed::{
    serve, thread_links, OpenRequest, OverlapChoice, SplitBackend, SplitOptions,
};
use heatlab_engine::grid::{Grid, GridSize};
use heatlab_engine::problem::energy::EnergyBalance;
use heatlab_engine::scenario::gallery::GALLERY;
use heatlab_engine::session::start::Start;

/// Runs `body` with a backend split over `ranks` thread ranks (CPU bands), the other ranks
/// serving it; every rank has ended when it returns.
fn with_split<T>(
    ranks: usize,
    halo_depth: Option<usize>,
    body: impl FnOnce(SplitBackend) -> T,
) -> T {
    let mut links = thread_links(ranks).into_iter();
    let leader = links.next().unwrap();
    std::thread::scope(|scope| {
        let followers: Vec<_> = links
            .map(|link| scope.spawn(move || serve(Box::new(link))))
            .collect();
        let options = SplitOptions {
            open: OpenRequest {
                backend: BackendChoice::Cpu,
                kernel: KernelChoice::Auto,
                overlap: OverlapChoice::On,
            },
            halo_depth,
            host_halos: false,
        };
        let out = body(SplitBackend::open(Box::new(leader), options, Default::default()).unwrap());
        for follower in followers {
            follower.join().unwrap().unwrap();
        }
        out
    })
}

fn one_rank() -> Box<dyn Backend> {
    Box::new(CpuBackend::with_threads(2).with_method(CpuMethod::Rows))
}

fn bits(grid: &Grid) -> Vec<u32> {
    grid.as_slice().iter().map(|v| v.to_bits()).collect()
}

/// What a run of a gallery problem leaves: the field, the stored energy, the energy booked,
/// the thermostats' switches and the field's statistics.
#[derive(Debug)]
struct Outcome {
    field: Vec<u32>,
    laplacian: Vec<u32>,
    stored: f64,
    balance: Option<EnergyBalance>,
    switches: Vec<String>,
    min_max: (f32, f32),
}

fn run_problem(name: &str, backend: Box<dyn Backend>, pieces: &[u64]) -> Outcome {
    let entry = GALLERY.iter().find(|e| e.name == name).unwrap();
    let start = Start::of_scenario(entry.scenario().unwrap(), Path::new(name));
    let mut sim = start
        .into_simulation(backend, StepParams::default())
        .unwrap();
    sim.energy_since_last_balance().unwrap();
    for &steps in pieces {
        sim.advance(steps).unwrap();
    }
    let stats = sim.statistics().unwrap();
    Outcome {
        field: bits(&sim.field().unwrap()),
        laplacian: bits(&sim.laplacian().unwrap()),
        stored: sim.backend_mut().stored_energy().unwrap(),
        balance: sim.energy_since_last_balance().unwrap(),
        switches: sim
            .take_switches()
            .iter()
            .map(|s| format!("{s:?}"))
            .collect(),
        min_max: (stats.min, stats.max),
    }
}

fn assert_same(name: &str, ranks: usize, split: &Outcome, whole: &Outcome) {
    assert!(
        split.field == whole.field,
        "{name} on {ranks} ranks: the field differs"
    );
    assert!(
        split.laplacian == whole.laplacian,
        "{name} on {ranks} ranks: the Laplacian differs"
    );
    assert_eq!(
        split.stored.to_bits(),
        whole.stored.to_bits(),
        "{name}: stored energy"
    );
    assert_eq!(
        split.switches, whole.switches,
        "{name}: thermostat switches"
    );
    assert_eq!(split.min_max, whole.min_max, "{name}: min and max");
    let (Some(a), Some(b)) = (split.balance, whole.balance) else {
        panic!("{name}: no energy balance");
    };
    let scale = b.exchange.total().abs().max(b.stored_after.abs()).max(1.0);
    assert!(
        (a.exchange.total() - b.exchange.total()).abs() <= 1e-9 * scale,
        "{name}: energy booked {} against {}",
        a.exchange.total(),
        b.exchange.total()
    );
}

#[test]
fn every_gallery_problem_split_over_two_ranks_equals_one_rank() {
    let pieces = [1, 6, 13, 20];
    for entry in &GALLERY {
        let whole = run_problem(entry.name, one_rank(), &pieces);
        let split = with_split(2, None, |split| {
            run_problem(entry.name, Box::new(split), &pieces)
        });
        assert_same(entry.name, 2, &split, &whole);
    }
}

#[test]
fn problems_with_thermostats_held_cells_and_wrapping_rows_on_three_and_four_ranks() {
    let pieces = [3, 1, 17, 40];
    for name in [
        "heater-thermostat",
        "heat-sink",
        "periodic-plate",
        "thermal-bridge",
    ] {
        let whole = run_problem(name, one_rank(), &pieces);
        for (ranks, depth) in [(3, Some(1)), (4, None), (3, Some(5))] {
            let split = with_split(ranks, depth, |split| {
                run_problem(name, Box::new(split), &pieces)
            });
            assert_same(name, ranks, &split, &whole);
        }
    }
}

fn plate(rows: usize, cols: usize) -> Grid {
    Grid::from_fn(GridSize::new(rows, cols).unwrap(), |r, c| {
        ((r * 7919 + c * 104_729) % 1009) as f32 / 1009.0 + if (r + c) % 3 == 0 { 1.5 } else { 0.0 }
    })
}

#[test]
fn the_plate_under_every_boundary_with_cells_written_between_steps() {
    let start = plate(23, 9);
    let cells = [0u32, 8, 9, 100, 206, 120, 57];
    let values = [5.0f32, -0.0, 7.5, 1e-3, -2.0, 3.25, 9.0];
    for boundary in Boundary::ALL {
        let params = StepParams {
            coeff: 0.2,
            boundary,
        };
        let drive = |backend: &mut dyn Backend| {
            backend.upload(&start).unwrap();
            backend.advance(7, &params).unwrap();
            backend.scatter(&cells, &values).unwrap();
            backend.advance(5, &params).unwrap();
            let gathered = backend.gather(&cells).unwrap();
            (
                bits(&backend.download().unwrap()),
                bits(&backend.laplacian(boundary).unwrap()),
                bits(&backend.laplacian(Boundary::Periodic).unwrap()),
                gathered.iter().map(|v| v.to_bits()).collect::<Vec<_>>(),
            )
        };
        let whole = drive(one_rank().as_mut());
        for ranks in [2, 3, 4] {
            let split = with_split(ranks, Some(2), |mut split| drive(&mut split));
            assert!(split == whole, "{boundary:?} on {ranks} ranks differs");
        }
    }
}

#[test]
fn a_failing_rank_is_named_and_the_ranks_stay_in_step() {
    with_split(3, Some(4), |mut split| {
        // Three ranks of 9 rows leave 3 rows a band, fewer than the halo's 4.
        let refused = split.upload(&plate(9, 5)).unwrap_err();
        assert!(
            refused.to_string().contains("fewer than the halo depth"),
            "{refused}"
        );
        split.upload(&plate(30, 5)).unwrap();
        let outside = split.gather(&[150]).unwrap_err();
        assert!(outside.to_string().contains("150"), "{outside}");
        // No problem is held: every rank refuses to book energy; rank 0 says so first.
        let error = split.take_energy_exchange().unwrap_err();
        assert!(error.to_string().contains("no heat problem"), "{error}");
        assert_eq!(split.download().unwrap(), plate(30, 5));
    });
}

#[test]
fn the_differential_harness_finds_a_split_field_equal_to_the_cpu_reference() {
    use heatlab_engine::verify::{verify, Subject, VerifyOptions};
    let options = VerifyOptions {
        seed: 1,
        sequences: 40,
        operations: 24,
        max_cells: 20_000,
        min_rows: 1,
    };
    for ranks in [2, 3] {
        let options = VerifyOptions {
            min_rows: ranks,
            ..options
        };
        let report = with_split(ranks, None, |split| {
            let mut subject = Subject::Ranks(Box::new(split));
            let stop = std::sync::atomic::AtomicBool::new(false);
            verify(&mut subject, &options, &stop, &|_| {}).unwrap()
        });
        assert!(report.passed(), "{ranks} ranks: {:?}", report.divergence);
        assert_eq!(report.sequences_passed, 40);
        let operations = &report.coverage.operations;
        for kind in ["set-problem", "switch-heater", "brush", "advance"] {
            assert!(
                operations.get(kind).copied().unwrap_or(0) > 0,
                "{ranks} ranks: no {kind} in {operations:?}"
            );
        }
    }
}
