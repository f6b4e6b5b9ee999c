//! The tiles of the tiled material kernels (`kernels/materials.cu`, TILED kernels): each warp
//! tile's one kind, classified on the device once per held problem and segment length, and the
//! list of the tiles whose kinds mix or that reach a side, which the mixed kernel marches.

use cudarc::driver::{sys, CudaFunction, CudaSlice, PushKernelArg};

use super::super::{dims, driver_error, CudaBackend, CudaDevice};
use super::launch::launch_geometry;
use super::{DeviceProblem, MaterialKernel, BLOCKED_WARPS};
use crate::error::{HeatlabError, Result};

/// How a tiled kernel divides the held problem (see [`MaterialKernel::Tiled`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TileCounts {
    /// Tiles (a warp's strip and segment each).
    pub tiles: usize,
    /// Tiles whose kinds mix, marched by the blocked march.
    pub mixed: usize,
    /// Warps that share each mixed tile's rows.
    pub warps_per_mixed: usize,
}

/// The tiles of a held problem for one segment length.
pub(super) struct TileClasses {
    /// Rows per warp the tiles were classified for.
    pub(super) segment_rows: u32,
    /// Per tile (`segment * strips + strip`): its one kind, or -1 where the mixed kernel
    /// marches it.
    pub(super) kinds: CudaSlice<i32>,
    /// The tiles of kind -1, in order (one unused element when there are none).
    pub(super) mixed: CudaSlice<u32>,
    /// How many tiles `mixed` lists.
    pub(super) mixed_count: u32,
    /// How many tiles there are.
    pub(super) count: u32,
    /// Warps that share each mixed tile's rows (see [`mixed_tile_parts`]).
    pub(super) parts: u32,
}

/// Warps that share each mixed tile's rows, each marching its share with its own halo: the
/// mixed tiles are few and their march long, so their launch lasts as long as one warp's
/// march, and shorter shares make it shorter, until the warps no longer fit the GPU at once
/// (`resident_warps`, with a block's four) and a second wave doubles it. Shares of at least 8
/// rows.
fn mixed_tile_parts(mixed: u32, segment_rows: u32, resident_warps: u32) -> u32 {
    if mixed == 0 {
        return 1;
    }
    (resident_warps / mixed).clamp(1, (segment_rows / 8).max(1))
}

impl TileClasses {
    /// Classifies the tiles of `problem` for segments of `segment_rows` rows with `classify`
    /// (`materials_classify_tiles_k8_pr*_pc*` of the problem's wrap) and waits for it;
    /// `mixed_kernel` (`materials_tiled_mixed_k8_pr*_pc*`) is the kernel that will march the mixed tiles.
    pub(super) fn classify(
        device: &CudaDevice,
        classify: &CudaFunction,
        mixed_kernel: &CudaFunction,
        problem: &DeviceProblem,
        segment_rows: u32,
    ) -> Result<Self> {
        let stream = device.stream();
        let (rows, cols) = dims(problem.size)?;
        let kernel = MaterialKernel::Tiled { segment_rows };
        let (config, segment_arg) = launch_geometry(kernel, problem.size, 0);
        let segments = (problem.size.rows as u32).div_ceil(segment_rows);
        let tiles = config.grid_dim.0 as usize * segments as usize;
        let mut kinds = stream
            .alloc_zeros::<i32>(tiles)
            .map_err(driver_error("allocating the tiles' kinds"))?;
        let mut launch = stream.launch_builder(classify);
        launch
            .arg(&problem.map)
            .arg(&rows)
            .arg(&cols)
            .arg(&segment_arg)
            .arg(&mut kinds);
        // SAFETY: materials_classify_tiles_k8_pr*_pc*(const unsigned char* map, int rows, int
        // cols, int segment_rows, int* kinds): map holds rows*cols kinds, cols % 4 == 0 (the
        // tiled kernels' `supports`) so its 4-byte loads are aligned, and it reads rows and
        // columns inside the grid or wrapped only; the grid is the tiled launch's, whose warps
        // below `segments` write kinds[segment * strips + strip] < strips * segments = `tiles`.
        unsafe { launch.launch(config) }.map_err(driver_error("classifying the tiles"))?;
        let host = stream
            .clone_dtoh(&kinds)
            .map_err(driver_error("downloading the tiles' kinds"))?;
        let mixed: Vec<u32> = (0u32..)
            .zip(&host)
            .filter(|(_, &kind)| kind < 0)
            .map(|(tile, _)| tile)
            .collect();
        let too_many = |_| HeatlabError::Unsupported("too many tiles".into());
        let mixed_count = u32::try_from(mixed.len()).map_err(too_many)?;
        let count = u32::try_from(host.len()).map_err(too_many)?;
        let multiprocessors = device
            .context()
            .attribute(sys::CUdevice_attribute::CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT)
            .map_err(driver_error("reading the GPU's multiprocessor count"))?;
        let blocks_per_multiprocessor = mixed_kernel
            .occupancy_max_active_blocks_per_multiprocessor(
                32 * BLOCKED_WARPS,
                problem.table_bytes as usize,
                None,
            )
            .map_err(driver_error("reading the mixed tiles' kernel's occupancy"))?;
        let resident_warps =
            u32::try_from(multiprocessors).unwrap_or(0) * blocks_per_multiprocessor * BLOCKED_WARPS;
        let parts = mixed_tile_parts(mixed_count, segment_rows, resident_warps);
        // A zero-length allocation is refused: keep one unused element.
        let mixed = if mixed.is_empty() {
            stream.clone_htod(&[0u32])
        } else {
            stream.clone_htod(&mixed)
        }
        .map_err(driver_error("uploading the mixed tiles"))?;
        // The host array the copy reads from is freed when this returns.
        stream
            .synchronize()
            .map_err(driver_error("uploading the mixed tiles"))?;
        Ok(Self {
            segment_rows,
            kinds,
            mixed,
            mixed_count,
            count,
            parts,
        })
    }
}

impl CudaBackend {
    /// The tiles of the held problem the last tiled launches marched; `None` before a tiled
    /// kernel ran on it.
    pub fn material_tiles(&self) -> Option<TileCounts> {
        let tiles = self.problem.as_ref()?.tiles.as_ref()?;
        Some(TileCounts {
            tiles: tiles.count as usize,
            mixed: tiles.mixed_count as usize,
            warps_per_mixed: tiles.parts as usize,
        })
    }

    /// Classifies the held problem's tiles for the tiled kernels' segments of `segment_rows`
    /// rows, unless they are.
    pub(super) fn classify_tiles(&mut self, segment_rows: u32) -> Result<()> {
        let (Some(kernels), Some(problem)) =
            (self.material_kernels.as_ref(), self.problem.as_mut())
        else {
            return Err(HeatlabError::Internal("no heat problem is held".into()));
        };
        if problem
            .tiles
            .as_ref()
            .is_some_and(|tiles| tiles.segment_rows == segment_rows)
        {
            return Ok(());
        }
        let classify = &kernels.classify_tiles_k8[problem.wrap];
        let mixed = &kernels.tiled_mixed_k8[problem.wrap];
        let tiles = TileClasses::classify(&self.device, classify, mixed, problem, segment_rows)?;
        problem.tiles = Some(tiles);
        Ok(())
    }
}
