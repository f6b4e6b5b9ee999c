//! Stepping on the GPU: kernel launches one by one or replayed as CUDA graphs, the choice of
//! the fastest exact kernel, and the seed's in-place kernel as a baseline.

use std::time::Duration;

use cudarc::driver::{sys, CudaFunction, CudaGraph, LaunchConfig};

use super::kernel::{KernelChoice, SEED_TILE};
use super::launch::{self, step_loop, StepLaunch};
use super::{dims, driver_error, CudaBackend, CudaKernel, DiffusionKernels};
use crate::compute::{Boundary, StepParams};
use crate::error::{HeatlabError, Result};

/// Kernel launches per CUDA graph: even, so that a replay leaves the double buffers as they
/// were; enough that the per-launch overhead of queuing them one by one disappears.
const GRAPH_LAUNCHES: u64 = 32;

/// What a captured graph computes, and on which buffers. A graph replays the device addresses
/// of its capture: one captured while `current` was the first allocation reads the wrong
/// buffer once an odd number of direct launches has swapped them, so the parity is part of
/// the key and each parity gets a graph of its own.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct GraphKey {
    kernel: CudaKernel,
    boundary: Boundary,
    coeff_bits: u32,
    swapped: bool,
}

/// What steps the field: a built-in kernel or the user's.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Stepper {
    /// A kernel of `kernels/diffusion.cu`.
    Builtin(CudaKernel),
    /// The kernel loaded from the Kernel lab.
    User,
}

/// A step computed ahead: the other buffer holds one step of the current field by `stepper`
/// with `params`, and the Laplacian buffer the Laplacian of the current field (written by the
/// same pass). Made when the Laplacian is downloaded (the view's block means compute their
/// own as they read); used by the next advance with the same stepper and parameters (whose
/// timing then covers one launch fewer); dropped by anything else that launches or uploads.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) struct Lookahead {
    stepper: Stepper,
    params: StepParams,
}

impl Lookahead {
    pub(super) fn of(stepper: Stepper, params: StepParams) -> Self {
        Self { stepper, params }
    }
}

/// A captured graph of [`GRAPH_LAUNCHES`] launches.
pub(super) struct CachedGraph {
    key: GraphKey,
    graph: CudaGraph,
}

// SAFETY: CUDA graphs must not be used from two threads at once; moving one to another thread
// is allowed (its launch binds the context to the calling thread first). A `CachedGraph` is
// owned by one `CudaBackend` and used only through `&mut self`, so it is never shared.
unsafe impl Send for CachedGraph {}

impl CudaBackend {
    /// Advances `steps` steps with a given kernel. Temporal kernels take whole launches of
    /// their step count and finish the remainder with single steps; all exact kernels give
    /// identical fields.
    pub fn advance_with(
        &mut self,
        kernel: CudaKernel,
        steps: u64,
        params: &StepParams,
    ) -> Result<Duration> {
        self.settle()?;
        let lookahead = self.lookahead.take();
        self.last_params = Some(*params);
        if kernel == CudaKernel::SeedFaithful {
            if params.boundary != Boundary::Dirichlet {
                return Err(HeatlabError::Unsupported(
                    "the tutorial's kernel only knows the Dirichlet boundary".into(),
                ));
            }
            return self.advance_seed_faithful(steps, params.coeff);
        }
        let size = self.buffers.as_ref().ok_or(HeatlabError::NoField)?.size;
        if !kernel.supports(size) {
            return Err(HeatlabError::Unsupported(format!(
                "kernel {kernel} cannot step a {size} field"
            )));
        }
        if !self.fits_device(kernel, size) {
            return Err(HeatlabError::Unsupported(format!(
                "kernel {kernel} cannot hold a {size} field on this GPU's multiprocessors"
            )));
        }
        let mut steps = steps;
        if kernel == CudaKernel::Shared {
            let stream = self.device.stream().clone();
            let buffers = self.buffers()?;
            buffers.field_and_laplacian(&stream)?;
            // The Laplacian view's pass already computed the first step (see `Lookahead`).
            let ahead = Lookahead {
                stepper: Stepper::Builtin(kernel),
                params: *params,
            };
            if steps > 0 && lookahead == Some(ahead) {
                buffers.flip();
                steps -= 1;
            }
        }
        self.timer.start()?;
        match kernel {
            CudaKernel::Temporal {
                steps_per_launch, ..
            } => {
                let per_launch = u64::from(steps_per_launch);
                self.launch_steps(kernel, steps / per_launch, params)?;
                let vec4 = CudaKernel::JacobiVec4 { rows_per_thread: 8 };
                let single = if vec4.supports(size) {
                    vec4
                } else {
                    CudaKernel::JacobiRows
                };
                self.launch_steps(single, steps % per_launch, params)?;
            }
            CudaKernel::Resident { .. } => self.launch_resident(kernel, steps, params)?,
            _ => self.launch_steps(kernel, steps, params)?,
        }
        self.stop_timing()
    }

    /// Queues `launches` launches of an exact kernel (each `steps_per_launch` steps), flipping
    /// the buffers after each.
    fn launch_steps(
        &mut self,
        kernel: CudaKernel,
        launches: u64,
        params: &StepParams,
    ) -> Result<()> {
        let mut remaining = launches;
        if self.graphs_enabled && launches >= GRAPH_LAUNCHES {
            match self.graph_for(kernel, params) {
                Ok(index) => {
                    while remaining >= GRAPH_LAUNCHES {
                        self.graphs[index]
                            .graph
                            .launch()
                            .map_err(driver_error("launching a CUDA graph"))?;
                        self.graph_replays += 1;
                        remaining -= GRAPH_LAUNCHES;
                    }
                }
                // Graphs are an optimisation: without them the same launches are queued one by one.
                Err(error) => {
                    log::warn!("CUDA graphs turned off, launching one by one: {error}");
                    self.graphs_enabled = false;
                }
            }
        }
        self.launch_steps_directly(kernel, remaining, params)
    }

    /// The index in `self.graphs` of a graph of [`GRAPH_LAUNCHES`] launches of `kernel` with
    /// `params` on the buffers in their present order, capturing it if there is none. A new
    /// capture replaces the cached graph of the same parity.
    fn graph_for(&mut self, kernel: CudaKernel, params: &StepParams) -> Result<usize> {
        let key = GraphKey {
            kernel,
            boundary: params.boundary,
            coeff_bits: params.coeff.to_bits(),
            swapped: self.buffers()?.swapped,
        };
        if let Some(index) = self.graphs.iter().position(|cached| cached.key == key) {
            return Ok(index);
        }
        self.graphs
            .retain(|cached| cached.key.swapped != key.swapped);
        let stream = self.device.stream().clone();
        stream
            .begin_capture(sys::CUstreamCaptureMode::CU_STREAM_CAPTURE_MODE_THREAD_LOCAL)
            .map_err(driver_error("starting a CUDA graph capture"))?;
        // An even number of launches leaves the buffers as they were, so the graph can be
        // replayed any number of times without swapping them.
        let captured = self.launch_steps_directly(kernel, GRAPH_LAUNCHES, params);
        let graph = stream.end_capture(sys::CUgraphInstantiate_flags(0));
        // Captured launches do not run: a capture that stopped after an odd number of them
        // must not leave the buffers swapped.
        let buffers = self.buffers()?;
        if buffers.swapped != key.swapped {
            buffers.flip();
        }
        captured?;
        let graph = graph
            .map_err(driver_error("instantiating a CUDA graph"))?
            .ok_or_else(|| HeatlabError::Cuda {
                context: "capturing a CUDA graph".into(),
                message: "nothing was captured".into(),
            })?;
        self.graphs.push(CachedGraph { key, graph });
        Ok(self.graphs.len() - 1)
    }

    /// Turns CUDA graphs for long runs on or off (they are on by default). Both give the same
    /// field; the switch is there to prove it and to time the difference.
    pub fn set_graphs_enabled(&mut self, enabled: bool) {
        self.graphs_enabled = enabled;
        if !enabled {
            self.graphs.clear();
        }
    }

    /// Whether long runs replay CUDA graphs.
    pub fn graphs_enabled(&self) -> bool {
        self.graphs_enabled
    }

    /// CUDA graphs replayed so far (each [`GRAPH_LAUNCHES`] launches).
    pub fn graph_replays(&self) -> u64 {
        self.graph_replays
    }

    /// Fixes the built-in kernel `advance` uses (`None`: the fastest exact one, chosen per
    /// size; the seed's kernel: the tutorial choice). Refuses a kernel that cannot step the
    /// held field.
    pub fn set_kernel(&mut self, kernel: Option<CudaKernel>) -> Result<()> {
        self.set_kernel_choice(match kernel {
            None => KernelChoice::Auto,
            Some(CudaKernel::SeedFaithful) => KernelChoice::Tutorial,
            Some(kernel) => KernelChoice::Builtin(kernel),
        })
    }

    /// Sets the kernel `advance` uses. Refuses a built-in kernel that cannot step the held
    /// field and the user kernel when none is loaded; the tutorial's kernel refuses to step
    /// under any boundary but Dirichlet when asked to.
    pub fn set_kernel_choice(&mut self, choice: KernelChoice) -> Result<()> {
        if let (Some(kernel), Some(buffers)) = (choice.builtin(), &self.buffers) {
            if !kernel.supports(buffers.size) {
                return Err(HeatlabError::InvalidInput(format!(
                    "kernel {kernel} cannot step a {} field",
                    buffers.size
                )));
            }
        }
        if choice == KernelChoice::User && self.user.is_none() {
            return Err(HeatlabError::InvalidInput(
                "no user kernel is loaded: compile and validate one in the Kernel lab first".into(),
            ));
        }
        self.choice = choice;
        // A step computed ahead belongs to the kernel that computed it.
        self.lookahead = None;
        Ok(())
    }

    /// The kernel choice in force.
    pub fn kernel_choice(&self) -> KernelChoice {
        self.choice
    }

    /// What `advance` uses for the held field: the chosen kernel if it fits, else the tuned one.
    pub(super) fn stepper(&self) -> Stepper {
        let fits = |kernel: CudaKernel| {
            self.buffers.as_ref().is_some_and(|buffers| {
                kernel.supports(buffers.size) && self.fits_device(kernel, buffers.size)
            })
        };
        match self.choice {
            KernelChoice::User if self.user.is_some() => Stepper::User,
            choice => match choice.builtin() {
                Some(kernel) if fits(kernel) => Stepper::Builtin(kernel),
                _ => Stepper::Builtin(self.selected),
            },
        }
    }

    /// Advances with what [`Self::stepper`] says.
    pub(super) fn advance_stepper(&mut self, steps: u64, params: &StepParams) -> Result<Duration> {
        // A held heat problem replaces the uniform stencil and its parameters.
        if self.problem.is_some() {
            return self.advance_problem(steps);
        }
        match self.stepper() {
            Stepper::Builtin(kernel) => self.advance_with(kernel, steps, params),
            Stepper::User => self.advance_user(steps, params),
        }
    }

    /// Leaves the Laplacian of the current field under `boundary` in the Laplacian buffer by
    /// a step of the stepping kernel, when that kernel writes the Laplacian in its pass (the
    /// shared kernel, a user kernel) and the last advance used `boundary`: the step goes into
    /// the other buffer without being made current, and the next advance with the same
    /// parameters starts from it, so the download costs no pass of its own. Returns whether it
    /// did.
    pub(super) fn laplacian_by_lookahead(&mut self, boundary: Boundary) -> Result<bool> {
        let stepper = self.stepper();
        let Some(params) = self.last_params.filter(|p| p.boundary == boundary) else {
            return Ok(false);
        };
        let writes_laplacian = match stepper {
            Stepper::Builtin(kernel) => kernel == CudaKernel::Shared,
            Stepper::User => self
                .user_contract()
                .is_some_and(|contract| contract.handles(boundary)),
        };
        if !writes_laplacian {
            return Ok(false);
        }
        let ahead = Lookahead { stepper, params };
        if self.lookahead == Some(ahead) {
            return Ok(true);
        }
        let stream = self.device.stream().clone();
        self.buffers()?.field_and_laplacian(&stream)?;
        match stepper {
            Stepper::Builtin(kernel) => self.launch_steps_directly(kernel, 1, &params)?,
            Stepper::User => self.launch_user_steps(1, &params)?,
        }
        // Keep the field current; the step waits in the other buffer.
        self.buffers()?.flip();
        self.lookahead = Some(ahead);
        Ok(true)
    }

    /// Queues `launches` launches one by one (see [`Self::launch_steps`]).
    fn launch_steps_directly(
        &mut self,
        kernel: CudaKernel,
        launches: u64,
        params: &StepParams,
    ) -> Result<()> {
        let stream = self.device.stream().clone();
        let buffers = self.buffers.as_mut().ok_or(HeatlabError::NoField)?;
        let coeff = params.coeff;
        let bad_kernel = || HeatlabError::Cuda {
            context: format!("launching {kernel}"),
            message: "not a double-buffered kernel".into(),
        };
        let (config, segment_rows) = kernel
            .launch_geometry(buffers.size)
            .ok_or_else(bad_kernel)?;
        let function = self
            .kernels
            .stepping_function(kernel, params.boundary)
            .ok_or_else(bad_kernel)?;
        let launch = match (kernel, segment_rows) {
            // Writes the Laplacian too, into the buffer `advance_with` allocated beforehand.
            (CudaKernel::Shared, _) => StepLaunch::Shared(function),
            (_, Some(segment_rows)) => StepLaunch::Temporal(function, segment_rows),
            (_, None) => StepLaunch::Jacobi(function),
        };
        step_loop(&stream, launch, config, buffers, launches, coeff)
    }

    /// Times every exact kernel on the uploaded field and selects the fastest; the field is
    /// kept in a third buffer meanwhile (the room the upload checked for: three fields) and
    /// restored afterwards. The shared kernel, which writes a Laplacian buffer too, is tried
    /// only where a fourth field fits (it is never the fastest where memory is short).
    pub(super) fn choose_kernel(&mut self) -> Result<()> {
        let stream = self.device.stream().clone();
        let (size, saved) = {
            let buffers = self.buffers()?;
            let saved = stream
                .clone_dtod(&buffers.current)
                .map_err(driver_error("keeping the field while timing kernels"))?;
            (buffers.size, saved)
        };
        let (free, _) = self.device.memory_info()?;
        // A quarter GiB to spare for what the driver and the launches allocate beside it.
        let laplacian_fits = self.buffers()?.laplacian.is_some() || free > size.bytes() + (1 << 28);
        let params = StepParams::default();
        // About 2e8 cell updates per trial: long enough to time, short enough to be unnoticed.
        let steps = ((2e8 / size.cells() as f64) as u64)
            .clamp(8, 512)
            .div_ceil(8)
            * 8;
        let mut results = Vec::new();
        for kernel in CudaKernel::exact_candidates(size) {
            if !self.fits_device(kernel, size) || (kernel == CudaKernel::Shared && !laplacian_fits)
            {
                continue;
            }
            self.advance_with(kernel, 8, &params)?; // warm-up
                                                    // The better of two trials: candidates often differ by a few percent.
            let first = self.advance_with(kernel, steps, &params)?;
            let second = self.advance_with(kernel, steps, &params)?;
            let elapsed = first.min(second);
            results.push((kernel, elapsed.as_secs_f64() * 1e6 / steps as f64));
        }
        if let Some(&(best, _)) = results.iter().min_by(|a, b| a.1.total_cmp(&b.1)) {
            self.selected = best;
        }
        self.tuning = results;
        let buffers = self.buffers()?;
        stream
            .memcpy_dtod(&saved, &mut buffers.current)
            .map_err(driver_error("restoring the field"))?;
        Ok(())
    }

    /// Steps with a faithful port of the tutorial's kernel (8x8 tile, in place, Laplacian
    /// written each step). A benchmark baseline only: it races between blocks and knows only
    /// the Dirichlet boundary.
    pub fn advance_seed_faithful(&mut self, steps: u64, coeff: f32) -> Result<Duration> {
        self.lookahead = None;
        let stream = self.device.stream().clone();
        let function = self.kernels.seed_inplace.clone();
        let buffers = self.buffers.as_mut().ok_or(HeatlabError::NoField)?;
        let (rows, cols) = dims(buffers.size)?;
        let (current, laplacian) = buffers.field_and_laplacian(&stream)?;
        let config = LaunchConfig {
            grid_dim: (
                (rows as u32).div_ceil(SEED_TILE),
                (cols as u32).div_ceil(SEED_TILE),
                1,
            ),
            block_dim: (SEED_TILE, SEED_TILE, 1),
            shared_mem_bytes: 0,
        };
        self.timer.start()?;
        for _ in 0..steps {
            launch::seed_diffusion_inplace(
                &stream,
                &function,
                config,
                current,
                laplacian,
                (rows, cols, coeff),
            )?;
        }
        self.stop_timing()
    }
}

impl DiffusionKernels {
    /// The compiled function of a double-buffered kernel for `boundary`; `None` for the seed's
    /// in-place kernel.
    pub(super) fn stepping_function(
        &self,
        kernel: CudaKernel,
        boundary: Boundary,
    ) -> Option<&CudaFunction> {
        match kernel {
            CudaKernel::SeedFaithful => None,
            CudaKernel::Shared => Some(&self.shared[boundary]),
            CudaKernel::JacobiRows => Some(&self.jacobi[boundary]),
            CudaKernel::JacobiVec4 { rows_per_thread: 8 } => {
                Some(&self.jacobi_vec4_rows8[boundary])
            }
            CudaKernel::JacobiVec4 { .. } => Some(&self.jacobi_vec4_rows16[boundary]),
            CudaKernel::Temporal {
                steps_per_launch: 4,
                packed: false,
                ..
            } => Some(&self.temporal_k4[boundary]),
            CudaKernel::Temporal {
                steps_per_launch: 8,
                packed: false,
                ..
            } => Some(&self.temporal_k8[boundary]),
            CudaKernel::Temporal {
                steps_per_launch: 8,
                packed: true,
                rows_ahead: 1,
                ..
            } => Some(&self.temporal_packed1_k8[boundary]),
            CudaKernel::Temporal {
                steps_per_launch: 8,
                packed: true,
                rows_ahead: 2,
                ..
            } => Some(&self.temporal_packed2_k8[boundary]),
            CudaKernel::Temporal { .. } | CudaKernel::Resident { .. } => None,
        }
    }
}
