//! The CUDA backend: `kernels/diffusion.cu`, compiled by NVRTC, on the device's own stream.

pub mod device;

use std::time::Duration;

use std::sync::Arc;

use cudarc::driver::{
    sys, CudaFunction, CudaGraph, CudaSlice, CudaStream, LaunchConfig, PushKernelArg,
};

pub use device::{driver_error, CudaDevice, GpuTimer};

use super::{Backend, BackendKind, Boundary, StepParams};
use crate::error::{HeatlabError, Result};
use crate::grid::{Grid, GridSize};
use crate::render::preview::{reduced_size, reduction_factor};
use crate::render::{Colormap, Layer, Preview, PreviewRequest};

/// The diffusion kernels' source, embedded so that the binary needs no files beside it.
pub const DIFFUSION_SOURCE: &str = include_str!("../../../kernels/diffusion.cu");
/// The display kernels' source (reduce to the shown size, colormap).
pub const COLORMAP_SOURCE: &str = include_str!("../../../kernels/colormap.cu");

/// Threads per block of the Jacobi kernel (x along columns for coalescing, y down rows).
const JACOBI_BLOCK: (u32, u32) = (32, 8);
/// Must match `ROWS_PER_THREAD` in `kernels/diffusion.cu`.
const JACOBI_ROWS_PER_THREAD: u32 = 4;
/// Warps per block of the float4 and temporal kernels.
const WARPS_PER_BLOCK: u32 = 4;
/// Must match `SEED_TPB` in `kernels/diffusion.cu`.
const SEED_TILE: u32 = 8;

/// The diffusion kernels heatlab has, fastest exact one chosen per field size.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
pub enum CudaKernel {
    /// The tutorial's kernel ported faithfully: 8x8 tile, in place, Laplacian written each
    /// step. Races between blocks, Dirichlet only: a benchmark baseline, never the simulation.
    SeedFaithful,
    /// One step per launch, one column and 4 rows per thread, scalar loads.
    JacobiRows,
    /// One step per launch, float4 loads and stores, shuffles for the horizontal neighbours.
    /// Needs a column count divisible by 4.
    JacobiVec4 {
        /// Rows each thread computes (8 or 16).
        rows_per_thread: u32,
    },
    /// `steps_per_launch` steps per launch kept in registers (temporal blocking), each warp
    /// marching down `segment_rows` rows of a 128-column strip. Needs columns divisible by 4.
    Temporal {
        /// Steps per launch (4 or 8).
        steps_per_launch: u32,
        /// Rows each warp marches down.
        segment_rows: u32,
    },
}

impl std::fmt::Display for CudaKernel {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::SeedFaithful => f.write_str("seed-faithful"),
            Self::JacobiRows => f.write_str("jacobi-rows"),
            Self::JacobiVec4 { rows_per_thread } => write!(f, "jacobi-vec4-rows{rows_per_thread}"),
            Self::Temporal {
                steps_per_launch,
                segment_rows,
            } => write!(f, "temporal-k{steps_per_launch}-rows{segment_rows}"),
        }
    }
}

impl CudaKernel {
    /// Whether every step equals the reference Jacobi step (all but the seed's racing kernel).
    pub fn is_exact(self) -> bool {
        !matches!(self, Self::SeedFaithful)
    }

    /// Whether the kernel can step a field of this size.
    pub fn supports(self, size: GridSize) -> bool {
        match self {
            Self::SeedFaithful | Self::JacobiRows => true,
            Self::JacobiVec4 { .. } | Self::Temporal { .. } => size.cols % 4 == 0,
        }
    }

    /// The exact kernels worth trying for a size, in the order they are tried.
    pub fn exact_candidates(size: GridSize) -> Vec<Self> {
        let mut kernels = vec![
            Self::JacobiRows,
            Self::JacobiVec4 { rows_per_thread: 8 },
            Self::JacobiVec4 {
                rows_per_thread: 16,
            },
        ];
        for steps_per_launch in [4, 8] {
            for segment_rows in [16, 32, 64, 128] {
                kernels.push(Self::Temporal {
                    steps_per_launch,
                    segment_rows,
                });
            }
        }
        kernels.retain(|k| k.supports(size));
        kernels
    }
}

struct DiffusionKernels {
    jacobi: [CudaFunction; 3],
    jacobi_vec4_rows8: [CudaFunction; 3],
    jacobi_vec4_rows16: [CudaFunction; 3],
    temporal_k4: [CudaFunction; 3],
    temporal_k8: [CudaFunction; 3],
    laplacian: [CudaFunction; 3],
    seed_inplace: CudaFunction,
    block_mean: CudaFunction,
    colormap_rgba: CudaFunction,
}

struct FieldBuffers {
    size: GridSize,
    current: CudaSlice<f32>,
    next: CudaSlice<f32>,
    laplacian: Option<CudaSlice<f32>>,
    /// Whether `current` and `next` are swapped relative to their allocation: a captured graph
    /// holds the buffers' addresses, so it is valid only for the parity it was captured at.
    swapped: bool,
}

impl FieldBuffers {
    /// Makes the buffer just written the current one.
    fn flip(&mut self) {
        std::mem::swap(&mut self.current, &mut self.next);
        self.swapped = !self.swapped;
    }
}

impl FieldBuffers {
    /// The current field and the Laplacian buffer, which is allocated on first use.
    fn field_and_laplacian(
        &mut self,
        stream: &Arc<CudaStream>,
    ) -> Result<(&mut CudaSlice<f32>, &mut CudaSlice<f32>)> {
        let laplacian = match self.laplacian.take() {
            Some(buffer) => buffer,
            None => stream
                .alloc_zeros::<f32>(self.size.cells())
                .map_err(driver_error("allocating the Laplacian"))?,
        };
        let laplacian = self.laplacian.insert(laplacian);
        Ok((&mut self.current, laplacian))
    }
}

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

/// A captured graph of [`GRAPH_LAUNCHES`] launches.
struct CachedGraph {
    key: GraphKey,
    graph: CudaGraph,
}

// SAFETY: CUDA graphs must not be used from two threads at once; moving one to another thread
// is allowed (its launch binds the context to the calling thread first). A `CachedGraph` is
// owned by one `CudaBackend` and used only through `&mut self`, so it is never shared.
unsafe impl Send for CachedGraph {}

/// Device buffers of the display path, kept between frames: a preview is asked for twice per
/// frame, and allocating, uploading the colormap and freeing each time cost more than the
/// kernels. They grow when a larger preview is asked for and never shrink.
#[derive(Default)]
struct PreviewBuffers {
    values: Option<CudaSlice<f32>>,
    rgba: Option<CudaSlice<u8>>,
    /// Each colormap's 256 RGB entries, uploaded on first use.
    tables: Vec<(Colormap, CudaSlice<u8>)>,
}

/// `slot` holding at least `len` elements, reallocated only when it is too small.
fn buffer_of_at_least<'a, T: cudarc::driver::DeviceRepr + cudarc::driver::ValidAsZeroBits>(
    slot: &'a mut Option<CudaSlice<T>>,
    len: usize,
    stream: &Arc<CudaStream>,
) -> Result<&'a mut CudaSlice<T>> {
    if slot.as_ref().is_none_or(|buffer| buffer.len() < len) {
        // Free the old buffer before allocating its replacement.
        *slot = None;
        *slot = Some(
            stream
                .alloc_zeros::<T>(len)
                .map_err(driver_error("allocating the preview"))?,
        );
    }
    slot.as_mut()
        .ok_or_else(|| HeatlabError::InvalidInput("no preview buffer".into()))
}

/// Steps the field on an NVIDIA GPU.
pub struct CudaBackend {
    device: CudaDevice,
    kernels: DiffusionKernels,
    timer: GpuTimer,
    buffers: Option<FieldBuffers>,
    /// The kernel `advance` uses, chosen when a field of a new size is uploaded.
    selected: CudaKernel,
    /// Microseconds per step of each candidate measured when choosing.
    tuning: Vec<(CudaKernel, f64)>,
    /// The size `selected` was chosen for.
    tuned_size: Option<GridSize>,
    /// Launches replayed as CUDA graphs, at most one per buffer parity (see [`GraphKey`]);
    /// dropped with the buffers they point into.
    graphs: Vec<CachedGraph>,
    /// Whether long runs replay graphs; cleared if a capture ever fails, after which launches
    /// are queued one by one.
    graphs_enabled: bool,
    /// A kernel the user fixed instead of the tuned one.
    forced: Option<CudaKernel>,
    /// Graphs replayed since the backend was created.
    graph_replays: u64,
    /// The display path's buffers.
    preview: PreviewBuffers,
}

fn dims(size: GridSize) -> Result<(i32, i32)> {
    let rows = i32::try_from(size.rows).map_err(|_| {
        HeatlabError::InvalidInput(format!("{size} is too large for the GPU kernels"))
    })?;
    let cols = i32::try_from(size.cols).map_err(|_| {
        HeatlabError::InvalidInput(format!("{size} is too large for the GPU kernels"))
    })?;
    Ok((rows, cols))
}

impl CudaBackend {
    /// Opens GPU 0 and compiles the diffusion kernels, or says why that is not possible.
    pub fn new() -> Result<Self> {
        let device = CudaDevice::open()?;
        let module = device.load_kernels("diffusion.cu", DIFFUSION_SOURCE)?;
        let display = device.load_kernels("colormap.cu", COLORMAP_SOURCE)?;
        let load = |name: &str| device.function(&module, name);
        let per_boundary = |prefix: &str| -> Result<[CudaFunction; 3]> {
            Ok([
                load(&format!("{prefix}_dirichlet"))?,
                load(&format!("{prefix}_neumann"))?,
                load(&format!("{prefix}_periodic"))?,
            ])
        };
        let kernels = DiffusionKernels {
            jacobi: per_boundary("jacobi_step")?,
            jacobi_vec4_rows8: per_boundary("jacobi_step_vec4r8")?,
            jacobi_vec4_rows16: per_boundary("jacobi_step_vec4r16")?,
            temporal_k4: per_boundary("jacobi_temporal_k4w4")?,
            temporal_k8: per_boundary("jacobi_temporal_k8w4")?,
            laplacian: [
                load("laplacian_dirichlet")?,
                load("laplacian_neumann")?,
                load("laplacian_periodic")?,
            ],
            seed_inplace: load("seed_diffusion_inplace")?,
            block_mean: device.function(&display, "block_mean")?,
            colormap_rgba: device.function(&display, "colormap_rgba")?,
        };
        let timer = device.timer()?;
        Ok(Self {
            device,
            kernels,
            timer,
            buffers: None,
            selected: CudaKernel::JacobiRows,
            tuning: Vec::new(),
            tuned_size: None,
            graphs: Vec::new(),
            graphs_enabled: true,
            forced: None,
            graph_replays: 0,
            preview: PreviewBuffers::default(),
        })
    }

    /// The kernel `advance` uses for the current field.
    pub fn selected_kernel(&self) -> CudaKernel {
        self.selected
    }

    /// Microseconds per step of each candidate, as measured when the kernel was chosen.
    pub fn tuning_results(&self) -> &[(CudaKernel, f64)] {
        &self.tuning
    }

    /// Advances `steps` steps with a given kernel. Temporal kernels take whole launches of
    /// their step count and finish the remainder with single steps; all exact kernels give
    /// identical fields.
    pub fn advance_with(
        &mut self,
        kernel: CudaKernel,
        steps: u64,
        params: &StepParams,
    ) -> Result<Duration> {
        if kernel == CudaKernel::SeedFaithful {
            if params.boundary != Boundary::Dirichlet {
                return Err(HeatlabError::InvalidInput(
                    "the tutorial's kernel only knows the Dirichlet boundary".into(),
                ));
            }
            return self.advance_seed_faithful(steps, params.coeff);
        }
        let size = self
            .buffers
            .as_ref()
            .ok_or_else(|| HeatlabError::InvalidInput("no field has been uploaded".into()))?
            .size;
        if !kernel.supports(size) {
            return Err(HeatlabError::InvalidInput(format!(
                "kernel {kernel} cannot step a {size} field"
            )));
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
            _ => self.launch_steps(kernel, steps, params)?,
        }
        self.timer.stop()
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

    /// Fixes the kernel `advance` uses (`None`: the fastest exact one, chosen per size).
    /// Refuses a kernel that cannot step the held field or is not exact.
    pub fn set_kernel(&mut self, kernel: Option<CudaKernel>) -> Result<()> {
        if let Some(kernel) = kernel {
            if !kernel.is_exact() {
                return Err(HeatlabError::InvalidInput(format!(
                    "{kernel} races and is not exact: it is a benchmark baseline only"
                )));
            }
            if let Some(buffers) = &self.buffers {
                if !kernel.supports(buffers.size) {
                    return Err(HeatlabError::InvalidInput(format!(
                        "kernel {kernel} cannot step a {} field",
                        buffers.size
                    )));
                }
            }
        }
        self.forced = kernel;
        Ok(())
    }

    /// The kernel `advance` uses for the held field: the fixed one if it fits, else the tuned one.
    fn stepping_kernel(&self) -> CudaKernel {
        match (self.forced, &self.buffers) {
            (Some(kernel), Some(buffers)) if kernel.supports(buffers.size) => kernel,
            _ => self.selected,
        }
    }

    /// Queues `launches` launches one by one (see [`Self::launch_steps`]).
    fn launch_steps_directly(
        &mut self,
        kernel: CudaKernel,
        launches: u64,
        params: &StepParams,
    ) -> Result<()> {
        let stream = self.device.stream().clone();
        let bc = params.boundary.kernel_index();
        let buffers = self
            .buffers
            .as_mut()
            .ok_or_else(|| HeatlabError::InvalidInput("no field has been uploaded".into()))?;
        let (rows, cols) = dims(buffers.size)?;
        let (urows, ucols) = (rows as u32, cols as u32);
        let coeff = params.coeff;
        let (function, config, segment_rows) = match kernel {
            CudaKernel::JacobiRows => (
                &self.kernels.jacobi[bc],
                LaunchConfig {
                    grid_dim: (
                        ucols.div_ceil(JACOBI_BLOCK.0),
                        urows.div_ceil(JACOBI_BLOCK.1 * JACOBI_ROWS_PER_THREAD),
                        1,
                    ),
                    block_dim: (JACOBI_BLOCK.0, JACOBI_BLOCK.1, 1),
                    shared_mem_bytes: 0,
                },
                None,
            ),
            CudaKernel::JacobiVec4 { rows_per_thread } => (
                if rows_per_thread == 8 {
                    &self.kernels.jacobi_vec4_rows8[bc]
                } else {
                    &self.kernels.jacobi_vec4_rows16[bc]
                },
                // Warps side by side: the scalar loads at a warp's edges hit the neighbouring
                // warp's lines in L1.
                LaunchConfig {
                    grid_dim: (
                        (ucols / 4).div_ceil(32 * WARPS_PER_BLOCK),
                        urows.div_ceil(rows_per_thread),
                        1,
                    ),
                    block_dim: (32 * WARPS_PER_BLOCK, 1, 1),
                    shared_mem_bytes: 0,
                },
                None,
            ),
            CudaKernel::Temporal {
                steps_per_launch,
                segment_rows,
            } => {
                let output_cols = 128 - 2 * steps_per_launch;
                let segments = urows.div_ceil(segment_rows);
                let function = match steps_per_launch {
                    4 => &self.kernels.temporal_k4[bc],
                    8 => &self.kernels.temporal_k8[bc],
                    _ => {
                        return Err(HeatlabError::InvalidInput(format!(
                            "no temporal kernel for {kernel}"
                        )))
                    }
                };
                (
                    function,
                    LaunchConfig {
                        grid_dim: (
                            ucols.div_ceil(output_cols),
                            segments.div_ceil(WARPS_PER_BLOCK),
                            1,
                        ),
                        block_dim: (32, WARPS_PER_BLOCK, 1),
                        shared_mem_bytes: 0,
                    },
                    Some(segment_rows as i32),
                )
            }
            CudaKernel::SeedFaithful => {
                return Err(HeatlabError::InvalidInput(
                    "the seed kernel steps in place".into(),
                ))
            }
        };
        for _ in 0..launches {
            let mut launch = stream.launch_builder(function);
            launch
                .arg(&buffers.current)
                .arg(&mut buffers.next)
                .arg(&rows)
                .arg(&cols)
                .arg(&coeff);
            if let Some(segment_rows) = segment_rows.as_ref() {
                launch.arg(segment_rows);
                // SAFETY: jacobi_temporal_k*w*_*(const float* in, float* out, int rows, int cols,
                // float coeff, int segment_rows): distinct buffers of rows*cols floats, cols % 4 == 0
                // (checked by `supports`) so float4 accesses are aligned; warps outside the grid
                // return and lanes outside it neither read unwrapped nor write.
                unsafe { launch.launch(config) }
                    .map_err(driver_error("launching jacobi_temporal"))?;
            } else {
                // SAFETY: jacobi_step{,_vec4}_*(const float* in, float* out, int rows, int cols,
                // float coeff): distinct buffers of rows*cols floats; the vec4 kernel is only
                // chosen when cols % 4 == 0; threads outside rows x cols neither read nor write.
                unsafe { launch.launch(config) }.map_err(driver_error("launching jacobi_step"))?;
            }
            buffers.flip();
        }
        Ok(())
    }

    /// Times every exact kernel on the uploaded field and selects the fastest; the field is
    /// restored from `field` afterwards.
    fn choose_kernel(&mut self, field: &Grid) -> Result<()> {
        let size = field.size();
        let params = StepParams::default();
        // About 2e8 cell updates per trial: long enough to time, short enough to be unnoticed.
        let steps = ((2e8 / size.cells() as f64) as u64)
            .clamp(8, 512)
            .div_ceil(8)
            * 8;
        let mut results = Vec::new();
        for kernel in CudaKernel::exact_candidates(size) {
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
        let stream = self.device.stream().clone();
        let buffers = self.buffers()?;
        stream
            .memcpy_htod(field.as_slice(), &mut buffers.current)
            .map_err(driver_error("restoring the field"))?;
        Ok(())
    }

    /// The open device.
    pub fn device(&self) -> &CudaDevice {
        &self.device
    }

    fn buffers(&mut self) -> Result<&mut FieldBuffers> {
        self.buffers
            .as_mut()
            .ok_or_else(|| HeatlabError::InvalidInput("no field has been uploaded".into()))
    }

    /// Steps with a faithful port of the tutorial's kernel (8x8 tile, in place, Laplacian
    /// written each step). A benchmark baseline only: it races between blocks and knows only
    /// the Dirichlet boundary.
    pub fn advance_seed_faithful(&mut self, steps: u64, coeff: f32) -> Result<Duration> {
        let stream = self.device.stream().clone();
        let function = self.kernels.seed_inplace.clone();
        let buffers = self
            .buffers
            .as_mut()
            .ok_or_else(|| HeatlabError::InvalidInput("no field has been uploaded".into()))?;
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
            let mut launch = stream.launch_builder(&function);
            launch
                .arg(&mut *current)
                .arg(&mut *laplacian)
                .arg(&rows)
                .arg(&cols)
                .arg(&coeff);
            // SAFETY: seed_diffusion_inplace(float* field, float* lapl, int rows, int cols, float coeff):
            // both buffers hold rows*cols floats and the grid covers exactly rows x cols cells.
            unsafe { launch.launch(config) }
                .map_err(driver_error("launching seed_diffusion_inplace"))?;
        }
        self.timer.stop()
    }

    /// Computes the Laplacian of the current field into the device's Laplacian buffer.
    fn compute_laplacian_on_device(&mut self, boundary: Boundary) -> Result<()> {
        let stream = self.device.stream().clone();
        let function = self.kernels.laplacian[boundary.kernel_index()].clone();
        let buffers = self.buffers()?;
        let size = buffers.size;
        let (rows, cols) = dims(size)?;
        let (current, laplacian) = buffers.field_and_laplacian(&stream)?;
        let config = LaunchConfig {
            grid_dim: ((cols as u32).div_ceil(32), (rows as u32).div_ceil(8), 1),
            block_dim: (32, 8, 1),
            shared_mem_bytes: 0,
        };
        let mut launch = stream.launch_builder(&function);
        launch
            .arg(&*current)
            .arg(&mut *laplacian)
            .arg(&rows)
            .arg(&cols);
        // SAFETY: laplacian_*(const float* f, float* lapl, int rows, int cols): both buffers hold
        // rows*cols floats; threads outside rows x cols return.
        unsafe { launch.launch(config) }.map_err(driver_error("launching laplacian"))?;
        Ok(())
    }

    /// Times `repeats` device-to-device copies of the field (a read and a write of every cell),
    /// the bandwidth a single-step kernel is measured against.
    pub fn time_field_copy(&mut self, repeats: u64) -> Result<Duration> {
        let stream = self.device.stream().clone();
        let buffers = self
            .buffers
            .as_mut()
            .ok_or_else(|| HeatlabError::InvalidInput("no field has been uploaded".into()))?;
        let FieldBuffers { current, next, .. } = buffers;
        let (current, next) = (&*current, next);
        self.timer.start()?;
        for _ in 0..repeats {
            stream
                .memcpy_dtod(current, next)
                .map_err(driver_error("copying the field on the GPU"))?;
        }
        self.timer.stop()
    }
}

impl Backend for CudaBackend {
    fn kind(&self) -> BackendKind {
        BackendKind::Cuda
    }

    fn device_name(&self) -> String {
        self.device.name().to_string()
    }

    fn step_method(&self) -> String {
        format!("cuda-{}", self.stepping_kernel())
    }

    fn upload(&mut self, field: &Grid) -> Result<()> {
        let size = field.size();
        dims(size)?;
        // Release the old field (and the graphs that point into it) first so that its memory
        // counts as free.
        self.graphs.clear();
        self.buffers = None;
        let (free, _) = self.device.memory_info()?;
        crate::memory::ensure_gpu_memory(
            &format!("{size} field (current, next and Laplacian buffers)"),
            3 * size.bytes(),
            free,
        )?;
        let stream = self.device.stream();
        let current = stream
            .clone_htod(field.as_slice())
            .map_err(driver_error("uploading the field"))?;
        let next = stream
            .alloc_zeros::<f32>(size.cells())
            .map_err(driver_error("allocating the field's second buffer"))?;
        let new_size = self.tuned_size != Some(size);
        self.buffers = Some(FieldBuffers {
            size,
            current,
            next,
            laplacian: None,
            swapped: false,
        });
        if new_size {
            self.choose_kernel(field)?;
            self.tuned_size = Some(size);
        }
        Ok(())
    }

    fn advance(&mut self, steps: u64, params: &StepParams) -> Result<Duration> {
        self.advance_with(self.stepping_kernel(), steps, params)
    }

    fn download(&mut self) -> Result<Grid> {
        let stream = self.device.stream().clone();
        let buffers = self.buffers()?;
        let size = buffers.size;
        let data = stream
            .clone_dtoh(&buffers.current)
            .map_err(driver_error("downloading the field"))?;
        stream
            .synchronize()
            .map_err(driver_error("downloading the field"))?;
        Grid::from_vec(size, data)
    }

    fn laplacian(&mut self, boundary: Boundary) -> Result<Grid> {
        self.compute_laplacian_on_device(boundary)?;
        let stream = self.device.stream().clone();
        let buffers = self.buffers()?;
        let size = buffers.size;
        let Some(laplacian) = buffers.laplacian.as_ref() else {
            return Err(HeatlabError::InvalidInput("no Laplacian buffer".into()));
        };
        let data = stream
            .clone_dtoh(laplacian)
            .map_err(driver_error("downloading the Laplacian"))?;
        stream
            .synchronize()
            .map_err(driver_error("downloading the Laplacian"))?;
        Grid::from_vec(size, data)
    }

    fn render_preview(&mut self, request: &PreviewRequest) -> Result<Preview> {
        if request.layer == Layer::Laplacian {
            self.compute_laplacian_on_device(request.boundary)?;
        }
        let stream = self.device.stream().clone();
        let block_mean = self.kernels.block_mean.clone();
        let colormap_rgba = self.kernels.colormap_rgba.clone();
        let Some(buffers) = self.buffers.as_ref() else {
            return Err(HeatlabError::InvalidInput(
                "no field has been uploaded".into(),
            ));
        };
        let size = buffers.size;
        let source = match request.layer {
            Layer::Field => &buffers.current,
            Layer::Laplacian => buffers
                .laplacian
                .as_ref()
                .ok_or_else(|| HeatlabError::InvalidInput("no Laplacian buffer".into()))?,
        };
        let factor = reduction_factor(size, request.max_size);
        let reduced = reduced_size(size, factor);
        let (rows, cols) = dims(size)?;
        let (out_rows, out_cols) = dims(reduced)?;
        let factor_arg = i32::try_from(factor)
            .map_err(|_| HeatlabError::InvalidInput("reduction factor too large".into()))?;
        let pixels = reduced.cells();
        let PreviewBuffers {
            values: values_slot,
            rgba: rgba_slot,
            tables,
        } = &mut self.preview;
        let values_dev = buffer_of_at_least(values_slot, pixels, &stream)?;
        let config = LaunchConfig {
            grid_dim: (
                (out_cols as u32).div_ceil(32),
                (out_rows as u32).div_ceil(8),
                1,
            ),
            block_dim: (32, 8, 1),
            shared_mem_bytes: 0,
        };
        let mut launch = stream.launch_builder(&block_mean);
        launch
            .arg(source)
            .arg(&mut *values_dev)
            .arg(&rows)
            .arg(&cols)
            .arg(&factor_arg)
            .arg(&out_rows)
            .arg(&out_cols);
        // SAFETY: block_mean(const float* field, float* out, int rows, int cols, int factor,
        // int out_rows, int out_cols): `source` holds rows*cols floats, `values_dev` holds
        // at least out_rows*out_cols = ceil(rows/factor)*ceil(cols/factor); threads outside return.
        unsafe { launch.launch(config) }.map_err(driver_error("launching block_mean"))?;
        let values = stream
            .clone_dtoh(&values_dev.slice(..pixels))
            .map_err(driver_error("downloading the preview"))?;
        stream
            .synchronize()
            .map_err(driver_error("downloading the preview"))?;
        let values = Grid::from_vec(reduced, values)?;
        let range = request.range_mode.resolve(&values);
        if !tables.iter().any(|(map, _)| *map == request.colormap) {
            let lut: Vec<u8> = request.colormap.table().iter().flatten().copied().collect();
            let lut_dev = stream
                .clone_htod(&lut)
                .map_err(driver_error("uploading the colormap"))?;
            tables.push((request.colormap, lut_dev));
        }
        let Some((_, lut_dev)) = tables.iter().find(|(map, _)| *map == request.colormap) else {
            return Err(HeatlabError::InvalidInput("colormap table missing".into()));
        };
        let rgba_dev = buffer_of_at_least(rgba_slot, pixels * 4, &stream)?;
        let n = i32::try_from(pixels)
            .map_err(|_| HeatlabError::InvalidInput("preview too large".into()))?;
        let config = LaunchConfig::for_num_elems(pixels as u32);
        let mut launch = stream.launch_builder(&colormap_rgba);
        launch
            .arg(&*values_dev)
            .arg(lut_dev)
            .arg(&mut *rgba_dev)
            .arg(&n)
            .arg(&range.min)
            .arg(&range.max);
        // SAFETY: colormap_rgba(const float* values, const uchar* lut, uchar* rgba, int n,
        // float lo, float hi): values holds at least n floats, lut 768 bytes, rgba at least 4*n
        // bytes; threads with i >= n return.
        unsafe { launch.launch(config) }.map_err(driver_error("launching colormap_rgba"))?;
        let rgba = stream
            .clone_dtoh(&rgba_dev.slice(..pixels * 4))
            .map_err(driver_error("downloading the preview"))?;
        stream
            .synchronize()
            .map_err(driver_error("downloading the preview"))?;
        Ok(Preview {
            factor,
            values,
            rgba,
            range,
        })
    }
}
