//! Stepping the diffusion: one [`Backend`] interface with the CPU (the reference) and CUDA behind it.
//!
//! The step is Jacobi: every cell reads its neighbours from the previous step.
//! `lapl = 4*f - up - down - left - right` and `f_next = f - coeff*lapl`, evaluated in that order
//! in `f32` by both backends so that they agree to the last bit.

pub mod brush;
pub mod cpu;
mod cpu_problem;
mod cpu_stencil;
pub mod cuda;
pub mod preview;
mod stats;

use std::fmt;
use std::sync::Arc;
use std::time::Duration;

pub use crate::grid::Boundary;
pub use brush::{BrushEdge, BrushStamp, CellValues, FieldEdit};
pub use cpu::{CpuBackend, CpuMethod};
pub use cuda::{CudaBackend, CudaKernel, KernelChoice, KernelRefusal};
pub use preview::{Layer, PreviewPixels, PreviewSpec, RangedPreview, ReducedPreview};
pub use stats::FieldStats;

use crate::error::{CudaUnavailable, HeatlabError, Result};
use crate::field::JaggedParams;
use crate::grid::{Grid, GridSize, RowSpan};
use crate::problem::energy::total_of_rows;
use crate::problem::{CompiledProblem, EnergyExchange, EnergyLedger, StepTables};
use crate::solve::{ProblemSolver, SolveOptions, SolveReport, SolveRequest};

/// Largest coefficient for which the explicit scheme does not blow up.
pub const STABLE_COEFF_LIMIT: f32 = 0.25;

/// What one call to [`Backend::advance`] needs besides the field.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct StepParams {
    /// Diffusion coefficient, `f -= coeff * lapl`.
    pub coeff: f32,
    /// What lies outside the grid.
    pub boundary: Boundary,
}

impl Default for StepParams {
    fn default() -> Self {
        Self {
            coeff: STABLE_COEFF_LIMIT,
            boundary: Boundary::Dirichlet,
        }
    }
}

impl StepParams {
    /// Checks the coefficient: it must be positive and finite, and at most 0.25 unless
    /// `allow_unstable` (above 0.25 the scheme amplifies the checkerboard mode).
    pub fn validate(&self, allow_unstable: bool) -> Result<()> {
        if !self.coeff.is_finite() || self.coeff <= 0.0 {
            return Err(HeatlabError::InvalidInput(format!(
                "coefficient must be a positive number, got {}",
                self.coeff
            )));
        }
        if self.coeff > STABLE_COEFF_LIMIT && !allow_unstable {
            return Err(HeatlabError::InvalidInput(format!(
                "coefficient {} is above 0.25, where the explicit scheme blows up; \
                 pass --allow-unstable to run it anyway",
                self.coeff
            )));
        }
        Ok(())
    }
}

/// Which kind of backend.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
pub enum BackendKind {
    /// Multi-threaded CPU, the reference.
    Cpu,
    /// NVIDIA GPU through CUDA.
    Cuda,
}

impl fmt::Display for BackendKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::Cpu => "cpu",
            Self::Cuda => "cuda",
        })
    }
}

/// What the user asked for: a backend, or the best that works here.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Hash, Default, serde::Serialize, serde::Deserialize,
)]
pub enum BackendChoice {
    /// CUDA when a GPU works, otherwise the CPU.
    #[default]
    Auto,
    /// The CPU.
    Cpu,
    /// CUDA, or an error that says why not.
    Cuda,
}

impl BackendChoice {
    /// Every choice, in the order a selector lists them.
    pub const ALL: [Self; 3] = [Self::Auto, Self::Cpu, Self::Cuda];
}

impl fmt::Display for BackendChoice {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::Auto => "auto",
            Self::Cpu => "cpu",
            Self::Cuda => "cuda",
        })
    }
}

impl std::str::FromStr for BackendChoice {
    type Err = HeatlabError;

    fn from_str(text: &str) -> Result<Self, Self::Err> {
        crate::choice::parse_choice(&Self::ALL, text, "backend")
    }
}

/// A device that holds a field and steps it.
///
/// `upload` replaces the field (a GPU keeps its buffers when the size is the same, so that
/// addresses shared with other libraries stay valid); `advance` steps it in place (from the caller's view) and returns
/// the time the stepping took on the device (GPU events on CUDA, wall time on the CPU).
pub trait Backend: Send {
    /// CPU or CUDA.
    fn kind(&self) -> BackendKind;
    /// A name for people: the GPU's model, or the CPU with its thread count.
    fn device_name(&self) -> String;
    /// The kernel or loop used for `steps` steps of the current field, for timing logs.
    fn step_method(&self) -> String;
    /// Replaces the field held by the backend.
    fn upload(&mut self, field: &Grid) -> Result<()>;
    /// Advances the held field by `steps` Jacobi steps.
    fn advance(&mut self, steps: u64, params: &StepParams) -> Result<Duration>;
    /// A copy of the held field.
    fn download(&mut self) -> Result<Grid>;
    /// The Laplacian of the held field under `boundary` (it is not kept while stepping).
    fn laplacian(&mut self, boundary: Boundary) -> Result<Grid>;

    /// Generates the jagged field of `params` on the device and makes it the held field,
    /// returning the device's time for it; or says why this backend cannot, and the caller
    /// generates on the host ([`crate::field::generate_jagged`]) and uploads.
    fn generate_jagged(
        &mut self,
        params: &JaggedParams,
    ) -> std::result::Result<Duration, DeviceFieldUnavailable> {
        let _ = params;
        Err(DeviceFieldUnavailable::CpuBackend)
    }

    /// The CUDA backend behind this one, for what only it has (the kernel choice, the user
    /// kernel); `None` for the CPU.
    fn cuda_mut(&mut self) -> Option<&mut CudaBackend> {
        None
    }

    /// The CUDA backend behind this one, to read what only it has; `None` for the CPU.
    fn cuda(&self) -> Option<&CudaBackend> {
        None
    }

    /// The field or its Laplacian (under `spec.boundary`) reduced to fit `spec.max_size`, not
    /// yet coloured.
    fn reduce_preview(&mut self, spec: &PreviewSpec<'_>) -> Result<ReducedPreview> {
        self.reduce_preview_into(spec, Vec::new())
    }

    /// [`Backend::reduce_preview`], the values written into `storage`, whose allocation is
    /// reused when it is large enough (the values of a picture no longer shown: a new megabyte
    /// per picture costs page faults every frame). The default downloads at full resolution
    /// and reduces on the CPU; a GPU backend reduces on the device so that only the reduced
    /// values cross to the host.
    fn reduce_preview_into(
        &mut self,
        spec: &PreviewSpec<'_>,
        storage: Vec<f32>,
    ) -> Result<ReducedPreview> {
        let grid = match spec.layer {
            Layer::Field => self.download()?,
            Layer::Laplacian => self.laplacian(spec.boundary)?,
        };
        Ok(ReducedPreview::of_into(&grid, spec.max_size, storage))
    }

    /// Keeps a copy of the held field as the run's initial field where the field is (the GPU:
    /// a copy on the device), so that a field generated there need not cross to the host.
    /// Returns whether it keeps one; the default keeps none (the caller keeps the field).
    fn keep_initial(&mut self) -> Result<bool> {
        Ok(false)
    }

    /// Makes the initial field kept by [`Backend::keep_initial`] the held one.
    fn restore_initial(&mut self) -> Result<()> {
        Err(HeatlabError::Internal(
            "this backend keeps no initial field".into(),
        ))
    }

    /// A copy of the initial field kept by [`Backend::keep_initial`].
    fn download_initial(&mut self) -> Result<Grid> {
        Err(HeatlabError::Internal(
            "this backend keeps no initial field".into(),
        ))
    }

    /// Frees the initial field kept by [`Backend::keep_initial`], if any.
    fn forget_initial(&mut self) {}

    /// Writes `layer` of the held field (the Laplacian under `boundary`) as one float32 `.npy`
    /// at `path` where the field's parts are held: each rank of a field split over ranks
    /// writes its own rows at their offset, and no process holds the whole field. `Ok(false)`
    /// when this backend does not (the default): the caller downloads the layer and writes it.
    fn write_npy_where_held(
        &mut self,
        layer: Layer,
        boundary: Boundary,
        path: &std::path::Path,
    ) -> Result<bool> {
        let _ = (layer, boundary, path);
        Ok(false)
    }

    /// Makes the float32 or float64 `.npy` array at `path`, of `size` as its header says (read
    /// by the caller), the held field, read where the field's parts are held: each rank of a
    /// field split over ranks reads its own rows at their offset. `Ok(false)` when this
    /// backend does not (the default): the caller reads the file and uploads it.
    fn load_npy_where_held(&mut self, path: &std::path::Path, size: GridSize) -> Result<bool> {
        let _ = (path, size);
        Ok(false)
    }

    /// Both views of a frame reduced at once ([`Backend::reduce_preview_into`] each, into
    /// `storage`), each with its colour range when the backend picks it where the values are
    /// (a GPU: one wait for both, and only the means and two numbers cross to the host). The
    /// default reduces one after the other and leaves the ranges to the host.
    fn reduce_previews_into(
        &mut self,
        specs: [&PreviewSpec<'_>; 2],
        storage: [Vec<f32>; 2],
    ) -> Result<[RangedPreview; 2]> {
        let [first, second] = storage;
        let mut ranged = |spec: &PreviewSpec<'_>, storage: Vec<f32>| {
            Ok(RangedPreview {
                reduced: self.reduce_preview_into(spec, storage)?,
                range: None,
            })
        };
        Ok([ranged(specs[0], first)?, ranged(specs[1], second)?])
    }

    /// Queues both views of a frame (as [`Backend::reduce_previews_into`] reduces them) without
    /// waiting for them, so that more work (the next frame's steps) can be queued behind;
    /// [`Backend::take_queued_previews`] then waits for the views alone. `false` where the
    /// backend works at once (the CPU): the caller reduces with `reduce_previews_into`.
    fn queue_previews(&mut self, specs: [&PreviewSpec<'_>; 2]) -> Result<bool> {
        let _ = specs;
        Ok(false)
    }

    /// The views queued by [`Backend::queue_previews`], into `storage`.
    fn take_queued_previews(&mut self, storage: [Vec<f32>; 2]) -> Result<[RangedPreview; 2]> {
        let _ = storage;
        Err(HeatlabError::Internal("no previews are queued".into()))
    }

    /// The field or its Laplacian reduced to fit `spec.max_size` and coloured through
    /// `spec.table` (on the host: the reduced values are small).
    fn render_preview(&mut self, spec: &PreviewSpec<'_>) -> Result<PreviewPixels> {
        Ok(self.reduce_preview(spec)?.colour(spec))
    }

    /// Total heat, minimum and maximum of the held field. The default downloads it; a GPU
    /// backend reduces on the device.
    fn statistics(&mut self) -> Result<FieldStats> {
        Ok(FieldStats::of(&self.download()?))
    }

    /// Statistics of the held field's rows `rows` alone (a band's own rows, not its halos).
    /// The default downloads the field.
    fn statistics_of_rows(&mut self, rows: RowSpan) -> Result<FieldStats> {
        let field = self.download()?;
        let cells = brush::row_range(field.size(), rows.first, rows.count * field.cols())?;
        Ok(FieldStats::of_values(&field.as_slice()[cells]))
    }

    /// Starts advancing the held field by `steps` steps. A device that runs them on its own
    /// returns [`Advance::Queued`] at once: the host may draw and prepare the next frame
    /// meanwhile, and must collect the time with [`Backend::finish_advance`] before the next
    /// advance (anything else it asks of the backend waits for the steps). The default steps
    /// now and returns [`Advance::Done`].
    fn start_advance(&mut self, steps: u64, params: &StepParams) -> Result<Advance> {
        self.advance(steps, params).map(Advance::Done)
    }

    /// Waits for the advance queued by [`Backend::start_advance`] and returns its device time.
    fn finish_advance(&mut self) -> Result<Duration> {
        Err(HeatlabError::Internal("no advance is queued".into()))
    }

    /// Adds one dab of the brush to the held field (see [`BrushStamp`]). The default downloads,
    /// stamps on the host and uploads; a GPU backend touches only the stamp's cells on the device.
    fn apply_brush(&mut self, stamp: &BrushStamp) -> Result<()> {
        stamp.check()?;
        let mut field = self.download()?;
        stamp.apply(&mut field);
        self.upload(&field)
    }

    /// The values of a few cells of the held field (row-major indices), for probes, profiles
    /// and undo. The default downloads the field; a GPU backend copies only those cells.
    fn gather(&mut self, cells: &[u32]) -> Result<Vec<f32>> {
        let field = self.download()?;
        brush::check_cells(field.size(), cells, None)?;
        Ok(cells
            .iter()
            .map(|&cell| field.as_slice()[cell as usize])
            .collect())
    }

    /// Copies rows `first_row..` of the held field into `values` (whole rows: a band's edge
    /// rows for its neighbours). The default downloads the field; a GPU copies the rows alone.
    fn read_rows(&mut self, first_row: usize, values: &mut [f32]) -> Result<()> {
        let field = self.download()?;
        let range = brush::row_range(field.size(), first_row, values.len())?;
        values.copy_from_slice(&field.as_slice()[range]);
        Ok(())
    }

    /// Overwrites rows `first_row..` of the held field with `values` (whole rows: a band's
    /// halo from its neighbours). The default downloads, writes and uploads.
    fn write_rows(&mut self, first_row: usize, values: &[f32]) -> Result<()> {
        let mut field = self.download()?;
        let range = brush::row_range(field.size(), first_row, values.len())?;
        field.as_mut_slice()[range].copy_from_slice(values);
        self.upload(&field)
    }

    /// Steps the held field with a heat problem's scheme (see [`crate::problem`]) from now on,
    /// ignoring [`StepParams`], until `None` returns to the uniform stencil. Called again to
    /// change the map (material edits) or the tables (a heater switched, a side changed).
    fn set_problem(&mut self, problem: Option<ProblemUpload<'_>>) -> Result<()> {
        match problem {
            None => Ok(()),
            Some(_) => Err(HeatlabError::Unsupported(format!(
                "the {} backend cannot step heat problems",
                self.kind()
            ))),
        }
    }

    /// Replaces the held problem's tables by `tables` of the same kinds, held alike (a heater
    /// switched or its power changed): the map, the energy ledger's cells and what it has
    /// booked stay, and nothing is compiled. The default refuses; the caller then sets the
    /// whole problem again with [`Backend::set_problem`].
    fn set_problem_tables(&mut self, tables: &StepTables) -> Result<()> {
        let _ = tables;
        Err(HeatlabError::Unsupported(format!(
            "the {} backend cannot change a problem's tables alone",
            self.kind()
        )))
    }

    /// The energy the held problem's sources, sides and held cells put in since the last call
    /// (zero unless the problem was set with `book_energy`).
    fn take_energy_exchange(&mut self) -> Result<EnergyExchange> {
        Err(HeatlabError::Unsupported(format!(
            "the {} backend holds no heat problem",
            self.kind()
        )))
    }

    /// The energy stored in the held field's free cells under the held problem, J/m, summed
    /// as [`crate::problem::energy::stored_energy`] sums it (a GPU backend sums on the device
    /// in the same order, so only the total crosses to the host).
    fn stored_energy(&mut self) -> Result<f64> {
        Ok(total_of_rows(&self.stored_energy_by_row()?))
    }

    /// The row sums [`Backend::stored_energy`] adds up, in row order (see
    /// [`crate::problem::energy::stored_energy_by_row`]).
    fn stored_energy_by_row(&mut self) -> Result<Vec<f64>> {
        Err(HeatlabError::Unsupported(format!(
            "the {} backend holds no heat problem",
            self.kind()
        )))
    }

    /// Solves `solver`'s problem for `request` from the held field (the steady state, or one
    /// implicit step) and makes the answer the held field; held cells keep their values. The
    /// backend keeps its grids for the same `solver` (the same `Arc`) between calls. Every
    /// backend runs [`crate::solve::solve_on`] on its own operations, so they agree bit for
    /// bit. The default refuses.
    fn solve_problem(
        &mut self,
        solver: &Arc<ProblemSolver>,
        request: SolveRequest,
        options: &SolveOptions,
    ) -> Result<SolveReport> {
        let _ = (solver, request, options);
        Err(HeatlabError::Unsupported(format!(
            "the {} backend has no solver",
            self.kind()
        )))
    }

    /// Sets a few cells of the held field (undo and redo). The default downloads, sets and
    /// uploads; a GPU backend writes only those cells.
    fn scatter(&mut self, cells: &[u32], values: &[f32]) -> Result<()> {
        let mut field = self.download()?;
        brush::check_cells(field.size(), cells, Some(values))?;
        for (&cell, &value) in cells.iter().zip(values) {
            field.as_mut_slice()[cell as usize] = value;
        }
        self.upload(&field)
    }
}

/// A heat problem as a backend takes it: the per-step constants and the kind of every cell.
#[derive(Debug, Clone, Copy)]
pub struct ProblemUpload<'a> {
    /// The constants of a step.
    pub tables: &'a StepTables,
    /// The kind of every cell, row-major, as many as the held field has cells.
    pub map: &'a [u8],
    /// Whether each step also books the energy that enters (slower: a pass over the cells
    /// that exchange heat with the outside every step).
    pub book_energy: bool,
    /// The rows whose energy is booked (`None`: all; a band of a field split over ranks books
    /// its own rows, not its halos).
    pub booked_rows: Option<RowSpan>,
}

impl<'a> ProblemUpload<'a> {
    /// The upload of a compiled problem.
    pub fn of(problem: &'a CompiledProblem, book_energy: bool) -> Self {
        Self {
            tables: &problem.tables,
            map: &problem.map,
            book_energy,
            booked_rows: None,
        }
    }

    /// The energy ledger of this upload for a field of `cols` columns.
    pub fn ledger(&self, cols: usize) -> EnergyLedger {
        EnergyLedger::of_rows(self.tables, self.map, cols, self.booked_rows)
    }

    /// Checks that `tables` can replace `held` ones without touching the map or the energy
    /// ledger's cells: the same kinds (heat capacities), held alike, wrapping alike.
    pub fn check_retable(held: &StepTables, tables: &StepTables) -> Result<()> {
        let same = held.kinds == tables.kinds
            && held.held == tables.held
            && held.capacity == tables.capacity
            && (held.periodic_rows, held.periodic_cols)
                == (tables.periodic_rows, tables.periodic_cols);
        if !same {
            return Err(HeatlabError::InvalidInput(
                "new tables must keep the kinds and which of them are held".into(),
            ));
        }
        Ok(())
    }

    /// Checks that the map fits `cells` cells and names only kinds the tables have.
    pub fn check(&self, cells: usize) -> Result<()> {
        if self.map.len() != cells {
            return Err(HeatlabError::InvalidInput(format!(
                "the material map has {} cells but the field has {cells}",
                self.map.len()
            )));
        }
        if let Some(bad) = self.map.iter().find(|&&k| k as usize >= self.tables.kinds) {
            return Err(HeatlabError::InvalidInput(format!(
                "the material map names kind {bad} but there are only {} kinds",
                self.tables.kinds
            )));
        }
        Ok(())
    }
}

/// Why a backend did not generate the jagged field on its device.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DeviceFieldUnavailable {
    /// The backend is the CPU, where the field is generated anyway.
    CpuBackend,
    /// cuFFT (libcufft) could not be loaded.
    CufftMissing,
    /// The GPU could not do it; what went wrong.
    Failed(String),
}

impl fmt::Display for DeviceFieldUnavailable {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::CpuBackend => f.write_str("the CPU backend generates the field on the CPU"),
            Self::CufftMissing => f.write_str(
                "cuFFT (libcufft) was not found; install the CUDA toolkit's cufft to generate on the GPU",
            ),
            Self::Failed(reason) => write!(f, "generating on the GPU failed: {reason}"),
        }
    }
}

/// What [`Backend::start_advance`] did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Advance {
    /// The steps are done; they took this long.
    Done(Duration),
    /// The steps are queued on the device; [`Backend::finish_advance`] waits for them.
    Queued,
}

/// Why `create_backend(Auto)` runs on the CPU: CUDA cannot be used here, and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CpuFallback {
    /// Why CUDA was not used.
    pub reason: CudaUnavailable,
}

impl fmt::Display for CpuFallback {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "using the CPU: {}", self.reason)
    }
}

/// Creates the backend the user chose. For `Auto` it falls back to the CPU and returns why
/// CUDA was not used, so the caller can tell the user.
pub fn create_backend(choice: BackendChoice) -> Result<(Box<dyn Backend>, Option<CpuFallback>)> {
    match choice {
        BackendChoice::Cpu => Ok((Box::new(CpuBackend::new()), None)),
        BackendChoice::Cuda => Ok((Box::new(CudaBackend::new()?), None)),
        BackendChoice::Auto => match CudaBackend::new() {
            Ok(cuda) => Ok((Box::new(cuda), None)),
            Err(error) => {
                let fallback = CpuFallback {
                    reason: CudaUnavailable::from_error(&error),
                };
                log::info!("{fallback}");
                Ok((Box::new(CpuBackend::new()), Some(fallback)))
            }
        },
    }
}
