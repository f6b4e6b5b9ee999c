//! The app when things go wrong around it (issue 12): a screenshot that cannot be taken in
//! time, a recorded run of another kernel than the tab's, an unreadable recorded run, a signal.
//!
//! The app's side is driven headlessly through egui_kittest (no display needed). The real
//! binary (`HEATLAB_BIN` when set, else Cargo's) is checked where no window is needed, and in
//! a real window under a private Xvfb when `Xvfb` is installed; without it those tests say
//! "skipped" on standard error and pass.

// Its helpers unwrap like its tests: a failure there is the test's failure, with its message.
#![expect(
    clippy::unwrap_used,
    reason = "test helpers; clippy's allow-*-in-tests covers #[test] functions only"
)]

use crate::common;
use common::backend::test_name;

use common::app::DEADLINE;
use common::cli::stderr_of;
use common::MemoryStorage;
use common::{heatlab_binary as binary, heatlab_in as heatlab};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

use eframe::egui::{self, Vec2};
use egui_kittest::kittest::Queryable;
use egui_kittest::Harness;
use heatlab::ui::tutorial::Tab;
use heatlab::ui::{AppOptions, HeatlabApp, ScreenshotPlan, Settings, StopRequest};
use heatlab_engine::compute::BackendChoice;
use heatlab_engine::grid::{GridSize, MAX_SIDE};
use heatlab_engine::tutorial::TutorialKernel;

/// A Monte Carlo pi run recorded on the H100 with `heatlab kernel mc-pi --json`, embedded so
/// that the tests run from any directory (the tutorial's tests use it too).
pub(crate) const RECORDED_PI_1M: &str =
    include_str!("../../benches/results/tutorial-h100-2026-11-22/pi_1M.json");

const SIGTERM: i32 = 15;

fn small_settings(export_dir: &Path) -> Settings {
    let mut field = Settings::default().field;
    field.size = GridSize::new(32, 32).unwrap();
    Settings {
        backend: BackendChoice::Cpu,
        field,
        export_dir: export_dir.to_path_buf(),
        ..Settings::default()
    }
}

fn harness(options: AppOptions) -> Harness<'static, HeatlabApp> {
    common::app::build_app(options, Vec2::new(1440.0, 900.0))
}

/// The viewport commands the app sent in the last frame.
fn commands(harness: &Harness<'_, HeatlabApp>) -> Vec<egui::ViewportCommand> {
    harness
        .output()
        .viewport_output
        .get(&egui::ViewportId::ROOT)
        .map(|viewport| viewport.commands.clone())
        .unwrap_or_default()
}

fn asks_to_close(commands: &[egui::ViewportCommand]) -> bool {
    commands
        .iter()
        .any(|c| matches!(c, egui::ViewportCommand::Close))
}

/// Runs frames until `done` holds for the app and the commands of its last frame, or fails
/// after [`DEADLINE`].
fn step_until(
    harness: &mut Harness<'_, HeatlabApp>,
    what: &str,
    mut done: impl FnMut(&HeatlabApp, &[egui::ViewportCommand]) -> bool,
) {
    let start = Instant::now();
    loop {
        harness.step();
        if done(harness.state(), &commands(harness)) {
            return;
        }
        assert!(
            start.elapsed() < DEADLINE,
            "timed out waiting until {what}; notices: {:?}",
            harness.state().notices()
        );
        std::thread::sleep(Duration::from_millis(5));
    }
}

fn screenshot_error(app: &HeatlabApp) -> Option<Result<(), String>> {
    app.screenshot_result().lock().unwrap().clone()
}

#[test]
fn a_recorded_run_of_another_kernel_is_named_in_the_tab_asked_for_and_the_shot_is_taken() {
    let dir = tempfile::tempdir().unwrap();
    let recorded = dir.path().join("pi_1M.json");
    std::fs::write(&recorded, RECORDED_PI_1M).unwrap();
    let shot = dir.path().join("shot.png");
    let mut harness = harness(AppOptions {
        settings: Some(small_settings(dir.path())),
        screenshot: Some(ScreenshotPlan::new(shot, 5)),
        recorded_runs: vec![recorded.clone()],
        tab: Some(Tab::Gaussian),
        ..AppOptions::default()
    });
    // The screenshot is asked for once the tab is ready (kittest has no renderer to deliver
    // it): before the fix the Gaussian tab waited for a run that never came.
    step_until(&mut harness, "the screenshot is requested", |app, _| {
        app.screenshot_past_waiting()
    });
    let app = harness.state();
    assert!(app.tutorial().demo_done(TutorialKernel::Gaussian));
    assert_eq!(screenshot_error(app), None, "nothing failed");
    assert_eq!(app.settings().tab, Tab::Gaussian);
    let notice = app
        .tutorial()
        .panel(TutorialKernel::Gaussian)
        .notice
        .clone()
        .expect("the Gaussian tab says where the recorded run is");
    assert_eq!(
        notice.text,
        format!(
            "the recorded run {} is of Monte Carlo pi, shown in its tab",
            recorded.display()
        )
    );
    // The run itself is in its own tab, with its result recomputed here.
    let pi = app.tutorial().panel(TutorialKernel::MonteCarloPi);
    let outcome = pi.outcome.as_ref().expect("the pi tab shows the run");
    assert_eq!(outcome.recorded.as_deref(), Some(recorded.as_path()));
    assert!(app
        .tutorial()
        .panel(TutorialKernel::Gaussian)
        .outcome
        .is_none());
    // And the notice is on screen.
    harness.get_by_label(&notice.text);
}

#[test]
fn without_a_tab_recorded_runs_open_on_their_own_tab() {
    let dir = tempfile::tempdir().unwrap();
    let recorded = dir.path().join("pi_1M.json");
    std::fs::write(&recorded, RECORDED_PI_1M).unwrap();
    let mut harness = harness(AppOptions {
        settings: Some(small_settings(dir.path())),
        recorded_runs: vec![recorded],
        ..AppOptions::default()
    });
    harness.step();
    assert_eq!(harness.state().settings().tab, Tab::MonteCarloPi);
    assert!(harness
        .state()
        .tutorial()
        .panel(TutorialKernel::MonteCarloPi)
        .notice
        .is_none());
}

#[test]
fn an_unreadable_recorded_run_is_a_notice_in_the_tab_shown() {
    let dir = tempfile::tempdir().unwrap();
    let missing = dir.path().join("missing.json");
    let mut harness = harness(AppOptions {
        settings: Some(small_settings(dir.path())),
        recorded_runs: vec![missing.clone()],
        tab: Some(Tab::HiddenLayer),
        ..AppOptions::default()
    });
    harness.run_steps(2);
    let notice = harness
        .state()
        .tutorial()
        .panel(TutorialKernel::HiddenLayer)
        .notice
        .clone()
        .expect("a notice in the tab shown");
    assert_eq!(notice.level, heatlab::ui::Level::Error);
    assert!(
        notice
            .text
            .starts_with(&format!("cannot read {}", missing.display())),
        "{}",
        notice.text
    );
    harness.get_by_label(&notice.text);
}

#[test]
fn an_unreadable_recorded_run_ends_the_screenshot_mode_with_its_reason() {
    // `heatlab gui` refuses the file before opening a window; the app refuses it too.
    let dir = tempfile::tempdir().unwrap();
    let bad = dir.path().join("bad.json");
    std::fs::write(&bad, "{\"kernel\": \"mc-pi\"}").unwrap();
    let shot = dir.path().join("shot.png");
    let mut harness = harness(AppOptions {
        settings: Some(small_settings(dir.path())),
        screenshot: Some(ScreenshotPlan::new(shot.clone(), 5)),
        recorded_runs: vec![bad.clone()],
        tab: Some(Tab::MonteCarloPi),
        ..AppOptions::default()
    });
    harness.step();
    let Some(Err(error)) = screenshot_error(harness.state()) else {
        panic!("the screenshot failed");
    };
    assert!(
        error.contains(&format!(
            "{} is not a run of `heatlab kernel --json`",
            bad.display()
        )),
        "{error}"
    );
    assert!(!shot.exists());
}

#[test]
fn a_screenshot_of_a_field_that_cannot_be_generated_fails_at_once_with_the_reason() {
    // The largest field there is: its generation needs about 150 GiB of host memory, refused
    // before anything is allocated. The shot must not wait out its time limit for a field
    // that will never come.
    let dir = tempfile::tempdir().unwrap();
    let shot = dir.path().join("shot.png");
    let mut settings = small_settings(dir.path());
    settings.field.size = GridSize::new(MAX_SIDE, MAX_SIDE).unwrap();
    let mut plan = ScreenshotPlan::new(shot.clone(), 5);
    plan.timeout = Duration::from_secs(3600);
    let mut harness = harness(AppOptions {
        settings: Some(settings),
        autoplay: true,
        screenshot: Some(plan),
        ..AppOptions::default()
    });
    step_until(
        &mut harness,
        "the window is asked to close",
        |_, commands| asks_to_close(commands),
    );
    let Some(Err(error)) = screenshot_error(harness.state()) else {
        panic!("the screenshot failed");
    };
    assert!(
        error.starts_with("no screenshot: cannot generate the field: ") && error.contains("MiB"),
        "{error}"
    );
    // The reason is shown in the window too, once.
    let shown = harness.state().notices();
    assert_eq!(
        shown
            .iter()
            .filter(|notice| notice.text.contains("cannot generate the field"))
            .count(),
        1,
        "{shown:?}"
    );
    assert!(!shot.exists());
}

#[test]
fn a_screenshot_that_cannot_be_taken_in_time_gives_up_and_closes_the_window() {
    let dir = tempfile::tempdir().unwrap();
    let shot = dir.path().join("shot.png");
    let mut plan = ScreenshotPlan::new(shot.clone(), u64::MAX);
    plan.timeout = Duration::from_millis(500);
    let started = Instant::now();
    let mut harness = harness(AppOptions {
        settings: Some(small_settings(dir.path())),
        autoplay: true,
        screenshot: Some(plan),
        ..AppOptions::default()
    });
    step_until(
        &mut harness,
        "the window is asked to close",
        |_, commands| asks_to_close(commands),
    );
    assert!(started.elapsed() >= Duration::from_millis(500));
    let Some(Err(error)) = screenshot_error(harness.state()) else {
        panic!("the screenshot failed");
    };
    assert!(
        error.starts_with(
            "no screenshot after 0.5 s: still waiting for 18446744073709551615 simulation frames ("
        ),
        "{error}"
    );
    assert!(error.contains("--timeout SECONDS"), "{error}");
    assert!(!shot.exists());
}

#[test]
fn a_stop_request_closes_the_window_and_the_settings_are_saved() {
    use eframe::App as _;
    let dir = tempfile::tempdir().unwrap();
    let stop = StopRequest::new();
    let mut settings = small_settings(dir.path());
    settings.step_n = 555;
    let mut harness = harness(AppOptions {
        settings: Some(settings),
        persist: true,
        autoplay: true,
        stop: stop.clone(),
        ..AppOptions::default()
    });
    step_until(&mut harness, "the simulation plays", |app, _| {
        app.is_playing() && app.frames_shown() > 2
    });
    assert!(!asks_to_close(&commands(&harness)));
    assert!(!harness.state().is_closing());
    // What the signal thread does on SIGTERM.
    stop.request(SIGTERM);
    harness.step();
    assert!(asks_to_close(&commands(&harness)));
    assert!(harness.state().is_closing());
    // Once only.
    harness.step();
    assert!(!asks_to_close(&commands(&harness)));
    // eframe then saves (as here) and drops the app, which stops and joins its threads.
    let mut storage = MemoryStorage::default();
    harness.state_mut().save(&mut storage);
    let saved: Settings = eframe::get_value(&storage, heatlab::ui::settings::STORAGE_KEY).unwrap();
    assert_eq!(saved.step_n, 555);
    let dropping = Instant::now();
    drop(harness);
    assert!(
        dropping.elapsed() < Duration::from_secs(30),
        "the worker threads stop when the app is dropped"
    );
}

// ----- The real binary, no window needed. -----

#[test]
fn the_screenshot_mode_refuses_an_unreadable_recorded_run_before_opening_a_window() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("bad.json"), "not json at all").unwrap();
    for (file, reason) in [
        ("missing.json", "cannot read missing.json: "),
        (
            "bad.json",
            "bad.json is not a run of `heatlab kernel --json`: ",
        ),
    ] {
        let out = heatlab(
            dir.path(),
            &[
                "gui",
                "--tab",
                "gaussian",
                "--tutorial-run",
                file,
                "--screenshot",
                "x.png",
                "--frames",
                "5",
            ],
        );
        let stderr = stderr_of(&out);
        assert_eq!(out.status.code(), Some(1), "{stderr}");
        assert!(
            stderr.starts_with(&format!("heatlab: error: {reason}")),
            "the reason, whether or not there is a display: {stderr}"
        );
        assert_eq!(stderr.lines().count(), 1, "{stderr}");
        assert!(!dir.path().join("x.png").exists());
    }
}

#[test]
fn a_time_limit_must_be_a_positive_number_of_seconds_with_a_screenshot() {
    let dir = tempfile::tempdir().unwrap();
    for args in [
        &["gui", "--screenshot", "x.png", "--timeout", "0"][..],
        &["gui", "--screenshot", "x.png", "--timeout=-3"],
        &["gui", "--screenshot", "x.png", "--timeout", "soon"],
        &["gui", "--timeout", "10"],
    ] {
        let out = heatlab(dir.path(), args);
        let stderr = stderr_of(&out);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {stderr}");
        assert!(stderr.contains("--timeout"), "{args:?}: {stderr}");
        assert!(!stderr.contains("panicked"), "{stderr}");
    }
    let help = heatlab(dir.path(), &["gui", "--help"]);
    let text = String::from_utf8_lossy(&help.stdout);
    assert!(
        text.contains("--timeout <SECONDS>")
            && text.contains("[default: 120]")
            && text.contains("exits with status 143 (SIGTERM)"),
        "{text}"
    );
}

// ----- The real binary in a real window, under a private Xvfb. -----

/// An X server of our own, stopped when dropped.
struct VirtualDisplay {
    server: Child,
    name: String,
}

impl VirtualDisplay {
    /// Starts `Xvfb` on a free display, or says why it cannot. The tests of one process start
    /// their servers one at a time: two threads that both found a display free could otherwise
    /// both take it (the second's server exits, the first's socket appears), and when the first
    /// test ended and stopped its server, the second test's window lost its X connection.
    fn start() -> Result<Self, String> {
        static STARTING: std::sync::Mutex<()> = std::sync::Mutex::new(());
        let _one_at_a_time = STARTING
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        let first = 100 + std::process::id() % 400;
        for number in first..first + 40 {
            let socket = PathBuf::from(format!("/tmp/.X11-unix/X{number}"));
            if Path::new(&format!("/tmp/.X{number}-lock")).exists() || socket.exists() {
                continue;
            }
            let mut server = match Command::new("Xvfb")
                .args([
                    format!(":{number}").as_str(),
                    "-screen",
                    "0",
                    "1600x1000x24",
                    "-nolisten",
                    "tcp",
                ])
                .stdin(Stdio::null())
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .spawn()
            {
                Ok(server) => server,
                Err(error) => return Err(format!("Xvfb cannot be started here ({error})")),
            };
            let start = Instant::now();
            while start.elapsed() < Duration::from_secs(10) {
                // The socket is ours only while our server runs (another process may have
                // taken the display meanwhile).
                if socket.exists() && server.try_wait().unwrap().is_none() {
                    return Ok(Self {
                        server,
                        name: format!(":{number}"),
                    });
                }
                if server.try_wait().unwrap().is_some() {
                    break; // taken meanwhile: try the next one
                }
                std::thread::sleep(Duration::from_millis(50));
            }
            if server.try_wait().unwrap().is_none() {
                let _ = server.kill();
                let _ = server.wait();
                return Err("Xvfb did not open its display within 10 s".into());
            }
        }
        Err("no free display for Xvfb".into())
    }

    /// `heatlab ARGS` in this display, with its own home (so no remembered settings).
    fn command(&self, dir: &Path, args: &[&str]) -> Command {
        let mut command = Command::new(binary());
        command
            .current_dir(dir)
            .args(args)
            .env("DISPLAY", &self.name)
            .env_remove("WAYLAND_DISPLAY")
            .env("HOME", dir)
            .env("XDG_DATA_HOME", dir.join("data"))
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped());
        command
    }
}

impl Drop for VirtualDisplay {
    fn drop(&mut self) {
        let _ = self.server.kill();
        let _ = self.server.wait();
    }
}

/// The display, or `None` after saying why the test is skipped.
fn virtual_display(test: &str) -> Option<VirtualDisplay> {
    match VirtualDisplay::start() {
        Ok(display) => Some(display),
        Err(why) => {
            common::skipped(test, &format!("{why}; it needs a real window"));
            None
        }
    }
}

/// Waits for `child` at most `limit`; kills it and fails if it is still running then.
fn wait_with_limit(mut child: Child, limit: Duration, what: &str) -> Output {
    let start = Instant::now();
    while child.try_wait().unwrap().is_none() {
        if start.elapsed() > limit {
            let _ = child.kill();
            let output = child.wait_with_output().unwrap();
            panic!(
                "{what}: still running after {limit:?}; stderr: {}",
                stderr_of(&output)
            );
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    child.wait_with_output().unwrap()
}

#[test]
fn in_a_window_a_recorded_run_of_another_kernel_gives_a_shot_of_the_tab_asked_for() {
    let Some(display) = virtual_display(test_name!()) else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("mcpi.json"), RECORDED_PI_1M).unwrap();
    let child = display
        .command(
            dir.path(),
            &[
                "gui",
                "--tab",
                "gaussian",
                "--tutorial-run",
                "mcpi.json",
                "--screenshot",
                "x.png",
                "--frames",
                "5",
                "--timeout",
                "100",
            ],
        )
        .spawn()
        .unwrap();
    let out = wait_with_limit(child, Duration::from_secs(130), "the screenshot");
    let stderr = stderr_of(&out);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    assert!(stderr.contains("saved a screenshot to x.png"), "{stderr}");
    let png = image::open(dir.path().join("x.png")).unwrap();
    assert!(png.width() > 100 && png.height() > 100);
}

#[test]
fn in_a_window_the_time_limit_ends_a_screenshot_with_status_1_and_no_file() {
    let Some(display) = virtual_display(test_name!()) else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let started = Instant::now();
    let child = display
        .command(
            dir.path(),
            &[
                "gui",
                "--size",
                "64",
                "--screenshot",
                "x.png",
                "--frames",
                "100000000",
                "--timeout",
                "3",
            ],
        )
        .spawn()
        .unwrap();
    let out = wait_with_limit(child, Duration::from_secs(60), "the time limit");
    let stderr = stderr_of(&out);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(started.elapsed() >= Duration::from_secs(3));
    assert!(
        stderr.contains(
            "heatlab: error: no screenshot after 3 s: still waiting for 100000000 simulation frames"
        ),
        "{stderr}"
    );
    assert!(!dir.path().join("x.png").exists());
    let left: Vec<_> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .filter(|name| name.to_string_lossy().contains("png"))
        .collect();
    assert!(left.is_empty(), "no partial file: {left:?}");
}

#[test]
fn in_a_window_sigterm_saves_the_settings_and_exits_143() {
    let Some(display) = virtual_display(test_name!()) else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let child = display
        .command(dir.path(), &["gui", "--size", "256"])
        .spawn()
        .unwrap();
    // Let the window open and the field appear; the app is idle or playing, either way the
    // signal must wake it.
    std::thread::sleep(Duration::from_secs(4));
    let pid = libc::pid_t::try_from(child.id()).unwrap();
    // SAFETY: kill(2) with a child's pid and a plain signal number has no memory effects.
    assert_eq!(unsafe { libc::kill(pid, libc::SIGTERM) }, 0);
    let out = wait_with_limit(child, Duration::from_secs(30), "the app after SIGTERM");
    let stderr = stderr_of(&out);
    assert_eq!(out.status.code(), Some(143), "{stderr}");
    assert!(stderr.contains("SIGTERM: closing the window"), "{stderr}");
    let app_ron = dir.path().join("data").join("heatlab").join("app.ron");
    let saved = std::fs::read_to_string(&app_ron)
        .unwrap_or_else(|e| panic!("{}: {e}; stderr: {stderr}", app_ron.display()));
    assert!(saved.contains("heatlab-settings"), "{saved}");
}
/// What a new user trips on: the coefficient, the layout, probes, backends, presets, the file
/// dialog, small windows, help.
mod trips;
