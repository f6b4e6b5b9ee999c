//! `heatlab gui`: the desktop app, and its screenshot mode.
//!
//! SIGTERM, and SIGINT when started from a terminal, close the window as its close button
//! does (settings saved, worker threads stopped and joined); the command then exits with the
//! signal's status, 143 or 130, as the headless commands do. A second signal exits at once.

use std::io::IsTerminal;
use std::path::PathBuf;
use std::time::Duration;

use signal_hook::consts::{SIGINT, SIGTERM};
use signal_hook::iterator::Signals;

use crate::settings::Overrides;
use crate::ui::screenshot::DEFAULT_TIMEOUT;
use crate::ui::{AppOptions, ScreenshotPlan, Settings, StopRequest};
use heatlab_engine::compute::{BackendChoice, KernelChoice};
use heatlab_engine::grid::GridSize;
use heatlab_engine::render::Colormap;

use super::interrupt::{Interrupted, StopSignal};
use super::output;

/// Arguments of `heatlab gui`.
#[derive(Debug, Clone, Default, clap::Args)]
#[command(
    after_help = "SIGTERM, and Ctrl-C (SIGINT) when started from a terminal, close the \
window as its close button does: the settings are saved, the worker threads stop, and heatlab \
exits with status 143 (SIGTERM) or 130 (SIGINT). A second signal stops at once."
)]
pub struct GuiArgs {
    /// A file to open once the first field is ready: a scenario (`.toml`), a saved state, a
    /// `.npy` array or an image, as dropping it on the window opens it.
    #[arg(value_name = "FILE", conflicts_with = "gallery")]
    pub file: Option<PathBuf>,
    /// Open, run the given number of frames, save a screenshot of the window to FILE and exit.
    #[arg(long, value_name = "FILE")]
    pub screenshot: Option<PathBuf>,
    /// Simulation frames to show before the screenshot.
    #[arg(long, default_value_t = 60)]
    pub frames: u64,
    /// With --screenshot: the longest it may take, in seconds, from the start to the saved
    /// file. When time runs out, heatlab says what it was still waiting for, writes no file
    /// and exits with status 1. [default: 120]
    #[arg(long, value_name = "SECONDS", requires = "screenshot", value_parser = parse_timeout)]
    pub timeout: Option<Duration>,
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
    /// Tab to open: diffusion, kernel-lab, gpu-basics, hidden-layer, gaussian or mc-pi. With
    /// --screenshot, a tutorial tab runs its kernel and a size sweep before the shot, and the GPU
    /// basics tab runs every lesson.
    #[arg(long)]
    pub tab: Option<crate::ui::tutorial::Tab>,
    /// A tutorial run recorded with `heatlab kernel ... --json` (e.g. on a GPU machine) to show
    /// in its panel; may be given several times. Without --tab the app opens on the first one's
    /// tab; a tab given whose kernel has no recorded run says where the runs are. With
    /// --screenshot, the shot shows it instead of a run on this machine, and a file that cannot
    /// be read is refused (status 1).
    #[arg(long, value_name = "FILE")]
    pub tutorial_run: Vec<PathBuf>,
    /// Window size in points, WIDTHxHEIGHT.
    #[arg(long, value_name = "WxH")]
    pub window: Option<GridSize>,
    /// Start with the live check against the CPU reference on (the toggle under the backend).
    #[arg(long)]
    pub check_against_cpu: bool,
    /// Once the field is ready, paint two strokes, place four probes and draw a line profile,
    /// sending the same commands that dragging and clicking send (for screenshots of the brush
    /// and the probes).
    #[arg(long)]
    pub paint_demo: bool,
    /// Once the field is ready, paint a problem of several materials (a heat sink under a
    /// held chip, a window of water, a strip of foam) with the Material tool's shapes, sending
    /// the same commands that the palette and dragging send, outlines on.
    #[arg(long)]
    pub material_demo: bool,
    /// Start with the isotherms and the heat-flux arrows drawn over the field.
    #[arg(long)]
    pub overlays: bool,
    /// Open this gallery problem once the first field is ready (`heatlab scenario list` names
    /// them).
    #[arg(long, value_name = "NAME")]
    pub gallery: Option<String>,
    /// With --gallery: then show the Gallery menu open over the problem (for a screenshot of
    /// the menu).
    #[arg(long, requires = "gallery")]
    pub gallery_menu: bool,
    /// The GPU kernel to start with (auto, tutorial, shared, ...; `heatlab run --help` lists
    /// them; `user` needs the Kernel lab and is refused here).
    #[arg(long)]
    pub kernel: Option<KernelChoice>,
}

/// Copies of the field the app holds at the least (the current field and the initial one,
/// which Reset goes back to).
const SCREENSHOT_FIELD_COPIES: usize = 2;

/// Runs `heatlab gui` (also what `heatlab` with no subcommand does).
pub fn run(args: &GuiArgs) -> anyhow::Result<()> {
    let screenshot = args.screenshot.clone().map(|path| ScreenshotPlan {
        path,
        frames: args.frames,
        timeout: args.timeout.unwrap_or(DEFAULT_TIMEOUT),
    });
    if screenshot.is_some() {
        // A screenshot of something else than what was asked for is worse than none.
        for path in &args.tutorial_run {
            crate::ui::tutorial::read_recorded_run(path).map_err(anyhow::Error::msg)?;
        }
        if let Some(size) = args.size {
            // A field that cannot be made fails the shot now, not at its time limit.
            heatlab_engine::memory::ensure_host_memory(
                &format!("the {size} field of the screenshot (its current and initial copies)"),
                SCREENSHOT_FIELD_COPIES.saturating_mul(size.bytes()),
            )?;
        }
    }
    if let Some(path) = &args.file {
        // A file that is not there is refused now, in one line; what it holds is read (and
        // any error in it shown) by the app, as for a dropped file.
        let metadata = std::fs::metadata(path)
            .map_err(|error| anyhow::anyhow!("cannot open {}: {error}", path.display()))?;
        if metadata.is_dir() {
            anyhow::bail!(
                "cannot open {}: it is a folder; give a scenario (.toml), a saved state, a .npy \
                 array or an image",
                path.display()
            );
        }
    }
    if let Some(name) = &args.gallery {
        crate::ui::gallery::GalleryStart::new(Some(name), false).map_err(anyhow::Error::msg)?;
    }
    if args.kernel == Some(KernelChoice::User) {
        anyhow::bail!(
            "--kernel user: a user kernel must be compiled and validated in the Kernel lab first"
        );
    }
    let overrides = Overrides {
        kernel: args.kernel,
        size: args.size,
        backend: args.backend,
        colormap: args.colormap,
        laplacian_colormap: args.laplacian_colormap,
        steps_per_frame: args.steps_per_frame,
        agreement_check: args.check_against_cpu.then_some(true),
    };
    // A screenshot is reproducible: it starts from the defaults, never from remembered settings.
    let settings = screenshot.is_some().then(Settings::default);
    let stop = StopRequest::new();
    watch_signals(&stop)?;
    let options = AppOptions {
        settings,
        overrides,
        persist: screenshot.is_none(),
        autoplay: screenshot.is_some(),
        screenshot,
        recorded_runs: args.tutorial_run.clone(),
        tab: args.tab,
        stop: stop.clone(),
        paint_demo: args.paint_demo,
        material_demo: args.material_demo,
        overlays: args.overlays,
        gallery: args.gallery.clone(),
        gallery_menu: args.gallery_menu,
        open: args.file.clone(),
    };
    // WIDTHxHEIGHT parses like ROWSxCOLS: the first number is the width.
    let window = args.window.map(|w| [w.rows as f32, w.cols as f32]);
    let result = crate::ui::run_gui(options, window);
    // The window closed because of a signal: say so with its status, whatever else happened.
    match stop.requested().and_then(stop_signal) {
        Some(signal) => Err(Interrupted(signal).into()),
        None => result,
    }
}

/// `--timeout SECONDS`: a positive, finite number of seconds.
fn parse_timeout(text: &str) -> Result<Duration, String> {
    let seconds: f64 = text
        .trim()
        .parse()
        .map_err(|_| format!("'{text}' is not a number of seconds"))?;
    if seconds.is_nan() || seconds <= 0.0 {
        return Err(format!(
            "the time limit must be above 0 seconds, not {text}"
        ));
    }
    Duration::try_from_secs_f64(seconds).map_err(|_| format!("{text} seconds is too long"))
}

fn stop_signal(number: i32) -> Option<StopSignal> {
    match number {
        SIGINT => Some(StopSignal::Interrupt),
        SIGTERM => Some(StopSignal::Terminate),
        _ => None,
    }
}

/// Turns SIGTERM (and SIGINT when started from a terminal, where Ctrl-C sends it) into a
/// request to close the app; a second signal ends the process at once, with its status, after
/// removing the temporary files of writes in progress. Elsewhere SIGINT keeps its disposition
/// (a background job started by a script ignores it, and should go on doing so).
fn watch_signals(stop: &StopRequest) -> anyhow::Result<()> {
    let from_terminal = std::io::stdin().is_terminal() || std::io::stderr().is_terminal();
    let watched: &[i32] = if from_terminal {
        &[SIGTERM, SIGINT]
    } else {
        &[SIGTERM]
    };
    let mut signals = Signals::new(watched)?;
    let stop = stop.clone();
    std::thread::Builder::new()
        .name("heatlab-gui-signals".into())
        .spawn(move || {
            for number in signals.forever() {
                let Some(signal) = stop_signal(number) else {
                    continue;
                };
                if stop.requested().is_some() {
                    super::interrupt::stop_now(signal, "again");
                }
                output::note(&format!(
                    "{signal}: closing the window, saving the settings (send it again to \
                     stop at once)"
                ));
                stop.request(number);
            }
        })?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_time_limit_is_a_positive_number_of_seconds() {
        assert_eq!(parse_timeout("2.5"), Ok(Duration::from_millis(2500)));
        assert_eq!(parse_timeout(" 120 "), Ok(Duration::from_secs(120)));
        for bad in ["0", "-1", "nan", "inf", "soon", "1e400"] {
            assert!(parse_timeout(bad).is_err(), "{bad} was accepted");
        }
    }
}
