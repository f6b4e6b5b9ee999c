//! The simulation thread's GPU kernel: the user's choice (kept across backend switches), the
//! "measure kernels" action (the same measurement as `heatlab bench`), and the Kernel lab's
//! requests: a copy of the field to validate against, and loading a validated kernel.

use std::sync::mpsc::Sender;

use crate::bench::{measure_kernels, BenchConfig};
use crate::compute::{Backend, KernelChoice, StepParams};
use crate::grid::Grid;

use super::messages::SimEvent;
use super::SimThread;
use crate::session::notice::Level;

/// Timed repetitions per kernel in the app (fewer than `heatlab bench`'s 5: the app waits).
const APP_REPEATS: usize = 3;
/// Seconds per repetition in the app.
const APP_SECONDS_PER_REPEAT: f64 = 0.02;

/// Gives `backend` the kernel choice and the validated user kernel; returns what went wrong
/// (a refused choice falls back to auto).
fn configure_kernel(
    backend: &mut dyn Backend,
    kernel: KernelChoice,
    user_source: Option<&str>,
) -> Vec<String> {
    let mut problems = Vec::new();
    let Some(cuda) = backend.cuda_mut() else {
        return problems;
    };
    if let (Some(source), None) = (user_source, cuda.user_contract()) {
        if let Err(error) = cuda.load_user_kernel(source) {
            problems.push(format!("cannot load your kernel: {error}"));
        }
    }
    if let Err(error) = cuda.set_kernel_choice(kernel) {
        problems.push(format!("kernel {kernel}: {error}; using auto"));
        // Auto is always accepted.
        cuda.set_kernel_choice(KernelChoice::Auto).ok();
    }
    problems
}

impl SimThread {
    /// The backend stepping now (or waiting for the first field).
    fn current_backend(&mut self) -> Option<&mut dyn Backend> {
        match (self.sim.as_mut(), self.idle_backend.as_mut()) {
            (Some(sim), _) => Some(sim.backend_mut()),
            (None, Some(backend)) => Some(backend.as_mut()),
            (None, None) => None,
        }
    }

    /// Gives a new backend the user's kernel choice and the validated user kernel.
    pub(super) fn apply_kernel_to(&self, backend: &mut dyn Backend) {
        for problem in configure_kernel(backend, self.kernel, self.user_source.as_deref()) {
            self.notice(Level::Warning, problem);
        }
    }

    /// Applies the kernel choice to the backend in use.
    fn reapply_kernel(&mut self) {
        let (kernel, source) = (self.kernel, self.user_source.clone());
        let problems = self
            .current_backend()
            .map(|backend| configure_kernel(backend, kernel, source.as_deref()))
            .unwrap_or_default();
        for problem in problems {
            self.notice(Level::Warning, problem);
        }
        self.schedule.dirty = true;
        self.emit_backend_status();
    }

    pub(super) fn set_kernel(&mut self, kernel: KernelChoice) {
        self.kernel = kernel;
        self.reapply_kernel();
    }

    /// Loads a kernel that the Kernel lab validated and steps with it.
    pub(super) fn use_user_kernel(&mut self, source: String) {
        let loaded = match self.current_backend().and_then(|b| b.cuda_mut()) {
            Some(cuda) => cuda.load_user_kernel(&source).map(|contract| {
                format!(
                    "stepping with your kernel (block {}x{})",
                    contract.block_x, contract.block_y
                )
            }),
            None => Err(crate::HeatlabError::Unsupported(
                "your kernel needs the CUDA backend".into(),
            )),
        };
        match loaded {
            Ok(message) => {
                self.user_source = Some(source);
                self.notice(Level::Info, message);
                self.set_kernel(KernelChoice::User);
            }
            Err(error) => self.notice(Level::Error, format!("cannot use your kernel: {error}")),
        }
    }

    /// Sends a copy of the current field and the step parameters.
    pub(super) fn snapshot_field(&mut self, reply: &Sender<Result<(Grid, StepParams), String>>) {
        let snapshot = match self.sim.as_mut() {
            Some(sim) => sim
                .field()
                .map(|field| (field, sim.params()))
                .map_err(|e| e.to_string()),
            None => Err("there is no field yet".into()),
        };
        // The lab may have given up waiting: then nobody needs the copy.
        reply.send(snapshot).ok();
    }

    /// Times the device copy and every kernel that can step the current field, as `heatlab
    /// bench` does, and leaves the field as it was.
    pub(super) fn measure_kernels(&mut self) {
        let rows = self.try_measure_kernels();
        self.emit(SimEvent::Progress(String::new(), 1.0));
        match rows {
            Ok(rows) => self.emit(SimEvent::KernelTimings(rows)),
            Err(error) => {
                self.notice(Level::Error, format!("cannot measure the kernels: {error}"));
                self.emit(SimEvent::KernelTimings(Vec::new()));
            }
        }
        self.schedule.dirty = true;
    }

    fn try_measure_kernels(&mut self) -> crate::Result<Vec<crate::bench::BenchRow>> {
        let (events, notify) = self.ctx.event_sender();
        let Some(sim) = self.sim.as_mut() else {
            return Err(crate::HeatlabError::NoField);
        };
        let field = sim.field()?;
        let size = field.size();
        let Some(cuda) = sim.backend_mut().cuda_mut() else {
            return Err(crate::HeatlabError::Unsupported(
                "the kernels are GPU kernels: switch to the CUDA backend".into(),
            ));
        };
        let mut choices: Vec<KernelChoice> = KernelChoice::all()
            .into_iter()
            .filter(|choice| match choice {
                KernelChoice::Auto => false,
                KernelChoice::User => cuda.user_contract().is_some(),
                other => other.builtin().is_some_and(|kernel| kernel.supports(size)),
            })
            .collect();
        // The tutorial's kernel first: it is the speed-up's baseline.
        choices.sort_by_key(|choice| *choice != KernelChoice::Tutorial);
        let config = BenchConfig {
            sizes: vec![size],
            repeats: APP_REPEATS,
            seconds_per_repeat: APP_SECONDS_PER_REPEAT,
            with_numpy: false,
        };
        let total = choices.len() as f32 + 1.0;
        let done = std::cell::Cell::new(0.0_f32);
        let progress = |what: &str| {
            let fraction = done.get() / total;
            done.set(done.get() + 1.0);
            if events
                .send(SimEvent::Progress(format!("measuring {what}"), fraction))
                .is_ok()
            {
                notify();
            }
        };
        let result = measure_kernels(cuda, &config, &field, &choices, &progress);
        // The field goes back whatever happened (measuring steps it many times).
        cuda.upload(&field)?;
        result
    }
}
