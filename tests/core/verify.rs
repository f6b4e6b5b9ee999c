//! The differential harness (`heatlab verify`): the CPU's methods against the plain loop here,
//! CUDA against the CPU where a GPU works (required with HEATLAB_REQUIRE_CUDA=1), a planted
//! fault found, and chunked long runs on the GPU equal to one uninterrupted CPU run.

use crate::common;
use common::backend::cuda_or_skip;

use std::process::Command;
use std::sync::atomic::AtomicBool;
use std::time::Duration;

use heatlab_engine::compute::{Backend, BackendKind, Boundary, CpuBackend, StepParams};
use heatlab_engine::field::{generate_jagged, JaggedParams};
use heatlab_engine::verify::{verify, Compared, Subject, VerifyOptions};
use heatlab_engine::{Grid, GridSize};

#[test]
fn cpu_methods_agree_with_the_plain_loop_over_random_sequences() {
    let mut subject = Subject::Cpu(CpuBackend::new());
    let options = VerifyOptions {
        seed: 1000,
        sequences: 120,
        operations: 24,
        max_cells: 40_000,
        min_rows: 1,
    };
    let report = verify(&mut subject, &options, &AtomicBool::new(false), &|_| {}).unwrap();
    if let Some(divergence) = &report.divergence {
        panic!("{divergence}");
    }
    assert_eq!(report.sequences_passed, 120);
    let methods = &report.coverage.steps_by_method;
    for method in [
        "rows",
        "blocked-k2-band1",
        "blocked-k3-band5",
        "blocked-k8-band64",
    ] {
        assert!(
            methods
                .keys()
                .any(|name| name.starts_with(&format!("cpu-{method}-"))),
            "{method} never stepped: {methods:?}"
        );
    }
    assert_eq!(report.coverage.steps_by_boundary.len(), 3);
    for kind in [
        "laplacian",
        "preview",
        "regenerate",
        "switch-backend",
        "upload",
        "brush",
        "set-cells",
        "gather",
        "set-problem",
        "edit-map",
        "switch-heater",
        "clear-problem",
    ] {
        assert!(report.coverage.operations.contains_key(kind), "no {kind}");
    }
    assert!(
        methods
            .keys()
            .any(|name| name.starts_with("cpu-materials-")),
        "no heat problem stepped: {methods:?}"
    );
}

/// A backend that steps one step too few on every third `advance` call: a fault of the shape
/// of the stale CUDA graph (right on single calls, wrong in sequences).
struct DropsAStepNowAndThen {
    inner: CpuBackend,
    calls: u64,
}

impl Backend for DropsAStepNowAndThen {
    fn kind(&self) -> BackendKind {
        BackendKind::Cpu
    }
    fn device_name(&self) -> String {
        "planted fault".into()
    }
    fn step_method(&self) -> String {
        "drops-a-step".into()
    }
    fn upload(&mut self, field: &Grid) -> heatlab_engine::Result<()> {
        self.inner.upload(field)
    }
    fn advance(&mut self, steps: u64, params: &StepParams) -> heatlab_engine::Result<Duration> {
        self.calls += 1;
        let steps = if self.calls % 3 == 0 && steps > 1 {
            steps - 1
        } else {
            steps
        };
        self.inner.advance(steps, params)
    }
    fn download(&mut self) -> heatlab_engine::Result<Grid> {
        self.inner.download()
    }
    fn laplacian(&mut self, boundary: Boundary) -> heatlab_engine::Result<Grid> {
        self.inner.laplacian(boundary)
    }
}

#[test]
fn a_planted_fault_is_found_and_named() {
    let mut subject = Subject::Other(Box::new(DropsAStepNowAndThen {
        inner: CpuBackend::new(),
        calls: 0,
    }));
    let options = VerifyOptions {
        seed: 5,
        sequences: 50,
        operations: 30,
        max_cells: 20_000,
        min_rows: 1,
    };
    let report = verify(&mut subject, &options, &AtomicBool::new(false), &|_| {}).unwrap();
    let divergence = report.divergence.expect("the dropped step must be found");
    assert_eq!(divergence.compared, Compared::Field);
    assert!(divergence.operation.starts_with("advance"), "{divergence}");
    assert_eq!(divergence.method, "drops-a-step");
    assert!(divergence.cell.differing_cells > 0);
    assert_ne!(divergence.cell.subject, divergence.cell.reference);
    let text = divergence.to_string();
    assert!(
        text.contains(&format!("--seed {}", divergence.sequence_seed)),
        "{text}"
    );
    // The named sequence alone reproduces it.
    let rerun = verify(
        &mut subject,
        &VerifyOptions {
            seed: divergence.sequence_seed,
            sequences: 1,
            ..options
        },
        &AtomicBool::new(false),
        &|_| {},
    )
    .unwrap();
    assert!(rerun.divergence.is_some());
}

#[test]
fn cuda_agrees_with_the_cpu_over_random_sequences() {
    let Some(cuda) = cuda_or_skip!() else {
        return;
    };
    let mut subject = Subject::Cuda(Box::new(cuda));
    let options = VerifyOptions {
        seed: 2000,
        sequences: 300,
        operations: 24,
        max_cells: 160_000,
        min_rows: 1,
    };
    let report = verify(&mut subject, &options, &AtomicBool::new(false), &|_| {}).unwrap();
    if let Some(divergence) = &report.divergence {
        panic!("{divergence}");
    }
    let methods = &report.coverage.steps_by_method;
    for kernel in heatlab_engine::verify::sequence::cuda_kernels() {
        assert!(
            methods.contains_key(&format!("cuda-{kernel}")),
            "{kernel} never stepped: {methods:?}"
        );
    }
    for kernel in [
        "materials-vec4",
        "materials-scalar",
        "materials-blocked-k4-rows32",
    ] {
        assert!(
            methods
                .keys()
                .any(|name| name.starts_with(&format!("cuda-{kernel}"))),
            "{kernel} never stepped a heat problem: {methods:?}"
        );
    }
    assert!(
        methods.keys().any(|name| name.ends_with("+energy")),
        "no heat problem booked its energy: {methods:?}"
    );
    assert_eq!(report.coverage.steps_by_boundary.len(), 3);
    assert!(report.coverage.graph_replays > 0, "no graph was replayed");
    assert!(report.coverage.steps_without_graphs > 0);
}

/// The reproduction of the stale-graph bug: 2000 steps at 2000x2000 in chunks of any length
/// give the CPU's field exactly, for each boundary.
#[test]
fn chunked_long_runs_on_cuda_equal_one_cpu_run() {
    let Some(mut cuda) = cuda_or_skip!() else {
        return;
    };
    let size = GridSize::square(2000).unwrap();
    let params = JaggedParams {
        size,
        ..JaggedParams::default()
    };
    let initial = generate_jagged(&params, &|_| {}).unwrap();
    let mut cpu = CpuBackend::new();
    for boundary in Boundary::ALL {
        let step = StepParams {
            coeff: 0.2,
            boundary,
        };
        cpu.upload(&initial).unwrap();
        cpu.advance(2000, &step).unwrap();
        let expected = cpu.download().unwrap();
        for chunk in [1u64, 7, 64, 333, 1000, 2000] {
            cuda.upload(&initial).unwrap();
            let mut done = 0;
            while done < 2000 {
                let steps = chunk.min(2000 - done);
                cuda.advance(steps, &step).unwrap();
                done += steps;
            }
            let field = cuda.download().unwrap();
            let found = heatlab_engine::verify::compare::grids(&field, &expected);
            assert!(found.is_none(), "{boundary} chunk {chunk}: {found:?}");
        }
    }
}

#[test]
fn the_command_checks_the_cpu_methods_and_writes_its_report() {
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("verify.json");
    let output = Command::new(common::heatlab_binary())
        .args([
            "verify",
            "--backend",
            "cpu",
            "--sequences",
            "8",
            "--quiet",
            "--json",
        ])
        .arg(&json)
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        output.status.success(),
        "{stdout}\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
    assert!(
        stdout.contains("bit-identical after every operation"),
        "{stdout}"
    );
    let report: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    assert_eq!(report["sequences_passed"], 8);
    assert!(report["divergence"].is_null());
}

#[test]
fn the_command_refuses_bad_input_in_one_line() {
    let output = Command::new(common::heatlab_binary())
        .args(["verify", "--sequences", "0"])
        .output()
        .unwrap();
    assert!(!output.status.success());
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("sequences"), "{stderr}");
}
