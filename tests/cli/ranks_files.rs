//! `mpirun -n N heatlab run` from a file: a field read whole by rank 0 and split, and an
//! array each rank reads its own rows of, with `.npy` frames each rank writes its rows of (no
//! rank holds the whole field), equal to the single-rank run byte for byte; a file cut short
//! is refused naming the rank that found it so.
#![expect(
    clippy::unwrap_used,
    reason = "tests: a failed unwrap is the test's failure"
)]

use std::path::Path;

use super::ranks::{assert_same_frames, mpirun, run_ranks};
use crate::common::cli::{heatlab_in, names_in, read_json, stderr_of, succeeded};
use crate::common::npy_bytes;

#[test]
fn a_field_read_from_a_file_and_a_deep_halo_split_alike() {
    let test = "a_field_read_from_a_file_and_a_deep_halo_split_alike";
    let Some(command) = mpirun(test) else { return };
    let dir = tempfile::tempdir().unwrap();
    // The single-rank run's first frame is the field to start from.
    let initial = initial_array(dir.path(), "24x13");
    let initial = initial.to_str().unwrap();
    let args = [
        "--initial",
        initial,
        "--steps",
        "33",
        "--save-every",
        "11",
        "--npy",
        "--backend",
        "cpu",
        "--boundary",
        "periodic",
    ];
    let mut single = vec!["run"];
    single.extend(args);
    single.extend(["--out", "one"]);
    succeeded(&heatlab_in(dir.path(), &single));
    let mut over = args.to_vec();
    over.extend(["--out", "three", "--halo-depth", "8"]);
    succeeded(&run_ranks(command, dir.path(), 3, &over));
    assert_same_frames(
        &dir.path().join("one"),
        &dir.path().join("three"),
        "--initial",
    );
    let record = read_json(&dir.path().join("three").join("run.json"));
    let method = record["method"].as_str().unwrap();
    assert!(method.contains("halos 8 rows deep"), "{method}");
}

/// The float32 C-order array at `from` written as a float64 Fortran-order array at `to`.
fn as_fortran_f64(from: &Path, to: &Path) {
    let grid = heatlab_engine::export::read_npy(&std::fs::read(from).unwrap()).unwrap();
    let (rows, cols) = (grid.rows(), grid.cols());
    let mut data = Vec::with_capacity(rows * cols * 8);
    for col in 0..cols {
        for row in 0..rows {
            data.extend_from_slice(&f64::from(grid.get(row, col)).to_le_bytes());
        }
    }
    let shape = format!("({rows}, {cols})");
    std::fs::write(to, npy_bytes("<f8", true, &shape, &data)).unwrap();
}

/// A jagged field's first frame, of `size`, the single-rank run's in `dir/a`: the array to start
/// from.
fn initial_array(dir: &Path, size: &str) -> std::path::PathBuf {
    let first = [
        "run",
        "--size",
        size,
        "--steps",
        "0",
        "--npy",
        "--backend",
        "cpu",
        "--out",
        "a",
    ];
    succeeded(&heatlab_in(dir, &first));
    dir.join("a").join("field_000000.npy")
}

#[test]
fn an_array_read_and_frames_written_by_every_rank_equal_one_rank() {
    let test = "an_array_read_and_frames_written_by_every_rank_equal_one_rank";
    if mpirun(test).is_none() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let c_order = initial_array(dir.path(), "37x23");
    as_fortran_f64(&c_order, &dir.path().join("fortran.npy"));
    for (file, boundary) in [
        (c_order.to_str().unwrap(), "periodic"),
        ("fortran.npy", "neumann"),
    ] {
        let args = [
            "--initial",
            file,
            "--steps",
            "29",
            "--save-every",
            "10",
            "--npy",
            "--backend",
            "cpu",
            "--boundary",
            boundary,
        ];
        let mut single = vec!["run"];
        single.extend(args);
        single.extend(["--out", "one"]);
        single.push("--overwrite");
        succeeded(&heatlab_in(dir.path(), &single));
        for ranks in [2, 3] {
            let out = format!("ranks{ranks}-{boundary}");
            let mut over = args.to_vec();
            over.extend(["--no-png", "--out", &out]);
            let Some(command) = mpirun(test) else { return };
            let output = run_ranks(command, dir.path(), ranks, &over);
            succeeded(&output);
            let stderr = stderr_of(&output);
            assert!(stderr.contains("each rank reads its own rows"), "{stderr}");
            let what = format!("{file} over {ranks} ranks");
            let arrays: Vec<String> = names_in(&dir.path().join("one"))
                .into_iter()
                .filter(|name| name.ends_with(".npy"))
                .collect();
            assert_eq!(arrays.len(), 8, "{what}: {arrays:?}");
            let written = names_in(&dir.path().join(&out));
            assert!(
                !written.iter().any(|name| name.ends_with(".png")),
                "{what}: --no-png wrote {written:?}"
            );
            for name in &arrays {
                let a = std::fs::read(dir.path().join("one").join(name)).unwrap();
                let b = std::fs::read(dir.path().join(&out).join(name)).unwrap();
                assert!(a == b, "{what}: {name} differs from the single-rank run");
            }
            let record = read_json(&dir.path().join(&out).join("run.json"));
            assert_eq!(record["status"], "completed", "{what}");
            let listed = record["files"].as_array().unwrap();
            let listed_arrays = listed
                .iter()
                .filter(|f| f.as_str().unwrap().ends_with(".npy"))
                .count();
            assert_eq!(listed_arrays, 8, "{what}: {listed:?}");
        }
    }
}

#[test]
fn a_bad_array_is_refused_by_rank_0_or_by_the_rank_that_reads_the_fault() {
    let test = "a_bad_array_is_refused_by_rank_0_or_by_the_rank_that_reads_the_fault";
    if mpirun(test).is_none() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let bytes = std::fs::read(initial_array(dir.path(), "37x23")).unwrap();
    // Cut short: rank 0 sees it from the file's length, before anything is written.
    std::fs::write(
        dir.path().join("short.npy"),
        &bytes[..bytes.len() - 23 * 4 * 5],
    )
    .unwrap();
    // A NaN in row 33, in rank 2's rows of 3: that rank finds it and is named.
    let mut nan = bytes.clone();
    let at = nan.len() - (37 - 33) * 23 * 4 + 5 * 4;
    nan[at..at + 4].copy_from_slice(&f32::NAN.to_le_bytes());
    std::fs::write(dir.path().join("nan.npy"), nan).unwrap();
    for (file, expected, folder) in [
        ("short.npy", "is cut short", false),
        ("nan.npy", "rank 2: ", true),
    ] {
        let args = [
            "--initial",
            file,
            "--npy",
            "--no-png",
            "--backend",
            "cpu",
            "--out",
            "bad",
        ];
        let Some(command) = mpirun(test) else { return };
        let output = run_ranks(command, dir.path(), 3, &args);
        let stderr = stderr_of(&output);
        assert_eq!(output.status.code(), Some(1), "{file}: {stderr}");
        let errors: Vec<&str> = stderr.lines().filter(|l| l.contains("error")).collect();
        assert_eq!(errors.len(), 1, "{file}: {stderr}");
        assert!(errors[0].contains(expected), "{file}: {stderr}");
        if file == "nan.npy" {
            assert!(errors[0].contains("at row 33, column 5"), "{stderr}");
        }
        assert_eq!(dir.path().join("bad").exists(), folder, "{file}: {stderr}");
        if folder {
            let written = names_in(&dir.path().join("bad"));
            assert!(
                !written.iter().any(|name| name.ends_with(".npy")),
                "{file}: {written:?}"
            );
            std::fs::remove_dir_all(dir.path().join("bad")).unwrap();
        }
    }
}
