//! Times candidate shapes of the tutorial kernels (benches/tutorial_variants/variants.cu, read at
//! run time) and pinned against pageable transfers, on GPU 0:
//! `cargo run --release --example tutorial_variants -- benches/tutorial_variants/variants.cu`.
//! Each kernel is timed with CUDA events around one launch (as `heatlab kernel` did) and around
//! 100 back-to-back launches; the element-wise variants' outputs are compared with the baseline's
//! and the pi variants' counts with each other.
//!
//! The runs of issue 11 (H100, 2026-11-23) are in benches/results/tutorial-h100-2026-11-23/.

use std::sync::Arc;

use anyhow::{Context, Result};

use cudarc::driver::{
    sys, CudaContext, CudaFunction, CudaModule, CudaSlice, CudaStream, LaunchConfig, PushKernelArg,
};
use cudarc::nvrtc::{compile_ptx_with_opts, CompileOptions};

type Launch<'a> = dyn Fn(&Arc<CudaStream>) -> Result<()> + 'a;

fn timed(
    ctx: &Arc<CudaContext>,
    stream: &Arc<CudaStream>,
    launches: u32,
    run: &Launch<'_>,
) -> Result<f64> {
    let flags = Some(sys::CUevent_flags::CU_EVENT_DEFAULT);
    let (start, end) = (ctx.new_event(flags)?, ctx.new_event(flags)?);
    start.record(stream)?;
    for _ in 0..launches {
        run(stream)?;
    }
    end.record(stream)?;
    end.synchronize()?;
    Ok(f64::from(start.elapsed_ms(&end)?) / 1e3 / f64::from(launches))
}

/// (mean of 30 single-launch timings, best of them, per launch of 100 back to back).
fn profile(
    ctx: &Arc<CudaContext>,
    stream: &Arc<CudaStream>,
    run: &Launch<'_>,
) -> Result<(f64, f64, f64)> {
    for _ in 0..3 {
        run(stream)?;
    }
    stream.synchronize()?;
    let singles = (0..30)
        .map(|_| timed(ctx, stream, 1, run))
        .collect::<Result<Vec<f64>>>()?;
    let mean = singles.iter().sum::<f64>() / singles.len() as f64;
    let best = singles.iter().copied().fold(f64::INFINITY, f64::min);
    let batch = timed(ctx, stream, 100, run)?;
    Ok((mean, best, batch))
}

fn config(blocks: u64, block: u32) -> LaunchConfig {
    LaunchConfig {
        grid_dim: (blocks.max(1) as u32, 1, 1),
        block_dim: (block, 1, 1),
        shared_mem_bytes: 0,
    }
}

/// The GPU and the compiled variants every section runs on.
struct Bench {
    ctx: Arc<CudaContext>,
    stream: Arc<CudaStream>,
    module: Arc<CudaModule>,
    sms: u64,
}

impl Bench {
    fn function(&self, name: &str) -> Result<CudaFunction> {
        Ok(self.module.load_function(name)?)
    }

    fn profile(&self, run: &Launch<'_>) -> Result<(f64, f64, f64)> {
        profile(&self.ctx, &self.stream, run)
    }
}

fn main() -> Result<()> {
    let path = std::env::args()
        .nth(1)
        .context("usage: tutorial_variants FILE.cu")?;
    let source = std::fs::read_to_string(&path).with_context(|| format!("reading {path}"))?;
    let ctx = CudaContext::new(0)?;
    // SAFETY: every buffer here is used on `stream` only, except the two-stream copy test,
    // which synchronises both streams before reading anything.
    unsafe { ctx.disable_event_tracking() };
    let stream = ctx.new_stream()?;
    let (major, minor) = ctx.compute_capability()?;
    let sms =
        ctx.attribute(sys::CUdevice_attribute::CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT)? as u64;
    println!("device {} (sm_{major}{minor}, {sms} SMs)", ctx.name()?);
    let ptx = compile_ptx_with_opts(
        source,
        CompileOptions {
            fmad: Some(false),
            options: vec![format!("--gpu-architecture=compute_{major}{minor}")],
            ..Default::default()
        },
    )?;
    let module = ctx.load_module(ptx)?;
    let bench = Bench {
        ctx,
        stream,
        module,
        sms,
    };
    hidden_layer(&bench)?;
    gaussian(&bench)?;
    monte_carlo_pi(&bench)?;
    transfers(&bench)
}

/// The largest difference of `host` from the first output (kept in `reference`), 0 for the
/// first.
fn difference_from_first(reference: &mut Option<Vec<f32>>, host: Vec<f32>) -> f32 {
    let diff = reference.as_ref().map_or(0.0, |r| {
        r.iter()
            .zip(&host)
            .map(|(a, b)| (a - b).abs())
            .fold(0.0f32, f32::max)
    });
    reference.get_or_insert(host);
    diff
}

/// Hidden layer, 1M.
fn hidden_layer(bench: &Bench) -> Result<()> {
    let (stream, sms) = (&bench.stream, bench.sms);
    for n in [1_000_000u64, 1_000_003] {
        let g: Vec<f32> = (0..n).map(|i| (i % 256) as f32).collect();
        let w: Vec<f32> = (0..n).map(|i| 0.3 + (i % 97) as f32 * 0.004).collect();
        let dg = stream.clone_htod(&g)?;
        let dw = stream.clone_htod(&w)?;
        let mut reference: Option<Vec<f32>> = None;
        for (name, blocks) in [
            ("hl_base", n.div_ceil(256).min(sms * 16)),
            ("hl_v4", (n / 4 + n % 4).div_ceil(256)),
            ("hl_v4x2", (n / 4).div_ceil(512)),
        ] {
            let func = bench.function(name)?;
            let out: CudaSlice<f32> = stream.alloc_zeros(n as usize)?;
            let run = |s: &Arc<CudaStream>| {
                let mut b = s.launch_builder(&func);
                b.arg(&dg).arg(&dw).arg(&out).arg(&n);
                // SAFETY: (const float*, const float*, float*, u64 n), all n floats long.
                unsafe { b.launch(config(blocks, 256)) }?;
                Ok(())
            };
            let (mean, best, batch) = bench.profile(&run)?;
            let diff = difference_from_first(&mut reference, stream.clone_dtoh(&out)?);
            println!(
                "hidden n={n} {name:10} single mean {:8.2} us best {:8.2} us | batch {:8.2} us | max diff vs base {diff:e}",
                mean * 1e6,
                best * 1e6,
                batch * 1e6
            );
        }
    }
    Ok(())
}

/// Gaussian, 100M, and a device-to-device copy of the same bytes.
fn gaussian(bench: &Bench) -> Result<()> {
    let (stream, sms) = (&bench.stream, bench.sms);
    let n: u64 = 100_000_000;
    let x: Vec<f32> = (0..n)
        .map(|i| -3.0 + 6.0 * ((i * 7919) % n) as f32 / n as f32)
        .collect();
    let dx = stream.clone_htod(&x)?;
    let (mean_arg, sigma_arg) = (0.25f32, 0.8f32);
    let mut reference: Option<Vec<f32>> = None;
    for (name, blocks) in [
        ("g_base", n.div_ceil(256).min(sms * 16)),
        ("g_v4", (n / 4).div_ceil(256)),
        ("g_v4x2", (n / 4).div_ceil(512)),
        ("g_v4x4", (n / 4).div_ceil(1024)),
        ("g_v4x2cs", (n / 4).div_ceil(512)),
        ("g_v4x4cs", (n / 4).div_ceil(1024)),
    ] {
        let func = bench.function(name)?;
        let out: CudaSlice<f32> = stream.alloc_zeros(n as usize)?;
        let run = |s: &Arc<CudaStream>| {
            let mut b = s.launch_builder(&func);
            b.arg(&dx).arg(&out).arg(&n).arg(&mean_arg).arg(&sigma_arg);
            // SAFETY: (const float*, float*, u64 n, float, float), n floats each.
            unsafe { b.launch(config(blocks, 256)) }?;
            Ok(())
        };
        let (mean, best, batch) = bench.profile(&run)?;
        let diff = difference_from_first(&mut reference, stream.clone_dtoh(&out)?);
        println!(
            "gaussian n={n} {name:10} single mean {:8.1} us best {:8.1} us | batch {:8.1} us = {:.2} TB/s | max diff vs base {diff:e}",
            mean * 1e6,
            best * 1e6,
            batch * 1e6,
            8.0 * n as f64 / batch / 1e12
        );
    }
    let copy = {
        let dst = std::cell::RefCell::new(stream.alloc_zeros::<f32>(n as usize)?);
        let run = |s: &Arc<CudaStream>| {
            s.memcpy_dtod(&dx, &mut *dst.borrow_mut())?;
            Ok(())
        };
        bench.profile(&run)?
    };
    println!(
        "device-to-device copy of 400 MB: batch {:.1} us",
        copy.2 * 1e6
    );
    Ok(())
}

/// Monte Carlo pi.
fn monte_carlo_pi(bench: &Bench) -> Result<()> {
    let (ctx, stream, sms) = (&bench.ctx, &bench.stream, bench.sms);
    for samples in [10_000_000_000u64, 1_000_000_007] {
        for name in [
            "pi_base",
            "pi_philox10",
            "pi_philox10d",
            "pi_philox7",
            "pi_philox7d",
            "pi_pcg",
            "pi_pcgd",
            "pi_pcg2",
        ] {
            let func = bench.function(name)?;
            let occupancy =
                func.occupancy_max_active_blocks_per_multiprocessor(256, 0, None)? as u64;
            let blocks = if name == "pi_base" {
                (samples / 2).div_ceil(256).min(sms * 8)
            } else {
                sms * occupancy
            };
            let inside: CudaSlice<u64> = stream.alloc_zeros(1)?;
            let seed = 42u64;
            let first = 0u64;
            let run = |s: &Arc<CudaStream>| {
                let mut b = s.launch_builder(&func);
                b.arg(&seed).arg(&first).arg(&samples).arg(&inside);
                // SAFETY: (u64 seed, u64 first, u64 count, u64* inside), block PI_BLOCK.
                unsafe { b.launch(config(blocks, 256)) }?;
                Ok(())
            };
            run(stream)?;
            let count = stream.clone_dtoh(&inside)?[0];
            let times = (0..5)
                .map(|_| timed(ctx, stream, 1, &run))
                .collect::<Result<Vec<f64>>>()?;
            let mean = times.iter().sum::<f64>() / 5.0;
            let best = times.iter().copied().fold(f64::INFINITY, f64::min);
            println!(
                "pi n={samples} {name:13} occupancy {occupancy} blocks {blocks}: mean {:9.3} ms ({:.3}e12/s) best {:9.3} ms ({:.3}e12/s) count {count} pi {:.8}",
                mean * 1e3,
                samples as f64 / mean / 1e12,
                best * 1e3,
                samples as f64 / best / 1e12,
                4.0 * count as f64 / samples as f64
            );
        }
    }
    Ok(())
}

/// Prints the mean of 5 timings (CUDA events and wall clock) of a copy of 400 MB, after one
/// untimed run.
fn time_copy(bench: &Bench, what: &str, run: &mut dyn FnMut() -> Result<()>) -> Result<()> {
    let (ctx, stream) = (&bench.ctx, &bench.stream);
    let flags = Some(sys::CUevent_flags::CU_EVENT_DEFAULT);
    run()?;
    stream.synchronize()?;
    let mut times = Vec::new();
    for _ in 0..5 {
        let (start, end) = (ctx.new_event(flags)?, ctx.new_event(flags)?);
        let wall = std::time::Instant::now();
        start.record(stream)?;
        run()?;
        end.record(stream)?;
        end.synchronize()?;
        times.push((
            f64::from(start.elapsed_ms(&end)?),
            wall.elapsed().as_secs_f64() * 1e3,
        ));
    }
    let mean = times.iter().map(|t| t.0).sum::<f64>() / 5.0;
    let wall = times.iter().map(|t| t.1).sum::<f64>() / 5.0;
    println!(
        "copy 400 MB {what:32} events {mean:7.2} ms ({:.1} GB/s) wall {wall:7.2} ms",
        0.4 / (mean / 1e3)
    );
    Ok(())
}

/// Transfers of 400 MB: pageable, pinned (default flags), pinned write-combined.
fn transfers(bench: &Bench) -> Result<()> {
    let (ctx, stream) = (&bench.ctx, &bench.stream);
    let len = 100_000_000usize;
    let pageable = vec![1.0f32; len];
    let mut pageable_out = vec![0.0f32; len];
    // SAFETY: filled before use below.
    let mut pinned = unsafe { ctx.alloc_pinned_with_flags::<f32>(len, 0) }?;
    pinned.as_mut_slice()?.fill(1.0);
    // SAFETY: as above.
    let mut pinned_out = unsafe { ctx.alloc_pinned_with_flags::<f32>(len, 0) }?;
    pinned_out.as_mut_slice()?.fill(0.0);
    // SAFETY: as above.
    let mut wc = unsafe { ctx.alloc_pinned::<f32>(len) }?;
    wc.as_mut_slice()?.fill(1.0);
    let mut dev: CudaSlice<f32> = stream.alloc_zeros(len)?;
    let dev2: CudaSlice<f32> = stream.alloc_zeros(len)?;
    time_copy(bench, "upload pageable", &mut || {
        Ok(stream.memcpy_htod(&pageable, &mut dev)?)
    })?;
    time_copy(bench, "upload pinned", &mut || {
        Ok(stream.memcpy_htod(&pinned, &mut dev)?)
    })?;
    time_copy(bench, "upload pinned write-combined", &mut || {
        Ok(stream.memcpy_htod(&wc, &mut dev)?)
    })?;
    time_copy(bench, "download pageable", &mut || {
        Ok(stream.memcpy_dtoh(&dev, &mut pageable_out)?)
    })?;
    time_copy(bench, "download pinned", &mut || {
        Ok(stream.memcpy_dtoh(&dev, &mut pinned_out)?)
    })?;
    let other = ctx.new_stream()?;
    time_copy(bench, "upload + download, two streams", &mut || {
        let start = stream.record_event(None)?;
        other.wait(&start)?;
        stream.memcpy_htod(&pinned, &mut dev)?;
        other.memcpy_dtoh(&dev2, &mut pinned_out)?;
        stream.join(&other)?;
        Ok(())
    })?;
    let started = std::time::Instant::now();
    // SAFETY: dropped at once.
    let fresh = unsafe { ctx.alloc_pinned_with_flags::<f32>(len, 0) }?;
    println!(
        "allocating 400 MB pinned: {:.1} ms",
        started.elapsed().as_secs_f64() * 1e3
    );
    drop(fresh);
    Ok(())
}
