//! The jagged field generated on the GPU (cuFFT, kernels/field.cu) against the CPU's, over
//! seeds, sizes and parameters, and through the paths the app and `heatlab run` take (against
//! NumPy's golden files: `golden::jagged_field_matches_numpy_to_1e_5::cuda` in the core tests).
//! GPU tests skip without a GPU (and fail under HEATLAB_REQUIRE_CUDA=1).

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "test helpers; clippy's allow-*-in-tests covers #[test] functions only"
)]

use crate::common;
use common::backend::cuda_or_skip;

use common::max_abs_diff;
use heatlab_engine::compute::{
    Backend, CpuBackend, CudaBackend, DeviceFieldUnavailable, StepParams,
};
use heatlab_engine::field::{generate_jagged, JaggedParams};
use heatlab_engine::grid::GridSize;
use heatlab_engine::sim::generate::{generate_on, GenerationPlace};
use heatlab_engine::sim::Simulation;
use heatlab_engine::Grid;

/// The bound: every cell within 1e-5 of the CPU's (the two use different FFTs).
const TOLERANCE: f32 = 1e-5;

fn size(rows: usize, cols: usize) -> GridSize {
    GridSize::new(rows, cols).unwrap()
}

fn on_gpu(cuda: &mut CudaBackend, params: &JaggedParams) -> Grid {
    cuda.generate_jagged_on_device(params)
        .unwrap_or_else(|why| panic!("GPU generation of {params:?} failed: {why}"));
    cuda.download().unwrap()
}

/// Compares a GPU field with the CPU's: every cell within the tolerance (a cell kept on one
/// side and zeroed on the other, at the percentile's threshold, would differ by its value).
fn assert_close(gpu: &Grid, cpu: &Grid, what: &str) {
    assert_eq!(gpu.size(), cpu.size(), "{what}: size");
    let diff = max_abs_diff(gpu, cpu);
    assert!(diff <= TOLERANCE, "{what}: max |GPU - CPU| = {diff:e}");
}

#[test]
fn gpu_field_matches_the_cpu_over_seeds_sizes_and_parameters() {
    let Some(mut cuda) = cuda_or_skip!() else {
        return;
    };
    let sizes = [
        size(8, 8),
        size(9, 8),
        size(33, 47),
        size(61, 37),
        size(64, 64),
        size(101, 250),
        size(257, 129),
        size(512, 512),
        size(2000, 2000),
    ];
    let seeds = [0u64, 7, 3_966_789, u64::MAX];
    let mut compared = 0;
    for (i, &grid_size) in sizes.iter().enumerate() {
        for (j, &seed) in seeds.iter().enumerate() {
            // Vary the other parameters with the case, so that each is seen at several sizes.
            let params = JaggedParams {
                size: grid_size,
                seed,
                // Not 0: radius**0 leaves the float32 noise's exact ties, which two different
                // FFTs' rounding may order differently at the percentile's threshold.
                exponent: [-1.7, -1.0, -3.0, -0.5][(i + j) % 4],
                cutoff: [0.45, 1.0, 0.2, 0.7][(i + 2 * j) % 4],
                percentile: [70.0, 0.0, 100.0, 33.3, 99.9][(i + j) % 5],
            };
            let cpu = generate_jagged(&params, &|_| {}).unwrap();
            let gpu = on_gpu(&mut cuda, &params);
            assert_close(&gpu, &cpu, &format!("{params:?}"));
            compared += 1;
        }
    }
    assert_eq!(compared, sizes.len() * seeds.len());
}

#[test]
fn regenerating_in_place_and_after_stepping_gives_fresh_fields() {
    let Some(cuda) = cuda_or_skip!() else {
        return;
    };
    let first = JaggedParams {
        size: size(300, 200),
        ..JaggedParams::default()
    };
    let (mut sim, generation) =
        Simulation::generated(Box::new(cuda), &first, StepParams::default(), &|_| {}).unwrap();
    assert_eq!(generation.place, GenerationPlace::Gpu);
    assert!(generation.device.is_some());
    let cpu_first = generate_jagged(&first, &|_| {}).unwrap();
    assert_close(sim.initial().unwrap(), &cpu_first, "first field");
    // Step, then drag the exponent, cutoff, percentile and seed as the app does: each
    // regeneration replaces the stepped field at step 0 and equals the CPU's.
    for (k, change) in (0..4).enumerate() {
        sim.advance(37 + k as u64).unwrap();
        let mut params = first;
        match change {
            0 => params.exponent = -2.2,
            1 => params.cutoff = 0.3,
            2 => params.percentile = 55.0,
            _ => params.seed = 12_345,
        }
        let generation = sim.regenerate(&params, &|_| {}).unwrap();
        assert_eq!(generation.place, GenerationPlace::Gpu);
        assert_eq!(sim.step_count(), 0);
        let cpu = generate_jagged(&params, &|_| {}).unwrap();
        let held = sim.field().unwrap();
        assert_close(&held, &cpu, &format!("regenerated {params:?}"));
        assert_eq!(sim.initial().unwrap(), &held, "initial is the held field");
        // The stepping after a regeneration is the CPU's step of the GPU's field, exactly.
        let mut reference = CpuBackend::new();
        reference.upload(sim.initial().unwrap()).unwrap();
        reference.advance(25, &StepParams::default()).unwrap();
        sim.advance(25).unwrap();
        assert_eq!(sim.field().unwrap(), reference.download().unwrap());
    }
    // A new size re-plans the transforms and chooses a kernel for it.
    let larger = JaggedParams {
        size: size(640, 480),
        ..first
    };
    sim.regenerate(&larger, &|_| {}).unwrap();
    let cpu = generate_jagged(&larger, &|_| {}).unwrap();
    assert_close(&sim.field().unwrap(), &cpu, "new size");
}

#[test]
fn the_initial_field_stays_on_the_gpu_until_the_host_needs_it() {
    let Some(cuda) = cuda_or_skip!() else {
        return;
    };
    let params = JaggedParams {
        size: size(260, 190),
        seed: 4_242,
        ..JaggedParams::default()
    };
    let bits = |grid: &Grid| {
        grid.as_slice()
            .iter()
            .map(|v| v.to_bits())
            .collect::<Vec<_>>()
    };
    let (mut sim, _) =
        Simulation::generated(Box::new(cuda), &params, StepParams::default(), &|_| {}).unwrap();
    assert!(
        !sim.initial_on_host(),
        "a field generated on the GPU stays there"
    );
    let generated = sim.field().unwrap();
    // Reset copies it back on the device, several times, whatever was stepped.
    for steps in [0, 41, 7] {
        sim.advance(steps).unwrap();
        sim.reset().unwrap();
        assert_eq!(
            bits(&sim.field().unwrap()),
            bits(&generated),
            "reset after {steps}"
        );
        assert!(!sim.initial_on_host());
    }
    // Dragging a parameter: each new field is kept, and Reset gives it, not the first one.
    let mut dragged = params;
    for exponent in [-2.1, -2.3] {
        dragged.exponent = exponent;
        sim.regenerate(&dragged, &|_| {}).unwrap();
        let held = sim.field().unwrap();
        sim.advance(13).unwrap();
        sim.reset().unwrap();
        assert_eq!(bits(&sim.field().unwrap()), bits(&held), "{exponent}");
        assert!(!sim.initial_on_host());
    }
    let latest = sim.field().unwrap();
    // Asking for it (saving a state) copies the same bits to the host.
    assert_eq!(bits(sim.initial().unwrap()), bits(&latest));
    assert!(sim.initial_on_host());
    // A fresh field of another size, then a failed one: the last good field stays held.
    let smaller = JaggedParams {
        size: size(64, 96),
        ..dragged
    };
    sim.regenerate(&smaller, &|_| {}).unwrap();
    let small = sim.field().unwrap();
    let invalid = JaggedParams {
        percentile: f64::NAN,
        ..smaller
    };
    assert!(sim.regenerate(&invalid, &|_| {}).is_err());
    assert_eq!(bits(&sim.field().unwrap()), bits(&small));
    sim.reset().unwrap();
    assert_eq!(bits(&sim.field().unwrap()), bits(&small));
}

#[test]
fn a_switch_to_the_cpu_takes_the_initial_field_kept_on_the_gpu_along() {
    let Some(cuda) = cuda_or_skip!() else {
        return;
    };
    let params = JaggedParams {
        size: size(130, 170),
        seed: 77,
        ..JaggedParams::default()
    };
    let (mut sim, _) =
        Simulation::generated(Box::new(cuda), &params, StepParams::default(), &|_| {}).unwrap();
    assert!(!sim.initial_on_host());
    let generated = sim.field().unwrap();
    sim.advance(9).unwrap();
    sim.switch_backend(Box::new(CpuBackend::new())).unwrap();
    assert!(sim.initial_on_host());
    sim.advance(5).unwrap();
    sim.reset().unwrap();
    let bits = |grid: &Grid| {
        grid.as_slice()
            .iter()
            .map(|v| v.to_bits())
            .collect::<Vec<_>>()
    };
    assert_eq!(
        bits(&sim.field().unwrap()),
        bits(&generated),
        "reset on the CPU"
    );
}

#[test]
fn the_cpu_backend_generates_on_the_cpu_without_a_fallback_reason() {
    let params = JaggedParams {
        size: size(40, 64),
        seed: 12_345,
        ..JaggedParams::default()
    };
    let mut cpu = CpuBackend::new();
    assert_eq!(
        cpu.generate_jagged(&params),
        Err(DeviceFieldUnavailable::CpuBackend)
    );
    let (grid, generation) = generate_on(&mut cpu, &params, &|_| {}).unwrap();
    assert_eq!(
        generation.place,
        GenerationPlace::Cpu { gpu_fallback: None }
    );
    assert!(generation.fallback().is_none());
    assert_eq!(grid, generate_jagged(&params, &|_| {}).unwrap());
    assert_eq!(cpu.download().unwrap(), grid, "the backend holds the field");
}

#[test]
fn thin_fields_are_generated_right_wherever_they_are_generated() {
    let Some(cuda) = cuda_or_skip!() else {
        return;
    };
    let mut backend: Box<dyn Backend> = Box::new(cuda);
    for (rows, cols) in [(1, 1), (1, 7), (5, 1), (2, 2), (2, 3), (3, 2)] {
        let params = JaggedParams {
            size: size(rows, cols),
            seed: 99,
            ..JaggedParams::default()
        };
        let (grid, generation) = generate_on(backend.as_mut(), &params, &|_| {}).unwrap();
        let cpu = generate_jagged(&params, &|_| {}).unwrap();
        assert_close(
            &grid,
            &cpu,
            &format!("{rows}x{cols} ({})", generation.place),
        );
        assert_eq!(
            backend.download().unwrap(),
            grid,
            "{rows}x{cols}: the backend holds it"
        );
        eprintln!(
            "{rows}x{cols}: generated on the {} {:?}",
            generation.place,
            generation.fallback()
        );
    }
}
