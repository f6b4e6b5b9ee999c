//! The CUDA backend: `kernels/diffusion.cu`, compiled by NVRTC, on the device's own stream.

pub mod device;

use std::time::Duration;

use cudarc::driver::{CudaFunction, CudaSlice, LaunchConfig, PushKernelArg};

pub use device::{driver_error, CudaDevice, GpuTimer};

use super::{Backend, BackendKind, Boundary, StepParams};
use crate::error::{HeatlabError, Result};
use crate::grid::{Grid, GridSize};

/// The diffusion kernels' source, embedded so that the binary needs no files beside it.
pub const DIFFUSION_SOURCE: &str = include_str!("../../../kernels/diffusion.cu");

/// Threads per block of the Jacobi kernel (x along columns for coalescing, y down rows).
const JACOBI_BLOCK: (u32, u32) = (32, 8);
/// Must match `ROWS_PER_THREAD` in `kernels/diffusion.cu`.
const JACOBI_ROWS_PER_THREAD: u32 = 4;
/// Must match `SEED_TPB` in `kernels/diffusion.cu`.
const SEED_TILE: u32 = 8;

struct DiffusionKernels {
    jacobi: [CudaFunction; 3],
    laplacian: [CudaFunction; 3],
    seed_inplace: CudaFunction,
}

struct FieldBuffers {
    size: GridSize,
    current: CudaSlice<f32>,
    next: CudaSlice<f32>,
    laplacian: Option<CudaSlice<f32>>,
}

/// Steps the field on an NVIDIA GPU.
pub struct CudaBackend {
    device: CudaDevice,
    kernels: DiffusionKernels,
    timer: GpuTimer,
    buffers: Option<FieldBuffers>,
}

fn dims(size: GridSize) -> Result<(i32, i32)> {
    let rows = i32::try_from(size.rows)
        .map_err(|_| HeatlabError::InvalidInput(format!("{size} is too large for the GPU kernels")))?;
    let cols = i32::try_from(size.cols)
        .map_err(|_| HeatlabError::InvalidInput(format!("{size} is too large for the GPU kernels")))?;
    Ok((rows, cols))
}

impl CudaBackend {
    /// Opens GPU 0 and compiles the diffusion kernels, or says why that is not possible.
    pub fn new() -> Result<Self> {
        let device = CudaDevice::open()?;
        let module = device.load_kernels("diffusion.cu", DIFFUSION_SOURCE)?;
        let load = |name: &str| device.function(&module, name);
        let kernels = DiffusionKernels {
            jacobi: [
                load("jacobi_step_dirichlet")?,
                load("jacobi_step_neumann")?,
                load("jacobi_step_periodic")?,
            ],
            laplacian: [
                load("laplacian_dirichlet")?,
                load("laplacian_neumann")?,
                load("laplacian_periodic")?,
            ],
            seed_inplace: load("seed_diffusion_inplace")?,
        };
        let timer = device.timer()?;
        Ok(Self {
            device,
            kernels,
            timer,
            buffers: None,
        })
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
        let buffers = self.buffers.as_mut().ok_or_else(|| {
            HeatlabError::InvalidInput("no field has been uploaded".into())
        })?;
        let (rows, cols) = dims(buffers.size)?;
        if buffers.laplacian.is_none() {
            buffers.laplacian = Some(
                stream
                    .alloc_zeros::<f32>(buffers.size.cells())
                    .map_err(driver_error("allocating the Laplacian"))?,
            );
        }
        let FieldBuffers {
            current, laplacian, ..
        } = buffers;
        let Some(laplacian) = laplacian.as_mut() else {
            return Err(HeatlabError::InvalidInput("no Laplacian buffer".into()));
        };
        let config = LaunchConfig {
            grid_dim: ((rows as u32).div_ceil(SEED_TILE), (cols as u32).div_ceil(SEED_TILE), 1),
            block_dim: (SEED_TILE, SEED_TILE, 1),
            shared_mem_bytes: 0,
        };
        self.timer.start()?;
        for _ in 0..steps {
            let mut launch = stream.launch_builder(&function);
            launch.arg(&mut *current).arg(&mut *laplacian).arg(&rows).arg(&cols).arg(&coeff);
            // SAFETY: seed_diffusion_inplace(float* field, float* lapl, int rows, int cols, float coeff):
            // both buffers hold rows*cols floats and the grid covers exactly rows x cols cells.
            unsafe { launch.launch(config) }.map_err(driver_error("launching seed_diffusion_inplace"))?;
        }
        self.timer.stop()
    }

    /// Times `repeats` device-to-device copies of the field (a read and a write of every cell),
    /// the bandwidth a single-step kernel is measured against.
    pub fn time_field_copy(&mut self, repeats: u64) -> Result<Duration> {
        let stream = self.device.stream().clone();
        let buffers = self.buffers.as_mut().ok_or_else(|| {
            HeatlabError::InvalidInput("no field has been uploaded".into())
        })?;
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
        format!("cuda-jacobi-{JACOBI_ROWS_PER_THREAD}-rows-per-thread")
    }

    fn upload(&mut self, field: &Grid) -> Result<()> {
        let size = field.size();
        dims(size)?;
        // Release the old field first so that its memory counts as free.
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
        self.buffers = Some(FieldBuffers {
            size,
            current,
            next,
            laplacian: None,
        });
        Ok(())
    }

    fn advance(&mut self, steps: u64, params: &StepParams) -> Result<Duration> {
        let stream = self.device.stream().clone();
        let function = self.kernels.jacobi[params.boundary.kernel_index()].clone();
        let buffers = self.buffers.as_mut().ok_or_else(|| {
            HeatlabError::InvalidInput("no field has been uploaded".into())
        })?;
        let (rows, cols) = dims(buffers.size)?;
        let config = LaunchConfig {
            grid_dim: (
                (cols as u32).div_ceil(JACOBI_BLOCK.0),
                (rows as u32).div_ceil(JACOBI_BLOCK.1 * JACOBI_ROWS_PER_THREAD),
                1,
            ),
            block_dim: (JACOBI_BLOCK.0, JACOBI_BLOCK.1, 1),
            shared_mem_bytes: 0,
        };
        let coeff = params.coeff;
        self.timer.start()?;
        for _ in 0..steps {
            let mut launch = stream.launch_builder(&function);
            launch.arg(&buffers.current).arg(&mut buffers.next).arg(&rows).arg(&cols).arg(&coeff);
            // SAFETY: jacobi_step_*(const float* in, float* out, int rows, int cols, float coeff):
            // `current` and `next` are distinct buffers of rows*cols floats; the grid's threads
            // cover cols columns and rows rows and the kernel returns for those outside.
            unsafe { launch.launch(config) }.map_err(driver_error("launching jacobi_step"))?;
            std::mem::swap(&mut buffers.current, &mut buffers.next);
        }
        self.timer.stop()
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
        let stream = self.device.stream().clone();
        let function = self.kernels.laplacian[boundary.kernel_index()].clone();
        let buffers = self.buffers()?;
        let size = buffers.size;
        let (rows, cols) = dims(size)?;
        if buffers.laplacian.is_none() {
            buffers.laplacian = Some(
                stream
                    .alloc_zeros::<f32>(size.cells())
                    .map_err(driver_error("allocating the Laplacian"))?,
            );
        }
        let FieldBuffers {
            current, laplacian, ..
        } = buffers;
        let Some(laplacian) = laplacian.as_mut() else {
            return Err(HeatlabError::InvalidInput("no Laplacian buffer".into()));
        };
        let config = LaunchConfig {
            grid_dim: ((cols as u32).div_ceil(32), (rows as u32).div_ceil(8), 1),
            block_dim: (32, 8, 1),
            shared_mem_bytes: 0,
        };
        let mut launch = stream.launch_builder(&function);
        launch.arg(&*current).arg(&mut *laplacian).arg(&rows).arg(&cols);
        // SAFETY: laplacian_*(const float* f, float* lapl, int rows, int cols): both buffers hold
        // rows*cols floats; threads outside rows x cols return.
        unsafe { launch.launch(config) }.map_err(driver_error("launching laplacian"))?;
        let data = stream
            .clone_dtoh(&*laplacian)
            .map_err(driver_error("downloading the Laplacian"))?;
        stream
            .synchronize()
            .map_err(driver_error("downloading the Laplacian"))?;
        Grid::from_vec(size, data)
    }
}
