//! The display path on the GPU: the field or its Laplacian reduced to the shown size on the
//! device, its statistics, and the timing of each stage (`heatlab bench --display`).

use std::sync::Arc;
use std::time::{Duration, Instant};

use cudarc::driver::{
    CudaContext, CudaFunction, CudaModule, CudaSlice, CudaStream, LaunchConfig, PinnedHostSlice,
    PushKernelArg,
};

use super::per_boundary::{base, BoundaryKernels};
use super::{dims, driver_error, CudaBackend, CudaDevice};
use crate::compute::preview::{reduced_size, reduction_factor, Layer, PreviewSpec, ReducedPreview};
use crate::compute::FieldStats;
use crate::error::{HeatlabError, Result};
use crate::grid::{Boundary, Grid, GridSize, RowSpan};

/// Blocks and threads per block of `field_stats` (kernels/display.cu): fixed, so that a field
/// always gives the same total.
const STATS_BLOCKS: usize = 528;
const STATS_THREADS: u32 = 256;

/// Device buffers of the display path, kept between frames: a preview is asked for twice per
/// frame, and allocating, uploading the colormap and freeing each time cost more than the
/// kernels. They grow when a larger preview is asked for and never shrink.
#[derive(Default)]
pub(super) struct PreviewBuffers {
    values: Option<CudaSlice<f32>>,
    /// Page-locked host copy of `values`: a copy from the device into it runs at the bus's
    /// speed, where one into pageable memory is staged by the driver.
    values_host: Option<PinnedHostSlice<f32>>,
    /// Partial sums, minima and maxima of the statistics kernel, on the device and pinned.
    stats: Option<CudaSlice<f64>>,
    stats_host: Option<PinnedHostSlice<f64>>,
}

/// `slot` holding at least `len` page-locked elements, reallocated only when it is too small.
pub(super) fn pinned_of_at_least<'a, T: cudarc::driver::DeviceRepr>(
    slot: &'a mut Option<PinnedHostSlice<T>>,
    len: usize,
    context: &Arc<CudaContext>,
) -> Result<&'a mut PinnedHostSlice<T>> {
    if slot.as_ref().is_none_or(|buffer| buffer.len() < len) {
        *slot = None;
        // SAFETY: the memory is uninitialised until a copy from the device fills it; it is
        // read only after such a copy (of at least the part read). No write-combining flag:
        // the host reads these buffers, and reads of write-combined memory are uncached.
        let buffer = unsafe { context.alloc_pinned_with_flags::<T>(len, 0) }
            .map_err(driver_error("allocating page-locked memory"))?;
        *slot = Some(buffer);
    }
    slot.as_mut()
        .ok_or_else(|| HeatlabError::Internal("no page-locked buffer".into()))
}

/// `slot` holding at least `len` elements, reallocated only when it is too small.
pub(super) fn buffer_of_at_least<
    'a,
    T: cudarc::driver::DeviceRepr + cudarc::driver::ValidAsZeroBits,
>(
    slot: &'a mut Option<CudaSlice<T>>,
    len: usize,
    stream: &Arc<CudaStream>,
) -> Result<&'a mut CudaSlice<T>> {
    if slot.as_ref().is_none_or(|buffer| buffer.len() < len) {
        // Free the old buffer before allocating its replacement.
        *slot = None;
        *slot = Some(
            stream
                .alloc_zeros::<T>(len)
                .map_err(driver_error("allocating the preview"))?,
        );
    }
    slot.as_mut()
        .ok_or_else(|| HeatlabError::Internal("no preview buffer".into()))
}

/// Output pixels per block of the block-mean kernels, and threads per block: a summing warp
/// and four staging ones (`MEAN_PIXELS`, `MEAN_THREADS` in kernels/display.cu).
const MEAN_PIXELS: usize = 32;
const MEAN_THREADS: u32 = 160;

/// The block-mean kernels of kernels/display.cu: the field's, and its Laplacian's under each
/// boundary (each cell's Laplacian computed as it is read, so none is written).
pub(super) struct BlockMeanKernels {
    field: CudaFunction,
    laplacian: BoundaryKernels,
}

impl BlockMeanKernels {
    /// Looks the kernels up in the compiled display module.
    pub(super) fn load(device: &CudaDevice, display: &Arc<CudaModule>) -> Result<Self> {
        let load = |name: &str| device.function(display, name);
        Ok(Self {
            field: load("block_mean_field")?,
            laplacian: BoundaryKernels::load(device, display, base::BLOCK_MEAN_LAPLACIAN)?,
        })
    }

    /// The kernel that reduces `layer` (the Laplacian under `boundary`).
    fn of(&self, layer: Layer, boundary: Boundary) -> &CudaFunction {
        match layer {
            Layer::Field => &self.field,
            Layer::Laplacian => &self.laplacian[boundary],
        }
    }
}

/// Launches the block-mean kernel of `layer` (kernels/display.cu): the means of the field of
/// `size` in `field`, or of its Laplacian under `boundary`, over blocks of `factor` x `factor`
/// cells, into the first cells of `out`.
pub(super) fn launch_block_mean_on(
    stream: &Arc<CudaStream>,
    kernels: &BlockMeanKernels,
    (layer, boundary): (Layer, Boundary),
    field: &CudaSlice<f32>,
    size: GridSize,
    factor: usize,
    out: &mut CudaSlice<f32>,
) -> Result<()> {
    let reduced = reduced_size(size, factor);
    if out.len() < reduced.cells() || field.len() < size.cells() {
        return Err(HeatlabError::Internal(
            "the preview's buffers are too small".into(),
        ));
    }
    let (rows, cols) = dims(size)?;
    let (out_rows, out_cols) = dims(reduced)?;
    let too_large = || HeatlabError::Unsupported("reduction factor too large".into());
    // The kernel's columns of a block's pixels, up to MEAN_PIXELS factors past the last
    // pixel's first, are ints.
    let columns_fit = factor
        .checked_mul(MEAN_PIXELS)
        .and_then(|span| span.checked_add(size.cols))
        .is_some_and(|end| i32::try_from(end).is_ok());
    let factor_arg = i32::try_from(factor)
        .ok()
        .filter(|_| columns_fit)
        .ok_or_else(too_large)?;
    let blocks = reduced
        .rows
        .checked_mul(reduced.cols.div_ceil(MEAN_PIXELS))
        .and_then(|blocks| u32::try_from(blocks).ok())
        .filter(|&blocks| blocks < 1 << 31)
        .ok_or_else(too_large)?;
    let config = LaunchConfig {
        grid_dim: (blocks, 1, 1),
        block_dim: (MEAN_THREADS, 1, 1),
        shared_mem_bytes: 0,
    };
    let mut launch = stream.launch_builder(kernels.of(layer, boundary));
    launch
        .arg(field)
        .arg(out)
        .arg(&rows)
        .arg(&cols)
        .arg(&factor_arg)
        .arg(&out_rows)
        .arg(&out_cols);
    // SAFETY: block_mean_*(const float* f, float* out, int rows, int cols, int factor,
    // int out_rows, int out_cols): `field` holds rows*cols floats, `out` at least
    // out_rows*out_cols = ceil(rows/factor)*ceil(cols/factor) (checked above); one block of
    // MEAN_THREADS threads per MEAN_PIXELS pixels of an output row, as the kernel's static
    // shared buffers assume; a block's columns fit an int (checked above).
    unsafe { launch.launch(config) }.map_err(driver_error("launching block_mean"))?;
    Ok(())
}

/// One call of the display path, timed on its own (`heatlab bench --display`).
#[derive(Debug, Clone)]
pub struct StageTiming {
    /// The layer being drawn.
    pub layer: Layer,
    /// What the call does.
    pub stage: &'static str,
    /// Host time of the call, from its start until the GPU finished it.
    pub host: Duration,
    /// GPU time between events around it.
    pub device: Duration,
}

impl CudaBackend {
    /// Launches the means of `layer` (the Laplacian under `boundary`) over blocks of `factor` x
    /// `factor` cells into the preview's values buffer (`reduced` of them).
    fn launch_block_mean(
        &mut self,
        layer: (Layer, Boundary),
        factor: usize,
        reduced: GridSize,
    ) -> Result<()> {
        let stream = self.device.stream().clone();
        let Some(buffers) = self.buffers.as_ref() else {
            return Err(HeatlabError::NoField);
        };
        let values_dev = buffer_of_at_least(&mut self.preview.values, reduced.cells(), &stream)?;
        launch_block_mean_on(
            &stream,
            &self.kernels.block_mean,
            layer,
            &buffers.current,
            buffers.size,
            factor,
            values_dev,
        )
    }

    /// Downloads the first `pixels` values of the preview's values buffer into its page-locked
    /// host buffer, and waits for the copy.
    fn download_block_means(&mut self, pixels: usize) -> Result<()> {
        let stream = self.device.stream().clone();
        let PreviewBuffers {
            values,
            values_host,
            ..
        } = &mut self.preview;
        let values_dev = values
            .as_ref()
            .filter(|buffer| buffer.len() >= pixels)
            .ok_or_else(|| HeatlabError::Internal("the preview's values are missing".into()))?;
        let host = pinned_of_at_least(values_host, pixels, self.device.context())?;
        stream
            .memcpy_dtoh(&values_dev.slice(..pixels), host)
            .map_err(driver_error("downloading the preview"))?;
        // Event tracking is off in this context (see `CudaDevice::open`), so the pinned
        // slice's own event is never recorded: wait for the stream before reading it.
        stream
            .synchronize()
            .map_err(driver_error("downloading the preview"))
    }

    /// The downloaded block means (see [`Self::download_block_means`]) copied out of the
    /// page-locked buffer into `storage`, reused when it is large enough: a new megabyte per
    /// preview cost page faults, which were most of this copy's time.
    fn copy_out_block_means(&self, reduced: GridSize, mut storage: Vec<f32>) -> Result<Grid> {
        let pixels = reduced.cells();
        let copied = self
            .preview
            .values_host
            .as_ref()
            .filter(|buffer| buffer.len() >= pixels)
            .ok_or_else(|| HeatlabError::Internal("the preview's means are missing".into()))?
            .as_slice()
            .map_err(driver_error("downloading the preview"))?;
        storage.clear();
        storage.extend_from_slice(&copied[..pixels]);
        Grid::from_vec(reduced, storage)
    }

    /// Ends the timing of an advance: waits and returns its time, or, while `start_advance`
    /// --display`): every stage then waits for the GPU before and after, so the figures are
    /// the stages' own, not a frame's.
    pub fn profile_display(&mut self, on: bool) -> Result<()> {
        self.stage_profile = if on {
            Some((self.device.timer()?, Vec::new()))
        } else {
            None
        };
        Ok(())
    }

    /// The stages timed since the last call (see [`Self::profile_display`]).
    pub fn take_display_profile(&mut self) -> Vec<StageTiming> {
        self.stage_profile
            .as_mut()
            .map(|(_, log)| std::mem::take(log))
            .unwrap_or_default()
    }

    /// Runs `work` as the display stage `stage` of `layer`, timed when profiling.
    fn stage<T>(
        &mut self,
        layer: Layer,
        stage: &'static str,
        work: impl FnOnce(&mut Self) -> Result<T>,
    ) -> Result<T> {
        let Some((timer, mut log)) = self.stage_profile.take() else {
            return work(self);
        };
        let timed = (|| {
            self.device.synchronize()?;
            let host = Instant::now();
            timer.start()?;
            let value = work(self)?;
            let device = timer.stop()?;
            Ok((value, host.elapsed(), device))
        })();
        let result = timed.map(|(value, host, device)| {
            log.push(StageTiming {
                layer,
                stage,
                host,
                device,
            });
            value
        });
        self.stage_profile = Some((timer, log));
        result
    }

    /// Times `repeats` device-to-device copies of the field (a read and a write of every cell),
    /// the bandwidth a single-step kernel is measured against.
    /// Total heat, minimum and maximum of the held field, reduced on the device.
    pub(super) fn statistics_on_device(&mut self, rows: RowSpan) -> Result<FieldStats> {
        let stream = self.device.stream().clone();
        let function = self.kernels.field_stats.clone();
        let buffers = self.buffers.as_ref().ok_or(HeatlabError::NoField)?;
        let span = crate::compute::brush::row_range(
            buffers.size,
            rows.first,
            rows.count * buffers.size.cols,
        )?;
        let cells = i64::try_from(span.len())
            .map_err(|_| HeatlabError::Unsupported("field too large".into()))?;
        let values = buffers.current.slice(span);
        let PreviewBuffers {
            stats, stats_host, ..
        } = &mut self.preview;
        let partial_dev = buffer_of_at_least(stats, 3 * STATS_BLOCKS, &stream)?;
        let config = LaunchConfig {
            grid_dim: (STATS_BLOCKS as u32, 1, 1),
            block_dim: (STATS_THREADS, 1, 1),
            shared_mem_bytes: 0,
        };
        let mut launch = stream.launch_builder(&function);
        launch.arg(&values).arg(&cells).arg(&mut *partial_dev);
        // SAFETY: field_stats(const float* field, long long n, double* partial): the rows
        // given (a checked range of the field) hold n floats, partial at least 3 * STATS_BLOCKS doubles; the grid is STATS_BLOCKS
        // blocks of STATS_THREADS threads, as the kernel's shared arrays assume.
        unsafe { launch.launch(config) }.map_err(driver_error("launching field_stats"))?;
        let host = pinned_of_at_least(stats_host, 3 * STATS_BLOCKS, self.device.context())?;
        stream
            .memcpy_dtoh(&partial_dev.slice(..3 * STATS_BLOCKS), host)
            .map_err(driver_error("downloading the statistics"))?;
        // As in `download_block_means`: the pinned slice's event is not recorded here.
        stream
            .synchronize()
            .map_err(driver_error("downloading the statistics"))?;
        let partial = host
            .as_slice()
            .map_err(driver_error("downloading the statistics"))?;
        let mut combined = FieldStats {
            total: 0.0,
            min: f32::INFINITY,
            max: f32::NEG_INFINITY,
        };
        for block in partial[..3 * STATS_BLOCKS].chunks_exact(3) {
            combined.total += block[0];
            combined.min = combined.min.min(block[1] as f32);
            combined.max = combined.max.max(block[2] as f32);
        }
        Ok(combined)
    }

    /// The field or its Laplacian reduced to fit `spec.max_size` on the device; only the
    /// reduced values cross to the host.
    pub(super) fn reduce_preview_on_device(
        &mut self,
        spec: &PreviewSpec<'_>,
        storage: Vec<f32>,
    ) -> Result<ReducedPreview> {
        let layer = spec.layer;
        let size = self.buffers.as_ref().ok_or(HeatlabError::NoField)?.size;
        let factor = reduction_factor(size, spec.max_size);
        let reduced = reduced_size(size, factor);
        let stage = match layer {
            Layer::Field => "block-mean kernel",
            Layer::Laplacian => "Laplacian block-mean kernel (fused)",
        };
        self.stage(layer, stage, |s| {
            s.launch_block_mean((layer, spec.boundary), factor, reduced)
        })?;
        self.stage(layer, "download means", |s| {
            s.download_block_means(reduced.cells())
        })?;
        let values = self.stage(layer, "copy means out (host)", |s| {
            s.copy_out_block_means(reduced, storage)
        })?;
        Ok(ReducedPreview { factor, values })
    }
}

impl CudaBackend {
    /// Device time of `repeats` copies of the field on the GPU: the memory bandwidth the
    /// stepping kernels are compared with (`heatlab bench`).
    pub fn time_field_copy(&mut self, repeats: u64) -> Result<Duration> {
        self.settle()?;
        self.lookahead = None;
        let stream = self.device.stream().clone();
        let buffers = self.buffers.as_mut().ok_or(HeatlabError::NoField)?;
        let super::FieldBuffers { current, next, .. } = buffers;
        let (current, next) = (&*current, next);
        self.timer.start()?;
        for _ in 0..repeats {
            stream
                .memcpy_dtod(current, next)
                .map_err(driver_error("copying the field on the GPU"))?;
        }
        self.timer.stop()
    }
}
