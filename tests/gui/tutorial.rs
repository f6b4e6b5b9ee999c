//! The tutorial panels of the app (issue 4) driven headlessly by egui_kittest: each tab is
//! opened, a small size picked and Run clicked as a person would, then the results are checked.
//! No GPU, display or renderer is needed: without CUDA the GPU columns say why and the CPU
//! versions still run (with CUDA the GPU runs too, and the same checks hold).
//!
//! The kernels run on the tutorial thread, so every check waits (with a deadline) for the app
//! to report the expected state instead of assuming it after a fixed number of frames.

use std::time::{Duration, Instant};

use crate::common::app::wait_until;

use eframe::egui::Vec2;
use egui_kittest::kittest::Queryable;
use egui_kittest::Harness;
use heatlab::ui::tutorial::Tab;
use heatlab::ui::tutorial::Visual;
use heatlab::ui::{AppOptions, HeatlabApp, Settings};
use heatlab_engine::compute::BackendChoice;
use heatlab_engine::grid::GridSize;
use heatlab_engine::tutorial::gaussian::{pdf_f64, GaussianParams};
use heatlab_engine::tutorial::{KernelSummary, TutorialKernel};

#[expect(
    clippy::unwrap_used,
    reason = "a test helper: its failure is the test's failure, with this message"
)]
fn harness(export_dir: &std::path::Path) -> Harness<'static, HeatlabApp> {
    let mut field = Settings::default().field;
    field.size = GridSize::new(32, 32).unwrap();
    let settings = Settings {
        backend: BackendChoice::Cpu,
        field,
        export_dir: export_dir.to_path_buf(),
        ..Settings::default()
    };
    crate::common::app::build_app(
        AppOptions {
            settings: Some(settings),
            persist: false,
            autoplay: false,
            screenshot: None,
            ..AppOptions::default()
        },
        Vec2::new(1440.0, 900.0),
    )
}

/// Opens the tab of `kernel` by clicking it, as a person would.
fn open_tab(harness: &mut Harness<'_, HeatlabApp>, tab: Tab) {
    harness.get_by_label(&tab.to_string()).click();
    harness.run_steps(2);
    assert_eq!(harness.state().settings().tab, tab);
}

/// Picks the size preset `label`, clicks Run and waits for the result.
fn run_at(harness: &mut Harness<'_, HeatlabApp>, kernel: TutorialKernel, label: &str, n: u64) {
    harness.get_by_label(label).click();
    harness.run_steps(2);
    assert_eq!(harness.state().tutorial().panel(kernel).n, n);
    harness.get_by_label("Run").click();
    wait_until(harness, "the run's results are shown", |app| {
        !app.tutorial().is_busy() && app.tutorial().panel(kernel).outcome.is_some()
    });
    harness.run_steps(2);
}

#[test]
fn monte_carlo_pi_runs_and_lands_within_its_standard_error() {
    let dir = tempfile::tempdir().unwrap();
    let mut harness = harness(dir.path());
    open_tab(&mut harness, Tab::MonteCarloPi);
    run_at(&mut harness, TutorialKernel::MonteCarloPi, "10k", 10_000);

    let panel = harness
        .state()
        .tutorial()
        .panel(TutorialKernel::MonteCarloPi);
    let outcome = panel.outcome.as_ref().unwrap();
    let Visual::Pi { estimate, points } = &outcome.visual else {
        panic!("pi shows an estimate, got {:?}", outcome.visual);
    };
    assert_eq!(estimate.samples, 10_000);
    assert!(
        estimate.error.abs() < 5.0 * estimate.standard_error,
        "pi ≈ {} ± {} is more than 5 standard errors off",
        estimate.estimate,
        estimate.standard_error
    );
    assert_eq!(points.len(), 4000);
    // The table shows %timeit-style lines and the estimate is on screen with its error.
    harness.get_by_label_contains("π ≈");
    assert!(harness.query_all_by_label_contains(" ± ").count() >= 2);
    harness.get_by_label("CPU, one thread");
    let timings = &outcome.run.timings;
    assert!(timings.cpu_one_thread.is_some() && timings.cpu_all_threads.is_some());
    if timings.gpu_host_arrays.is_none() {
        // Without CUDA the GPU rows say why instead of showing numbers.
        assert!(harness.state().tutorial().gpu_note().is_some());
        assert!(harness.query_all_by_label_contains("not run").count() >= 2);
    }
}

#[test]
fn hidden_layer_histogram_counts_every_neuron() {
    let dir = tempfile::tempdir().unwrap();
    let mut harness = harness(dir.path());
    open_tab(&mut harness, Tab::HiddenLayer);
    run_at(&mut harness, TutorialKernel::HiddenLayer, "10k", 10_000);
    let panel = harness
        .state()
        .tutorial()
        .panel(TutorialKernel::HiddenLayer);
    let outcome = panel.outcome.as_ref().unwrap();
    let Visual::Histogram { counts, stats, .. } = &outcome.visual else {
        panic!(
            "the hidden layer shows a histogram, got {:?}",
            outcome.visual
        );
    };
    assert_eq!(counts.iter().sum::<u64>(), 10_000);
    // tanh(g/255 * w) with w ~ normal(0.5, 0.1) stays well inside (-1, 1).
    assert!(stats.min > -1.0 && stats.max < 1.0 && stats.mean > 0.0);
    harness.get_by_label_contains("histogram of the activations");
}

#[test]
fn gaussian_points_lie_on_the_exact_curve_and_the_sweep_fills_in() {
    let dir = tempfile::tempdir().unwrap();
    let mut harness = harness(dir.path());
    open_tab(&mut harness, Tab::Gaussian);
    run_at(&mut harness, TutorialKernel::Gaussian, "10k", 10_000);
    let panel = harness.state().tutorial().panel(TutorialKernel::Gaussian);
    let Visual::Curve { params, samples } = &panel.outcome.as_ref().unwrap().visual else {
        panic!("the Gaussian shows a curve");
    };
    assert_eq!(*params, GaussianParams::default());
    assert_eq!(samples.len(), 3000);
    for &[x, y] in samples {
        assert!((-3.0..3.0).contains(&x));
        assert!((y - pdf_f64(x, *params)).abs() < 1e-6, "pdf({x}) = {y}");
    }

    // The sweep goes from 1k to the panel's size, two sizes per decade.
    harness.get_by_label("Sweep sizes").click();
    wait_until(&mut harness, "the sweep is done", |app| {
        !app.tutorial().is_busy()
            && app
                .tutorial()
                .panel(TutorialKernel::Gaussian)
                .sweep_complete
    });
    let sweep = &harness
        .state()
        .tutorial()
        .panel(TutorialKernel::Gaussian)
        .sweep;
    let sizes: Vec<u64> = sweep.iter().map(|run| run.n).collect();
    assert_eq!(sizes, vec![1_000, 3_162, 10_000]);
    assert!(sweep.iter().all(|run| run.repeats == 3));
    harness.run_steps(2);
    harness.get_by_label_contains("size sweep");

    // Export timings writes CSV and JSON into the export folder.
    harness.get_by_label("Export timings").click();
    harness.run_steps(2);
    let csv = dir.path().join("tutorial_gaussian_n10000_timings.csv");
    let json = dir.path().join("tutorial_gaussian_n10000_timings.json");
    assert!(
        csv.is_file() && json.is_file(),
        "{:?}",
        harness
            .state()
            .tutorial()
            .panel(TutorialKernel::Gaussian)
            .notice
    );
    let text = std::fs::read_to_string(&csv).unwrap();
    assert!(
        text.lines().count() > 1 + 5 * 2,
        "header and one row per timed run:\n{text}"
    );
}

#[test]
fn a_long_run_can_be_cancelled_and_the_ui_stays_responsive() {
    let dir = tempfile::tempdir().unwrap();
    let mut harness = harness(dir.path());
    open_tab(&mut harness, Tab::MonteCarloPi);
    // 10^10 samples: minutes on this machine's CPU, so it is still running when cancelled.
    harness.get_by_label("1e10").click();
    harness.run_steps(2);
    harness.get_by_label("Run").click();
    wait_until(&mut harness, "the run reports progress", |app| {
        app.tutorial().progress().is_some()
    });
    // The UI keeps drawing frames while the kernel runs: switch tabs and back.
    let started = Instant::now();
    for _ in 0..10 {
        harness.step();
    }
    assert!(
        started.elapsed() < Duration::from_secs(10),
        "frames must not wait on the run"
    );
    assert!(harness.state().tutorial().is_busy());
    harness.get_by_label("Cancel").click();
    wait_until(&mut harness, "the run stops", |app| {
        !app.tutorial().is_busy()
    });
    let panel = harness
        .state()
        .tutorial()
        .panel(TutorialKernel::MonteCarloPi);
    assert!(panel.outcome.is_none());
    let notice = panel
        .notice
        .as_ref()
        .expect("a notice says the run was cancelled");
    assert!(notice.text.contains("cancelled"), "{}", notice.text);
    harness.run_steps(2);
    harness.get_by_label_contains("cancelled");
    // And it runs again afterwards.
    run_at(&mut harness, TutorialKernel::MonteCarloPi, "1k", 1_000);
}

#[test]
fn a_size_that_does_not_fit_is_refused_with_the_size_it_needed() {
    let dir = tempfile::tempdir().unwrap();
    let mut harness = harness(dir.path());
    open_tab(&mut harness, Tab::HiddenLayer);
    // 10^10 neurons: four float32 arrays of 40 GB each.
    let n = 10_000_000_000u64;
    let needed = n as f64 * 16.0;
    if heatlab_engine::memory::host_available_bytes().is_none_or(|free| free as f64 >= needed) {
        crate::common::skipped(
            crate::common::backend::test_name!(),
            &format!("this machine has {needed} bytes free, the refusal cannot be shown"),
        );
        return;
    }
    harness
        .state_mut()
        .tutorial_mut()
        .panel_state_mut(TutorialKernel::HiddenLayer)
        .n = n;
    harness.run_steps(2);
    harness.get_by_label("Run").click();
    wait_until(&mut harness, "the run is refused", |app| {
        !app.tutorial().is_busy()
            && app
                .tutorial()
                .panel(TutorialKernel::HiddenLayer)
                .notice
                .is_some()
    });
    let panel = harness
        .state()
        .tutorial()
        .panel(TutorialKernel::HiddenLayer);
    let text = panel.notice.as_ref().unwrap().text.clone();
    assert!(
        text.contains("MiB"),
        "the refusal names the size it needed: {text}"
    );
    assert!(panel.outcome.is_none());
    harness.run_steps(2);
    harness.get_by_label(&text);
}

#[test]
fn the_pi_estimate_in_the_summary_matches_the_visual() {
    let dir = tempfile::tempdir().unwrap();
    let mut harness = harness(dir.path());
    open_tab(&mut harness, Tab::MonteCarloPi);
    run_at(&mut harness, TutorialKernel::MonteCarloPi, "1k", 1_000);
    let outcome = harness
        .state()
        .tutorial()
        .panel(TutorialKernel::MonteCarloPi)
        .outcome
        .clone()
        .unwrap();
    let (KernelSummary::MonteCarloPi(summary), Visual::Pi { estimate, .. }) =
        (&outcome.run.result, &outcome.visual)
    else {
        panic!("pi summary");
    };
    assert_eq!(summary, estimate);
    // Back to the diffusion tab: its controls are there again.
    open_tab(&mut harness, Tab::Diffusion);
    harness.get_by_label("Play");
}

use crate::robust::RECORDED_PI_1M;

/// A hidden-layer run recorded on the H100 with `heatlab kernel --json`, embedded so that the
/// test runs from any directory.
const RECORDED_HIDDEN_1M: &str =
    include_str!("../../benches/results/tutorial-h100-2026-11-22/hidden_1M.json");

/// Writes an embedded recorded run into `dir` and returns its path.
#[expect(
    clippy::unwrap_used,
    reason = "a test helper: its failure is the test's failure, with this message"
)]
fn recorded_run(dir: &std::path::Path, name: &str, text: &str) -> std::path::PathBuf {
    let path = dir.join(name);
    std::fs::write(&path, text).unwrap();
    path
}

#[test]
fn a_recorded_gpu_run_fills_the_gpu_rows() {
    let dir = tempfile::tempdir().unwrap();
    let mut harness = harness(dir.path());
    let path = recorded_run(dir.path(), "pi_1M.json", RECORDED_PI_1M);
    let ctx = harness.ctx.clone();
    let kernel = harness
        .state_mut()
        .tutorial_mut()
        .load_recorded(&ctx, &path)
        .unwrap();
    assert_eq!(kernel, TutorialKernel::MonteCarloPi);
    open_tab(&mut harness, Tab::MonteCarloPi);
    wait_until(&mut harness, "the recorded run is shown", |app| {
        !app.tutorial().is_busy() && app.tutorial().panel(kernel).outcome.is_some()
    });
    harness.run_steps(2);
    let outcome = harness
        .state()
        .tutorial()
        .panel(kernel)
        .outcome
        .clone()
        .unwrap();
    assert_eq!(outcome.recorded.as_deref(), Some(path.as_path()));
    assert!(outcome.run.timings.gpu_host_arrays.is_some());
    // Four versions with mean ± std, the GPU ones included.
    assert!(harness.query_all_by_label_contains(" ± ").count() >= 4);
    assert!(harness.query_by_label_contains("not run").is_none());
    harness.get_by_label_contains("Recorded run from");
    harness.get_by_label_contains("GPU vs CPU: the counts differ by 0");
}

#[test]
fn recorded_runs_given_at_start_are_shown_in_their_tab() {
    let dir = tempfile::tempdir().unwrap();
    let path = recorded_run(dir.path(), "hidden_1M.json", RECORDED_HIDDEN_1M);
    let mut field = Settings::default().field;
    field.size = GridSize::new(32, 32).unwrap();
    let settings = Settings {
        backend: BackendChoice::Cpu,
        field,
        export_dir: dir.path().to_path_buf(),
        tab: Tab::HiddenLayer,
        ..Settings::default()
    };
    let mut harness = crate::common::app::build_app(
        AppOptions {
            settings: Some(settings),
            recorded_runs: vec![path],
            ..AppOptions::default()
        },
        Vec2::new(1440.0, 900.0),
    );
    wait_until(&mut harness, "the recorded run is shown", |app| {
        app.tutorial().demo_done(TutorialKernel::HiddenLayer)
    });
    let panel = harness
        .state()
        .tutorial()
        .panel(TutorialKernel::HiddenLayer);
    let outcome = panel.outcome.as_ref().unwrap();
    let Visual::Histogram { counts, .. } = &outcome.visual else {
        panic!("histogram");
    };
    assert_eq!(counts.iter().sum::<u64>(), 1_000_000);
    assert_eq!(panel.n, 1_000_000);
}
