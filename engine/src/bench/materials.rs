//! `heatlab bench` rows for heat problems on the GPU: the material kernels (one step per launch
//! and temporally blocked) on a problem of eight kinds with a heater, a held region and mixed
//! sides, each against the device copy and the uniform kernel measured beside it.
//!
//! A one-step material kernel must move 9 bytes per cell (read the field and the kind map,
//! write the field); its `T_eff` counts those bytes, so its % of copy is its share of the
//! bandwidth the copy reaches. A blocked kernel's `T_eff` counts the same 9 bytes per step,
//! so its % of copy over 100 is the multiple of the copy-bound rate it reaches.

use super::{row, time_variant, BenchConfig, BenchRow};
use crate::compute::cuda::{MaterialKernel, TileCounts};
use crate::compute::{Backend, CpuBackend, CudaBackend, CudaKernel, ProblemUpload, StepParams};
use crate::error::Result;
use crate::grid::{Grid, GridSize};
use crate::measure::MeanStd;
use crate::problem::{HeatProblem, SideCondition, Sides, StepTables};
use crate::verify::problems::{random_problem_with, tables_of, Layout};

/// Bytes a one-step material kernel must move per cell: field in and out, one kind byte.
pub const MATERIAL_BYTES_PER_CELL: f64 = 9.0;

/// Steps after which each kernel's field is compared with the reference: odd, so that the
/// blocked kernels also run their one-step remainder.
const CHECK_STEPS: u64 = 27;
/// Largest field whose reference is the CPU's (above it, the GPU's one-step kernel, which
/// the CPU checks at the smaller sizes and in the tests).
const LARGEST_CPU_CHECK: usize = 8192 * 8192;

/// The benchmarked problem on `size`: eight kinds in rectangles (a heater and a held region
/// among them), a fixed, a convective, a flux and an insulated side.
pub fn bench_problem(size: GridSize) -> Result<(HeatProblem, StepTables)> {
    let mut problem = random_problem_with(11, size, 8, Layout::Blocks)?;
    problem.sides = Sides {
        left: SideCondition::Fixed { temperature: 80.0 },
        right: SideCondition::Convective {
            h: 25.0,
            ambient: 20.0,
        },
        top: SideCondition::Flux { flux: 1e3 },
        bottom: SideCondition::Insulated,
    };
    problem.kinds[3].held_temperature = Some(60.0);
    let tables = tables_of(&mut problem)?;
    Ok((problem, tables))
}

/// The material kernels timed at `field`'s size: the one-step kernel, every blocked variant and
/// the default choice, with the copy and the uniform kernels measured first. Leaves the
/// backend without a problem and with its default material kernel.
pub fn bench_materials(
    cuda: &mut CudaBackend,
    config: &BenchConfig,
    field: &Grid,
    progress: &dyn Fn(&str),
) -> Result<(Vec<BenchRow>, Vec<String>)> {
    let size = field.size();
    let (problem, tables) = bench_problem(size)?;
    let upload = ProblemUpload {
        tables: &tables,
        map: &problem.map,
        book_energy: false,
        booked_rows: None,
    };
    cuda.set_problem(None)?;
    cuda.upload(field)?;
    progress(&format!("{size}: device copy and uniform kernels"));
    let (_, copy_us) = time_variant(config, 8, |n| cuda.time_field_copy(n))?;
    let copy_gb_s = 2.0 * size.bytes() as f64 / (copy_us.mean / 1e6) / 1e9;
    let uniform_us = uniform_baselines(cuda, config, size)?;
    let params = StepParams::default();

    progress(&format!("{size}: material kernels, reference"));
    let reference = reference_field(cuda, field, &upload)?;
    let mut kernels = vec![MaterialKernel::one_step(size)];
    kernels.extend(
        MaterialKernel::blocked_candidates()
            .into_iter()
            .filter(|k| k.supports(size)),
    );
    let chosen = MaterialKernel::auto(size);
    let mut rows = Vec::new();
    let mut tile_notes = Vec::new();
    for kernel in kernels {
        progress(&format!("{size}: {kernel}"));
        cuda.set_material_kernel(Some(kernel))?;
        cuda.upload(field)?;
        cuda.set_problem(Some(upload))?;
        cuda.advance(CHECK_STEPS, &params)?;
        let exact = cuda.download()? == reference;
        let granularity = 8 * kernel.steps_per_launch();
        let (steps, us) = time_variant(config, granularity, |n| cuda.advance(n, &params))?;
        let (baseline, baseline_us) = if kernel.steps_per_launch() > 1 {
            uniform_us[1]
        } else {
            uniform_us[0]
        };
        let mut measured = row(
            size,
            "cuda",
            kernel.to_string(),
            "heat problem: 8 kinds, heater, held cells, mixed sides; T_eff counts 9 B/cell",
            steps,
            us,
        );
        measured.t_eff_gb_s = MATERIAL_BYTES_PER_CELL * size.cells() as f64 / (us.mean / 1e6) / 1e9;
        measured.percent_of_copy = Some(100.0 * measured.t_eff_gb_s / copy_gb_s);
        measured.speedup = Some(baseline_us / us.mean);
        measured.baseline = Some(format!("uniform {baseline}"));
        measured.exact = Some(exact);
        measured.selected = kernel == chosen;
        rows.push(measured);
        if let (MaterialKernel::Tiled { .. }, Some(counts)) = (kernel, cuda.material_tiles()) {
            tile_notes.push(tile_note(size, kernel, counts));
        }
    }
    let mut notes = notes(size, copy_us.mean, &uniform_us, &rows);
    notes.extend(tile_notes);
    rows.push(booked_row(
        cuda, config, field, &tables, &problem, &reference,
    )?);
    cuda.set_material_kernel(None)?;
    cuda.set_problem(None)?;
    cuda.upload(field)?;
    Ok((rows, notes))
}

/// How a tiled kernel divided the bench's problem.
fn tile_note(size: GridSize, kernel: MaterialKernel, counts: TileCounts) -> String {
    format!(
        "{size} {kernel}: {} of {} tiles of one kind, {} mixed ({} warps each)",
        counts.tiles - counts.mixed,
        counts.tiles,
        counts.mixed,
        counts.warps_per_mixed
    )
}

/// The uniform kernels the material rows are measured against, µs per step: the one-step
/// kernel, then the fastest (the one chosen).
fn uniform_baselines(
    cuda: &mut CudaBackend,
    config: &BenchConfig,
    size: GridSize,
) -> Result<Vec<(CudaKernel, f64)>> {
    let vec4 = CudaKernel::JacobiVec4 { rows_per_thread: 8 };
    let uniform_one_step = if vec4.supports(size) {
        vec4
    } else {
        CudaKernel::JacobiRows
    };
    let uniform_fastest = cuda.selected_kernel();
    let params = StepParams::default();
    let mut uniform_us = Vec::new();
    for kernel in [uniform_one_step, uniform_fastest] {
        let (_, us) = time_variant(config, 8, |n| cuda.advance_with(kernel, n, &params))?;
        uniform_us.push((kernel, us.mean));
    }
    Ok(uniform_us)
}

/// The one-step kernel with the energy booked in the same launch (as the app steps a problem
/// whose energy budget is shown), against the one-step kernel without.
fn booked_row(
    cuda: &mut CudaBackend,
    config: &BenchConfig,
    field: &Grid,
    tables: &StepTables,
    problem: &HeatProblem,
    reference: &Grid,
) -> Result<BenchRow> {
    let size = field.size();
    let params = StepParams::default();
    let kernel = MaterialKernel::one_step(size);
    cuda.set_material_kernel(Some(kernel))?;
    let mut timed = |book_energy: bool| -> Result<(bool, u64, MeanStd)> {
        cuda.upload(field)?;
        cuda.set_problem(Some(ProblemUpload {
            tables,
            map: &problem.map,
            book_energy,
            booked_rows: None,
        }))?;
        cuda.advance(CHECK_STEPS, &params)?;
        let exact = cuda.download()? == *reference;
        let (steps, us) = time_variant(config, 8, |n| cuda.advance(n, &params))?;
        Ok((exact, steps, us))
    };
    let (_, _, plain_us) = timed(false)?;
    let (exact, steps, us) = timed(true)?;
    let mut measured = row(
        size,
        "cuda",
        format!("{kernel}+energy"),
        "the same problem with its energy budget booked in the step's launch, as the app steps it",
        steps,
        us,
    );
    measured.t_eff_gb_s = MATERIAL_BYTES_PER_CELL * size.cells() as f64 / (us.mean / 1e6) / 1e9;
    measured.speedup = Some(plain_us.mean / us.mean);
    measured.baseline = Some(format!("{kernel} without the energy booked"));
    measured.exact = Some(exact);
    Ok(measured)
}

/// The field after [`CHECK_STEPS`] steps of the problem: on the CPU up to
/// [`LARGEST_CPU_CHECK`] cells, else with the GPU's one-step kernel.
fn reference_field(
    cuda: &mut CudaBackend,
    field: &Grid,
    upload: &ProblemUpload<'_>,
) -> Result<Grid> {
    let params = StepParams::default();
    if field.size().cells() <= LARGEST_CPU_CHECK {
        let mut cpu = CpuBackend::new();
        cpu.upload(field)?;
        cpu.set_problem(Some(*upload))?;
        cpu.advance(CHECK_STEPS, &params)?;
        return cpu.download();
    }
    cuda.set_material_kernel(Some(MaterialKernel::one_step(field.size())))?;
    cuda.upload(field)?;
    cuda.set_problem(Some(*upload))?;
    cuda.advance(CHECK_STEPS, &params)?;
    cuda.download()
}

/// What the material rows mean, with the figures the issue asks for.
fn notes(
    size: GridSize,
    copy_us: f64,
    uniform: &[(CudaKernel, f64)],
    rows: &[BenchRow],
) -> Vec<String> {
    let mut notes = vec![format!(
        "{size} materials: device copy {copy_us:.1} us; uniform {} {:.1} us/step, uniform {} \
         {:.1} us/step; material rows' speedup is against the uniform kernel named in the JSON \
         (one-step against one-step, blocked against the fastest)",
        uniform[0].0, uniform[0].1, uniform[1].0, uniform[1].1
    )];
    let one_step = rows.first();
    let best_blocked = rows
        .iter()
        .skip(1)
        .min_by(|a, b| a.us_per_step.mean.total_cmp(&b.us_per_step.mean));
    if let (Some(one), Some(blocked)) = (one_step, best_blocked) {
        notes.push(format!(
            "{size} materials: {} at {:.0}% of copy bandwidth; fastest blocked {} at {:.2}x the \
             copy-bound rate, {:.2}x the one-step kernel",
            one.variant,
            one.percent_of_copy.unwrap_or(0.0),
            blocked.variant,
            blocked.percent_of_copy.unwrap_or(0.0) / 100.0,
            one.us_per_step.mean / blocked.us_per_step.mean
        ));
    }
    notes
}
