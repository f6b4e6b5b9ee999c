//! The five versions a tutorial panel compares (CPU one thread, all threads, GPU with pageable
//! host arrays, GPU with pinned host arrays, GPU device-resident) and the parts of a run's
//! time, with their colours; and where in a sweep the GPU starts to win.

use std::fmt;

use eframe::egui::Color32;

use heatlab_engine::tutorial::{GpuHostArraysTimings, KernelRun, KernelTimings, TimingStats};

/// One of the five versions a panel compares.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Version {
    /// The CPU, one thread.
    CpuOneThread,
    /// The CPU, all threads.
    CpuAllThreads,
    /// The GPU with pageable host arrays (as NumPy's): upload + kernel + download.
    GpuHostArrays,
    /// The GPU with page-locked (pinned) host arrays: upload + kernel + download.
    GpuPinnedArrays,
    /// The GPU with the arrays already on the device: kernel only.
    GpuDeviceResident,
}

impl Version {
    /// Every version, in the order of the table.
    pub const ALL: [Self; 5] = [
        Self::CpuOneThread,
        Self::CpuAllThreads,
        Self::GpuHostArrays,
        Self::GpuPinnedArrays,
        Self::GpuDeviceResident,
    ];

    /// Whether it runs on the GPU.
    pub fn is_gpu(self) -> bool {
        matches!(
            self,
            Self::GpuHostArrays | Self::GpuPinnedArrays | Self::GpuDeviceResident
        )
    }

    /// The upload / kernel / download timings of a version that copies host arrays.
    fn host_arrays(self, timings: &KernelTimings) -> Option<&GpuHostArraysTimings> {
        match self {
            Self::GpuHostArrays => timings.gpu_host_arrays.as_ref(),
            Self::GpuPinnedArrays => timings.gpu_pinned_arrays.as_ref(),
            _ => None,
        }
    }

    /// The timings of this version per run (the whole upload + kernel + download for host
    /// arrays), if it ran.
    pub fn stats(self, timings: &KernelTimings) -> Option<&TimingStats> {
        match self {
            Self::CpuOneThread => timings.cpu_one_thread.as_ref(),
            Self::CpuAllThreads => timings.cpu_all_threads.as_ref(),
            Self::GpuHostArrays | Self::GpuPinnedArrays => {
                self.host_arrays(timings).map(|h| &h.total)
            }
            Self::GpuDeviceResident => timings.gpu_device_resident.as_ref(),
        }
    }

    /// Mean seconds of upload, kernel (or CPU compute) and download, if it ran.
    pub fn split(self, timings: &KernelTimings) -> Option<[f64; 3]> {
        match self {
            Self::GpuHostArrays | Self::GpuPinnedArrays => self
                .host_arrays(timings)
                .map(|h| [h.upload.mean_s, h.kernel.mean_s, h.download.mean_s]),
            _ => self.stats(timings).map(|s| [0.0, s.mean_s, 0.0]),
        }
    }

    /// The colour of its line in the sweep.
    pub fn color(self) -> Color32 {
        match self {
            Self::CpuOneThread => Color32::from_rgb(150, 150, 150),
            Self::CpuAllThreads => Color32::from_rgb(110, 190, 90),
            Self::GpuHostArrays => Color32::from_rgb(240, 150, 50),
            Self::GpuPinnedArrays => Color32::from_rgb(230, 205, 60),
            Self::GpuDeviceResident => Color32::from_rgb(225, 70, 70),
        }
    }

    /// A short name for the bars' axis.
    pub fn short(self) -> &'static str {
        match self {
            Self::CpuOneThread => "CPU 1 thread",
            Self::CpuAllThreads => "CPU all threads",
            Self::GpuHostArrays => "GPU pageable",
            Self::GpuPinnedArrays => "GPU pinned",
            Self::GpuDeviceResident => "GPU on device",
        }
    }
}

impl fmt::Display for Version {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::CpuOneThread => "CPU, one thread",
            Self::CpuAllThreads => "CPU, all threads",
            Self::GpuHostArrays => {
                "GPU, pageable host arrays as NumPy's (upload + kernel + download)"
            }
            Self::GpuPinnedArrays => {
                "GPU, pinned (page-locked) host arrays (upload + kernel + download)"
            }
            Self::GpuDeviceResident => "GPU, device-resident (kernel only)",
        })
    }
}

/// The parts of a run's time in the stacked bars.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Part {
    /// Copying the inputs to the GPU.
    Upload,
    /// The kernel (or the CPU loop).
    Compute,
    /// Copying the output back.
    Download,
}

impl Part {
    /// Every part, in the order they are stacked.
    pub const ALL: [Self; 3] = [Self::Upload, Self::Compute, Self::Download];

    /// Its colour.
    pub fn color(self) -> Color32 {
        match self {
            Self::Upload => Color32::from_rgb(170, 110, 230),
            Self::Compute => Color32::from_rgb(80, 150, 235),
            Self::Download => Color32::from_rgb(235, 120, 190),
        }
    }
}

impl fmt::Display for Part {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::Upload => "upload",
            Self::Compute => "kernel / compute",
            Self::Download => "download",
        })
    }
}

/// The smallest swept size from which `version` beats the best CPU version at every larger
/// swept size, if it ever does.
pub fn gpu_wins_from(sweep: &[KernelRun], version: Version) -> Option<u64> {
    let mut from = None;
    for run in sweep {
        let best_cpu = [Version::CpuOneThread, Version::CpuAllThreads]
            .iter()
            .filter_map(|v| v.stats(&run.timings).map(|s| s.mean_s))
            .fold(f64::INFINITY, f64::min);
        let gpu = version.stats(&run.timings).map(|s| s.mean_s)?;
        if !best_cpu.is_finite() {
            return None;
        }
        if gpu < best_cpu {
            from.get_or_insert(run.n);
        } else {
            from = None;
        }
    }
    from
}
