//! The readable reports of the GPU basics: one table per lesson.

use heatlab_engine::measure::format_seconds;
use heatlab_engine::tutorial::basics::device::DeviceReport;
use heatlab_engine::tutorial::basics::geometry::{Dimensions, GeometryOutcome};
use heatlab_engine::tutorial::basics::maximum::MaximumLadder;
use heatlab_engine::tutorial::basics::reduce::ReduceReport;
use heatlab_engine::tutorial::basics::row_sums::RowSumsReport;
use heatlab_engine::tutorial::basics::sin_exp::{SinExpReport, SinExpVariant};
use heatlab_engine::tutorial::basics::BasicsOutcome;
use heatlab_engine::tutorial::TimingStats;

/// The report of `outcome`, with the note on the GPU (why it is missing) first.
pub fn format(outcome: &BasicsOutcome, note: Option<&str>) -> String {
    let mut text = format!("{}\n", outcome.lesson().title());
    if let Some(note) = note {
        text.push_str(&format!("{note}\n"));
    }
    text.push_str(&match outcome {
        BasicsOutcome::Maximum(ladder) => maximum(ladder),
        BasicsOutcome::Geometry(run) => geometry(run),
        BasicsOutcome::SinExp(report) => sin_exp(report),
        BasicsOutcome::RowSums(report) => row_sums(report),
        BasicsOutcome::Reduce(report) => reduce(report),
        BasicsOutcome::Device(report) => device(report),
    });
    text
}

/// `label  mean ± std`.
fn row(label: &str, stats: &TimingStats) -> String {
    format!("  {label:<44} {:>26}\n", stats.display())
}

fn maximum(ladder: &MaximumLadder) -> String {
    let mut text = format!(
        "c = max(a, b), float32 cubes, seed {}, {} runs each{}\n",
        ladder.seed,
        ladder.repeats,
        ladder
            .gpu
            .as_ref()
            .map(|gpu| format!(", GPU {gpu}"))
            .unwrap_or_default()
    );
    for step in &ladder.steps {
        text.push_str(&format!("{0}^3 = {1} elements\n", step.side, step.n));
        text.push_str(&row("naive indexed loop, one thread", &step.naive_loop));
        text.push_str(&row("vectorised loop, one thread", &step.vectorised_loop));
        text.push_str(&row(
            &format!("all {} CPU threads", step.cpu_threads),
            &step.all_threads,
        ));
        let Some(gpu) = &step.gpu else { continue };
        for (label, host) in [
            ("GPU, pageable host arrays", &gpu.gpu_host_arrays),
            ("GPU, pinned host arrays", &gpu.gpu_pinned_arrays),
        ] {
            if let Some(host) = host {
                text.push_str(&row(&format!("{label} (total)"), &host.total));
                text.push_str(&row("  upload", &host.upload));
                text.push_str(&row("  kernel", &host.kernel));
                text.push_str(&row("  download", &host.download));
            }
        }
        if let Some(stats) = &gpu.gpu_device_resident {
            text.push_str(&row("GPU, device-resident arrays (kernel)", stats));
        }
        if let Some(reason) = &gpu.pinned_note {
            text.push_str(&format!("  pinned host arrays not run: {reason}\n"));
        }
        if step.gpu_equals_cpu == Some(false) {
            text.push_str("  WARNING: the GPU's maximum differs from the CPU's\n");
        }
    }
    let crossover = |what: &str, n: Option<u64>| match (n, &ladder.gpu) {
        (_, None) => String::new(),
        (Some(n), _) => format!("{what} beats the fastest CPU rung from {n} elements on\n"),
        (None, _) => format!("{what} beats the fastest CPU rung at none of these sizes\n"),
    };
    text.push_str(&crossover(
        "the GPU with host arrays",
        ladder.crossover_host_arrays,
    ));
    text.push_str(&crossover(
        "the GPU with device-resident arrays",
        ladder.crossover_device_resident,
    ));
    text
}

fn geometry(run: &GeometryOutcome) -> String {
    let options = &run.options;
    let shape = match options.dimensions {
        Dimensions::One => format!("{} elements", options.n),
        Dimensions::Two => format!(
            "{} x {} elements, grid x along the {}",
            options.rows,
            options.cols,
            if options.x_along_rows {
                "rows"
            } else {
                "columns"
            }
        ),
    };
    let mut text = format!(
        "{shape}; blocks of {} x {} threads, grid of {} x {} blocks; {}\n",
        options.block[0],
        options.block[1],
        options.grid[0],
        options.grid[1],
        if options.guarded {
            "guarded"
        } else {
            "without the guard"
        }
    );
    for line in run.explanation() {
        text.push_str(&format!("  {line}\n"));
    }
    match (&run.gpu, run.gpu_equals_cpu) {
        (Some(gpu), Some(true)) => text.push_str(&format!(
            "  GPU {gpu}: its buffer equals the CPU's model of the launch\n"
        )),
        (Some(gpu), _) => text.push_str(&format!(
            "  WARNING: GPU {gpu}: its buffer differs from the CPU's model\n"
        )),
        (None, _) => text.push_str("  counted on the CPU's model of the launch (no GPU)\n"),
    }
    if let Some(kernel) = &run.kernel {
        text.push_str(&row(
            "kernel time (array on the device)",
            &kernel.per_launch,
        ));
    }
    text
}

fn sin_exp(report: &SinExpReport) -> String {
    let mut text = format!(
        "z = sin(x) * exp(y), n = {}, x = linspace(0, 2 pi), y = 10; error = max |z - float64 CPU| / max |z|\n",
        report.n
    );
    for entry in &report.rows {
        text.push_str(&format!("{}\n", entry.variant));
        if let Some(stats) = &entry.cpu_one_thread {
            text.push_str(&row("CPU, one thread", stats));
        }
        if let Some(stats) = &entry.cpu_all_threads {
            text.push_str(&row(
                &format!("CPU, all {} threads", report.cpu_threads),
                stats,
            ));
        }
        match (entry.variant, entry.cpu_max_relative_error) {
            (SinExpVariant::F64, _) => text.push_str("  the CPU's float64 is the reference\n"),
            (_, Some(error)) => text.push_str(&format!("  CPU error {error:.2e}\n")),
            (_, None) => {}
        }
        if entry.cpu_one_thread.is_none() && entry.gpu.is_none() {
            text.push_str(
                "  the GPU's fast approximations have no CPU twin, and there is no GPU\n",
            );
        }
        if let Some(gpu) = &entry.gpu {
            text.push_str(&row("GPU, host arrays (total)", &gpu.host_arrays.total));
            text.push_str(&row("  upload", &gpu.host_arrays.upload));
            text.push_str(&row("  kernel", &gpu.host_arrays.kernel));
            text.push_str(&row("  download", &gpu.host_arrays.download));
            text.push_str(&row(
                "GPU, device-resident (kernel)",
                &gpu.device_resident.per_launch,
            ));
            text.push_str(&format!("  GPU error {:.2e}\n", gpu.max_relative_error));
        }
    }
    text
}

fn row_sums(report: &RowSumsReport) -> String {
    let mut text = format!(
        "s[i] = sum_j A[i, j], A {} x {} float32 (seed {}), each row summed in float64\n",
        report.rows, report.cols, report.seed
    );
    text.push_str(&row("CPU, one thread", &report.cpu_one_thread));
    text.push_str(&row(
        &format!("CPU, all {} threads", report.cpu_threads),
        &report.cpu_all_threads,
    ));
    for kernel in &report.kernels {
        text.push_str(&format!("GPU, {}\n", kernel.kernel));
        text.push_str(&row("host arrays (total)", &kernel.host_arrays.total));
        text.push_str(&row(
            "device-resident (kernel)",
            &kernel.device_resident.per_launch,
        ));
        text.push_str(&format!(
            "  {} of {} rows equal to the CPU's bit for bit; max relative difference {:.2e}\n",
            kernel.rows_equal, report.rows, kernel.max_relative_difference
        ));
    }
    text
}

fn reduce(report: &ReduceReport) -> String {
    let mut text = format!(
        "n = {} float64 values (seed {}); the notebook's np.prod(x) = {:e}\n",
        report.n, report.seed, report.notebook_product
    );
    for entry in &report.rows {
        text.push_str(&format!("{} = {:.15e} (CPU)\n", entry.op, entry.cpu_value));
        text.push_str(&row("CPU, one thread", &entry.cpu_one_thread));
        text.push_str(&row(
            &format!("CPU, all {} threads", report.cpu_threads),
            &entry.cpu_all_threads,
        ));
        for gpu in &entry.gpu {
            text.push_str(&row(&format!("GPU, {}", gpu.kernel), &gpu.time.per_launch));
            text.push_str(&format!(
                "    = {:.15e}, relative difference {:.1e}\n",
                gpu.value, gpu.relative_difference
            ));
        }
    }
    text
}

fn device(report: &DeviceReport) -> String {
    let (major, minor) = report.compute_capability;
    let optional = |value: Option<f64>, unit: &str| {
        value.map_or_else(|| "not reported".to_string(), |v| format!("{v:.0} {unit}"))
    };
    let mut text = format!(
        "{}\ncompute capability {major}.{minor}, {} SMs\n",
        report.name, report.multiprocessors
    );
    text.push_str(&match (report.notebook_cores_per_sm, report.cores_per_sm, report.cores) {
        (Some(per_sm), _, Some(cores)) => format!("{per_sm} cores per SM (the notebook's table), {cores} cores\n"),
        (None, Some(per_sm), Some(cores)) => format!(
            "the notebook's table knows no {major}.x: {per_sm} cores per SM for this capability, {cores} cores\n"
        ),
        _ => "cores per SM unknown for this capability\n".to_string(),
    });
    text.push_str(&format!(
        "clock {}, memory clock {}, bus {} bits, memory {:.1} GiB, L2 {}\n",
        optional(report.clock_mhz, "MHz"),
        optional(report.memory_clock_mhz, "MHz"),
        report
            .memory_bus_bits
            .map_or_else(|| "?".to_string(), |b| b.to_string()),
        report.memory_bytes as f64 / (1u64 << 30) as f64,
        report
            .l2_bytes
            .map_or_else(|| "?".to_string(), |b| format!("{} MiB", b >> 20)),
    ));
    let gb = |bytes_per_s: f64| format!("{:.0} GB/s", bytes_per_s / 1e9);
    text.push_str(&format!(
        "peak bandwidth {}, peak FP32 {}\n",
        report
            .peak_bandwidth
            .map_or_else(|| "unknown".to_string(), gb),
        report.peak_fp32_flops.map_or_else(
            || "unknown".to_string(),
            |f| format!("{:.1} TFLOP/s", f / 1e12)
        ),
    ));
    text.push_str(&format!(
        "measured: device-to-device copy {} ({} per 256 MiB{}), upload pageable {}, pinned {}\n",
        gb(report.device_copy_bandwidth),
        format_seconds(report.device_copy.mean_s),
        report
            .copy_fraction_of_peak()
            .map(|f| format!(", {:.0}% of peak", f * 100.0))
            .unwrap_or_default(),
        gb(report.upload_pageable_bandwidth),
        report
            .upload_pinned_bandwidth
            .map_or_else(|| "not measured".to_string(), gb),
    ));
    text
}
