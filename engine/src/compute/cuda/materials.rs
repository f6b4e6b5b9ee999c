//! Heat problems on the GPU (`kernels/materials.cu`): the held problem's kind map and packed
//! step tables on the device, one step per launch or several per launch (temporally blocked),
//! and the energy booked per step. The CPU reference is [`crate::problem::step`]; every kernel
//! gives its field bit for bit.

use std::fmt;
use std::sync::Arc;
use std::time::Duration;

use cudarc::driver::{CudaFunction, CudaSlice, CudaStream};

use super::{dims, driver_error, CudaBackend, CudaDevice};
use crate::compute::ProblemUpload;
use crate::error::{HeatlabError, Result};
use crate::grid::GridSize;
use crate::problem::{EnergyExchange, EnergyLedger, StepTables};

mod energy;
mod launch;
mod tiles;

use launch::{launch_booked_step, launch_step, launch_tiled_step};
use tiles::TileClasses;
pub use tiles::TileCounts;

/// The heat-problem kernels' source, embedded so that the binary needs no files beside it.
pub const MATERIALS_SOURCE: &str = include_str!("../../../../kernels/materials.cu");

/// Rows per thread of the scalar and vec4 kernels (`SCALAR_ROWS`, `VEC_ROWS` in the source).
const SCALAR_ROWS: u32 = 4;
const VEC_ROWS: u32 = 8;
/// Warps per block of the blocked and tiled kernels.
const BLOCKED_WARPS: u32 = 4;
/// Steps per launch of the tiled kernels.
const TILED_STEPS: u32 = 8;
/// Fields of at least this many cells are stepped by the tiled kernel unless one is chosen.
const BLOCKED_FROM_CELLS: usize = 4096 * 4096;

/// How the GPU steps a heat problem.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum MaterialKernel {
    /// One step per launch, one column per thread: any width.
    Scalar,
    /// One step per launch, four columns per thread, every load in flight: width divisible by 4.
    Vec4,
    /// `steps_per_launch` (4 or 8) steps per launch, temporally blocked in registers, each warp
    /// marching down `segment_rows` rows of a 128-column strip: width divisible by 4.
    Blocked {
        /// Steps per launch.
        steps_per_launch: u32,
        /// Rows per warp.
        segment_rows: u32,
        /// Whether the path for rows of mixed kinds is one called function (less code and fewer
        /// registers for the one-kind path) instead of inlined in every level.
        compact: bool,
    },
    /// 8 steps per launch, temporally blocked by tiles (a warp's strip and segment, as
    /// `Blocked`) classified once per problem: a tile of one kind marches without the kind
    /// map, with the kind's gain and source in registers and each face between two cells
    /// computed once; the tiles where kinds mix take the blocked march.
    Tiled {
        /// Rows per warp.
        segment_rows: u32,
    },
}

impl fmt::Display for MaterialKernel {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Scalar => f.write_str("materials-scalar"),
            Self::Vec4 => f.write_str("materials-vec4"),
            Self::Blocked {
                steps_per_launch,
                segment_rows,
                compact,
            } => {
                let compact = if *compact { "c" } else { "" };
                write!(
                    f,
                    "materials-blocked-k{steps_per_launch}{compact}-rows{segment_rows}"
                )
            }
            Self::Tiled { segment_rows } => {
                write!(f, "materials-tiled-k{TILED_STEPS}-rows{segment_rows}")
            }
        }
    }
}

impl MaterialKernel {
    /// Whether the kernel can step a field of `size`.
    pub fn supports(self, size: GridSize) -> bool {
        match self {
            Self::Scalar => true,
            Self::Vec4 => size.cols % 4 == 0,
            Self::Blocked {
                steps_per_launch,
                segment_rows,
                ..
            } => size.cols % 4 == 0 && matches!(steps_per_launch, 4 | 8) && segment_rows > 0,
            Self::Tiled { segment_rows, .. } => size.cols % 4 == 0 && segment_rows > 0,
        }
    }

    /// Steps one launch takes.
    pub fn steps_per_launch(self) -> u64 {
        match self {
            Self::Blocked {
                steps_per_launch, ..
            } => u64::from(steps_per_launch),
            Self::Tiled { .. } => u64::from(TILED_STEPS),
            _ => 1,
        }
    }

    /// The fastest one-step kernel for `size`.
    pub fn one_step(size: GridSize) -> Self {
        if Self::Vec4.supports(size) {
            Self::Vec4
        } else {
            Self::Scalar
        }
    }

    /// The kernel used for `size` unless one is chosen: on large fields the tiled kernel in
    /// segments of 64 rows where it fits, else one step per launch (on the H100 the blocked
    /// kernels lost to the one-step kernel at 2000², for want of warps, and won at 8192², where
    /// the tiled kernel was the fastest).
    pub fn auto(size: GridSize) -> Self {
        let tiled = Self::Tiled { segment_rows: 64 };
        if size.cells() >= BLOCKED_FROM_CELLS && tiled.supports(size) {
            tiled
        } else {
            Self::one_step(size)
        }
    }

    /// The blocked variants worth timing, in the order `heatlab bench` lists them.
    pub fn blocked_candidates() -> Vec<Self> {
        let mut kernels = Vec::new();
        for compact in [false, true] {
            for steps_per_launch in [4, 8] {
                for segment_rows in [16, 32, 64] {
                    kernels.push(Self::Blocked {
                        steps_per_launch,
                        segment_rows,
                        compact,
                    });
                }
            }
        }
        for segment_rows in [32, 64, 128] {
            kernels.push(Self::Tiled { segment_rows });
        }
        kernels
    }
}

/// The compiled kernels of `kernels/materials.cu`, each for the four wrap combinations
/// (index `2 * periodic_rows + periodic_cols`).
pub(super) struct MaterialKernels {
    scalar: [CudaFunction; 4],
    vec4: [CudaFunction; 4],
    blocked_k4: [CudaFunction; 4],
    blocked_k8: [CudaFunction; 4],
    compact_k4: [CudaFunction; 4],
    compact_k8: [CudaFunction; 4],
    tiled_k8: [CudaFunction; 4],
    tiled_k8_direct: [CudaFunction; 4],
    tiled_mixed_k8: [CudaFunction; 4],
    classify_tiles_k8: [CudaFunction; 4],
    /// The one-step kernels with the energy booked in the same launch.
    scalar_booked: [CudaFunction; 4],
    vec4_booked: [CudaFunction; 4],
    /// The stored energy's sum (`kernels/energy.cu`).
    energy: energy::EnergyKernels,
}

impl MaterialKernels {
    /// Compiles (once per process) and loads the heat-problem kernels.
    pub(super) fn load(device: &CudaDevice) -> Result<Self> {
        let module = device.load_kernels("materials.cu", MATERIALS_SOURCE)?;
        let four = |prefix: &str| -> Result<[CudaFunction; 4]> {
            let load =
                |pr: u8, pc: u8| device.function(&module, &format!("{prefix}_pr{pr}_pc{pc}"));
            Ok([load(0, 0)?, load(0, 1)?, load(1, 0)?, load(1, 1)?])
        };
        Ok(Self {
            scalar: four("materials_step_scalar")?,
            vec4: four("materials_step_vec4")?,
            blocked_k4: four("materials_blocked_k4")?,
            blocked_k8: four("materials_blocked_k8")?,
            compact_k4: four("materials_blocked_k4c")?,
            compact_k8: four("materials_blocked_k8c")?,
            tiled_k8: four("materials_tiled_k8")?,
            tiled_k8_direct: four("materials_tiled_k8d")?,
            tiled_mixed_k8: four("materials_tiled_mixed_k8")?,
            classify_tiles_k8: four("materials_classify_tiles_k8")?,
            scalar_booked: four("materials_step_scalar_booked")?,
            vec4_booked: four("materials_step_vec4_booked")?,
            energy: energy::EnergyKernels::load(device)?,
        })
    }

    /// The kernel stepping with `kernel` that also books the energy (one-step kernels only).
    fn booked(&self, kernel: MaterialKernel, wrap: usize) -> Option<&CudaFunction> {
        match kernel {
            MaterialKernel::Scalar => Some(&self.scalar_booked[wrap]),
            MaterialKernel::Vec4 => Some(&self.vec4_booked[wrap]),
            MaterialKernel::Blocked { .. } | MaterialKernel::Tiled { .. } => None,
        }
    }

    fn function(&self, kernel: MaterialKernel, wrap: usize) -> Option<&CudaFunction> {
        match kernel {
            MaterialKernel::Scalar => Some(&self.scalar[wrap]),
            MaterialKernel::Vec4 => Some(&self.vec4[wrap]),
            MaterialKernel::Blocked {
                steps_per_launch,
                compact,
                ..
            } => match (steps_per_launch, compact) {
                (4, false) => Some(&self.blocked_k4[wrap]),
                (8, false) => Some(&self.blocked_k8[wrap]),
                (4, true) => Some(&self.compact_k4[wrap]),
                (8, true) => Some(&self.compact_k8[wrap]),
                _ => None,
            },
            MaterialKernel::Tiled { .. } => None,
        }
    }
}

/// Threads of the smallest booking block (the vec4 kernel's 128).
const BOOKING_THREADS: usize = 128;

/// Booking blocks' slots for a ledger of `cells` cells: one block per [`BOOKING_THREADS`]
/// cells, at least one.
fn booking_slots(cells: usize) -> usize {
    cells.div_ceil(BOOKING_THREADS).max(1)
}

/// The energy booking of a problem on the device: the ledger's cells, each kind's heat
/// capacity, and the sides' and held cells' sums, added to by every step.
struct DeviceLedger {
    cells: CudaSlice<u32>,
    count: i32,
    capacity: CudaSlice<f64>,
    /// Per booking block: sides (left, right, top, bottom), then held cells, J/m; added up
    /// on the host when taken.
    sums: CudaSlice<f64>,
    /// The host's ledger: the heaters' power per step.
    host: EnergyLedger,
    /// The heaters' energy since the last take, added step by step as the CPU does.
    sources: f64,
}

/// A heat problem held on the device.
pub(super) struct DeviceProblem {
    size: GridSize,
    kinds: i32,
    /// `2 * periodic_rows + periodic_cols`: which compiled variant steps it.
    wrap: usize,
    map: CudaSlice<u8>,
    tables: CudaSlice<f32>,
    table_bytes: u32,
    /// The tables uploaded, to check new ones against.
    host_tables: StepTables,
    ledger: Option<DeviceLedger>,
    /// The tiled kernels' tiles, classified for the last segment length they ran with.
    tiles: Option<TileClasses>,
}

impl DeviceProblem {
    /// Uploads a checked copy of `upload` for a field of `size`.
    fn new(upload: &ProblemUpload<'_>, size: GridSize, stream: &Arc<CudaStream>) -> Result<Self> {
        upload.check(size.cells())?;
        let tables = upload.tables;
        let packed = tables.packed();
        let kinds = i32::try_from(tables.kinds)
            .map_err(|_| HeatlabError::InvalidInput("too many kinds of cells".into()))?;
        let table_bytes = u32::try_from(packed.len() * 4)
            .map_err(|_| HeatlabError::InvalidInput("the step tables are too large".into()))?;
        let map = stream
            .clone_htod(upload.map)
            .map_err(driver_error("uploading the material map"))?;
        let table_buffer = stream
            .clone_htod(&packed)
            .map_err(driver_error("uploading the step tables"))?;
        let ledger = if upload.book_energy {
            let ledger = upload.ledger(size.cols);
            let cells = ledger.cells();
            let count = i32::try_from(cells.len())
                .map_err(|_| HeatlabError::Unsupported("too many cells to book".into()))?;
            // A zero-length allocation is refused: keep one unused element.
            let cells_dev = if cells.is_empty() {
                stream.clone_htod(&[0u32])
            } else {
                stream.clone_htod(cells)
            }
            .map_err(driver_error("uploading the energy ledger"))?;
            Some(DeviceLedger {
                cells: cells_dev,
                count,
                capacity: stream
                    .clone_htod(&tables.capacity)
                    .map_err(driver_error("uploading the heat capacities"))?,
                sums: stream
                    .alloc_zeros::<f64>(5 * booking_slots(cells.len()))
                    .map_err(driver_error("allocating the energy sums"))?,
                host: ledger.clone(),
                sources: 0.0,
            })
        } else {
            None
        };
        // The host arrays the copies read from are freed when this returns.
        stream
            .synchronize()
            .map_err(driver_error("uploading the heat problem"))?;
        Ok(Self {
            size,
            kinds,
            wrap: 2 * usize::from(tables.periodic_rows) + usize::from(tables.periodic_cols),
            map,
            tables: table_buffer,
            table_bytes,
            host_tables: tables.clone(),
            ledger,
            tiles: None,
        })
    }

    /// Whether each step books energy.
    fn books_energy(&self) -> bool {
        self.ledger.is_some()
    }
}

impl CudaBackend {
    /// Holds `problem` (see [`crate::compute::Backend::set_problem`]); compiles the kernels on
    /// first use.
    pub(super) fn set_problem_on_device(
        &mut self,
        problem: Option<ProblemUpload<'_>>,
    ) -> Result<()> {
        self.settle()?;
        self.lookahead = None;
        self.problem = None;
        let Some(upload) = problem else {
            return Ok(());
        };
        let size = self.buffers.as_ref().ok_or(HeatlabError::NoField)?.size;
        dims(size)?;
        if self.material_kernels.is_none() {
            self.material_kernels = Some(MaterialKernels::load(&self.device)?);
        }
        let stream = self.device.stream().clone();
        self.problem = Some(DeviceProblem::new(&upload, size, &stream)?);
        Ok(())
    }

    /// Replaces the held problem's tables (see [`crate::compute::Backend::set_problem_tables`]):
    /// one copy of the packed tables, no map, no compile.
    pub(super) fn set_tables_on_device(&mut self, tables: &StepTables) -> Result<()> {
        self.settle()?;
        self.lookahead = None;
        let stream = self.device.stream().clone();
        let problem = self.problem.as_mut().ok_or(HeatlabError::NoField)?;
        ProblemUpload::check_retable(&problem.host_tables, tables)?;
        let packed = tables.packed();
        stream
            .memcpy_htod(&packed, &mut problem.tables)
            .map_err(driver_error("uploading the step tables"))?;
        // The host array the copy reads from is freed when this returns.
        stream
            .synchronize()
            .map_err(driver_error("uploading the step tables"))?;
        if let Some(ledger) = problem.ledger.as_mut() {
            ledger.host.retable(tables);
        }
        problem.host_tables = tables.clone();
        Ok(())
    }

    /// Whether a heat problem is held.
    pub fn holds_problem(&self) -> bool {
        self.problem.is_some()
    }

    /// Fixes the kernel that steps heat problems (`None`: [`MaterialKernel::auto`]). A kernel
    /// that cannot step the held field, or a blocked one while energy is booked, gives way to
    /// the one-step kernel.
    pub fn set_material_kernel(&mut self, kernel: Option<MaterialKernel>) -> Result<()> {
        if let Some(MaterialKernel::Blocked {
            steps_per_launch,
            segment_rows,
            ..
        }) = kernel
        {
            if !matches!(steps_per_launch, 4 | 8) || segment_rows == 0 {
                return Err(HeatlabError::InvalidInput(format!(
                    "no blocked kernel takes {steps_per_launch} steps per launch over \
                     {segment_rows} rows: it takes 4 or 8 steps over at least one row"
                )));
            }
        }
        if let Some(MaterialKernel::Tiled {
            segment_rows: 0, ..
        }) = kernel
        {
            return Err(HeatlabError::InvalidInput(
                "a tiled kernel marches over at least one row".into(),
            ));
        }
        self.material_choice = kernel;
        Ok(())
    }

    /// The kernel that steps the held problem: the chosen one where it may, else the default.
    pub fn material_kernel(&self) -> Option<MaterialKernel> {
        let problem = self.problem.as_ref()?;
        let size = problem.size;
        let kernel = self
            .material_choice
            .unwrap_or_else(|| MaterialKernel::auto(size));
        let allowed =
            kernel.supports(size) && !(problem.books_energy() && kernel.steps_per_launch() > 1);
        Some(if allowed {
            kernel
        } else {
            MaterialKernel::one_step(size)
        })
    }

    /// What steps the held problem, for timing logs.
    pub(super) fn material_step_method(&self) -> Option<String> {
        let kernel = self.material_kernel()?;
        let booking = self
            .problem
            .as_ref()
            .is_some_and(DeviceProblem::books_energy);
        Some(if booking {
            format!("cuda-{kernel}+energy")
        } else {
            format!("cuda-{kernel}")
        })
    }

    /// `steps` steps of the held problem (blocked launches, then single steps for the rest;
    /// with energy booked, the exchange kernel before every step).
    pub(super) fn advance_problem(&mut self, steps: u64) -> Result<Duration> {
        self.lookahead = None;
        self.last_params = None;
        let kernel = self
            .material_kernel()
            .ok_or_else(|| HeatlabError::Internal("no heat problem is held".into()))?;
        let field_size = self.buffers.as_ref().ok_or(HeatlabError::NoField)?.size;
        let problem_size = self.problem.as_ref().map(|p| p.size);
        if problem_size != Some(field_size) {
            return Err(HeatlabError::InvalidInput(format!(
                "the material map has {} cells but the field has {}",
                problem_size.map_or(0, |size| size.cells()),
                field_size.cells()
            )));
        }
        if let MaterialKernel::Tiled { segment_rows, .. } = kernel {
            self.classify_tiles(segment_rows)?;
        }
        self.timer.start()?;
        let per_launch = kernel.steps_per_launch();
        self.launch_problem(kernel, steps / per_launch)?;
        self.launch_problem(MaterialKernel::one_step(field_size), steps % per_launch)?;
        self.stop_timing()
    }

    /// Queues `launches` launches of `kernel` on the held problem, flipping the buffers after
    /// each; with energy booked (one-step kernels only), each launch also books its step's
    /// exchange.
    fn launch_problem(&mut self, kernel: MaterialKernel, launches: u64) -> Result<()> {
        let stream = self.device.stream().clone();
        let (Some(kernels), Some(problem), Some(buffers)) = (
            self.material_kernels.as_ref(),
            self.problem.as_mut(),
            self.buffers.as_mut(),
        ) else {
            return Err(HeatlabError::Internal("no heat problem is held".into()));
        };
        if let MaterialKernel::Tiled { .. } = kernel {
            let tiles = problem
                .tiles
                .as_ref()
                .ok_or_else(|| HeatlabError::Internal("the tiles are not classified".into()))?;
            // Faces computed once change a zero's sign where a source is -0 (materials.cu):
            // then the kernel that computes every face.
            let negative_zero = problem
                .host_tables
                .source
                .iter()
                .any(|s| s.to_bits() == (-0.0f32).to_bits());
            let wrap = problem.wrap;
            let lean = if negative_zero {
                &kernels.tiled_k8_direct[wrap]
            } else {
                &kernels.tiled_k8[wrap]
            };
            let mixed = &kernels.tiled_mixed_k8[wrap];
            for _ in 0..launches {
                launch_tiled_step(&stream, lean, mixed, kernel, problem, tiles, buffers)?;
                buffers.flip();
            }
            return Ok(());
        }
        let booking = problem.ledger.is_some();
        let function = if booking {
            kernels.booked(kernel, problem.wrap)
        } else {
            kernels.function(kernel, problem.wrap)
        }
        .ok_or_else(|| HeatlabError::Cuda {
            context: format!("launching {kernel}"),
            message: "no such kernel".into(),
        })?;
        for _ in 0..launches {
            if booking {
                launch_booked_step(&stream, function, kernel, problem, buffers)?;
            } else {
                launch_step(&stream, function, kernel, problem, buffers)?;
            }
            buffers.flip();
        }
        Ok(())
    }

    /// The energy booked since the last call (see [`crate::compute::Backend::take_energy_exchange`]).
    pub(super) fn take_energy_on_device(&mut self) -> Result<EnergyExchange> {
        self.settle()?;
        let stream = self.device.stream().clone();
        let problem = self
            .problem
            .as_mut()
            .ok_or_else(|| HeatlabError::InvalidInput("no heat problem is held".into()))?;
        let Some(ledger) = problem.ledger.as_mut() else {
            return Ok(EnergyExchange::default());
        };
        let sums = stream
            .clone_dtoh(&ledger.sums)
            .map_err(driver_error("downloading the energy sums"))?;
        stream
            .memset_zeros(&mut ledger.sums)
            .map_err(driver_error("clearing the energy sums"))?;
        stream
            .synchronize()
            .map_err(driver_error("downloading the energy sums"))?;
        // The blocks' sums in block order: the same total however the blocks ran.
        let mut total = [0.0f64; 5];
        for slots in sums.chunks_exact(5) {
            for (sum, slot) in total.iter_mut().zip(slots) {
                *sum += slot;
            }
        }
        let exchange = EnergyExchange {
            sources: ledger.sources,
            sides: [total[0], total[1], total[2], total[3]],
            held: total[4],
        };
        ledger.sources = 0.0;
        Ok(exchange)
    }
}
