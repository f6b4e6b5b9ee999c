//! `mpirun -n N heatlab bench --ranks`: weak scaling (the same field on each rank) and strong
//! scaling (one field split over the ranks), each beside the single-GPU rate of its size
//! measured in the same processes, with the share of the time spent exchanging halos (not
//! hidden by the interior), the exchange overlapped with the interior and not.

use std::time::Instant;

use heatlab_engine::compute::{create_backend, Backend, StepParams};
use heatlab_engine::distributed::{BandField, Bands, MpiLink, RankLink};
use heatlab_engine::export;
use heatlab_engine::grid::{Boundary, Grid, GridSize};
use heatlab_engine::measure::MeanStd;

use super::bench::BenchArgs;
use super::output::note;
use super::run::launched::Launched;
use super::run::ranks::{band_field, pick_gpu};

/// One measurement: a field, how it is split, its rate beside the single-GPU rate, each the
/// mean of `rounds` alternating rounds (single GPU, split overlapped, split not, ...).
#[derive(Debug, Clone, serde::Serialize)]
struct Measured {
    scaling: &'static str,
    size: GridSize,
    ranks: usize,
    steps: u64,
    rounds: usize,
    /// Cells a second of the split field (the slowest rank's time), mean and spread.
    cells_per_second: MeanStd,
    /// The single-GPU rate of the field one rank holds (weak) or of the whole field (strong),
    /// on rank 0's GPU, in the rounds between.
    single_gpu_cells_per_second: MeanStd,
    /// Weak: the rate over N × the single rate; strong: the speed-up over one GPU.
    efficiency: f64,
    speedup: f64,
    /// The largest share of a rank's time spent exchanging halos (not hidden by compute).
    exchange_share: f64,
    halos: &'static str,
    /// The kernel rank 0 stepped its band with (auto: timed for the band's size, halos
    /// included).
    split_method: String,
    /// The kernel the single GPU stepped the whole field with.
    single_method: String,
}

/// A field with structure everywhere, made row by row from its global row index.
fn synthetic_rows(
    first_row: usize,
    rows: usize,
    field_rows: usize,
    cols: usize,
) -> anyhow::Result<Grid> {
    let size = GridSize::new(rows, cols)?;
    Ok(Grid::from_fn(size, |r, c| {
        let row = (first_row + r) % field_rows;
        ((row * 31 + c * 17) % 101) as f32 / 101.0
    }))
}

/// A whole `size` field on this rank's own device, warmed up.
fn single_field(args: &BenchArgs, size: GridSize) -> anyhow::Result<Box<dyn Backend>> {
    let (mut backend, _) = create_backend(args.backend)?;
    backend.upload(&synthetic_rows(0, size.rows, size.rows, size.cols)?)?;
    backend.advance(2 * args.halo_depth as u64, &StepParams::default())?;
    Ok(backend)
}

/// `size` split over the ranks of `link`, warmed up (the kernel's first launches and an
/// exchange).
fn split_field(args: &BenchArgs, link: MpiLink, size: GridSize) -> anyhow::Result<BandField> {
    let ranks = link.ranks();
    let bands = Bands::new(size, ranks, args.halo_depth, Boundary::Dirichlet)?;
    let band = bands.band(link.rank());
    let held = synthetic_rows(
        band.first_held_row(size.rows),
        band.held_rows(),
        size.rows,
        size.cols,
    )?;
    let (backend, _) = create_backend(args.backend)?;
    let mut field = band_field(bands, link, backend, &held, args.host_halos)?;
    drop(held);
    field.advance(2 * args.halo_depth as u64, &StepParams::default())?;
    Ok(field)
}

/// Seconds of `steps` steps of the single field (every rank times its own GPU at once).
fn time_single(
    backend: &mut dyn Backend,
    link: &mut dyn RankLink,
    steps: u64,
) -> anyhow::Result<f64> {
    link.barrier()?;
    let started = Instant::now();
    backend.advance(steps, &StepParams::default())?;
    Ok(started.elapsed().as_secs_f64())
}

/// Seconds of `steps` steps of the split field (the slowest rank's) and the largest share of
/// a rank's time spent exchanging.
fn time_split(field: &mut BandField, steps: u64) -> anyhow::Result<(f64, f64)> {
    field.link().barrier()?;
    let exchanged_before = field.times().exchanging;
    let started = Instant::now();
    field.advance(steps, &StepParams::default())?;
    field.link().barrier()?;
    let seconds = started.elapsed().as_secs_f64();
    let exchanging = (field.times().exchanging - exchanged_before).as_secs_f64();
    let share = field.link().max(exchanging / seconds)?;
    Ok((field.link().max(seconds)?, share))
}

/// Alternating rounds of the single field and the split one: its exchange overlapped with the
/// interior and not, where the ranks can overlap it (GPUs), a measurement of each.
fn measure(
    args: &BenchArgs,
    link: &mut MpiLink,
    scaling: &'static str,
    size: GridSize,
    single_size: GridSize,
) -> anyhow::Result<Vec<Measured>> {
    let ranks = link.ranks();
    let steps = args.rank_steps;
    let rounds = args.repeats.max(1);
    let mut single = single_field(args, single_size)?;
    let mut split = split_field(args, link.duplicate(), size)?;
    // The warm-up's rounds decided whether every rank can overlap.
    let overlaps: &[bool] = match split.overlaps_exchange() {
        true => &[true, false],
        false => &[false],
    };
    let mut single_rates = Vec::new();
    let mut split_rates = vec![Vec::new(); overlaps.len()];
    let mut shares = vec![0.0_f64; overlaps.len()];
    for _ in 0..rounds {
        let seconds = time_single(single.as_mut(), link, steps)?;
        single_rates.push(single_size.cells() as f64 * steps as f64 / seconds);
        for (index, &overlap) in overlaps.iter().enumerate() {
            split.set_overlap(overlap);
            let (seconds, exchanging) = time_split(&mut split, steps)?;
            split_rates[index].push(size.cells() as f64 * steps as f64 / seconds);
            shares[index] = shares[index].max(exchanging);
        }
    }
    let single_rate = MeanStd::of(&single_rates);
    let device = split.exchanges_on_device();
    let measured = overlaps
        .iter()
        .zip(split_rates.iter().zip(&shares))
        .map(|(&overlap, (rates, &share))| {
            let rate = MeanStd::of(rates);
            Measured {
                scaling,
                size,
                ranks,
                steps,
                rounds,
                cells_per_second: rate,
                single_gpu_cells_per_second: single_rate,
                efficiency: rate.mean / (single_rate.mean * ranks as f64),
                speedup: rate.mean / single_rate.mean,
                exchange_share: share,
                halos: match (device, overlap) {
                    (true, true) => "nccl, overlapped",
                    (true, false) => "nccl",
                    (false, true) => "host (mpi), overlapped",
                    (false, false) => "host (mpi)",
                },
                split_method: split.backend().step_method(),
                single_method: single.step_method(),
            }
        })
        .collect();
    Ok(measured)
}

/// Runs `heatlab bench --ranks`.
pub fn bench_ranks(args: &BenchArgs) -> anyhow::Result<()> {
    let launched = Launched::from_env().unwrap_or(Launched {
        rank: 0,
        ranks: 1,
        local_rank: 0,
    });
    pick_gpu(args.backend, launched);
    if let Some(path) = &args.json {
        export::atomic::check_output(path)?;
    }
    let (_session, link) = MpiLink::start()?;
    let rank = link.rank();
    match measure_all(args, link) {
        Ok(()) => Ok(()),
        Err(error) => {
            eprintln!("heatlab: error: rank {rank}: {error:#}");
            MpiLink::abort_world(1)
        }
    }
}

fn measure_all(args: &BenchArgs, mut link: MpiLink) -> anyhow::Result<()> {
    let (rank, ranks) = (link.rank(), link.ranks());
    let weak_size = GridSize::new(args.rank_size.rows * ranks, args.rank_size.cols)?;
    let mut measured = measure(args, &mut link, "weak", weak_size, args.rank_size)?;
    measured.extend(measure(
        args,
        &mut link,
        "strong",
        args.strong_size,
        args.strong_size,
    )?);
    if rank == 0 {
        println!(
            "{:<7} {:>13} {:>5} {:>14} {:>7} {:>14} {:>7} {:>10} {:>8} {:>9}  halos",
            "scaling",
            "field",
            "ranks",
            "cells/s",
            "±",
            "1 GPU cells/s",
            "±",
            "efficiency",
            "speedup",
            "exchange"
        );
        for m in &measured {
            let spread = |s: &MeanStd| 100.0 * s.std / s.mean;
            println!(
                "{:<7} {:>13} {:>5} {:>14.4e} {:>6.2}% {:>14.4e} {:>6.2}% {:>9.1}% {:>7.2}x {:>8.2}%  {}",
                m.scaling,
                m.size.to_string(),
                m.ranks,
                m.cells_per_second.mean,
                spread(&m.cells_per_second),
                m.single_gpu_cells_per_second.mean,
                spread(&m.single_gpu_cells_per_second),
                100.0 * m.efficiency,
                m.speedup,
                100.0 * m.exchange_share,
                m.halos
            );
        }
        println!(
            "({} alternating rounds of {} steps each; ± is the spread of the rounds)",
            args.repeats.max(1),
            args.rank_steps
        );
        let mut described = measured.clone();
        described.dedup_by_key(|m| m.scaling);
        for m in &described {
            println!(
                "{}: each band stepped by {}, the whole field on one device by {}",
                m.scaling, m.split_method, m.single_method
            );
        }
        if let Some(path) = &args.json {
            export::write_json(path, &measured)?;
            note(&format!("wrote {}", path.display()));
        }
    }
    Ok(())
}
