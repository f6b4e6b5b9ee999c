//! The CUDA backend: `kernels/diffusion.cu`, compiled by NVRTC, on the device's own stream.

pub mod device;
mod edit;
mod field;
mod kernel;
mod stepping;
pub mod user_kernel;

use std::time::{Duration, Instant};

use std::sync::Arc;

use cudarc::driver::{
    CudaContext, CudaFunction, CudaSlice, CudaStream, LaunchConfig, PinnedHostSlice, PushKernelArg,
};

pub use device::{driver_error, CudaDevice, GpuTimer};
pub use field::FIELD_SOURCE;
pub use kernel::{CudaKernel, KernelChoice};
use stepping::{CachedGraph, Lookahead};
pub use user_kernel::UserContract;

use super::preview::{reduced_size, reduction_factor, Layer, PreviewSpec, ReducedPreview};
use super::{
    Advance, Backend, BackendKind, Boundary, DeviceFieldUnavailable, FieldStats, StepParams,
};
use crate::error::{HeatlabError, Result};
use crate::field::JaggedParams;
use crate::grid::{Grid, GridSize};

/// The diffusion kernels' source, embedded so that the binary needs no files beside it.
pub const DIFFUSION_SOURCE: &str = include_str!("../../../kernels/diffusion.cu");
/// The display kernels' source (reduce to the shown size, statistics).
pub const DISPLAY_SOURCE: &str = include_str!("../../../kernels/display.cu");

struct DiffusionKernels {
    shared: [CudaFunction; 3],
    jacobi: [CudaFunction; 3],
    jacobi_vec4_rows8: [CudaFunction; 3],
    jacobi_vec4_rows16: [CudaFunction; 3],
    temporal_k4: [CudaFunction; 3],
    temporal_k8: [CudaFunction; 3],
    laplacian: [CudaFunction; 3],
    seed_inplace: CudaFunction,
    block_mean: CudaFunction,
    field_stats: CudaFunction,
}

/// Blocks and threads per block of `field_stats` (kernels/display.cu): fixed, so that a field
/// always gives the same total.
const STATS_BLOCKS: usize = 528;
const STATS_THREADS: u32 = 256;

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

/// Device buffers of the display path, kept between frames: a preview is asked for twice per
/// frame, and allocating, uploading the colormap and freeing each time cost more than the
/// kernels. They grow when a larger preview is asked for and never shrink.
#[derive(Default)]
struct PreviewBuffers {
    values: Option<CudaSlice<f32>>,
    /// Page-locked host copy of `values`: a copy from the device into it runs at the bus's
    /// speed, where one into pageable memory is staged by the driver.
    values_host: Option<PinnedHostSlice<f32>>,
    /// Partial sums, minima and maxima of the statistics kernel, on the device and pinned.
    stats: Option<CudaSlice<f64>>,
    stats_host: Option<PinnedHostSlice<f64>>,
}

/// `slot` holding at least `len` page-locked elements, reallocated only when it is too small.
fn pinned_of_at_least<'a, T: cudarc::driver::DeviceRepr>(
    slot: &'a mut Option<PinnedHostSlice<T>>,
    len: usize,
    context: &Arc<CudaContext>,
) -> Result<&'a mut PinnedHostSlice<T>> {
    if slot.as_ref().is_none_or(|buffer| buffer.len() < len) {
        *slot = None;
        // SAFETY: the memory is uninitialised until a copy from the device fills it; it is
        // read only after such a copy (of at least the part read). No write-combining flag:
        // the host reads these buffers, and reads of write-combined memory are uncached.
        let buffer = unsafe { context.alloc_pinned_with_flags::<T>(len, 0) }
            .map_err(driver_error("allocating page-locked memory"))?;
        *slot = Some(buffer);
    }
    slot.as_mut()
        .ok_or_else(|| HeatlabError::Internal("no page-locked buffer".into()))
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
        .ok_or_else(|| HeatlabError::Internal("no preview buffer".into()))
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
    /// The kernel the user chose (auto: the tuned one).
    choice: KernelChoice,
    /// The Kernel lab's kernel, once loaded.
    user: Option<user_kernel::LoadedUserKernel>,
    /// A step computed ahead by the Laplacian view (see [`Lookahead`]).
    lookahead: Option<Lookahead>,
    /// The parameters of the last advance.
    last_params: Option<StepParams>,
    /// Graphs replayed since the backend was created.
    graph_replays: u64,
    /// The display path's buffers.
    preview: PreviewBuffers,
    /// When timing the display path stage by stage: the timer and the stages timed.
    stage_profile: Option<(GpuTimer, Vec<StageTiming>)>,
    /// Set while `start_advance` queues: stepping marks the end of its timing without waiting.
    defer_timing: bool,
    /// An advance queued by `start_advance`: `None`, queued (`Some(None)`), or already waited
    /// for by another call (`Some(Some(time))`), until `finish_advance` collects it.
    in_flight: Option<Option<Duration>>,
    /// Brush, gather and scatter (`kernels/brush.cu`).
    edit_kernels: edit::EditKernels,
    /// The jagged field's generation on the device, once asked for (or why it cannot run).
    field_generator: Option<std::result::Result<field::FieldGenerator, DeviceFieldUnavailable>>,
}

/// One call of the display path, timed on its own (`heatlab bench --display`).
#[derive(Debug, Clone)]
pub struct StageTiming {
    /// The layer being drawn.
    pub layer: Layer,
    /// What the call does.
    pub stage: &'static str,
    /// Host time of the call, from its start until the GPU finished it.
    pub host: Duration,
    /// GPU time between events around it.
    pub device: Duration,
}

fn dims(size: GridSize) -> Result<(i32, i32)> {
    let rows = i32::try_from(size.rows).map_err(|_| {
        HeatlabError::Unsupported(format!("{size} is too large for the GPU kernels"))
    })?;
    let cols = i32::try_from(size.cols).map_err(|_| {
        HeatlabError::Unsupported(format!("{size} is too large for the GPU kernels"))
    })?;
    Ok((rows, cols))
}

impl CudaBackend {
    /// Opens GPU 0 and compiles the diffusion kernels, or says why that is not possible.
    pub fn new() -> Result<Self> {
        let device = CudaDevice::open()?;
        let module = device.load_kernels("diffusion.cu", DIFFUSION_SOURCE)?;
        let display = device.load_kernels("display.cu", DISPLAY_SOURCE)?;
        let load = |name: &str| device.function(&module, name);
        let per_boundary = |prefix: &str| -> Result<[CudaFunction; 3]> {
            Ok([
                load(&format!("{prefix}_dirichlet"))?,
                load(&format!("{prefix}_neumann"))?,
                load(&format!("{prefix}_periodic"))?,
            ])
        };
        let kernels = DiffusionKernels {
            shared: per_boundary("shared_step")?,
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
            field_stats: device.function(&display, "field_stats")?,
        };
        let timer = device.timer()?;
        let edit_kernels = edit::EditKernels::load(&device)?;
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
            choice: KernelChoice::Auto,
            user: None,
            lookahead: None,
            last_params: None,
            graph_replays: 0,
            preview: PreviewBuffers::default(),
            stage_profile: None,
            defer_timing: false,
            in_flight: None,
            edit_kernels,
            field_generator: None,
        })
    }

    /// Generates the jagged field of `params` on the GPU and makes it the held field, with
    /// cuFFT; returns the GPU's time for it. Says why when it cannot (cuFFT missing, not
    /// enough memory, a CUDA error), and the caller generates on the CPU instead.
    pub fn generate_jagged_on_device(
        &mut self,
        params: &JaggedParams,
    ) -> std::result::Result<Duration, DeviceFieldUnavailable> {
        let failed = |error: HeatlabError| DeviceFieldUnavailable::Failed(error.to_string());
        if self.field_generator.is_none() {
            self.field_generator = Some(field::FieldGenerator::new(&self.device));
        }
        self.settle().map_err(failed)?;
        params.validate().map_err(failed)?;
        let size = params.size;
        dims(size).map_err(failed)?;
        let same_size = self.buffers.as_ref().is_some_and(|b| b.size == size);
        if !same_size {
            self.graphs.clear();
            self.buffers = None;
            let (free, _) = self.device.memory_info().map_err(failed)?;
            crate::memory::ensure_gpu_memory(
                &format!("{size} field (current, next and Laplacian buffers)"),
                3 * size.bytes(),
                free,
            )
            .map_err(failed)?;
            let stream = self.device.stream();
            let allocate = |what: &'static str| {
                stream
                    .alloc_zeros::<f32>(size.cells())
                    .map_err(|e| failed(driver_error(what)(e)))
            };
            self.buffers = Some(FieldBuffers {
                size,
                current: allocate("allocating the field")?,
                next: allocate("allocating the field's second buffer")?,
                laplacian: None,
                swapped: false,
            });
        }
        self.lookahead = None;
        self.last_params = None;
        let (free, _) = self.device.memory_info().map_err(failed)?;
        let stream = self.device.stream().clone();
        let Some(Ok(generator)) = self.field_generator.as_mut() else {
            return Err(match self.field_generator.as_ref() {
                Some(Err(why)) => why.clone(),
                _ => DeviceFieldUnavailable::Failed("no field generator".into()),
            });
        };
        let Some(buffers) = self.buffers.as_mut() else {
            return Err(failed(HeatlabError::NoField));
        };
        self.timer.start().map_err(failed)?;
        generator
            .generate(params, &stream, free, &mut buffers.current)
            .map_err(failed)?;
        let elapsed = self.timer.stop().map_err(failed)?;
        // Keep the plans and buffers for the next generation of this size (dragging a
        // parameter) only while they take a small share of the GPU's memory.
        let (_, total) = self.device.memory_info().map_err(failed)?;
        if field::FieldGenerator::bytes_needed(size) > total / 8 {
            generator.release();
        }
        if self.tuned_size != Some(size) {
            self.choose_kernel().map_err(failed)?;
            self.tuned_size = Some(size);
        }
        Ok(elapsed)
    }

    /// The kernel `advance` uses for the current field.
    pub fn selected_kernel(&self) -> CudaKernel {
        self.selected
    }

    /// Microseconds per step of each candidate, as measured when the kernel was chosen.
    pub fn tuning_results(&self) -> &[(CudaKernel, f64)] {
        &self.tuning
    }

    /// The open device.
    pub fn device(&self) -> &CudaDevice {
        &self.device
    }

    fn buffers(&mut self) -> Result<&mut FieldBuffers> {
        self.buffers.as_mut().ok_or(HeatlabError::NoField)
    }

    /// Computes the Laplacian of the current field into the device's Laplacian buffer.
    fn compute_laplacian_on_device(&mut self, boundary: Boundary) -> Result<()> {
        if self.laplacian_by_lookahead(boundary)? {
            return Ok(());
        }
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

    /// Launches the means of `layer` over blocks of `factor` x `factor` cells into the
    /// preview's values buffer (`reduced` of them).
    fn launch_block_mean(&mut self, layer: Layer, factor: usize, reduced: GridSize) -> Result<()> {
        let stream = self.device.stream().clone();
        let block_mean = self.kernels.block_mean.clone();
        let Some(buffers) = self.buffers.as_ref() else {
            return Err(HeatlabError::NoField);
        };
        let size = buffers.size;
        let source = match layer {
            Layer::Field => &buffers.current,
            Layer::Laplacian => buffers
                .laplacian
                .as_ref()
                .ok_or_else(|| HeatlabError::Internal("no Laplacian buffer".into()))?,
        };
        let (rows, cols) = dims(size)?;
        let (out_rows, out_cols) = dims(reduced)?;
        let factor_arg = i32::try_from(factor)
            .map_err(|_| HeatlabError::Unsupported("reduction factor too large".into()))?;
        let values_dev = buffer_of_at_least(&mut self.preview.values, reduced.cells(), &stream)?;
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
        Ok(())
    }

    /// Downloads the first `pixels` values of the preview's values buffer into its page-locked
    /// host buffer, and waits for the copy.
    fn download_block_means(&mut self, pixels: usize) -> Result<()> {
        let stream = self.device.stream().clone();
        let PreviewBuffers {
            values,
            values_host,
            ..
        } = &mut self.preview;
        let values_dev = values
            .as_ref()
            .filter(|buffer| buffer.len() >= pixels)
            .ok_or_else(|| HeatlabError::Internal("the preview's values are missing".into()))?;
        let host = pinned_of_at_least(values_host, pixels, self.device.context())?;
        stream
            .memcpy_dtoh(&values_dev.slice(..pixels), host)
            .map_err(driver_error("downloading the preview"))?;
        // Event tracking is off in this context (see `CudaDevice::open`), so the pinned
        // slice's own event is never recorded: wait for the stream before reading it.
        stream
            .synchronize()
            .map_err(driver_error("downloading the preview"))
    }

    /// The downloaded block means (see [`Self::download_block_means`]) copied out of the
    /// page-locked buffer into `storage`, reused when it is large enough: a new megabyte per
    /// preview cost page faults, which were most of this copy's time.
    fn copy_out_block_means(&self, reduced: GridSize, mut storage: Vec<f32>) -> Result<Grid> {
        let pixels = reduced.cells();
        let copied = self
            .preview
            .values_host
            .as_ref()
            .filter(|buffer| buffer.len() >= pixels)
            .ok_or_else(|| HeatlabError::Internal("the preview's means are missing".into()))?
            .as_slice()
            .map_err(driver_error("downloading the preview"))?;
        storage.clear();
        storage.extend_from_slice(&copied[..pixels]);
        Grid::from_vec(reduced, storage)
    }

    /// Ends the timing of an advance: waits and returns its time, or, while `start_advance`
    /// queues, only marks the end.
    pub(super) fn stop_timing(&mut self) -> Result<Duration> {
        if self.defer_timing {
            self.timer.mark_end()?;
            Ok(Duration::ZERO)
        } else {
            self.timer.stop()
        }
    }

    /// Waits for an advance queued by `start_advance`, keeping its time for `finish_advance`:
    /// the timer is about to be used again, or the buffers replaced.
    pub(super) fn settle(&mut self) -> Result<()> {
        if let Some(None) = self.in_flight {
            self.in_flight = Some(Some(self.timer.elapsed()?));
        }
        Ok(())
    }

    /// Starts (or stops) timing each call of the display path on its own (`heatlab bench
    /// --display`): every stage then waits for the GPU before and after, so the figures are
    /// the stages' own, not a frame's.
    pub fn profile_display(&mut self, on: bool) -> Result<()> {
        self.stage_profile = if on {
            Some((self.device.timer()?, Vec::new()))
        } else {
            None
        };
        Ok(())
    }

    /// The stages timed since the last call (see [`Self::profile_display`]).
    pub fn take_display_profile(&mut self) -> Vec<StageTiming> {
        self.stage_profile
            .as_mut()
            .map(|(_, log)| std::mem::take(log))
            .unwrap_or_default()
    }

    /// Runs `work` as the display stage `stage` of `layer`, timed when profiling.
    fn stage<T>(
        &mut self,
        layer: Layer,
        stage: &'static str,
        work: impl FnOnce(&mut Self) -> Result<T>,
    ) -> Result<T> {
        let Some((timer, mut log)) = self.stage_profile.take() else {
            return work(self);
        };
        let timed = (|| {
            self.device.synchronize()?;
            let host = Instant::now();
            timer.start()?;
            let value = work(self)?;
            let device = timer.stop()?;
            Ok((value, host.elapsed(), device))
        })();
        let result = timed.map(|(value, host, device)| {
            log.push(StageTiming {
                layer,
                stage,
                host,
                device,
            });
            value
        });
        self.stage_profile = Some((timer, log));
        result
    }

    /// Times `repeats` device-to-device copies of the field (a read and a write of every cell),
    /// the bandwidth a single-step kernel is measured against.
    pub fn time_field_copy(&mut self, repeats: u64) -> Result<Duration> {
        self.settle()?;
        self.lookahead = None;
        let stream = self.device.stream().clone();
        let buffers = self.buffers.as_mut().ok_or(HeatlabError::NoField)?;
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
        match self.stepper() {
            stepping::Stepper::Builtin(kernel) => format!("cuda-{kernel}"),
            stepping::Stepper::User => "cuda-user".into(),
        }
    }

    fn upload(&mut self, field: &Grid) -> Result<()> {
        self.settle()?;
        let size = field.size();
        dims(size)?;
        // Release the old field (and the graphs that point into it) first so that its memory
        // counts as free.
        self.graphs.clear();
        self.buffers = None;
        self.lookahead = None;
        self.last_params = None;
        if let Some(Ok(generator)) = self.field_generator.as_mut() {
            generator.release();
        }
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
            self.choose_kernel()?;
            self.tuned_size = Some(size);
        }
        Ok(())
    }

    fn advance(&mut self, steps: u64, params: &StepParams) -> Result<Duration> {
        self.settle()?;
        self.advance_stepper(steps, params)
    }

    fn start_advance(&mut self, steps: u64, params: &StepParams) -> Result<Advance> {
        if self.in_flight.is_some() {
            return Err(HeatlabError::Internal(
                "an advance is already queued on the GPU".into(),
            ));
        }
        self.defer_timing = true;
        let queued = self.advance_stepper(steps, params);
        self.defer_timing = false;
        queued?;
        self.in_flight = Some(None);
        Ok(Advance::Queued)
    }

    fn finish_advance(&mut self) -> Result<Duration> {
        match self.in_flight.take() {
            None => Err(HeatlabError::Internal("no advance is queued".into())),
            Some(Some(elapsed)) => Ok(elapsed),
            Some(None) => self.timer.elapsed(),
        }
    }

    fn statistics(&mut self) -> Result<FieldStats> {
        let stream = self.device.stream().clone();
        let function = self.kernels.field_stats.clone();
        let buffers = self.buffers.as_ref().ok_or(HeatlabError::NoField)?;
        let cells = i64::try_from(buffers.size.cells())
            .map_err(|_| HeatlabError::Unsupported("field too large".into()))?;
        let PreviewBuffers {
            stats, stats_host, ..
        } = &mut self.preview;
        let partial_dev = buffer_of_at_least(stats, 3 * STATS_BLOCKS, &stream)?;
        let config = LaunchConfig {
            grid_dim: (STATS_BLOCKS as u32, 1, 1),
            block_dim: (STATS_THREADS, 1, 1),
            shared_mem_bytes: 0,
        };
        let mut launch = stream.launch_builder(&function);
        launch
            .arg(&buffers.current)
            .arg(&cells)
            .arg(&mut *partial_dev);
        // SAFETY: field_stats(const float* field, long long n, double* partial): the field
        // holds n floats, partial at least 3 * STATS_BLOCKS doubles; the grid is STATS_BLOCKS
        // blocks of STATS_THREADS threads, as the kernel's shared arrays assume.
        unsafe { launch.launch(config) }.map_err(driver_error("launching field_stats"))?;
        let host = pinned_of_at_least(stats_host, 3 * STATS_BLOCKS, self.device.context())?;
        stream
            .memcpy_dtoh(&partial_dev.slice(..3 * STATS_BLOCKS), host)
            .map_err(driver_error("downloading the statistics"))?;
        // As in `download_block_means`: the pinned slice's event is not recorded here.
        stream
            .synchronize()
            .map_err(driver_error("downloading the statistics"))?;
        let partial = host
            .as_slice()
            .map_err(driver_error("downloading the statistics"))?;
        let mut combined = FieldStats {
            total: 0.0,
            min: f32::INFINITY,
            max: f32::NEG_INFINITY,
        };
        for block in partial[..3 * STATS_BLOCKS].chunks_exact(3) {
            combined.total += block[0];
            combined.min = combined.min.min(block[1] as f32);
            combined.max = combined.max.max(block[2] as f32);
        }
        Ok(combined)
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
            return Err(HeatlabError::Internal("no Laplacian buffer".into()));
        };
        let data = stream
            .clone_dtoh(laplacian)
            .map_err(driver_error("downloading the Laplacian"))?;
        stream
            .synchronize()
            .map_err(driver_error("downloading the Laplacian"))?;
        Grid::from_vec(size, data)
    }

    fn generate_jagged(
        &mut self,
        params: &JaggedParams,
    ) -> std::result::Result<Duration, DeviceFieldUnavailable> {
        self.generate_jagged_on_device(params)
    }

    fn cuda_mut(&mut self) -> Option<&mut CudaBackend> {
        Some(self)
    }

    fn cuda(&self) -> Option<&CudaBackend> {
        Some(self)
    }

    fn apply_brush(&mut self, stamp: &super::BrushStamp) -> Result<()> {
        self.stamp_on_device(stamp)
    }

    fn gather(&mut self, cells: &[u32]) -> Result<Vec<f32>> {
        self.gather_on_device(cells)
    }

    fn scatter(&mut self, cells: &[u32], values: &[f32]) -> Result<()> {
        self.scatter_on_device(cells, values)
    }

    fn reduce_preview_into(
        &mut self,
        spec: &PreviewSpec<'_>,
        storage: Vec<f32>,
    ) -> Result<ReducedPreview> {
        let layer = spec.layer;
        if layer == Layer::Laplacian {
            self.stage(layer, "Laplacian kernel", |s| {
                s.compute_laplacian_on_device(spec.boundary)
            })?;
        }
        let size = self.buffers.as_ref().ok_or(HeatlabError::NoField)?.size;
        let factor = reduction_factor(size, spec.max_size);
        let reduced = reduced_size(size, factor);
        self.stage(layer, "block-mean kernel", |s| {
            s.launch_block_mean(layer, factor, reduced)
        })?;
        self.stage(layer, "download means", |s| {
            s.download_block_means(reduced.cells())
        })?;
        let values = self.stage(layer, "copy means out (host)", |s| {
            s.copy_out_block_means(reduced, storage)
        })?;
        Ok(ReducedPreview { factor, values })
    }
}
