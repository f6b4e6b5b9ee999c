//! The app driven through egui_kittest, as the GUI tests share it: the one way to build it, a
//! harness that has shown its first field, and waiting for a condition with a deadline.

use std::time::{Duration, Instant};

use eframe::egui::Vec2;
use egui_kittest::{Harness, HarnessBuilder};
use heatlab::ui::diffusion::DiffusionCommand;
use heatlab::ui::{AppOptions, HeatlabApp, Settings};

/// The longest a GUI test waits for anything. Generous: a debug build on a busy 2-core machine
/// is slow, and a pass takes milliseconds.
pub const DEADLINE: Duration = Duration::from_secs(120);

/// The app with `options` in a `size` window, built as every GUI test builds it.
pub fn build_app(options: AppOptions, size: Vec2) -> Harness<'static, HeatlabApp> {
    build_app_with(Harness::builder(), options, size)
}

/// [`build_app`] from `builder`: `Harness::builder()` with a renderer (a test that looks at
/// pixels) or another scale.
pub fn build_app_with(
    builder: HarnessBuilder<HeatlabApp>,
    options: AppOptions,
    size: Vec2,
) -> Harness<'static, HeatlabApp> {
    builder
        .with_size(size)
        .build_eframe(move |cc| HeatlabApp::new(cc, options))
}

/// The app in a `size` window with `settings`, not remembered and not playing, once its first
/// field is generated and shown.
pub fn app_harness(settings: Settings, size: Vec2) -> Harness<'static, HeatlabApp> {
    app_harness_with(Harness::builder(), settings, size)
}

/// [`app_harness`] from `builder` (frames of another length, for a double-click).
pub fn app_harness_with(
    builder: HarnessBuilder<HeatlabApp>,
    settings: Settings,
    size: Vec2,
) -> Harness<'static, HeatlabApp> {
    let mut harness = build_app_with(
        builder,
        AppOptions {
            settings: Some(settings),
            persist: false,
            autoplay: false,
            ..AppOptions::default()
        },
        size,
    );
    wait_until(
        &mut harness,
        "the field is generated and shown",
        HeatlabApp::is_ready,
    );
    harness
}

/// Runs frames until `done` holds, or fails after [`DEADLINE`] naming `what` and the notices.
pub fn wait_until(
    harness: &mut Harness<'_, HeatlabApp>,
    what: &str,
    done: impl Fn(&HeatlabApp) -> bool,
) {
    wait_until_mut(harness, what, |app| done(app));
}

/// [`wait_until`] for a condition that needs the app mutably (the lab's editor, for one).
pub fn wait_until_mut(
    harness: &mut Harness<'_, HeatlabApp>,
    what: &str,
    mut done: impl FnMut(&mut HeatlabApp) -> bool,
) {
    let start = Instant::now();
    loop {
        harness.step();
        if done(harness.state_mut()) {
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

/// Gives the diffusion tab `command` as its panel would, with the `settings` the panel holds.
pub fn apply(
    harness: &mut Harness<'_, HeatlabApp>,
    settings: &mut Settings,
    command: DiffusionCommand,
) {
    harness.state_mut().diffusion_mut().apply(command, settings);
}

/// Whether the app shows a notice containing `text`.
pub fn has_notice(app: &HeatlabApp, text: &str) -> bool {
    app.notices().iter().any(|n| n.text.contains(text))
}

/// Drags the DragValue labelled `label` as a hand would: presses at its centre, moves the
/// pointer `pixels_per_frame` to the right (negative: left) once per frame for `frames` frames,
/// and releases. Returns the time the drag took.
pub fn drag_value(
    harness: &mut Harness<'_, HeatlabApp>,
    label: &str,
    pixels_per_frame: f32,
    frames: usize,
) -> Duration {
    use egui_kittest::kittest::Queryable;
    let centre = harness
        .get_by_role_and_label(eframe::egui::accesskit::Role::SpinButton, label)
        .rect()
        .center();
    let started = Instant::now();
    harness.hover_at(centre);
    harness.step();
    harness.drag_at(centre);
    harness.step();
    for frame in 1..=frames {
        harness.hover_at(centre + Vec2::new(pixels_per_frame * frame as f32, 0.0));
        harness.step();
        // A person's drag moves once per displayed frame (60 a second): the live regeneration
        // it drives is timed against that pace, not against a test's fastest loop.
        std::thread::sleep(Duration::from_millis(16));
    }
    harness.drop_at(centre + Vec2::new(pixels_per_frame * frames as f32, 0.0));
    harness.step();
    started.elapsed()
}
