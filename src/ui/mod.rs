//! The desktop app (eframe/egui). Each tab is a panel ([`diffusion`], [`tutorial`]) whose slow
//! work runs on a [`heatlab_engine::session`] thread; the panels emit commands that the [`app`] applies, and draw
//! what their threads send back. Nothing here computes the physics.

pub mod app;
pub mod basics;
pub mod diffusion;
pub mod folder;
pub mod gallery;
pub mod help;
pub mod lab;
pub mod notice;
pub mod screenshot;
pub mod shutdown;
pub mod tutorial;

/// What the app remembers lives in the library ([`crate::settings`]), below the app; its old
/// place here still names it.
pub use crate::settings;
pub use crate::settings::Settings;
use crate::settings::{Overrides, Tab};
pub use app::{Command, HeatlabApp, ScreenshotPlan};
pub use notice::{Level, Notice};
pub use shutdown::StopRequest;

use std::path::PathBuf;
use std::sync::{mpsc, Arc, Mutex, PoisonError};
use std::time::Duration;

use eframe::egui;

/// How the app starts.
#[derive(Debug, Clone, Default)]
pub struct AppOptions {
    /// Settings to start with instead of the remembered ones (tests, screenshots).
    pub settings: Option<Settings>,
    /// Values for this session only, applied over the settings it starts with.
    pub overrides: Overrides,
    /// Whether settings are loaded from and saved to eframe's storage.
    pub persist: bool,
    /// Start playing as soon as the field is ready.
    pub autoplay: bool,
    /// Take a screenshot and quit.
    pub screenshot: Option<ScreenshotPlan>,
    /// Tutorial runs recorded with `heatlab kernel --json` to show in their panels.
    pub recorded_runs: Vec<PathBuf>,
    /// The tab to open on instead of the remembered one (without it, recorded runs open on
    /// the tab of the first one).
    pub tab: Option<Tab>,
    /// Set from outside (a signal) to close the app as its close button would.
    pub stop: StopRequest,
    /// Paint demo strokes, probes and a line profile once the field is ready (screenshots).
    pub paint_demo: bool,
    /// Paint a demo problem of several materials once the field is ready (screenshots).
    pub material_demo: bool,
    /// Start with the isotherms and heat-flux arrows on (screenshots).
    pub overlays: bool,
    /// Open this gallery problem once the first field is ready.
    pub gallery: Option<String>,
    /// Then show the Gallery menu open over it (screenshots).
    pub gallery_menu: bool,
    /// Open this file (a scenario, a state, an array or an image) once the first field is
    /// ready, as a dropped file.
    pub open: Option<PathBuf>,
}

/// The window's title and the name under which settings are stored.
pub const APP_ID: &str = "heatlab";

/// Why there is no display to open a window on, or `None` when there seems to be one.
pub fn missing_display() -> Option<&'static str> {
    if cfg!(target_os = "linux") || cfg!(target_os = "freebsd") {
        let set = |name: &str| std::env::var_os(name).is_some_and(|v| !v.is_empty());
        if !set("DISPLAY") && !set("WAYLAND_DISPLAY") {
            return Some("no display (neither DISPLAY nor WAYLAND_DISPLAY is set)");
        }
    }
    None
}

/// Writes `heatlab: <text>` and a newline to standard error, for the terminal the app was
/// started from, control characters shown as escapes; errors are ignored (there is no other
/// place to report them).
fn note(text: &str) {
    use std::io::Write as _;
    let text = heatlab_engine::error::for_terminal(text);
    let _ = writeln!(std::io::stderr().lock(), "heatlab: {text}");
}

/// How long after a screenshot's time limit the window may take to close before the process
/// stops without it (a window whose frames stopped coming cannot close itself).
const SCREENSHOT_GRACE: Duration = Duration::from_secs(15);

/// Opens the app and returns when its window closes. With a screenshot plan, the result says
/// whether the screenshot was written; the process never outlives the plan's time limit by
/// more than [`SCREENSHOT_GRACE`].
pub fn run_gui(options: AppOptions, window_size: Option<[f32; 2]>) -> anyhow::Result<()> {
    if let Some(reason) = missing_display() {
        anyhow::bail!(
            "{reason}: the desktop app needs one; for headless work see `heatlab run --help`"
        );
    }
    let screenshot = options.screenshot.is_some();
    // Dropped when this function returns, which ends the watchdog.
    let _window_closed = options
        .screenshot
        .as_ref()
        .map(|plan| screenshot_watchdog(plan.timeout))
        .transpose()?;
    let scratch_storage =
        std::env::temp_dir().join(format!("heatlab-screenshot-{}.ron", std::process::id()));
    let viewport = egui::ViewportBuilder::default()
        .with_title("heatlab: heat diffusion on GPU and CPU")
        .with_app_id(APP_ID)
        .with_inner_size(window_size.unwrap_or([1440.0, 900.0]))
        .with_min_inner_size([900.0, 600.0]);
    let native = eframe::NativeOptions {
        viewport,
        // A screenshot run must not move or resize the user's remembered window.
        persist_window: !screenshot,
        // A screenshot starts from a clean slate (no remembered panel sizes) and leaves none.
        persistence_path: screenshot.then(|| scratch_storage.clone()),
        ..Default::default()
    };
    let result_slot = Arc::new(Mutex::new(None::<screenshot::ScreenshotResult>));
    let slot = Arc::clone(&result_slot);
    let result = eframe::run_native(
        APP_ID,
        native,
        Box::new(move |cc| {
            let app = HeatlabApp::new(cc, options);
            *slot.lock().unwrap_or_else(PoisonError::into_inner) = Some(app.screenshot_result());
            Ok(Box::new(app))
        }),
    )
    .map_err(|error| {
        anyhow::anyhow!(
            "cannot open the window: {error}; for headless work see `heatlab run --help`"
        )
    });
    if screenshot {
        // Only our own scratch file; it may not exist.
        if let Err(error) = std::fs::remove_file(&scratch_storage) {
            log::debug!("no scratch settings to remove: {error}");
        }
    }
    result?;
    if screenshot {
        let written = result_slot
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .as_ref()
            .and_then(|inner| inner.lock().unwrap_or_else(PoisonError::into_inner).clone());
        match written {
            Some(Ok(())) => {}
            Some(Err(error)) => anyhow::bail!("{error}"),
            None => anyhow::bail!("the window closed before the screenshot was taken"),
        }
    }
    Ok(())
}

/// Starts a thread that ends the process (status 1, no screenshot) unless the returned sender
/// is dropped within `timeout` and [`SCREENSHOT_GRACE`]: the last resort when the window cannot
/// close itself (its frames stopped coming).
fn screenshot_watchdog(timeout: Duration) -> anyhow::Result<mpsc::Sender<()>> {
    let (closed, watch) = mpsc::channel::<()>();
    std::thread::Builder::new()
        .name("heatlab-screenshot-watchdog".into())
        .spawn(move || {
            let limit = timeout + SCREENSHOT_GRACE;
            if let Err(mpsc::RecvTimeoutError::Timeout) = watch.recv_timeout(limit) {
                let removed = heatlab_engine::export::atomic::remove_live_temp_files();
                note(&format!(
                    "error: no screenshot after {} s, and the window did not close in the {} s \
                     after that; stopping ({removed} temporary files removed)",
                    timeout.as_secs_f64(),
                    SCREENSHOT_GRACE.as_secs()
                ));
                std::process::exit(1);
            }
        })?;
    Ok(closed)
}
