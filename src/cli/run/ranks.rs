//! `mpirun -n N heatlab run ...`: one field split over N ranks (bands of rows, one per rank,
//! each on its own backend: a GPU each, or the CPU), equal bit for bit to the run on one rank.
//!
//! Rank 0 runs `heatlab run` itself, on a [`SplitBackend`]: every check, the output folder,
//! the frames, the video, the state and `run.json` are the single-rank run's, and each step,
//! read or write of the field goes to every rank's band. The other ranks carry out rank 0's
//! commands until it is done ([`serve`]). A refusal is said once, by rank 0; a rank that fails
//! says why in one line naming itself, and when the ranks may be waiting for one another MPI
//! ends them all.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use heatlab_engine::compute::{Backend, BackendChoice, BackendKind, KernelChoice};
use heatlab_engine::distributed::split::{CPU_HALO_DEPTH, CUDA_HALO_DEPTH};
use heatlab_engine::distributed::{
    finish_unopened, serve, BandField, Bands, MpiLink, NcclHalos, OpenRequest, RankLink,
    SplitBackend, SplitOptions,
};
use heatlab_engine::grid::{Grid, GridSize};

use super::launched::Launched;
use super::{OpenBackend, RunArgs};
use crate::cli::interrupt::Interrupt;

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
        (args.steady, "--steady"),
        (args.implicit.is_some(), "--implicit"),
    ]
    .into_iter()
    .find_map(|(given, name)| given.then_some(name))
}

/// Runs `heatlab run` as one of the ranks `launched`.
pub fn run(args: &RunArgs, launched: Launched) -> anyhow::Result<()> {
    pick_gpu(args.backend, launched);
    // Rank 0 says the first SIGINT or SIGTERM and stops after the current piece; the others
    // keep serving it until it is done.
    let interrupt = Interrupt::install_saying(launched.rank == 0)?;
    // Held to the end: MPI is finalized when it drops.
    let (session, mut link) = MpiLink::start()?;
    check_same_build(&mut link)?;
    // For the last barrier: no rank ends before rank 0 has said how the run ended (mpirun,
    // once stopping the run, ends the ranks still running when one ends).
    let mut last = link.duplicate();
    let status = if link.rank() == 0 {
        crate::cli::exit::report(lead(args, launched, Box::new(link), &interrupt))
    } else {
        if let Err(error) = serve(Box::new(link)) {
            eprintln!("heatlab: error: {error}");
            // Rank 0 may be waiting for this rank: MPI ends every rank.
            MpiLink::abort_world(1)
        }
        0
    };
    if let Err(error) = last.barrier() {
        log::debug!("the ranks' last barrier failed: {error}");
    }
    drop(last);
    drop(session);
    std::process::exit(i32::from(status))
}

/// Rank 0's run: `heatlab run` on the field split over the ranks.
fn lead(
    args: &RunArgs,
    launched: Launched,
    link: Box<dyn RankLink>,
    interrupt: &Interrupt,
) -> anyhow::Result<()> {
    let mut unopened = Some(link);
    let mut stranded = None;
    let outcome = match unsupported_option(args) {
        Some(option) => Err(anyhow::anyhow!(
            "{option} does not run across ranks yet: run it without mpirun (one rank)"
        )),
        None => {
            let mut open = |choice: BackendChoice, kernel: KernelChoice, size: GridSize| {
                let link = unopened
                    .take()
                    .ok_or_else(|| anyhow::anyhow!("the ranks were opened twice"))?;
                open_split(args, launched, link, (choice, kernel, size), &mut stranded)
            };
            let open: &mut OpenBackend<'_> = &mut open;
            super::run_on(args, interrupt, open)
        }
    };
    if stranded.is_some_and(|flag| flag.load(Ordering::SeqCst)) {
        if let Err(error) = &outcome {
            eprintln!("heatlab: error: {error:#}");
        }
        // The other ranks may be waiting for rank 0 in an exchange: MPI ends every rank.
        MpiLink::abort_world(1)
    }
    if let Some(link) = unopened {
        finish_unopened(link)?;
    }
    outcome
}

/// Opens the backends of every rank for a field of `size` (refused, before anything is
/// written, when the ranks leave a band thinner than the halo).
fn open_split(
    args: &RunArgs,
    launched: Launched,
    link: Box<dyn RankLink>,
    (choice, kernel, size): (BackendChoice, KernelChoice, GridSize),
    stranded: &mut Option<Arc<AtomicBool>>,
) -> anyhow::Result<(Box<dyn Backend>, Option<String>)> {
    let halo_depth = args
        .halo_depth
        .map(|depth| usize::try_from(depth).unwrap_or(usize::MAX));
    let wanted = match choice {
        BackendChoice::Cpu => CPU_HALO_DEPTH,
        BackendChoice::Auto | BackendChoice::Cuda => CUDA_HALO_DEPTH,
    };
    let depth = halo_depth.unwrap_or_else(|| Bands::deepest_halo(size, launched.ranks, wanted));
    let checked = Bands::new(size, launched.ranks, depth, Default::default());
    if let Err(error) = checked {
        // The ranks are told to end before the refusal is said.
        finish_unopened(link)?;
        return Err(error.into());
    }
    let options = SplitOptions {
        open: OpenRequest {
            backend: choice,
            kernel,
        },
        halo_depth,
        host_halos: args.host_halos,
    };
    let split = SplitBackend::open(link, options)?;
    *stranded = Some(split.stranded());
    let fallback = split.fallback().map(str::to_string);
    Ok((Box::new(split), fallback))
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
