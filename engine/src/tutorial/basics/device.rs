//! The device (seed `003_...`'s `cuda.get_current_device()`): name, compute capability,
//! streaming multiprocessors and CUDA cores (the notebook's table of cores per SM, extended to
//! the architectures after it), clocks and memory; the peak bandwidth and FLOP/s these imply,
//! against copies measured on the device.

use cudarc::driver::sys::CUdevice_attribute as Attribute;

use super::super::TimingStats;
use super::BasicsGpu;
use crate::compute::cuda::driver_error;
use crate::error::Result;

/// Bytes of the measured copies.
const COPY_BYTES: usize = 256 << 20;
/// Timed copies of each kind.
const COPY_REPEATS: usize = 10;

/// The notebook's `cores_per_capability`: FP32 cores per SM for the compute capabilities it
/// knows (3.x, 5.x, 6.x, 7.x); `None` for the others, as its function returns `None`.
pub fn notebook_cores_per_sm(capability: (i32, i32)) -> Option<u32> {
    match capability {
        (3, _) => Some(192),
        (5, _) => Some(128),
        (6, 0) => Some(64),
        (6, _) => Some(128),
        (7, _) => Some(64),
        _ => None,
    }
}

/// FP32 cores per SM: the notebook's table, and for later architectures NVIDIA's figures
/// (Ampere A100 8.0: 64; Ampere and Ada 8.6 to 8.9: 128; Hopper 9.0: 128; Blackwell 10.x and
/// 12.x: 128).
pub fn cores_per_sm(capability: (i32, i32)) -> Option<u32> {
    notebook_cores_per_sm(capability).or(match capability {
        (8, 0) => Some(64),
        (8, _) | (9, _) | (10, _) | (11, _) | (12, _) => Some(128),
        _ => None,
    })
}

/// The device's figures.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct DeviceReport {
    /// Model name.
    pub name: String,
    /// Compute capability (major, minor).
    pub compute_capability: (i32, i32),
    /// Streaming multiprocessors.
    pub multiprocessors: u32,
    /// What the notebook's table gives for cores per SM (`None`: a capability it does not know).
    pub notebook_cores_per_sm: Option<u32>,
    /// FP32 cores per SM (the table extended).
    pub cores_per_sm: Option<u32>,
    /// All FP32 cores.
    pub cores: Option<u32>,
    /// Core clock in MHz (the driver's figure; `None` where it gives none).
    pub clock_mhz: Option<f64>,
    /// Memory clock in MHz.
    pub memory_clock_mhz: Option<f64>,
    /// Memory bus width in bits.
    pub memory_bus_bits: Option<u32>,
    /// Device memory in bytes.
    pub memory_bytes: u64,
    /// L2 cache in bytes.
    pub l2_bytes: Option<u64>,
    /// 2 x memory clock x bus width (double data rate), bytes per second.
    pub peak_bandwidth: Option<f64>,
    /// cores x 2 (a fused multiply-add) x clock, FP32 operations per second.
    pub peak_fp32_flops: Option<f64>,
    /// A device-to-device copy of [`COPY_BYTES`] (read + write bytes over time), bytes/s.
    pub device_copy_bandwidth: f64,
    /// The device-to-device copy's times.
    pub device_copy: TimingStats,
    /// Host-to-device from pageable memory, bytes/s.
    pub upload_pageable_bandwidth: f64,
    /// Host-to-device from page-locked memory, bytes/s (`None` where none could be had).
    pub upload_pinned_bandwidth: Option<f64>,
}

impl DeviceReport {
    /// The measured device copy as a fraction of the peak bandwidth.
    pub fn copy_fraction_of_peak(&self) -> Option<f64> {
        self.peak_bandwidth
            .map(|peak| self.device_copy_bandwidth / peak)
    }
}

/// Reads the device's attributes and measures its copies.
pub fn run(gpu: &BasicsGpu) -> Result<DeviceReport> {
    let tutorial = gpu.tutorial();
    let device = tutorial.device();
    let context = device.context();
    // Clocks are deprecated attributes in recent CUDA: a driver that refuses one gives none.
    let attribute = |which: Attribute| -> Option<i64> {
        match context.attribute(which) {
            Ok(value) => Some(i64::from(value)),
            Err(error) => {
                log::info!("device attribute {which:?} not available: {error}");
                None
            }
        }
    };
    let capability = device.compute_capability();
    let multiprocessors = tutorial.multiprocessors();
    let clock_mhz =
        attribute(Attribute::CU_DEVICE_ATTRIBUTE_CLOCK_RATE).map(|khz| khz as f64 / 1e3);
    let memory_clock_mhz =
        attribute(Attribute::CU_DEVICE_ATTRIBUTE_MEMORY_CLOCK_RATE).map(|khz| khz as f64 / 1e3);
    let memory_bus_bits = attribute(Attribute::CU_DEVICE_ATTRIBUTE_GLOBAL_MEMORY_BUS_WIDTH)
        .and_then(|bits| u32::try_from(bits).ok());
    let l2_bytes = attribute(Attribute::CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE)
        .and_then(|bytes| u64::try_from(bytes).ok());
    let memory_bytes = context
        .total_mem()
        .map_err(driver_error("querying the memory size"))? as u64;
    let per_sm = cores_per_sm(capability);
    let cores = per_sm.map(|per_sm| per_sm * multiprocessors);
    let peak_bandwidth = memory_clock_mhz
        .zip(memory_bus_bits)
        .map(|(mhz, bits)| 2.0 * mhz * 1e6 * f64::from(bits) / 8.0);
    let peak_fp32_flops = cores
        .zip(clock_mhz)
        .map(|(cores, mhz)| f64::from(cores) * 2.0 * mhz * 1e6);
    let (device_copy, upload_pageable, upload_pinned) = measure_copies(gpu)?;
    Ok(DeviceReport {
        name: gpu.name().to_string(),
        compute_capability: capability,
        multiprocessors,
        notebook_cores_per_sm: notebook_cores_per_sm(capability),
        cores_per_sm: per_sm,
        cores,
        clock_mhz,
        memory_clock_mhz,
        memory_bus_bits,
        memory_bytes,
        l2_bytes,
        peak_bandwidth,
        peak_fp32_flops,
        device_copy_bandwidth: 2.0 * COPY_BYTES as f64 / device_copy.mean_s.max(1e-12),
        device_copy,
        upload_pageable_bandwidth: COPY_BYTES as f64 / upload_pageable.mean_s.max(1e-12),
        upload_pinned_bandwidth: upload_pinned
            .map(|stats| COPY_BYTES as f64 / stats.mean_s.max(1e-12)),
    })
}

/// Times a device-to-device copy and uploads from pageable and page-locked memory, each of
/// [`COPY_BYTES`], after one untimed copy of each.
fn measure_copies(gpu: &BasicsGpu) -> Result<(TimingStats, TimingStats, Option<TimingStats>)> {
    let tutorial = gpu.tutorial();
    let floats = COPY_BYTES / 4;
    tutorial.ensure_memory("the copy test", 2 * COPY_BYTES)?;
    crate::memory::ensure_host_memory("the copy test", COPY_BYTES)?;
    let device = tutorial.device();
    let stream = device.stream().clone();
    let source = stream
        .alloc_zeros::<f32>(floats)
        .map_err(driver_error("allocating the copy's source"))?;
    let mut target = stream
        .alloc_zeros::<f32>(floats)
        .map_err(driver_error("allocating the copy's target"))?;
    let host = crate::memory::try_filled_vec("the copy test", floats, 1.0f32)?;
    let timer = device.timer()?;
    let time = |copy: &mut dyn FnMut() -> Result<()>| -> Result<TimingStats> {
        copy()?;
        device.synchronize()?;
        let mut runs = Vec::with_capacity(COPY_REPEATS);
        for _ in 0..COPY_REPEATS {
            timer.start()?;
            copy()?;
            runs.push(timer.stop()?.as_secs_f64());
        }
        Ok(TimingStats::from_runs(runs))
    };
    let device_copy = time(&mut || {
        stream
            .memcpy_dtod(&source, &mut target)
            .map_err(driver_error("copying on the device"))
    })?;
    let pageable = time(&mut || {
        stream
            .memcpy_htod(host.as_slice(), &mut target)
            .map_err(driver_error("uploading"))
    })?;
    let pinned = match tutorial.pinned_buffers("the copy test", 1, floats) {
        Ok(mut pool) => match pool.first_mut() {
            Some(buffer) => {
                let values = &mut buffer
                    .as_mut_slice()
                    .map_err(driver_error("waiting for a page-locked array"))?[..floats];
                // The pool's memory starts uninitialised: written before it is read.
                values.fill(1.0);
                let values: &[f32] = values;
                Some(time(&mut || {
                    stream
                        .memcpy_htod(values, &mut target)
                        .map_err(driver_error("uploading from page-locked memory"))
                })?)
            }
            None => None,
        },
        Err(error) => {
            log::warn!("no page-locked upload measured: {error}");
            None
        }
    };
    Ok((device_copy, pageable, pinned))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cores_follow_the_notebooks_table_and_extend_it() {
        assert_eq!(notebook_cores_per_sm((6, 1)), Some(128));
        assert_eq!(notebook_cores_per_sm((6, 0)), Some(64));
        assert_eq!(notebook_cores_per_sm((9, 0)), None);
        assert_eq!(cores_per_sm((9, 0)), Some(128));
        assert_eq!(cores_per_sm((8, 0)), Some(64));
        assert_eq!(cores_per_sm((7, 5)), Some(64));
        assert_eq!(cores_per_sm((2, 0)), None);
    }
}
