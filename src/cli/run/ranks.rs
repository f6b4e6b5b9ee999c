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
    finish_unopened, ranks_sharing_a_gpu, serve, BandField, Bands, MpiLink, NcclHalos, OpenRequest,
    RankLink, SplitBackend, SplitOptions,
};
use heatlab_engine::grid::{Grid, GridSize};

use super::launched::Launched;
use super::record::LastChunkRecord;
use super::{OpenBackend, Opened, RunArgs};
use crate::cli::exit::report;
use crate::cli::interrupt::Interrupt;

/// One GPU a rank: the rank's place on its host picks it (before CUDA starts), unless
/// `CUDA_VISIBLE_DEVICES` already says. With more ranks than GPUs on a host, ranks share them
/// in turn (their halos then go through the host).
pub fn pick_gpu(choice: BackendChoice, launched: Launched) {
    if choice != BackendChoice::Cpu && std::env::var_os("CUDA_VISIBLE_DEVICES").is_none() {
        let gpu = match gpus_on_host() {
            Some(count) if count > 0 => launched.local_rank % count,
            _ => launched.local_rank,
        };
        std::env::set_var("CUDA_VISIBLE_DEVICES", gpu.to_string());
    }
}

/// The NVIDIA GPUs the driver lists on this host, read without starting CUDA (which would fix
/// the visible devices); `None` where the driver does not list them.
fn gpus_on_host() -> Option<usize> {
    let listed = std::fs::read_dir("/proc/driver/nvidia/gpus").ok()?;
    Some(listed.filter_map(std::result::Result::ok).count())
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

/// Rank 0's hold on the other ranks: the field split over them, opened once.
pub struct RanksLead {
    ranks: usize,
    unopened: Option<Box<dyn RankLink>>,
    stranded: Option<Arc<AtomicBool>>,
}

impl RanksLead {
    /// How many ranks.
    pub fn ranks(&self) -> usize {
        self.ranks
    }

    /// Opens every rank's backend: the field split over the ranks.
    pub fn open(&mut self, options: SplitOptions) -> anyhow::Result<SplitBackend> {
        let link = self
            .unopened
            .take()
            .ok_or_else(|| anyhow::anyhow!("the ranks were opened twice"))?;
        let stranded = Arc::new(AtomicBool::new(false));
        self.stranded = Some(Arc::clone(&stranded));
        Ok(SplitBackend::open(link, options, stranded)?)
    }

    /// Ends the other ranks when nothing was opened (a refusal): they stop serving.
    pub fn release(&mut self) -> anyhow::Result<()> {
        if let Some(link) = self.unopened.take() {
            finish_unopened(link)?;
        }
        Ok(())
    }

    /// Whether the ranks may be left waiting for one another (a failure during an exchange).
    fn stranded(&self) -> bool {
        self.stranded
            .as_ref()
            .is_some_and(|flag| flag.load(Ordering::SeqCst))
    }
}

/// Runs `lead` on rank 0 while the other ranks serve its commands, then ends every rank once
/// rank 0 has said how it ended, with rank 0's exit status (the others with 0).
pub fn on_ranks(
    choice: BackendChoice,
    launched: Launched,
    lead: impl FnOnce(&mut RanksLead, &Interrupt) -> anyhow::Result<()>,
) -> ! {
    pick_gpu(choice, launched);
    // Rank 0 says the first SIGINT or SIGTERM and stops after the current piece; the others
    // keep serving it until it is done.
    let interrupt = match Interrupt::install_saying(launched.rank == 0) {
        Ok(interrupt) => interrupt,
        Err(error) => std::process::exit(i32::from(report(Err(error)))),
    };
    // Held to the end: MPI is finalized when it drops.
    let (session, mut link) = match MpiLink::start() {
        Ok(started) => started,
        Err(error) => std::process::exit(i32::from(report(Err(error.into())))),
    };
    if let Err(error) = check_same_build(&mut link) {
        std::process::exit(i32::from(report(Err(error))));
    }
    // For the last barrier: no rank ends before rank 0 has said how the run ended (mpirun,
    // once stopping the run, ends the ranks still running when one ends).
    let mut last = link.duplicate();
    let status = if link.rank() == 0 {
        let mut ranks = RanksLead {
            ranks: link.ranks(),
            unopened: Some(Box::new(link)),
            stranded: None,
        };
        let outcome = lead(&mut ranks, &interrupt);
        if ranks.stranded() {
            if let Err(error) = &outcome {
                eprintln!("heatlab: error: rank 0: {error:#}");
            }
            // The other ranks may be waiting for rank 0 in an exchange: MPI ends every rank.
            MpiLink::abort_world(1)
        }
        let released = ranks.release();
        report(outcome.and(released))
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

/// Runs `heatlab run` as one of the ranks `launched`.
pub fn run(args: &RunArgs, launched: Launched) -> ! {
    on_ranks(args.backend, launched, |ranks, interrupt| {
        if let Some(option) = unsupported_option(args) {
            ranks.release()?;
            anyhow::bail!(
                "{option} does not run across ranks yet: run it without mpirun (one rank)"
            );
        }
        let mut open = |choice: BackendChoice, kernel: KernelChoice, size: GridSize| {
            open_split(args, ranks, (choice, kernel, size))
        };
        let open: &mut OpenBackend<'_> = &mut open;
        // A rank that dies leaves rank 0 waiting for it until mpirun ends every rank (SIGTERM,
        // then SIGKILL about a second later): rank 0's record is then written for it.
        let last_chunk = LastChunkRecord::default();
        let said = last_chunk.clone();
        interrupt.when_stranded(Box::new(move |signal| said.write_and_exit(signal)));
        super::run_on(args, interrupt, open, Some(&last_chunk))
    })
}

/// Opens the backends of every rank for a field of `size` (refused, before anything is
/// written, when the ranks leave a band thinner than the halo).
fn open_split(
    args: &RunArgs,
    ranks: &mut RanksLead,
    (choice, kernel, size): (BackendChoice, KernelChoice, GridSize),
) -> anyhow::Result<Opened> {
    let halo_depth = args
        .halo_depth
        .map(|depth| usize::try_from(depth).unwrap_or(usize::MAX));
    let wanted = match choice {
        BackendChoice::Cpu => CPU_HALO_DEPTH,
        BackendChoice::Auto | BackendChoice::Cuda => CUDA_HALO_DEPTH,
    };
    let depth = halo_depth.unwrap_or_else(|| Bands::deepest_halo(size, ranks.ranks(), wanted));
    if let Err(error) = Bands::new(size, ranks.ranks(), depth, Default::default()) {
        // The ranks are told to end before the refusal is said.
        ranks.release()?;
        return Err(error.into());
    }
    let options = SplitOptions {
        open: OpenRequest {
            backend: choice,
            kernel,
            overlap: args.overlap,
        },
        halo_depth,
        host_halos: args.host_halos,
    };
    let split = ranks.open(options)?;
    let fallback = split.fallback().map(str::to_string);
    Ok((Box::new(split), fallback))
}

/// This rank's band of `bands` from its `held` rows on `backend`, its halos exchanged GPU to
/// GPU by NCCL on a CUDA backend (unless `host_halos`, or two ranks share a GPU), else through
/// the host and `link`.
pub fn band_field(
    bands: Bands,
    mut link: MpiLink,
    mut backend: Box<dyn Backend>,
    held: &Grid,
    host_halos: bool,
) -> anyhow::Result<BandField> {
    // Every rank learns whether two share a GPU (NCCL refuses them): halos then go through
    // the host.
    let gpu = backend.cuda().and_then(|cuda| cuda.device().uuid_hex());
    let gpus: Vec<Option<Vec<u8>>> = link
        .all_gather_bytes(gpu.unwrap_or_default().as_bytes())
        .into_iter()
        .map(|gpu| (!gpu.is_empty()).then_some(gpu))
        .collect();
    let shared = ranks_sharing_a_gpu(&gpus).is_some();
    let device_halos = match backend.kind() {
        BackendKind::Cuda if !host_halos && !shared && link.ranks() > 1 => {
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
