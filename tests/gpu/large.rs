//! A field past 2³² cells on one GPU (33000 x 131072: 4.3 billion cells, 17 GB a buffer): a
//! spot whose cells lie past index 2³² steps, under the kernel `auto` picks and under every
//! exact kernel, exactly as the same spot in a small field on the CPU, and nothing else of the
//! field moves. Skipped (and said) without CUDA or without room for the field on the GPU.

use crate::common;
use common::backend::cuda_or_skip;

use heatlab_engine::compute::{
    Backend, Boundary, CpuBackend, CudaKernel, KernelChoice, StepParams,
};
use heatlab_engine::grid::RowSpan;
use heatlab_engine::{Grid, GridSize};

/// Steps of the spot: it spreads one cell a step, far from every edge.
const STEPS: u64 = 40;
/// Half the side of the small field around the spot.
const HALF: usize = 80;

/// Spot values around (`row`, `col`) of `grid`.
fn put_spot(grid: &mut Grid, row: usize, col: usize) {
    for dr in 0..5 {
        for dc in 0..5 {
            let value = 1.0 + (dr * 5 + dc) as f32 * 0.37;
            let cols = grid.cols();
            grid.as_mut_slice()[(row + dr - 2) * cols + col + dc - 2] = value;
        }
    }
}

/// The spot in the middle of a small field, stepped on the CPU.
#[expect(
    clippy::unwrap_used,
    reason = "a test helper: its failure is the test's failure"
)]
fn small_spot_stepped(params: &StepParams) -> Grid {
    let side = 2 * HALF + 1;
    let mut small = Grid::zeros(GridSize::square(side).unwrap());
    put_spot(&mut small, HALF, HALF);
    let mut cpu = CpuBackend::new();
    cpu.upload(&small).unwrap();
    cpu.advance(STEPS, params).unwrap();
    cpu.download().unwrap()
}

#[test]
fn a_spot_past_two_to_the_32_cells_steps_as_in_a_small_field_under_every_kernel() {
    let Some(mut cuda) = cuda_or_skip!() else {
        return;
    };
    let size = GridSize::new(33_000, 131_072).unwrap();
    let (row, col) = (32_900, 130_900);
    assert!(row * size.cols + col > 1 << 32);
    let (free, _) = cuda.device().memory_info().unwrap();
    if free < 5 * size.bytes() {
        eprintln!(
            "a_spot_past_two_to_the_32_cells: skipped ({} GiB free on the GPU, {} needed)",
            free >> 30,
            (5 * size.bytes()) >> 30
        );
        return;
    }
    let params = StepParams {
        coeff: 0.2,
        boundary: Boundary::Dirichlet,
    };
    let side = 2 * HALF + 1;
    let expected = small_spot_stepped(&params);

    let mut big = Grid::zeros(size);
    put_spot(&mut big, row, col);
    cuda.upload(&big).unwrap();
    drop(big);
    assert!(
        cuda.keep_initial().unwrap(),
        "the initial field kept on the GPU"
    );
    let mut choices = vec![KernelChoice::Auto];
    choices.extend(
        CudaKernel::exact_candidates(size)
            .into_iter()
            .filter(|kernel| kernel.supports(size))
            .map(KernelChoice::Builtin),
    );
    let first = row - HALF;
    for choice in choices {
        cuda.set_kernel_choice(choice).unwrap();
        cuda.restore_initial().unwrap();
        cuda.advance(STEPS, &params).unwrap();
        let what = format!("{choice:?} ({})", cuda.step_method());
        let mut rows = vec![f32::NAN; side * size.cols];
        cuda.read_rows(first, &mut rows).unwrap();
        for r in 0..side {
            let line = &rows[r * size.cols..(r + 1) * size.cols];
            assert_eq!(
                &line[col - HALF..=col + HALF],
                &expected.as_slice()[r * side..(r + 1) * side],
                "{what}: row {} near the spot",
                first + r
            );
            assert!(
                line[..col - HALF]
                    .iter()
                    .chain(&line[col + HALF + 1..])
                    .all(|&v| v == 0.0),
                "{what}: row {} away from the spot",
                first + r
            );
        }
        for span in [
            RowSpan {
                first: 0,
                count: first,
            },
            RowSpan {
                first: first + side,
                count: size.rows - first - side,
            },
        ] {
            let stats = cuda.statistics_of_rows(span).unwrap();
            assert!(
                stats.min == 0.0 && stats.max == 0.0 && stats.total == 0.0,
                "{what}: rows {span:?} moved: {stats:?}"
            );
        }
    }
}
