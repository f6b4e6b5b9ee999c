//! The screenshot mode of `heatlab gui --screenshot`: wait until the tab has something to show,
//! ask the renderer for the window's pixels, save them as a PNG and close the window.
//!
//! It never waits forever: after the plan's time limit it gives up, closes the window and
//! reports why (the command then exits non-zero and writes no file).

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use eframe::egui;

/// The time limit of a screenshot when none is given (`heatlab gui --timeout`).
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(120);

/// How long the renderer may take to deliver the pixels once they were asked for.
const RENDERER_LIMIT: Duration = Duration::from_secs(20);

/// A screenshot to take after some frames, then quit.
#[derive(Debug, Clone)]
pub struct ScreenshotPlan {
    /// Where the PNG goes.
    pub path: PathBuf,
    /// Simulation frames to show first.
    pub frames: u64,
    /// The longest the whole screenshot may take, from the app's start to the saved file.
    pub timeout: Duration,
}

impl ScreenshotPlan {
    /// A plan with the default time limit.
    pub fn new(path: PathBuf, frames: u64) -> Self {
        Self {
            path,
            frames,
            timeout: DEFAULT_TIMEOUT,
        }
    }
}

/// Whether the screenshot was written, once known (shared with the renderer's callback): the
/// error is a whole sentence for the user.
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
    deadline: Instant,
    timeout: Duration,
}

/// What the tab shows, for deciding when the picture is ready.
pub struct Readiness {
    /// Whether the tab has what the screenshot should show.
    pub ready: bool,
    /// Whether the tab runs timed work that the window must not slow down.
    pub timed_work: bool,
    /// What the screenshot still waits for, for the message when time runs out.
    pub waiting_for: String,
    /// Why the tab can never become ready (a field that cannot be made): the shot fails now
    /// instead of at its time limit.
    pub impossible: Option<String>,
    /// What to print when the screenshot is taken.
    pub summary: String,
}

impl Screenshot {
    /// A screenshot mode following `plan`; its time limit starts now.
    pub fn new(plan: ScreenshotPlan) -> Self {
        Self {
            deadline: Instant::now() + plan.timeout,
            timeout: plan.timeout,
            stage: Stage::Waiting(plan),
            result: Arc::new(Mutex::new(None)),
        }
    }

    /// Whether the screenshot was written (for the command's exit status).
    pub fn result(&self) -> ScreenshotResult {
        Arc::clone(&self.result)
    }

    /// Whether the tab was ready and the window's pixels were asked for (or the mode ended).
    pub fn is_past_waiting(&self) -> bool {
        !matches!(self.stage, Stage::Waiting(_))
    }

    /// Whether the screenshot mode has ended (written, failed or given up).
    pub fn is_done(&self) -> bool {
        matches!(self.stage, Stage::Done)
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
            // Asked again each frame: a frame whose pass egui discards drops its commands.
            Stage::Done => {
                ctx.send_viewport_cmd(egui::ViewportCommand::Close);
                Stage::Done
            }
        };
    }

    /// Gives up: `reason` becomes the command's error (unless a result is already known), no
    /// file is written, and the window closes.
    pub fn fail(&mut self, ctx: &egui::Context, reason: String) {
        if !self.is_done() {
            self.finish(ctx, Err(reason));
        }
    }

    /// Records `result` unless the renderer's callback got there first, and closes the window.
    fn finish(&mut self, ctx: &egui::Context, result: Result<(), String>) {
        let mut slot = self.result.lock().unwrap_or_else(PoisonError::into_inner);
        if slot.is_none() {
            *slot = Some(result);
        }
        drop(slot);
        self.stage = Stage::Done;
        ctx.send_viewport_cmd(egui::ViewportCommand::Close);
    }

    fn timed_out(&self, waiting_for: &str) -> Option<String> {
        (Instant::now() >= self.deadline).then(|| {
            format!(
                "no screenshot after {} s: still waiting for {waiting_for}; \
                 give --timeout SECONDS to wait longer",
                self.timeout.as_secs_f64()
            )
        })
    }

    fn wait(&mut self, ctx: &egui::Context, plan: ScreenshotPlan, readiness: Readiness) -> Stage {
        if readiness.ready {
            let slot = Arc::clone(&self.result);
            let path = plan.path.clone();
            ctx.request_screenshot(move |image| {
                // The lock is held while saving, so that a time limit reached meanwhile
                // cannot report a failure for a file that was written.
                let mut slot = slot.lock().unwrap_or_else(PoisonError::into_inner);
                if slot.is_none() {
                    let saved = save_screenshot(&path, &image)
                        .map_err(|e| format!("could not save the screenshot: {e}"));
                    *slot = Some(saved);
                }
            });
            super::note(&readiness.summary);
            Stage::Requested(plan.path, Instant::now())
        } else if let Some(reason) = readiness.impossible {
            self.finish(ctx, Err(reason));
            Stage::Done
        } else if let Some(reason) = self.timed_out(&readiness.waiting_for) {
            self.finish(ctx, Err(reason));
            Stage::Done
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

    fn collect(&mut self, ctx: &egui::Context, path: PathBuf, at: Instant) -> Stage {
        let result = self
            .result
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone();
        match result {
            Some(Ok(())) => {
                super::note(&format!("saved a screenshot to {}", path.display()));
                ctx.send_viewport_cmd(egui::ViewportCommand::Close);
                Stage::Done
            }
            Some(Err(_)) => {
                ctx.send_viewport_cmd(egui::ViewportCommand::Close);
                Stage::Done
            }
            None if at.elapsed() > RENDERER_LIMIT => {
                self.finish(
                    ctx,
                    Err("the renderer never delivered the screenshot".to_string()),
                );
                Stage::Done
            }
            None => match self.timed_out("the renderer to deliver the window's pixels") {
                Some(reason) => {
                    self.finish(ctx, Err(reason));
                    Stage::Done
                }
                None => {
                    ctx.request_repaint_after(Duration::from_millis(16));
                    Stage::Requested(path, at)
                }
            },
        }
    }
}

fn save_screenshot(path: &Path, image: &egui::ColorImage) -> heatlab_engine::Result<()> {
    let [width, height] = image.size;
    let rgb: Vec<u8> = image
        .pixels
        .iter()
        .flat_map(|c| [c.r(), c.g(), c.b()])
        .collect();
    if let Some(parent) = path.parent().filter(|p| !p.as_os_str().is_empty()) {
        std::fs::create_dir_all(parent)
            .map_err(|e| heatlab_engine::HeatlabError::io("creating folder", parent, e))?;
    }
    heatlab_engine::export::write_png_rgb(path, width, height, &rgb)
}
