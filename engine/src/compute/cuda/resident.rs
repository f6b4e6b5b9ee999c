//! The resident kernel of `kernels/resident.cu`: the field held in the registers of every SM by
//! one cooperative launch per advance. Its tiles depend on the device's SM count, so whether a
//! field fits is the backend's to say.

use cudarc::driver::{sys, CudaSlice, LaunchConfig, PushKernelArg};

use super::{dims, driver_error, CudaBackend, CudaDevice, CudaKernel};
use crate::compute::StepParams;
use crate::error::{HeatlabError, Result};
use crate::grid::{Boundary, GridSize};

/// Must match `RESIDENT_ROWS` in `kernels/resident.cu`.
const ROWS_PER_THREAD: u32 = 19;
/// Must match `RESIDENT_MAX_THREADS / 32` in `kernels/resident.cu`.
const MAX_WARPS: u32 = 16;
/// Columns each warp holds (32 lanes x 4).
const TILE_COLS: u32 = 128;
/// Steps of one launch at most, so that one launch never holds the GPU for long.
const MAX_STEPS_PER_LAUNCH: u64 = 4096;

/// How a field is cut into one tile per block.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct ResidentGeometry {
    /// Tiles across (each `128 - 2H` columns).
    strips: u32,
    /// Tiles down.
    bands: u32,
    /// Rows of each tile (the band before the last may hold fewer).
    band_rows: u32,
    /// Warps per block: `warps * 19 == band_rows + 2H`.
    warps: u32,
}

impl ResidentGeometry {
    /// The tiles of a `size` field with rings `ring` wide on `blocks` blocks (one per SM), or
    /// `None` when no layout fits. Bands are `warps * 19 - 2 * ring` rows, with as few warps as
    /// the blocks allow, so that the kernel knows where the grid's first and last rows are in
    /// its registers (see `kernels/resident.cu`); the last band holds the grid's last rows. The
    /// grid's first and last rows must lie in the top and the bottom band's registers only
    /// (rings included), or another band would step them without their ghost rule: bands
    /// longer than the ring, and the band cut short before the last band's longer than it too.
    pub(super) fn of(size: GridSize, ring: u32, blocks: u32) -> Option<Self> {
        let rows = u32::try_from(size.rows).ok()?;
        let cols = u32::try_from(size.cols).ok()?;
        if rows == 0 || cols == 0 || cols % 4 != 0 || 2 * ring >= TILE_COLS {
            return None;
        }
        let strips = cols.div_ceil(TILE_COLS - 2 * ring);
        let most_bands = blocks / strips;
        (1..=MAX_WARPS).find_map(|warps| {
            let band_rows = (warps * ROWS_PER_THREAD).checked_sub(2 * ring)?;
            let bands = rows.div_ceil(band_rows.max(1));
            let cut_short = rows.checked_sub((bands - 1) * band_rows)?;
            (band_rows > ring && bands >= 2 && bands <= most_bands && cut_short > ring).then_some(
                Self {
                    strips,
                    bands,
                    band_rows,
                    warps,
                },
            )
        })
    }

    /// One block per tile, 32 x `warps` threads, and the shared memory of the warps' edge rows
    /// (two parities, top and bottom, one float4 per lane).
    fn launch_config(self) -> LaunchConfig {
        LaunchConfig {
            grid_dim: (self.strips, self.bands, 1),
            block_dim: (32, self.warps, 1),
            shared_mem_bytes: 2 * 2 * self.warps * 32 * 16,
        }
    }
}

/// What the resident kernel needs beside the field: the device's SM count and the grid
/// barrier's two counters (allocated on first use).
pub(super) struct ResidentState {
    multiprocessors: u32,
    barrier: Option<CudaSlice<u32>>,
}

impl ResidentState {
    /// Reads the device's SM count.
    pub(super) fn new(device: &CudaDevice) -> Result<Self> {
        let count = device
            .context()
            .attribute(sys::CUdevice_attribute::CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT)
            .map_err(driver_error("reading the GPU's multiprocessor count"))?;
        Ok(Self {
            multiprocessors: u32::try_from(count).unwrap_or(0),
            barrier: None,
        })
    }
}

impl CudaBackend {
    /// Whether `kernel` can step a `size` field on this device (always, but for the resident
    /// kernel, whose tiles must fit the SMs at once).
    pub fn fits_device(&self, kernel: CudaKernel, size: GridSize) -> bool {
        match kernel {
            CudaKernel::Resident { steps_per_exchange } => {
                ResidentGeometry::of(size, steps_per_exchange, self.resident.multiprocessors)
                    .is_some()
            }
            _ => true,
        }
    }

    /// The resident kernel's tiles for the held field, if it fits.
    pub fn resident_geometry(&self, kernel: CudaKernel) -> Option<String> {
        let CudaKernel::Resident { steps_per_exchange } = kernel else {
            return None;
        };
        let size = self.buffers.as_ref()?.size;
        let geometry =
            ResidentGeometry::of(size, steps_per_exchange, self.resident.multiprocessors)?;
        Some(format!(
            "{kernel} on {size}: {} x {} tiles of {} x {} cells, {} warps a block, {} SMs",
            geometry.strips,
            geometry.bands,
            geometry.band_rows,
            TILE_COLS - 2 * steps_per_exchange,
            geometry.warps,
            self.resident.multiprocessors
        ))
    }

    /// For the bench's notes: the registers and spilled bytes a thread of the resident and
    /// temporal kernels uses (as the driver compiled them for this GPU), and the resident
    /// kernel's tiles for the held field.
    pub fn kernel_resources(&self) -> Vec<String> {
        let kernels = &self.kernels;
        // The Dirichlet boundary's kernels (the bench's step).
        let kernels = [
            ("resident-h4", &kernels.resident_h4),
            ("resident-h8", &kernels.resident_h8),
            ("temporal-k8", &kernels.temporal_k8),
            ("temporal-k8p", &kernels.temporal_packed1_k8),
            ("temporal-k8p2", &kernels.temporal_packed2_k8),
        ]
        .map(|(name, table)| (name, &table[Boundary::Dirichlet]));
        let mut notes: Vec<String> = kernels
            .iter()
            .map(|(name, function)| {
                let attribute = |which| function.get_attribute(which).unwrap_or(-1);
                format!(
                    "{name}: {} registers, {} bytes of local memory a thread",
                    attribute(sys::CUfunction_attribute::CU_FUNC_ATTRIBUTE_NUM_REGS),
                    attribute(sys::CUfunction_attribute::CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES)
                )
            })
            .collect();
        for steps_per_exchange in [4, 8] {
            notes.extend(self.resident_geometry(CudaKernel::Resident { steps_per_exchange }));
        }
        notes
    }

    /// Queues `steps` steps of the resident kernel: one cooperative launch per
    /// [`MAX_STEPS_PER_LAUNCH`] steps, each leaving its result in the other buffer.
    pub(super) fn launch_resident(
        &mut self,
        kernel: CudaKernel,
        steps: u64,
        params: &StepParams,
    ) -> Result<()> {
        let CudaKernel::Resident { steps_per_exchange } = kernel else {
            return Err(HeatlabError::Internal(format!("{kernel} is not resident")));
        };
        let function = match steps_per_exchange {
            4 => &self.kernels.resident_h4,
            8 => &self.kernels.resident_h8,
            _ => return Err(HeatlabError::Internal(format!("no kernel for {kernel}"))),
        }[params.boundary]
            .clone();
        let stream = self.device.stream().clone();
        if self.resident.barrier.is_none() {
            let barrier = stream
                .alloc_zeros::<u32>(2)
                .map_err(driver_error("allocating the grid barrier"))?;
            self.resident.barrier = Some(barrier);
        }
        let multiprocessors = self.resident.multiprocessors;
        let (Some(buffers), Some(barrier)) =
            (self.buffers.as_mut(), self.resident.barrier.as_mut())
        else {
            return Err(HeatlabError::NoField);
        };
        let size = buffers.size;
        let geometry =
            ResidentGeometry::of(size, steps_per_exchange, multiprocessors).ok_or_else(|| {
                HeatlabError::Unsupported(format!(
                    "kernel {kernel} cannot hold a {size} field on this GPU's multiprocessors"
                ))
            })?;
        let (rows, cols) = dims(size)?;
        let band_rows = geometry.band_rows as i32;
        let mut remaining = steps;
        while remaining > 0 {
            let launch_steps = remaining.min(MAX_STEPS_PER_LAUNCH);
            let steps_arg = launch_steps as i32;
            let mut launch = stream.launch_builder(&function);
            launch
                .arg(&mut buffers.current)
                .arg(&mut buffers.next)
                .arg(&rows)
                .arg(&cols)
                .arg(&params.coeff)
                .arg(&steps_arg)
                .arg(&band_rows)
                .arg(&mut *barrier);
            // SAFETY: jacobi_resident_h*_*(float* in, float* out, int rows, int cols, float coeff,
            // int steps, int band_rows, unsigned* barrier): distinct buffers of rows*cols floats
            // (`in` is scratch once loaded, the result goes to `out`), cols % 4 == 0 (checked
            // by `ResidentGeometry::of`) so float4 accesses are aligned; the block is 32 x warps
            // threads with warps * 19 == band_rows + 2H, two bands or more and warps <= 16 as
            // the kernel's
            // registers and launch bounds assume, with the dynamic shared memory it indexes
            // (2 x 2 x warps x 32 float4); `barrier` holds two counters, reset by each barrier.
            // The launch is cooperative: the driver refuses it unless every block is resident
            // at once, which the kernel's grid barrier needs.
            unsafe { launch.launch_cooperative(geometry.launch_config()) }
                .map_err(driver_error("launching jacobi_resident"))?;
            buffers.flip();
            remaining -= launch_steps;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn geometry_fits_2000_squared_on_an_h100_and_refuses_what_cannot_fit() {
        let size = GridSize::new(2000, 2000).unwrap();
        let h8 = ResidentGeometry::of(size, 8, 132).unwrap();
        assert_eq!(
            (h8.strips, h8.bands, h8.band_rows, h8.warps),
            (18, 7, 288, 16)
        );
        assert!(h8.strips * h8.bands <= 132);
        let h4 = ResidentGeometry::of(size, 4, 132).unwrap();
        assert_eq!(
            (h4.strips, h4.bands, h4.band_rows, h4.warps),
            (17, 7, 296, 16)
        );
        // A tile's rows and ring fill its warps; every row is in some band.
        for (geometry, ring) in [(h8, 8), (h4, 4)] {
            assert_eq!(geometry.warps * 19, geometry.band_rows + 2 * ring);
            assert!(geometry.bands * geometry.band_rows >= 2000);
            assert!(geometry.launch_config().shared_mem_bytes <= 48 * 1024);
        }
        assert_eq!(
            ResidentGeometry::of(GridSize::new(4096, 4096).unwrap(), 8, 132),
            None
        );
        assert_eq!(ResidentGeometry::of(size, 8, 17), None); // fewer SMs than strips
        assert_eq!(
            ResidentGeometry::of(GridSize::new(8, 6).unwrap(), 8, 132),
            None
        );
        let small = ResidentGeometry::of(GridSize::new(64, 4).unwrap(), 8, 132).unwrap();
        assert_eq!(
            (small.strips, small.bands, small.band_rows, small.warps),
            (1, 3, 22, 2)
        );
        // One band, or a band whose rings reach the grid's edge rows, cannot be laid out.
        assert_eq!(
            ResidentGeometry::of(GridSize::new(4, 4).unwrap(), 8, 132),
            None
        );
        // 50 rows on bands of 22 (2 warps): the band cut short before the last would be 6 rows,
        // its ring reaching the grid's last row; on bands of 41 (3 warps) it is 9.
        let cut = ResidentGeometry::of(GridSize::new(50, 4).unwrap(), 8, 132).unwrap();
        assert_eq!((cut.bands, cut.band_rows, cut.warps), (2, 41, 3));
    }
}
