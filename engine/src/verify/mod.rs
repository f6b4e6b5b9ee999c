//! Differential verification: random, reproducible sequences of what the app and the CLI do
//! (upload, advance in chunks, change coefficient, boundary, kernel and graph use, Laplacian,
//! preview, download, regenerate, switch backend), run on a subject backend and on the CPU
//! reference side by side and compared bit for bit after every operation.
//!
//! With CUDA the subject is the GPU and the reference the CPU's row method; without it the
//! subject is the CPU's fast methods (rows, blocked) and the reference the plain loop.

pub mod compare;
pub mod physics;
mod problem_ops;
pub mod problems;
pub mod sequence;

use std::collections::{BTreeMap, HashSet};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Instant;

use crate::compute::{Backend, CpuBackend, CpuMethod, CudaBackend, StepParams};
use crate::error::{HeatlabError, Result};
use crate::field::{generate_jagged, JaggedParams};
use crate::grid::{Grid, GridSize};
use crate::render::preview::render_on;
use crate::render::PreviewRequest;
use crate::sim::agreement::first_difference;
use crate::sim::generate::generate_on;

pub use compare::{CellDifference, Compared, Divergence};
pub use sequence::{FieldSource, MethodChoice, MethodFamily, Operation, SequenceGenerator};

/// What to run.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct VerifyOptions {
    /// Seed of the first sequence; sequence `i` uses `seed + i`.
    pub seed: u64,
    /// Number of sequences.
    pub sequences: u64,
    /// Operations per sequence.
    pub operations: usize,
    /// Largest field, in cells.
    pub max_cells: usize,
    /// Fewest rows of a field (a field split over `N` ranks needs `N`).
    pub min_rows: usize,
}

impl Default for VerifyOptions {
    fn default() -> Self {
        Self {
            seed: 1,
            sequences: 100,
            operations: 24,
            max_cells: 160_000,
            min_rows: 1,
        }
    }
}

/// What was exercised: steps per method, boundary and graph use, and operation counts.
#[derive(Debug, Clone, Default, PartialEq, serde::Serialize)]
pub struct Coverage {
    /// Steps taken per stepping method (as the backend names it).
    pub steps_by_method: BTreeMap<String, u64>,
    /// Steps taken per boundary.
    pub steps_by_boundary: BTreeMap<String, u64>,
    /// CUDA graph replays (each 32 launches).
    pub graph_replays: u64,
    /// Steps taken on CUDA while graphs were turned off.
    pub steps_without_graphs: u64,
    /// Operations run per kind.
    pub operations: BTreeMap<String, u64>,
    /// Distinct field sizes uploaded.
    pub sizes: u64,
}

/// The outcome of a verification run.
#[derive(Debug, Clone, serde::Serialize)]
pub struct VerifyReport {
    /// What was checked ("cuda" or "cpu methods").
    pub subject: String,
    /// The device of the subject.
    pub device: String,
    /// What it was checked against.
    pub reference: String,
    /// The options.
    pub seed: u64,
    /// Sequences asked for.
    pub sequences: u64,
    /// Sequences run to the end without a divergence.
    pub sequences_passed: u64,
    /// Operations run, all sequences.
    pub operations_run: u64,
    /// Steps taken by the subject, all sequences.
    pub steps_run: u64,
    /// Wall time.
    pub elapsed_s: f64,
    /// What was exercised.
    pub coverage: Coverage,
    /// The first divergence, if any (the run stops there).
    pub divergence: Option<Divergence>,
}

impl VerifyReport {
    /// Whether every operation agreed bit for bit.
    pub fn passed(&self) -> bool {
        self.divergence.is_none()
    }
}

/// The backend under test.
pub enum Subject {
    /// The CPU's fast methods.
    Cpu(CpuBackend),
    /// The GPU.
    Cuda(Box<CudaBackend>),
    /// Any other backend, stepped with its own method (method switches do not apply): a
    /// backend under development, or one with a planted fault to prove the harness finds it.
    Other(Box<dyn Backend>),
    /// A field split over ranks (the split backend on rank 0 of `mpirun`): every operation,
    /// heat problems too, but the solver's (a split field refuses it; both sides skip it).
    Ranks(Box<dyn Backend>),
}

impl Subject {
    fn backend(&mut self) -> &mut dyn Backend {
        match self {
            Self::Cpu(backend) => backend,
            Self::Cuda(backend) => backend.as_mut(),
            Self::Other(backend) | Self::Ranks(backend) => backend.as_mut(),
        }
    }

    fn family(&self) -> MethodFamily {
        match self {
            Self::Cpu(_) | Self::Other(_) | Self::Ranks(_) => MethodFamily::Cpu,
            Self::Cuda(_) => MethodFamily::Cuda,
        }
    }

    fn set_method(&mut self, method: MethodChoice) -> Result<()> {
        match (self, method) {
            (Self::Cpu(cpu), MethodChoice::Auto) => cpu.set_method(None),
            (Self::Cpu(cpu), MethodChoice::Cpu(m)) => cpu.set_method(Some(m)),
            (Self::Cuda(cuda), MethodChoice::Auto) => cuda.set_kernel(None)?,
            (Self::Cuda(cuda), MethodChoice::Cuda(k)) => cuda.set_kernel(Some(k))?,
            (Self::Other(_) | Self::Ranks(_), _) => {}
            (_, method) => {
                return Err(HeatlabError::Internal(format!(
                    "method {method} does not belong to this backend"
                )))
            }
        }
        Ok(())
    }

    fn set_graphs(&mut self, enabled: bool) {
        if let Self::Cuda(cuda) = self {
            cuda.set_graphs_enabled(enabled);
        }
    }

    /// Graph replays so far and whether graphs are on; `None` where graphs do not apply.
    fn graph_state(&self) -> Option<(u64, bool)> {
        match self {
            Self::Cpu(_) | Self::Other(_) | Self::Ranks(_) => None,
            Self::Cuda(cuda) => Some((cuda.graph_replays(), cuda.graphs_enabled())),
        }
    }

    /// The reference a subject is checked against.
    fn reference(&self) -> CpuBackend {
        match self {
            Self::Cpu(_) | Self::Other(_) => {
                CpuBackend::with_threads(1).with_method(CpuMethod::Plain)
            }
            Self::Cuda(_) | Self::Ranks(_) => CpuBackend::new().with_method(CpuMethod::Rows),
        }
    }
}

/// The field a source describes.
fn make_field(size: GridSize, source: FieldSource) -> Result<Grid> {
    match source {
        FieldSource::Jagged { seed } => {
            let params = JaggedParams {
                size,
                seed,
                ..JaggedParams::default()
            };
            generate_jagged(&params, &|_| {})
        }
        FieldSource::Noise { seed } => {
            let mut rng = crate::field::numpy_rng::NumpyGenerator::new(seed);
            let values = (0..size.cells())
                .map(|_| 2.0 * rng.next_f32() - 1.0)
                .collect();
            Grid::from_vec(size, values)
        }
        FieldSource::Spike { row, col } => {
            let mut grid = Grid::zeros(size);
            grid.as_mut_slice()[row * size.cols + col] = 1.0;
            Ok(grid)
        }
    }
}

/// One sequence's state on both sides.
struct Pair<'a> {
    subject: &'a mut Subject,
    reference: CpuBackend,
    params: StepParams,
    size: GridSize,
    coverage: &'a mut Coverage,
    steps: u64,
    /// The heat problem both sides step, if any.
    problem: Option<problem_ops::HeldProblem>,
}

impl Pair<'_> {
    fn upload(&mut self, field: &Grid) -> Result<()> {
        self.drop_problem()?;
        self.size = field.size();
        self.subject.backend().upload(field)?;
        self.reference.upload(field)
    }

    fn advance(&mut self, steps: u64) -> Result<()> {
        let graphs_before = self.subject.graph_state();
        let backend = self.subject.backend();
        backend.advance(steps, &self.params)?;
        let method = backend.step_method();
        self.reference.advance(steps, &self.params)?;
        let coverage = &mut *self.coverage;
        *coverage.steps_by_method.entry(method).or_default() += steps;
        *coverage
            .steps_by_boundary
            .entry(self.params.boundary.to_string())
            .or_default() += steps;
        if let (Some((before, graphs_on)), Some((after, _))) =
            (graphs_before, self.subject.graph_state())
        {
            coverage.graph_replays += after - before;
            if !graphs_on {
                coverage.steps_without_graphs += steps;
            }
        }
        self.steps += steps;
        Ok(())
    }

    /// Runs one operation and compares what it produced (and the held field) on both sides.
    fn apply(&mut self, operation: &Operation) -> Result<Option<(Compared, CellDifference)>> {
        match operation {
            Operation::Upload { size, source } => self.upload(&make_field(*size, *source)?)?,
            Operation::Advance { chunks } => {
                for &steps in chunks {
                    self.advance(steps)?;
                }
                if let Some(found) = self.compare_energy()? {
                    return Ok(Some(found));
                }
            }
            Operation::SetParams(params) => self.params = *params,
            Operation::SetMethod(method) => self.subject.set_method(*method)?,
            Operation::SetGraphs(enabled) => self.subject.set_graphs(*enabled),
            Operation::Laplacian => {
                let boundary = self.params.boundary;
                let subject = self.subject.backend().laplacian(boundary)?;
                let reference = self.reference.laplacian(boundary)?;
                if let Some(difference) = compare::grids(&subject, &reference) {
                    return Ok(Some((Compared::Laplacian, difference)));
                }
            }
            Operation::Preview { .. } => {
                if let Some(found) = self.preview(operation)? {
                    return Ok(Some(found));
                }
            }
            Operation::Download => {}
            Operation::Regenerate { seed } => {
                if let Some(found) = self.regenerate(*seed)? {
                    return Ok(Some(found));
                }
            }
            Operation::SwitchBackend { steps_elsewhere } => {
                let field = self.subject.backend().download()?;
                let mut elsewhere = CpuBackend::new();
                elsewhere.upload(&field)?;
                self.step_elsewhere(&mut elsewhere, *steps_elsewhere)?;
                self.subject.backend().upload(&elsewhere.download()?)?;
                self.reference.advance(*steps_elsewhere, &self.params)?;
            }
            Operation::Brush { stamps } => {
                for stamp in stamps {
                    self.subject.backend().apply_brush(stamp)?;
                    self.reference.apply_brush(stamp)?;
                }
            }
            Operation::SetCells { cells, values } => {
                self.subject.backend().scatter(cells, values)?;
                self.reference.scatter(cells, values)?;
            }
            Operation::Gather { cells } => {
                if let Some(found) = self.gather(cells)? {
                    return Ok(Some(found));
                }
            }
            Operation::SetProblem { .. }
            | Operation::EditMap { .. }
            | Operation::SwitchHeater { .. }
            | Operation::Solve(_)
            | Operation::ClearProblem => {
                if let Some(found) = self.apply_problem(operation)? {
                    return Ok(Some(found));
                }
            }
        }
        let subject = self.subject.backend().download()?;
        let reference = self.reference.download()?;
        Ok(compare::grids(&subject, &reference).map(|d| (Compared::Field, d)))
    }

    /// Takes the same preview on both sides and compares it.
    fn preview(&mut self, operation: &Operation) -> Result<Option<(Compared, CellDifference)>> {
        let Operation::Preview {
            layer,
            colormap,
            range_mode,
            max_size,
        } = operation
        else {
            return Ok(None);
        };
        let request = PreviewRequest {
            layer: *layer,
            boundary: self.params.boundary,
            colormap: *colormap,
            range_mode: *range_mode,
            max_size: *max_size,
        };
        let subject = render_on(self.subject.backend(), &request)?;
        let reference = render_on(&mut self.reference, &request)?;
        Ok(compare::previews(&subject, &reference))
    }

    /// Regenerates the field on the subject and compares it with the CPU's generation.
    fn regenerate(&mut self, seed: u64) -> Result<Option<(Compared, CellDifference)>> {
        // As the app does: generated where the subject runs (on the GPU with cuFFT),
        // held to the CPU's generation within the tolerance; the reference then
        // continues from the subject's field, so that the steps after stay exact.
        let params = JaggedParams {
            size: self.size,
            seed,
            ..JaggedParams::default()
        };
        let (field, _) = generate_on(self.subject.backend(), &params, &|_| {})?;
        let cpu = generate_jagged(&params, &|_| {})?;
        if let Some(difference) = compare::generated(&field, &cpu) {
            return Ok(Some((Compared::Generated, difference)));
        }
        self.reference.upload(&field)?;
        Ok(None)
    }

    /// Reads the same cells on both sides and compares them.
    fn gather(&mut self, cells: &[u32]) -> Result<Option<(Compared, CellDifference)>> {
        let subject = self.subject.backend().gather(cells)?;
        let reference = self.reference.gather(cells)?;
        let found = first_difference(
            &subject,
            &reference,
            subject.len().max(1),
            |a: f32, b: f32| a.to_bits() == b.to_bits(),
            f64::from,
        );
        if let Some(difference) = found {
            return Ok(Some((Compared::Gathered, difference)));
        }
        Ok(None)
    }
}

/// The name of an operation's kind, for coverage counts.
fn operation_kind(operation: &Operation) -> &'static str {
    match operation {
        Operation::Upload { .. } => "upload",
        Operation::Advance { .. } => "advance",
        Operation::SetParams(_) => "set-params",
        Operation::SetMethod(_) => "set-method",
        Operation::SetGraphs(_) => "set-graphs",
        Operation::Laplacian => "laplacian",
        Operation::Preview { .. } => "preview",
        Operation::Download => "download",
        Operation::Regenerate { .. } => "regenerate",
        Operation::SwitchBackend { .. } => "switch-backend",
        Operation::Brush { .. } => "brush",
        Operation::SetCells { .. } => "set-cells",
        Operation::Gather { .. } => "gather",
        Operation::SetProblem { .. } => "set-problem",
        Operation::EditMap { .. } => "edit-map",
        Operation::SwitchHeater { .. } => "switch-heater",
        Operation::Solve(_) => "solve",
        Operation::ClearProblem => "clear-problem",
    }
}

/// Runs `options.sequences` sequences on `subject` against the CPU reference, stopping at the
/// first divergence, or after the current sequence once `stop` is set. `progress` is called
/// with the number of sequences done after each.
pub fn verify(
    subject: &mut Subject,
    options: &VerifyOptions,
    stop: &AtomicBool,
    progress: &dyn Fn(u64),
) -> Result<VerifyReport> {
    let started = Instant::now();
    let mut report = VerifyReport::before_any(subject, options);
    let mut sizes = HashSet::new();
    for index in 0..options.sequences {
        let sequence_seed = options.seed.wrapping_add(index);
        run_sequence(subject, options, sequence_seed, &mut report, &mut sizes)?;
        if report.divergence.is_some() {
            break;
        }
        report.sequences_passed += 1;
        progress(index + 1);
        if stop.load(Ordering::Relaxed) {
            break;
        }
    }
    report.coverage.sizes = sizes.len() as u64;
    report.elapsed_s = started.elapsed().as_secs_f64();
    Ok(report)
}

impl VerifyReport {
    /// The report of `subject` before any sequence ran.
    fn before_any(subject: &mut Subject, options: &VerifyOptions) -> Self {
        Self {
            subject: match subject {
                Subject::Cuda(_) => "cuda".into(),
                Subject::Cpu(_) => "cpu methods (rows, blocked)".into(),
                Subject::Other(backend) | Subject::Ranks(backend) => backend.step_method(),
            },
            device: subject.backend().device_name(),
            reference: subject.reference().step_method(),
            seed: options.seed,
            sequences: options.sequences,
            sequences_passed: 0,
            operations_run: 0,
            steps_run: 0,
            elapsed_s: 0.0,
            coverage: Coverage::default(),
            divergence: None,
        }
    }
}

/// Runs the sequence of `sequence_seed` on `subject` and a fresh reference, counting what it
/// ran in `report` and the sizes it uploaded in `sizes`. The first difference ends the
/// sequence and becomes `report.divergence`.
fn run_sequence(
    subject: &mut Subject,
    options: &VerifyOptions,
    sequence_seed: u64,
    report: &mut VerifyReport,
    sizes: &mut HashSet<GridSize>,
) -> Result<()> {
    let operations = SequenceGenerator::new(sequence_seed, subject.family(), options.max_cells)
        .with_min_rows(options.min_rows)
        .sequence(options.operations);
    subject.set_method(MethodChoice::Auto)?;
    subject.set_graphs(true);
    // A problem held at the end of the last sequence would step this one's first field.
    subject.backend().set_problem(None)?;
    let mut pair = Pair {
        reference: subject.reference(),
        subject: &mut *subject,
        params: StepParams::default(),
        size: GridSize { rows: 1, cols: 1 },
        coverage: &mut report.coverage,
        steps: 0,
        problem: None,
    };
    for (op_index, operation) in operations.iter().enumerate() {
        let found = pair.apply(operation)?;
        *pair
            .coverage
            .operations
            .entry(operation_kind(operation).to_string())
            .or_default() += 1;
        sizes.insert(pair.size);
        report.operations_run += 1;
        if let Some((compared, cell)) = found {
            report.divergence = Some(Divergence {
                sequence_seed,
                operation_index: op_index,
                operation: operation.to_string(),
                method: pair.subject.backend().step_method(),
                params: pair.params,
                size: pair.size,
                compared,
                cell,
                history: operations[..=op_index]
                    .iter()
                    .map(Operation::to_string)
                    .collect(),
            });
            break;
        }
    }
    report.steps_run += pair.steps;
    Ok(())
}

#[cfg(test)]
mod solve_tests;
