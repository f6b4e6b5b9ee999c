//! `heatlab run` as a user runs it: the files it writes, and every bad input refused up front.

use crate::common;

use common::cli::{assert_no_temporary_files, heatlab};

use heatlab_engine::export::read_npy;

#[test]
fn run_draws_colorbars_when_asked() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("bars");
    let result = heatlab(&[
        "run",
        "--size",
        "64x40",
        "--steps",
        "5",
        "--backend",
        "cpu",
        "--colorbar",
        "--out",
        out.to_str().unwrap(),
    ]);
    assert!(
        result.status.success(),
        "{}",
        String::from_utf8_lossy(&result.stderr)
    );
    let image = image::open(out.join("field_000005.png")).unwrap().to_rgb8();
    // The field keeps its pixels on the left (8 a cell: a small field is enlarged); a white
    // strip with the bar and its labels is added on the right.
    let picture = 40 * 8;
    assert!(image.width() > picture + 20, "width {}", image.width());
    assert!(image.height() >= 64 * 8);
    let viridis = heatlab_engine::render::Colormap::Viridis.table();
    assert!(viridis.contains(&image.get_pixel(5, 5).0));
    // The right half of the strip holds only the labels' text (the bar and ticks are left).
    let text_from = picture + (image.width() - picture) / 2;
    let strip_dark = (0..image.height())
        .flat_map(|y| (text_from..image.width()).map(move |x| (x, y)))
        .filter(|&(x, y)| {
            let [r, g, b] = image.get_pixel(x, y).0;
            r == g && g == b && r < 100
        })
        .count();
    assert!(
        strip_dark > 20,
        "the labels are drawn ({strip_dark} dark pixels)"
    );
}

fn assert_refused(args: &[&str], expected: &str) {
    let out = heatlab(args);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "{args:?} must fail");
    assert!(stderr.contains(expected), "{args:?}: stderr was {stderr}");
    assert!(!stderr.contains("panicked"), "{args:?} panicked: {stderr}");
}

#[test]
fn run_writes_frames_arrays_and_logs() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("job");
    let result = heatlab(&[
        "run",
        "--size",
        "48x40",
        "--steps",
        "30",
        "--save-every",
        "10",
        "--coeff",
        "0.2",
        "--boundary",
        "neumann",
        "--backend",
        "cpu",
        "--npy",
        "--colormap",
        "magma",
        "--out",
        out.to_str().unwrap(),
    ]);
    assert!(
        result.status.success(),
        "{}",
        String::from_utf8_lossy(&result.stderr)
    );
    for step in ["000000", "000010", "000020", "000030"] {
        for kind in ["field", "laplacian"] {
            let png = out.join(format!("{kind}_{step}.png"));
            let image = image::open(&png).unwrap_or_else(|e| panic!("{}: {e}", png.display()));
            // A small field is drawn 11 pixels a cell (its longer side at least 512 pixels).
            assert_eq!((image.width(), image.height()), (440, 528));
            let npy =
                read_npy(&std::fs::read(out.join(format!("{kind}_{step}.npy"))).unwrap()).unwrap();
            assert_eq!((npy.rows(), npy.cols()), (48, 40));
        }
    }
    // The Laplacian saved beside a field is that field's Laplacian.
    let field = read_npy(&std::fs::read(out.join("field_000020.npy")).unwrap()).unwrap();
    let lapl = read_npy(&std::fs::read(out.join("laplacian_000020.npy")).unwrap()).unwrap();
    let mut cpu = heatlab_engine::compute::CpuBackend::new();
    use heatlab_engine::compute::Backend;
    cpu.upload(&field).unwrap();
    assert_eq!(
        cpu.laplacian(heatlab_engine::compute::Boundary::Neumann)
            .unwrap(),
        lapl
    );

    let csv = std::fs::read_to_string(out.join("timings.csv")).unwrap();
    assert_eq!(
        csv.lines().count(),
        1 + 3,
        "a header and one row per 10-step chunk:\n{csv}"
    );
    let summary: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("run.json")).unwrap()).unwrap();
    assert_eq!(summary["status"], "completed");
    assert_eq!(summary["reason"], serde_json::Value::Null);
    assert_eq!(summary["steps_completed"], 30);
    assert_eq!(summary["backend"], "cpu");
    assert_eq!(summary["parameters"]["step"]["boundary"], "neumann");
    assert_no_temporary_files(&out);
}

#[test]
fn bad_input_is_refused_before_any_work() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("never");
    let out_arg = out.to_str().unwrap();
    assert_refused(&["run", "--size", "0", "--out", out_arg], "at least 1x1");
    assert_refused(
        &["run", "--size", "12y", "--out", out_arg],
        "not N or ROWSxCOLS",
    );
    assert_refused(
        &["run", "--steps", "-5", "--out", out_arg],
        "--steps must be 0 or more",
    );
    assert_refused(
        &["run", "--boundary", "sticky", "--out", out_arg],
        "unknown boundary",
    );
    assert_refused(
        &["run", "--backend", "tpu", "--out", out_arg],
        "unknown backend",
    );
    assert_refused(&["run", "--coeff", "0.3", "--out", out_arg], "above 0.25");
    assert_refused(&["run", "--coeff", "0", "--out", out_arg], "positive");
    assert_refused(&["run", "--coeff", "-0.1", "--out", out_arg], "positive");
    assert_refused(
        &["run", "--percentile", "101", "--out", out_arg],
        "percentile",
    );
    assert!(!out.exists(), "nothing may be written for refused input");
    // A folder that cannot be created (a file is in the way).
    let blocker = dir.path().join("file");
    std::fs::write(&blocker, b"x").unwrap();
    let inside = blocker.join("sub");
    assert_refused(
        &["run", "--size", "8", "--out", inside.to_str().unwrap()],
        "creating folder",
    );
}

#[test]
fn cuda_without_a_gpu_says_why_and_auto_falls_back() {
    if heatlab_engine::compute::CudaBackend::new().is_ok() {
        eprintln!("skipping: this machine has a working GPU");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("job");
    assert_refused(
        &[
            "run",
            "--size",
            "8",
            "--steps",
            "1",
            "--backend",
            "cuda",
            "--out",
            out.to_str().unwrap(),
        ],
        "CUDA is not available",
    );
    let auto = heatlab(&[
        "run",
        "--size",
        "8",
        "--steps",
        "1",
        "--out",
        out.to_str().unwrap(),
    ]);
    assert!(auto.status.success());
    assert!(String::from_utf8_lossy(&auto.stderr).contains("using the CPU"));
}

#[test]
fn unstable_run_stops_at_the_first_non_finite_step_and_keeps_the_last_good_frame() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("boom");
    let result = heatlab(&[
        "run",
        "--size",
        "32",
        "--steps",
        "5000",
        "--coeff",
        "0.9",
        "--allow-unstable",
        "--backend",
        "cpu",
        "--npy",
        "--out",
        out.to_str().unwrap(),
    ]);
    let stderr = String::from_utf8_lossy(&result.stderr);
    assert!(!result.status.success());
    assert!(stderr.contains("non-finite at step"), "{stderr}");
    let summary: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("run.json")).unwrap()).unwrap();
    let good = summary["steps_completed"].as_u64().unwrap();
    assert!(good > 0 && good < 5000);
    assert_eq!(summary["status"], "non-finite");
    assert!(summary["reason"]
        .as_str()
        .unwrap()
        .contains(&format!("step {}", good + 1)));
    assert_no_temporary_files(&out);
    let last = read_npy(&std::fs::read(out.join(format!("field_{good:06}.npy"))).unwrap()).unwrap();
    assert!(
        last.first_non_finite().is_none(),
        "the kept frame is the last finite one"
    );
}

#[test]
fn a_long_chunk_is_one_timing_row_however_it_is_stepped() {
    // A chunk that takes seconds is advanced in pieces (so that Ctrl-C is prompt); the log
    // still has one row per chunk, and every step in it.
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("long");
    let result = heatlab(&[
        "run",
        "--size",
        "256",
        "--steps",
        "30000",
        "--chunk",
        "20000",
        "--backend",
        "cpu",
        "--out",
        out.to_str().unwrap(),
    ]);
    assert!(
        result.status.success(),
        "{}",
        String::from_utf8_lossy(&result.stderr)
    );
    let csv = std::fs::read_to_string(out.join("timings.csv")).unwrap();
    let rows: Vec<Vec<&str>> = csv
        .lines()
        .skip(1)
        .map(|l| l.split(',').collect())
        .collect();
    assert_eq!(rows.len(), 2, "{csv}");
    assert_eq!((rows[0][1], rows[0][2]), ("0", "20000"), "{csv}");
    assert_eq!((rows[1][1], rows[1][2]), ("20000", "10000"), "{csv}");
}

#[test]
fn check_every_compares_each_window_with_the_reference_and_records_it() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("checked");
    let result = heatlab(&[
        "run",
        "--size",
        "61x37",
        "--steps",
        "250",
        "--coeff",
        "0.2",
        "--boundary",
        "neumann",
        "--chunk",
        "70",
        "--check-every",
        "100",
        "--out",
        out.to_str().unwrap(),
    ]);
    let stderr = String::from_utf8_lossy(&result.stderr);
    assert!(result.status.success(), "{stderr}");
    assert!(stderr.contains("all bit-identical"), "{stderr}");
    let run: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("run.json")).unwrap()).unwrap();
    let agreement = &run["agreement"];
    assert_eq!(agreement["checks"], 3);
    assert_eq!(agreement["mismatches"], 0);
    let windows: Vec<(u64, u64)> = agreement["windows"]
        .as_array()
        .unwrap()
        .iter()
        .map(|w| {
            (
                w["from_step"].as_u64().unwrap(),
                w["to_step"].as_u64().unwrap(),
            )
        })
        .collect();
    assert_eq!(windows, [(0, 100), (100, 200), (200, 250)]);
    assert!(agreement["windows"][0]["difference"].is_null());
    // Chunks stop at the windows' ends too: 0-70-100-170-200-250.
    let csv = std::fs::read_to_string(out.join("timings.csv")).unwrap();
    assert_eq!(csv.lines().count(), 1 + 5, "{csv}");
}
