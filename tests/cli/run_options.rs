//! Options a run cannot use are refused, and `run.json` records only what ran: the tutorial
//! plate's options with a heat problem, --steps with --duration; files listed once, the
//! record's own place checked before the run.

use std::fs;

use crate::common::cli::{heatlab_in, read_json, stderr_of, succeeded};
use heatlab_engine::export::write_npy;
use heatlab_engine::grid::{Grid, GridSize};

#[test]
fn the_plates_options_are_refused_with_a_scenario() {
    let dir = tempfile::tempdir().unwrap();
    for option in [
        &["--size", "10"][..],
        &["--seed", "3"],
        &["--exponent", "-1.5"],
        &["--coeff", "0.2"],
        &["--boundary", "neumann"],
        &["--initial-range", "0,2"],
        &["--allow-unstable"],
    ] {
        let mut args = vec!["run", "--scenario", "fin", "--out", "o"];
        args.extend_from_slice(option);
        let run = heatlab_in(dir.path(), &args);
        assert_eq!(run.status.code(), Some(2), "{option:?}");
        let stderr = stderr_of(&run);
        assert!(
            stderr.contains("cannot be used with"),
            "{option:?}: {stderr}"
        );
        assert!(!dir.path().join("o").exists(), "{option:?}");
    }
    let run = heatlab_in(
        dir.path(),
        &[
            "run",
            "--scenario",
            "fin",
            "--steps",
            "10",
            "--duration",
            "5",
        ],
    );
    assert_eq!(run.status.code(), Some(2));
    assert!(stderr_of(&run).contains("cannot be used with"));
}

#[test]
fn a_resumed_heat_problem_refuses_the_plates_options() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    succeeded(&heatlab_in(
        d,
        &[
            "run",
            "--scenario",
            "fin",
            "--steps",
            "20",
            "--out",
            "a",
            "--save-state",
            "fin.heatlab",
        ],
    ));
    for option in [
        &["--coeff", "0.2"][..],
        &["--boundary", "periodic"],
        &["--allow-unstable"],
    ] {
        let mut args = vec![
            "run",
            "--resume",
            "fin.heatlab",
            "--steps",
            "5",
            "--out",
            "b",
        ];
        args.extend_from_slice(option);
        let run = heatlab_in(d, &args);
        assert_eq!(run.status.code(), Some(1), "{option:?}");
        let stderr = stderr_of(&run);
        assert!(
            stderr.contains(&format!("{} is for the tutorial's plate", option[0])),
            "{stderr}"
        );
        assert!(!d.join("b").exists(), "{option:?}");
    }
}

#[test]
fn run_json_records_only_the_parameters_that_ran() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    succeeded(&heatlab_in(
        d,
        &["run", "--scenario", "fin", "--steps", "10", "--out", "s"],
    ));
    let parameters = &read_json(&d.join("s/run.json"))["parameters"];
    assert_eq!(
        (
            parameters["size"]["rows"].as_u64(),
            parameters["size"]["cols"].as_u64()
        ),
        (Some(2), Some(120))
    );
    assert!(parameters.get("field").is_none(), "{parameters}");
    assert!(parameters.get("step").is_none(), "{parameters}");

    succeeded(&heatlab_in(
        d,
        &[
            "run", "--size", "24", "--seed", "7", "--steps", "10", "--out", "p",
        ],
    ));
    let parameters = &read_json(&d.join("p/run.json"))["parameters"];
    assert_eq!(parameters["field"]["seed"], 7);
    assert_eq!(parameters["step"]["boundary"], "dirichlet");
}

#[test]
fn the_last_good_frame_at_a_save_point_is_listed_once() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    // Values near float32's largest: the first step's sums overflow.
    let size = GridSize::new(8, 8).unwrap();
    write_npy(
        &d.join("hot.npy"),
        &Grid::from_vec(size, vec![3e38; 64]).unwrap(),
    )
    .unwrap();
    let run = heatlab_in(
        d,
        &[
            "run",
            "--initial",
            "hot.npy",
            "--coeff",
            "0.3",
            "--allow-unstable",
            "--steps",
            "10",
            "--out",
            "o",
        ],
    );
    assert_eq!(run.status.code(), Some(1), "{}", stderr_of(&run));
    let record = read_json(&d.join("o/run.json"));
    assert_eq!(record["status"], "non-finite");
    let files: Vec<&str> = record["files"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f.as_str().unwrap())
        .collect();
    let mut unique = files.clone();
    unique.sort_unstable();
    unique.dedup();
    assert_eq!(files.len(), unique.len(), "{files:?}");
    assert!(files.contains(&"field_000000.png"), "{files:?}");
}

#[test]
fn a_folder_in_the_records_place_is_refused_before_the_run() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    fs::create_dir_all(d.join("o/run.json")).unwrap();
    let run = heatlab_in(d, &["run", "--size", "16", "--steps", "5", "--out", "o"]);
    assert_eq!(run.status.code(), Some(1));
    let stderr = stderr_of(&run);
    assert!(stderr.contains("run.json"), "{stderr}");
    let written: Vec<_> = fs::read_dir(d.join("o"))
        .unwrap()
        .filter_map(Result::ok)
        .map(|e| e.file_name())
        .collect();
    assert_eq!(written, vec!["run.json"], "nothing but the folder");
}

#[test]
fn rank_options_without_ranks_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let run_with = |options: &[&str]| {
        let mut args = vec!["run", "--size", "8", "--steps", "1", "--out", "x"];
        args.extend_from_slice(options);
        heatlab_in(dir.path(), &args)
    };
    for (options, said) in [
        (
            &["--halo-depth", "2"][..],
            "--halo-depth is for a run over ranks",
        ),
        (
            &["--host-halos"][..],
            "--host-halos is for a run over ranks",
        ),
        (
            &["--overlap", "on"][..],
            "--overlap is for a run over ranks",
        ),
        (
            &["--host-halos", "--overlap", "off"][..],
            "--host-halos and --overlap are for a run over ranks",
        ),
    ] {
        let output = run_with(options);
        assert_eq!(output.status.code(), Some(1), "{options:?}");
        assert!(stderr_of(&output).contains(said), "{}", stderr_of(&output));
        assert!(!dir.path().join("x").exists());
    }
    // `auto`, the default, asks for nothing a single rank lacks.
    let output = run_with(&["--overlap", "auto"]);
    assert!(output.status.success(), "{}", stderr_of(&output));
}

/// A build without the `distributed` feature started as one of several ranks says how to build
/// one that splits the field, instead of running the whole field on every rank.
#[cfg(not(feature = "distributed"))]
#[test]
fn ranks_without_the_distributed_build_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let output = std::process::Command::new(crate::common::cli::heatlab_binary())
        .current_dir(dir.path())
        .env("OMPI_COMM_WORLD_SIZE", "2")
        .env("OMPI_COMM_WORLD_RANK", "0")
        .args(["run", "--size", "8", "--steps", "1", "--out", "x"])
        .output()
        .unwrap();
    assert!(!output.status.success());
    let stderr = stderr_of(&output);
    assert!(stderr.contains("--features distributed"), "{stderr}");
    assert!(!dir.path().join("x").exists());
}

#[test]
fn frames_hold_the_layers_and_files_asked_for() {
    let dir = tempfile::tempdir().unwrap();
    let cases: [(&[&str], &[&str]); 4] = [
        (&[], &["field_000002.png", "laplacian_000002.png"]),
        (
            &["--npy", "--frame-layers", "field"],
            &["field_000002.png", "field_000002.npy"],
        ),
        (
            &["--npy", "--no-png", "--frame-layers", "laplacian"],
            &["laplacian_000002.npy"],
        ),
        (
            &["--npy", "--no-png"],
            &["field_000002.npy", "laplacian_000002.npy"],
        ),
    ];
    for (at, (options, last_frame)) in cases.iter().enumerate() {
        let out = format!("o{at}");
        let mut args = vec!["run", "--size", "12x9", "--steps", "2", "--backend", "cpu"];
        args.extend_from_slice(options);
        args.extend(["--out", &out]);
        succeeded(&heatlab_in(dir.path(), &args));
        let mut frames: Vec<String> = fs::read_dir(dir.path().join(&out))
            .unwrap()
            .map(|entry| entry.unwrap().file_name().to_string_lossy().into_owned())
            .filter(|name| name.contains("_000002."))
            .collect();
        frames.sort();
        let mut expected: Vec<String> = last_frame.iter().map(ToString::to_string).collect();
        expected.sort();
        assert_eq!(frames, expected, "{options:?}");
        let record = read_json(&dir.path().join(&out).join("run.json"));
        let listed = record["files"].as_array().unwrap().len();
        assert_eq!(listed, 2 * last_frame.len() + 1, "{options:?}: {record}");
    }
    // --no-png alone would write no frame at all: refused before anything is written.
    let run = heatlab_in(dir.path(), &["run", "--no-png", "--out", "none"]);
    assert_eq!(run.status.code(), Some(2));
    assert!(stderr_of(&run).contains("--npy"), "{}", stderr_of(&run));
    assert!(!dir.path().join("none").exists());
}
