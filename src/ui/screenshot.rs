//! The screenshot mode of `heatlab gui --screenshot`: wait until the tab has something to show,
//! ask the renderer for the window's pixels, save them as a PNG and close the window.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use eframe::egui;

/// A screenshot to take after some frames, then quit.
#[derive(Debug, Clone)]
pub struct ScreenshotPlan {
    /// Where the PNG goes.
    pub path: PathBuf,
    /// Simulation frames to show first.
    pub frames: u64,
}

/// Whether the screenshot was written, once known (shared with the renderer's callback).
pub type ScreenshotResult = Arc<Mutex<Option<Result<(), String>>>>;

/// Where the screenshot mode stands.
enum Stage {
    Waiting(ScreenshotPlan),
    Requested(PathBuf, Instant),
    Done,
}

/// The screenshot mode's state machine.
pub struct Screenshot {
    stage: Stage,
    result: ScreenshotResult,
}

/// What the tab shows, for deciding when the picture is ready.
pub struct Readiness {
    /// Whether the tab has what the screenshot should show.
    pub ready: bool,
    /// Whether the tab runs timed work that the window must not slow down.
    pub timed_work: bool,
    /// What to print when the screenshot is taken.
    pub summary: String,
}

impl Screenshot {
    /// A screenshot mode following `plan`.
    pub fn new(plan: ScreenshotPlan) -> Self {
        Self {
            stage: Stage::Waiting(plan),
            result: Arc::new(Mutex::new(None)),
        }
    }

    /// Whether the screenshot was written (for the command's exit status).
    pub fn result(&self) -> ScreenshotResult {
        Arc::clone(&self.result)
    }

    /// Advances by one frame of the app; `readiness` says whether the tab is ready, given the
    /// simulation frames the plan wants shown first.
    pub fn step(&mut self, ctx: &egui::Context, readiness: impl FnOnce(u64) -> Readiness) {
        let stage = std::mem::replace(&mut self.stage, Stage::Done);
        self.stage = match stage {
            Stage::Waiting(plan) => {
                let readiness = readiness(plan.frames);
                self.wait(ctx, plan, readiness)
            }
            Stage::Requested(path, at) => self.collect(ctx, path, at),
            Stage::Done => Stage::Done,
        };
    }

    fn wait(&self, ctx: &egui::Context, plan: ScreenshotPlan, readiness: Readiness) -> Stage {
        if readiness.ready {
            let slot = Arc::clone(&self.result);
            let path = plan.path.clone();
            ctx.request_screenshot(move |image| {
                let result = save_screenshot(&path, &image).map_err(|e| e.to_string());
                *slot
                    .lock()
                    .unwrap_or_else(std::sync::PoisonError::into_inner) = Some(result);
            });
            eprintln!("heatlab: {}", readiness.summary);
            Stage::Requested(plan.path, Instant::now())
        } else if readiness.timed_work {
            // The tutorial thread asks for a repaint when it is done; meanwhile the window
            // must not take the cores from the timed runs.
            ctx.request_repaint_after(Duration::from_millis(250));
            Stage::Waiting(plan)
        } else {
            ctx.request_repaint();
            Stage::Waiting(plan)
        }
    }

    fn collect(&self, ctx: &egui::Context, path: PathBuf, at: Instant) -> Stage {
        let result = self
            .result
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .clone();
        match result {
            Some(Ok(())) => {
                eprintln!("heatlab: saved a screenshot to {}", path.display());
                ctx.send_viewport_cmd(egui::ViewportCommand::Close);
                Stage::Done
            }
            Some(Err(error)) => {
                eprintln!("heatlab: error: could not save the screenshot: {error}");
                ctx.send_viewport_cmd(egui::ViewportCommand::Close);
                Stage::Done
            }
            None if at.elapsed() > Duration::from_secs(20) => {
                eprintln!("heatlab: error: the renderer never delivered the screenshot");
                ctx.send_viewport_cmd(egui::ViewportCommand::Close);
                Stage::Done
            }
            None => {
                ctx.request_repaint_after(Duration::from_millis(16));
                Stage::Requested(path, at)
            }
        }
    }
}

fn save_screenshot(path: &Path, image: &egui::ColorImage) -> crate::Result<()> {
    let [width, height] = image.size;
    let rgb: Vec<u8> = image
        .pixels
        .iter()
        .flat_map(|c| [c.r(), c.g(), c.b()])
        .collect();
    if let Some(parent) = path.parent().filter(|p| !p.as_os_str().is_empty()) {
        std::fs::create_dir_all(parent)
            .map_err(|e| crate::HeatlabError::io("creating folder", parent, e))?;
    }
    crate::export::write_png_rgb(path, width, height, &rgb)
}
