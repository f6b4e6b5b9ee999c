//! The GPU basics tab: the first lessons of the other tutorial notebooks (the maximum ladder,
//! launch geometry, sin·exp, row sums, reductions, the device), each run on the CPU and the GPU
//! and timed with the same breakdown as the tutorial tabs. The panel only asks: the runs go to
//! its [`worker`] thread. Without a GPU the CPU rungs run and the panel says why the GPU's are
//! missing.

mod controls;
mod picture;
mod views;

use std::collections::HashMap;
use std::time::Duration;

use eframe::egui::{self, RichText};

use heatlab_engine::compute::BackendChoice;
use heatlab_engine::tutorial::basics::geometry::{GeometryOptions, GeometryOutcome};
use heatlab_engine::tutorial::basics::{BasicsLesson, BasicsOutcome, BasicsRequest};

use super::notice::{notice_label, Level, Notice};
pub use heatlab_engine::session::basics::GpuState;
use heatlab_engine::session::basics::{self as worker, BasicsEvent, BasicsWorker};
use heatlab_engine::session::worker::Notify;

/// Timed runs of each version in the tab (the command line's default too).
const DEFAULT_REPEATS: u32 = 7;

/// The GPU basics tab.
pub struct BasicsPanel {
    /// The lesson shown.
    pub lesson: BasicsLesson,
    /// Each lesson's inputs, as the controls edit them.
    requests: HashMap<BasicsLesson, BasicsRequest>,
    /// Each lesson's latest outcome.
    outcomes: HashMap<BasicsLesson, BasicsOutcome>,
    /// The geometry runs so far, newest last (the time of each choice).
    geometry_history: Vec<GeometryOutcome>,
    /// The lessons waiting to run after the one in flight.
    queue: Vec<BasicsLesson>,
    running: Option<BasicsLesson>,
    gpu: GpuState,
    notice: Option<Notice>,
    worker: Option<BasicsWorker>,
    notify: Notify,
}

impl BasicsPanel {
    /// The panel with the notebooks' inputs; its thread starts on the first run.
    pub fn new(notify: Notify) -> Self {
        let requests = BasicsLesson::ALL
            .into_iter()
            .map(|lesson| (lesson, BasicsRequest::notebook(lesson, DEFAULT_REPEATS)))
            .collect();
        Self {
            lesson: BasicsLesson::Maximum,
            requests,
            outcomes: HashMap::new(),
            geometry_history: Vec::new(),
            queue: Vec::new(),
            running: None,
            gpu: GpuState::Unknown,
            notice: None,
            worker: None,
            notify,
        }
    }

    /// The latest outcome of `lesson`.
    pub fn outcome(&self, lesson: BasicsLesson) -> Option<&BasicsOutcome> {
        self.outcomes.get(&lesson)
    }

    /// The inputs of `lesson`, to change (tests, the screenshot mode).
    pub fn request_mut(&mut self, lesson: BasicsLesson) -> Option<&mut BasicsRequest> {
        self.requests.get_mut(&lesson)
    }

    /// What the thread found of the GPU.
    pub fn gpu(&self) -> &GpuState {
        &self.gpu
    }

    /// The notice shown (the last failure or refusal).
    pub fn notice(&self) -> Option<&Notice> {
        self.notice.as_ref()
    }

    /// Whether a run is in flight or waiting.
    pub fn is_busy(&self) -> bool {
        self.running.is_some() || !self.queue.is_empty()
    }

    /// Asks for `lessons` to run in turn, on the backend `choice` (the app's setting).
    pub fn run(&mut self, lessons: &[BasicsLesson], choice: BackendChoice) {
        for &lesson in lessons {
            if self.running != Some(lesson) && !self.queue.contains(&lesson) {
                self.queue.push(lesson);
            }
        }
        self.start_next(choice);
    }

    /// Stops the run in flight at its next check and drops the waiting ones.
    pub fn cancel(&mut self) {
        self.queue.clear();
        if let Some(worker) = &self.worker {
            worker.cancel();
        }
    }

    /// One line on where the tab stands (screenshots, tests).
    pub fn summary(&self) -> String {
        let gpu = match &self.gpu {
            GpuState::Unknown => "GPU not asked yet".to_string(),
            GpuState::Ready(name) => format!("GPU {name}"),
            GpuState::Missing(reason) => format!("CPU only ({reason})"),
        };
        let done: Vec<String> = BasicsLesson::ALL
            .into_iter()
            .filter(|lesson| self.outcomes.contains_key(lesson))
            .map(|lesson| lesson.to_string())
            .collect();
        format!("GPU basics tab, {gpu}; results: {}", done.join(", "))
    }

    fn start_next(&mut self, choice: BackendChoice) {
        if self.running.is_some() || self.queue.is_empty() {
            return;
        }
        let lesson = self.queue.remove(0);
        if lesson == BasicsLesson::Device && matches!(self.gpu, GpuState::Missing(_)) {
            // Nothing to measure without a GPU: say so and go on with the rest.
            self.start_next(choice);
            return;
        }
        let Some(request) = self.requests.get(&lesson).cloned() else {
            return;
        };
        if self.worker.as_ref().is_none_or(|w| !w.is_alive()) {
            match worker::spawn(self.notify.clone(), choice) {
                Ok(worker) => self.worker = Some(worker),
                Err(error) => {
                    self.notice = Some(Notice::new(
                        Level::Error,
                        format!("cannot start the GPU basics' thread: {error}"),
                    ));
                    self.queue.clear();
                    return;
                }
            }
        }
        if let Some(worker) = &self.worker {
            worker.clear_cancel();
            if worker.send(request) {
                self.running = Some(lesson);
            } else {
                self.notice = Some(Notice::new(Level::Error, "the GPU basics' thread stopped"));
            }
        }
    }

    /// Takes the thread's events and starts the next waiting run.
    fn poll(&mut self, choice: BackendChoice) {
        let mut events = Vec::new();
        if let Some(worker) = &self.worker {
            while let Some(event) = worker.try_event() {
                events.push(event);
            }
            if self.running.is_some() && events.is_empty() && !worker.is_alive() {
                self.running = None;
                self.notice = Some(Notice::new(Level::Error, "the GPU basics' thread stopped"));
            }
        }
        for event in events {
            match event {
                BasicsEvent::Gpu(state) => self.gpu = state,
                BasicsEvent::Finished {
                    lesson,
                    result,
                    took,
                } => self.finished(lesson, result, took),
            }
        }
        self.start_next(choice);
    }

    fn finished(
        &mut self,
        lesson: BasicsLesson,
        result: Result<Box<BasicsOutcome>, String>,
        took: Duration,
    ) {
        self.running = None;
        match result {
            Ok(outcome) => {
                log::info!("GPU basics: {lesson} took {took:?}");
                if let BasicsOutcome::Geometry(run) = outcome.as_ref() {
                    self.geometry_history.push(run.clone());
                }
                self.outcomes.insert(lesson, *outcome);
                self.notice = None;
            }
            Err(reason) => {
                self.notice = Some(Notice::new(
                    Level::Error,
                    format!("{}: {reason}", lesson.title()),
                ));
            }
        }
    }

    /// Draws the tab: the lessons on the left with their inputs, the outcome in the middle.
    pub fn ui(&mut self, ui: &mut egui::Ui, choice: BackendChoice) {
        self.poll(choice);
        if self.is_busy() {
            ui.ctx().request_repaint_after(Duration::from_millis(100));
        }
        egui::Panel::left("basics_lessons")
            .resizable(false)
            .exact_size(300.0)
            .show(ui, |ui| {
                egui::ScrollArea::vertical().show(ui, |ui| self.side_ui(ui, choice));
            });
        egui::CentralPanel::default().show(ui, |ui| {
            egui::ScrollArea::vertical().show(ui, |ui| self.result_ui(ui));
        });
    }

    fn side_ui(&mut self, ui: &mut egui::Ui, choice: BackendChoice) {
        ui.heading("GPU basics");
        ui.label(RichText::new("The notebooks' first lessons, timed on this machine.").weak());
        ui.separator();
        for lesson in BasicsLesson::ALL {
            ui.selectable_value(&mut self.lesson, lesson, lesson.title());
        }
        ui.separator();
        match &self.gpu {
            GpuState::Unknown => {
                ui.label(RichText::new("the GPU is opened on the first run").weak())
            }
            GpuState::Ready(name) => ui.label(format!("GPU: {name}")),
            GpuState::Missing(reason) => ui.label(
                RichText::new(format!("CPU rungs only: {reason}")).color(super::notice::WARNING),
            ),
        };
        ui.separator();
        if let Some(request) = self.requests.get_mut(&self.lesson) {
            controls::request_ui(ui, request);
        }
        ui.add_space(6.0);
        ui.horizontal(|ui| {
            let busy = self.is_busy();
            if ui.add_enabled(!busy, egui::Button::new("Run")).clicked() {
                self.run(&[self.lesson], choice);
            }
            if ui
                .add_enabled(!busy, egui::Button::new("Run all"))
                .clicked()
            {
                self.run(&BasicsLesson::ALL, choice);
            }
            if ui.add_enabled(busy, egui::Button::new("Stop")).clicked() {
                self.cancel();
            }
        });
        if let Some(lesson) = self.running {
            ui.horizontal(|ui| {
                ui.spinner();
                ui.label(format!("running {}…", lesson.title()));
            });
        }
        if let Some(notice) = &self.notice {
            notice_label(ui, notice);
        }
    }

    fn result_ui(&mut self, ui: &mut egui::Ui) {
        ui.heading(self.lesson.title());
        ui.label(RichText::new(views::about(self.lesson)).weak());
        ui.separator();
        let gpu_missing = match &self.gpu {
            GpuState::Missing(reason) => Some(reason.as_str()),
            _ => None,
        };
        if self.lesson == BasicsLesson::Device && gpu_missing.is_some() {
            ui.label(format!(
                "The device lesson reads the GPU's own figures: {}.",
                gpu_missing.unwrap_or_default()
            ));
            return;
        }
        if self.lesson == BasicsLesson::Geometry {
            if let Some(BasicsRequest::Geometry(options)) = self.requests.get(&self.lesson) {
                picture::geometry_ui(ui, options, self.outcomes.get(&self.lesson));
            }
            views::geometry_history_ui(ui, &self.geometry_history);
            return;
        }
        match self.outcomes.get(&self.lesson) {
            Some(outcome) => views::outcome_ui(ui, outcome, gpu_missing),
            None => {
                ui.label("Not run yet: press Run.");
            }
        }
    }

    /// Starts the geometry run with these options (tests, the screenshot mode).
    pub fn set_geometry(&mut self, options: GeometryOptions) {
        self.requests
            .insert(BasicsLesson::Geometry, BasicsRequest::Geometry(options));
    }
}
