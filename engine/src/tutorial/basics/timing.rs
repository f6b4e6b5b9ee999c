//! The timed loops the basics share, built on the tutorial kernels' own (`tutorial::gpu`):
//! kernel-only timings with the data on the device, and runs with host arrays (upload, kernel,
//! download) over arrays of any element type.

use std::sync::Arc;

use cudarc::driver::{CudaSlice, CudaStream, DeviceRepr, ValidAsZeroBits};

use super::super::gpu::{launches_per_timing, time_device_resident, time_host_arrays, TimedPart};
use super::super::{GpuHostArraysTimings, PhaseProgress, RunControl, RunPhase, TimingStats};
use super::BasicsGpu;
use crate::compute::cuda::driver_error;
use crate::error::Result;

/// A kernel timed with its data on the device: many launches back to back per timing.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct KernelTime {
    /// Seconds per launch between CUDA events.
    pub per_launch: TimingStats,
    /// Host wall-clock seconds per launch (launch and wait, as a Python caller sees it).
    pub wall: TimingStats,
    /// Launches back to back in each timing.
    pub launches_per_timing: u32,
}

/// Times `launch` `repeats` times with the data left on the device.
pub(crate) fn time_kernel(
    gpu: &BasicsGpu,
    repeats: u32,
    control: RunControl<'_>,
    launch: &mut dyn FnMut() -> Result<()>,
) -> Result<KernelTime> {
    time_kernel_with_reset(gpu, repeats, control, &mut |part| match part {
        TimedPart::Kernel => launch(),
        TimedPart::Upload | TimedPart::Download => Ok(()),
    })
}

/// Times `work(TimedPart::Kernel)` `repeats` times with the data left on the device;
/// `work(TimedPart::Upload)` runs untimed before each timing (an accumulator set back to its
/// start).
pub(crate) fn time_kernel_with_reset(
    gpu: &BasicsGpu,
    repeats: u32,
    control: RunControl<'_>,
    work: &mut dyn FnMut(TimedPart) -> Result<()>,
) -> Result<KernelTime> {
    let tutorial = gpu.tutorial();
    let timer = tutorial.device().timer()?;
    // Warm-up: the first launch of a module pays for loading it.
    work(TimedPart::Upload)?;
    work(TimedPart::Kernel)?;
    tutorial.device().synchronize()?;
    let launches = launches_per_timing(&timer, &mut || work(TimedPart::Kernel))?;
    let progress = PhaseProgress::new(control, RunPhase::GpuDeviceResident, u64::from(repeats));
    let measured = time_device_resident(
        tutorial,
        &timer,
        repeats,
        launches,
        &progress,
        work,
        &mut || progress.advance(1),
    )?;
    Ok(KernelTime {
        per_launch: measured.events,
        wall: measured.wall,
        launches_per_timing: measured.launches_per_timing,
    })
}

/// Launches a kernel on (stream, device inputs, device output).
pub(crate) type LaunchArrays<'a, T> =
    dyn Fn(&Arc<CudaStream>, &[CudaSlice<T>], &mut CudaSlice<T>) -> Result<()> + 'a;

/// What [`time_with_host_arrays`] measured, and the output of its last run.
pub(crate) struct HostArraysRun<T> {
    pub(crate) output: Vec<T>,
    pub(crate) host_arrays: GpuHostArraysTimings,
    pub(crate) device_resident: KernelTime,
}

/// Times a kernel over `inputs` with pageable host arrays (upload, kernel, download, each
/// between CUDA events), then with the arrays left on the device (kernel only); one untimed
/// warm-up first. `what` names the run for a memory message.
pub(crate) fn time_with_host_arrays<T>(
    gpu: &BasicsGpu,
    what: &str,
    inputs: &[&[T]],
    output_len: usize,
    repeats: u32,
    control: RunControl<'_>,
    launch: &LaunchArrays<'_, T>,
) -> Result<HostArraysRun<T>>
where
    T: DeviceRepr + ValidAsZeroBits + Clone + Default,
{
    let tutorial = gpu.tutorial();
    let element = std::mem::size_of::<T>();
    let input_elements: usize = inputs.iter().map(|input| input.len()).sum();
    tutorial.ensure_memory(what, (input_elements + output_len).saturating_mul(element))?;
    let device = tutorial.device();
    let stream = device.stream().clone();
    let mut device_inputs = inputs
        .iter()
        .map(|input| {
            stream
                .alloc_zeros::<T>(input.len())
                .map_err(driver_error("allocating a GPU input array"))
        })
        .collect::<Result<Vec<_>>>()?;
    let mut device_output = stream
        .alloc_zeros::<T>(output_len)
        .map_err(driver_error("allocating the GPU output array"))?;
    let mut output = crate::memory::try_filled_vec(what, output_len, T::default())?;
    let timer = device.timer()?;
    let mut run = |part: TimedPart| -> Result<()> {
        match part {
            TimedPart::Upload => {
                for (host, array) in inputs.iter().zip(device_inputs.iter_mut()) {
                    stream
                        .memcpy_htod(*host, array)
                        .map_err(driver_error("uploading an input array"))?;
                }
                Ok(())
            }
            TimedPart::Kernel => launch(&stream, &device_inputs, &mut device_output),
            TimedPart::Download => stream
                .memcpy_dtoh(&device_output, output.as_mut_slice())
                .map_err(driver_error("downloading the output array")),
        }
    };
    for part in [TimedPart::Upload, TimedPart::Kernel, TimedPart::Download] {
        run(part)?;
    }
    device.synchronize()?;
    let progress = PhaseProgress::new(control, RunPhase::GpuHostArrays, u64::from(repeats));
    let host_arrays = time_host_arrays(&timer, repeats, &progress, &mut run, &mut || {
        progress.advance(1)
    })?;
    device.synchronize()?;
    let device_resident = time_kernel(gpu, repeats, control, &mut || {
        launch(&stream, &device_inputs, &mut device_output)
    })?;
    Ok(HostArraysRun {
        output,
        host_arrays,
        device_resident,
    })
}
