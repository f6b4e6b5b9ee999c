//! `heatlab bench`: every diffusion variant timed against the baselines run beside it in the
//! same process (the device-to-device copy and the tutorial's kernel on the GPU; a plain
//! single-threaded loop and NumPy on the CPU). Figures are ratios measured in one run.

pub mod basics;
pub mod display;
pub mod generation;
pub mod materials;
pub mod numpy;
pub mod regeneration;
pub mod steady;

pub use generation::{bench_field_generation, FieldGenerationRow, GpuGenerationRow};

use std::time::Duration;

use crate::compute::cuda::{CudaKernel, KernelChoice};
use crate::compute::{Backend, Boundary, CpuBackend, CpuMethod, CudaBackend, StepParams};
use crate::error::{HeatlabError, Result};
use crate::field::numpy_rng::NumpyGenerator;
use crate::field::{generate_jagged, JaggedParams};
use crate::grid::{Grid, GridSize};
use crate::measure::{utc_now, MeanStd};

/// Largest field generated with the (slow) jagged recipe; bigger ones use uniform noise, which
/// times the same (the kernels do the same work whatever the values).
pub const LARGEST_JAGGED_CELLS: usize = 8192 * 8192;

/// What to measure.
#[derive(Debug, Clone)]
pub struct BenchConfig {
    /// Field sizes.
    pub sizes: Vec<GridSize>,
    /// Repetitions timed per variant (after a warm-up).
    pub repeats: usize,
    /// Seconds one repetition should take; step counts are calibrated to it.
    pub seconds_per_repeat: f64,
    /// Whether to time NumPy's step beside the CPU variants.
    pub with_numpy: bool,
}

/// One measured variant at one size.
#[derive(Debug, Clone, serde::Serialize)]
pub struct BenchRow {
    /// "2000x2000".
    pub size: String,
    /// "cuda" or "cpu".
    pub backend: String,
    /// The variant's name.
    pub variant: String,
    /// What it is, in words.
    pub description: String,
    /// Steps in each timed repetition.
    pub steps_per_repeat: u64,
    /// Microseconds per step over the repetitions.
    pub us_per_step: MeanStd,
    /// Steps per second (from the mean).
    pub steps_per_s: f64,
    /// One read and one write of the field per step, over the time, in GB/s.
    pub t_eff_gb_s: f64,
    /// T_eff as a percentage of the device copy's bandwidth measured in the same run (GPU).
    pub percent_of_copy: Option<f64>,
    /// Steps/s over the baseline's steps/s measured in the same run.
    pub speedup: Option<f64>,
    /// The baseline of `speedup`.
    pub baseline: Option<String>,
    /// Whether the variant's field after some steps equals the reference Jacobi result bit
    /// for bit (`None` for baselines that are not the Jacobi step).
    pub exact: Option<bool>,
    /// Whether the simulation picks this variant for this size.
    pub selected: bool,
}

/// Everything one `heatlab bench` run measured.
#[derive(Debug, Clone, serde::Serialize)]
pub struct BenchReport {
    /// heatlab's version.
    pub heatlab_version: &'static str,
    /// Date and time (UTC) of the run.
    pub date_utc: String,
    /// The device measured ("NVIDIA H100 80GB HBM3", "CPU (2 threads)").
    pub device: String,
    /// The rows.
    pub rows: Vec<BenchRow>,
    /// Jagged field generation, heatlab against NumPy.
    pub field_generation: Vec<FieldGenerationRow>,
    /// Things the reader should know (skipped sizes, missing NumPy, ...).
    pub notes: Vec<String>,
}

/// The field a size is benchmarked on.
pub fn bench_field(size: GridSize) -> Result<Grid> {
    if size.cells() <= LARGEST_JAGGED_CELLS {
        let params = JaggedParams {
            size,
            ..JaggedParams::default()
        };
        generate_jagged(&params, &|_| {})
    } else {
        crate::memory::ensure_host_memory("benchmark field", size.bytes())?;
        Grid::from_vec(size, NumpyGenerator::new(1).random_f32(size.cells()))
    }
}

fn bytes_per_step(size: GridSize) -> f64 {
    2.0 * size.bytes() as f64
}

/// Times `run(steps)` (which returns the measured duration): one calibration, then `repeats`
/// repetitions of a step count that takes about `seconds` each.
fn time_variant(
    config: &BenchConfig,
    granularity: u64,
    mut run: impl FnMut(u64) -> Result<Duration>,
) -> Result<(u64, MeanStd)> {
    run(granularity)?; // warm-up: compile caches, clocks, page faults
    let probe = run(granularity)?.as_secs_f64().max(1e-7);
    let per_step = probe / granularity as f64;
    let steps = ((config.seconds_per_repeat / per_step) as u64)
        .clamp(granularity, 1_000_000)
        .div_ceil(granularity)
        * granularity;
    let mut samples = Vec::with_capacity(config.repeats);
    for _ in 0..config.repeats.max(1) {
        let elapsed = run(steps)?;
        samples.push(elapsed.as_secs_f64() * 1e6 / steps as f64);
    }
    Ok((steps, MeanStd::of(&samples)))
}

fn row(
    size: GridSize,
    backend: &str,
    variant: String,
    description: &str,
    steps: u64,
    us: MeanStd,
) -> BenchRow {
    let seconds = us.mean / 1e6;
    BenchRow {
        size: size.to_string(),
        backend: backend.into(),
        variant,
        description: description.into(),
        steps_per_repeat: steps,
        us_per_step: us,
        steps_per_s: 1.0 / seconds,
        t_eff_gb_s: bytes_per_step(size) / seconds / 1e9,
        percent_of_copy: None,
        speedup: None,
        baseline: None,
        exact: None,
        selected: false,
    }
}

impl BenchReport {
    /// A report of `rows` measured now on `device`, without field generation rows.
    fn measured(device: String, rows: Vec<BenchRow>, notes: Vec<String>) -> Self {
        Self {
            heatlab_version: env!("CARGO_PKG_VERSION"),
            date_utc: utc_now(),
            device,
            rows,
            field_generation: Vec::new(),
            notes,
        }
    }
}

/// Steps after which a variant's field is compared with the reference's. Odd for the GPU, so
/// that temporal kernels also run their single-step remainder.
const CUDA_CHECK_STEPS: u64 = 27;
/// The same for the CPU variants.
const CPU_CHECK_STEPS: u64 = 9;

/// The step the GPU kernels are timed with.
const CUDA_PARAMS: StepParams = StepParams {
    coeff: 0.25,
    boundary: Boundary::Dirichlet,
};

/// Benchmarks the CUDA kernels at every size that fits on the GPU: all of them, or the
/// `kernels` chosen (with the tutorial's kernel as the baseline).
pub fn bench_cuda(
    config: &BenchConfig,
    kernels: Option<&[KernelChoice]>,
    progress: &dyn Fn(&str),
) -> Result<BenchReport> {
    let mut cuda = CudaBackend::new()?;
    let device = cuda.device_name();
    let mut rows = Vec::new();
    let mut notes = Vec::new();
    for &size in &config.sizes {
        let (free, _) = cuda.device().memory_info()?;
        if 3 * size.bytes() > free {
            notes.push(format!(
                "{size}: skipped, needs {} MiB of GPU memory",
                (3 * size.bytes()) >> 20
            ));
            continue;
        }
        progress(&format!("{size}: generating the field"));
        let field = bench_field(size)?;
        progress(&format!("{size}: choosing the kernel"));
        cuda.upload(&field)?;
        let mut choices = vec![KernelChoice::Tutorial];
        match kernels {
            Some(kernels) => {
                choices.extend(kernels.iter().filter(|k| **k != KernelChoice::Tutorial))
            }
            None => choices.extend(
                CudaKernel::exact_candidates(size)
                    .into_iter()
                    .map(KernelChoice::Builtin),
            ),
        }
        rows.extend(measure_kernels(
            &mut cuda, config, &field, &choices, progress,
        )?);
        notes.extend(cuda.kernel_resources());
        if kernels.is_none() {
            let (material_rows, material_notes) =
                materials::bench_materials(&mut cuda, config, &field, progress)?;
            rows.extend(material_rows);
            notes.extend(material_notes);
        }
    }
    Ok(BenchReport::measured(device, rows, notes))
}

/// The one way heatlab times its GPU kernels, used by `heatlab bench` and by the app's
/// "measure kernels": on `field` (uploaded here, left uploaded at the end), the device copy,
/// then each of `choices` (auto: the kernel chosen for this size) against the copy's bandwidth
/// and against the tutorial's kernel when it is measured first. Each exact kernel is also
/// checked against the plain kernel's field. The backend's kernel choice is left as it was.
pub fn measure_kernels(
    cuda: &mut CudaBackend,
    config: &BenchConfig,
    field: &Grid,
    choices: &[KernelChoice],
    progress: &dyn Fn(&str),
) -> Result<Vec<BenchRow>> {
    let size = field.size();
    cuda.upload(field)?;
    let selected = cuda.selected_kernel();

    progress(&format!("{size}: device-to-device copy"));
    let (steps, copy_us) = time_variant(config, 8, |n| cuda.time_field_copy(n))?;
    let copy = row(
        size,
        "cuda",
        "device copy".into(),
        "cuMemcpyDtoD of the field: one read + one write",
        steps,
        copy_us,
    );
    let copy_gb_s = copy.t_eff_gb_s;
    let mut size_rows = vec![copy];

    let mut seed_steps_per_s = None;
    for &choice in choices {
        progress(&format!("{size}: {choice}"));
        let params = measured_params(cuda, choice);
        // The reference for exactness: the plain kernel's field after CUDA_CHECK_STEPS steps.
        cuda.upload(field)?;
        cuda.advance_with(CudaKernel::JacobiRows, CUDA_CHECK_STEPS, &params)?;
        let reference = cuda.download()?;
        let mut measured = bench_cuda_kernel(cuda, config, field, choice, &params, &reference)?;
        measured.percent_of_copy = Some(100.0 * measured.t_eff_gb_s / copy_gb_s);
        measured.selected = choice.builtin() == Some(selected) || choice == KernelChoice::Auto;
        if choice == KernelChoice::Tutorial {
            seed_steps_per_s = Some(measured.steps_per_s);
        }
        if let Some(base) = seed_steps_per_s {
            measured.speedup = Some(measured.steps_per_s / base);
            measured.baseline = Some("tutorial".into());
        }
        size_rows.push(measured);
    }
    cuda.upload(field)?;
    Ok(size_rows)
}

/// The step a kernel is timed with: the Dirichlet boundary (the tutorial's), or the first
/// boundary a user kernel declares when it does not handle Dirichlet.
fn measured_params(cuda: &CudaBackend, choice: KernelChoice) -> StepParams {
    let boundary = match (choice, cuda.user_contract()) {
        (KernelChoice::User, Some(contract)) if !contract.handles(Boundary::Dirichlet) => contract
            .boundaries
            .first()
            .copied()
            .unwrap_or(Boundary::Dirichlet),
        _ => Boundary::Dirichlet,
    };
    StepParams {
        boundary,
        ..CUDA_PARAMS
    }
}

/// Advances `steps` steps with `choice` (auto: the kernel chosen for the size).
fn advance_as(
    cuda: &mut CudaBackend,
    choice: KernelChoice,
    steps: u64,
    params: &StepParams,
) -> Result<Duration> {
    match choice {
        KernelChoice::User => cuda.advance_user(steps, params),
        KernelChoice::Auto => cuda.advance_with(cuda.selected_kernel(), steps, params),
        KernelChoice::Tutorial | KernelChoice::Builtin(_) => {
            let kernel = choice.builtin().unwrap_or(CudaKernel::JacobiRows);
            cuda.advance_with(kernel, steps, params)
        }
    }
}

/// One kernel's row: whether it gives `reference` after [`CUDA_CHECK_STEPS`] (exact kernels
/// only), then its time per step from `field`.
fn bench_cuda_kernel(
    cuda: &mut CudaBackend,
    config: &BenchConfig,
    field: &Grid,
    choice: KernelChoice,
    params: &StepParams,
    reference: &Grid,
) -> Result<BenchRow> {
    let exact = if choice.is_exact() {
        cuda.upload(field)?;
        advance_as(cuda, choice, CUDA_CHECK_STEPS, params)?;
        Some(cuda.download()? == *reference)
    } else {
        None
    };
    cuda.upload(field)?;
    let kernel = match choice {
        KernelChoice::Auto => Some(cuda.selected_kernel()),
        other => other.builtin(),
    };
    let granularity = match kernel {
        Some(CudaKernel::Temporal {
            steps_per_launch, ..
        }) => u64::from(steps_per_launch),
        _ => 8,
    };
    let (steps, us) = time_variant(config, granularity, |n| advance_as(cuda, choice, n, params))?;
    let variant = match (choice, kernel) {
        (KernelChoice::Auto, Some(kernel)) => format!("auto ({kernel})"),
        _ => choice.to_string(),
    };
    let mut measured = row(
        field.size(),
        "cuda",
        variant,
        choice.description(),
        steps,
        us,
    );
    measured.exact = exact;
    Ok(measured)
}

/// Benchmarks the CPU variants, against a plain single-threaded loop and NumPy.
pub fn bench_cpu(config: &BenchConfig, progress: &dyn Fn(&str)) -> Result<BenchReport> {
    let mut rows = Vec::new();
    let mut notes = Vec::new();
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get());
    let device = format!("CPU ({threads} threads)");
    for &size in &config.sizes {
        if let Err(error) = crate::memory::ensure_host_memory("benchmark field", 4 * size.bytes()) {
            notes.push(format!("{size}: skipped: {error}"));
            continue;
        }
        progress(&format!("{size}: generating the field"));
        let field = bench_field(size)?;
        let numpy = if config.with_numpy {
            progress(&format!("{size}: NumPy"));
            numpy_row(size, config, &mut notes)
        } else {
            None
        };
        let baseline = numpy.as_ref().map(|r| (r.variant.clone(), r.steps_per_s));
        let mut size_rows: Vec<BenchRow> = numpy.into_iter().collect();
        let mut reference = None;
        for variant in cpu_variants(threads) {
            progress(&format!("{size}: {}", variant.name));
            let mut measured = bench_cpu_variant(config, &field, variant, threads, &mut reference)?;
            if let Some((name, rate)) = &baseline {
                measured.speedup = Some(measured.steps_per_s / rate);
                measured.baseline = Some(name.clone());
            }
            size_rows.push(measured);
        }
        rows.extend(size_rows);
    }
    Ok(BenchReport::measured(device, rows, notes))
}

/// NumPy's step at `size`, or `None` with a note saying why it was not timed.
fn numpy_row(size: GridSize, config: &BenchConfig, notes: &mut Vec<String>) -> Option<BenchRow> {
    match numpy::time_numpy_step(size, config) {
        Ok((steps, us, version)) => Some(row(
            size,
            "cpu",
            format!("numpy {version}"),
            "the reference's NumPy step (pad + array arithmetic), one thread",
            steps,
            us,
        )),
        Err(reason) => {
            notes.push(format!("{size}: NumPy not timed: {reason}"));
            None
        }
    }
}

/// A CPU variant to time: its row's name and description and the backend that runs it.
struct CpuVariant {
    name: String,
    description: &'static str,
    backend: CpuBackend,
}

/// The plain single-threaded loop (the reference for exactness), rows on all cores (when
/// there is more than one) and the blocked method.
fn cpu_variants(threads: usize) -> Vec<CpuVariant> {
    let blocked = CpuMethod::Blocked {
        steps_per_pass: 8,
        band_rows: 64,
    };
    let mut variants = vec![CpuVariant {
        name: "cpu plain loop, 1 thread".into(),
        description: "one pass per step, one thread",
        backend: CpuBackend::with_threads(1).with_method(CpuMethod::Rows),
    }];
    if threads > 1 {
        variants.push(CpuVariant {
            name: format!("cpu rows, {threads} threads"),
            description: "one pass per step, row bands on all cores",
            backend: CpuBackend::with_threads(threads).with_method(CpuMethod::Rows),
        });
    }
    variants.push(CpuVariant {
        name: format!("cpu {blocked}, {threads} thr"),
        description: "8 steps per pass in bands of 64 rows, all cores",
        backend: CpuBackend::with_threads(threads).with_method(blocked),
    });
    variants
}

/// One CPU variant's row: whether its field after [`CPU_CHECK_STEPS`] equals the first
/// variant's (`reference`, kept from the first call), then its time per step from `field`.
fn bench_cpu_variant(
    config: &BenchConfig,
    field: &Grid,
    variant: CpuVariant,
    threads: usize,
    reference: &mut Option<Grid>,
) -> Result<BenchRow> {
    let params = StepParams::default();
    let CpuVariant {
        name,
        description,
        backend: mut cpu,
    } = variant;
    let is_used =
        cpu.method() == CpuMethod::for_cells(field.size().cells()) && cpu.threads() == threads;
    cpu.upload(field)?;
    cpu.advance(CPU_CHECK_STEPS, &params)?;
    let result = cpu.download()?;
    let exact = match reference {
        Some(expected) => result == *expected,
        None => {
            *reference = Some(result);
            true
        }
    };
    cpu.upload(field)?;
    let (steps, us) = time_variant(config, 8, |n| cpu.advance(n, &params))?;
    let mut measured = row(field.size(), "cpu", name, description, steps, us);
    measured.exact = Some(exact);
    measured.selected = is_used;
    Ok(measured)
}

/// A size list like "2000,8192,16384" or "512x1024,2000".
pub fn parse_sizes(text: &str) -> Result<Vec<GridSize>> {
    let sizes: Result<Vec<GridSize>> = text.split(',').map(str::parse).collect();
    let sizes = sizes?;
    if sizes.is_empty() {
        return Err(HeatlabError::InvalidInput(
            "--sizes needs at least one size".into(),
        ));
    }
    Ok(sizes)
}
