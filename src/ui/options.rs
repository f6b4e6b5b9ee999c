//! How the app starts: the options `heatlab gui` and the tests give it.

use std::path::PathBuf;

use super::screenshot::ScreenshotPlan;
use super::settings::{Overrides, Settings};
use super::shutdown::StopRequest;
use super::tutorial::Tab;

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
}
