//! The GPU's block means against the CPU's, bit for bit: the field's and its Laplacian's (which
//! the GPU computes cell by cell as it reduces, without writing it), under every boundary, for
//! reduction factors from 1 to past one stage's width, sizes they do not divide, and both the
//! path one preview at a time and a frame's two views at once. Without CUDA these tests skip and
//! say so; with HEATLAB_REQUIRE_CUDA=1 a missing GPU is a failure.

use crate::common;
use common::backend::cuda_or_skip;

use heatlab_engine::compute::{
    Backend, Boundary, CpuBackend, CudaBackend, Layer, PreviewSpec, ReducedPreview, StepParams,
};
use heatlab_engine::field::numpy_rng::NumpyGenerator;
use heatlab_engine::grid::RangeMode;
use heatlab_engine::render::Colormap;
use heatlab_engine::{Grid, GridSize};

/// A field of `rows` x `cols` values between -100 and 100, a few of them signed zeros, so that
/// Laplacians and sums of many magnitudes round.
#[expect(
    clippy::unwrap_used,
    reason = "a test helper; clippy's allow-unwrap-in-tests covers #[test] functions only"
)]
fn varied_field(rows: usize, cols: usize, seed: u64) -> Grid {
    let size = GridSize::new(rows, cols).unwrap();
    let values = NumpyGenerator::new(seed)
        .random_f32(size.cells())
        .into_iter()
        .enumerate()
        .map(|(i, v)| {
            if i % 997 == 5 {
                -0.0
            } else {
                v * 200.0 - 100.0
            }
        })
        .collect();
    Grid::from_vec(size, values).unwrap()
}

/// A field's rows and columns, the preview's largest size, and the reduction factor they give.
type Case = ((usize, usize), (usize, usize), usize);

/// The cases, and why each is here.
const CASES: [Case; 12] = [
    // One cell a pixel: the mean of one cell (signed zeros become +0.0 on both).
    ((300, 200), (512, 512), 1),
    ((1, 1), (64, 64), 1),
    // Small factors: many rows of a block in one stage.
    ((97, 61), (40, 40), 3),
    ((2000, 2000), (512, 512), 4),
    // Sizes the factor does not divide: partial blocks at the right and bottom edges.
    ((1000, 777), (100, 100), 10),
    ((4100, 4100), (512, 512), 9),
    ((1, 37), (8, 8), 5),
    // A factor of one stage's width, and just past it (a row of a block in two chunks).
    ((1000, 990), (32, 32), 32),
    ((1000, 1000), (31, 31), 33),
    // Large factors, partial chunks and blocks; thin fields.
    ((777, 1301), (20, 20), 66),
    ((3, 4000), (100, 100), 40),
    ((4000, 3), (100, 100), 40),
];

/// A spec of `layer` at `max_size` (the range mode does not matter to the means).
fn spec(layer: Layer, boundary: Boundary, max_size: (usize, usize)) -> PreviewSpec<'static> {
    PreviewSpec {
        layer,
        boundary,
        max_size,
        table: Colormap::Viridis.table(),
        range: RangeMode::MinMax,
    }
}

/// The bits of each mean.
fn bits(grid: &Grid) -> Vec<u32> {
    grid.as_slice().iter().map(|v| v.to_bits()).collect()
}

/// Checks the GPU's means of `field` (held by `cuda`) against the CPU's for both layers under
/// `boundary` at `max_size`, one preview at a time and both at once.
#[expect(
    clippy::unwrap_used,
    reason = "a test helper; clippy's allow-unwrap-in-tests covers #[test] functions only"
)]
fn check_means(
    cuda: &mut CudaBackend,
    cpu: &mut CpuBackend,
    field: &Grid,
    boundary: Boundary,
    (max_size, factor): ((usize, usize), usize),
) {
    let laplacian = cpu.laplacian(boundary).unwrap();
    let expected = [
        ReducedPreview::of(field, max_size),
        ReducedPreview::of(&laplacian, max_size),
    ];
    let specs = Layer::ALL.map(|layer| spec(layer, boundary, max_size));
    let batched = cuda
        .reduce_previews_into([&specs[0], &specs[1]], [Vec::new(), vec![3.0; 11]])
        .unwrap();
    for ((spec, expected), batched) in specs.iter().zip(&expected).zip(batched) {
        let what = format!(
            "{} {:?} {boundary} at {max_size:?}",
            field.size(),
            spec.layer
        );
        assert_eq!(expected.factor, factor, "{what}: the case's factor");
        let one = cuda.reduce_preview_into(spec, vec![5.0; 3]).unwrap();
        for (path, got) in [("one at a time", &one), ("batched", &batched.reduced)] {
            assert_eq!(got.factor, factor, "{what}, {path}");
            assert_eq!(got.values.size(), expected.values.size(), "{what}, {path}");
            assert!(
                bits(&got.values) == bits(&expected.values),
                "{what}, {path}: means differ from the CPU's"
            );
        }
    }
}

#[test]
fn gpu_block_means_equal_the_cpus_for_both_layers_every_boundary_and_factor() {
    let Some(mut cuda) = cuda_or_skip!() else {
        return;
    };
    for (k, ((rows, cols), max_size, factor)) in CASES.into_iter().enumerate() {
        let field = varied_field(rows, cols, 40 + k as u64);
        cuda.upload(&field).unwrap();
        let mut cpu = CpuBackend::new();
        cpu.upload(&field).unwrap();
        for boundary in Boundary::ALL {
            check_means(&mut cuda, &mut cpu, &field, boundary, (max_size, factor));
        }
    }
}

/// The Laplacian's means after steps of the shared kernel, whose Laplacian view used to come from
/// a step computed ahead: the fused kernel gives the CPU's means, and the steps after the
/// view still equal the CPU's.
#[test]
fn laplacian_means_after_shared_kernel_steps_equal_the_cpus() {
    use heatlab_engine::compute::{CudaKernel, KernelChoice};
    let Some(mut cuda) = cuda_or_skip!() else {
        return;
    };
    let field = varied_field(513, 700, 7);
    cuda.upload(&field).unwrap();
    cuda.set_kernel_choice(KernelChoice::Builtin(CudaKernel::Shared))
        .unwrap();
    let mut cpu = CpuBackend::new();
    cpu.upload(&field).unwrap();
    for boundary in Boundary::ALL {
        let params = StepParams {
            coeff: 0.2,
            boundary,
        };
        cuda.advance(3, &params).unwrap();
        cpu.advance(3, &params).unwrap();
        let stepped = cpu.download().unwrap();
        check_means(&mut cuda, &mut cpu, &stepped, boundary, ((64, 64), 11));
        cuda.advance(2, &params).unwrap();
        cpu.advance(2, &params).unwrap();
        assert_eq!(
            bits(&cuda.download().unwrap()),
            bits(&cpu.download().unwrap()),
            "{boundary}: steps after the view"
        );
    }
}
