//! The CUDA backend: `kernels/diffusion.cu`, compiled by NVRTC, on the device's own stream.

pub mod device;
mod kernel;
mod stepping;
pub mod user_kernel;

use std::time::Duration;

use std::sync::Arc;

use cudarc::driver::{CudaFunction, CudaSlice, CudaStream, LaunchConfig, PushKernelArg};

pub use device::{driver_error, CudaDevice, GpuTimer};
pub use kernel::{CudaKernel, KernelChoice};
use stepping::{CachedGraph, Lookahead};
pub use user_kernel::UserContract;

use super::preview::{
    reduced_size, reduction_factor, ColorTable, Layer, PreviewPixels, PreviewSpec,
};
use super::{Backend, BackendKind, Boundary, StepParams};
use crate::error::{HeatlabError, Result};
use crate::grid::{Grid, GridSize, ValueRange};

/// The diffusion kernels' source, embedded so that the binary needs no files beside it.
pub const DIFFUSION_SOURCE: &str = include_str!("../../../kernels/diffusion.cu");
/// The display kernels' source (reduce to the shown size, colormap).
pub const COLORMAP_SOURCE: &str = include_str!("../../../kernels/colormap.cu");

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

/// Device buffers of the display path, kept between frames: a preview is asked for twice per
/// frame, and allocating, uploading the colormap and freeing each time cost more than the
/// kernels. They grow when a larger preview is asked for and never shrink.
#[derive(Default)]
struct PreviewBuffers {
    values: Option<CudaSlice<f32>>,
    rgba: Option<CudaSlice<u8>>,
    /// Each colour table asked for, uploaded on first use.
    tables: Vec<(ColorTable, CudaSlice<u8>)>,
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

/// The device copy of `table` among `tables`, uploaded and kept on first use.
fn table_on_device<'a>(
    tables: &'a mut Vec<(ColorTable, CudaSlice<u8>)>,
    table: &ColorTable,
    stream: &Arc<CudaStream>,
) -> Result<&'a CudaSlice<u8>> {
    if !tables.iter().any(|(known, _)| known == table) {
        let lut: Vec<u8> = table.iter().flatten().copied().collect();
        let lut_dev = stream
            .clone_htod(&lut)
            .map_err(driver_error("uploading the colormap"))?;
        tables.push((*table, lut_dev));
    }
    let Some((_, lut_dev)) = tables.iter().find(|(known, _)| known == table) else {
        return Err(HeatlabError::Internal("colormap table missing".into()));
    };
    Ok(lut_dev)
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
            choice: KernelChoice::Auto,
            user: None,
            lookahead: None,
            last_params: None,
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

    /// The means of `layer` over blocks of `factor` x `factor` cells, computed into the
    /// preview's values buffer and downloaded as a grid of the `reduced` size.
    fn block_means_on_device(
        &mut self,
        layer: Layer,
        factor: usize,
        reduced: GridSize,
    ) -> Result<Grid> {
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
        let pixels = reduced.cells();
        let values_dev = buffer_of_at_least(&mut self.preview.values, pixels, &stream)?;
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
        Grid::from_vec(reduced, values)
    }

    /// RGBA bytes of the first `pixels` values of the preview's values buffer (written by
    /// [`Self::block_means_on_device`]), mapped through `table` over `range` on the device.
    fn colormap_on_device(
        &mut self,
        table: &ColorTable,
        pixels: usize,
        range: ValueRange,
    ) -> Result<Vec<u8>> {
        let stream = self.device.stream().clone();
        let colormap_rgba = self.kernels.colormap_rgba.clone();
        let PreviewBuffers {
            values: values_slot,
            rgba: rgba_slot,
            tables,
        } = &mut self.preview;
        let values_dev = values_slot
            .as_ref()
            .filter(|buffer| buffer.len() >= pixels)
            .ok_or_else(|| HeatlabError::Internal("the preview's values are missing".into()))?;
        let lut_dev = table_on_device(tables, table, &stream)?;
        let rgba_dev = buffer_of_at_least(rgba_slot, pixels * 4, &stream)?;
        let n = i32::try_from(pixels)
            .map_err(|_| HeatlabError::Unsupported("preview too large".into()))?;
        let config = LaunchConfig::for_num_elems(pixels as u32);
        let mut launch = stream.launch_builder(&colormap_rgba);
        launch
            .arg(values_dev)
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
        Ok(rgba)
    }

    /// Times `repeats` device-to-device copies of the field (a read and a write of every cell),
    /// the bandwidth a single-step kernel is measured against.
    pub fn time_field_copy(&mut self, repeats: u64) -> Result<Duration> {
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
        let size = field.size();
        dims(size)?;
        // Release the old field (and the graphs that point into it) first so that its memory
        // counts as free.
        self.graphs.clear();
        self.buffers = None;
        self.lookahead = None;
        self.last_params = None;
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
        self.advance_stepper(steps, params)
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

    fn cuda_mut(&mut self) -> Option<&mut CudaBackend> {
        Some(self)
    }

    fn cuda(&self) -> Option<&CudaBackend> {
        Some(self)
    }

    fn render_preview(&mut self, spec: &PreviewSpec<'_>) -> Result<PreviewPixels> {
        if spec.layer == Layer::Laplacian {
            self.compute_laplacian_on_device(spec.boundary)?;
        }
        let size = self.buffers.as_ref().ok_or(HeatlabError::NoField)?.size;
        let factor = reduction_factor(size, spec.max_size);
        let reduced = reduced_size(size, factor);
        let values = self.block_means_on_device(spec.layer, factor, reduced)?;
        let range = spec.range.resolve(&values);
        let rgba = self.colormap_on_device(spec.table, reduced.cells(), range)?;
        Ok(PreviewPixels {
            factor,
            values,
            rgba,
            range,
        })
    }
}
