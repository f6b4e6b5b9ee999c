//! The child's side of a validation (`heatlab lab-check`): compile the user's kernel, run it
//! on small fields of odd sizes under every boundary it declares and on the current field, and
//! compare every step's field and Laplacian with the CPU reference. Each buffer has guard cells
//! before and after it, so a write out of bounds that does not fault is still seen.

use std::sync::Arc;

use cudarc::driver::{CudaFunction, CudaSlice, CudaStream, PushKernelArg};

use super::verdict::{CaseOutcome, CaseResult, ChildEnding, ChildLine};
use crate::compute::cuda::user_kernel::{load_user_function, UserContract};
use crate::compute::cuda::{driver_error, CudaDevice};
use crate::compute::{Backend, Boundary, CpuBackend, StepParams};
use crate::error::{HeatlabError, Result};
use crate::field::numpy_rng::NumpyGenerator;
use crate::grid::{Grid, GridSize};

/// Sizes of the small fields: odd, prime, a single row and a single column, and sizes just
/// past the template's 32x8 block, so that partial blocks and wrap-around are exercised.
pub const SMALL_SIZES: [(usize, usize); 6] =
    [(1, 1), (1, 37), (29, 1), (7, 5), (33, 65), (61, 127)];

/// Steps of each small case.
pub const SMALL_STEPS: u64 = 4;

/// Seconds a small case may take (they take milliseconds; an endless loop takes forever).
pub const SMALL_CASE_SECONDS: f64 = 3.0;

/// Guard cells before and after every buffer.
const GUARD: usize = 1024;

/// The guard cells' value: a NaN with a payload no arithmetic produces.
const CANARY_BITS: u32 = 0x7fc0_beef;

/// What the child is asked to check.
#[derive(Debug, Clone)]
pub struct CheckRequest {
    /// The kernel's source.
    pub source: String,
    /// The current field of the app, when there is one.
    pub current: Option<Grid>,
    /// The coefficient of the cases.
    pub coeff: f32,
    /// The boundary the app uses (the current field's case runs under it when declared).
    pub boundary: Boundary,
    /// Steps on the current field.
    pub current_steps: u64,
}

/// Seconds the current field's case may take: a margin plus a generous rate for the CPU
/// reference, the downloads and the comparisons.
pub fn current_case_seconds(size: GridSize, steps: u64) -> f64 {
    SMALL_CASE_SECONDS + size.cells() as f64 * steps as f64 * 4e-8
}

/// Runs every case, reporting each line through `emit`, and returns how it ended.
pub fn run_checks(request: &CheckRequest, emit: &mut dyn FnMut(ChildLine)) -> ChildEnding {
    let contract = match UserContract::parse(&request.source) {
        Ok(contract) => contract,
        Err(error) => {
            return ChildEnding::Contract {
                message: error.to_string(),
            }
        }
    };
    let device = match CudaDevice::open() {
        Ok(device) => device,
        Err(error) => {
            return ChildEnding::Failed {
                message: error.to_string(),
            }
        }
    };
    let function = match load_user_function(&device, &request.source) {
        Ok((_module, function)) => function,
        Err(HeatlabError::KernelCompile { log, .. }) => return ChildEnding::Compile { log },
        Err(error) => {
            return ChildEnding::Failed {
                message: error.to_string(),
            }
        }
    };
    emit(ChildLine::Ready {
        device: device.name().to_string(),
    });
    let runner = CaseRunner {
        stream: device.stream().clone(),
        function,
        contract: contract.clone(),
    };
    let cases = check_cases(request, &contract);
    for (case, field, boundary, steps, limit_seconds) in cases {
        emit(ChildLine::Start {
            case: case.clone(),
            limit_seconds,
        });
        let params = StepParams {
            coeff: request.coeff,
            boundary,
        };
        match runner.run(&field, &params, steps) {
            Ok(outcome) => emit(ChildLine::Case(CaseResult { case, outcome })),
            Err(error) => {
                return ChildEnding::Fault {
                    case,
                    message: error.to_string(),
                }
            }
        }
    }
    ChildEnding::Completed
}

/// One case: its name, the field, the boundary, the steps and the seconds it may take.
type CheckCase = (String, Grid, Boundary, u64, f64);

/// The cases of a check: random fields of the small sizes under every boundary the kernel
/// handles, then the current field when the request carries one.
fn check_cases(request: &CheckRequest, contract: &UserContract) -> Vec<CheckCase> {
    let mut cases = Vec::new();
    for (index, &(rows, cols)) in SMALL_SIZES.iter().enumerate() {
        let size = GridSize { rows, cols };
        let values = NumpyGenerator::new(index as u64 + 1).random_f32(size.cells());
        let Ok(field) = Grid::from_vec(size, values) else {
            continue;
        };
        for &boundary in &contract.boundaries {
            let name = format!("{size} {boundary}, {SMALL_STEPS} steps");
            cases.push((
                name,
                field.clone(),
                boundary,
                SMALL_STEPS,
                SMALL_CASE_SECONDS,
            ));
        }
    }
    if let Some(current) = &request.current {
        let boundary = if contract.handles(request.boundary) {
            request.boundary
        } else {
            contract.boundaries[0]
        };
        let steps = request.current_steps.max(1);
        let name = format!(
            "the current {} field {boundary}, {steps} steps",
            current.size()
        );
        let limit = current_case_seconds(current.size(), steps);
        cases.push((name, current.clone(), boundary, steps, limit));
    }
    cases
}

/// Runs one kernel on fields of any size.
struct CaseRunner {
    stream: Arc<CudaStream>,
    function: CudaFunction,
    contract: UserContract,
}

/// A buffer of `cells` floats between two guard zones of canaries.
fn guarded(stream: &Arc<CudaStream>, inner: &[f32]) -> Result<CudaSlice<f32>> {
    let canary = f32::from_bits(CANARY_BITS);
    let mut host = vec![canary; inner.len() + 2 * GUARD];
    host[GUARD..GUARD + inner.len()].copy_from_slice(inner);
    stream
        .clone_htod(&host)
        .map_err(driver_error("uploading a test field"))
}

/// The first guard cell of `buffer` (downloaded) that is not a canary, as an offset from the
/// inner start.
fn broken_guard(buffer: &[f32], cells: usize) -> Option<i64> {
    let (before, rest) = buffer.split_at(GUARD);
    let after = &rest[cells..];
    if let Some(i) = before.iter().position(|v| v.to_bits() != CANARY_BITS) {
        return Some(i as i64 - GUARD as i64);
    }
    after
        .iter()
        .position(|v| v.to_bits() != CANARY_BITS)
        .map(|i| (cells + i) as i64)
}

impl CaseRunner {
    /// `steps` launches from `field`, each compared with the CPU reference.
    fn run(&self, field: &Grid, params: &StepParams, steps: u64) -> Result<CaseOutcome> {
        let size = field.size();
        let cells = size.cells();
        let (rows, cols) = (
            i32::try_from(size.rows).map_err(|_| too_large(size))?,
            i32::try_from(size.cols).map_err(|_| too_large(size))?,
        );
        let mut reference = CpuBackend::new();
        reference.upload(field)?;
        let mut current = guarded(&self.stream, field.as_slice())?;
        let mut next = guarded(&self.stream, &vec![0.0; cells])?;
        let mut laplacian = guarded(&self.stream, &vec![0.0; cells])?;
        let config = self.contract.launch_config(size)?;
        let boundary = params.boundary.kernel_index() as i32;
        let inner = GUARD..GUARD + cells;
        let mut before = field.clone();
        for step in 1..=steps {
            let expected_laplacian = reference.laplacian(params.boundary)?;
            reference.advance(1, params)?;
            let expected_field = reference.download()?;
            {
                let input = current.slice(inner.clone());
                let mut output = next.slice_mut(inner.clone());
                let mut lapl = laplacian.slice_mut(inner.clone());
                let mut launch = self.stream.launch_builder(&self.function);
                launch
                    .arg(&input)
                    .arg(&mut output)
                    .arg(&mut lapl)
                    .arg(&rows)
                    .arg(&cols)
                    .arg(&params.coeff)
                    .arg(&boundary);
                // SAFETY: user_step(const float* in, float* out, float* lapl, int rows, int
                // cols, float coeff, int boundary), the contract of kernels/user_step.cu: three
                // distinct buffers of rows*cols floats (with guard zones around them) and the
                // block the source declares. The kernel is untrusted: this process exists so
                // that whatever it does stays here.
                unsafe { launch.launch(config) }.map_err(driver_error("launching user_step"))?;
            }
            self.stream
                .synchronize()
                .map_err(driver_error("running user_step"))?;
            let download = |buffer: &CudaSlice<f32>| {
                self.stream
                    .clone_dtoh(buffer)
                    .map_err(driver_error("downloading the result"))
            };
            let (got_field, got_laplacian, got_input) =
                (download(&next)?, download(&laplacian)?, download(&current)?);
            let got = StepOutputs {
                field: &got_field,
                laplacian: &got_laplacian,
                input: &got_input,
            };
            if let Some(outcome) =
                got.check(step, cells, &before, &expected_field, &expected_laplacian)
            {
                return Ok(outcome);
            }
            std::mem::swap(&mut current, &mut next);
            before = expected_field;
        }
        Ok(CaseOutcome::Identical)
    }
}

/// What one launch left in the three buffers (guard zones included).
struct StepOutputs<'a> {
    field: &'a [f32],
    laplacian: &'a [f32],
    input: &'a [f32],
}

impl StepOutputs<'_> {
    /// The first thing wrong after `step`: a write outside a buffer, a changed input, or a
    /// field or Laplacian that differs from the reference.
    fn check(
        &self,
        step: u64,
        cells: usize,
        before: &Grid,
        expected_field: &Grid,
        expected_laplacian: &Grid,
    ) -> Option<CaseOutcome> {
        for (buffer, values) in [
            ("out", self.field),
            ("lapl", self.laplacian),
            ("in", self.input),
        ] {
            if let Some(offset) = broken_guard(values, cells) {
                return Some(CaseOutcome::OutOfBounds {
                    buffer: buffer.into(),
                    offset,
                    step,
                });
            }
        }
        let inner = GUARD..GUARD + cells;
        // `in` is read only: a kernel that updates it in place (as the tutorial's does) is not
        // a Jacobi step, even where its result happens to match.
        if let Some(outcome) = compare(
            "input (read only)",
            step,
            &self.input[inner.clone()],
            before,
        ) {
            return Some(outcome);
        }
        [
            ("field", &self.field[inner.clone()], expected_field),
            ("Laplacian", &self.laplacian[inner], expected_laplacian),
        ]
        .into_iter()
        .find_map(|(array, got, expected)| compare(array, step, got, expected))
    }
}

fn too_large(size: GridSize) -> HeatlabError {
    HeatlabError::Unsupported(format!("{size} is too large for the GPU kernels"))
}

/// The first difference between `got` and the reference `expected` (bit for bit), summarised
/// by the largest absolute difference and where it is.
pub fn compare(array: &str, step: u64, got: &[f32], expected: &Grid) -> Option<CaseOutcome> {
    let cols = expected.cols();
    let mut worst: Option<(usize, f64)> = None;
    let mut differing = 0;
    for (index, (&g, &e)) in got.iter().zip(expected.as_slice()).enumerate() {
        if g.to_bits() == e.to_bits() {
            continue;
        }
        differing += 1;
        let difference = f64::from(g) - f64::from(e);
        let difference = if difference.is_nan() {
            f64::INFINITY
        } else {
            difference.abs()
        };
        if worst.is_none_or(|(_, d)| difference > d) {
            worst = Some((index, difference));
        }
    }
    let (index, max_abs_difference) = worst?;
    Some(CaseOutcome::Differs {
        array: array.into(),
        step,
        row: index / cols,
        col: index % cols,
        expected: expected.as_slice()[index],
        got: got[index],
        max_abs_difference,
        cells_differing: differing,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn comparison_finds_the_largest_difference_and_where() {
        let size = GridSize { rows: 3, cols: 4 };
        let expected = Grid::from_vec(size, (0..12).map(|i| i as f32).collect()).unwrap();
        assert_eq!(compare("field", 1, expected.as_slice(), &expected), None);
        let mut got = expected.as_slice().to_vec();
        got[5] += 0.5;
        got[10] = f32::NAN;
        let Some(CaseOutcome::Differs {
            row,
            col,
            max_abs_difference,
            cells_differing,
            ..
        }) = compare("field", 2, &got, &expected)
        else {
            panic!("expected a difference");
        };
        assert_eq!((row, col), (2, 2));
        assert!(max_abs_difference.is_infinite());
        assert_eq!(cells_differing, 2);
        // -0.0 and 0.0 are not the same bits.
        let zero = Grid::from_vec(GridSize { rows: 1, cols: 1 }, vec![0.0]).unwrap();
        assert!(compare("field", 1, &[-0.0], &zero).is_some());
    }

    #[test]
    fn guards_find_writes_before_and_after() {
        let canary = f32::from_bits(CANARY_BITS);
        let cells = 5;
        let mut buffer = vec![canary; cells + 2 * GUARD];
        buffer[GUARD..GUARD + cells].fill(1.0);
        assert_eq!(broken_guard(&buffer, cells), None);
        buffer[GUARD + cells + 3] = 0.0;
        assert_eq!(broken_guard(&buffer, cells), Some(8));
        buffer[GUARD - 1] = 2.0;
        assert_eq!(broken_guard(&buffer, cells), Some(-1));
    }
}
