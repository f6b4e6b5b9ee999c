//! Times candidate shapes of the tutorial kernels (benches/tutorial_variants/variants.cu, read at
//! run time) and pinned against pageable transfers, on GPU 0:
//! `cargo run --release --example tutorial_variants -- benches/tutorial_variants/variants.cu`.
//! Each kernel is timed with CUDA events around one launch (as `heatlab kernel` did) and around
//! 100 back-to-back launches; the element-wise variants' outputs are compared with the baseline's
//! and the pi variants' counts with each other.
#![expect(clippy::unwrap_used, reason = "a measuring tool: a failure stops it with its message")]

use std::sync::Arc;

use cudarc::driver::{
    sys, CudaContext, CudaFunction, CudaSlice, CudaStream, LaunchConfig, PushKernelArg,
};
use cudarc::nvrtc::{compile_ptx_with_opts, CompileOptions};

type Launch<'a> = dyn Fn(&Arc<CudaStream>) + 'a;

fn timed(ctx: &Arc<CudaContext>, stream: &Arc<CudaStream>, launches: u32, run: &Launch<'_>) -> f64 {
    let flags = Some(sys::CUevent_flags::CU_EVENT_DEFAULT);
    let (start, end) = (ctx.new_event(flags).unwrap(), ctx.new_event(flags).unwrap());
    start.record(stream).unwrap();
    for _ in 0..launches {
        run(stream);
    }
    end.record(stream).unwrap();
    end.synchronize().unwrap();
    f64::from(start.elapsed_ms(&end).unwrap()) / 1e3 / f64::from(launches)
}

/// (mean of 30 single-launch timings, best of them, per launch of 100 back to back).
fn profile(ctx: &Arc<CudaContext>, stream: &Arc<CudaStream>, run: &Launch<'_>) -> (f64, f64, f64) {
    for _ in 0..3 {
        run(stream);
    }
    stream.synchronize().unwrap();
    let singles: Vec<f64> = (0..30).map(|_| timed(ctx, stream, 1, run)).collect();
    let mean = singles.iter().sum::<f64>() / singles.len() as f64;
    let best = singles.iter().copied().fold(f64::INFINITY, f64::min);
    let batch = timed(ctx, stream, 100, run);
    (mean, best, batch)
}

fn config(blocks: u64, block: u32) -> LaunchConfig {
    LaunchConfig {
        grid_dim: (blocks.max(1) as u32, 1, 1),
        block_dim: (block, 1, 1),
        shared_mem_bytes: 0,
    }
}

fn main() {
    let path = std::env::args().nth(1).unwrap();
    let source = std::fs::read_to_string(&path).unwrap();
    let ctx = CudaContext::new(0).unwrap();
    // SAFETY: every buffer here is used on `stream` only, except the two-stream copy test,
    // which synchronises both streams before reading anything.
    unsafe { ctx.disable_event_tracking() };
    let stream = ctx.new_stream().unwrap();
    let (major, minor) = ctx.compute_capability().unwrap();
    let sms = ctx
        .attribute(sys::CUdevice_attribute::CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT)
        .unwrap() as u64;
    println!("device {} (sm_{major}{minor}, {sms} SMs)", ctx.name().unwrap());
    let ptx = compile_ptx_with_opts(
        source,
        CompileOptions {
            fmad: Some(false),
            options: vec![format!("--gpu-architecture=compute_{major}{minor}")],
            ..Default::default()
        },
    )
    .unwrap();
    let module = ctx.load_module(ptx).unwrap();
    let f = |name: &str| -> CudaFunction { module.load_function(name).unwrap() };

    // Hidden layer, 1M.
    for n in [1_000_000u64, 1_000_003] {
        let g: Vec<f32> = (0..n).map(|i| (i % 256) as f32).collect();
        let w: Vec<f32> = (0..n).map(|i| 0.3 + (i % 97) as f32 * 0.004).collect();
        let dg = stream.clone_htod(&g).unwrap();
        let dw = stream.clone_htod(&w).unwrap();
        let mut reference: Option<Vec<f32>> = None;
        for (name, blocks) in [
            ("hl_base", n.div_ceil(256).min(sms * 16)),
            ("hl_v4", (n / 4 + n % 4).div_ceil(256)),
            ("hl_v4x2", (n / 4).div_ceil(512)),
        ] {
            let func = f(name);
            let out: CudaSlice<f32> = stream.alloc_zeros(n as usize).unwrap();
            let run = |s: &Arc<CudaStream>| {
                let mut b = s.launch_builder(&func);
                b.arg(&dg).arg(&dw).arg(&out).arg(&n);
                // SAFETY: (const float*, const float*, float*, u64 n), all n floats long.
                unsafe { b.launch(config(blocks, 256)) }.unwrap();
            };
            let (mean, best, batch) = profile(&ctx, &stream, &run);
            let host = stream.clone_dtoh(&out).unwrap();
            let diff = reference.as_ref().map_or(0.0, |r| {
                r.iter()
                    .zip(&host)
                    .map(|(a, b)| (a - b).abs())
                    .fold(0.0f32, f32::max)
            });
            reference.get_or_insert(host);
            println!(
                "hidden n={n} {name:10} single mean {:8.2} us best {:8.2} us | batch {:8.2} us | max diff vs base {diff:e}",
                mean * 1e6,
                best * 1e6,
                batch * 1e6
            );
        }
    }

    // Gaussian, 100M.
    let n: u64 = 100_000_000;
    let x: Vec<f32> = (0..n).map(|i| -3.0 + 6.0 * ((i * 7919) % n) as f32 / n as f32).collect();
    let dx = stream.clone_htod(&x).unwrap();
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
        let func = f(name);
        let out: CudaSlice<f32> = stream.alloc_zeros(n as usize).unwrap();
        let run = |s: &Arc<CudaStream>| {
            let mut b = s.launch_builder(&func);
            b.arg(&dx).arg(&out).arg(&n).arg(&mean_arg).arg(&sigma_arg);
            // SAFETY: (const float*, float*, u64 n, float, float), n floats each.
            unsafe { b.launch(config(blocks, 256)) }.unwrap();
        };
        let (mean, best, batch) = profile(&ctx, &stream, &run);
        let host = stream.clone_dtoh(&out).unwrap();
        let diff = reference.as_ref().map_or(0.0, |r| {
            r.iter()
                .zip(&host)
                .map(|(a, b)| (a - b).abs())
                .fold(0.0f32, f32::max)
        });
        reference.get_or_insert(host);
        println!(
            "gaussian n={n} {name:10} single mean {:8.1} us best {:8.1} us | batch {:8.1} us = {:.2} TB/s | max diff vs base {diff:e}",
            mean * 1e6,
            best * 1e6,
            batch * 1e6,
            8.0 * n as f64 / batch / 1e12
        );
    }
    let copy = {
        let dst = std::cell::RefCell::new(stream.alloc_zeros::<f32>(n as usize).unwrap());
        let run = |s: &Arc<CudaStream>| {
            s.memcpy_dtod(&dx, &mut *dst.borrow_mut()).unwrap();
        };
        profile(&ctx, &stream, &run)
    };
    println!(
        "device-to-device copy of 400 MB: batch {:.1} us",
        copy.2 * 1e6
    );

    // Monte Carlo pi.
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
            let func = f(name);
            let occupancy = func
                .occupancy_max_active_blocks_per_multiprocessor(256, 0, None)
                .unwrap() as u64;
            let blocks = if name == "pi_base" {
                (samples / 2).div_ceil(256).min(sms * 8)
            } else {
                sms * occupancy
            };
            let inside: CudaSlice<u64> = stream.alloc_zeros(1).unwrap();
            let seed = 42u64;
            let first = 0u64;
            let run = |s: &Arc<CudaStream>| {
                let mut b = s.launch_builder(&func);
                b.arg(&seed).arg(&first).arg(&samples).arg(&inside);
                // SAFETY: (u64 seed, u64 first, u64 count, u64* inside), block PI_BLOCK.
                unsafe { b.launch(config(blocks, 256)) }.unwrap();
            };
            run(&stream);
            let count = stream.clone_dtoh(&inside).unwrap()[0];
            let times: Vec<f64> = (0..5).map(|_| timed(&ctx, &stream, 1, &run)).collect();
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

    // Transfers of 400 MB: pageable, pinned (default flags), pinned write-combined.
    let len = 100_000_000usize;
    let pageable = vec![1.0f32; len];
    let mut pageable_out = vec![0.0f32; len];
    // SAFETY: filled before use below.
    let mut pinned = unsafe { ctx.alloc_pinned_with_flags::<f32>(len, 0) }.unwrap();
    pinned.as_mut_slice().unwrap().fill(1.0);
    // SAFETY: as above.
    let mut pinned_out = unsafe { ctx.alloc_pinned_with_flags::<f32>(len, 0) }.unwrap();
    pinned_out.as_mut_slice().unwrap().fill(0.0);
    // SAFETY: as above.
    let mut wc = unsafe { ctx.alloc_pinned::<f32>(len) }.unwrap();
    wc.as_mut_slice().unwrap().fill(1.0);
    let mut dev: CudaSlice<f32> = stream.alloc_zeros(len).unwrap();
    let dev2: CudaSlice<f32> = stream.alloc_zeros(len).unwrap();
    let flags = Some(sys::CUevent_flags::CU_EVENT_DEFAULT);
    let time = |what: &str, run: &mut dyn FnMut()| {
        run();
        stream.synchronize().unwrap();
        let mut times = Vec::new();
        for _ in 0..5 {
            let (start, end) = (ctx.new_event(flags).unwrap(), ctx.new_event(flags).unwrap());
            let wall = std::time::Instant::now();
            start.record(&stream).unwrap();
            run();
            end.record(&stream).unwrap();
            end.synchronize().unwrap();
            times.push((
                f64::from(start.elapsed_ms(&end).unwrap()),
                wall.elapsed().as_secs_f64() * 1e3,
            ));
        }
        let mean = times.iter().map(|t| t.0).sum::<f64>() / 5.0;
        let wall = times.iter().map(|t| t.1).sum::<f64>() / 5.0;
        println!(
            "copy 400 MB {what:32} events {mean:7.2} ms ({:.1} GB/s) wall {wall:7.2} ms",
            0.4 / (mean / 1e3)
        );
    };
    time("upload pageable", &mut || stream.memcpy_htod(&pageable, &mut dev).unwrap());
    time("upload pinned", &mut || stream.memcpy_htod(&pinned, &mut dev).unwrap());
    time("upload pinned write-combined", &mut || stream.memcpy_htod(&wc, &mut dev).unwrap());
    time("download pageable", &mut || stream.memcpy_dtoh(&dev, &mut pageable_out).unwrap());
    time("download pinned", &mut || stream.memcpy_dtoh(&dev, &mut pinned_out).unwrap());
    let other = ctx.new_stream().unwrap();
    time("upload + download, two streams", &mut || {
        let start = stream.record_event(None).unwrap();
        other.wait(&start).unwrap();
        stream.memcpy_htod(&pinned, &mut dev).unwrap();
        other.memcpy_dtoh(&dev2, &mut pinned_out).unwrap();
        stream.join(&other).unwrap();
    });
    let started = std::time::Instant::now();
    // SAFETY: dropped at once.
    let fresh = unsafe { ctx.alloc_pinned_with_flags::<f32>(len, 0) }.unwrap();
    println!(
        "allocating 400 MB pinned: {:.1} ms",
        started.elapsed().as_secs_f64() * 1e3
    );
    drop(fresh);
}
