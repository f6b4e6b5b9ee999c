//! The diffusion tab's side of the simulation thread's messages: its events (a backend, a
//! field, a stop, a notice, an export) and its frames, and the view sizes it is told back.

use std::path::PathBuf;

use eframe::egui;

use crate::settings::Settings;
use crate::ui::notice::Level;
use heatlab_engine::compute::{BackendChoice, BackendKind};
use heatlab_engine::grid::GridSize;
use heatlab_engine::session::diffusion::{
    Frame, SimCommand, SimEvent, SimWorker, ViewRequest, ViewRequests,
};

use super::view::MAX_PREVIEW_SIDE;
use super::{generation_time, DiffusionCommand, DiffusionPanel};

impl DiffusionPanel {
    /// Takes the thread's events and its latest frame.
    pub fn poll(&mut self, ctx: &egui::Context, settings: &mut Settings) {
        let mut events = Vec::new();
        if let Some(worker) = &self.worker {
            while let Some(event) = worker.try_event() {
                events.push(event);
            }
        }
        for event in events {
            self.handle_event(event, settings);
        }
        if let Some(frame) = self.worker.as_ref().and_then(SimWorker::take_frame) {
            self.show_frame(ctx, frame, settings);
        }
        self.regenerate_live(settings);
    }

    pub(super) fn handle_event(&mut self, event: SimEvent, settings: &mut Settings) {
        match event {
            SimEvent::Backend(status) => {
                self.timings.clear();
                // CUDA asked for and not available (a choice remembered from another machine):
                // the choice becomes AUTO, which uses CUDA wherever it works, rather than
                // remembering CPU for the next start. The selector greys CUDA out meanwhile.
                if settings.backend == BackendChoice::Cuda && status.kind == BackendKind::Cpu {
                    settings.backend = BackendChoice::Auto;
                }
                self.state.backend = Some(status);
            }
            SimEvent::Problem(problem) => {
                self.state.problem = problem;
                self.share_problem();
                self.place_thermostat_probes();
            }
            SimEvent::Stepping(stepping) => self.state.stepping = stepping,
            SimEvent::GenerationFailed(message) => {
                self.state.progress = None;
                self.state.live_generating = false;
                // The parameters on screen were not generated: "Regenerate *" says so.
                self.generated_with = None;
                self.opening_done();
                self.notify(Level::Error, message.clone());
                self.state.generation_failed = Some(message);
            }
            // A live regeneration takes milliseconds: no progress bar flickering while dragging.
            SimEvent::Progress(..) if self.state.live_generating => {}
            SimEvent::Progress(what, fraction) => {
                self.state.progress =
                    (fraction < 1.0 && !what.is_empty()).then_some((what, fraction));
            }
            SimEvent::FieldReady(params, generation) => {
                self.field_ready(params.size, generation, settings);
            }
            SimEvent::NonFinite { message, step } => {
                self.state.playing = false;
                self.state.step = step;
                self.notify(Level::Error, message.clone());
                self.state.non_finite = Some(message);
            }
            SimEvent::Stopped => self.state.playing = false,
            SimEvent::Notice(level, text) => {
                if level == Level::Error {
                    self.opening_done();
                }
                self.notify(level, text);
            }
            SimEvent::RecordingStopped => {
                self.state.recording = false;
                self.files.video_recording = false;
            }
            SimEvent::Agreement(report) => self.agreement.record(report),
            SimEvent::PaintHistory(undo, redo) => self.paint.set_history(undo, redo),
            SimEvent::Probes(places) => self.paint.probes_placed(&places),
            SimEvent::Opened(opened) => self.opened(opened, settings),
            SimEvent::StateSaved(path, step) => self.notify(
                Level::Info,
                format!("saved the state at step {step} to {}", path.display()),
            ),
            SimEvent::KernelTimings(rows) => self.state.kernel_timings.finished(rows),
            SimEvent::Exported(paths) => self.exported(paths),
        }
    }

    pub(super) fn show_frame(
        &mut self,
        ctx: &egui::Context,
        mut frame: Frame,
        settings: &mut Settings,
    ) {
        let size = frame.size;
        // The pictures move into the views (no copies); the frame keeps the ones they replace.
        let mut upload = self
            .views
            .field
            .update(ctx, "field", &mut frame.field, size);
        upload += self
            .views
            .laplacian
            .update(ctx, "laplacian", &mut frame.laplacian, size);
        self.state.step = frame.step;
        self.state.playing = frame.playing;
        if frame.stats.is_some() {
            self.state.stats = frame.stats;
        }
        self.state.field_size = Some(size);
        self.state.problem_frame = frame.problem.take();
        if let Some(problem) = &self.state.problem_frame {
            match frame.playing {
                true => self
                    .simulated_rate
                    .record(std::time::Instant::now(), problem.simulated_seconds),
                false => self.simulated_rate.clear(),
            }
            self.state.simulated_rate = self.simulated_rate.rate();
            self.energy.record(problem);
            // The thermostats' exact switches between frames first, then the state now.
            for switch in &problem.switches {
                self.sources
                    .record_switch(switch.step + 1, switch.kind, switch.on);
            }
            self.sources.record_heaters(frame.step, &problem.heaters_on);
        }
        if settings.auto_steps {
            settings.steps_per_frame = frame.steps_per_frame;
        }
        self.timings.record(&frame, upload);
        let seconds = self
            .state
            .problem_frame
            .as_ref()
            .map(|p| p.simulated_seconds);
        self.paint
            .record(frame.step, seconds, size, frame.samples.as_ref());
        self.state.frames_shown += 1;
        // The simulation thread colours into the replaced pictures again and frees the rest on
        // its own thread (a megabyte per picture freed here cost it page faults every frame).
        self.send(SimCommand::ReturnPictures(vec![
            frame.field,
            frame.laplacian,
        ]));
    }

    /// Tells the simulation thread the sizes and looks the views need, when they changed.
    pub fn sync_views(&mut self, settings: &Settings) {
        let clamp =
            |(w, h): (usize, usize)| (w.clamp(16, MAX_PREVIEW_SIDE), h.clamp(16, MAX_PREVIEW_SIDE));
        let views = ViewRequests {
            field: ViewRequest {
                colormap: settings.field_view.colormap,
                range_mode: settings.field_view.range_mode(),
                max_size: clamp(self.views.field.shown_pixels),
            },
            laplacian: ViewRequest {
                colormap: settings.laplacian_view.colormap,
                range_mode: settings.laplacian_view.range_mode(),
                max_size: clamp(self.views.laplacian.shown_pixels),
            },
        };
        if self.sent_views != Some(views) {
            self.sent_views = Some(views);
            self.send(SimCommand::SetViews(views));
        }
    }

    /// A new jagged field is on the device: the views, timings and tools start over.
    fn field_ready(
        &mut self,
        size: GridSize,
        generation: heatlab_engine::sim::generate::Generation,
        settings: &mut Settings,
    ) {
        let live = std::mem::take(&mut self.state.live_generating);
        self.state.generation_failed = None;
        self.scenario = None;
        self.agreement.clear();
        self.state.progress = None;
        // A field of another size is shown whole, not at the old field's zoom.
        if self.state.field_size != Some(size) {
            self.views.viewport = super::view::Viewport::default();
        }
        self.state.field_size = Some(size);
        self.state.step = 0;
        self.timings.clear();
        self.notices
            .remove_starting_with(super::actions::PROBES_STOPPED);
        self.paint.restart(Some(size));
        self.sources.restart();
        self.energy.clear();
        if std::mem::take(&mut self.paint_demo) {
            self.paint.paint_demo(size);
        }
        if let Some(why) = generation.fallback() {
            let text = format!("the field was generated on the CPU: {why}");
            if !self.notices.contains(&text) {
                self.notify(Level::Warning, text);
            }
        }
        if !live {
            self.notify(
                Level::Info,
                format!(
                    "{}{size} field on the {} in {}",
                    super::actions::FIELD_GENERATED,
                    generation.place,
                    generation_time(generation.wall)
                ),
            );
        }
        self.state.last_generation = Some(generation);
        self.state.fields_generated += 1;
        if self.autoplay {
            self.autoplay = false;
            self.apply(DiffusionCommand::Play, settings);
        }
    }

    /// An export finished (no paths when it failed; a notice said why).
    fn exported(&mut self, paths: Vec<PathBuf>) {
        self.state.exports_pending = self.state.exports_pending.saturating_sub(1);
        if !paths.is_empty() {
            let names: Vec<String> = paths.iter().map(|p| p.display().to_string()).collect();
            self.notify(Level::Info, format!("wrote {}", names.join(", ")));
            self.state.last_exported = paths;
        }
    }
}
