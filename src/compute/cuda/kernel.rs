//! The diffusion kernels of `kernels/diffusion.cu`: which exist, which sizes each can step,
//! and the launch geometry each needs.

use cudarc::driver::LaunchConfig;

use crate::grid::GridSize;

/// Threads per block of the Jacobi kernel (x along columns for coalescing, y down rows).
const JACOBI_BLOCK: (u32, u32) = (32, 8);
/// Must match `ROWS_PER_THREAD` in `kernels/diffusion.cu`.
const JACOBI_ROWS_PER_THREAD: u32 = 4;
/// Warps per block of the float4 and temporal kernels.
const WARPS_PER_BLOCK: u32 = 4;
/// Must match `SHARED_TILE_X` and `SHARED_TILE_Y` in `kernels/diffusion.cu`.
const SHARED_TILE: (u32, u32) = (32, 8);
/// Must match `SEED_TPB` in `kernels/diffusion.cu`.
pub(super) const SEED_TILE: u32 = 8;

/// The diffusion kernels heatlab has, fastest exact one chosen per field size.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
pub enum CudaKernel {
    /// The tutorial's kernel ported faithfully: 8x8 tile, in place, Laplacian written each
    /// step. Races between blocks, Dirichlet only: a benchmark baseline, never the simulation.
    SeedFaithful,
    /// The tutorial's design made correct: a 32x8 tile and a one-cell halo in shared memory,
    /// the Laplacian written in the same pass, double-buffered, every boundary, any size.
    Shared,
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
            Self::Shared => f.write_str("shared"),
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
            Self::SeedFaithful | Self::Shared | Self::JacobiRows => true,
            Self::JacobiVec4 { .. } | Self::Temporal { .. } => size.cols % 4 == 0,
        }
    }

    /// The exact kernels worth trying for a size, in the order they are tried.
    pub fn exact_candidates(size: GridSize) -> Vec<Self> {
        let mut kernels = vec![
            Self::Shared,
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

impl CudaKernel {
    /// The launch of one step (or `steps_per_launch` steps) on a field of `size`, and the
    /// temporal kernels' extra argument (rows per warp). `None` for the seed's kernel, which
    /// steps in place with a geometry of its own.
    pub(super) fn launch_geometry(self, size: GridSize) -> Option<(LaunchConfig, Option<i32>)> {
        let (rows, cols) = (size.rows as u32, size.cols as u32);
        let block = |grid_dim: (u32, u32, u32), block_dim: (u32, u32, u32)| LaunchConfig {
            grid_dim,
            block_dim,
            shared_mem_bytes: 0,
        };
        match self {
            Self::SeedFaithful => None,
            Self::Shared => Some((
                block(
                    (
                        cols.div_ceil(SHARED_TILE.0),
                        rows.div_ceil(SHARED_TILE.1),
                        1,
                    ),
                    (SHARED_TILE.0, SHARED_TILE.1, 1),
                ),
                None,
            )),
            Self::JacobiRows => Some((
                block(
                    (
                        cols.div_ceil(JACOBI_BLOCK.0),
                        rows.div_ceil(JACOBI_BLOCK.1 * JACOBI_ROWS_PER_THREAD),
                        1,
                    ),
                    (JACOBI_BLOCK.0, JACOBI_BLOCK.1, 1),
                ),
                None,
            )),
            // Warps side by side: the scalar loads at a warp's edges hit the neighbouring
            // warp's lines in L1.
            Self::JacobiVec4 { rows_per_thread } => Some((
                block(
                    (
                        (cols / 4).div_ceil(32 * WARPS_PER_BLOCK),
                        rows.div_ceil(rows_per_thread),
                        1,
                    ),
                    (32 * WARPS_PER_BLOCK, 1, 1),
                ),
                None,
            )),
            Self::Temporal {
                steps_per_launch,
                segment_rows,
            } => {
                let output_cols = 128 - 2 * steps_per_launch;
                let segments = rows.div_ceil(segment_rows);
                Some((
                    block(
                        (
                            cols.div_ceil(output_cols),
                            segments.div_ceil(WARPS_PER_BLOCK),
                            1,
                        ),
                        (32, WARPS_PER_BLOCK, 1),
                    ),
                    Some(segment_rows as i32),
                ))
            }
        }
    }
}
