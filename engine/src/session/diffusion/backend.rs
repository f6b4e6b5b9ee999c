//! The simulation thread's backend and field: switching between CPU and CUDA (keeping the
//! field), and generating a new jagged field with progress.

use crate::compute::{create_backend, BackendChoice, BackendKind, CudaBackend};
use crate::error::CudaUnavailable;
use crate::field::JaggedParams;
use crate::sim::Simulation;

use super::messages::{BackendStatus, SimEvent};
use super::SimThread;
use crate::session::notice::Level;

impl SimThread {
    pub(super) fn backend_status(&self) -> Option<BackendStatus> {
        let backend = match (&self.sim, &self.idle_backend) {
            (Some(sim), _) => sim.backend(),
            (None, Some(backend)) => backend.as_ref(),
            (None, None) => return None,
        };
        Some(BackendStatus {
            kind: backend.kind(),
            device: backend.device_name(),
            method: backend.step_method(),
            cuda_unavailable: self.cuda_unavailable.clone(),
            kernel: backend.cuda().map(|cuda| cuda.kernel_choice()),
            user_kernel: backend
                .cuda()
                .is_some_and(|cuda| cuda.user_contract().is_some()),
        })
    }

    pub(super) fn emit_backend_status(&self) {
        if let Some(status) = self.backend_status() {
            self.emit(SimEvent::Backend(status));
        }
    }

    pub(super) fn switch_backend(&mut self, choice: BackendChoice) {
        if choice == BackendChoice::Cpu && !self.cuda_checked {
            // Find out once whether CUDA would work, so the panel can say why it is not used.
            self.cuda_checked = true;
            if let Err(error) = CudaBackend::new() {
                self.cuda_unavailable = Some(CudaUnavailable::from_error(&error));
            }
        }
        let backend = match create_backend(choice) {
            Ok((backend, fallback)) => {
                if choice != BackendChoice::Cpu {
                    self.cuda_checked = true;
                }
                if let Some(fallback) = fallback {
                    self.cuda_unavailable = Some(fallback.reason);
                } else if backend.kind() == BackendKind::Cuda {
                    self.cuda_unavailable = None;
                }
                backend
            }
            Err(error) => {
                if choice == BackendChoice::Cuda {
                    self.cuda_unavailable = Some(CudaUnavailable::from_error(&error));
                }
                self.notice(Level::Error, format!("cannot switch to {choice}: {error}"));
                self.emit_backend_status();
                return;
            }
        };
        let mut backend = backend;
        self.apply_kernel_to(backend.as_mut());
        match self.sim.as_mut() {
            Some(sim) => {
                if let Err(error) = sim.switch_backend(backend) {
                    self.notice(Level::Error, format!("cannot switch to {choice}: {error}"));
                }
                self.schedule.dirty = true;
            }
            None => self.idle_backend = Some(backend),
        }
        self.emit_backend_status();
    }

    pub(super) fn generate(&mut self, params: &JaggedParams) {
        let what = format!("generating the {} field", params.size);
        self.emit(SimEvent::Progress(what.clone(), 0.0));
        let (events, notify) = self.ctx.event_sender();
        let progress = move |fraction: f32| {
            // Only fails when the window is closing.
            if events
                .send(SimEvent::Progress(what.clone(), fraction))
                .is_ok()
            {
                notify();
            }
        };
        let result = match self.sim.as_mut() {
            Some(sim) => sim.regenerate(params, &progress),
            None => {
                let backend = match self.idle_backend.take() {
                    Some(backend) => Ok(backend),
                    None => create_backend(BackendChoice::Auto).map(|(backend, _)| backend),
                };
                backend
                    .and_then(|backend| {
                        Simulation::generated(backend, params, self.params, &progress)
                    })
                    .map(|(mut sim, generation)| {
                        sim.set_agreement_check(self.agreement_policy());
                        self.sim = Some(sim);
                        generation
                    })
            }
        };
        match result {
            Ok(generation) => {
                self.schedule.dirty = true;
                self.stats.reset();
                self.restart_run();
                // The tutorial's plate runs for as long as it is played.
                self.duration_steps = None;
                self.duration_seconds = None;
                self.schedule.end_step = None;
                self.origin = Some(crate::state::FieldOrigin::Jagged(*params));
                // A frame of the field replaced must not come after the news of the new one.
                self.ctx.discard_frame();
                self.emit(SimEvent::FieldReady(*params, generation));
                self.emit_problem();
                self.emit_backend_status();
            }
            Err(error) => {
                // The simulation stands at its initial field again: show it.
                self.schedule.dirty = true;
                self.emit(SimEvent::GenerationFailed(format!(
                    "cannot generate the field: {error}"
                )));
            }
        }
    }
}
