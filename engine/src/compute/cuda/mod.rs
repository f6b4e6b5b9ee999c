//! The CUDA backend: `kernels/diffusion.cu`, compiled by NVRTC, on the device's own stream.

mod aside;
pub mod device;
mod display;
mod edit;
mod field;
mod frame;
mod initial;
mod interop;
mod kernel;
mod launch;
mod materials;
mod multigrid;
mod per_boundary;
mod resident;
mod stepping;
pub mod user_kernel;

use std::time::Duration;

use std::sync::Arc;

use cudarc::driver::{CudaFunction, CudaSlice, CudaStream};

pub use aside::AsideBuffers;
pub use device::{driver_error, CudaDevice, GpuTimer};
use display::PreviewBuffers;
pub use display::StageTiming;
pub use field::FIELD_SOURCE;
pub use frame::FRAME_RANGE_SOURCE;
pub use interop::{DeviceFieldView, ForeignDeviceArray, PointerPlace};
pub use kernel::{CudaKernel, KernelChoice, KernelRefusal};
pub use materials::{MaterialKernel, TileCounts, MATERIALS_SOURCE};
use per_boundary::{base, BoundaryKernels};
use stepping::{CachedGraph, Lookahead};
pub use user_kernel::UserContract;

use super::preview::{PreviewSpec, RangedPreview, ReducedPreview};
use super::{
    Advance, Backend, BackendKind, Boundary, DeviceFieldUnavailable, FieldStats, ProblemUpload,
    StepParams,
};
use crate::error::{HeatlabError, Result};
use crate::field::JaggedParams;
use crate::grid::{Grid, GridSize, RowSpan};
use crate::problem::EnergyExchange;

/// The diffusion kernels' source, embedded so that the binary needs no files beside it, behind
/// the stencil's helpers (`stencil.cu`: boundaries, a cell's Laplacian, shared with the display
/// kernels); the resident kernel, in a file of its own, uses the helpers of `diffusion.cu`.
pub const DIFFUSION_SOURCE: &str = concat!(
    include_str!("../../../../kernels/stencil.cu"),
    include_str!("../../../../kernels/diffusion.cu"),
    include_str!("../../../../kernels/resident.cu")
);
/// The display kernels' source (reduce to the shown size, statistics), behind the stencil's
/// helpers.
pub const DISPLAY_SOURCE: &str = concat!(
    include_str!("../../../../kernels/stencil.cu"),
    include_str!("../../../../kernels/display.cu")
);

/// The kernels of [`DIFFUSION_SOURCE`] and [`DISPLAY_SOURCE`]; the stencil's one per boundary.
struct DiffusionKernels {
    shared: BoundaryKernels,
    jacobi: BoundaryKernels,
    jacobi_vec4_rows8: BoundaryKernels,
    jacobi_vec4_rows16: BoundaryKernels,
    temporal_k4: BoundaryKernels,
    temporal_k8: BoundaryKernels,
    temporal_packed1_k8: BoundaryKernels,
    temporal_packed2_k8: BoundaryKernels,
    resident_h4: BoundaryKernels,
    resident_h8: BoundaryKernels,
    laplacian: BoundaryKernels,
    seed_inplace: CudaFunction,
    block_mean: display::BlockMeanKernels,
    field_stats: CudaFunction,
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
    /// A step computed ahead by a download of the Laplacian (see [`Lookahead`]).
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
    /// The heat-problem kernels (`kernels/materials.cu`), compiled when a problem is first set.
    material_kernels: Option<materials::MaterialKernels>,
    /// The heat problem stepped instead of the uniform stencil, if any.
    problem: Option<materials::DeviceProblem>,
    /// The kernel chosen for heat problems (`None`: [`MaterialKernel::auto`]).
    material_choice: Option<MaterialKernel>,
    /// Brush, gather and scatter (`kernels/brush.cu`).
    edit_kernels: edit::EditKernels,
    /// The jagged field's generation on the device, once asked for (or why it cannot run).
    field_generator: Option<std::result::Result<field::FieldGenerator, DeviceFieldUnavailable>>,
    /// The resident kernel's SM count and grid barrier.
    resident: resident::ResidentState,
    /// A frame's two previews and their ranges (`reduce_previews_into`).
    frame: frame::FrameBuffers,
    /// The run's initial field, when kept on the device (`keep_initial`).
    kept_initial: Option<initial::KeptInitial>,
    /// The solver's grids (`kernels/multigrid.cu`), kept for the solver they were made for.
    solver_grids: Option<multigrid::DeviceMultigrid>,
    /// Rows stepped aside on a second stream, once asked for (`aside.rs`).
    aside: Option<aside::AsideWork>,
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
        let per_boundary = |base: &str| BoundaryKernels::load(&device, &module, base);
        let kernels = DiffusionKernels {
            shared: per_boundary(base::SHARED_STEP)?,
            jacobi: per_boundary(base::JACOBI_STEP)?,
            jacobi_vec4_rows8: per_boundary(base::JACOBI_VEC4_ROWS8)?,
            jacobi_vec4_rows16: per_boundary(base::JACOBI_VEC4_ROWS16)?,
            temporal_k4: per_boundary(base::TEMPORAL_K4)?,
            temporal_k8: per_boundary(base::TEMPORAL_K8)?,
            temporal_packed1_k8: per_boundary(base::TEMPORAL_PACKED1_K8)?,
            temporal_packed2_k8: per_boundary(base::TEMPORAL_PACKED2_K8)?,
            resident_h4: per_boundary(base::RESIDENT_H4)?,
            resident_h8: per_boundary(base::RESIDENT_H8)?,
            laplacian: per_boundary(base::LAPLACIAN)?,
            seed_inplace: device.function(&module, "seed_diffusion_inplace")?,
            block_mean: display::BlockMeanKernels::load(&device, &display)?,
            field_stats: device.function(&display, "field_stats")?,
        };
        let timer = device.timer()?;
        let edit_kernels = edit::EditKernels::load(&device)?;
        let resident = resident::ResidentState::new(&device)?;
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
            material_kernels: None,
            problem: None,
            material_choice: None,
            edit_kernels,
            field_generator: None,
            resident,
            frame: frame::FrameBuffers::default(),
            kept_initial: None,
            solver_grids: None,
            aside: None,
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
        let function = self.kernels.laplacian[boundary].clone();
        let buffers = self.buffers()?;
        let size = buffers.size;
        let (rows, cols) = dims(size)?;
        let (current, laplacian) = buffers.field_and_laplacian(&stream)?;
        launch::laplacian(&stream, &function, current, laplacian, (rows, cols))
    }

    /// Refuses a `size` field whose buffers (current, next and Laplacian) would not fit in the
    /// GPU's free memory, naming both sizes: checked before a field is uploaded or generated,
    /// and by a run before it reads a large array it would upload.
    pub fn ensure_room_for(&mut self, size: GridSize) -> Result<()> {
        let (free, _) = self.device.memory_info()?;
        crate::memory::ensure_gpu_memory(
            &format!("{size} field (current, next and Laplacian buffers)"),
            3 * size.bytes(),
            free,
        )
    }

    /// Stops timing an advance: reads its device time now, or, when the advance is queued,
    /// only marks its end.
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
}

impl Backend for CudaBackend {
    fn kind(&self) -> BackendKind {
        BackendKind::Cuda
    }

    fn device_name(&self) -> String {
        self.device.name().to_string()
    }

    fn step_method(&self) -> String {
        if let Some(method) = self.material_step_method() {
            return method;
        }
        match self.stepper() {
            stepping::Stepper::Builtin(kernel) => format!("cuda-{kernel}"),
            stepping::Stepper::User => "cuda-user".into(),
        }
    }

    fn upload(&mut self, field: &Grid) -> Result<()> {
        self.settle()?;
        let size = field.size();
        dims(size)?;
        if self.buffers.as_ref().is_some_and(|b| b.size == size) {
            // Into the buffers the field has: their addresses (held by graphs, and by views
            // other libraries read) stay valid.
            return self.overwrite_on_device(field);
        }
        // Release the old field (and the graphs that point into it) first so that its memory
        // counts as free.
        self.graphs.clear();
        self.buffers = None;
        self.lookahead = None;
        self.last_params = None;
        if let Some(Ok(generator)) = self.field_generator.as_mut() {
            generator.release();
        }
        self.ensure_room_for(size)?;
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

    fn set_problem(&mut self, problem: Option<ProblemUpload<'_>>) -> Result<()> {
        self.set_problem_on_device(problem)
    }

    fn solve_problem(
        &mut self,
        solver: &std::sync::Arc<crate::solve::ProblemSolver>,
        request: crate::solve::SolveRequest,
        options: &crate::solve::SolveOptions,
    ) -> Result<crate::solve::SolveReport> {
        self.solve_on_device(solver, request, options)
    }

    fn set_problem_tables(&mut self, tables: &crate::problem::StepTables) -> Result<()> {
        self.set_tables_on_device(tables)
    }

    fn take_energy_exchange(&mut self) -> Result<EnergyExchange> {
        self.take_energy_on_device()
    }

    fn stored_energy_by_row(&mut self) -> Result<Vec<f64>> {
        self.stored_energy_on_device()
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
        let rows = self.buffers()?.size.rows;
        self.statistics_on_device(RowSpan {
            first: 0,
            count: rows,
        })
    }

    fn statistics_of_rows(&mut self, rows: RowSpan) -> Result<FieldStats> {
        self.statistics_on_device(rows)
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

    fn read_rows(&mut self, first_row: usize, values: &mut [f32]) -> Result<()> {
        self.read_rows_on_device(first_row, values)
    }

    fn write_rows(&mut self, first_row: usize, values: &[f32]) -> Result<()> {
        self.write_rows_on_device(first_row, values)
    }

    fn reduce_preview_into(
        &mut self,
        spec: &PreviewSpec<'_>,
        storage: Vec<f32>,
    ) -> Result<ReducedPreview> {
        self.reduce_preview_on_device(spec, storage)
    }

    fn reduce_previews_into(
        &mut self,
        specs: [&PreviewSpec<'_>; 2],
        storage: [Vec<f32>; 2],
    ) -> Result<[RangedPreview; 2]> {
        self.reduce_previews_on_device(specs, storage)
    }

    fn queue_previews(&mut self, specs: [&PreviewSpec<'_>; 2]) -> Result<bool> {
        self.queue_previews_on_device(specs).map(|()| true)
    }

    fn take_queued_previews(&mut self, storage: [Vec<f32>; 2]) -> Result<[RangedPreview; 2]> {
        self.take_previews_from_device(storage)
    }

    fn keep_initial(&mut self) -> Result<bool> {
        self.keep_initial_on_device().map(|()| true)
    }

    fn restore_initial(&mut self) -> Result<()> {
        self.restore_initial_on_device()
    }

    fn download_initial(&mut self) -> Result<Grid> {
        self.download_initial_from_device()
    }

    fn forget_initial(&mut self) {
        self.kept_initial = None;
    }
}
