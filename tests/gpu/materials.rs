//! Heat problems on CUDA against the CPU reference, bit for bit after every operation: every
//! side condition, material layouts from 2 to 64 kinds, heaters, held cells, map and table
//! edits between steps, sizes around the kernels' tile edges, chunked and overlapped advances,
//! the blocked kernels against the one-step ones, and the booked energy. Without CUDA the GPU
//! tests skip and say so; with HEATLAB_REQUIRE_CUDA=1 a missing GPU is a failure.

#![expect(
    clippy::unwrap_used,
    reason = "test helpers unwrap like the tests (clippy's allow-unwrap-in-tests covers #[test] \
              functions only): a failure there is the test's failure, with its message"
)]

use crate::common;
use common::backend::cuda_or_skip;

use common::max_abs_diff;
use heatlab_engine::compute::cuda::MaterialKernel;
use heatlab_engine::compute::{
    Advance, Backend, CpuBackend, CudaBackend, ProblemUpload, StepParams,
};
use heatlab_engine::problem::{EnergyExchange, HeatProblem, SideCondition, Sides, StepTables};
use heatlab_engine::verify::compare::energies;
use heatlab_engine::verify::problems::{
    edit_map, random_problem_with, switch_heater, tables_of, Layout,
};
use heatlab_engine::{Grid, GridSize};

fn size(rows: usize, cols: usize) -> GridSize {
    GridSize { rows, cols }
}

/// Temperatures between -10 and 90 °C, every cell different.
pub(crate) fn field(size: GridSize, seed: u64) -> Grid {
    let mut state = seed
        .wrapping_mul(6364136223846793005)
        .wrapping_add(1442695040888963407);
    let values = (0..size.cells())
        .map(|_| {
            state = state
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            -10.0 + 100.0 * ((state >> 40) as f32 / (1u64 << 24) as f32)
        })
        .collect();
    Grid::from_vec(size, values).unwrap()
}

/// Sizes around the kernels' edges: one cell, strips, odd and prime widths, 128-column strips
/// with 112 or 120 output columns, segments of 32 to 128 rows.
const SIZES: [(usize, usize); 16] = [
    (1, 1),
    (1, 37),
    (41, 1),
    (1, 4),
    (4, 4),
    (3, 5),
    (7, 12),
    (31, 113),
    (33, 120),
    (65, 128),
    (64, 224),
    (129, 236),
    (13, 257),
    (97, 516),
    (257, 263),
    (131, 260),
];

pub(crate) fn sides_cases() -> Vec<(&'static str, Sides)> {
    let fixed = SideCondition::Fixed { temperature: 55.0 };
    let flux = SideCondition::Flux { flux: -2.5e3 };
    let convective = SideCondition::Convective {
        h: 35.0,
        ambient: -5.0,
    };
    let mut mixed = Sides::all(SideCondition::Insulated);
    mixed.left = fixed;
    mixed.right = convective;
    mixed.top = flux;
    let mut rows_wrap = Sides::all(convective);
    rows_wrap.top = SideCondition::Periodic;
    rows_wrap.bottom = SideCondition::Periodic;
    let mut cols_wrap = Sides::all(flux);
    cols_wrap.left = SideCondition::Periodic;
    cols_wrap.right = SideCondition::Periodic;
    cols_wrap.top = fixed;
    vec![
        ("insulated", Sides::all(SideCondition::Insulated)),
        ("fixed", Sides::all(fixed)),
        ("flux", Sides::all(SideCondition::Flux { flux: 4e3 })),
        ("convective", Sides::all(convective)),
        ("periodic", Sides::all(SideCondition::Periodic)),
        ("periodic rows, convective columns", rows_wrap),
        ("periodic columns, mixed rows", cols_wrap),
        ("mixed", mixed),
    ]
}

fn problem(seed: u64, size: GridSize, kinds: usize, layout: Layout, sides: Sides) -> HeatProblem {
    let mut problem = random_problem_with(seed, size, kinds, layout).unwrap();
    problem.sides = sides;
    problem
}

fn upload<'a>(tables: &'a StepTables, map: &'a [u8], book_energy: bool) -> ProblemUpload<'a> {
    ProblemUpload {
        tables,
        map,
        book_energy,
        booked_rows: None,
    }
}

/// Uploads `initial` and `problem` on both backends.
fn start(cuda: &mut CudaBackend, cpu: &mut CpuBackend, initial: &Grid, problem: &mut HeatProblem) {
    let tables = tables_of(problem).unwrap();
    for backend in [cuda as &mut dyn Backend, cpu as &mut dyn Backend] {
        backend.upload(initial).unwrap();
        backend
            .set_problem(Some(upload(&tables, &problem.map, false)))
            .unwrap();
    }
}

/// Advances both by each of `chunks` and checks the fields are equal after each.
fn advance_and_compare(cuda: &mut CudaBackend, cpu: &mut CpuBackend, chunks: &[u64], what: &str) {
    let params = StepParams::default();
    for &steps in chunks {
        cuda.advance(steps, &params).unwrap();
        cpu.advance(steps, &params).unwrap();
        let (a, b) = (cuda.download().unwrap(), cpu.download().unwrap());
        assert!(
            a.as_slice().iter().all(|v| v.is_finite()),
            "{what}: the field stays finite"
        );
        let same = a
            .as_slice()
            .iter()
            .zip(b.as_slice())
            .all(|(x, y)| x.to_bits() == y.to_bits());
        assert!(
            same,
            "{what}, {} after {steps} more steps: max |cuda - cpu| = {:e}",
            cuda.step_method(),
            max_abs_diff(&a, &b)
        );
    }
}

fn kernels() -> Vec<Option<MaterialKernel>> {
    let mut kernels = vec![
        None,
        Some(MaterialKernel::Scalar),
        Some(MaterialKernel::Vec4),
    ];
    kernels.extend(MaterialKernel::blocked_candidates().into_iter().map(Some));
    kernels
}

#[test]
fn cpu_reference_is_independent_of_thread_count() {
    for (seed, (rows, cols)) in [(1, (257, 263)), (2, (64, 33)), (3, (1, 90)), (4, (90, 1))] {
        let dims = size(rows, cols);
        let mut problem = problem(seed, dims, 16, Layout::Random, sides_cases()[7].1);
        let tables = tables_of(&mut problem).unwrap();
        let initial = field(dims, seed);
        let results: Vec<Grid> = [1, 2, 3, 8]
            .into_iter()
            .map(|threads| {
                let mut cpu = CpuBackend::with_threads(threads);
                cpu.upload(&initial).unwrap();
                cpu.set_problem(Some(upload(&tables, &problem.map, false)))
                    .unwrap();
                cpu.advance(50, &StepParams::default()).unwrap();
                cpu.download().unwrap()
            })
            .collect();
        assert_ne!(results[0], initial, "the field changed");
        for result in &results[1..] {
            assert_eq!(max_abs_diff(result, &results[0]), 0.0, "{rows}x{cols}");
            assert_eq!(result, &results[0]);
        }
    }
}

#[test]
fn cuda_matches_cpu_for_every_side_condition_and_size() {
    let Some(mut cuda) = cuda_or_skip!() else {
        return;
    };
    for (case, (name, sides)) in sides_cases().into_iter().enumerate() {
        for (index, &(rows, cols)) in SIZES.iter().enumerate() {
            let dims = size(rows, cols);
            let seed = (case * 100 + index) as u64;
            let mut problem = problem(seed, dims, 8, Layout::Random, sides);
            let initial = field(dims, seed);
            for kernel in [None, Some(MaterialKernel::one_step(dims))] {
                cuda.set_material_kernel(kernel).unwrap();
                let mut cpu = CpuBackend::new();
                start(&mut cuda, &mut cpu, &initial, &mut problem);
                let what = format!("{name} sides, {rows}x{cols}");
                advance_and_compare(&mut cuda, &mut cpu, &[1, 7, 64], &what);
            }
        }
    }
}

#[test]
fn cuda_matches_cpu_for_every_layout_and_kernel() {
    let Some(mut cuda) = cuda_or_skip!() else {
        return;
    };
    let layouts = [
        Layout::Random,
        Layout::RowStripes,
        Layout::ColumnStripes,
        Layout::Blocks,
    ];
    let mut seed = 1000;
    for kinds in [2, 3, 16, 64] {
        for layout in layouts {
            for (rows, cols) in [(257, 263), (65, 128), (5, 12), (129, 236)] {
                let dims = size(rows, cols);
                seed += 1;
                let sides = sides_cases()[(seed % 8) as usize].1;
                let mut problem = problem(seed, dims, kinds, layout, sides);
                let initial = field(dims, seed);
                for kernel in kernels() {
                    cuda.set_material_kernel(kernel).unwrap();
                    let mut cpu = CpuBackend::new();
                    start(&mut cuda, &mut cpu, &initial, &mut problem);
                    let what = format!("{kinds} kinds {layout:?}, {rows}x{cols}");
                    advance_and_compare(&mut cuda, &mut cpu, &[1, 7, 64], &what);
                }
            }
        }
    }
}

#[test]
fn long_chunks_blocked_and_one_step_agree_with_cpu() {
    let Some(mut cuda) = cuda_or_skip!() else {
        return;
    };
    let dims = size(131, 260);
    let initial = field(dims, 5);
    for (case, (name, sides)) in sides_cases().into_iter().enumerate() {
        let mut problem = problem(500 + case as u64, dims, 7, Layout::Blocks, sides);
        let mut results = Vec::new();
        for kernel in [
            Some(MaterialKernel::Vec4),
            Some(MaterialKernel::Blocked {
                steps_per_launch: 8,
                segment_rows: 64,
                compact: false,
            }),
            Some(MaterialKernel::Blocked {
                steps_per_launch: 4,
                segment_rows: 32,
                compact: true,
            }),
        ] {
            cuda.set_material_kernel(kernel).unwrap();
            let mut cpu = CpuBackend::new();
            start(&mut cuda, &mut cpu, &initial, &mut problem);
            advance_and_compare(&mut cuda, &mut cpu, &[1000, 7], &format!("{name} long"));
            results.push(cuda.download().unwrap());
        }
        assert_ne!(results[0], initial);
        assert_eq!(results[0], results[1], "{name}: blocked k8 equals one step");
        assert_eq!(results[0], results[2], "{name}: blocked k4 equals one step");
    }
}

#[test]
fn map_and_table_edits_between_steps_match_cpu() {
    let Some(mut cuda) = cuda_or_skip!() else {
        return;
    };
    for (seed, (rows, cols)) in [(7, (129, 236)), (8, (31, 113)), (9, (64, 64))] {
        let dims = size(rows, cols);
        let mut problem = problem(seed, dims, 12, Layout::Blocks, sides_cases()[7].1);
        let initial = field(dims, seed);
        let mut cpu = CpuBackend::new();
        cuda.set_material_kernel(None).unwrap();
        start(&mut cuda, &mut cpu, &initial, &mut problem);
        for edit in 0..12u64 {
            advance_and_compare(&mut cuda, &mut cpu, &[1 + edit * 5], "before an edit");
            match edit % 3 {
                0 => edit_map(seed * 100 + edit, &mut problem),
                1 => switch_heater(seed * 100 + edit, &mut problem),
                _ => {
                    problem.sides.bottom = SideCondition::Fixed {
                        temperature: edit as f64,
                    }
                }
            }
            let tables = tables_of(&mut problem).unwrap();
            for backend in [&mut cuda as &mut dyn Backend, &mut cpu as &mut dyn Backend] {
                backend
                    .set_problem(Some(upload(&tables, &problem.map, false)))
                    .unwrap();
            }
        }
        advance_and_compare(&mut cuda, &mut cpu, &[33], "after the edits");
        // Back to the uniform stencil: both step the tutorial's scheme again.
        cuda.set_problem(None).unwrap();
        cpu.set_problem(None).unwrap();
        advance_and_compare(&mut cuda, &mut cpu, &[10], "uniform after the problem");
        assert!(!cuda.step_method().contains("materials"));
    }
}

#[test]
fn overlapped_advances_and_graphs_keep_the_problem() {
    let Some(mut cuda) = cuda_or_skip!() else {
        return;
    };
    let dims = size(200, 300);
    let mut problem = problem(77, dims, 5, Layout::ColumnStripes, sides_cases()[5].1);
    let initial = field(dims, 77);
    for graphs in [true, false] {
        cuda.set_graphs_enabled(graphs);
        cuda.set_material_kernel(None).unwrap();
        let mut cpu = CpuBackend::new();
        start(&mut cuda, &mut cpu, &initial, &mut problem);
        assert!(cuda.step_method().contains("materials"));
        let params = StepParams::default();
        for steps in [1u64, 7, 64, 300] {
            match cuda.start_advance(steps, &params).unwrap() {
                Advance::Queued => {
                    cuda.finish_advance().unwrap();
                }
                Advance::Done(_) => {}
            }
            cpu.advance(steps, &params).unwrap();
            assert_eq!(cuda.download().unwrap(), cpu.download().unwrap(), "{steps}");
        }
        advance_and_compare(
            &mut cuda,
            &mut cpu,
            &[1000],
            "long run after overlapped ones",
        );
    }
}

#[test]
fn held_cells_keep_their_values() {
    let Some(mut cuda) = cuda_or_skip!() else {
        return;
    };
    let dims = size(50, 64);
    let mut problem = problem(3, dims, 4, Layout::RowStripes, sides_cases()[1].1);
    problem.kinds[1].held_temperature = Some(42.0);
    let mut initial = field(dims, 3);
    problem.apply_held(&mut initial).unwrap();
    let mut cpu = CpuBackend::new();
    start(&mut cuda, &mut cpu, &initial, &mut problem);
    advance_and_compare(&mut cuda, &mut cpu, &[100], "held stripes");
    let after = cuda.download().unwrap();
    for (index, &kind) in problem.map.iter().enumerate() {
        if kind == 1 {
            assert_eq!(after.as_slice()[index], 42.0);
        }
    }
}

#[test]
fn booked_energy_matches_cpu() {
    let Some(mut cuda) = cuda_or_skip!() else {
        return;
    };
    let mut checked = 0;
    for (case, (name, sides)) in sides_cases().into_iter().enumerate() {
        for (rows, cols) in [(1, 1), (1, 37), (33, 120), (257, 263), (3, 700)] {
            let dims = size(rows, cols);
            let seed = 900 + case as u64;
            let mut problem = problem(seed, dims, 9, Layout::Blocks, sides);
            problem.kinds[2].held_temperature = Some(80.0);
            let tables = tables_of(&mut problem).unwrap();
            let initial = field(dims, seed);
            let mut cpu = CpuBackend::new();
            for backend in [&mut cuda as &mut dyn Backend, &mut cpu as &mut dyn Backend] {
                backend.upload(&initial).unwrap();
                backend
                    .set_problem(Some(upload(&tables, &problem.map, true)))
                    .unwrap();
            }
            assert!(cuda.step_method().ends_with("+energy"));
            for steps in [1, 7, 64] {
                advance_and_compare(&mut cuda, &mut cpu, &[steps], name);
                let gpu = cuda.take_energy_exchange().unwrap();
                let reference = cpu.take_energy_exchange().unwrap();
                if let Some(cell) = energies(&gpu, &reference) {
                    panic!(
                        "{name} {rows}x{cols}: energy term {} differs: {cell:?}",
                        cell.col
                    );
                }
                if reference != EnergyExchange::default() {
                    checked += 1;
                }
                // The stored energy, summed on the device in the CPU's order.
                let (gpu, reference) =
                    (cuda.stored_energy().unwrap(), cpu.stored_energy().unwrap());
                assert_eq!(
                    gpu.to_bits(),
                    reference.to_bits(),
                    "{name} {rows}x{cols}: stored energy {gpu} against {reference}"
                );
            }
            // Taken: nothing left until the next step.
            assert_eq!(
                cuda.take_energy_exchange().unwrap(),
                EnergyExchange::default()
            );
        }
    }
    assert!(checked > 30, "most cases exchange energy ({checked})");
}

/// A plate with a heater disc under a thermostat and cooled sides, as a simulation on `backend`.
fn thermostat_simulation(backend: Box<dyn Backend>) -> heatlab_engine::sim::Simulation {
    use heatlab_engine::problem::material::find;
    use heatlab_engine::problem::{CellKind, Heater, HeaterPower, Shape, Side, Thermostat};
    let size = size(40, 70);
    let initial = field(size, 5);
    let mut sim =
        heatlab_engine::sim::Simulation::new(backend, initial, StepParams::default()).unwrap();
    let mut problem = HeatProblem::uniform(size, 1e-3, find("aluminium").unwrap());
    for side in Side::ALL {
        problem.sides.set(
            side,
            SideCondition::Convective {
                h: 5000.0,
                ambient: 20.0,
            },
        );
    }
    sim.set_problem(Some(problem), true).unwrap();
    let heater = CellKind {
        name: "heater".into(),
        heater: Some(Heater {
            // Enough to pass the deadband in a few hundred steps: the run switches 4 times.
            power: HeaterPower::Total(60000.0),
            on: false,
        }),
        ..CellKind::of(find("copper").unwrap())
    };
    let disc = Shape::Disc {
        centre: (20.0, 30.0),
        radius: 6.0,
    };
    sim.paint_kind(&disc, heater).unwrap();
    sim.end_kind_stroke().unwrap();
    let mut problem = sim.problem().unwrap().clone();
    problem.thermostats = vec![Thermostat {
        heater_kind: 1,
        probe: (20, 45),
        setpoint: 40.0,
        deadband: 2.0,
        every_steps: 7,
    }];
    sim.set_problem(Some(problem), true).unwrap();
    sim
}

#[test]
fn thermostats_painting_and_undo_switch_alike_on_cuda_and_cpu() {
    use heatlab_engine::compute::BrushEdge;
    use heatlab_engine::problem::material::find;
    use heatlab_engine::problem::{CellKind, Shape};
    use heatlab_engine::sim::agreement::WindowPolicy;
    use heatlab_engine::sim::paint::Brush;
    let Some(cuda) = cuda_or_skip!() else {
        return;
    };
    let mut on_cuda = thermostat_simulation(Box::new(cuda));
    on_cuda.set_agreement_check(Some(WindowPolicy::Every(100)));
    let mut on_cpu = thermostat_simulation(Box::new(CpuBackend::with_threads(2)));
    let brush = Brush {
        radius: 4.0,
        amount: 30.0,
        edge: BrushEdge::Soft,
    };
    let wall = Shape::Wall {
        from: (5.0, 5.0),
        to: (35.0, 10.0),
        width: 3.0,
    };
    let glass = CellKind::of(find("glass").unwrap());
    for (round, sim) in [&mut on_cuda, &mut on_cpu].into_iter().enumerate() {
        for chunk in [100u64, 33, 1, 266, 100, 500] {
            sim.advance(chunk).unwrap();
        }
        sim.paint_kind(&wall, glass.clone()).unwrap();
        sim.end_kind_stroke().unwrap();
        sim.paint_to(30.0, 60.0, brush).unwrap();
        sim.end_stroke().unwrap();
        sim.advance(400).unwrap();
        assert!(sim.undo_stroke().unwrap(), "round {round}: the heat");
        assert!(sim.undo_stroke().unwrap(), "round {round}: the glass");
        sim.advance(600).unwrap();
    }
    let switches = on_cpu.take_switches();
    assert_eq!(on_cuda.take_switches(), switches, "the same switches");
    assert!(switches.len() >= 3, "{switches:?}");
    let (a, b) = (on_cuda.field().unwrap(), on_cpu.field().unwrap());
    assert!(
        a.as_slice()
            .iter()
            .zip(b.as_slice())
            .all(|(x, y)| x.to_bits() == y.to_bits()),
        "CUDA and CPU differ by {}",
        max_abs_diff(&a, &b)
    );
    on_cuda.finish_agreement().unwrap();
    let watch = on_cuda.agreement().unwrap();
    assert!(watch.counts().0 >= 15, "{:?}", watch.counts());
    assert_eq!(watch.counts().1, 0, "{:?}", watch.first_mismatch());
}
