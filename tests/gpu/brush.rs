//! The brush, gather and scatter on CUDA against the CPU, bit for bit: single dabs at tile and
//! field edges, and strokes with undo and redo painted between steps of a running simulation
//! (graphs and temporal kernels included), with the live agreement check on; removals over zeros
//! of both signs at every shape. Without CUDA these tests skip and say so; with
//! HEATLAB_REQUIRE_CUDA=1 a missing GPU is a failure.

use crate::common;
use common::backend::cuda_or_skip;

use heatlab_engine::compute::{
    Backend, BrushEdge, BrushStamp, CpuBackend, CudaBackend, StepParams,
};
use heatlab_engine::field::{generate_jagged, JaggedParams};
use heatlab_engine::sim::agreement::WindowPolicy;
use heatlab_engine::sim::paint::Brush;
use heatlab_engine::sim::Simulation;
use heatlab_engine::{Grid, GridSize};

#[expect(
    clippy::unwrap_used,
    reason = "a test helper: its failure is the test's failure"
)]
fn jagged(rows: usize, cols: usize, seed: u64) -> Grid {
    let params = JaggedParams {
        size: GridSize::new(rows, cols).unwrap(),
        seed,
        ..JaggedParams::default()
    };
    generate_jagged(&params, &|_| {}).unwrap()
}

fn assert_bits_equal(cuda: &Grid, cpu: &Grid, what: &str) {
    let differing = cuda
        .as_slice()
        .iter()
        .zip(cpu.as_slice())
        .position(|(a, b)| a.to_bits() != b.to_bits());
    assert_eq!(differing, None, "{what}: CUDA differs from the CPU");
}

#[test]
fn cuda_stamps_equal_cpu_stamps_bit_for_bit() {
    let Some(mut cuda) = cuda_or_skip!() else {
        return;
    };
    let mut cpu = CpuBackend::new();
    for (rows, cols) in [
        (1, 1),
        (1, 300),
        (300, 1),
        (33, 47),
        (257, 516),
        (1000, 1283),
    ] {
        let mut field = jagged(rows, cols, 7);
        // Zeros of both signs and negative cells, where removal's floor matters.
        let values = field.as_mut_slice();
        for (i, value) in values.iter_mut().enumerate().step_by(5) {
            *value = match i % 3 {
                0 => -0.0,
                1 => -*value,
                _ => 0.0,
            };
        }
        cuda.upload(&field).unwrap();
        cpu.upload(&field).unwrap();
        let mut n = 0u32;
        for radius in [0.5, 1.0, 2.7, 13.0, 90.5] {
            for amount in [0.75, -0.3, -0.0, 1e-7, -5.0] {
                for edge in BrushEdge::ALL {
                    n += 1;
                    let stamp = BrushStamp {
                        row: (n * 37 % (rows as u32 + 6)) as f32 - 3.0 + 0.25,
                        col: (n * 53 % (cols as u32 + 6)) as f32 - 3.0 + 0.6,
                        radius,
                        amount,
                        edge,
                    };
                    cuda.apply_brush(&stamp).unwrap();
                    cpu.apply_brush(&stamp).unwrap();
                }
            }
        }
        assert_bits_equal(
            &cuda.download().unwrap(),
            &cpu.download().unwrap(),
            &format!("{rows}x{cols} after {n} stamps"),
        );
        let cells: Vec<u32> = (0..200u32)
            .map(|i| (i * 7919) % (rows * cols) as u32)
            .collect();
        let gathered = cuda.gather(&cells).unwrap();
        let expected = cpu.gather(&cells).unwrap();
        assert_eq!(
            gathered.iter().map(|v| v.to_bits()).collect::<Vec<_>>(),
            expected.iter().map(|v| v.to_bits()).collect::<Vec<_>>()
        );
        let mut distinct = cells.clone();
        distinct.sort_unstable();
        distinct.dedup();
        let values: Vec<f32> = distinct.iter().map(|&c| c as f32 * -0.5).collect();
        cuda.scatter(&distinct, &values).unwrap();
        cpu.scatter(&distinct, &values).unwrap();
        assert_bits_equal(
            &cuda.download().unwrap(),
            &cpu.download().unwrap(),
            &format!("{rows}x{cols} after a scatter"),
        );
        assert!(
            cuda.gather(&[(rows * cols) as u32]).is_err(),
            "out of range"
        );
        removals_over_signed_zeros_agree(&mut cuda, &mut cpu, rows, cols);
    }
}

/// Every cell -0, +0, a little below zero or above it: the cases a removal's floor tells apart.
#[expect(
    clippy::unwrap_used,
    reason = "a test helper: its failure is the test's failure"
)]
fn signed_zero_field(rows: usize, cols: usize) -> Grid {
    let values = (0..rows * cols)
        .map(|i| match i * 7 % 5 {
            0 | 1 => -0.0,
            2 => 0.0,
            3 => -0.25,
            _ => 0.5,
        })
        .collect();
    Grid::from_vec(GridSize::new(rows, cols).unwrap(), values).unwrap()
}

/// Soft removals with a whole radius, centred on cells 2·radius apart: inside each disc a -0
/// cell goes to +0 (its floor), and on each rim (weight exactly 0; the discs only touch there)
/// a -0 cell stays -0.
fn removal_lattice(rows: usize, cols: usize) -> Vec<BrushStamp> {
    let radius = (rows.max(cols) / 10).max(1);
    let mut stamps = Vec::new();
    for (k, row) in (0..rows).step_by(2 * radius).enumerate() {
        for col in (0..cols).step_by(2 * radius) {
            stamps.push(BrushStamp {
                row: row as f32,
                col: col as f32,
                radius: radius as f32,
                amount: if k % 2 == 0 { -0.3 } else { -5.0 },
                edge: BrushEdge::Soft,
            });
        }
    }
    stamps
}

/// Removal over zeros of both signs, where the kernel once took -0 as its own floor (min.f32)
/// instead of +0: CUDA must match the CPU, and the CPU result must show both cases, so that
/// this check cannot pass without exercising them.
#[expect(
    clippy::unwrap_used,
    reason = "a test helper: its failure is the test's failure"
)]
fn removals_over_signed_zeros_agree(
    cuda: &mut CudaBackend,
    cpu: &mut CpuBackend,
    rows: usize,
    cols: usize,
) {
    let field = signed_zero_field(rows, cols);
    cuda.upload(&field).unwrap();
    cpu.upload(&field).unwrap();
    let stamps = removal_lattice(rows, cols);
    for stamp in &stamps {
        cuda.apply_brush(stamp).unwrap();
        cpu.apply_brush(stamp).unwrap();
    }
    let on_cpu = cpu.download().unwrap();
    assert_bits_equal(
        &cuda.download().unwrap(),
        &on_cpu,
        &format!("{rows}x{cols} after removals over signed zeros"),
    );
    let (before, after) = (field.as_slice(), on_cpu.as_slice());
    let negative_zero = (-0.0f32).to_bits();
    let lifted = (0..before.len())
        .filter(|&i| before[i].to_bits() == negative_zero && after[i].to_bits() == 0)
        .count();
    assert!(lifted > 0, "{rows}x{cols}: no -0 cell was taken to +0");
    let mut kept_on_rims = 0;
    for stamp in &stamps {
        stamp.for_each_cell(field.size(), |i| {
            let zero_weight = stamp.weight(i / cols, i % cols) == Some(0.0);
            if zero_weight && after[i].to_bits() == negative_zero {
                kept_on_rims += 1;
            }
        });
    }
    if rows.max(cols) > 1 {
        assert!(kept_on_rims > 0, "{rows}x{cols}: no -0 cell on a rim");
    }
}

/// The same strokes, undos and steps on two simulations.
#[expect(
    clippy::unwrap_used,
    reason = "a test helper: its failure is the test's failure"
)]
fn paint_and_run(sim: &mut Simulation) {
    let add = Brush {
        radius: 9.0,
        amount: 0.4,
        edge: BrushEdge::Soft,
    };
    let remove = Brush {
        radius: 4.5,
        amount: -0.25,
        edge: BrushEdge::Hard,
    };
    for round in 0..12u32 {
        let brush = if round % 3 == 2 { remove } else { add };
        let r = (round * 41 % 500) as f32;
        sim.paint_to(r, 10.0, brush).unwrap();
        sim.advance(1 + u64::from(round % 4)).unwrap();
        sim.paint_to(r + 30.5, 200.0, brush).unwrap();
        sim.advance(300).unwrap(); // long enough for graphs of the temporal kernels
        sim.paint_to(r + 60.0, 700.25, brush).unwrap();
        sim.end_stroke().unwrap();
        if round % 4 == 3 {
            sim.undo_stroke().unwrap();
            sim.advance(17).unwrap();
            sim.redo_stroke().unwrap();
            sim.undo_stroke().unwrap();
        }
        sim.advance(u64::from(round) * 13).unwrap();
    }
}

#[test]
fn strokes_undo_and_redo_mid_run_agree_with_the_cpu() {
    let Some(cuda) = cuda_or_skip!() else {
        return;
    };
    let initial = jagged(520, 776, 11);
    let params = StepParams {
        coeff: 0.23,
        boundary: heatlab_engine::compute::Boundary::Periodic,
    };
    let mut on_gpu = Simulation::new(Box::new(cuda), initial.clone(), params).unwrap();
    on_gpu.set_agreement_check(Some(WindowPolicy::Every(100)));
    let mut on_cpu = Simulation::new(Box::new(CpuBackend::new()), initial, params).unwrap();
    paint_and_run(&mut on_gpu);
    paint_and_run(&mut on_cpu);
    assert_eq!(on_gpu.step_count(), on_cpu.step_count());
    assert_bits_equal(
        &on_gpu.field().unwrap(),
        &on_cpu.field().unwrap(),
        "after painting while running",
    );
    on_gpu.finish_agreement().unwrap();
    let watch = on_gpu.agreement().unwrap();
    let (checks, mismatches) = watch.counts();
    assert!(checks > 10, "{checks} checks");
    assert_eq!(mismatches, 0, "{:?}", watch.first_mismatch());
}
