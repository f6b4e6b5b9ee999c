//! CUDA against the CPU on the same input, for every boundary (CUDA's steps against NumPy's
//! golden files are `golden::steps_match_numpy_bit_for_bit::cuda` in the core tests). Without
//! CUDA these tests skip and say so; with HEATLAB_REQUIRE_CUDA=1 a missing GPU is a failure.

use crate::common;
use common::backend::cuda_or_skip;

use common::max_abs_diff;
use heatlab_engine::compute::{Backend, Boundary, CpuBackend, StepParams};
use heatlab_engine::field::{generate_jagged, JaggedParams};
use heatlab_engine::GridSize;

#[test]
fn cuda_matches_cpu_on_large_odd_fields() {
    let Some(mut cuda) = cuda_or_skip!() else {
        return;
    };
    for (rows, cols) in [(1000, 1000), (517, 1283), (1, 300), (300, 1)] {
        let params = JaggedParams {
            size: GridSize::new(rows, cols).unwrap(),
            ..JaggedParams::default()
        };
        let initial = generate_jagged(&params, &|_| {}).unwrap();
        for boundary in Boundary::ALL {
            let step = StepParams {
                coeff: 0.23,
                boundary,
            };
            let mut cpu = CpuBackend::new();
            cpu.upload(&initial).unwrap();
            cuda.upload(&initial).unwrap();
            cpu.advance(137, &step).unwrap();
            cuda.advance(137, &step).unwrap();
            let diff = max_abs_diff(&cpu.download().unwrap(), &cuda.download().unwrap());
            eprintln!("{rows}x{cols} {boundary}: max |cuda - cpu| = {diff:e}");
            assert_eq!(diff, 0.0, "{rows}x{cols} {boundary}");
            let lapl_diff = max_abs_diff(
                &cpu.laplacian(boundary).unwrap(),
                &cuda.laplacian(boundary).unwrap(),
            );
            assert_eq!(lapl_diff, 0.0, "{rows}x{cols} {boundary} Laplacian");
        }
    }
}

#[test]
fn seed_faithful_kernel_is_close_to_jacobi_for_one_step() {
    // From a fresh upload the first in-place step races only where neighbouring blocks have
    // already written; the result must still be close to the Jacobi step, which shows the
    // port computes the same stencil.
    let Some(mut cuda) = cuda_or_skip!() else {
        return;
    };
    let params = JaggedParams {
        size: GridSize::new(256, 256).unwrap(),
        ..JaggedParams::default()
    };
    let initial = generate_jagged(&params, &|_| {}).unwrap();
    let mut cpu = CpuBackend::new();
    cpu.upload(&initial).unwrap();
    cpu.advance(1, &StepParams::default()).unwrap();
    cuda.upload(&initial).unwrap();
    cuda.advance_seed_faithful(1, 0.25).unwrap();
    let field = cuda.download().unwrap();
    let reference = cpu.download().unwrap();
    let scale = heatlab_engine::sim::FieldStats::of(&initial).max;
    let diff = max_abs_diff(&field, &reference);
    eprintln!("seed kernel, one step: max |seed - jacobi| = {diff:e} (field max {scale})");
    assert!(
        diff <= 0.25 * scale,
        "the seed port computes a different stencil: {diff}"
    );
}

#[test]
fn every_exact_kernel_matches_cpu_for_every_boundary() {
    use heatlab_engine::compute::cuda::CudaKernel;
    let Some(mut cuda) = cuda_or_skip!() else {
        return;
    };
    // Sizes around the kernels' tiles: partial strips and segments, tiny grids, a tall one.
    for (rows, cols) in [
        (517, 1284),
        (1000, 1000),
        (3, 8),
        (64, 4),
        (130, 260),
        (1, 128),
        (2000, 132),
        (33, 66),
        (5, 2),
    ] {
        let params = JaggedParams {
            size: GridSize::new(rows, cols).unwrap(),
            ..JaggedParams::default()
        };
        let initial = generate_jagged(&params, &|_| {}).unwrap();
        for boundary in Boundary::ALL {
            let step = StepParams {
                coeff: 0.21,
                boundary,
            };
            let steps = 43; // not a multiple of 4 or 8: temporal kernels finish with single steps
            let mut cpu = CpuBackend::new();
            cpu.upload(&initial).unwrap();
            cpu.advance(steps, &step).unwrap();
            let expected = cpu.download().unwrap();
            let fitting: Vec<CudaKernel> = CudaKernel::exact_candidates(initial.size())
                .into_iter()
                .filter(|&kernel| cuda.fits_device(kernel, initial.size()))
                .collect();
            for kernel in fitting {
                cuda.upload(&initial).unwrap();
                cuda.advance_with(kernel, steps, &step).unwrap();
                let diff = max_abs_diff(&expected, &cuda.download().unwrap());
                assert_eq!(
                    diff, 0.0,
                    "{kernel} on {rows}x{cols} {boundary}: max diff {diff:e}"
                );
            }
        }
    }
    eprintln!("every exact kernel matched the CPU bit for bit");
}

#[test]
fn gpu_previews_equal_cpu_previews() {
    use heatlab_engine::render::preview::render_on;
    use heatlab_engine::render::{Colormap, Layer, PreviewRequest, RangeMode};
    let Some(mut cuda) = cuda_or_skip!() else {
        return;
    };
    let params = JaggedParams {
        size: GridSize::new(1001, 1500).unwrap(),
        ..JaggedParams::default()
    };
    let initial = generate_jagged(&params, &|_| {}).unwrap();
    let mut cpu = CpuBackend::new();
    cpu.upload(&initial).unwrap();
    cuda.upload(&initial).unwrap();
    let step = StepParams {
        coeff: 0.25,
        boundary: Boundary::Neumann,
    };
    cpu.advance(50, &step).unwrap();
    cuda.advance(50, &step).unwrap();
    for (layer, colormap, range_mode, max_size) in [
        (
            Layer::Field,
            Colormap::Viridis,
            RangeMode::MinMax,
            (400, 300),
        ),
        (
            Layer::Laplacian,
            Colormap::Inferno,
            RangeMode::LAPLACIAN_DEFAULT,
            (1500, 1001),
        ),
        (
            Layer::Laplacian,
            Colormap::Coolwarm,
            RangeMode::MinMax,
            (97, 61),
        ),
    ] {
        let request = PreviewRequest {
            layer,
            boundary: Boundary::Neumann,
            colormap,
            range_mode,
            max_size,
        };
        let on_cpu = render_on(&mut cpu, &request).unwrap();
        let on_gpu = render_on(&mut cuda, &request).unwrap();
        assert_eq!(on_gpu.factor, on_cpu.factor);
        assert_eq!(on_gpu.values, on_cpu.values, "{layer:?} values");
        assert_eq!(on_gpu.range, on_cpu.range);
        assert!(
            on_gpu.rgba == on_cpu.rgba,
            "{layer:?} {colormap} pixels differ"
        );
    }
}

#[test]
fn long_runs_replayed_as_cuda_graphs_match_cpu() {
    // Hundreds of launches go through captured graphs; changing the coefficient or boundary,
    // or uploading a new field, must capture anew rather than replay a stale graph.
    let Some(mut cuda) = cuda_or_skip!() else {
        return;
    };
    for (rows, cols) in [(256, 256), (300, 124)] {
        let params = JaggedParams {
            size: GridSize::new(rows, cols).unwrap(),
            ..JaggedParams::default()
        };
        let initial = generate_jagged(&params, &|_| {}).unwrap();
        let mut cpu = CpuBackend::new();
        cpu.upload(&initial).unwrap();
        cuda.upload(&initial).unwrap();
        for (coeff, boundary, steps) in [
            (0.25, Boundary::Dirichlet, 1001),
            (0.2, Boundary::Dirichlet, 700),
            (0.2, Boundary::Periodic, 2048),
            (0.24, Boundary::Neumann, 999),
        ] {
            let step = StepParams { coeff, boundary };
            cpu.advance(steps, &step).unwrap();
            cuda.advance(steps, &step).unwrap();
            let diff = max_abs_diff(&cpu.download().unwrap(), &cuda.download().unwrap());
            assert_eq!(
                diff, 0.0,
                "{rows}x{cols} after {steps} {boundary} steps at {coeff}"
            );
        }
    }
}

/// The app's path for a frame: both views at once, their ranges picked on the GPU, coloured on
/// the host; each picture equal to the CPU's.
#[expect(
    clippy::unwrap_used,
    reason = "a test helper; clippy's allow-unwrap-in-tests covers #[test] functions only"
)]
fn check_batched_frame(
    gpu: &mut heatlab_engine::sim::Simulation,
    cpu: &mut heatlab_engine::sim::Simulation,
    requests: &[heatlab_engine::render::PreviewRequest; 2],
    frame: u64,
) {
    use heatlab_engine::render::preview::colour_ranged;
    use heatlab_engine::render::Preview;
    let specs = requests.map(|request| request.spec());
    let ranged = gpu
        .reduce_previews_into([&specs[0], &specs[1]], [Vec::new(), vec![1.0; 5]])
        .unwrap();
    for (request, ranged) in requests.iter().zip(ranged) {
        assert!(
            ranged.range.is_some(),
            "frame {frame}: no range from the GPU"
        );
        let batched = colour_ranged(ranged.reduced, ranged.range, request, Vec::new());
        let on_cpu = Preview::from(cpu.render_preview(&request.spec()).unwrap());
        assert_eq!(
            batched, on_cpu,
            "frame {frame} {:?}, batched",
            request.layer
        );
    }
}

/// The app's overlapped frames: previews and statistics of the state the last queued steps
/// left, then the next steps queued, many times, with the steps per frame changing and the
/// previews reading the pinned buffers while steps are in flight, and the previews queued
/// before the next steps and taken while they run (the app's pipelined frame). The field, every
/// preview and every statistic must equal the CPU's stepped the same way, and the timings must
/// be real.
#[test]
fn overlapped_stepping_with_previews_matches_cpu() {
    use heatlab_engine::render::Preview;
    use heatlab_engine::sim::Simulation;
    let Some(cuda) = cuda_or_skip!() else {
        return;
    };
    let params = JaggedParams {
        size: GridSize::new(777, 1003).unwrap(),
        ..JaggedParams::default()
    };
    let initial = generate_jagged(&params, &|_| {}).unwrap();
    let step = StepParams {
        coeff: 0.2,
        boundary: Boundary::Periodic,
    };
    let mut gpu = Simulation::new(Box::new(cuda), initial.clone(), step).unwrap();
    let mut cpu = Simulation::new(Box::new(CpuBackend::new()), initial, step).unwrap();
    let requests = overlapped_requests(step.boundary);
    let mut spares: [Option<Preview>; 2] = [None, None];
    let mut queued_steps = 0u64;
    for frame in 0..40u64 {
        check_finished_steps(&mut gpu, frame, queued_steps);
        assert_eq!(gpu.step_count(), cpu.step_count());
        check_previews_in_stale_buffers(&mut gpu, &mut cpu, &requests, &mut spares, frame);
        check_batched_frame(&mut gpu, &mut cpu, &requests, frame);
        check_frame_statistics(&mut gpu, &mut cpu, frame);
        queued_steps = check_previews_queued_before_the_steps(&mut gpu, &mut cpu, &requests, frame);
        cpu.advance(queued_steps).unwrap();
    }
    // Anything else asked while steps are queued sees them done.
    assert_eq!(gpu.field().unwrap(), cpu.field().unwrap());
    assert!(gpu.finish_advance().unwrap().is_some());
    assert!(gpu.finish_advance().unwrap().is_none());
}

/// The two views of the overlapped frames: the field and its Laplacian, at two sizes.
fn overlapped_requests(boundary: Boundary) -> [heatlab_engine::render::PreviewRequest; 2] {
    use heatlab_engine::render::{Colormap, Layer, PreviewRequest, RangeMode};
    [
        PreviewRequest {
            layer: Layer::Field,
            boundary,
            colormap: Colormap::Viridis,
            range_mode: RangeMode::MinMax,
            max_size: (300, 300),
        },
        PreviewRequest {
            layer: Layer::Laplacian,
            boundary,
            colormap: Colormap::Viridis,
            range_mode: RangeMode::LAPLACIAN_DEFAULT,
            max_size: (512, 512),
        },
    ]
}

/// The steps the previous frame queued are finished, all of them, with the GPU time measured.
#[expect(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "a test helper; clippy's allow-*-in-tests covers #[test] functions only"
)]
fn check_finished_steps(gpu: &mut heatlab_engine::sim::Simulation, frame: u64, queued_steps: u64) {
    let record = gpu.finish_advance().unwrap();
    if frame > 0 {
        let record = record.expect("the previous frame queued steps");
        assert_eq!(record.steps, queued_steps);
        assert!(record.seconds > 0.0, "frame {frame}: no GPU time measured");
    }
}

/// The GPU side as the app draws: reduced and coloured into the buffers of the other view's
/// picture of the previous frame (another size, stale contents); each picture equal to the
/// CPU's.
#[expect(
    clippy::unwrap_used,
    reason = "a test helper; clippy's allow-unwrap-in-tests covers #[test] functions only"
)]
fn check_previews_in_stale_buffers(
    gpu: &mut heatlab_engine::sim::Simulation,
    cpu: &mut heatlab_engine::sim::Simulation,
    requests: &[heatlab_engine::render::PreviewRequest; 2],
    spares: &mut [Option<heatlab_engine::render::Preview>; 2],
    frame: u64,
) {
    use heatlab_engine::render::preview::colour_reduced;
    use heatlab_engine::render::Preview;
    spares.reverse();
    for (request, spare) in requests.iter().zip(spares) {
        let (values, rgba) = spare
            .take()
            .map_or_else(Default::default, |p: Preview| (p.values.into_vec(), p.rgba));
        let reduced = gpu.reduce_preview_into(&request.spec(), values).unwrap();
        let on_gpu = colour_reduced(reduced, request, rgba);
        let on_cpu = Preview::from(cpu.render_preview(&request.spec()).unwrap());
        assert_eq!(
            on_gpu.values, on_cpu.values,
            "frame {frame} {:?}",
            request.layer
        );
        assert_eq!(
            on_gpu.range, on_cpu.range,
            "frame {frame} {:?}",
            request.layer
        );
        assert!(on_gpu.rgba == on_cpu.rgba, "frame {frame} pixels");
        *spare = Some(on_gpu);
    }
}

/// The GPU's statistics of the frame: the CPU's extremes exactly, its total to rounding.
#[expect(
    clippy::unwrap_used,
    reason = "a test helper; clippy's allow-unwrap-in-tests covers #[test] functions only"
)]
fn check_frame_statistics(
    gpu: &mut heatlab_engine::sim::Simulation,
    cpu: &mut heatlab_engine::sim::Simulation,
    frame: u64,
) {
    let (gpu_stats, cpu_stats) = (gpu.statistics().unwrap(), cpu.statistics().unwrap());
    assert_eq!(
        (gpu_stats.min, gpu_stats.max),
        (cpu_stats.min, cpu_stats.max)
    );
    assert!(
        (gpu_stats.total - cpu_stats.total).abs() <= 1e-9 * cpu_stats.total.abs().max(1.0),
        "frame {frame}: total {} vs {}",
        gpu_stats.total,
        cpu_stats.total
    );
}

/// The app's pipelined frame: both previews queued, the next steps queued behind them, then
/// the previews taken while the steps run: still the pictures of this state. Returns the steps
/// queued on the GPU (the CPU has yet to take them).
#[expect(
    clippy::unwrap_used,
    reason = "a test helper; clippy's allow-unwrap-in-tests covers #[test] functions only"
)]
fn check_previews_queued_before_the_steps(
    gpu: &mut heatlab_engine::sim::Simulation,
    cpu: &mut heatlab_engine::sim::Simulation,
    requests: &[heatlab_engine::render::PreviewRequest; 2],
    frame: u64,
) -> u64 {
    use heatlab_engine::render::preview::colour_ranged;
    use heatlab_engine::render::Preview;
    let specs = requests.map(|request| request.spec());
    let expected = requests
        .each_ref()
        .map(|request| Preview::from(cpu.render_preview(&request.spec()).unwrap()));
    assert!(gpu.queue_previews([&specs[0], &specs[1]]).unwrap());
    // Odd and even counts, and counts that are not whole graphs or temporal launches.
    let queued_steps = 1 + (frame * 37) % 300;
    assert!(
        gpu.start_advance(queued_steps).unwrap().is_none(),
        "CUDA queues"
    );
    let taken = gpu.take_queued_previews([Vec::new(), Vec::new()]).unwrap();
    for ((request, ranged), expected) in requests.iter().zip(taken).zip(&expected) {
        let picture = colour_ranged(ranged.reduced, ranged.range, request, Vec::new());
        assert_eq!(
            &picture, expected,
            "frame {frame} {:?}, queued before the steps",
            request.layer
        );
    }
    queued_steps
}

#[test]
fn gpu_statistics_equal_the_cpu_statistics() {
    let Some(mut cuda) = cuda_or_skip!() else {
        return;
    };
    for (rows, cols) in [(1, 1), (3, 5), (1000, 1000), (517, 1283), (2048, 2048)] {
        let size = GridSize::new(rows, cols).unwrap();
        let values: Vec<f32> = (0..size.cells())
            .map(|i| ((i * 2_654_435_761) % 1000) as f32 / 7.0 - 60.0)
            .collect();
        let grid = heatlab_engine::Grid::from_vec(size, values).unwrap();
        cuda.upload(&grid).unwrap();
        let mut cpu = CpuBackend::new();
        cpu.upload(&grid).unwrap();
        let (on_gpu, on_cpu) = (cuda.statistics().unwrap(), cpu.statistics().unwrap());
        assert_eq!((on_gpu.min, on_gpu.max), (on_cpu.min, on_cpu.max), "{size}");
        assert!(
            (on_gpu.total - on_cpu.total).abs() <= 1e-9 * on_cpu.total.abs().max(1.0),
            "{size}: {} vs {}",
            on_gpu.total,
            on_cpu.total
        );
    }
}

/// Fields of awkward values for the GPU's colour ranges: non-finite cells, signed zeros, ties,
/// a single finite value, none at all, one cell; and a jagged field.
#[expect(
    clippy::unwrap_used,
    reason = "a test helper; clippy's allow-unwrap-in-tests covers #[test] functions only"
)]
fn awkward_fields() -> Vec<heatlab_engine::Grid> {
    use heatlab_engine::Grid;
    let awkward = |i: usize| match i % 13 {
        0 => f32::NAN,
        1 => f32::INFINITY,
        2 => f32::NEG_INFINITY,
        3 => -0.0,
        4 => 0.0,
        5 | 6 => 1.5,
        _ => ((i * 7919) % 1013) as f32 * 0.37 - 150.0,
    };
    let grid = |rows: usize, cols: usize, value: &dyn Fn(usize) -> f32| {
        let size = GridSize::new(rows, cols).unwrap();
        Grid::from_vec(size, (0..size.cells()).map(value).collect()).unwrap()
    };
    let jagged = JaggedParams {
        size: GridSize::new(700, 901).unwrap(),
        ..JaggedParams::default()
    };
    vec![
        generate_jagged(&jagged, &|_| {}).unwrap(),
        grid(301, 257, &awkward),
        grid(64, 64, &|i| if i == 777 { -2.5 } else { f32::NAN }),
        grid(40, 30, &|_| f32::NAN),
        grid(1, 1, &|_| 3.25),
        grid(3, 5, &|i| if i % 2 == 0 { -0.0 } else { 0.0 }),
    ]
}

/// Checks one view reduced by the GPU with its range against the host's reduction of `source`
/// (the layer on the CPU) and the range the host picks from it.
fn check_ranged_view(
    ranged: &heatlab_engine::compute::RangedPreview,
    source: &heatlab_engine::Grid,
    spec: &heatlab_engine::compute::PreviewSpec<'_>,
    what: &str,
) {
    use heatlab_engine::compute::ReducedPreview;
    use heatlab_engine::grid::RangeMode;
    let expected = ReducedPreview::of(source, spec.max_size);
    // Bit for bit, but for the sign and payload of a NaN mean, which the GPU's and the host's
    // arithmetic write differently (ranges skip NaN).
    let bits = |g: &heatlab_engine::Grid| {
        g.as_slice()
            .iter()
            .map(|v| if v.is_nan() { u32::MAX } else { v.to_bits() })
            .collect::<Vec<_>>()
    };
    assert_eq!(ranged.reduced.factor, expected.factor, "{what}");
    assert!(
        bits(&ranged.reduced.values) == bits(&expected.values),
        "{what}: means differ"
    );
    let host = spec.range.resolve(&expected.values);
    match (spec.range, ranged.range) {
        (RangeMode::Fixed(_), range) => assert_eq!(range, None, "{what}"),
        // The sign of a zero at either end depends on the host's order of comparisons; the
        // colours do not.
        (RangeMode::MinMax, Some(range)) => assert_eq!(range, host, "{what}"),
        (_, Some(range)) => assert_eq!(
            (range.min.to_bits(), range.max.to_bits()),
            (host.min.to_bits(), host.max.to_bits()),
            "{what}: {range:?} against {host:?}"
        ),
        (_, None) => panic!("{what}: no range from the GPU"),
    }
}

/// A frame's two views reduced at once with their colour ranges picked on the GPU (min-max,
/// percentile pairs, fixed) equal what the host picks from the CPU's means, bit for bit, over
/// awkward values, both layers, every boundary, with and without reduction.
#[test]
fn gpu_frame_ranges_equal_the_host_ranges() {
    use heatlab_engine::compute::{Layer, PreviewSpec};
    use heatlab_engine::grid::{RangeMode, ValueRange};
    use heatlab_engine::render::Colormap;
    let Some(mut cuda) = cuda_or_skip!() else {
        return;
    };
    let percentile = |low: f64, high: f64| RangeMode::Percentile { low, high };
    let modes = [
        RangeMode::MinMax,
        RangeMode::LAPLACIAN_DEFAULT,
        percentile(0.0, 100.0),
        percentile(50.0, 50.0),
        percentile(95.0, 5.0),
        percentile(100.0, 100.0),
        percentile(33.3, 66.7),
        percentile(-5.0, 120.0),
        RangeMode::Fixed(ValueRange {
            min: -1.0,
            max: 2.0,
        }),
    ];
    for (k, field) in awkward_fields().iter().enumerate() {
        let boundary = Boundary::ALL[k % Boundary::ALL.len()];
        cuda.upload(field).unwrap();
        let mut cpu = CpuBackend::new();
        cpu.upload(field).unwrap();
        let laplacian = cpu.laplacian(boundary).unwrap();
        for layer in Layer::ALL {
            let source = if layer == Layer::Field {
                field
            } else {
                &laplacian
            };
            for max_size in [(4096, 4096), (128, 96)] {
                for pair in modes.chunks(2) {
                    let spec = |range: RangeMode| PreviewSpec {
                        layer,
                        boundary,
                        max_size,
                        table: Colormap::Viridis.table(),
                        range,
                    };
                    let specs = [spec(pair[0]), spec(*pair.last().unwrap())];
                    let got = cuda
                        .reduce_previews_into([&specs[0], &specs[1]], [vec![7.0; 9], Vec::new()])
                        .unwrap();
                    for (spec, ranged) in specs.iter().zip(&got) {
                        let what =
                            format!("{} {layer:?} {max_size:?} {}", field.size(), spec.range);
                        check_ranged_view(ranged, source, spec, &what);
                    }
                }
            }
        }
    }
}
