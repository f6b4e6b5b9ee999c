//! `z = sin(x) * exp(y)` (seed `003_...`'s `@vectorize`) over `x = np.linspace(0, 2 pi, n)`
//! and `y = np.linspace(10, 10, n)`: in float32 with the precise library functions, in float32
//! with the fast hardware approximations (`__sinf`, `__expf`), and in float64. Each is timed on
//! the CPU (where it has a twin) and on the GPU (host arrays and device-resident), and its
//! error is measured against the CPU's float64 result on the float64 inputs.

use std::fmt;
use std::sync::Arc;

use cudarc::driver::{CudaFunction, CudaSlice, CudaStream, DeviceRepr, PushKernelArg};
use rayon::prelude::*;

use super::super::{
    time_cpu_runs, CpuThreads, GpuHostArraysTimings, RunControl, TimingStats, CPU_CHUNK,
};
use super::timing::{time_with_host_arrays, HostArraysRun};
use super::{
    check_repeats, linspace, max_relative_difference, one_per_thread, BasicsGpu, KernelTime,
    ELEMENT_BLOCK,
};
use crate::compute::cuda::driver_error;
use crate::error::{HeatlabError, Result};

/// The notebook's n.
pub const NOTEBOOK_N: u64 = 1_000_000;

/// One version of the formula.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum SinExpVariant {
    /// float32, `sinf` and `expf`.
    F32Precise,
    /// float32, `__sinf` and `__expf` (the GPU's fast approximations; no CPU twin).
    F32Fast,
    /// float64, `sin` and `exp`.
    F64,
}

impl SinExpVariant {
    /// Every variant, in the order the tables list them.
    pub const ALL: [Self; 3] = [Self::F32Precise, Self::F32Fast, Self::F64];
}

impl fmt::Display for SinExpVariant {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::F32Precise => "float32, precise",
            Self::F32Fast => "float32, fast math",
            Self::F64 => "float64",
        })
    }
}

/// What the GPU measured for one variant.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct SinExpGpu {
    /// Upload of x and y, kernel, download of z.
    pub host_arrays: GpuHostArraysTimings,
    /// The kernel alone, arrays on the device.
    pub device_resident: KernelTime,
    /// Largest |z - reference| over max |reference|.
    pub max_relative_error: f64,
    /// Largest |GPU - CPU of the same precision| over max |reference| (`None` for fast math).
    pub max_relative_difference_from_cpu: Option<f64>,
}

/// One variant's row of the report.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct SinExpRow {
    /// The variant.
    pub variant: SinExpVariant,
    /// The CPU on one thread (`None` for fast math).
    pub cpu_one_thread: Option<TimingStats>,
    /// The CPU on all threads.
    pub cpu_all_threads: Option<TimingStats>,
    /// The CPU's largest relative error against the float64 reference.
    pub cpu_max_relative_error: Option<f64>,
    /// The GPU's figures, `None` without a GPU.
    pub gpu: Option<SinExpGpu>,
}

/// The whole lesson.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct SinExpReport {
    /// Elements.
    pub n: u64,
    /// Timed runs of each version.
    pub repeats: u32,
    /// The GPU's name when it ran.
    pub gpu: Option<String>,
    /// Threads of the all-threads CPU version.
    pub cpu_threads: usize,
    /// One row per variant.
    pub rows: Vec<SinExpRow>,
}

/// The notebook's inputs in float64.
pub fn inputs(n: usize) -> (Vec<f64>, Vec<f64>) {
    (
        linspace(0.0, std::f64::consts::TAU, n),
        linspace(10.0, 10.0, n),
    )
}

/// The float types the formula's CPU twins compute in.
pub trait SinExpFloat: Copy + Send + Sync {
    /// `sin(x) * exp(y)` with the standard library's functions of the type.
    fn sin_exp(x: Self, y: Self) -> Self;
}

impl SinExpFloat for f32 {
    fn sin_exp(x: Self, y: Self) -> Self {
        x.sin() * y.exp()
    }
}

impl SinExpFloat for f64 {
    fn sin_exp(x: Self, y: Self) -> Self {
        x.sin() * y.exp()
    }
}

/// `sin(x) * exp(y)` on the CPU, in float32 or float64 (the reference).
pub fn sin_exp_cpu<T: SinExpFloat>(x: &[T], y: &[T], z: &mut [T], threads: CpuThreads) {
    let fill = |(z, (x, y)): (&mut [T], (&[T], &[T]))| {
        for ((out, &a), &b) in z.iter_mut().zip(x).zip(y) {
            *out = T::sin_exp(a, b);
        }
    };
    match threads {
        CpuThreads::One => fill((z, (x, y))),
        CpuThreads::All => z
            .par_chunks_mut(CPU_CHUNK)
            .zip(x.par_chunks(CPU_CHUNK).zip(y.par_chunks(CPU_CHUNK)))
            .for_each(fill),
    }
}

/// Times both CPU versions of `compute` (one thread, all threads); the output of the last.
fn time_cpu<T: Clone + Default>(
    n: usize,
    repeats: u32,
    control: RunControl<'_>,
    compute: impl Fn(&mut [T], CpuThreads),
) -> Result<(TimingStats, TimingStats, Vec<T>)> {
    let mut out = vec![T::default(); n];
    // Untimed: the output's fresh pages are faulted in here, not in the first timing.
    compute(&mut out, CpuThreads::All);
    let (one, ()) = time_cpu_runs(repeats, || {
        control.check()?;
        compute(&mut out, CpuThreads::One);
        Ok(())
    })?;
    let (all, ()) = time_cpu_runs(repeats, || {
        control.check()?;
        compute(&mut out, CpuThreads::All);
        Ok(())
    })?;
    Ok((one, all, out))
}

/// Runs every variant on the CPU and, with a GPU, on the GPU.
pub fn run(
    n: u64,
    repeats: u32,
    gpu: Option<&BasicsGpu>,
    control: RunControl<'_>,
) -> Result<SinExpReport> {
    check_repeats(repeats)?;
    let n_elements = usize::try_from(n)
        .ok()
        .filter(|&n| n >= 1)
        .ok_or_else(|| HeatlabError::InvalidInput(format!("n = {n} is not a usable size")))?;
    crate::memory::ensure_host_memory("sin(x) * exp(y)", n_elements.saturating_mul(8 * 9))?;
    let (x, y) = inputs(n_elements);
    let (x32, y32): (Vec<f32>, Vec<f32>) = (
        x.iter().map(|&v| v as f32).collect(),
        y.iter().map(|&v| v as f32).collect(),
    );
    let (f64_one, f64_all, reference) = time_cpu(n_elements, repeats, control, |z, threads| {
        sin_exp_cpu(&x, &y, z, threads)
    })?;
    let (f32_one, f32_all, cpu32) = time_cpu(n_elements, repeats, control, |z, threads| {
        sin_exp_cpu(&x32, &y32, z, threads)
    })?;
    let cpu32_error = max_relative_difference(&cpu32, &reference);
    let cpu64_error = max_relative_difference(&reference, &reference);
    let mut rows = Vec::new();
    for variant in SinExpVariant::ALL {
        control.check()?;
        let gpu_row = match gpu {
            Some(gpu) => Some(run_gpu_variant(
                gpu,
                variant,
                (&x, &y),
                (&x32, &y32),
                (&cpu32, &reference),
                repeats,
                control,
            )?),
            None => None,
        };
        let (one, all, error) = match variant {
            SinExpVariant::F32Precise => (
                Some(f32_one.clone()),
                Some(f32_all.clone()),
                Some(cpu32_error),
            ),
            SinExpVariant::F32Fast => (None, None, None),
            SinExpVariant::F64 => (
                Some(f64_one.clone()),
                Some(f64_all.clone()),
                Some(cpu64_error),
            ),
        };
        rows.push(SinExpRow {
            variant,
            cpu_one_thread: one,
            cpu_all_threads: all,
            cpu_max_relative_error: error,
            gpu: gpu_row,
        });
    }
    Ok(SinExpReport {
        n,
        repeats,
        gpu: gpu.map(|gpu| gpu.name().to_string()),
        cpu_threads: rayon::current_num_threads(),
        rows,
    })
}

/// Launches `function(x, y, z, n)` over whole arrays.
fn launch_binary<T: DeviceRepr>(
    function: &CudaFunction,
    name: &str,
    stream: &Arc<CudaStream>,
    inputs: &[CudaSlice<T>],
    output: &mut CudaSlice<T>,
) -> Result<()> {
    let [x, y] = inputs else {
        return Err(HeatlabError::Internal(format!(
            "{name} takes two input arrays"
        )));
    };
    if x.len() != output.len() || y.len() != output.len() {
        return Err(HeatlabError::Internal(format!(
            "{name}'s arrays differ in length"
        )));
    }
    let n = output.len() as u64;
    let config = one_per_thread(n, ELEMENT_BLOCK)?;
    let mut launch = stream.launch_builder(function);
    launch.arg(x).arg(y).arg(output).arg(&n);
    // SAFETY: sin_exp_f32(_fast)(const float* x, const float* y, float* z, unsigned long long
    // n) and sin_exp_f64 (the same with double): the caller passes the function whose element
    // type is T; all three arrays hold n elements (checked above) and the kernel touches only
    // indices below n.
    unsafe { launch.launch(config) }.map_err(driver_error("launching sin_exp"))?;
    Ok(())
}

/// One variant on the GPU: timed, and its error measured.
fn run_gpu_variant(
    gpu: &BasicsGpu,
    variant: SinExpVariant,
    (x, y): (&[f64], &[f64]),
    (x32, y32): (&[f32], &[f32]),
    (cpu32, reference): (&[f32], &[f64]),
    repeats: u32,
    control: RunControl<'_>,
) -> Result<SinExpGpu> {
    let what = format!("sin(x) * exp(y) over {} elements", x.len());
    let scale = reference.iter().fold(0.0f64, |m, r| m.max(r.abs()));
    let (host_arrays, device_resident, error, from_cpu) = match variant {
        SinExpVariant::F64 => {
            let launch = |stream: &Arc<CudaStream>,
                          inputs: &[CudaSlice<f64>],
                          output: &mut CudaSlice<f64>| {
                launch_binary(&gpu.sin_exp_f64, "sin_exp_f64", stream, inputs, output)
            };
            let HostArraysRun {
                output,
                host_arrays,
                device_resident,
            } = time_with_host_arrays(gpu, &what, &[x, y], x.len(), repeats, control, &launch)?;
            let error = max_relative_difference(&output, reference);
            (host_arrays, device_resident, error, Some(error))
        }
        SinExpVariant::F32Precise | SinExpVariant::F32Fast => {
            let (function, name) = if variant == SinExpVariant::F32Fast {
                (&gpu.sin_exp_f32_fast, "sin_exp_f32_fast")
            } else {
                (&gpu.sin_exp_f32, "sin_exp_f32")
            };
            let launch = |stream: &Arc<CudaStream>,
                          inputs: &[CudaSlice<f32>],
                          output: &mut CudaSlice<f32>| {
                launch_binary(function, name, stream, inputs, output)
            };
            let HostArraysRun {
                output,
                host_arrays,
                device_resident,
            } = time_with_host_arrays(gpu, &what, &[x32, y32], x.len(), repeats, control, &launch)?;
            let error = max_relative_difference(&output, reference);
            let from_cpu = (variant == SinExpVariant::F32Precise).then(|| {
                output
                    .iter()
                    .zip(cpu32)
                    .map(|(&g, &c)| (f64::from(g) - f64::from(c)).abs())
                    .fold(0.0f64, f64::max)
                    / scale.max(f64::MIN_POSITIVE)
            });
            (host_arrays, device_resident, error, from_cpu)
        }
    };
    Ok(SinExpGpu {
        host_arrays,
        device_resident,
        max_relative_error: error,
        max_relative_difference_from_cpu: from_cpu,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_cpu_versions_agree_with_the_formula() {
        let report = run(1001, 1, None, RunControl::unattended()).unwrap();
        let f32_row = &report.rows[0];
        assert!(
            f32_row.cpu_max_relative_error.unwrap() < 2e-6,
            "{f32_row:?}"
        );
        assert_eq!(report.rows[2].cpu_max_relative_error, Some(0.0));
        assert!(report.rows[1].cpu_one_thread.is_none());
        let (x, y) = inputs(5);
        let mut z = vec![0.0; 5];
        sin_exp_cpu(&x, &y, &mut z, CpuThreads::All);
        assert!(
            (z[1] - 10f64.exp()).abs() < 1e-9,
            "sin(pi/2) e^10: {}",
            z[1]
        );
    }
}
