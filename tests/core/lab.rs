//! The kernel choice and the Kernel lab (issue 9).
//!
//! Without a GPU: the CLI's `--kernel` refusals, the child's protocol through the real
//! `heatlab lab-check`, and the lab tab driven by egui_kittest (the source shown, the missing
//! GPU explained, NVRTC errors marked on their lines, the contract, open/save/reset, the kernel
//! choice in the diffusion view). With a GPU (skipped here, `HEATLAB_REQUIRE_CUDA=1` on the
//! GPU machine): the shared kernel and a user kernel stepping exactly with the Laplacian view
//! computed by the step itself, and the four bad kernels (`tests/common/bad_kernels.rs`) each
//! giving their verdict within seconds while this process's field and CUDA context stay intact.

use crate::common;
use common::app::wait_until_mut as wait_until;
use common::backend::{cuda_or_skip, test_name};

use common::bad_kernels::{
    endless_loop, off_by_one, out_of_bounds, syntax_error, syntax_error_line,
};

use std::time::{Duration, Instant};

use eframe::egui::accesskit::Role;
use eframe::egui::Vec2;
use egui_kittest::kittest::{NodeT, Queryable};
use egui_kittest::Harness;
use heatlab::ui::{AppOptions, HeatlabApp, Settings};
use heatlab_engine::compute::cuda::user_kernel::{
    compile_diagnostics, compile_user_kernel, USER_KERNEL_TEMPLATE,
};
use heatlab_engine::compute::{
    Backend, BackendChoice, Boundary, CpuBackend, CudaBackend, CudaKernel, KernelChoice, StepParams,
};
use heatlab_engine::field::numpy_rng::NumpyGenerator;
use heatlab_engine::grid::{Grid, GridSize};
use heatlab_engine::lab::{validate_in_child, CaseOutcome, ChildLimits, ValidationJob, Verdict};
use heatlab_engine::session::lab::{CompileFailure, LabEvent};

#[expect(
    clippy::unwrap_used,
    reason = "a test helper: its failure is the test's failure"
)]
fn random_field(rows: usize, cols: usize, seed: u64) -> Grid {
    let size = GridSize::new(rows, cols).unwrap();
    Grid::from_vec(size, NumpyGenerator::new(seed).random_f32(size.cells())).unwrap()
}

#[expect(
    clippy::unwrap_used,
    reason = "a test helper: its failure is the test's failure"
)]
fn cpu_after(field: &Grid, steps: u64, params: &StepParams) -> Grid {
    let mut cpu = CpuBackend::new();
    cpu.upload(field).unwrap();
    cpu.advance(steps, params).unwrap();
    cpu.download().unwrap()
}

#[expect(
    clippy::unwrap_used,
    reason = "a test helper: its failure is the test's failure"
)]
fn cpu_laplacian_after(field: &Grid, steps: u64, params: &StepParams) -> Grid {
    let mut cpu = CpuBackend::new();
    cpu.upload(field).unwrap();
    cpu.advance(steps, params).unwrap();
    cpu.laplacian(params.boundary).unwrap()
}

// ----- The command line, no GPU needed. -----

#[test]
fn run_refuses_bad_kernels_before_any_work() {
    let dir = tempfile::tempdir().unwrap();
    let out = common::heatlab_in(dir.path(), &["run", "--kernel", "fastest", "--out", "o"]);
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("unknown kernel 'fastest'"), "{stderr}");
    assert!(stderr.contains("tutorial, shared"), "{stderr}");
    for (args, expected) in [
        (
            vec!["--kernel", "tutorial", "--boundary", "periodic"],
            "only knows the Dirichlet boundary",
        ),
        (
            vec!["--kernel", "jacobi-vec4-rows8", "--size", "40x33"],
            "divisible by 4",
        ),
        (
            vec!["--kernel", "shared", "--backend", "cpu"],
            "cannot be used with --backend cpu",
        ),
        (vec!["--kernel", "user"], "Kernel lab"),
    ] {
        let mut all = vec!["run", "--steps", "2", "--out", "o"];
        if !args.contains(&"--size") {
            all.extend(["--size", "40x36"]);
        }
        all.extend(args);
        let out = common::heatlab_in(dir.path(), &all);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{all:?}: {stderr}");
        assert!(stderr.contains(expected), "{all:?}: {stderr}");
        assert!(!dir.path().join("o").exists(), "{all:?} wrote files");
    }
    let out = common::heatlab_in(dir.path(), &["bench", "--kernel", "user"]);
    assert_ne!(out.status.code(), Some(0));
    let out = common::heatlab_in(dir.path(), &["bench", "--kernel", "shared,nope"]);
    assert_eq!(out.status.code(), Some(2));
}

#[test]
fn run_records_the_kernel_in_run_json() {
    let dir = tempfile::tempdir().unwrap();
    let gpu = cuda_or_skip!();
    if gpu.is_none() {
        // On the CPU, auto is the only choice: it is recorded as such.
        let out = common::heatlab_in(
            dir.path(),
            &["run", "--steps", "4", "--size", "24", "--out", "o"],
        );
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let json = std::fs::read_to_string(dir.path().join("o/run.json")).unwrap();
        assert!(json.contains("\"kernel\": \"auto\""), "{json}");
        return;
    }
    for (kernel, method) in [
        ("shared", "cuda-shared"),
        ("tutorial", "cuda-seed-faithful"),
    ] {
        let out_dir = format!("o-{kernel}");
        let out = common::heatlab_in(
            dir.path(),
            &[
                "run", "--steps", "40", "--size", "61x67", "--kernel", kernel, "--out", &out_dir,
            ],
        );
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let json = std::fs::read_to_string(dir.path().join(&out_dir).join("run.json")).unwrap();
        assert!(
            json.contains(&format!("\"kernel\": \"{kernel}\"")),
            "{json}"
        );
        assert!(
            json.contains(&format!("\"method\": \"{method}\"")),
            "{json}"
        );
    }
}

#[test]
fn the_child_reports_through_its_protocol_even_when_it_cannot_work() {
    let dir = tempfile::tempdir().unwrap();
    // A missing source: the child still ends with its verdict line and status 1.
    let out = common::heatlab_in(dir.path(), &["lab-check", "--source", "missing.cu"]);
    assert_eq!(out.status.code(), Some(1));
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(stdout.trim_end().ends_with('}'), "{stdout}");
    assert!(
        stdout.contains("\"End\"") && stdout.contains("missing.cu"),
        "{stdout}"
    );
    // A broken contract is told before any GPU is needed.
    std::fs::write(dir.path().join("k.cu"), "#define HEATLAB_BLOCK_X 4096\n").unwrap();
    let out = common::heatlab_in(dir.path(), &["lab-check", "--source", "k.cu"]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        stdout.contains("Contract") && stdout.contains("1 to 1024"),
        "{stdout}"
    );
}

#[test]
fn the_template_validates_in_a_child_or_says_why_not() {
    let job = ValidationJob {
        source: USER_KERNEL_TEMPLATE.to_string(),
        current: Some(random_field(45, 70, 9)),
        params: StepParams {
            coeff: 0.2,
            boundary: Boundary::Neumann,
        },
    };
    let verdict = validate_in_child(&common::heatlab_binary(), &job, ChildLimits::default());
    match cuda_or_skip!() {
        Some(_) => {
            assert!(verdict.is_identical(), "{}", verdict.summary());
            let Verdict::Identical { cases, .. } = &verdict else {
                unreachable!()
            };
            // 6 small sizes x 3 boundaries, and the current field.
            assert_eq!(cases.len(), 19, "{cases:?}");
            assert!(cases
                .last()
                .unwrap()
                .case
                .contains("current 45x70 field neumann"));
        }
        None => {
            let Verdict::Failed(message) = &verdict else {
                panic!("{verdict:?}");
            };
            assert!(message.contains("CUDA"), "{message}");
        }
    }
}

// ----- The lab tab and the kernel section, through egui_kittest. -----

#[expect(
    clippy::unwrap_used,
    reason = "a test helper: its failure is the test's failure"
)]
fn lab_harness(tab_lab: bool) -> Harness<'static, HeatlabApp> {
    let mut field = Settings::default().field;
    field.size = GridSize::new(40, 48).unwrap();
    let settings = Settings {
        backend: BackendChoice::Cpu,
        field,
        steps_per_frame: 2,
        auto_steps: false,
        tab: if tab_lab {
            "kernel-lab".parse().unwrap()
        } else {
            Settings::default().tab
        },
        ..Settings::default()
    };
    let mut harness = common::app::build_app(
        AppOptions {
            settings: Some(settings),
            persist: false,
            ..AppOptions::default()
        },
        Vec2::new(1400.0, 1000.0),
    );
    wait_until(&mut harness, "the backend is known", |app| {
        app.backend().is_some() && app.is_ready()
    });
    harness
}

#[test]
fn the_lab_shows_the_source_and_says_what_compiling_needs() {
    let mut harness = lab_harness(true);
    harness.get_by_label("your kernel (user_step.cu)");
    assert_eq!(harness.state_mut().lab().source(), USER_KERNEL_TEMPLATE);
    harness.get_by_label("Compile").click();
    wait_until(&mut harness, "the compile ends", |app| !app.lab().is_busy());
    let status = harness.state_mut().lab().status();
    if cuda_or_skip!().is_some() {
        assert!(status.starts_with("compiled for"), "{status}");
    } else {
        assert!(status.starts_with("cannot compile"), "{status}");
        harness.step();
        assert!(harness
            .query_by_label_contains("compiling needs an NVIDIA GPU with NVRTC")
            .is_some());
        assert!(harness
            .query_by_label_contains("Compiling needs an NVIDIA GPU with NVRTC")
            .is_some());
        // Nothing compiled: nothing to validate or use.
        assert!(harness
            .get_by_label("Validate")
            .accesskit_node()
            .is_disabled());
        assert!(harness
            .get_by_label("Use in simulation")
            .accesskit_node()
            .is_disabled());
    }
}

#[test]
fn nvrtc_errors_are_marked_on_their_lines() {
    let mut harness = lab_harness(true);
    let line = syntax_error_line();
    let log = format!(
        "user_step.cu({line}): error: expected a \";\"\n\n1 error detected in the \
         compilation of \"user_step.cu\".\n"
    );
    {
        let app = harness.state_mut();
        app.lab().set_source(syntax_error());
        app.lab().receive(LabEvent::Compiled {
            source: syntax_error(),
            result: Err(CompileFailure::Nvrtc(log)),
            took: Duration::from_millis(5),
        });
    }
    harness.step();
    harness.step();
    assert!(harness
        .query_by_label_contains("NVRTC: 1 error(s)")
        .is_some());
    assert!(harness
        .query_by_label_contains("expected a \";\"")
        .is_some());
    // The line-number column marks the line and no other.
    let numbers = harness
        .query_by_label_contains(&format!("▶{line}"))
        .expect("the line numbers")
        .accesskit_node()
        .value()
        .unwrap_or_default();
    let marked: Vec<&str> = numbers.lines().filter(|l| l.starts_with('▶')).collect();
    assert_eq!(marked, vec![format!("▶{line}")]);
    // An edit makes the log stale: the mark goes (it pointed into another text).
    harness
        .state_mut()
        .lab()
        .set_source(format!("{}\n", syntax_error()));
    harness.step();
    assert!(harness.query_by_label_contains("(edited since)").is_some());
    assert!(harness.query_by_label_contains("▶2").is_none());
}

#[test]
fn a_broken_contract_is_shown_with_its_line() {
    let mut harness = lab_harness(true);
    let source = USER_KERNEL_TEMPLATE.replace("HEATLAB_BLOCK_Y 8", "HEATLAB_BLOCK_Y 0");
    harness.state_mut().lab().set_source(source);
    harness.step();
    harness.step();
    assert!(harness
        .query_by_label_contains("contract: line 31: HEATLAB_BLOCK_Y must be 1 to 1024, not 0")
        .is_some());
}

#[test]
fn sources_are_saved_opened_and_reset_without_losing_edits() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("mine.cu");
    let mut harness = lab_harness(true);
    harness.state_mut().lab().set_source(off_by_one());
    harness
        .get_by_label("file")
        .set_text_value_accesskit(&path.display().to_string());
    harness.step();
    harness.step();
    harness.get_by_label("Save").click();
    harness.run_steps(2);
    let saved = std::fs::read_to_string(&path).expect("the kernel was saved");
    assert_eq!(saved, off_by_one());
    assert!(harness.query_by_label_contains("saved").is_some());
    // Reset to the template: unsaved edits are asked about first.
    harness
        .state_mut()
        .lab()
        .set_source(format!("{}// more\n", off_by_one()));
    harness.step();
    harness.get_by_label("Reset to built-in").click();
    harness.step();
    harness.get_by_label("Keep").click();
    harness.step();
    assert!(harness.state_mut().lab().source().ends_with("// more\n"));
    harness.get_by_label("Reset to built-in").click();
    harness.step();
    harness.get_by_label("Discard").click();
    harness.step();
    assert_eq!(harness.state_mut().lab().source(), USER_KERNEL_TEMPLATE);
    // Open brings the saved text back.
    harness.get_by_label("Open").click();
    harness.step();
    assert_eq!(harness.state_mut().lab().source(), off_by_one());
}

#[test]
fn the_diffusion_view_lists_the_kernels_and_explains_the_tutorials_race() {
    let mut harness = lab_harness(false);
    let open_selector = |harness: &mut Harness<'_, HeatlabApp>| {
        let selector = harness.get_by_role_and_label(Role::ComboBox, "kernel");
        selector.scroll_to_me();
        harness.run_steps(2);
        harness
            .get_by_role_and_label(Role::ComboBox, "kernel")
            .click_accesskit();
        harness.run_steps(2);
    };
    // The section is folded by default; its header names the kernel in use.
    harness.get_by_label("GPU kernel: auto").click();
    harness.run_steps(2);
    open_selector(&mut harness);
    harness.get_by_label("tutorial").click();
    wait_until(&mut harness, "the tutorial kernel is chosen", |app| {
        app.settings().kernel == KernelChoice::Tutorial
    });
    harness.step();
    assert!(harness
        .query_by_label_contains("updates the field in place")
        .is_some());
    assert!(harness
        .query_by_label_contains("GPU kernels step only on the CUDA backend")
        .is_some());
    // "user" cannot be picked before the lab validated a kernel; vec4 not on 48 columns? It
    // can (48 % 4 == 0): so it is enabled.
    open_selector(&mut harness);
    assert!(harness.get_by_label("user").accesskit_node().is_disabled());
    assert!(!harness
        .get_by_label("jacobi-vec4-rows8")
        .accesskit_node()
        .is_disabled());
    harness.get_by_label("shared").click();
    wait_until(&mut harness, "the shared kernel is chosen", |app| {
        app.settings().kernel == KernelChoice::Builtin(CudaKernel::Shared)
    });
}

// ----- On the GPU. -----

#[test]
fn the_shared_kernel_is_exact_and_its_laplacian_view_needs_no_second_pass() {
    let Some(mut cuda) = cuda_or_skip!() else {
        return;
    };
    for (rows, cols) in [
        (1, 1),
        (1, 37),
        (29, 1),
        (7, 5),
        (33, 65),
        (61, 127),
        (130, 97),
    ] {
        let field = random_field(rows, cols, (rows * cols) as u64);
        cuda.upload(&field).unwrap();
        cuda.set_kernel_choice(KernelChoice::Builtin(CudaKernel::Shared))
            .unwrap();
        for boundary in Boundary::ALL {
            let params = StepParams {
                coeff: 0.23,
                boundary,
            };
            cuda.upload(&field).unwrap();
            cuda.advance(3, &params).unwrap();
            // The view's Laplacian: computed by a step of the shared kernel ahead.
            let laplacian = cuda.laplacian(boundary).unwrap();
            assert_eq!(
                laplacian,
                cpu_laplacian_after(&field, 3, &params),
                "{rows}x{cols} {boundary}"
            );
            assert_eq!(cuda.download().unwrap(), cpu_after(&field, 3, &params));
            // The next advance starts from the step computed ahead (same parameters) ...
            cuda.advance(2, &params).unwrap();
            assert_eq!(cuda.download().unwrap(), cpu_after(&field, 5, &params));
            // ... and one with other parameters drops it.
            cuda.laplacian(boundary).unwrap();
            let other = StepParams {
                coeff: 0.11,
                boundary,
            };
            cuda.advance(1, &other).unwrap();
            let mut cpu = CpuBackend::new();
            cpu.upload(&field).unwrap();
            cpu.advance(5, &params).unwrap();
            cpu.advance(1, &other).unwrap();
            assert_eq!(cuda.download().unwrap(), cpu.download().unwrap());
        }
    }
    // The tutorial's kernel is a choice now, but only for Dirichlet.
    let field = random_field(40, 44, 3);
    cuda.upload(&field).unwrap();
    cuda.set_kernel_choice(KernelChoice::Tutorial).unwrap();
    let neumann = StepParams {
        coeff: 0.25,
        boundary: Boundary::Neumann,
    };
    let error = cuda.advance(1, &neumann).unwrap_err().to_string();
    assert!(error.contains("Dirichlet"), "{error}");
    assert_eq!(cuda.step_method(), "cuda-seed-faithful");
}

#[test]
fn a_validated_user_kernel_steps_the_simulation_exactly() {
    let Some(mut cuda) = cuda_or_skip!() else {
        return;
    };
    assert!(cuda.set_kernel_choice(KernelChoice::User).is_err());
    let contract = cuda.load_user_kernel(USER_KERNEL_TEMPLATE).unwrap();
    assert_eq!((contract.block_x, contract.block_y), (32, 8));
    let field = random_field(77, 91, 5);
    cuda.upload(&field).unwrap();
    cuda.set_kernel_choice(KernelChoice::User).unwrap();
    assert_eq!(cuda.step_method(), "cuda-user");
    for boundary in Boundary::ALL {
        let params = StepParams {
            coeff: 0.25,
            boundary,
        };
        cuda.upload(&field).unwrap();
        cuda.advance(7, &params).unwrap();
        assert_eq!(
            cuda.laplacian(boundary).unwrap(),
            cpu_laplacian_after(&field, 7, &params)
        );
        cuda.advance(64, &params).unwrap();
        assert_eq!(
            cuda.download().unwrap(),
            cpu_after(&field, 71, &params),
            "{boundary}"
        );
    }
}

/// Validates `source` in a child while this process holds a field on its own GPU backend,
/// and checks that the field and the context are intact afterwards.
#[expect(
    clippy::unwrap_used,
    reason = "a test helper: its failure is the test's failure"
)]
fn validate_beside_a_running_backend(test: &str, source: &str) -> Option<(Verdict, Duration)> {
    let mut cuda = common::gpu_or_skip(test, CudaBackend::new())?;
    let field = random_field(300, 260, 11);
    let params = StepParams::default();
    cuda.upload(&field).unwrap();
    cuda.advance(10, &params).unwrap();
    let job = ValidationJob {
        source: source.to_string(),
        current: Some(cuda.download().unwrap()),
        params,
    };
    let started = Instant::now();
    let verdict = validate_in_child(&common::heatlab_binary(), &job, ChildLimits::default());
    let took = started.elapsed();
    eprintln!(
        "{test}: {} ({:.2} s)",
        verdict.summary(),
        took.as_secs_f64()
    );
    cuda.advance(15, &params).unwrap();
    assert_eq!(
        cuda.download().unwrap(),
        cpu_after(&field, 25, &params),
        "{test}: the parent's field or context was damaged"
    );
    Some((verdict, took))
}

#[test]
fn a_compile_error_is_reported_with_its_line() {
    if let Some(cuda) = cuda_or_skip!() {
        let arch = cuda.device().compute_capability();
        let error = compile_user_kernel(&syntax_error(), arch).err().unwrap();
        let log = match error {
            heatlab_engine::HeatlabError::KernelCompile { log, .. } => log,
            other => panic!("{other}"),
        };
        let errors: Vec<usize> = compile_diagnostics(&log)
            .into_iter()
            .filter(|d| d.is_error)
            .map(|d| d.line)
            .collect();
        assert!(
            errors.contains(&syntax_error_line()) || errors.contains(&(syntax_error_line() + 1)),
            "{errors:?} in {log}"
        );
    }
    let Some((verdict, took)) = validate_beside_a_running_backend(test_name!(), &syntax_error())
    else {
        return;
    };
    assert!(matches!(verdict, Verdict::Compile(ref log) if log.contains("user_step.cu(")));
    assert!(took < Duration::from_secs(10));
}

#[test]
fn the_template_is_bit_identical_beside_a_running_backend() {
    let Some((verdict, took)) =
        validate_beside_a_running_backend(test_name!(), USER_KERNEL_TEMPLATE)
    else {
        return;
    };
    assert!(verdict.is_identical(), "{}", verdict.summary());
    assert!(took < Duration::from_secs(15));
}

#[test]
fn an_off_by_one_neighbour_is_caught_and_located() {
    let Some((verdict, took)) = validate_beside_a_running_backend(test_name!(), &off_by_one())
    else {
        return;
    };
    let Verdict::Differs { cases, .. } = &verdict else {
        panic!("{verdict:?}");
    };
    // Reading the cell itself for its right neighbour is right only where that neighbour is
    // the cell itself: one column under Neumann or periodic. Everywhere else the first step
    // differs, and the summary names where.
    for case in cases {
        let single_column_wrap = case.case.contains("x1 ")
            && (case.case.contains("neumann") || case.case.contains("periodic"));
        if single_column_wrap {
            assert_eq!(case.outcome, CaseOutcome::Identical, "{}", case.case);
        } else {
            assert!(
                matches!(case.outcome, CaseOutcome::Differs { step: 1, .. }),
                "{case:?}"
            );
        }
    }
    assert!(
        verdict.summary().contains("at row"),
        "{}",
        verdict.summary()
    );
    assert!(took < Duration::from_secs(15));
}

#[test]
fn an_out_of_bounds_writer_faults_only_the_child() {
    let Some((verdict, took)) = validate_beside_a_running_backend(test_name!(), &out_of_bounds())
    else {
        return;
    };
    let caught = match &verdict {
        Verdict::Fault { .. } => true,
        Verdict::Differs { cases, .. } => cases
            .iter()
            .any(|c| matches!(c.outcome, CaseOutcome::OutOfBounds { .. })),
        _ => false,
    };
    assert!(caught, "{verdict:?}");
    assert!(took < Duration::from_secs(15));
}

#[test]
fn an_endless_loop_times_out_and_the_child_is_killed() {
    let Some((verdict, took)) = validate_beside_a_running_backend(test_name!(), &endless_loop())
    else {
        return;
    };
    assert!(matches!(verdict, Verdict::Timeout { .. }), "{verdict:?}");
    assert!(took < Duration::from_secs(20), "{took:?}");
}
