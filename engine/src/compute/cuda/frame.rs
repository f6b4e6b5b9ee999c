//! A frame's two previews on the GPU at once: both layers reduced to the shown size, each
//! view's colour range picked where its means are (`kernels/frame_range.cu`: min-max or a
//! percentile pair, exactly as the host picks them), and both copied into page-locked memory,
//! each behind an event (the first view is copied out while the GPU works on the second). The path one preview at a time ([`CudaBackend::reduce_preview_on_device`])
//! waits once per layer and leaves the ranges to the host, which cost more than the GPU's part.

use std::sync::Arc;

use cudarc::driver::sys::CUevent_flags;
use cudarc::driver::{CudaEvent, CudaFunction, CudaSlice, CudaStream, LaunchConfig, PushKernelArg};
use rayon::prelude::*;

use super::display::{buffer_of_at_least, launch_block_mean_on, pinned_of_at_least};
use super::{driver_error, CudaBackend, CudaDevice};
use crate::compute::preview::{
    reduced_size, reduction_factor, PreviewSpec, RangedPreview, ReducedPreview,
};
use crate::error::{HeatlabError, Result};
use crate::grid::{Grid, RangeMode, ValueRange};

/// The range kernels' source.
pub const FRAME_RANGE_SOURCE: &str = include_str!("../../../../kernels/frame_range.cu");

/// 32-bit words of `RangeState` (kernels/frame_range.cu): count, two keys, four prefixes,
/// four ranks and four histograms of 256 bins.
const STATE_WORDS: usize = 3 + 4 + 4 + 4 * 256;
/// Threads per block of the scan and histogram kernels (`RANGE_THREADS`), and of the pick
/// (`RANGE_BINS`).
const RANGE_THREADS: u32 = 256;
/// At most this many blocks scan the means (a 512 x 512 preview: 256 blocks of 4 values a
/// thread).
const RANGE_BLOCKS: u32 = 264;
/// The radix select's passes: 8 bits each, from the top.
const SHIFTS: [i32; 4] = [24, 16, 8, 0];

struct RangeKernels {
    scan: CudaFunction,
    ranks: CudaFunction,
    histogram: CudaFunction,
    pick: CudaFunction,
    finish: CudaFunction,
}

impl RangeKernels {
    fn load(device: &CudaDevice) -> Result<Self> {
        let module = device.load_kernels("frame_range.cu", FRAME_RANGE_SOURCE)?;
        let load = |name: &str| device.function(&module, name);
        Ok(Self {
            scan: load("range_scan")?,
            ranks: load("range_ranks")?,
            histogram: load("range_histogram")?,
            pick: load("range_pick")?,
            finish: load("range_finish")?,
        })
    }
}

/// One view's buffers: its means with the two numbers of its range behind them, on the device
/// and page-locked on the host, and the range's select state.
#[derive(Default)]
struct ViewBuffers {
    means: Option<CudaSlice<f32>>,
    means_host: Option<cudarc::driver::PinnedHostSlice<f32>>,
    state: Option<CudaSlice<u32>>,
    /// Recorded behind the view's copy when it is queued: what taking it waits for.
    done: Option<CudaEvent>,
}

/// Buffers and kernels of [`CudaBackend::reduce_previews_on_device`], kept between frames;
/// they grow when a larger preview is asked for.
#[derive(Default)]
pub(super) struct FrameBuffers {
    kernels: Option<RangeKernels>,
    views: [ViewBuffers; 2],
    /// The views queued and not yet taken: each one's reduction factor and whether its range
    /// was computed.
    queued: Option<[(usize, bool); 2]>,
}

/// The range the GPU picks for `mode`: `None` for a fixed range (nothing to compute) or
/// percentiles that are not numbers (left to the host).
fn device_range(mode: RangeMode) -> Option<(bool, f64, f64)> {
    match mode {
        RangeMode::MinMax => Some((false, 0.0, 0.0)),
        RangeMode::Percentile { low, high } if low.is_finite() && high.is_finite() => {
            // As `RangeMode::resolve` and `percentile_pair_finite_f32` order them.
            let (low, high) = (low.clamp(0.0, 100.0), high.clamp(0.0, 100.0));
            Some((true, low.min(high), low.max(high)))
        }
        RangeMode::Percentile { .. } | RangeMode::Fixed(_) => None,
    }
}

/// Queues the range of the first `pixels` values of `means` into the two floats behind them:
/// `percentile` false for min-max, true for the pair `low <= high`.
fn queue_range(
    stream: &Arc<CudaStream>,
    kernels: &RangeKernels,
    means: &mut CudaSlice<f32>,
    pixels: usize,
    state: &mut CudaSlice<u32>,
    (percentile, low, high): (bool, f64, f64),
) -> Result<()> {
    let launch_failed = driver_error("launching the preview's range");
    if means.len() < pixels + 2 || state.len() < STATE_WORDS {
        return Err(HeatlabError::Internal(
            "the range's buffers are too small".into(),
        ));
    }
    let n =
        i32::try_from(pixels).map_err(|_| HeatlabError::Unsupported("preview too large".into()))?;
    let blocks = (pixels as u32)
        .div_ceil(4 * RANGE_THREADS)
        .clamp(1, RANGE_BLOCKS);
    let spread = LaunchConfig {
        grid_dim: (blocks, 1, 1),
        block_dim: (RANGE_THREADS, 1, 1),
        shared_mem_bytes: 0,
    };
    let single = |threads: u32| LaunchConfig {
        grid_dim: (1, 1, 1),
        block_dim: (threads, 1, 1),
        shared_mem_bytes: 0,
    };
    stream.memset_zeros(state).map_err(&launch_failed)?;
    let mut launch = stream.launch_builder(&kernels.scan);
    launch.arg(&*means).arg(&n).arg(&mut *state);
    // SAFETY: range_scan(const float* values, int n, RangeState* state): `means` holds at
    // least n floats, `state` STATE_WORDS words (sizeof(RangeState)), zeroed just before.
    unsafe { launch.launch(spread) }.map_err(&launch_failed)?;
    if percentile {
        let mut launch = stream.launch_builder(&kernels.ranks);
        launch.arg(&mut *state).arg(&low).arg(&high);
        // SAFETY: range_ranks(RangeState* state, double low, double high): one thread writes
        // the state's ranks.
        unsafe { launch.launch(single(1)) }.map_err(&launch_failed)?;
        for shift in SHIFTS {
            let mut launch = stream.launch_builder(&kernels.histogram);
            launch.arg(&*means).arg(&n).arg(&mut *state).arg(&shift);
            // SAFETY: range_histogram(const float* values, int n, RangeState* state, int
            // shift): as range_scan; blocks of RANGE_THREADS threads, as its shared arrays
            // assume.
            unsafe { launch.launch(spread) }.map_err(&launch_failed)?;
            let mut launch = stream.launch_builder(&kernels.pick);
            launch.arg(&mut *state).arg(&shift);
            // SAFETY: range_pick(RangeState* state, int shift): one block of RANGE_BINS (256)
            // threads, one per bin.
            unsafe { launch.launch(single(RANGE_THREADS)) }.map_err(&launch_failed)?;
        }
    }
    let percentile_arg = i32::from(percentile);
    let mut out = means.slice_mut(pixels..pixels + 2);
    let mut launch = stream.launch_builder(&kernels.finish);
    launch
        .arg(&*state)
        .arg(&percentile_arg)
        .arg(&low)
        .arg(&high)
        .arg(&mut out);
    // SAFETY: range_finish(const RangeState* state, int percentile, double low, double high,
    // float* out): one thread writes out[0] and out[1], the two floats behind the means.
    unsafe { launch.launch(single(1)) }.map_err(&launch_failed)?;
    Ok(())
}

/// The first `pixels` values of `host` copied into `storage` (its allocation reused), in
/// chunks on rayon's threads.
fn copy_out(host: &[f32], pixels: usize, mut storage: Vec<f32>) -> Vec<f32> {
    const CHUNK: usize = 1 << 15;
    storage.resize(pixels, 0.0);
    storage
        .par_chunks_mut(CHUNK)
        .zip(host[..pixels].par_chunks(CHUNK))
        .for_each(|(out, values)| out.copy_from_slice(values));
    storage
}

impl CudaBackend {
    /// Queues view `index` of a frame: the means of its layer (the Laplacian's computed cell by
    /// cell as they are read, none written), its range when the GPU picks it, and the copy of
    /// both into page-locked memory. Returns the reduction factor and whether the range is
    /// computed.
    fn queue_view(&mut self, index: usize, spec: &PreviewSpec<'_>) -> Result<(usize, bool)> {
        let stream = self.device.stream().clone();
        let buffers = self.buffers.as_ref().ok_or(HeatlabError::NoField)?;
        let size = buffers.size;
        let factor = reduction_factor(size, spec.max_size);
        let pixels = reduced_size(size, factor).cells();
        let FrameBuffers { kernels, views, .. } = &mut self.frame;
        let view = views
            .get_mut(index)
            .ok_or_else(|| HeatlabError::Internal("a frame has two views".into()))?;
        let means = buffer_of_at_least(&mut view.means, pixels + 2, &stream)?;
        launch_block_mean_on(
            &stream,
            &self.kernels.block_mean,
            (spec.layer, spec.boundary),
            &buffers.current,
            size,
            factor,
            means,
        )?;
        let range = device_range(spec.range);
        if let Some(range) = range {
            if kernels.is_none() {
                *kernels = Some(RangeKernels::load(&self.device)?);
            }
            let kernels = kernels
                .as_ref()
                .ok_or_else(|| HeatlabError::Internal("no range kernels".into()))?;
            let state = buffer_of_at_least(&mut view.state, STATE_WORDS, &stream)?;
            queue_range(&stream, kernels, means, pixels, state, range)?;
        }
        let host = pinned_of_at_least(&mut view.means_host, pixels + 2, self.device.context())?;
        stream
            .memcpy_dtoh(&means.slice(..pixels + 2), host)
            .map_err(driver_error("downloading the preview"))?;
        Ok((factor, range.is_some()))
    }

    /// Both views of a frame reduced on the device, each with its range when the GPU picks
    /// it; one wait for the GPU, then the means copied out of page-locked memory into
    /// `storage` (allocations reused) on rayon's threads.
    pub(super) fn reduce_previews_on_device(
        &mut self,
        specs: [&PreviewSpec<'_>; 2],
        storage: [Vec<f32>; 2],
    ) -> Result<[RangedPreview; 2]> {
        self.queue_previews_on_device(specs)?;
        self.take_previews_from_device(storage)
    }

    /// Queues both views of a frame (see [`Self::reduce_previews_on_device`]) and marks the end
    /// of each with an event, so that work queued behind them (the next frame's steps) runs on
    /// while [`Self::take_previews_from_device`] waits for the views alone, and the first view
    /// is copied out while the GPU still works on the second.
    pub(super) fn queue_previews_on_device(&mut self, specs: [&PreviewSpec<'_>; 2]) -> Result<()> {
        self.frame.queued = None;
        let mut views = [(0, false); 2];
        for (index, spec) in specs.into_iter().enumerate() {
            views[index] = self.queue_view(index, spec)?;
            let slot = &mut self.frame.views[index].done;
            if slot.is_none() {
                let event = self
                    .device
                    .context()
                    .new_event(Some(CUevent_flags::CU_EVENT_DISABLE_TIMING))
                    .map_err(driver_error("creating the previews' event"))?;
                *slot = Some(event);
            }
            slot.as_ref()
                .ok_or_else(|| HeatlabError::Internal("no preview's event".into()))?
                .record(self.device.stream())
                .map_err(driver_error("queueing the previews"))?;
        }
        self.frame.queued = Some(views);
        Ok(())
    }

    /// The views queued by [`Self::queue_previews_on_device`]: for each in turn, a wait for its
    /// event, then its means copied out of page-locked memory into `storage` (allocations
    /// reused) on rayon's threads.
    pub(super) fn take_previews_from_device(
        &mut self,
        storage: [Vec<f32>; 2],
    ) -> Result<[RangedPreview; 2]> {
        let queued = self
            .frame
            .queued
            .take()
            .ok_or_else(|| HeatlabError::Internal("no previews are queued".into()))?;
        let size = self.buffers.as_ref().ok_or(HeatlabError::NoField)?.size;
        let mut taken = Vec::with_capacity(2);
        for ((index, view), storage) in self.frame.views.iter().enumerate().zip(storage) {
            view.done
                .as_ref()
                .ok_or_else(|| HeatlabError::Internal("no preview's event".into()))?
                .synchronize()
                .map_err(driver_error("downloading the previews"))?;
            // Event tracking is off in this context (see `CudaDevice::open`): the copy was
            // waited for just above.
            let host = view
                .means_host
                .as_ref()
                .ok_or_else(|| HeatlabError::Internal("the preview's means are missing".into()))?
                .as_slice()
                .map_err(driver_error("downloading the previews"))?;
            let (factor, ranged) = queued[index];
            let reduced = reduced_size(size, factor);
            let pixels = reduced.cells();
            let values = Grid::from_vec(reduced, copy_out(host, pixels, storage))?;
            let range = ranged.then(|| ValueRange {
                min: host[pixels],
                max: host[pixels + 1],
            });
            taken.push(RangedPreview {
                reduced: ReducedPreview { factor, values },
                range,
            });
        }
        let [first, second]: [RangedPreview; 2] = taken
            .try_into()
            .map_err(|_| HeatlabError::Internal("a frame has two views".into()))?;
        Ok([first, second])
    }
}
