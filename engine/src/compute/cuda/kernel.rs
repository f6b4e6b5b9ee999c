//! The diffusion kernels of `kernels/diffusion.cu`: which exist, which sizes each can step,
//! and the launch geometry each needs.

use cudarc::driver::LaunchConfig;

use crate::grid::{Boundary, GridSize};

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
        /// Four blocks per SM (at most 128 registers a thread) and interior strips without
        /// edge-column tests: for fields of many waves (8 steps per launch only).
        packed: bool,
        /// Rows each warp loads ahead of the one it updates (2 only when packed).
        rows_ahead: u32,
    },
    /// The whole field held in the registers of all SMs by one persistent launch, which takes
    /// every step of an advance; tiles exchange their `steps_per_exchange`-wide rings through
    /// L2 at a grid barrier every `steps_per_exchange` steps. Needs a column count divisible
    /// by 4 and a field whose tiles fit the GPU's SMs at once (up to about 2000x2000 on an H100).
    Resident {
        /// Steps between exchanges, and the width of each tile's ring (4 or 8).
        steps_per_exchange: u32,
    },
}

/// Fields larger than this are never tried with the resident kernel (the device decides below
/// it: [`CudaKernel::Resident`] also needs its tiles to fit the GPU's SMs at once).
pub const RESIDENT_MAX_CELLS: usize = 1 << 23;

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
                packed,
                rows_ahead,
            } => {
                let packed = match (packed, rows_ahead) {
                    (false, _) => "",
                    (true, 1) => "p",
                    (true, _) => "p2",
                };
                write!(f, "temporal-k{steps_per_launch}{packed}-rows{segment_rows}")
            }
            Self::Resident { steps_per_exchange } => write!(f, "resident-h{steps_per_exchange}"),
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
            Self::Resident { .. } => size.cols % 4 == 0 && size.cells() <= RESIDENT_MAX_CELLS,
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
        // Longer segments recompute fewer rows: 512 rows of 8 steps were measured the fastest
        // at 16384x16384 on the H100 (139 against 146 us per step for 128 rows).
        for (steps_per_launch, segments) in [
            (4, &[16, 32, 64, 128][..]),
            (8, &[16, 32, 64, 128, 256, 512][..]),
        ] {
            for &segment_rows in segments {
                kernels.push(Self::Temporal {
                    steps_per_launch,
                    segment_rows,
                    packed: false,
                    rows_ahead: 1,
                });
            }
        }
        for (rows_ahead, segments) in [(1, &[128, 256, 512][..]), (2, &[128, 256][..])] {
            for &segment_rows in segments {
                kernels.push(Self::Temporal {
                    steps_per_launch: 8,
                    segment_rows,
                    packed: true,
                    rows_ahead,
                });
            }
        }
        for steps_per_exchange in [4, 8] {
            kernels.push(Self::Resident { steps_per_exchange });
        }
        kernels.retain(|k| k.supports(size));
        kernels
    }

    /// Every exact kernel, whatever the size (those of a size every kernel supports).
    pub fn all_exact() -> Vec<Self> {
        Self::exact_candidates(GridSize { rows: 8, cols: 8 })
    }
}

impl CudaKernel {
    /// The launch of one step (or `steps_per_launch` steps) on a field of `size`, and the
    /// temporal kernels' extra argument (rows per warp). `None` for the seed's kernel, which
    /// steps in place, and the resident one, whose geometry depends on the device.
    pub(super) fn launch_geometry(self, size: GridSize) -> Option<(LaunchConfig, Option<i32>)> {
        let (rows, cols) = (size.rows as u32, size.cols as u32);
        let block = |grid_dim: (u32, u32, u32), block_dim: (u32, u32, u32)| LaunchConfig {
            grid_dim,
            block_dim,
            shared_mem_bytes: 0,
        };
        match self {
            Self::SeedFaithful | Self::Resident { .. } => None,
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
                ..
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

impl CudaKernel {
    /// What the kernel is, in one line (the bench table, the app's kernel list).
    pub fn description(self) -> &'static str {
        match self {
            Self::SeedFaithful => {
                "tutorial kernel: 8x8 shared tile, in place (races), Laplacian written"
            }
            Self::Shared => {
                "tutorial design made exact: 32x8 shared tile + halo, double-buffered, Laplacian written"
            }
            Self::JacobiRows => "one step per launch, 4 rows per thread, scalar loads",
            Self::JacobiVec4 { .. } => "one step per launch, float4, shuffles",
            Self::Temporal { packed: false, .. } => {
                "temporal blocking in registers, K steps per launch"
            }
            Self::Temporal { packed: true, .. } => {
                "temporal blocking in registers, K steps per launch, 4 blocks per SM"
            }
            Self::Resident { .. } => {
                "field held in registers by one persistent launch, rings exchanged every H steps"
            }
        }
    }

    /// Whether the kernel writes the Laplacian of its input in the same pass as the step, so
    /// that the Laplacian view needs no pass of its own.
    pub fn writes_laplacian(self) -> bool {
        matches!(self, Self::SeedFaithful | Self::Shared)
    }
}

/// The kernel a user picks for stepping on the GPU: the name typed after `--kernel` and listed
/// in the app. Parsed once, here; every front end uses this type.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Hash, Default, serde::Serialize, serde::Deserialize,
)]
#[serde(into = "String", try_from = "String")]
pub enum KernelChoice {
    /// The fastest exact kernel for the field's size, timed when a field of a new size arrives.
    #[default]
    Auto,
    /// The notebook's kernel as written: in place, racy, Dirichlet only.
    Tutorial,
    /// One of the exact built-in kernels.
    Builtin(CudaKernel),
    /// The kernel compiled and validated in the Kernel lab.
    User,
}

impl KernelChoice {
    /// Every choice, in the order a list shows them: auto, tutorial, the exact built-in
    /// kernels, user.
    pub fn all() -> Vec<Self> {
        let mut all = vec![Self::Auto, Self::Tutorial];
        all.extend(CudaKernel::all_exact().into_iter().map(Self::Builtin));
        all.push(Self::User);
        all
    }

    /// The built-in kernel this choice fixes (`None` for auto and the user kernel).
    pub fn builtin(self) -> Option<CudaKernel> {
        match self {
            Self::Tutorial => Some(CudaKernel::SeedFaithful),
            Self::Builtin(kernel) => Some(kernel),
            Self::Auto | Self::User => None,
        }
    }

    /// Whether every step equals the CPU reference's (the tutorial's kernel races; a user
    /// kernel is used only once the lab found it bit-identical).
    pub fn is_exact(self) -> bool {
        !matches!(self, Self::Tutorial)
    }

    /// What the choice is, in one line.
    pub fn description(self) -> &'static str {
        match self {
            Self::Auto => "the fastest exact kernel for this size, timed when the field arrives",
            Self::Tutorial => {
                "the notebook's kernel as written: 8x8 tile, in place (races between blocks), Dirichlet only"
            }
            Self::Builtin(kernel) => kernel.description(),
            Self::User => "your kernel from the Kernel lab, validated against the CPU",
        }
    }

    /// What the race of the tutorial's kernel does, for a visible note beside it.
    pub const TUTORIAL_RACE_NOTE: &'static str = "The tutorial's kernel updates the field in \
        place: a block's halo may be read before or after the neighbouring block wrote its new \
        values, so cells at tile edges mix two steps. The result depends on block scheduling and \
        drifts from the exact Jacobi step; the check against the CPU shows by how much.";

    /// Why this choice cannot step a `size` field under `boundary`, or `None` when it can.
    /// (Whether a user kernel is loaded is the backend's to say.)
    pub fn unsupported_reason(self, size: GridSize, boundary: Boundary) -> Option<String> {
        match self {
            Self::Tutorial if boundary != Boundary::Dirichlet => Some(format!(
                "the tutorial's kernel only knows the Dirichlet boundary, not {boundary}"
            )),
            Self::Builtin(kernel) if !kernel.supports(size) => Some(format!(
                "{kernel} needs a column count divisible by 4 ({size} has {} columns)",
                size.cols
            )),
            _ => None,
        }
    }
}

impl std::fmt::Display for KernelChoice {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Auto => f.write_str("auto"),
            Self::Tutorial => f.write_str("tutorial"),
            Self::Builtin(kernel) => kernel.fmt(f),
            Self::User => f.write_str("user"),
        }
    }
}

/// Why a kernel the user named cannot step where they asked, for each front end to word in its
/// own terms (a flag, a keyword argument).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum KernelRefusal {
    /// The Kernel lab's kernel: compiled and validated in the app only.
    UserKernel,
    /// A GPU kernel asked for on the CPU backend.
    GpuKernelOnCpu,
}

impl KernelChoice {
    /// The backend a run stepping with this kernel opens, asked for `backend`: a named GPU
    /// kernel makes `auto` CUDA (it is not silently replaced by the CPU) and refuses the CPU.
    pub fn backend_for(
        self,
        backend: crate::compute::BackendChoice,
    ) -> Result<crate::compute::BackendChoice, KernelRefusal> {
        use crate::compute::BackendChoice;
        match (self, backend) {
            (Self::User, _) => Err(KernelRefusal::UserKernel),
            (Self::Auto, choice) => Ok(choice),
            (Self::Tutorial | Self::Builtin(_), BackendChoice::Cpu) => {
                Err(KernelRefusal::GpuKernelOnCpu)
            }
            (Self::Tutorial | Self::Builtin(_), BackendChoice::Auto | BackendChoice::Cuda) => {
                Ok(BackendChoice::Cuda)
            }
        }
    }
}

impl From<KernelChoice> for String {
    fn from(choice: KernelChoice) -> Self {
        choice.to_string()
    }
}

impl TryFrom<String> for KernelChoice {
    type Error = crate::error::HeatlabError;

    fn try_from(text: String) -> Result<Self, Self::Error> {
        text.parse()
    }
}

impl std::str::FromStr for KernelChoice {
    type Err = crate::error::HeatlabError;

    fn from_str(text: &str) -> Result<Self, Self::Err> {
        crate::choice::parse_choice(&Self::all(), text, "kernel")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_named_gpu_kernel_opens_cuda_and_refuses_the_cpu() {
        use crate::compute::BackendChoice::{Auto, Cpu, Cuda};
        let jacobi = KernelChoice::Builtin(CudaKernel::JacobiRows);
        for backend in [Auto, Cpu, Cuda] {
            assert_eq!(KernelChoice::Auto.backend_for(backend), Ok(backend));
            assert_eq!(
                KernelChoice::User.backend_for(backend),
                Err(KernelRefusal::UserKernel)
            );
        }
        for kernel in [jacobi, KernelChoice::Tutorial] {
            assert_eq!(kernel.backend_for(Auto), Ok(Cuda));
            assert_eq!(kernel.backend_for(Cuda), Ok(Cuda));
            assert_eq!(kernel.backend_for(Cpu), Err(KernelRefusal::GpuKernelOnCpu));
        }
    }

    #[test]
    fn every_choice_parses_from_its_name_and_bad_names_list_them() {
        for choice in KernelChoice::all() {
            assert_eq!(choice.to_string().parse::<KernelChoice>().unwrap(), choice);
        }
        assert_eq!(
            " Shared ".parse::<KernelChoice>().unwrap(),
            KernelChoice::Builtin(CudaKernel::Shared)
        );
        let error = "fastest".parse::<KernelChoice>().unwrap_err().to_string();
        assert!(error.starts_with("unknown kernel 'fastest' (expected auto, tutorial, shared"));
        assert!(error.ends_with("resident-h8 or user)"), "{error}");
        for name in [
            "temporal-k8-rows512",
            "temporal-k8p-rows256",
            "temporal-k8p2-rows128",
            "resident-h4",
        ] {
            assert!(error.contains(name), "{name} missing from {error}");
        }
        // The racing kernel is only reachable as "tutorial".
        assert!("seed-faithful".parse::<KernelChoice>().is_err());
    }

    #[test]
    fn unsupported_combinations_say_why() {
        let odd = GridSize { rows: 9, cols: 7 };
        let tutorial = KernelChoice::Tutorial;
        assert!(tutorial
            .unsupported_reason(odd, Boundary::Neumann)
            .unwrap()
            .contains("Dirichlet"));
        assert_eq!(tutorial.unsupported_reason(odd, Boundary::Dirichlet), None);
        let vec4 = KernelChoice::Builtin(CudaKernel::JacobiVec4 { rows_per_thread: 8 });
        assert!(vec4
            .unsupported_reason(odd, Boundary::Periodic)
            .unwrap()
            .contains("divisible by 4"));
        let shared = KernelChoice::Builtin(CudaKernel::Shared);
        for boundary in Boundary::ALL {
            assert_eq!(shared.unsupported_reason(odd, boundary), None);
        }
        assert!(!tutorial.is_exact() && shared.is_exact());
    }
}
