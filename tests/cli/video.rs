//! `heatlab run --video` as a user runs it: the GIF and the MP4 decode to the frames and size
//! asked for, a run stopped by a signal leaves a playable video and no temporary file, a full
//! disk is a clear error that loses nothing else, and bad requests are refused up front. The
//! MP4 tests need ffmpeg and ffprobe (.ci/run installs them); without them they say "skipped".

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "test helpers; clippy's allow-*-in-tests covers #[test] functions only"
)]

use crate::common;
use common::backend::test_name;

use common::cli::{assert_no_temporary_files, stderr_of, succeeded};
use common::{heatlab_binary as binary, heatlab_in as heatlab};
use std::fs;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// Frames, width and height of a GIF, decoded by the `gif` crate.
fn gif_info(path: &Path) -> (usize, u16, u16) {
    let mut options = gif::DecodeOptions::new();
    options.set_color_output(gif::ColorOutput::RGBA);
    let mut decoder = options.read_info(fs::File::open(path).unwrap()).unwrap();
    let (width, height) = (decoder.width(), decoder.height());
    let mut frames = 0;
    while decoder.read_next_frame().unwrap().is_some() {
        frames += 1;
    }
    (frames, width, height)
}

fn tools_present(test: &str) -> bool {
    let present = |tool: &str| {
        Command::new(tool)
            .arg("-version")
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()
            .is_ok_and(|s| s.success())
    };
    if present("ffmpeg") && present("ffprobe") {
        return true;
    }
    common::skipped(test, "ffmpeg/ffprobe not on PATH");
    false
}

#[test]
fn a_gif_has_a_frame_at_the_start_and_every_k_steps() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let output = heatlab(
        d,
        &[
            "run",
            "--size",
            "90x60",
            "--steps",
            "45",
            "--backend",
            "cpu",
            "--out",
            "job",
            "--video",
            "job.gif",
            "--video-every",
            "10",
            "--video-fps",
            "25",
        ],
    );
    succeeded(&output);
    assert!(
        stderr_of(&output).contains("wrote job.gif: 5 frames of 300x450 at 25 frames/s"),
        "{}",
        stderr_of(&output)
    );
    // A small field is drawn 5 pixels a cell, within the frame's side of 512.
    assert_eq!(gif_info(&d.join("job.gif")), (5, 300, 450));
    // Both layers side by side, reduced to fit 32 cells, with a colorbar and the step counter.
    succeeded(&heatlab(
        d,
        &[
            "run",
            "--size",
            "90x60",
            "--steps",
            "20",
            "--backend",
            "cpu",
            "--out",
            "both",
            "--video",
            "both.gif",
            "--video-every",
            "20",
            "--video-layer",
            "both",
            "--video-size",
            "32",
            "--video-colorbar",
            "--video-step-counter",
        ],
    ));
    let (frames, width, height) = gif_info(&d.join("both.gif"));
    assert_eq!(frames, 2);
    assert!(
        width > 2 * 20 + 8,
        "two layers of 20 columns and colorbars: {width}"
    );
    assert!(height > 30, "30 rows and a caption: {height}");
    assert_no_temporary_files(d);
}

#[test]
fn an_mp4_has_its_frames_and_an_even_size() {
    if !tools_present(test_name!()) {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    succeeded(&heatlab(
        d,
        &[
            "run",
            "--size",
            "61x47",
            "--steps",
            "30",
            "--backend",
            "cpu",
            "--out",
            "job",
            "--video",
            "job.mp4",
            "--video-every",
            "5",
            // One pixel a cell: the odd size is the field's.
            "--video-size",
            "64",
        ],
    ));
    let probe = Command::new("ffprobe")
        .args([
            "-v",
            "error",
            "-count_frames",
            "-select_streams",
            "v:0",
            "-show_entries",
            "stream=codec_name,width,height,nb_read_frames",
            "-of",
            "csv=p=0",
        ])
        .arg(d.join("job.mp4"))
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&probe.stdout);
    assert_eq!(text.trim(), "h264,48,62,7", "{}", stderr_of(&probe));
    assert_no_temporary_files(d);
}

#[test]
fn a_run_stopped_by_a_signal_leaves_a_playable_video() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let mp4 = tools_present(&format!("{} (MP4 part)", test_name!()));
    for (file, format) in [("long.gif", "gif"), ("long.mp4", "mp4")] {
        if format == "mp4" && !mp4 {
            continue;
        }
        let out = format!("long-{format}");
        let args = [
            "run",
            "--size",
            "200",
            "--steps",
            "100000000",
            "--backend",
            "cpu",
            "--out",
            &out,
            "--video",
            file,
            "--video-every",
            "50",
        ];
        let child = Command::new(binary())
            .current_dir(d)
            .args(args)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let started = Instant::now();
        while !d.join(&out).join("field_000000.png").exists() {
            assert!(
                started.elapsed() < Duration::from_secs(60),
                "no first frame"
            );
            std::thread::sleep(Duration::from_millis(20));
        }
        std::thread::sleep(Duration::from_millis(800));
        let pid = libc::pid_t::try_from(child.id()).unwrap();
        // SAFETY: kill(2) with a child's pid and a plain signal number has no memory effects.
        assert_eq!(unsafe { libc::kill(pid, libc::SIGTERM) }, 0);
        let output = child.wait_with_output().unwrap();
        let stderr = stderr_of(&output);
        assert_eq!(output.status.code(), Some(143), "{stderr}");
        assert!(stderr.contains(&format!("wrote {file}")), "{stderr}");
        assert_no_temporary_files(d);
        if format == "gif" {
            let (frames, width, height) = gif_info(&d.join(file));
            // 2 pixels a cell within the frame's side of 512.
            assert!(frames >= 1 && (width, height) == (400, 400), "{frames}");
        } else {
            let probe = Command::new("ffprobe")
                .args(["-v", "error", "-show_entries", "stream=codec_name"])
                .args(["-of", "csv=p=0"])
                .arg(d.join(file))
                .output()
                .unwrap();
            assert_eq!(String::from_utf8_lossy(&probe.stdout).trim(), "h264");
        }
    }
}

#[test]
fn a_full_disk_is_a_clear_error_and_loses_nothing_else() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    fs::write(d.join("old.gif"), b"the previous video").unwrap();
    let output = Command::new(binary())
        .current_dir(d)
        .env("HEATLAB_TEST_FAIL_WRITE", "old.gif")
        .args([
            "run",
            "--size",
            "64",
            "--steps",
            "20",
            "--backend",
            "cpu",
            "--out",
            "job",
            "--video",
            "old.gif",
            "--video-every",
            "5",
        ])
        .output()
        .unwrap();
    let stderr = stderr_of(&output);
    assert_eq!(output.status.code(), Some(1), "{stderr}");
    assert!(stderr.contains("No space left on device"), "{stderr}");
    assert!(!stderr.contains("panicked"), "{stderr}");
    assert_eq!(fs::read(d.join("old.gif")).unwrap(), b"the previous video");
    let summary: serde_json::Value =
        serde_json::from_str(&fs::read_to_string(d.join("job/run.json")).unwrap()).unwrap();
    assert_eq!(summary["status"], "failed");
    assert!(d.join("job/field_000000.png").exists());
    assert_no_temporary_files(d);
}

#[test]
fn bad_video_requests_are_refused_before_the_run() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let cases: [(&[&str], &str); 4] = [
        (&["--video", "v.avi"], "a video is a .gif or an .mp4 file"),
        (
            &["--video", "v.gif", "--video-every", "0"],
            "--video-every must be at least 1",
        ),
        (&["--video", "v.gif", "--video-fps", "0"], "--video-fps"),
        (&["--video", "."], "a video is a .gif or an .mp4 file"),
    ];
    for (extra, expected) in cases {
        let mut args = vec![
            "run",
            "--size",
            "32",
            "--steps",
            "2",
            "--backend",
            "cpu",
            "--out",
            "never",
        ];
        args.extend_from_slice(extra);
        let output = heatlab(d, &args);
        let stderr = stderr_of(&output);
        assert!(!output.status.success(), "{args:?}");
        assert!(stderr.contains(expected), "{args:?}: {stderr}");
        assert!(!stderr.contains("panicked"), "{stderr}");
    }
    // MP4 without ffmpeg: one line that offers GIF or PNG frames.
    let output = Command::new(binary())
        .current_dir(d)
        .env("PATH", d)
        .args([
            "run",
            "--size",
            "32",
            "--steps",
            "2",
            "--backend",
            "cpu",
            "--out",
            "never",
        ])
        .args(["--video", "v.mp4"])
        .output()
        .unwrap();
    let stderr = stderr_of(&output);
    assert_eq!(output.status.code(), Some(1), "{stderr}");
    assert!(stderr.contains("MP4 needs ffmpeg on PATH"), "{stderr}");
    assert!(stderr.contains("record a .gif instead"), "{stderr}");
    assert!(!d.join("never").exists());
}

#[test]
fn links_are_written_through_and_fifos_in_place() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    std::os::unix::fs::symlink("real.gif", d.join("link.gif")).unwrap();
    succeeded(&heatlab(
        d,
        &[
            "run",
            "--size",
            "40",
            "--steps",
            "10",
            "--backend",
            "cpu",
            "--out",
            "a",
            "--video",
            "link.gif",
            "--video-every",
            "5",
        ],
    ));
    assert!(fs::symlink_metadata(d.join("link.gif"))
        .unwrap()
        .file_type()
        .is_symlink());
    assert_eq!(gif_info(&d.join("real.gif")), (3, 480, 480));
    if !tools_present(&format!("{} (MP4 into a FIFO)", test_name!())) {
        return;
    }
    let fifo = d.join("pipe.mp4");
    assert!(Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .unwrap()
        .success());
    let reader = std::thread::spawn({
        let fifo = fifo.clone();
        move || fs::read(fifo).unwrap()
    });
    succeeded(&heatlab(
        d,
        &[
            "run",
            "--size",
            "40",
            "--steps",
            "10",
            "--backend",
            "cpu",
            "--out",
            "b",
            "--video",
            "pipe.mp4",
            "--video-every",
            "5",
        ],
    ));
    let bytes = reader.join().unwrap();
    fs::write(d.join("received.mp4"), bytes).unwrap();
    let probe = Command::new("ffprobe")
        .args(["-v", "error", "-count_frames", "-show_entries"])
        .args(["stream=codec_name,nb_read_frames", "-of", "csv=p=0"])
        .arg(d.join("received.mp4"))
        .output()
        .unwrap();
    assert_eq!(String::from_utf8_lossy(&probe.stdout).trim(), "h264,3");
    assert!(
        !fs::metadata(&fifo).unwrap().is_file(),
        "the FIFO stays a FIFO"
    );
}
