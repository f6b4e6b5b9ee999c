//! `mpirun -n N heatlab bench --ranks`: weak scaling (the same field on each rank) and strong
//! scaling (one field split over the ranks), each beside the single-GPU rate of its size
//! measured in the same processes, with the share of the time spent exchanging halos.

use std::time::Instant;

use heatlab_engine::compute::{create_backend, StepParams};
use heatlab_engine::distributed::{Bands, MpiLink, RankLink};
use heatlab_engine::export;
use heatlab_engine::grid::{Boundary, Grid, GridSize};

use super::bench::BenchArgs;
use super::output::note;
use super::run::launched::Launched;
use super::run::ranks::{band_field, pick_gpu};

/// One measurement: a field, how it is split, its rate.
#[derive(Debug, Clone, serde::Serialize)]
struct Measured {
    scaling: &'static str,
    size: GridSize,
    ranks: usize,
    steps: u64,
    seconds: f64,
    cells_per_second: f64,
    /// The single-GPU rate of the field one rank holds (weak) or of the whole field (strong).
    single_gpu_cells_per_second: f64,
    /// Weak: the rate over N × the single rate; strong: the speed-up over one GPU.
    efficiency: f64,
    speedup: f64,
    /// The largest share of a rank's time spent exchanging halos (not hidden by compute).
    exchange_share: f64,
    halos: &'static str,
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

/// Cells a second of `steps` steps of a whole `size` field on this rank's own device.
fn single_rate(args: &BenchArgs, size: GridSize, steps: u64, depth: u64) -> anyhow::Result<f64> {
    let (mut backend, _) = create_backend(args.backend)?;
    backend.upload(&synthetic_rows(0, size.rows, size.rows, size.cols)?)?;
    let params = StepParams::default();
    backend.advance(depth, &params)?;
    let started = Instant::now();
    backend.advance(steps, &params)?;
    Ok(size.cells() as f64 * steps as f64 / started.elapsed().as_secs_f64())
}

/// Times `steps` steps of `size` split over the ranks of `link`.
fn split_rate(args: &BenchArgs, link: MpiLink, size: GridSize) -> anyhow::Result<(f64, f64, bool)> {
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
    let params = StepParams::default();
    // Warm-up: the kernel's first launches and one exchange.
    field.advance(2 * args.halo_depth as u64, &params)?;
    field.link().barrier()?;
    let exchanged_before = field.times().exchanging;
    let started = Instant::now();
    field.advance(args.rank_steps, &params)?;
    field.link().barrier()?;
    let seconds = started.elapsed().as_secs_f64();
    let exchanging = (field.times().exchanging - exchanged_before).as_secs_f64();
    let seconds = field.link().max(seconds)?;
    let share = field.link().max(exchanging / seconds)?;
    let rate = size.cells() as f64 * args.rank_steps as f64 / seconds;
    Ok((rate, share, field.exchanges_on_device()))
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

fn measure_all(args: &BenchArgs, link: MpiLink) -> anyhow::Result<()> {
    let (rank, ranks) = (link.rank(), link.ranks());
    let depth = args.halo_depth as u64;
    let weak_size = GridSize::new(args.rank_size.rows * ranks, args.rank_size.cols)?;
    let mut measured = Vec::new();
    for (scaling, size, single_size) in [
        ("weak", weak_size, args.rank_size),
        ("strong", args.strong_size, args.strong_size),
    ] {
        let single = single_rate(args, single_size, args.rank_steps, depth)?;
        let (rate, exchange_share, on_device) = split_rate(args, link.duplicate(), size)?;
        measured.push(Measured {
            scaling,
            size,
            ranks,
            steps: args.rank_steps,
            seconds: size.cells() as f64 * args.rank_steps as f64 / rate,
            cells_per_second: rate,
            single_gpu_cells_per_second: single,
            efficiency: rate / (single * ranks as f64),
            speedup: rate / single,
            exchange_share,
            halos: if on_device { "nccl" } else { "host (mpi)" },
        });
    }
    if rank == 0 {
        println!(
            "{:<7} {:>13} {:>5} {:>14} {:>14} {:>10} {:>8} {:>9}  halos",
            "scaling",
            "field",
            "ranks",
            "cells/s",
            "1 GPU cells/s",
            "efficiency",
            "speedup",
            "exchange"
        );
        for m in &measured {
            println!(
                "{:<7} {:>13} {:>5} {:>14.4e} {:>14.4e} {:>9.1}% {:>7.2}x {:>8.2}%  {}",
                m.scaling,
                m.size.to_string(),
                m.ranks,
                m.cells_per_second,
                m.single_gpu_cells_per_second,
                100.0 * m.efficiency,
                m.speedup,
                100.0 * m.exchange_share,
                m.halos
            );
        }
        if let Some(path) = &args.json {
            export::write_json(path, &measured)?;
            note(&format!("wrote {}", path.display()));
        }
    }
    Ok(())
}
