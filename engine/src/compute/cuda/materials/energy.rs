//! The stored energy of the held problem summed on the device (`kernels/energy.cu`), in the
//! order of [`crate::problem::energy::stored_energy`], so that an energy balance needs one
//! number per row from the GPU instead of the whole field.

use cudarc::driver::{CudaFunction, LaunchConfig, PushKernelArg};

use super::super::{dims, driver_error, CudaBackend, CudaDevice};
use crate::error::{HeatlabError, Result};
use crate::problem::energy::{stored_energy_weights, STORED_ENERGY_CHUNK};

/// The stored-energy kernels' source.
pub const ENERGY_SOURCE: &str = include_str!("../../../../../kernels/energy.cu");

/// Threads per block of both kernels.
const THREADS: u32 = 128;

/// The two launches of a stored-energy sum.
pub(in crate::compute::cuda) struct EnergyKernels {
    chunks: CudaFunction,
    rows: CudaFunction,
}

impl EnergyKernels {
    /// Compiles (once per process) and loads the kernels.
    pub(in crate::compute::cuda) fn load(device: &CudaDevice) -> Result<Self> {
        let module = device.load_kernels("energy.cu", ENERGY_SOURCE)?;
        Ok(Self {
            chunks: device.function(&module, "stored_energy_chunks")?,
            rows: device.function(&module, "stored_energy_rows")?,
        })
    }
}

/// Blocks of [`THREADS`] covering `items` threads.
fn spread(items: usize) -> Result<LaunchConfig> {
    let blocks = u32::try_from(items.div_ceil(THREADS as usize))
        .map_err(|_| HeatlabError::Unsupported("field too large to sum".into()))?;
    Ok(LaunchConfig {
        grid_dim: (blocks.max(1), 1, 1),
        block_dim: (THREADS, 1, 1),
        shared_mem_bytes: 0,
    })
}

impl CudaBackend {
    /// The energy stored in the held field's free cells (see
    /// [`crate::compute::Backend::stored_energy`]).
    pub(in crate::compute::cuda) fn stored_energy_on_device(&mut self) -> Result<Vec<f64>> {
        self.settle()?;
        let stream = self.device.stream().clone();
        let problem = self
            .problem
            .as_ref()
            .ok_or_else(|| HeatlabError::InvalidInput("no heat problem is held".into()))?;
        let kernels = self
            .material_kernels
            .as_ref()
            .ok_or_else(|| HeatlabError::Internal("the problem kernels are not loaded".into()))?;
        let buffers = self.buffers.as_ref().ok_or(HeatlabError::NoField)?;
        let size = problem.size;
        if buffers.size != size {
            return Err(HeatlabError::Internal(
                "the held problem is not of the field's size".into(),
            ));
        }
        let (rows, cols) = dims(size)?;
        let chunk_count = size.cols.div_ceil(STORED_ENERGY_CHUNK).max(1);
        let chunks = i32::try_from(chunk_count)
            .map_err(|_| HeatlabError::Unsupported("field too large to sum".into()))?;
        let failed = driver_error("summing the stored energy");
        let weights = stream
            .clone_htod(&stored_energy_weights(&problem.host_tables))
            .map_err(&failed)?;
        let mut partial = stream
            .alloc_zeros::<f64>(size.rows * chunk_count)
            .map_err(&failed)?;
        let mut row_sums = stream.alloc_zeros::<f64>(size.rows).map_err(&failed)?;
        let mut launch = stream.launch_builder(&kernels.energy.chunks);
        launch
            .arg(&buffers.current)
            .arg(&problem.map)
            .arg(&weights)
            .arg(&rows)
            .arg(&cols)
            .arg(&chunks)
            .arg(&mut partial);
        // SAFETY: stored_energy_chunks(const float* field, const unsigned char* map, const
        // double* weight, int rows, int cols, int chunks, double* partial): the field and the
        // map hold rows*cols cells (sizes checked above), every kind in the map is below the
        // tables' kind count (checked on upload) = weight's length, partial rows*chunks
        // doubles; threads past rows*chunks return.
        unsafe { launch.launch(spread(size.rows * chunk_count)?) }.map_err(&failed)?;
        let mut launch = stream.launch_builder(&kernels.energy.rows);
        launch
            .arg(&partial)
            .arg(&rows)
            .arg(&chunks)
            .arg(&mut row_sums);
        // SAFETY: stored_energy_rows(const double* partial, int rows, int chunks, double*
        // row_sums): partial holds rows*chunks doubles written above, row_sums rows doubles;
        // threads past rows return.
        unsafe { launch.launch(spread(size.rows)?) }.map_err(&failed)?;
        let host = stream.clone_dtoh(&row_sums).map_err(&failed)?;
        stream.synchronize().map_err(&failed)?;
        Ok(host)
    }
}
