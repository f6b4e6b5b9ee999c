//! The field and the steps against golden files made with the NumPy reference, on each backend:
//! the field where the backend generates it (the CPU; CUDA with cuFFT) and the steps of its
//! default kernel, and every CPU method's steps. Without CUDA the CUDA halves skip and say so;
//! under HEATLAB_REQUIRE_CUDA=1 a missing GPU is a failure.

use crate::common;
use common::backend::on_each_backend;

use common::{golden_cases, load, max_abs_diff};
use heatlab_engine::compute::{Backend, BackendKind, Boundary, CpuBackend, CpuMethod, StepParams};
use heatlab_engine::field::JaggedParams;
use heatlab_engine::sim::generate::{generate_on, GenerationPlace};
use heatlab_engine::GridSize;

on_each_backend! {
    /// The jagged field, generated where the backend generates it (on the CPU backend the CPU;
    /// on CUDA the GPU, with no fallback to the CPU), is within 1e-5 of NumPy's in every cell,
    /// and zeroes the same cells.
    fn jagged_field_matches_numpy_to_1e_5(backend, label) {
        let place = match backend.kind() {
            BackendKind::Cpu => GenerationPlace::Cpu { gpu_fallback: None },
            BackendKind::Cuda => GenerationPlace::Gpu,
        };
        for case in golden_cases() {
            let params = JaggedParams {
                size: GridSize::new(case.rows, case.cols).unwrap(),
                seed: case.seed,
                ..JaggedParams::default()
            };
            let what = format!("{label}, {}x{} seed {}", case.rows, case.cols, case.seed);
            let (ours, generation) = generate_on(backend, &params, &|_| {}).unwrap();
            assert_eq!(generation.place, place, "{what}: where it was generated");
            let numpy = load(case.field);
            let diff = max_abs_diff(&ours, &numpy);
            assert!(diff <= 1e-5, "{what}: max diff {diff}");
            // The percentile threshold zeroes most cells: both must zero the same ones.
            let zeros =
                |g: &heatlab_engine::Grid| g.as_slice().iter().filter(|v| **v == 0.0).count();
            assert_eq!(zeros(&ours), zeros(&numpy), "{what}: zeroed cells");
        }
    }
}

on_each_backend! {
    /// The golden fields stepped on the backend (its default kernel or method) equal NumPy's
    /// diffused fields and their Laplacians bit for bit, under every boundary.
    fn steps_match_numpy_bit_for_bit(backend, label) {
        for case in golden_cases() {
            let initial = load(case.field);
            for (name, diffused, laplacian) in case.stepped {
                let boundary: Boundary = name.parse().unwrap();
                let what = format!("{label}, {name}, {}x{}", case.rows, case.cols);
                backend.upload(&initial).unwrap();
                let params = StepParams {
                    coeff: case.coeff,
                    boundary,
                };
                backend.advance(case.steps, &params).unwrap();
                let field = backend.download().unwrap();
                let field_bits: Vec<u32> = field.as_slice().iter().map(|v| v.to_bits()).collect();
                let numpy = load(diffused);
                let numpy_bits: Vec<u32> = numpy.as_slice().iter().map(|v| v.to_bits()).collect();
                assert!(
                    field_bits == numpy_bits,
                    "{what} field: max diff {}",
                    max_abs_diff(&field, &numpy)
                );
                let lapl = backend.laplacian(boundary).unwrap();
                assert_eq!(
                    max_abs_diff(&lapl, &load(laplacian)),
                    0.0,
                    "{what} Laplacian"
                );
            }
        }
    }
}

/// The golden steps with each CPU method fixed, the plain loop (the harness's oracle) included;
/// `steps_match_numpy_bit_for_bit::cpu` checks the method chosen per field size.
#[test]
fn every_cpu_method_steps_like_numpy() {
    for method in [
        CpuMethod::Plain,
        CpuMethod::Rows,
        CpuMethod::Blocked {
            steps_per_pass: 3,
            band_rows: 7,
        },
    ] {
        let mut cpu = CpuBackend::new().with_method(method);
        steps_match_numpy_bit_for_bit(&mut cpu, &format!("cpu {method}"));
    }
}

#[test]
fn single_thread_and_all_threads_agree() {
    let case = &golden_cases()[0];
    let initial = load(case.field);
    let params = StepParams {
        coeff: 0.2,
        boundary: Boundary::Periodic,
    };
    let mut one = CpuBackend::with_threads(1);
    let mut many = CpuBackend::with_threads(4);
    one.upload(&initial).unwrap();
    many.upload(&initial).unwrap();
    one.advance(100, &params).unwrap();
    many.advance(100, &params).unwrap();
    assert_eq!(one.download().unwrap(), many.download().unwrap());
}
