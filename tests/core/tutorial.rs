//! The tutorial kernels: each CPU version against its formula, Monte Carlo pi against its
//! statistical bound, one thread against all threads, the GPU against the CPU when CUDA is
//! there (skipped and said so without it; a failure under HEATLAB_REQUIRE_CUDA=1), and the
//! `heatlab kernel` command.

use crate::common;
use common::backend::gpu_or_skip;
use common::cli::heatlab;

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

use heatlab_engine::tutorial::gaussian::{self, GaussianParams};
use heatlab_engine::tutorial::hidden_layer;
use heatlab_engine::tutorial::mc_pi::{self, PiEstimate};
use heatlab_engine::tutorial::{
    CpuRuns, CpuThreads, KernelSummary, RunControl, RunOptions, RunPhase, RunProgress, TutorialGpu,
};
use heatlab_engine::HeatlabError;

fn unattended() -> RunControl<'static> {
    RunControl::unattended()
}

/// |a - b| within `ulps` units of float32 precision of the larger, or `floor` absolutely.
fn close(a: f32, b: f32, ulps: f32, floor: f32) -> bool {
    let scale = a.abs().max(b.abs());
    (a - b).abs() <= (ulps * f32::EPSILON * scale).max(floor)
}

// ---------------------------------------------------------------------------------------------
// Hidden layer

#[test]
fn greyscales_are_numpys_floor_of_uniform_0_255() {
    // np.floor(np.random.default_rng(7).uniform(0, 255, 5).astype(np.float32))
    let inputs = hidden_layer::generate_inputs(5, 7, unattended()).unwrap();
    assert_eq!(inputs.greyscales, vec![159.0, 228.0, 197.0, 57.0, 76.0]);
}

#[test]
fn weights_are_normal_half_and_a_tenth() {
    let n = 200_000;
    let inputs = hidden_layer::generate_inputs(n, 3, unattended()).unwrap();
    let mean = inputs.weights.iter().map(|&w| f64::from(w)).sum::<f64>() / n as f64;
    let var = inputs
        .weights
        .iter()
        .map(|&w| (f64::from(w) - mean).powi(2))
        .sum::<f64>()
        / n as f64;
    // Standard error of the mean is 0.1 / sqrt(n) = 2.2e-4; of the std about 1.6e-4.
    assert!((mean - 0.5).abs() < 5.0 * 2.3e-4, "mean {mean}");
    assert!(
        (var.sqrt() - 0.1).abs() < 5.0 * 1.6e-4,
        "std {}",
        var.sqrt()
    );
    assert!(inputs
        .greyscales
        .iter()
        .all(|&g| g.fract() == 0.0 && (0.0..=255.0).contains(&g)));
}

#[test]
fn hidden_layer_cpu_is_the_formula_on_one_thread_and_all() {
    let n = 3 * (1 << 20) + 17; // several chunks and a ragged end
    let inputs = hidden_layer::generate_inputs(n, 11, unattended()).unwrap();
    let mut one = vec![0.0f32; n];
    let mut all = vec![0.0f32; n];
    hidden_layer::activate_cpu(&inputs, &mut one, CpuThreads::One, unattended()).unwrap();
    hidden_layer::activate_cpu(&inputs, &mut all, CpuThreads::All, unattended()).unwrap();
    assert_eq!(
        one, all,
        "one thread and all threads must agree bit for bit"
    );
    let pairs = inputs.greyscales.iter().zip(&inputs.weights);
    for (i, (&value, (&g, &w))) in one.iter().zip(pairs).enumerate() {
        assert_eq!(value, (g / 255.0 * w).tanh(), "float32 formula at {i}");
        let exact = (f64::from(g) / 255.0 * f64::from(w)).tanh() as f32;
        assert!(
            close(value, exact, 4.0, 1e-30),
            "at {i}: {value} vs {exact}"
        );
    }
}

// ---------------------------------------------------------------------------------------------
// Gaussian PDF

#[test]
fn x_is_numpys_uniform_minus_3_3_as_float32() {
    // np.random.default_rng(7).uniform(-3, 3, 5).astype(np.float32).view(np.uint32)
    let x = gaussian::generate_x(5, 7, unattended()).unwrap();
    let bits: Vec<u32> = x.iter().map(|v| v.to_bits()).collect();
    assert_eq!(
        bits,
        vec![1061168522, 1075349429, 1070840323, 3218279031, 3214506216]
    );
}

#[test]
fn gaussian_cpu_is_the_formula_on_one_thread_and_all() {
    let n = 2 * (1 << 20) + 5;
    let x = gaussian::generate_x(n, 5, unattended()).unwrap();
    for params in [
        GaussianParams::default(),
        GaussianParams {
            mean: 0.7,
            sigma: 0.3,
        },
    ] {
        let mut one = vec![0.0f32; n];
        let mut all = vec![0.0f32; n];
        gaussian::pdf_cpu(&x, params, &mut one, CpuThreads::One, unattended()).unwrap();
        gaussian::pdf_cpu(&x, params, &mut all, CpuThreads::All, unattended()).unwrap();
        assert_eq!(one, all);
        for (&point, &value) in x.iter().zip(&one) {
            // Rounding z = (x - mean) / sigma to float32 moves z^2 / 2 by up to z^2 ulps, and
            // exp turns that into a relative error: the tolerance grows with z^2.
            let exact = gaussian::pdf_f64(f64::from(point), params);
            let z = (f64::from(point) - f64::from(params.mean)) / f64::from(params.sigma);
            let tolerance = f64::from(f32::EPSILON) * (8.0 + 2.0 * z * z) * exact;
            let error = (f64::from(value) - exact).abs();
            assert!(error <= tolerance, "at x = {point}: {value} vs {exact}");
        }
    }
    // The peak of the standard normal is 1 / sqrt(2 pi).
    let peak = gaussian::pdf(0.0, GaussianParams::default());
    assert!((f64::from(peak) - 0.398_942_280_401_432_7).abs() < 3e-8);
}

#[test]
fn bad_gaussian_parameters_are_refused() {
    assert!(GaussianParams {
        mean: 0.0,
        sigma: 0.0
    }
    .validate()
    .is_err());
    assert!(GaussianParams {
        mean: f32::NAN,
        sigma: 1.0
    }
    .validate()
    .is_err());
}

// ---------------------------------------------------------------------------------------------
// Monte Carlo pi

#[test]
fn philox_matches_the_random123_known_answers() {
    let cases = [
        (
            [0, 0, 0, 0],
            [0, 0],
            [0x6627_e8d5, 0xe169_c58d, 0xbc57_ac4c, 0x9b00_dbd8],
        ),
        (
            [0xffff_ffff; 4],
            [0xffff_ffff; 2],
            [0x408f_276d, 0x41c8_3b0e, 0xa20b_c7c6, 0x6d54_51fd],
        ),
        (
            [0x243f_6a88, 0x85a3_08d3, 0x1319_8a2e, 0x0370_7344],
            [0xa409_3822, 0x299f_31d0],
            [0xd16c_fe09, 0x94fd_cceb, 0x5001_e420, 0x2412_6ea1],
        ),
    ];
    for (counter, key, expected) in cases {
        assert_eq!(mc_pi::philox4x32_10(counter, key), expected);
    }
}

#[test]
fn pcg32_matches_the_reference_implementation() {
    // pcg32-demo.c of pcg-c-basic: pcg32_srandom_r(&rng, 42u, 54u), then pcg32_random_r.
    let mut generator = mc_pi::Pcg32::new(42, 54);
    let first: Vec<u32> = (0..6).map(|_| generator.next_u32()).collect();
    assert_eq!(
        first,
        [
            0xa15c_02b7,
            0x7b47_f409,
            0xba1d_3330,
            0x83d2_f293,
            0xbfa4_784b,
            0xcbed_606e
        ]
    );
    assert_eq!(mc_pi::PCG_STREAM, 54);
    // The jump-ahead lands where stepping does, and a whole period comes back.
    for (seed, delta) in [(1, 0), (2, 1), (3, 2), (4, 12_345), (u64::MAX, 99_999)] {
        let mut stepped = mc_pi::Pcg32::new(seed, 54);
        for _ in 0..delta {
            stepped.next_u32();
        }
        let mut jumped = mc_pi::Pcg32::new(seed, 54);
        jumped.advance(delta);
        assert_eq!(jumped, stepped, "seed {seed}, delta {delta}");
    }
    let start = mc_pi::Pcg32::new(7, 54);
    let mut around = start;
    around.advance(u64::MAX);
    around.next_u32();
    assert_eq!(around, start);
}

#[test]
fn mwc64x_matches_the_reference_implementation() {
    // tests/reference/mwc64x_pi_counts.py: Thomas's step (mwc64x_rng.cl) from the SplitMix64
    // start of seed 42, in Python integers.
    let mut generator = mc_pi::Mwc64x::from_seed(42);
    assert_eq!(
        generator,
        mc_pi::Mwc64x::from_residue(3_185_059_151 * 4_294_883_355 + 434_943_809)
    );
    let first: Vec<u32> = (0..6).map(|_| generator.next_u32()).collect();
    assert_eq!(
        first,
        [
            0xa434_920e,
            0x923c_5cb0,
            0x0a10_9ace,
            0x98db_ef0f,
            0xe74d_131b,
            0x0a96_86d2
        ]
    );
}

/// (seed, first sample, samples, inside): counted by an independent Python implementation of
/// the same definition (tests/reference/mwc64x_pi_counts.py: MWC64X from the SplitMix64 start of
/// the seed, words 2j and 2j + 1, top 24 bits, X^2 + Y^2 < 2^48, Thomas's skip to the first
/// sample), including far and odd starts and one past 2^63 samples (word 2j modulo 2^64).
const PI_REFERENCE_COUNTS: [(u64, u64, u64, u64); 8] = [
    (0, 0, 1, 1),
    (0, 0, 1000, 800),
    (42, 0, 100_001, 78_591),
    (u64::MAX, 0, 65_537, 51_383),
    (7, 1 << 36, 10_001, 7_855),
    (3, 2 * ((1 << 32) - 1000) + 1, 10_000, 7_883),
    (5, (1 << 35) - 4000, 20_000, 15_704),
    (9, (1 << 63) + 5, 3_000, 2_401),
];

#[test]
fn pi_counts_match_the_reference_values() {
    for (seed, first, n, inside) in PI_REFERENCE_COUNTS {
        assert_eq!(
            mc_pi::count_inside_range(seed, first, n),
            inside,
            "seed {seed}, samples [{first}, {first} + {n})"
        );
    }
    // From the start, the chunked counts of one thread and all threads agree with them too.
    for (seed, first, n, inside) in PI_REFERENCE_COUNTS {
        if first == 0 {
            for threads in [CpuThreads::One, CpuThreads::All] {
                assert_eq!(
                    mc_pi::count_inside_cpu(n, seed, threads, unattended()).unwrap(),
                    inside
                );
            }
        }
    }
}

#[test]
fn pi_is_within_five_standard_errors_for_several_seeds() {
    let n = 10_000_000;
    for seed in [0, 1, 2, 42, 1 << 40, u64::MAX] {
        let inside = mc_pi::count_inside_cpu(n, seed, CpuThreads::All, unattended()).unwrap();
        let estimate = PiEstimate::new(inside, n);
        assert!(
            estimate.error.abs() < 5.0 * estimate.standard_error,
            "seed {seed}: {} is {} standard errors from pi",
            estimate.estimate,
            estimate.error / estimate.standard_error
        );
        // 4 sqrt(p (1 - p) / n) with p = pi / 4 is about 5.19e-4 at 10M samples.
        assert!((estimate.standard_error - 5.19e-4).abs() < 1e-5);
    }
}

#[test]
fn pi_count_is_reproducible_and_independent_of_the_split() {
    let (n, seed) = (1_000_001, 42); // odd, and no multiple of any chunk
    let one = mc_pi::count_inside_cpu(n, seed, CpuThreads::One, unattended()).unwrap();
    let all = mc_pi::count_inside_cpu(n, seed, CpuThreads::All, unattended()).unwrap();
    assert_eq!(one, all);
    assert_eq!(
        one,
        mc_pi::count_inside_cpu(n, seed, CpuThreads::All, unattended()).unwrap()
    );
    let split = mc_pi::count_inside_range(seed, 0, 400_000)
        + mc_pi::count_inside_range(seed, 400_000, n - 400_000);
    assert_eq!(one, split);
    assert_ne!(
        one,
        mc_pi::count_inside_cpu(n, seed + 1, CpuThreads::All, unattended()).unwrap()
    );
    // The scatter points are the first samples of the same stream.
    let points = mc_pi::first_points(seed, 999);
    let inside_points = points.iter().filter(|p| p.inside).count() as u64;
    assert_eq!(inside_points, mc_pi::count_inside_range(seed, 0, 999));
    for p in &points {
        assert!((0.0..1.0).contains(&p.x) && (0.0..1.0).contains(&p.y));
        assert_eq!(
            p.inside,
            p.x * p.x + p.y * p.y < 1.0,
            "exact in float64 too: {p:?}"
        );
    }
}

#[test]
fn pi_run_reports_cpu_timings_and_no_gpu_without_one() {
    let options = RunOptions {
        n: 100_000,
        seed: 9,
        repeats: 3,
        cpu: CpuRuns::Both,
    };
    let output = mc_pi::run(&options, None, unattended()).unwrap();
    let timings = &output.run.timings;
    assert_eq!(timings.cpu_one_thread.as_ref().unwrap().runs_s.len(), 3);
    assert!(timings.cpu_all_threads.is_some());
    assert!(timings.gpu_host_arrays.is_none() && output.run.max_abs_difference_gpu_cpu.is_none());
    assert_eq!(output.points.len(), mc_pi::SCATTER_POINTS);
    let KernelSummary::MonteCarloPi(estimate) = output.run.result else {
        panic!("wrong summary")
    };
    assert_eq!(estimate, output.estimate);
    assert_eq!(output.run.timing_records().len(), 6);
}

// ---------------------------------------------------------------------------------------------
// Control: cancellation, progress, memory

#[test]
fn a_set_cancel_flag_stops_the_run() {
    let cancel = AtomicBool::new(true);
    let control = RunControl {
        cancel: &cancel,
        progress: &|_| {},
    };
    let options = RunOptions {
        n: 10_000_000,
        seed: 1,
        repeats: 1,
        cpu: CpuRuns::Both,
    };
    let error = mc_pi::run(&options, None, control).unwrap_err();
    assert!(matches!(error, HeatlabError::Cancelled), "{error}");
    let error = gaussian::run(&options, GaussianParams::default(), None, control).unwrap_err();
    assert!(matches!(error, HeatlabError::Cancelled), "{error}");
}

#[test]
fn progress_reaches_the_total_of_every_phase() {
    let cpu_all_done = AtomicU64::new(0);
    let report = |progress: RunProgress| {
        assert!(progress.done <= progress.total);
        if progress.phase == RunPhase::CpuAllThreads {
            cpu_all_done.fetch_max(progress.done, Ordering::Relaxed);
        }
    };
    let cancel = AtomicBool::new(false);
    let control = RunControl {
        cancel: &cancel,
        progress: &report,
    };
    let options = RunOptions {
        n: 3_000_000,
        seed: 2,
        repeats: 1,
        cpu: CpuRuns::AllThreads,
    };
    hidden_layer::run(&options, None, control).unwrap();
    assert_eq!(cpu_all_done.load(Ordering::Relaxed), 3_000_000);
}

#[test]
fn sizes_beyond_memory_are_refused_with_the_size_needed() {
    let options = RunOptions {
        n: 1 << 50,
        seed: 1,
        repeats: 1,
        cpu: CpuRuns::Both,
    };
    let error = hidden_layer::run(&options, None, unattended()).unwrap_err();
    assert!(matches!(error, HeatlabError::OutOfMemory { .. }), "{error}");
    assert!(error.to_string().contains("needs"), "{error}");
}

// ---------------------------------------------------------------------------------------------
// GPU against CPU

#[test]
fn gpu_hidden_layer_matches_cpu() {
    let Some(gpu) = gpu_or_skip!(TutorialGpu::open()) else {
        return;
    };
    for n in [1, 1000, 1_000_003] {
        let options = RunOptions {
            n,
            seed: 4,
            repeats: 2,
            cpu: CpuRuns::AllThreads,
        };
        let output = hidden_layer::run(&options, Some(&gpu), unattended()).unwrap();
        let difference = output.run.max_abs_difference_gpu_cpu.unwrap();
        eprintln!("hidden layer n = {n}: max |gpu - cpu| = {difference:e}");
        assert!(difference <= 4.0 * f64::from(f32::EPSILON), "{difference}");
        assert!(output.run.timings.gpu_device_resident.is_some());
        assert_pinned_beside_pageable(&output.run.timings);
    }
}

/// The pinned runs ran, whole and in chunks, and gave the pageable run's output bit for bit.
fn assert_pinned_beside_pageable(timings: &heatlab_engine::tutorial::KernelTimings) {
    assert_eq!(timings.pinned_equals_pageable, Some(true));
    let (Some(pageable), Some(pinned)) = (&timings.gpu_host_arrays, &timings.gpu_pinned_arrays)
    else {
        panic!("a GPU run times pageable and pinned host arrays: {timings:?}");
    };
    assert_eq!(pinned.total.runs_s.len(), pageable.total.runs_s.len());
    assert!(pinned.upload.mean_s > 0.0 && pinned.download.mean_s > 0.0);
    assert!(timings.device_resident_launches_per_timing >= 1);
}

#[test]
fn gpu_gaussian_matches_cpu() {
    let Some(gpu) = gpu_or_skip!(TutorialGpu::open()) else {
        return;
    };
    let params = GaussianParams {
        mean: 0.25,
        sigma: 0.8,
    };
    let options = RunOptions {
        n: 2_000_001,
        seed: 8,
        repeats: 2,
        cpu: CpuRuns::AllThreads,
    };
    let output = gaussian::run(&options, params, Some(&gpu), unattended()).unwrap();
    let mut cpu = vec![0.0f32; output.x.len()];
    gaussian::pdf_cpu(&output.x, params, &mut cpu, CpuThreads::All, unattended()).unwrap();
    for (i, (&g, &c)) in output.pdf.iter().zip(&cpu).enumerate() {
        assert!(
            close(g, c, 8.0, 1e-37),
            "at x = {}: gpu {g} cpu {c}",
            output.x[i]
        );
    }
    eprintln!(
        "gaussian: max |gpu - cpu| = {:e}",
        output.run.max_abs_difference_gpu_cpu.unwrap()
    );
    assert_pinned_beside_pageable(&output.run.timings);
    let overlapped = output.run.timings.gpu_pinned_overlapped.as_ref().unwrap();
    assert!(overlapped.chunks > 1 && overlapped.streams == 2);
    // Sizes that are no multiple of the float4 groups, the threads' groups or the chunks.
    for n in [1, 3, 5, 2047, 4097, 65_539] {
        let options = RunOptions {
            n,
            seed: 9,
            repeats: 1,
            cpu: CpuRuns::AllThreads,
        };
        let output = gaussian::run(&options, params, Some(&gpu), unattended()).unwrap();
        let mut cpu = vec![0.0f32; output.x.len()];
        gaussian::pdf_cpu(&output.x, params, &mut cpu, CpuThreads::All, unattended()).unwrap();
        for (&g, &c) in output.pdf.iter().zip(&cpu) {
            assert!(close(g, c, 8.0, 1e-37), "n = {n}: gpu {g} cpu {c}");
        }
        assert_pinned_beside_pageable(&output.run.timings);
    }
}

#[test]
fn gpu_pi_counts_equal_the_reference_and_cpu_counts_at_awkward_sizes() {
    let Some(gpu) = gpu_or_skip!(TutorialGpu::open()) else {
        return;
    };
    eprintln!("Monte Carlo kernel: {}", gpu.monte_carlo_pi_kernel());
    for (seed, first, n, inside) in PI_REFERENCE_COUNTS {
        assert_eq!(
            mc_pi::count_inside_range_gpu(&gpu, seed, first, n).unwrap(),
            inside,
            "seed {seed}, samples [{first}, {first} + {n})"
        );
    }
    // Sizes around the kernel's groupings: 256 threads per block, 64 samples per thread before
    // a launch takes a whole wave, one wave of blocks per GPU (about 2^19 threads on an H100),
    // at even and odd starts; then a start far into the sequence.
    let sizes = [
        2,
        3,
        255,
        511,
        512,
        513,
        1 << 20,
        (1 << 20) + 1,
        (1 << 21) - 1,
        256 * 64 - 1,
        256 * 64 + 1,
        3_000_017,
        7 * (1 << 19) + 5,
    ];
    for (index, &n) in sizes.iter().enumerate() {
        for seed in [1, 99, 0xdead_beef_cafe_f00d] {
            let first = index as u64 * 1_000_003;
            assert_eq!(
                mc_pi::count_inside_range_gpu(&gpu, seed, first, n).unwrap(),
                mc_pi::count_inside_range(seed, first, n),
                "seed {seed}, samples [{first}, {first} + {n})"
            );
        }
    }
    let first = (1 << 35) - 4_000;
    assert_eq!(
        mc_pi::count_inside_range_gpu(&gpu, 5, first, 100_001).unwrap(),
        mc_pi::count_inside_range(5, first, 100_001)
    );
    assert_eq!(
        mc_pi::count_inside_range_gpu(&gpu, 5, 1, 10).unwrap(),
        mc_pi::count_inside_range(5, 1, 10)
    );
}

#[test]
fn gpu_pi_count_equals_cpu_count_exactly() {
    let Some(gpu) = gpu_or_skip!(TutorialGpu::open()) else {
        return;
    };
    for (n, seed) in [(1, 0), (999, 3), (1_000_000, 42), (123_456_789, u64::MAX)] {
        let options = RunOptions {
            n,
            seed,
            repeats: 2,
            cpu: CpuRuns::AllThreads,
        };
        let output = mc_pi::run(&options, Some(&gpu), unattended()).unwrap();
        let cpu = mc_pi::count_inside_cpu(n, seed, CpuThreads::All, unattended()).unwrap();
        assert_eq!(output.estimate.inside, cpu, "n = {n}, seed {seed}");
        assert_eq!(output.run.max_abs_difference_gpu_cpu, Some(0.0));
        assert_pinned_beside_pageable(&output.run.timings);
    }
}

// ---------------------------------------------------------------------------------------------
// The command

#[test]
fn kernel_command_refuses_bad_input_with_one_line() {
    for args in [
        &["kernel", "mc-pi", "--n", "0"][..],
        &["kernel", "gaussian", "--sigma", "-1", "--backend", "cpu"],
        &[
            "kernel",
            "hidden-layer",
            "--repeat",
            "0",
            "--backend",
            "cpu",
        ],
        &["kernel", "hidden-layer", "--mean", "1", "--backend", "cpu"],
        &["kernel", "fourier", "--backend", "cpu"],
    ] {
        let output = heatlab(args);
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert!(!output.status.success(), "{args:?} should fail");
        assert_eq!(
            output.status.code(),
            Some(if stderr.contains("heatlab: error") {
                1
            } else {
                2
            })
        );
        assert!(!stderr.contains("panicked"), "{args:?}: {stderr}");
    }
    let output = heatlab(&["kernel", "gaussian", "--sigma", "-1", "--backend", "cpu"]);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(stderr.trim().lines().count(), 1, "{stderr}");
}

#[test]
fn kernel_command_prints_the_samples_per_second_of_pi() {
    let output = heatlab(&[
        "kernel",
        "mc-pi",
        "--n",
        "300000",
        "--seed",
        "5",
        "--backend",
        "cpu",
        "--repeat",
        "2",
        "--cpu",
        "both",
    ]);
    assert!(output.status.success(), "{output:?}");
    let stdout = String::from_utf8_lossy(&output.stdout);
    let line = stdout
        .lines()
        .find_map(|line| line.strip_prefix("samples/s: "))
        .unwrap_or_else(|| panic!("no samples/s line in {stdout}"));
    // Both CPU versions, each rate the samples over the mean of its row of the table.
    for label in ["CPU, all ", "CPU, one thread "] {
        let rate: f64 = line
            .split("; ")
            .find_map(|part| part.strip_prefix(label))
            .map(|rest| rest.rsplit(' ').next().unwrap_or(rest))
            .unwrap_or_else(|| panic!("no {label} rate in {line}"))
            .parse()
            .unwrap();
        assert!(rate > 1e5 && rate < 1e13, "{label}: {rate}");
    }
    // The CPU's rate for a GPU-less build says nothing of a GPU.
    assert!(!line.contains("GPU"), "{line}");
}

#[test]
fn kernel_command_json_is_one_object_with_the_estimate() {
    let output = heatlab(&[
        "kernel",
        "mc-pi",
        "--n",
        "200000",
        "--seed",
        "5",
        "--backend",
        "cpu",
        "--repeat",
        "2",
        "--json",
    ]);
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let json: serde_json::Value =
        serde_json::from_slice(&output.stdout).expect("stdout is one JSON object");
    let estimate = json["result"]["estimate"].as_f64().unwrap();
    let inside = mc_pi::count_inside_cpu(200_000, 5, CpuThreads::All, unattended()).unwrap();
    assert_eq!(estimate, PiEstimate::new(inside, 200_000).estimate);
    assert_eq!(json["kernel"], "mc-pi");
    assert_eq!(
        json["timings"]["cpu_one_thread"]["runs_s"]
            .as_array()
            .unwrap()
            .len(),
        2
    );
    assert!(
        json["timings"]["cpu_all_threads"]["mean_s"]
            .as_f64()
            .unwrap()
            > 0.0
    );
}

#[test]
fn kernel_command_shows_pinned_beside_pageable() {
    if gpu_or_skip!(TutorialGpu::open()).is_none() {
        return;
    }
    let args = [
        "kernel",
        "gaussian",
        "--n",
        "100003",
        "--backend",
        "cuda",
        "--repeat",
        "2",
        "--cpu",
        "skip",
    ];
    let output = heatlab(&[&args[..], &["--json"]].concat());
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let json: serde_json::Value =
        serde_json::from_slice(&output.stdout).expect("stdout is one JSON object");
    let timings = &json["timings"];
    for version in ["gpu_host_arrays", "gpu_pinned_arrays"] {
        for part in ["upload", "kernel", "download", "total"] {
            assert_eq!(
                timings[version][part]["runs_s"].as_array().unwrap().len(),
                2,
                "{version}.{part}"
            );
        }
    }
    assert!(
        timings["gpu_pinned_overlapped"]["total"]["mean_s"]
            .as_f64()
            .unwrap()
            > 0.0
    );
    assert_eq!(timings["pinned_equals_pageable"], true);
    let table = heatlab(&args);
    let text = String::from_utf8_lossy(&table.stdout);
    assert!(table.status.success(), "{text}");
    for row in [
        "GPU, pageable host arrays (total)",
        "GPU, pinned host arrays (total)",
        "chunks on 2 streams",
        "GPU, device-resident",
        "pinned results = pageable results, bit for bit",
    ] {
        assert!(text.contains(row), "{row} missing from:\n{text}");
    }
}

#[test]
fn kernel_command_writes_npy_files_python_can_read() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().to_str().unwrap();
    let output = heatlab(&[
        "kernel",
        "gaussian",
        "--n",
        "1000",
        "--backend",
        "cpu",
        "--repeat",
        "1",
        "--npy",
        out,
    ]);
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    for name in ["x.npy", "pdf.npy"] {
        let bytes = std::fs::read(dir.path().join(name)).unwrap();
        let npy = npyz::NpyFile::new(&bytes[..]).unwrap();
        assert_eq!(npy.shape(), &[1000]);
        let values: Vec<f32> = npy.into_vec().unwrap();
        assert_eq!(values.len(), 1000);
    }
}

// ---------------------------------------------------------------------------------------------
// Helpers the panels use

#[test]
fn timing_stats_are_timeit_style() {
    let stats = heatlab_engine::tutorial::TimingStats::from_runs(vec![1.0, 2.0, 3.0]);
    assert_eq!(stats.mean_s, 2.0);
    assert!((stats.std_s - (2.0f64 / 3.0).sqrt()).abs() < 1e-12);
    assert_eq!(
        heatlab_engine::tutorial::format_seconds(0.00123),
        "1.230 ms"
    );
    assert_eq!(stats.display(), "2.000 s ± 816.497 ms");
}

#[test]
fn histogram_and_sweep_sizes() {
    let counts =
        heatlab_engine::tutorial::histogram(&[0.0, 0.1, 0.5, 0.99, 1.0, 1.5, -0.1], 2, 0.0, 1.0);
    assert_eq!(counts, vec![2, 3]);
    let sizes = heatlab_engine::tutorial::sweep_sizes(1000, 100_000_000, 1);
    assert_eq!(
        sizes,
        vec![1000, 10_000, 100_000, 1_000_000, 10_000_000, 100_000_000]
    );
    let sizes = heatlab_engine::tutorial::sweep_sizes(1000, 5000, 4);
    assert_eq!((sizes[0], *sizes.last().unwrap()), (1000, 5000));
    assert!(sizes.windows(2).all(|w| w[0] < w[1]), "{sizes:?}");
}

#[test]
fn gpu_and_outputs_can_move_to_a_worker_thread() {
    // The GUI runs kernels on a worker thread and sends the outputs back.
    fn send_and_sync<T: Send + Sync>() {}
    send_and_sync::<TutorialGpu>();
    send_and_sync::<hidden_layer::HiddenLayerOutput>();
    send_and_sync::<gaussian::GaussianOutput>();
    send_and_sync::<mc_pi::PiOutput>();
}
