//! `mpirun -n N heatlab run`: the field and heat problems over 2, 3 and 4 ranks equal the
//! single-rank run file for file, what a run over ranks cannot do is refused in one line, and
//! `bench --ranks` measures scaling. Without `mpirun`
//! these tests say "skipped" (and fail under `HEATLAB_REQUIRE_MPI=1`, as CI sets it).
#![expect(
    clippy::unwrap_used,
    reason = "tests: a failed unwrap is the test's failure"
)]

use std::path::Path;
use std::process::{Command, Output};

use crate::common::cli::{heatlab_binary, heatlab_in, names_in, read_json, stderr_of, succeeded};

/// `mpirun`, or `None` (said) when this machine has none.
pub(crate) fn mpirun(test: &str) -> Option<Command> {
    let found = Command::new("mpirun").arg("--version").output().is_ok();
    if !found {
        assert!(
            std::env::var_os("HEATLAB_REQUIRE_MPI").is_none(),
            "{test}: mpirun is missing and HEATLAB_REQUIRE_MPI is set"
        );
        eprintln!("{test}: skipped (no mpirun on this machine)");
        return None;
    }
    let mut command = Command::new("mpirun");
    // CI runs as root in a container of its own.
    command
        .env("OMPI_ALLOW_RUN_AS_ROOT", "1")
        .env("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1")
        .args(["--oversubscribe", "--bind-to", "none"]);
    Some(command)
}

pub(crate) fn run_ranks(mpirun: Command, dir: &Path, ranks: usize, args: &[&str]) -> Output {
    command_on_ranks(mpirun, dir, ranks, "run", args)
}

fn command_on_ranks(
    mut mpirun: Command,
    dir: &Path,
    ranks: usize,
    command: &str,
    args: &[&str],
) -> Output {
    mpirun
        .current_dir(dir)
        .args(["-n", &ranks.to_string()])
        .arg(heatlab_binary())
        .arg(command)
        .args(args)
        .output()
        .unwrap_or_else(|e| panic!("mpirun runs: {e}"))
}

/// Every file of the single-rank run's folder but its record, equal byte for byte in `other`.
pub(crate) fn assert_same_frames(single: &Path, other: &Path, what: &str) {
    let names: Vec<String> = names_in(single)
        .into_iter()
        .filter(|name| name.ends_with(".npy") || name.ends_with(".png"))
        .collect();
    assert!(names.len() >= 8, "{what}: frames written: {names:?}");
    for name in names {
        let a = std::fs::read(single.join(&name)).unwrap();
        let b = std::fs::read(other.join(&name))
            .unwrap_or_else(|e| panic!("{what}: {name} missing over ranks: {e}"));
        assert!(a == b, "{what}: {name} differs from the single-rank run");
    }
}

#[test]
fn the_field_over_2_3_and_4_ranks_equals_one_rank_for_every_boundary() {
    let test = "the_field_over_2_3_and_4_ranks_equals_one_rank_for_every_boundary";
    if mpirun(test).is_none() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    for size in ["29x17", "31x8"] {
        for boundary in ["dirichlet", "neumann", "periodic"] {
            let common = [
                "--size",
                size,
                "--steps",
                "45",
                "--save-every",
                "20",
                "--boundary",
                boundary,
                "--npy",
                "--backend",
                "cpu",
                "--seed",
                "7",
            ];
            let single = format!("one-{size}-{boundary}");
            let mut args = vec!["run"];
            args.extend(common);
            args.extend(["--out", &single]);
            succeeded(&heatlab_in(dir.path(), &args));
            for ranks in 2..=4 {
                let out = format!("ranks{ranks}-{size}-{boundary}");
                let mut args = common.to_vec();
                args.extend(["--out", &out]);
                if ranks == 3 {
                    // The exchange after each round, not overlapped: the same frames.
                    args.extend(["--overlap", "off"]);
                }
                let Some(command) = mpirun(test) else { return };
                let output = run_ranks(command, dir.path(), ranks, &args);
                succeeded(&output);
                let what = format!("{size} {boundary} on {ranks} ranks");
                assert_same_frames(&dir.path().join(&single), &dir.path().join(&out), &what);
                let record = read_json(&dir.path().join(&out).join("run.json"));
                let method = record["method"].as_str().unwrap();
                assert!(
                    method.contains(&format!("split over {ranks} ranks")),
                    "{what}: {method}"
                );
                // CPU ranks step their bands without a second stream.
                assert!(!method.contains("overlapped"), "{what}: {method}");
                let device = record["device"].as_str().unwrap();
                assert!(
                    device.starts_with(&format!("{ranks} ranks: ")),
                    "{what}: {device}"
                );
            }
        }
    }
}

#[test]
fn what_ranks_cannot_do_is_refused_in_one_line_before_anything_is_written() {
    let test = "what_ranks_cannot_do_is_refused_in_one_line_before_anything_is_written";
    let dir = tempfile::tempdir().unwrap();
    let cases: [(&[&str], usize, &str); 3] = [
        (
            &["--size", "10x6", "--halo-depth", "4", "--backend", "cpu"],
            3,
            "3 ranks leave rank 2 only 3 of the 10 rows, fewer than the halo depth of 4",
        ),
        (
            &["--size", "3x6", "--backend", "cpu"],
            4,
            "use at most 3 ranks for this field",
        ),
        (
            &["--scenario", "fin", "--steady"],
            2,
            "--steady does not run across ranks yet",
        ),
    ];
    for (args, ranks, expected) in cases {
        let Some(command) = mpirun(test) else { return };
        let mut args = args.to_vec();
        args.extend(["--out", "refused"]);
        let output = run_ranks(command, dir.path(), ranks, &args);
        assert!(!output.status.success(), "{args:?} ran");
        let stderr = stderr_of(&output);
        let lines: Vec<&str> = stderr.lines().filter(|l| l.contains("heatlab:")).collect();
        assert_eq!(lines.len(), 1, "one line for {args:?}: {stderr}");
        assert!(lines[0].contains(expected), "{args:?}: {stderr}");
        assert!(
            !dir.path().join("refused").exists(),
            "{args:?} wrote its folder"
        );
    }
    // A command line clap refuses is said once, by rank 0, not by every rank.
    let Some(command) = mpirun(test) else { return };
    let output = run_ranks(
        command,
        dir.path(),
        3,
        &["--size", "131073", "--out", "big"],
    );
    assert_eq!(output.status.code(), Some(2));
    let stderr = stderr_of(&output);
    let said = stderr.matches("exceeds the largest supported side").count();
    assert_eq!(said, 1, "{stderr}");
    assert!(!dir.path().join("big").exists(), "{stderr}");
    // Ranks without a GPU under --backend cuda: the first rank that has none is named.
    let Some(command) = mpirun(test) else { return };
    let args = [
        "--size",
        "64",
        "--steps",
        "1",
        "--backend",
        "cuda",
        "--out",
        "no-gpu",
    ];
    let output = run_ranks(command, dir.path(), 2, &args);
    let stderr = stderr_of(&output);
    if output.status.success() {
        eprintln!("{test} (ranks without a GPU): skipped (CUDA works on this machine)");
        return;
    }
    let lines: Vec<&str> = stderr.lines().filter(|l| l.contains("heatlab:")).collect();
    assert_eq!(lines.len(), 1, "{stderr}");
    assert!(
        lines[0].contains("heatlab: error: rank 0: CUDA is not available"),
        "{stderr}"
    );
    assert!(!dir.path().join("no-gpu").exists(), "{stderr}");
}

#[test]
fn a_state_saved_over_three_ranks_resumes_over_two_as_on_one_rank() {
    let test = "a_state_saved_over_three_ranks_resumes_over_two_as_on_one_rank";
    if mpirun(test).is_none() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let first = [
        "--size",
        "27x14",
        "--steps",
        "20",
        "--npy",
        "--backend",
        "cpu",
        "--boundary",
    ];
    // On one rank: 20 steps, saved, then 25 more.
    let mut one = vec!["run"];
    one.extend(first);
    one.extend(["neumann", "--out", "one-a", "--save-state", "one.hlstate"]);
    succeeded(&heatlab_in(dir.path(), &one));
    let resume_one = [
        "run",
        "--resume",
        "one.hlstate",
        "--steps",
        "25",
        "--npy",
        "--backend",
        "cpu",
        "--out",
        "one-b",
    ];
    succeeded(&heatlab_in(dir.path(), &resume_one));
    // Over ranks: saved on three, resumed on two.
    let mut three = first.to_vec();
    three.extend([
        "neumann",
        "--out",
        "three-a",
        "--save-state",
        "three.hlstate",
    ]);
    let command = mpirun(test).unwrap();
    succeeded(&run_ranks(command, dir.path(), 3, &three));
    let saved_one = std::fs::read(dir.path().join("one.hlstate")).unwrap();
    let saved_three = std::fs::read(dir.path().join("three.hlstate")).unwrap();
    assert!(
        saved_one == saved_three,
        "the state saved over three ranks differs"
    );
    let resume_two = [
        "--resume",
        "three.hlstate",
        "--steps",
        "25",
        "--npy",
        "--backend",
        "cpu",
        "--out",
        "two-b",
    ];
    let command = mpirun(test).unwrap();
    succeeded(&run_ranks(command, dir.path(), 2, &resume_two));
    for name in [
        "field_000045.npy",
        "laplacian_000045.npy",
        "field_000045.png",
    ] {
        let a = std::fs::read(dir.path().join("one-b").join(name)).unwrap();
        let b = std::fs::read(dir.path().join("two-b").join(name)).unwrap();
        assert!(
            a == b,
            "{name}: resumed over two ranks differs from one rank"
        );
    }
}

/// `mpirun -n 2 heatlab run` of a 600² field on the CPU that would run for ever (pieces of 100
/// steps), writing into `out` (from `dir`), its stderr piped.
fn endless_run_on_two_ranks(
    mut mpirun: Command,
    dir: &Path,
    out: &Path,
    more: &[&str],
) -> std::process::Child {
    mpirun
        .current_dir(dir)
        .args(["-n", "2"])
        .arg(heatlab_binary())
        .args([
            "run",
            "--size",
            "600",
            "--steps",
            "100000000",
            "--chunk",
            "100",
        ])
        .args(["--backend", "cpu"])
        .args(more)
        .arg("--out")
        .arg(out)
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap()
}

#[test]
fn sigterm_stops_every_rank_together_with_the_record_written() {
    use crate::common::process::{child_stderr, send, wait_for, wait_with_limit};
    use std::time::Duration;
    let test = "sigterm_stops_every_rank_together_with_the_record_written";
    let Some(command) = mpirun(test) else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let mut child = endless_run_on_two_ranks(command, dir.path(), Path::new("r"), &[]);
    // The first frames are written once every rank watches for signals.
    let first = dir.path().join("r").join("field_000000.png");
    wait_for("the first frame", Duration::from_secs(60), || {
        first.exists()
    });
    std::thread::sleep(Duration::from_millis(300));
    send(&child, libc::SIGTERM);
    wait_with_limit(&mut child, Duration::from_secs(60));
    let stderr = child_stderr(&mut child);
    assert!(
        stderr.contains("heatlab: stopped at step") && stderr.contains("interrupted by SIGTERM"),
        "{stderr}"
    );
    let record = read_json(&dir.path().join("r").join("run.json"));
    assert_eq!(record["status"], "interrupted", "{stderr}");
    assert_eq!(record["reason"], "interrupted by SIGTERM");
    let steps = record["steps_completed"].as_u64().unwrap();
    assert!(steps > 0, "stopped after some steps: {steps}");
    // The steps taken are timed, as on one rank.
    let timed = std::fs::read_to_string(dir.path().join("r").join("timings.csv")).unwrap();
    assert!(timed.lines().count() > 1, "{timed}");
    crate::common::cli::assert_no_temporary_files(&dir.path().join("r"));
}

/// The process id of rank `rank` of the heatlab run writing into `out` (found through /proc:
/// its command line names `out`, its environment its rank).
fn rank_pid(out: &Path, rank: usize) -> Option<u32> {
    let out = out.to_str().unwrap();
    let wanted = format!("OMPI_COMM_WORLD_RANK={rank}");
    std::fs::read_dir("/proc")
        .ok()?
        .flatten()
        .find_map(|entry| {
            let pid: u32 = entry.file_name().to_str()?.parse().ok()?;
            let cmdline = std::fs::read(entry.path().join("cmdline")).ok()?;
            let cmdline = String::from_utf8_lossy(&cmdline);
            if !cmdline.contains(out)
                || !cmdline.contains("heatlab")
                || cmdline.starts_with("mpirun")
            {
                return None;
            }
            let environ = std::fs::read(entry.path().join("environ")).ok()?;
            let found = environ
                .split(|&b| b == 0)
                .any(|var| var == wanted.as_bytes());
            found.then_some(pid)
        })
}

#[test]
fn a_rank_killed_leaves_rank_0s_record_and_no_temporary_file() {
    use crate::common::process::{child_stderr, send_to, wait_for, wait_with_limit};
    use std::time::Duration;
    let test = "a_rank_killed_leaves_rank_0s_record_and_no_temporary_file";
    let Some(command) = mpirun(test) else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("killed");
    let mut child = endless_run_on_two_ranks(
        command,
        dir.path(),
        &out,
        &["--save-every", "2000", "--npy"],
    );
    let first = out.join("field_000000.npy");
    wait_for("the first frame", Duration::from_secs(60), || {
        first.exists()
    });
    // Some pieces of steps first (the record after each is kept).
    std::thread::sleep(Duration::from_secs(2));
    let rank_1 = rank_pid(&out, 1).expect("rank 1 runs");
    send_to(rank_1, libc::SIGKILL);
    let status = wait_with_limit(&mut child, Duration::from_secs(60));
    let stderr = child_stderr(&mut child);
    assert!(!status.success(), "{stderr}");
    // mpirun names the rank that died; rank 0, stranded waiting for it, leaves its record.
    assert!(stderr.contains("rank 1"), "{stderr}");
    assert!(
        stderr.contains("while rank 0 waited for the other ranks")
            || stderr.contains("heatlab: stopped at step"),
        "{stderr}"
    );
    let record = read_json(&out.join("run.json"));
    assert_eq!(record["status"], "interrupted", "{stderr}");
    assert!(record["steps_completed"].as_u64().unwrap() > 0, "{record}");
    assert!(
        record["files"]
            .as_array()
            .unwrap()
            .iter()
            .any(|name| name == "field_000000.npy"),
        "{record}"
    );
    crate::common::cli::assert_no_temporary_files(&out);
}

#[test]
fn a_heat_problem_with_a_thermostat_over_two_and_three_ranks_equals_one_rank() {
    let test = "a_heat_problem_with_a_thermostat_over_two_and_three_ranks_equals_one_rank";
    if mpirun(test).is_none() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    // 60 s of the thermostat's plate: the heater switches a few times.
    let common = [
        "--scenario",
        "heater-thermostat",
        "--duration",
        "60",
        "--npy",
        "--backend",
        "cpu",
    ];
    let mut single = vec!["run"];
    single.extend(common);
    single.extend(["--out", "one"]);
    succeeded(&heatlab_in(dir.path(), &single));
    let one = read_json(&dir.path().join("one").join("run.json"));
    let switches = one["problem"]["switches"].as_array().unwrap();
    assert!(switches.len() >= 2, "the thermostat switched: {switches:?}");
    for ranks in [2, 3] {
        let out = format!("ranks{ranks}");
        let mut args = common.to_vec();
        args.extend(["--out", &out]);
        let Some(command) = mpirun(test) else { return };
        succeeded(&run_ranks(command, dir.path(), ranks, &args));
        let what = format!("heater-thermostat on {ranks} ranks");
        assert_same_frames(&dir.path().join("one"), &dir.path().join(&out), &what);
        let record = read_json(&dir.path().join(&out).join("run.json"));
        assert_eq!(
            record["problem"]["switches"], one["problem"]["switches"],
            "{what}"
        );
        assert_eq!(
            record["problem"]["simulated_seconds"], one["problem"]["simulated_seconds"],
            "{what}"
        );
        let budget = |r: &serde_json::Value| r["problem"]["budget"]["window"]["exchange"].clone();
        assert!(budget(&record).is_object(), "{what}: {record}");
        assert_eq!(record["status"], "completed", "{what}");
    }
}

#[test]
fn verify_over_three_ranks_finds_the_split_field_equal_to_the_cpu_reference() {
    let test = "verify_over_three_ranks_finds_the_split_field_equal_to_the_cpu_reference";
    let Some(command) = mpirun(test) else { return };
    let dir = tempfile::tempdir().unwrap();
    let args = [
        "--backend",
        "cpu",
        "--sequences",
        "8",
        "--seed",
        "5",
        "--quiet",
        "--json",
        "report.json",
    ];
    let output = command_on_ranks(command, dir.path(), 3, "verify", &args);
    succeeded(&output);
    let report = read_json(&dir.path().join("report.json"));
    assert_eq!(report["sequences_passed"], 8, "{report}");
    let subject = report["subject"].as_str().unwrap();
    assert!(subject.contains("split over 3 ranks"), "{subject}");
    assert!(
        report["coverage"]["operations"]["set-problem"]
            .as_u64()
            .unwrap()
            > 0
    );
    let Some(command) = mpirun(test) else { return };
    let output = command_on_ranks(command, dir.path(), 2, "verify", &["--physics"]);
    assert!(!output.status.success());
    let stderr = stderr_of(&output);
    let lines: Vec<&str> = stderr.lines().filter(|l| l.contains("heatlab:")).collect();
    assert_eq!(lines.len(), 1, "{stderr}");
    assert!(
        lines[0].contains("--physics does not run across ranks"),
        "{stderr}"
    );
}

#[test]
fn bench_over_two_cpu_ranks_measures_weak_and_strong_scaling_beside_one_rank() {
    let test = "bench_over_two_cpu_ranks_measures_weak_and_strong_scaling_beside_one_rank";
    let Some(command) = mpirun(test) else { return };
    let dir = tempfile::tempdir().unwrap();
    let args = [
        "--ranks",
        "--backend",
        "cpu",
        "--rank-size",
        "96x64",
        "--strong-size",
        "160x64",
        "--rank-steps",
        "16",
        "--halo-depth",
        "4",
        "--repeats",
        "2",
        "--json",
        "scaling.json",
    ];
    let output = command_on_ranks(command, dir.path(), 2, "bench", &args);
    succeeded(&output);
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        stdout.contains("2 alternating rounds of 16 steps"),
        "{stdout}"
    );
    let report = read_json(&dir.path().join("scaling.json"));
    let rows = report.as_array().unwrap();
    assert_eq!(rows.len(), 2, "{report}");
    for (row, (scaling, size)) in rows.iter().zip([("weak", 192), ("strong", 160)]) {
        assert_eq!(row["scaling"], scaling, "{row}");
        assert_eq!(row["size"]["rows"], size, "{row}");
        assert_eq!(row["ranks"], 2);
        assert_eq!(row["halos"], "host (mpi)");
        assert_eq!(row["cells_per_second"]["runs"], 2);
        let rate = row["cells_per_second"]["mean"].as_f64().unwrap();
        let single = row["single_gpu_cells_per_second"]["mean"].as_f64().unwrap();
        let speedup = row["speedup"].as_f64().unwrap();
        assert!(rate > 0.0 && single > 0.0, "{row}");
        assert!((speedup - rate / single).abs() < 1e-9 * speedup, "{row}");
    }
}
