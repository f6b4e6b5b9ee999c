//! The jagged field generated on the GPU (`kernels/field.cu` with cuFFT): NumPy's PCG64 noise
//! drawn in parallel, float64 transforms as NumPy's, the radial filter, the cutoff and an exact
//! radix-select percentile, written straight into the backend's field. It equals
//! [`crate::field::generate_jagged`] up to the rounding of two different FFT algorithms
//! (the tests hold every cell to 1e-5 over seeds and sizes, against the CPU and the golden
//! files made by NumPy).

use std::sync::Arc;
use std::time::Duration;

use cudarc::cufft::{sys as cufft, CudaFft};
use cudarc::driver::{CudaFunction, CudaSlice, CudaStream, LaunchConfig, PushKernelArg};

use super::device::{driver_error, CudaDevice};
use super::{dims, FieldBuffers};
use crate::compute::DeviceFieldUnavailable;
use crate::error::{HeatlabError, Result};
use crate::field::numpy_rng::Pcg64Stream;
use crate::field::JaggedParams;
use crate::grid::percentile::LinearRanks;
use crate::grid::GridSize;

/// The field kernels' source, embedded.
pub const FIELD_SOURCE: &str = include_str!("../../../../kernels/field.cu");

/// Threads per block of every field kernel (`RADIX_THREADS` in the source: the histogram's
/// bins are one per thread).
const THREADS: u32 = 256;
/// Blocks of the grid-stride kernels: a few per SM is enough to stream at full bandwidth.
const MAX_BLOCKS: u32 = 2048;
/// Words of the select state (`SelectState` in kernels/field.cu).
const SELECT_WORDS: usize = 5;

struct FieldKernels {
    noise: CudaFunction,
    filter: CudaFunction,
    mask: CudaFunction,
    histogram: CudaFunction,
    pick: CudaFunction,
    min_above: CudaFunction,
    threshold: CudaFunction,
    keep: CudaFunction,
}

/// cuFFT's plans and the float64 buffers for one size, kept for the next generation of the
/// same size (dragging a parameter in the app regenerates many times).
struct SizedBuffers {
    size: GridSize,
    forward: CudaFft,
    inverse: CudaFft,
    real: CudaSlice<f64>,
    spectrum: CudaSlice<cufft::double2>,
}

/// Generates jagged fields on one device.
pub(super) struct FieldGenerator {
    kernels: FieldKernels,
    sized: Option<SizedBuffers>,
    select: CudaSlice<u64>,
    histogram: CudaSlice<u64>,
}

/// Why cuFFT cannot be used: missing, or the error it gave.
fn cufft_unavailable() -> Option<DeviceFieldUnavailable> {
    // SAFETY: this only tries to dlopen the library by its names; nothing is called through it.
    if unsafe { cufft::is_culib_present() } {
        None
    } else {
        Some(DeviceFieldUnavailable::CufftMissing)
    }
}

fn grid_stride(count: usize) -> LaunchConfig {
    let blocks = count
        .div_ceil(THREADS as usize)
        .clamp(1, MAX_BLOCKS as usize) as u32;
    LaunchConfig {
        grid_dim: (blocks, 1, 1),
        block_dim: (THREADS, 1, 1),
        shared_mem_bytes: 0,
    }
}

fn cufft_error(what: &'static str) -> impl Fn(cudarc::cufft::result::CufftError) -> HeatlabError {
    move |error| HeatlabError::Cuda {
        context: what.to_string(),
        message: format!("{:?}", error.0),
    }
}

impl FieldGenerator {
    /// Compiles the field kernels and checks that cuFFT loads.
    pub(super) fn new(device: &CudaDevice) -> std::result::Result<Self, DeviceFieldUnavailable> {
        if let Some(missing) = cufft_unavailable() {
            return Err(missing);
        }
        let failed = |error: HeatlabError| DeviceFieldUnavailable::Failed(error.to_string());
        let module = device
            .load_kernels("field.cu", FIELD_SOURCE)
            .map_err(failed)?;
        let load = |name: &str| device.function(&module, name).map_err(failed);
        let kernels = FieldKernels {
            noise: load("jagged_noise")?,
            filter: load("jagged_filter")?,
            mask: load("jagged_mask")?,
            histogram: load("radix_histogram")?,
            pick: load("radix_pick")?,
            min_above: load("radix_min_above")?,
            threshold: load("radix_threshold")?,
            keep: load("jagged_keep")?,
        };
        let stream = device.stream();
        let select = stream
            .alloc_zeros::<u64>(SELECT_WORDS)
            .map_err(|e| failed(driver_error("allocating the percentile's state")(e)))?;
        let histogram = stream
            .alloc_zeros::<u64>(256)
            .map_err(|e| failed(driver_error("allocating the percentile's histogram")(e)))?;
        Ok(Self {
            kernels,
            sized: None,
            select,
            histogram,
        })
    }

    /// Device bytes that generating a field of `size` needs beyond the field itself: the
    /// float64 field and half spectrum, and about as much again for cuFFT's work areas.
    pub(super) fn bytes_needed(size: GridSize) -> usize {
        let half = size.rows * (size.cols / 2 + 1);
        2 * (size.cells() * 8 + half * 16)
    }

    /// Frees the plans and buffers (another size is coming, or memory is needed).
    pub(super) fn release(&mut self) {
        self.sized = None;
    }

    fn sized_for(
        &mut self,
        size: GridSize,
        stream: &Arc<CudaStream>,
        free_bytes: usize,
    ) -> Result<&mut SizedBuffers> {
        if self.sized.as_ref().is_some_and(|sized| sized.size != size) {
            self.sized = None;
        }
        if self.sized.is_none() {
            crate::memory::ensure_gpu_memory(
                &format!("{size} field's generation (float64 field, spectrum, cuFFT plans)"),
                Self::bytes_needed(size),
                free_bytes,
            )?;
            let too_large =
                || HeatlabError::Unsupported(format!("{size} is too large for cuFFT's plans"));
            let rows = i32::try_from(size.rows).map_err(|_| too_large())?;
            let cols = i32::try_from(size.cols).map_err(|_| too_large())?;
            let forward = CudaFft::plan_2d(rows, cols, cufft::cufftType::CUFFT_D2Z, stream.clone())
                .map_err(cufft_error("planning the forward transform"))?;
            let inverse = CudaFft::plan_2d(rows, cols, cufft::cufftType::CUFFT_Z2D, stream.clone())
                .map_err(cufft_error("planning the inverse transform"))?;
            let real = stream
                .alloc_zeros::<f64>(size.cells())
                .map_err(driver_error("allocating the float64 field"))?;
            let spectrum = stream
                .alloc_zeros::<cufft::double2>(size.rows * (size.cols / 2 + 1))
                .map_err(driver_error("allocating the spectrum"))?;
            self.sized = Some(SizedBuffers {
                size,
                forward,
                inverse,
                real,
                spectrum,
            });
        }
        self.sized
            .as_mut()
            .ok_or_else(|| HeatlabError::Internal("no field buffers".into()))
    }

    /// Queues the generation of `params` into `field` (at least rows x cols float32 on
    /// `stream`). Nothing is waited for. `free_bytes` is the device memory free now, for the
    /// first generation of a size.
    pub(super) fn generate(
        &mut self,
        params: &JaggedParams,
        stream: &Arc<CudaStream>,
        free_bytes: usize,
        field: &mut CudaSlice<f32>,
    ) -> Result<()> {
        params.validate()?;
        let size = params.size;
        if field.len() < size.cells() {
            return Err(HeatlabError::Internal(
                "the field buffer is too small".into(),
            ));
        }
        self.sized_for(size, stream, free_bytes)?;
        let Self {
            kernels,
            sized,
            select,
            histogram,
        } = self;
        let sized = sized
            .as_mut()
            .ok_or_else(|| HeatlabError::Internal("no field buffers".into()))?;
        kernels.noise(stream, sized, params.seed)?;
        kernels.filter_spectrally(stream, sized, params)?;
        let ranks = LinearRanks::of(size.cells(), params.percentile);
        kernels.select_threshold(stream, sized, &ranks, select, histogram)?;
        kernels.keep(stream, sized, select, field)
    }
}

/// One launch per kernel entry point of `kernels/field.cu`, each with its contract.
impl FieldKernels {
    /// Fills the float64 field with NumPy's float32 draws, two per 64-bit word of the PCG64 stream.
    fn noise(&self, stream: &Arc<CudaStream>, sized: &mut SizedBuffers, seed: u64) -> Result<()> {
        let size = sized.size;
        let cells = size.cells() as i64;
        let rng = Pcg64Stream::new(seed);
        let noise_config = grid_stride(size.cells().div_ceil(2));
        let threads = u64::from(noise_config.grid_dim.0) * u64::from(THREADS);
        let (stride_multiplier, stride_plus) = rng.jump(threads);
        let halves = |value: u128| (value as u64, (value >> 64) as u64);
        let (state_lo, state_hi) = halves(rng.state);
        let (increment_lo, increment_hi) = halves(rng.increment);
        let (multiplier_lo, multiplier_hi) = halves(stride_multiplier);
        let (plus_lo, plus_hi) = halves(stride_plus);
        let mut launch = stream.launch_builder(&self.noise);
        launch
            .arg(&mut sized.real)
            .arg(&cells)
            .arg(&state_lo)
            .arg(&state_hi)
            .arg(&increment_lo)
            .arg(&increment_hi)
            .arg(&multiplier_lo)
            .arg(&multiplier_hi)
            .arg(&plus_lo)
            .arg(&plus_hi);
        // SAFETY: jagged_noise(double* noise, long long cells, 8 x unsigned long long): `real`
        // holds `cells` doubles; the kernel writes only indices below `cells`.
        unsafe { launch.launch(noise_config) }.map_err(driver_error("launching jagged_noise"))?;
        Ok(())
    }

    /// The forward transform, the radial filter, the inverse transform and the cutoff's mask.
    fn filter_spectrally(
        &self,
        stream: &Arc<CudaStream>,
        sized: &mut SizedBuffers,
        params: &JaggedParams,
    ) -> Result<()> {
        let size = sized.size;
        let (rows, cols) = (size.rows as i32, size.cols as i32);
        let half_cells = size.rows * (size.cols / 2 + 1);
        sized
            .forward
            .exec_d2z(&sized.real, &mut sized.spectrum)
            .map_err(cufft_error("running the forward transform"))?;

        let mut launch = stream.launch_builder(&self.filter);
        launch
            .arg(&mut sized.spectrum)
            .arg(&rows)
            .arg(&cols)
            .arg(&params.exponent);
        // SAFETY: jagged_filter(double2* spectrum, int rows, int cols, double exponent): the
        // spectrum holds rows * (cols/2 + 1) values, the kernel's bound.
        unsafe { launch.launch(grid_stride(half_cells)) }
            .map_err(driver_error("launching jagged_filter"))?;

        sized
            .inverse
            .exec_z2d(&mut sized.spectrum, &mut sized.real)
            .map_err(cufft_error("running the inverse transform"))?;

        let scale = 1.0 / (size.rows as f64 * size.cols as f64);
        let limit = params.cutoff * size.rows as f64;
        let mut launch = stream.launch_builder(&self.mask);
        launch
            .arg(&mut sized.real)
            .arg(&rows)
            .arg(&cols)
            .arg(&scale)
            .arg(&limit);
        // SAFETY: jagged_mask(double* field, int rows, int cols, double scale, double limit):
        // `real` holds rows * cols doubles, the kernel's bound.
        unsafe { launch.launch(grid_stride(size.cells())) }
            .map_err(driver_error("launching jagged_mask"))?;
        Ok(())
    }

    /// The percentile's threshold into `select` (the 5 words of `SelectState`): the order
    /// statistic at `previous_index` by eight radix passes over the 256 counters of
    /// `histogram`, then the next one and NumPy's interpolation, all on the device.
    fn select_threshold(
        &self,
        stream: &Arc<CudaStream>,
        sized: &SizedBuffers,
        ranks: &LinearRanks,
        select: &mut CudaSlice<u64>,
        histogram: &mut CudaSlice<u64>,
    ) -> Result<()> {
        let size = sized.size;
        let cells = size.cells() as i64;
        let initial_state: [u64; SELECT_WORDS] = [0, ranks.previous_index as u64, 0, u64::MAX, 0];
        stream
            .memcpy_htod(&initial_state, &mut *select)
            .map_err(driver_error("setting up the percentile"))?;
        stream
            .memset_zeros(&mut *histogram)
            .map_err(driver_error("setting up the percentile"))?;
        let single_block = LaunchConfig {
            grid_dim: (1, 1, 1),
            block_dim: (THREADS, 1, 1),
            shared_mem_bytes: 0,
        };
        for digit in (0..8).rev() {
            let shift: i32 = digit * 8;
            let mut launch = stream.launch_builder(&self.histogram);
            launch
                .arg(&sized.real)
                .arg(&cells)
                .arg(&*select)
                .arg(&shift)
                .arg(&mut *histogram);
            // SAFETY: radix_histogram(const double* values, long long count, const SelectState*
            // state, int shift, unsigned long long* histogram): `real` holds `cells` doubles,
            // `select` the 5 words of SelectState, `histogram` 256 counters; blocks are
            // THREADS = RADIX_THREADS = 256 threads, one per bin.
            unsafe { launch.launch(grid_stride(size.cells())) }
                .map_err(driver_error("launching radix_histogram"))?;
            let mut launch = stream.launch_builder(&self.pick);
            launch.arg(&mut *select).arg(&shift).arg(&mut *histogram);
            // SAFETY: radix_pick(SelectState* state, int shift, unsigned long long* histogram):
            // one block of 256 threads, one per counter of the 256-counter histogram.
            unsafe { launch.launch(single_block) }.map_err(driver_error("launching radix_pick"))?;
        }
        let has_next = i32::from(ranks.next_index != ranks.previous_index);
        if has_next != 0 {
            let mut launch = stream.launch_builder(&self.min_above);
            launch.arg(&sized.real).arg(&cells).arg(&mut *select);
            // SAFETY: radix_min_above(const double* values, long long count, SelectState*
            // state): `real` holds `cells` doubles; blocks are whole warps (256 threads).
            unsafe { launch.launch(grid_stride(size.cells())) }
                .map_err(driver_error("launching radix_min_above"))?;
        }
        let mut launch = stream.launch_builder(&self.threshold);
        launch.arg(&mut *select).arg(&has_next).arg(&ranks.gamma);
        // SAFETY: radix_threshold(SelectState* state, int has_next, double gamma): one thread
        // reads and writes the 5-word state.
        unsafe { launch.launch(LaunchConfig::for_num_elems(1)) }
            .map_err(driver_error("launching radix_threshold"))?;
        Ok(())
    }

    /// Writes into `field` the cells of `real` above the threshold in `select`.
    fn keep(
        &self,
        stream: &Arc<CudaStream>,
        sized: &SizedBuffers,
        select: &CudaSlice<u64>,
        field: &mut CudaSlice<f32>,
    ) -> Result<()> {
        let size = sized.size;
        let cells = size.cells() as i64;
        let mut launch = stream.launch_builder(&self.keep);
        launch.arg(&sized.real).arg(&cells).arg(select).arg(field);
        // SAFETY: jagged_keep(const double* values, long long count, const SelectState* state,
        // float* field): `real` holds `cells` doubles and `field` at least `cells` floats
        // (checked by `generate`).
        unsafe { launch.launch(grid_stride(size.cells())) }
            .map_err(driver_error("launching jagged_keep"))?;
        Ok(())
    }
}

impl super::CudaBackend {
    /// Generates the jagged field of `params` on the GPU and makes it the held field, with
    /// cuFFT; returns the GPU's time for it. Says why when it cannot (cuFFT missing, not
    /// enough memory, a CUDA error), and the caller generates on the CPU instead.
    pub fn generate_jagged_on_device(
        &mut self,
        params: &JaggedParams,
    ) -> std::result::Result<Duration, DeviceFieldUnavailable> {
        let failed = |error: HeatlabError| DeviceFieldUnavailable::Failed(error.to_string());
        if self.field_generator.is_none() {
            self.field_generator = Some(FieldGenerator::new(&self.device));
        }
        self.settle().map_err(failed)?;
        params.validate().map_err(failed)?;
        let size = params.size;
        dims(size).map_err(failed)?;
        let same_size = self.buffers.as_ref().is_some_and(|b| b.size == size);
        if !same_size {
            self.graphs.clear();
            self.buffers = None;
            self.ensure_room_for(size).map_err(failed)?;
            let stream = self.device.stream();
            let allocate = |what: &'static str| {
                stream
                    .alloc_zeros::<f32>(size.cells())
                    .map_err(|e| failed(driver_error(what)(e)))
            };
            self.buffers = Some(FieldBuffers {
                size,
                current: allocate("allocating the field")?,
                next: allocate("allocating the field's second buffer")?,
                laplacian: None,
                swapped: false,
            });
        }
        self.lookahead = None;
        self.last_params = None;
        let (free, _) = self.device.memory_info().map_err(failed)?;
        let stream = self.device.stream().clone();
        let Some(Ok(generator)) = self.field_generator.as_mut() else {
            return Err(match self.field_generator.as_ref() {
                Some(Err(why)) => why.clone(),
                _ => DeviceFieldUnavailable::Failed("no field generator".into()),
            });
        };
        let Some(buffers) = self.buffers.as_mut() else {
            return Err(failed(HeatlabError::NoField));
        };
        self.timer.start().map_err(failed)?;
        generator
            .generate(params, &stream, free, &mut buffers.current)
            .map_err(failed)?;
        let elapsed = self.timer.stop().map_err(failed)?;
        // Keep the plans and buffers for the next generation of this size (dragging a
        // parameter) only while they take a small share of the GPU's memory.
        let (_, total) = self.device.memory_info().map_err(failed)?;
        if FieldGenerator::bytes_needed(size) > total / 8 {
            generator.release();
        }
        if self.tuned_size != Some(size) {
            self.choose_kernel().map_err(failed)?;
            self.tuned_size = Some(size);
        }
        Ok(elapsed)
    }
}
