//! `heatlab gui`: the desktop app, and its screenshot mode.

use std::path::PathBuf;

use crate::compute::BackendChoice;
use crate::grid::GridSize;
use crate::render::Colormap;
use crate::ui::settings::Overrides;
use crate::ui::{AppOptions, ScreenshotPlan, Settings};

/// Arguments of `heatlab gui`.
#[derive(Debug, Clone, Default, clap::Args)]
pub struct GuiArgs {
    /// Open, run the given number of frames, save a screenshot of the window to FILE and exit.
    #[arg(long, value_name = "FILE")]
    pub screenshot: Option<PathBuf>,
    /// Simulation frames to show before the screenshot.
    #[arg(long, default_value_t = 60)]
    pub frames: u64,
    /// Field size to start with: N or ROWSxCOLS (default: the remembered one).
    #[arg(long)]
    pub size: Option<GridSize>,
    /// Backend to start with: auto, cpu or cuda.
    #[arg(long)]
    pub backend: Option<BackendChoice>,
    /// Colormap of the field view.
    #[arg(long)]
    pub colormap: Option<Colormap>,
    /// Colormap of the Laplacian view.
    #[arg(long)]
    pub laplacian_colormap: Option<Colormap>,
    /// Steps per displayed frame (turns the automatic choice off).
    #[arg(long)]
    pub steps_per_frame: Option<u64>,
    /// Tab to open: diffusion, hidden-layer, gaussian or mc-pi. With --screenshot, a tutorial
    /// tab runs its kernel and a size sweep before the shot.
    #[arg(long)]
    pub tab: Option<crate::ui::tutorial::Tab>,
    /// A tutorial run recorded with `heatlab kernel ... --json` (e.g. on a GPU machine) to show
    /// in its panel; may be given several times. With --screenshot, the shot shows it instead of
    /// a run on this machine.
    #[arg(long, value_name = "FILE")]
    pub tutorial_run: Vec<PathBuf>,
    /// Window size in points, WIDTHxHEIGHT.
    #[arg(long, value_name = "WxH")]
    pub window: Option<GridSize>,
}

/// Runs `heatlab gui` (also what `heatlab` with no subcommand does).
pub fn run(args: &GuiArgs) -> anyhow::Result<()> {
    let screenshot = args.screenshot.clone().map(|path| ScreenshotPlan {
        path,
        frames: args.frames,
    });
    let overrides = Overrides {
        size: args.size,
        backend: args.backend,
        colormap: args.colormap,
        laplacian_colormap: args.laplacian_colormap,
        steps_per_frame: args.steps_per_frame,
    };
    // A screenshot is reproducible: it starts from the defaults, never from remembered settings.
    let settings = screenshot.is_some().then(Settings::default);
    let options = AppOptions {
        settings,
        overrides,
        persist: screenshot.is_none(),
        autoplay: screenshot.is_some(),
        screenshot,
        recorded_runs: args.tutorial_run.clone(),
        tab: args.tab,
    };
    // WIDTHxHEIGHT parses like ROWSxCOLS: the first number is the width.
    let window = args.window.map(|w| [w.rows as f32, w.cols as f32]);
    crate::ui::run_gui(options, window)
}
