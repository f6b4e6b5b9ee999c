//! `mpirun -n N heatlab run ...`: the tutorial's plate split over N ranks (bands of rows, one
//! per rank, each on its own backend: a GPU each, or the CPU), equal bit for bit to the run on
//! one rank. Rank 0 writes the frames (the field joined from every band: the same files as
//! the single-rank run) and `run.json`.
//!
//! Every rank checks the arguments alike, so a refusal is said once (by rank 0) and every
//! rank exits with status 1. A failure on one rank alone (a GPU that does not open, a full
//! disk) is said by that rank in one line, and MPI then ends every rank.

use std::time::Instant;

use heatlab_engine::compute::{
    create_backend, Backend, BackendChoice, BackendKind, CpuBackend, Layer,
};
use heatlab_engine::distributed::npy::write_npy_by_ranks;
use heatlab_engine::distributed::{BandField, Bands, MpiLink, MpiSession, NcclHalos, RankLink};
use heatlab_engine::export;
use heatlab_engine::grid::{Grid, GridSize};
use heatlab_engine::session::recording::FrameColours;
use heatlab_engine::sim::generate::generate_on;

use super::folder::{previous_run_files, remove_previous_run, reuse_refusal};
use super::launched::Launched;
use super::{RunArgs, RunPlan};
use crate::cli::interrupt::{Interrupt, Interrupted, StopSignal};
use crate::cli::output::note;
use heatlab_engine::distributed::held_rows;
use heatlab_engine::session::start::Start;
use heatlab_engine::state::{FieldOrigin, SavedState};

/// The largest field joined on rank 0 for PNG frames (16384², a few GB with its Laplacian and
/// pixels); a larger one writes only its `.npy` frames, each rank its own rows.
const PNG_JOINED_CELLS: usize = 1 << 28;

/// Halo rows (steps between exchanges) on the CPU unless `--halo-depth` says.
const CPU_HALO_DEPTH: usize = 4;
/// Halo rows on a GPU: an exchange every 64 steps costs little beside 64 steps of a band.
const CUDA_HALO_DEPTH: usize = 64;

/// One GPU a rank: the rank's place on its host picks it (before CUDA starts), unless
/// `CUDA_VISIBLE_DEVICES` already says.
pub fn pick_gpu(choice: BackendChoice, launched: Launched) {
    if choice != BackendChoice::Cpu && std::env::var_os("CUDA_VISIBLE_DEVICES").is_none() {
        std::env::set_var("CUDA_VISIBLE_DEVICES", launched.local_rank.to_string());
    }
}

/// The first option given that a run over ranks does not take yet.
fn unsupported_option(args: &RunArgs) -> Option<&'static str> {
    [
        (args.scenario.is_some(), "--scenario"),
        (args.video.is_some(), "--video"),
        (args.check_every > 0, "--check-every"),
        (args.steady, "--steady"),
        (args.implicit.is_some(), "--implicit"),
    ]
    .into_iter()
    .find_map(|(given, name)| given.then_some(name))
}

/// A run's plan, its field when read from a file, and the halo depth.
struct RankPlan {
    plan: RunPlan,
    /// The file read (`--initial`, `--resume`), if any.
    start: Option<Start>,
    depth: usize,
}

/// Checks what every rank checks alike; a refusal is the same on every rank.
fn checked_plan(args: &RunArgs, launched: Launched) -> anyhow::Result<RankPlan> {
    if let Some(option) = unsupported_option(args) {
        anyhow::bail!(
            "{option} does not run across ranks yet: run it without mpirun (one rank), or leave \
             it out"
        );
    }
    let mut plan = RunPlan::from_args(args)?;
    if let Some(path) = &plan.save_state {
        super::folder::check_state_path(path, &plan.out, None)?;
        export::atomic::check_output(path)?;
    }
    let start = super::start::load(&plan.start)?;
    if let Some(start) = &start {
        if start.problem.is_some() {
            anyhow::bail!(
                "this state holds a heat problem, and heat problems do not run across ranks \
                 yet: resume it without mpirun (one rank)"
            );
        }
        plan.start_at(args, start)?;
    }
    let asked = args
        .halo_depth
        .map(|depth| usize::try_from(depth).unwrap_or(usize::MAX));
    let wanted = asked.unwrap_or(match plan.backend_choice {
        BackendChoice::Cpu => CPU_HALO_DEPTH,
        BackendChoice::Auto | BackendChoice::Cuda => CUDA_HALO_DEPTH,
    });
    let depth = if asked.is_some() {
        wanted
    } else {
        Bands::deepest_halo(plan.field.size, launched.ranks, wanted)
    };
    Bands::new(plan.field.size, launched.ranks, depth, plan.step.boundary)?;
    Ok(RankPlan { plan, start, depth })
}

/// Runs `heatlab run` as one of the ranks `launched`.
pub fn run(args: &RunArgs, launched: Launched) -> anyhow::Result<()> {
    let checked = checked_plan(args, launched);
    pick_gpu(args.backend, launched);
    // The first SIGINT or SIGTERM stops every rank at the next chunk, with the record written.
    let interrupt = Interrupt::install_saying(launched.rank == 0)?;
    // Held to the end: MPI is finalized when it drops, after any abort below.
    let (session, mut link) = MpiLink::start()?;
    let RankPlan { plan, start, depth } = match checked {
        Ok(checked) => checked,
        // Every rank refused alike: said once, by rank 0.
        Err(error) => {
            let said = (link.rank() == 0).then(|| format!("error: {error:#}"));
            end_ranks(session, link, said, 1)
        }
    };
    check_same_build(&mut link)?;
    let rank = link.rank();
    let flags = (args.overwrite, args.host_halos);
    match run_rank(&plan, start, depth, link, flags, &interrupt) {
        Ok(RankEnd::Completed) => Ok(()),
        Ok(RankEnd::Refused) => end_ranks(session, MpiLink::start_again(), None, 1),
        Ok(RankEnd::Interrupted(signal)) => {
            // Said once, by rank 0, before any rank ends with the signal's status.
            let said = (rank == 0).then(|| Interrupted(signal).to_string());
            end_ranks(session, MpiLink::start_again(), said, signal.exit_status())
        }
        Err(error) => {
            eprintln!("heatlab: error: rank {rank}: {error:#}");
            // The other ranks wait in their next exchange: MPI ends them.
            MpiLink::abort_world(1)
        }
    }
}

/// Ends this rank once every rank is here, after `said` (rank 0's reason) is written: a rank
/// that ended at once could make mpirun end rank 0 before its line is out. Rank 0 ends with
/// `status` and the others with 0, so that mpirun, which stops the ranks still running when one
/// fails, reports rank 0's status and stops no rank before it has said why.
fn end_ranks(session: MpiSession, mut link: MpiLink, said: Option<String>, status: u8) -> ! {
    if let Some(said) = said {
        note(&said);
    }
    if let Err(error) = link.barrier() {
        log::debug!("the ranks' last barrier failed: {error}");
    }
    let rank = link.rank();
    drop(link);
    drop(session);
    std::process::exit(if rank == 0 { i32::from(status) } else { 0 })
}

/// This rank's band of `bands` from its `held` rows on `backend`, its halos exchanged GPU to
/// GPU by NCCL on a CUDA backend (unless `host_halos`), else through the host and `link`.
pub fn band_field(
    bands: Bands,
    mut link: MpiLink,
    mut backend: Box<dyn Backend>,
    held: &Grid,
    host_halos: bool,
) -> anyhow::Result<BandField> {
    let device_halos = match backend.kind() {
        BackendKind::Cuda if !host_halos && link.ranks() > 1 => {
            Some(NcclHalos::start(&mut link, backend.as_mut())?)
        }
        BackendKind::Cuda | BackendKind::Cpu => None,
    };
    let mut band = BandField::with_held(bands, Box::new(link), backend, held)?;
    if let Some(halos) = device_halos {
        band.exchange_on_device(Box::new(halos));
    }
    Ok(band)
}

/// Refuses ranks running different builds of heatlab (their steps could differ).
fn check_same_build(link: &mut MpiLink) -> anyhow::Result<()> {
    let exe_bytes = std::env::current_exe()
        .and_then(std::fs::metadata)
        .map_or(0, |meta| meta.len());
    let fingerprint = format!("heatlab {} ({exe_bytes} bytes)", env!("CARGO_PKG_VERSION"));
    let all = link.all_gather_bytes(fingerprint.as_bytes());
    if let Some((other, theirs)) = all
        .iter()
        .enumerate()
        .find(|(_, theirs)| theirs.as_slice() != fingerprint.as_bytes())
    {
        let theirs = String::from_utf8_lossy(theirs);
        if link.rank() == 0 {
            eprintln!(
                "heatlab: error: rank {other} runs a different build ({theirs}) from rank 0's \
                 ({fingerprint}); start the same heatlab on every rank"
            );
        }
        link.abort(1);
    }
    Ok(())
}

/// Rank 0 readies the output folder, or says why it cannot; every rank learns whether it could.
fn ready_folder(plan: &RunPlan, link: &mut MpiLink, overwrite: bool) -> anyhow::Result<bool> {
    let mut failure = None;
    if link.rank() == 0 {
        let previous = previous_run_files(&plan.out);
        let readied = if !previous.is_empty() && !overwrite {
            Err(reuse_refusal(&plan.out, &previous))
        } else {
            remove_previous_run(&plan.out, &previous)
                .and_then(|()| export::ensure_writable_dir(&plan.out))
        };
        failure = readied.err();
    }
    if let Some(error) = &failure {
        note(&format!("error: {error}"));
    }
    Ok(link.max(f64::from(u8::from(failure.is_some())))? == 0.0)
}

/// What `run.json` says of a run over ranks.
#[derive(Debug, serde::Serialize)]
struct RanksRecord {
    status: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    reason: Option<String>,
    size: GridSize,
    steps: u64,
    coeff: f32,
    boundary: String,
    ranks: usize,
    /// Each rank's first row and rows.
    bands: Vec<(usize, usize)>,
    halo_depth: usize,
    /// Halos GPU to GPU (NCCL), or through the host (MPI).
    halos: &'static str,
    backend: String,
    /// Rank 0's device and stepping method (the others' are alike).
    device: String,
    method: String,
    wall_seconds: f64,
    cells_per_second: f64,
    /// The longest time a rank spent exchanging halos (copies, messages and waiting for its
    /// neighbours, also while rank 0 writes frames), not overlapped with stepping, and the
    /// largest share of a rank's wall time it took.
    exchange_seconds: f64,
    exchange_share: f64,
    exchanges: u64,
}

fn run_rank(
    plan: &RunPlan,
    start: Option<Start>,
    depth: usize,
    mut link: MpiLink,
    (overwrite, host_halos): (bool, bool),
    interrupt: &Interrupt,
) -> anyhow::Result<RankEnd> {
    let (rank, ranks) = (link.rank(), link.ranks());
    if !ready_folder(plan, &mut link, overwrite)? {
        return Ok(RankEnd::Refused);
    }
    let (mut backend, fallback) = create_backend(plan.backend_choice)?;
    if let Some(cuda) = backend.cuda_mut() {
        cuda.set_kernel_choice(plan.kernel)?;
    }
    if let (Some(fallback), 0) = (&fallback, rank) {
        note(&fallback.to_string());
    }
    let start = match start {
        Some(start) => start,
        None => Start::generated(
            generate_on(backend.as_mut(), &plan.field, &|_| {})?.0,
            FieldOrigin::Jagged(plan.field),
        ),
    };
    let bands = Bands::new(plan.field.size, ranks, depth, plan.step.boundary)?;
    let band = bands.band(link.rank());
    let held = held_rows(start.current.as_ref().unwrap_or(&start.initial), &band)?;
    // Rank 0 keeps the initial field for the state it may save; the others need no whole field.
    let initial = (rank == 0 && plan.save_state.is_some()).then_some(start.initial);
    let origin = start.origin;
    let mut band = band_field(bands, link, backend, &held, host_halos)?;
    let device = band.backend().device_name();
    let method = band.backend().step_method();
    if rank == 0 {
        note(&format!(
            "{} field over {ranks} ranks (bands of {} rows, halos {} deep), {} steps, coeff {}, \
             {} boundary on {device} ({method})",
            plan.field.size,
            band.band().rows,
            depth,
            plan.steps,
            plan.step.coeff,
            plan.step.boundary
        ));
    }
    let reached = step_to_end(&mut band, plan, interrupt)?;
    if let (Some(path), None) = (&plan.save_state, reached.stopped) {
        save_state(&mut band, plan, path, initial, origin)?;
    }
    write_record(&mut band, plan, depth, &reached, (device, method))?;
    // No rank ends before rank 0 has written the record.
    band.link().barrier()?;
    Ok(match reached.stopped {
        Some(signal) => RankEnd::Interrupted(signal),
        None => RankEnd::Completed,
    })
}

/// The run's record: rank 0 writes `run.json` with what every rank measured.
fn write_record(
    band: &mut BandField,
    plan: &RunPlan,
    depth: usize,
    reached: &Reached,
    (device, method): (String, String),
) -> anyhow::Result<()> {
    let wall = reached.wall;
    let steps = reached.step - plan.start_step;
    let (rank, ranks) = (band.link().rank(), band.link().ranks());
    let times = band.times();
    let exchange_seconds = band.link().max(times.exchanging.as_secs_f64())?;
    let exchange_share = band
        .link()
        .max(times.exchanging.as_secs_f64() / wall.max(1e-12))?;
    let bands_held: Vec<(usize, usize)> =
        band.bands().all().map(|b| (b.first_row, b.rows)).collect();
    if rank == 0 {
        let record = RanksRecord {
            status: match reached.stopped {
                Some(_) => "interrupted",
                None => "completed",
            },
            reason: reached
                .stopped
                .map(|signal| format!("interrupted by {signal}")),
            size: plan.field.size,
            steps,
            coeff: plan.step.coeff,
            boundary: plan.step.boundary.to_string(),
            ranks,
            bands: bands_held,
            halo_depth: depth,
            halos: if band.exchanges_on_device() {
                "nccl"
            } else {
                "host (mpi)"
            },
            backend: band.backend().kind().to_string(),
            device,
            method,
            wall_seconds: wall,
            cells_per_second: plan.field.size.cells() as f64 * steps as f64 / wall.max(1e-12),
            exchange_seconds,
            exchange_share,
            exchanges: times.exchanges,
        };
        export::write_json(&plan.out.join(super::record::RUN_JSON), &record)?;
        note(&format!(
            "{} steps in {wall:.3} s ({:.3e} cells/s); halo exchange {:.1}% of the time; wrote \
             {}",
            steps,
            record.cells_per_second,
            100.0 * record.exchange_share,
            plan.out.display()
        ));
    }
    Ok(())
}

/// Steps the band to the run's end with the others, rank 0 writing the frames when due;
/// returns the wall seconds from the first step (every rank's clock starts together).
fn step_to_end(
    band: &mut BandField,
    plan: &RunPlan,
    interrupt: &Interrupt,
) -> anyhow::Result<Reached> {
    let schedule = plan.schedule();
    let mut step = schedule.start_step;
    save_frame(band, plan, step)?;
    // Every rank's clock starts together, after rank 0 has written the first frames.
    band.link().barrier()?;
    let started = Instant::now();
    let mut stopped = None;
    while step < schedule.end_step {
        // A signal reaches the ranks at different moments: they agree to stop together.
        let asked = interrupt.requested().map_or(0, StopSignal::exit_status);
        let agreed = band.link().max(f64::from(asked))?;
        stopped = [StopSignal::Interrupt, StopSignal::Terminate]
            .into_iter()
            .find(|signal| f64::from(signal.exit_status()) == agreed);
        if stopped.is_some() {
            break;
        }
        let stop = schedule.next_stop(step);
        band.advance(stop - step, &plan.step)?;
        let advanced = stop - step;
        step = stop;
        if schedule.due(step, advanced).frames {
            save_frame(band, plan, step)?;
        }
    }
    band.link().barrier()?;
    Ok(Reached {
        wall: started.elapsed().as_secs_f64(),
        step,
        stopped,
    })
}

/// Where the ranks' stepping ended.
struct Reached {
    /// Seconds from the first step.
    wall: f64,
    /// The step reached.
    step: u64,
    /// The signal the ranks stopped for, if one came.
    stopped: Option<StopSignal>,
}

/// How a rank's run ended, when no error ended it.
enum RankEnd {
    /// Every step was taken.
    Completed,
    /// Rank 0 refused it (and said why) before the first step.
    Refused,
    /// A signal stopped it; its record says so.
    Interrupted(StopSignal),
}

/// Joins the bands' own rows on rank 0, which saves the run's state (resumable on any number of
/// ranks, or on one).
fn save_state(
    band: &mut BandField,
    plan: &RunPlan,
    path: &std::path::Path,
    initial: Option<Grid>,
    origin: FieldOrigin,
) -> anyhow::Result<()> {
    let own = band.own_rows()?;
    let joined = band.link().gather_rows(own.as_slice(), 0)?;
    if let (Some(values), Some(initial)) = (joined, initial) {
        let state = SavedState {
            current: Grid::from_vec(plan.field.size, values)?,
            initial,
            step: plan.end_step(),
            params: plan.step,
            origin,
            problem: None,
        };
        state.save(path)?;
        note(&format!(
            "saved the state at step {} to {} (continue it with --resume, on any number of ranks)",
            plan.end_step(),
            path.display()
        ));
    }
    Ok(())
}

/// Joins the bands' own rows on rank 0, which writes the frames of `step` (the field and its
/// Laplacian, as the single-rank run writes them).
fn save_frame(band: &mut BandField, plan: &RunPlan, step: u64) -> anyhow::Result<()> {
    let size = plan.field.size;
    let own = band.own_rows()?;
    if plan.npy {
        // Each rank writes its rows of the field and of its Laplacian at their offsets.
        let place = *band.band();
        let path = export::frame_path(&plan.out, Layer::Field.file_stem(), step, "npy");
        write_npy_by_ranks(&path, size, &place, own.as_slice(), band.link())?;
        let laplacian = band.own_laplacian(plan.step.boundary)?;
        let path = export::frame_path(&plan.out, Layer::Laplacian.file_stem(), step, "npy");
        write_npy_by_ranks(&path, size, &place, &laplacian, band.link())?;
    }
    if size.cells() > PNG_JOINED_CELLS {
        if band.link().rank() == 0 && step == plan.start_step {
            note(&format!(
                "the {size} field is too large to join on one rank for PNG frames (at most \
                 {PNG_JOINED_CELLS} cells): only its .npy frames are written (--npy)"
            ));
        }
        return Ok(());
    }
    let Some(values) = band.link().gather_rows(own.as_slice(), 0)? else {
        return Ok(());
    };
    let field = Grid::from_vec(size, values)?;
    let mut cpu = CpuBackend::new();
    cpu.upload(&field)?;
    let laplacian = cpu.laplacian(plan.step.boundary)?;
    let colours = FrameColours::per_frame(plan.colormap, plan.laplacian_colormap);
    let layers = [
        colours.layer_frame(Layer::Field, &field, plan.colorbar),
        colours.layer_frame(Layer::Laplacian, &laplacian, plan.colorbar),
    ];
    let files = export::FrameFiles {
        png: true,
        npy: false,
    };
    export::write_frame(&plan.out, step, &layers, files)?;
    Ok(())
}
