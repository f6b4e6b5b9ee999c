//! The GPU basics: every kernel of `kernels/basics.cu` against its CPU twin (NumPy's formula),
//! at sizes that are not multiples of the block size, when CUDA is there (skipped and said so
//! without it; a failure under HEATLAB_REQUIRE_CUDA=1); the CPU lessons always; and
//! `heatlab kernel <lesson>` on the command line.

use crate::common;
use common::backend::gpu_or_skip;
use common::cli::heatlab;

use heatlab_engine::tutorial::basics::geometry::{self, Dimensions, GeometryOptions};
use heatlab_engine::tutorial::basics::maximum::{self, MaximumOptions};
use heatlab_engine::tutorial::basics::reduce::{self, ReduceKernel, ReduceOp};
use heatlab_engine::tutorial::basics::row_sums::{self, RowSumKernel};
use heatlab_engine::tutorial::basics::sin_exp::{self, SinExpVariant};
use heatlab_engine::tutorial::basics::{device, BasicsGpu};
use heatlab_engine::tutorial::RunControl;

fn unattended() -> RunControl<'static> {
    RunControl::unattended()
}

/// Launches worth checking: the notebook's, sizes off the block size, a grid too small,
/// no guard in 1-D and 2-D (both orientations), a 2-D array of odd shape.
fn geometry_cases() -> Vec<GeometryOptions> {
    let one = GeometryOptions {
        repeats: 1,
        ..GeometryOptions::notebook_1d()
    };
    let two = GeometryOptions {
        repeats: 1,
        ..GeometryOptions::notebook_2d()
    };
    let mut cases = vec![one.clone(), two.clone()];
    for (n, grid, guarded) in [
        (1000, 4, true),
        (1000, 4, false),
        (1000, 2, true),
        (1, 1, false),
    ] {
        cases.push(GeometryOptions {
            n,
            grid: [grid, 1],
            guarded,
            ..one.clone()
        });
    }
    for x_along_rows in [true, false] {
        for guarded in [true, false] {
            let mut case = GeometryOptions {
                rows: 37,
                cols: 101,
                block: [16, 8],
                x_along_rows,
                guarded,
                ..two.clone()
            };
            case.grid = case.fitting_grid();
            cases.push(case);
        }
    }
    cases.push(GeometryOptions {
        rows: 10,
        cols: 10,
        block: [4, 4],
        grid: [3, 3],
        guarded: false,
        ..two
    });
    cases
}

#[test]
fn geometry_cpu_model_counts_the_notebooks_launches() {
    for options in geometry_cases() {
        let outcome = geometry::run(&options, None, unattended()).unwrap();
        let t = outcome.tally;
        // Every element is either missed, incremented once or more.
        assert_eq!(
            t.missed + t.incremented_once + t.touched_more_than_once,
            options.elements()
        );
        if options.guarded {
            assert_eq!(
                t.writes_past_end + t.touched_more_than_once,
                0,
                "{options:?}"
            );
        }
        assert_eq!(outcome.gpu_equals_cpu, None);
    }
}

#[test]
fn gpu_geometry_equals_the_cpu_model_buffer_and_padding() {
    let Some(gpu) = gpu_or_skip!(BasicsGpu::open()) else {
        return;
    };
    for options in geometry_cases() {
        let outcome = geometry::run(&options, Some(&gpu), unattended()).unwrap();
        assert_eq!(
            outcome.gpu_equals_cpu,
            Some(true),
            "{options:?}: {:?}",
            outcome.tally
        );
        assert!(outcome
            .kernel
            .as_ref()
            .is_some_and(|k| k.per_launch.mean_s > 0.0));
        if !options.guarded && options.dimensions == Dimensions::One {
            assert_eq!(outcome.tally.writes_past_end, outcome.idle_threads);
        }
    }
}

#[test]
fn gpu_maximum_equals_numpys_at_every_rung() {
    let Some(gpu) = gpu_or_skip!(BasicsGpu::open()) else {
        return;
    };
    let options = MaximumOptions {
        sides: vec![1, 7, 33, 70],
        seed: 3,
        repeats: 2,
    };
    let ladder = maximum::run(&options, Some(&gpu), unattended()).unwrap();
    assert_eq!(ladder.steps.len(), 4);
    for step in &ladder.steps {
        assert_eq!(step.gpu_equals_cpu, Some(true), "side {}", step.side);
        let gpu = step.gpu.as_ref().unwrap();
        assert!(gpu.gpu_host_arrays.is_some() && gpu.gpu_device_resident.is_some());
        assert!(gpu.gpu_pinned_arrays.is_some() || gpu.pinned_note.is_some());
        assert!(gpu.pinned_equals_pageable.unwrap_or(true));
    }
    assert!(ladder.gpu.is_some());
}

#[test]
fn gpu_sin_exp_is_within_each_precisions_error() {
    let Some(gpu) = gpu_or_skip!(BasicsGpu::open()) else {
        return;
    };
    for n in [1001, 100_003] {
        let report = sin_exp::run(n, 2, Some(&gpu), unattended()).unwrap();
        for row in &report.rows {
            let measured = row.gpu.as_ref().unwrap();
            // Relative to max |z|: float32 rounds x to 2^-24 (about 4e-7 of 2 pi) first.
            let (bound, from_cpu) = match row.variant {
                SinExpVariant::F32Precise => (2e-6, Some(1e-6)),
                SinExpVariant::F32Fast => (1e-4, None),
                SinExpVariant::F64 => (1e-14, Some(1e-14)),
            };
            assert!(
                measured.max_relative_error <= bound,
                "{n} {}: {measured:?}",
                row.variant
            );
            if let (Some(limit), Some(difference)) =
                (from_cpu, measured.max_relative_difference_from_cpu)
            {
                assert!(difference <= limit, "{n} {}: {difference}", row.variant);
            }
            assert!(measured.device_resident.per_launch.mean_s > 0.0);
        }
    }
}

#[test]
fn gpu_row_sums_match_the_cpu() {
    let Some(gpu) = gpu_or_skip!(BasicsGpu::open()) else {
        return;
    };
    for (rows, cols) in [(1000, 1000), (37, 101), (1, 1), (300, 33)] {
        let report = row_sums::run(rows, cols, 4, 2, Some(&gpu), unattended()).unwrap();
        assert_eq!(report.kernels.len(), 2);
        for kernel in &report.kernels {
            match kernel.kernel {
                // The same float64 sum in the same order: equal bit for bit.
                RowSumKernel::ThreadPerRow => assert_eq!(kernel.rows_equal, u64::from(rows)),
                // Another order of float64 adds, rounded to float32 once: at most one rounding apart.
                RowSumKernel::WarpPerRow => {
                    assert!(kernel.max_relative_difference <= 2.5e-7, "{kernel:?}")
                }
            }
        }
    }
}

#[test]
fn gpu_reductions_match_the_cpu() {
    let Some(gpu) = gpu_or_skip!(BasicsGpu::open()) else {
        return;
    };
    for n in [1, 255, 257, 100_003, 4_000_000] {
        let report = reduce::run(n, 6, 2, Some(&gpu), unattended()).unwrap();
        for row in &report.rows {
            assert_eq!(row.gpu.len(), ReduceKernel::ALL.len());
            for kernel in &row.gpu {
                assert!(
                    kernel.relative_difference <= 1e-11,
                    "n = {n}, {} by {}: {} against {}",
                    row.op,
                    kernel.kernel,
                    kernel.value,
                    row.cpu_value
                );
            }
        }
        let sum = &report.rows[0];
        assert_eq!(sum.op, ReduceOp::Sum);
    }
}

#[test]
fn gpu_device_figures_are_consistent() {
    let Some(gpu) = gpu_or_skip!(BasicsGpu::open()) else {
        return;
    };
    let report = device::run(&gpu).unwrap();
    assert!(!report.name.is_empty() && report.multiprocessors > 0);
    assert!(report.memory_bytes > 0 && report.device_copy_bandwidth > 0.0);
    if let Some(peak) = report.peak_bandwidth {
        assert!(report.device_copy_bandwidth < 1.2 * peak, "{report:?}");
    }
    assert_eq!(
        report.cores_per_sm,
        device::cores_per_sm(report.compute_capability)
    );
}

#[test]
fn cli_geometry_reports_the_writes_past_the_end_as_json() {
    let output = heatlab(&[
        "kernel",
        "geometry",
        "--n",
        "1000",
        "--grid",
        "4",
        "--unguarded",
        "--repeat",
        "1",
        "--json",
    ]);
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let json: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!(json["lesson"], "geometry");
    assert_eq!(json["report"]["tally"]["writes_past_end"], 24);
    assert_eq!(json["report"]["idle_threads"], 24);
}

#[test]
fn cli_lessons_run_as_tables_on_the_cpu() {
    for args in [
        vec![
            "kernel",
            "max",
            "--sides",
            "8,16",
            "--repeat",
            "1",
            "--backend",
            "cpu",
        ],
        vec![
            "kernel",
            "sin-exp",
            "--n",
            "1001",
            "--repeat",
            "1",
            "--backend",
            "cpu",
        ],
        vec![
            "kernel",
            "row-sums",
            "--rows",
            "33",
            "--cols",
            "17",
            "--repeat",
            "1",
            "--backend",
            "cpu",
        ],
        vec![
            "kernel",
            "reduce",
            "--n",
            "1001",
            "--repeat",
            "1",
            "--backend",
            "cpu",
        ],
        vec![
            "kernel",
            "geometry",
            "--dims",
            "2",
            "--rows",
            "10",
            "--cols",
            "10",
            "--block",
            "4x4",
            "--grid",
            "3x3",
            "--unguarded",
            "--backend",
            "cpu",
        ],
    ] {
        let output = heatlab(&args);
        assert!(
            output.status.success(),
            "{args:?}: {}",
            String::from_utf8_lossy(&output.stderr)
        );
        assert!(!output.stdout.is_empty());
    }
}

#[test]
fn cli_refuses_bad_lesson_input_with_a_message() {
    for (args, expected) in [
        (vec!["kernel", "geometry", "--dims", "3"], "--dims"),
        (vec!["kernel", "geometry", "--block", "2048"], "1024"),
        (vec!["kernel", "hidden-layer", "--sides", "8"], "GPU basics"),
        (vec!["kernel", "max", "--n", "100"], "--sides"),
        (vec!["kernel", "device", "--backend", "cpu"], "needs a GPU"),
        (vec!["kernel", "maximum"], "unknown kernel"),
    ] {
        let output = heatlab(&args);
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert!(!output.status.success(), "{args:?} succeeded");
        assert!(stderr.contains(expected), "{args:?}: {stderr}");
    }
}

#[test]
fn bench_basics_writes_the_ladder_and_the_notebooks_rungs_or_why_not() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("basics.json");
    let output = heatlab(&[
        "bench",
        "--basics",
        "8,16",
        "--repeats",
        "1",
        "--backend",
        "cpu",
        "--json",
        path.to_str().unwrap(),
    ]);
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let json: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    assert_eq!(json["heatlab"]["steps"].as_array().map(Vec::len), Some(2));
    // Python with NumPy measured the notebook's rungs, or the report says why it did not.
    let notebook = &json["notebook"];
    if notebook.is_null() {
        assert!(json["notebook_note"].is_string(), "{json}");
    } else {
        assert!(
            notebook["sides"]["8"]["np.maximum (maximum_2)"].is_array(),
            "{json}"
        );
    }
}
