//! Launch geometry (seed `002_...`): add one to every element of a 1-D or 2-D float64 array
//! (`np.ones`), with blocks and grids the user picks. Which block and thread touch which
//! element follows from the launch's index arithmetic ([`GeometryOptions::owner`]); threads
//! past the end idle behind the guard `if i < n`. Without the guard they write anyway: heatlab
//! pads the array to the last index the launch can reach, so that those writes land in padding
//! that is read back and counted, never in memory that belongs to anything else.
//!
//! The CPU twin ([`simulate`]) lets every launched thread do what the kernel's thread does, so
//! the GPU's whole padded buffer must equal it (the adds are exact small whole numbers).

use cudarc::driver::{CudaSlice, LaunchConfig, PushKernelArg};

use super::super::RunControl;
use super::{check_repeats, BasicsGpu, KernelTime};
use crate::compute::cuda::driver_error;
use crate::error::{HeatlabError, Result};

/// The most elements (array and padding) or launched threads a geometry run takes.
pub const MAX_GEOMETRY_ELEMENTS: u64 = 1 << 26;

/// One or two dimensions.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Dimensions {
    /// `i = cuda.grid(1)` over n elements.
    One,
    /// `x, y = cuda.grid(2)` over rows x cols elements.
    Two,
}

/// A launch of an increment kernel.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct GeometryOptions {
    /// 1-D or 2-D.
    pub dimensions: Dimensions,
    /// Elements of the 1-D array.
    pub n: u64,
    /// Rows of the 2-D array.
    pub rows: u32,
    /// Columns of the 2-D array.
    pub cols: u32,
    /// Threads per block (x, y); y is 1 in 1-D.
    pub block: [u32; 2],
    /// Blocks in the grid (x, y); y is 1 in 1-D.
    pub grid: [u32; 2],
    /// 2-D: the grid's x walks the rows, as the notebook's `arr[x, y]` does (else the columns).
    pub x_along_rows: bool,
    /// Whether the kernel tests that its index is inside the array.
    pub guarded: bool,
    /// Timed runs.
    pub repeats: u32,
}

impl GeometryOptions {
    /// The notebook's 1-D launch: 65536 elements, 256 threads per block, 256 blocks.
    pub fn notebook_1d() -> Self {
        Self {
            dimensions: Dimensions::One,
            n: 65_536,
            rows: 256,
            cols: 256,
            block: [256, 1],
            grid: [256, 1],
            x_along_rows: true,
            guarded: true,
            repeats: 7,
        }
    }

    /// The notebook's 2-D launch: 256 x 256 elements, 16 x 16 threads, 16 x 16 blocks.
    pub fn notebook_2d() -> Self {
        Self {
            dimensions: Dimensions::Two,
            block: [16, 16],
            grid: [16, 16],
            ..Self::notebook_1d()
        }
    }

    /// Elements of the array.
    pub fn elements(&self) -> u64 {
        match self.dimensions {
            Dimensions::One => self.n,
            Dimensions::Two => u64::from(self.rows) * u64::from(self.cols),
        }
    }

    /// Threads the launch starts along x and y.
    pub fn launched(&self) -> [u64; 2] {
        [
            u64::from(self.grid[0]) * u64::from(self.block[0]),
            u64::from(self.grid[1]) * u64::from(self.block[1]),
        ]
    }

    /// Threads the launch starts.
    pub fn launched_threads(&self) -> u64 {
        let [x, y] = self.launched();
        x * y
    }

    /// The smallest grid that covers the array with this block: `ceil(size / block)` per axis.
    pub fn fitting_grid(&self) -> [u32; 2] {
        let cover = |size: u64, block: u32| -> u32 {
            u32::try_from(size.div_ceil(u64::from(block.max(1))).max(1)).unwrap_or(u32::MAX)
        };
        match self.dimensions {
            Dimensions::One => [cover(self.n, self.block[0]), 1],
            Dimensions::Two => {
                let (along_x, along_y) = if self.x_along_rows {
                    (self.rows, self.cols)
                } else {
                    (self.cols, self.rows)
                };
                [
                    cover(u64::from(along_x), self.block[0]),
                    cover(u64::from(along_y), self.block[1]),
                ]
            }
        }
    }

    /// The (row, column) a launched thread (tx, ty) computes; 1-D arrays have one row.
    fn row_col(&self, tx: u64, ty: u64) -> (u64, u64) {
        match self.dimensions {
            Dimensions::One => (0, tx),
            Dimensions::Two if self.x_along_rows => (tx, ty),
            Dimensions::Two => (ty, tx),
        }
    }

    /// The flat index thread (tx, ty) writes, inside the array or not (the guard aside).
    fn flat_index(&self, tx: u64, ty: u64) -> u64 {
        let (row, col) = self.row_col(tx, ty);
        match self.dimensions {
            Dimensions::One => col,
            Dimensions::Two => row * u64::from(self.cols) + col,
        }
    }

    /// Whether thread (tx, ty) passes the guard.
    fn inside(&self, tx: u64, ty: u64) -> bool {
        let (row, col) = self.row_col(tx, ty);
        match self.dimensions {
            Dimensions::One => col < self.n,
            Dimensions::Two => row < u64::from(self.rows) && col < u64::from(self.cols),
        }
    }

    /// The buffer's length: the array, padded to the last index an unguarded thread writes.
    pub fn padded_len(&self) -> u64 {
        let [x, y] = self.launched();
        let last = self.flat_index(x.saturating_sub(1), y.saturating_sub(1)) + 1;
        last.max(self.elements())
    }

    /// The block and thread that the launch maps to element (row, col), guard or not; `None`
    /// when no thread of the grid reaches it (a grid too small).
    pub fn owner(&self, row: u64, col: u64) -> Option<Owner> {
        let (tx, ty) = match self.dimensions {
            Dimensions::One => (col, 0),
            Dimensions::Two if self.x_along_rows => (row, col),
            Dimensions::Two => (col, row),
        };
        let [x, y] = self.launched();
        if tx >= x || ty >= y {
            return None;
        }
        let (bx, by) = (u64::from(self.block[0]), u64::from(self.block[1]));
        Some(Owner {
            block: [(tx / bx) as u32, (ty / by) as u32],
            thread: [(tx % bx) as u32, (ty % by) as u32],
        })
    }

    /// Threads that pass the guard (each owns one element of the array).
    pub fn working_threads(&self) -> u64 {
        let [x, y] = self.launched();
        match self.dimensions {
            Dimensions::One => x.min(self.n),
            Dimensions::Two => {
                let (rows, cols) = if self.x_along_rows { (x, y) } else { (y, x) };
                rows.min(u64::from(self.rows)) * cols.min(u64::from(self.cols))
            }
        }
    }

    /// Checks the launch against CUDA's limits and heatlab's, with a message that says which.
    pub fn validate(&self) -> Result<()> {
        let invalid = |text: String| Err(HeatlabError::InvalidInput(text));
        check_repeats(self.repeats)?;
        let [bx, by] = self.block;
        let [gx, gy] = self.grid;
        if self.elements() == 0 {
            return invalid("the array needs at least one element".into());
        }
        if bx == 0 || by == 0 || gx == 0 || gy == 0 {
            return invalid("blocks and grids need at least one thread and one block".into());
        }
        if u64::from(bx) * u64::from(by) > 1024 {
            return invalid(format!(
                "a block of {bx} x {by} = {} threads is more than CUDA's 1024",
                u64::from(bx) * u64::from(by)
            ));
        }
        if self.dimensions == Dimensions::One && (by != 1 || gy != 1) {
            return invalid("a 1-D launch has one block row and one thread row".into());
        }
        if gy > 65_535 {
            return invalid(format!("a grid's y size is at most 65535 blocks, not {gy}"));
        }
        if gx > i32::MAX as u32 {
            return invalid(format!(
                "a grid's x size is at most 2^31 - 1 blocks, not {gx}"
            ));
        }
        let largest = self.launched_threads().max(self.padded_len());
        if largest > MAX_GEOMETRY_ELEMENTS {
            return invalid(format!(
                "{largest} threads or elements is more than this lesson takes \
                 ({MAX_GEOMETRY_ELEMENTS})"
            ));
        }
        Ok(())
    }
}

/// The block and thread of the launch that reach an element.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Owner {
    /// `blockIdx` (x, y).
    pub block: [u32; 2],
    /// `threadIdx` (x, y).
    pub thread: [u32; 2],
}

/// What a launch did to the array, counted from the buffer read back.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Tally {
    /// Elements of the array incremented exactly once (now 2).
    pub incremented_once: u64,
    /// Elements never touched (still 1): the grid does not reach them.
    pub missed: u64,
    /// Elements incremented more than once (two threads computed the same index).
    pub touched_more_than_once: u64,
    /// Writes that landed in the padding past the array's end.
    pub writes_past_end: u64,
}

/// The buffer before the launch: the array's `np.ones`, then zeros in the padding (so that a
/// padding value is the number of writes it took).
pub fn initial_buffer(options: &GeometryOptions) -> Vec<f64> {
    let elements = options.elements() as usize;
    let mut buffer = vec![0.0; options.padded_len() as usize];
    buffer[..elements].fill(1.0);
    buffer
}

/// The CPU twin of one launch: every launched thread does what the kernel's does.
pub fn simulate(options: &GeometryOptions, buffer: &mut [f64]) {
    let [x, y] = options.launched();
    for ty in 0..y {
        for tx in 0..x {
            if options.guarded && !options.inside(tx, ty) {
                continue;
            }
            if let Some(value) = buffer.get_mut(options.flat_index(tx, ty) as usize) {
                *value += 1.0;
            }
        }
    }
}

/// Counts what one launch did to a buffer that started as [`initial_buffer`].
pub fn tally(options: &GeometryOptions, buffer: &[f64]) -> Tally {
    let elements = (options.elements() as usize).min(buffer.len());
    let (array, padding) = buffer.split_at(elements);
    let mut tally = Tally::default();
    for &value in array {
        if value == 2.0 {
            tally.incremented_once += 1;
        } else if value <= 1.0 {
            tally.missed += 1;
        } else {
            tally.touched_more_than_once += 1;
        }
    }
    tally.writes_past_end = padding.iter().map(|&v| v as u64).sum();
    tally
}

/// A geometry run: the launch, what it did, and its time.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct GeometryOutcome {
    /// The launch.
    pub options: GeometryOptions,
    /// Threads launched.
    pub launched_threads: u64,
    /// Threads whose index falls outside the array (idle behind the guard, stray without it).
    pub idle_threads: u64,
    /// Elements of the array.
    pub elements: u64,
    /// Length of the padded buffer.
    pub padded_len: u64,
    /// What the launch did: read back from the GPU, or the CPU twin's without one.
    pub tally: Tally,
    /// The GPU's name when it ran.
    pub gpu: Option<String>,
    /// Whether the GPU's whole buffer equals the CPU twin's (`None` without a GPU).
    pub gpu_equals_cpu: Option<bool>,
    /// The kernel's time with this launch (the array on the device).
    pub kernel: Option<KernelTime>,
}

impl GeometryOutcome {
    /// What happened, in sentences for people.
    pub fn explanation(&self) -> Vec<String> {
        let mut lines = vec![format!(
            "{} threads launched for {} elements; {} of them past the end",
            self.launched_threads, self.elements, self.idle_threads
        )];
        let tally = &self.tally;
        if self.options.guarded && self.idle_threads > 0 {
            lines.push(format!(
                "the guard kept the {} threads past the end idle",
                self.idle_threads
            ));
        }
        if tally.writes_past_end > 0 {
            lines.push(format!(
                "without the guard, {} writes landed past the end of the array: caught here in \
                 padding heatlab added; in a real program they would overwrite other data or \
                 stop the kernel with an illegal address",
                tally.writes_past_end
            ));
        }
        if tally.touched_more_than_once > 0 {
            lines.push(format!(
                "{} elements were incremented more than once: a column index past the end \
                 wraps into the next row, onto another thread's element",
                tally.touched_more_than_once
            ));
        }
        if tally.missed > 0 {
            lines.push(format!(
                "the grid is too small: {} elements were never touched",
                tally.missed
            ));
        }
        if tally.incremented_once == self.elements {
            lines.push("every element was incremented exactly once".into());
        }
        lines
    }
}

/// Launches the increment kernel once (CPU twin without a GPU), counts what it did, and times
/// it with the array on the device.
pub fn run(
    options: &GeometryOptions,
    gpu: Option<&BasicsGpu>,
    control: RunControl<'_>,
) -> Result<GeometryOutcome> {
    options.validate()?;
    let mut expected = initial_buffer(options);
    simulate(options, &mut expected);
    let (tally, gpu_equals_cpu, kernel) = match gpu {
        Some(gpu) => {
            let (buffer, kernel) = run_gpu(gpu, options, control)?;
            (
                tally(options, &buffer),
                Some(buffer == expected),
                Some(kernel),
            )
        }
        None => (tally(options, &expected), None, None),
    };
    Ok(GeometryOutcome {
        options: options.clone(),
        launched_threads: options.launched_threads(),
        idle_threads: options.launched_threads() - options.working_threads(),
        elements: options.elements(),
        padded_len: options.padded_len(),
        tally,
        gpu: gpu.map(|gpu| gpu.name().to_string()),
        gpu_equals_cpu,
        kernel,
    })
}

/// The buffer after one launch on the GPU, and the kernel's time.
fn run_gpu(
    gpu: &BasicsGpu,
    options: &GeometryOptions,
    control: RunControl<'_>,
) -> Result<(Vec<f64>, KernelTime)> {
    let tutorial = gpu.tutorial();
    let initial = initial_buffer(options);
    tutorial.ensure_memory("the increment's array", initial.len() * 8)?;
    let stream = tutorial.device().stream().clone();
    let mut buffer = stream
        .clone_htod(&initial)
        .map_err(driver_error("uploading the array"))?;
    let config = LaunchConfig {
        grid_dim: (options.grid[0], options.grid[1], 1),
        block_dim: (options.block[0], options.block[1], 1),
        shared_mem_bytes: 0,
    };
    let guarded = i32::from(options.guarded);
    let launch = |buffer: &mut CudaSlice<f64>| -> Result<()> {
        match options.dimensions {
            Dimensions::One => {
                let mut builder = stream.launch_builder(&gpu.increment_1d);
                builder.arg(buffer).arg(&options.n).arg(&guarded);
                // SAFETY: increment_1d(double* x, unsigned long long n, int guarded): the
                // buffer holds padded_len doubles, which covers every index a launched thread
                // computes (grid x block, checked by validate), guarded or not.
                unsafe { builder.launch(config) }
                    .map_err(driver_error("launching increment_1d"))?;
            }
            Dimensions::Two => {
                let along_rows = i32::from(options.x_along_rows);
                let mut builder = stream.launch_builder(&gpu.increment_2d);
                builder
                    .arg(buffer)
                    .arg(&options.rows)
                    .arg(&options.cols)
                    .arg(&along_rows)
                    .arg(&guarded);
                // SAFETY: increment_2d(double* x, unsigned int rows, unsigned int cols, int
                // x_along_rows, int guarded): the buffer holds padded_len doubles, one past the
                // largest row * cols + col any launched thread computes, guarded or not.
                unsafe { builder.launch(config) }
                    .map_err(driver_error("launching increment_2d"))?;
            }
        }
        Ok(())
    };
    launch(&mut buffer)?;
    let mut after = vec![0.0f64; initial.len()];
    stream
        .memcpy_dtoh(&buffer, after.as_mut_slice())
        .map_err(driver_error("downloading the array"))?;
    tutorial.device().synchronize()?;
    // The timed launches keep adding to the same buffer; only their time is kept.
    let kernel =
        super::timing::time_kernel(gpu, options.repeats, control, &mut || launch(&mut buffer))?;
    Ok((after, kernel))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_notebooks_launches_cover_each_element_once() {
        for options in [
            GeometryOptions::notebook_1d(),
            GeometryOptions::notebook_2d(),
        ] {
            let outcome = run(&options, None, RunControl::unattended()).unwrap();
            assert_eq!(outcome.tally.incremented_once, options.elements());
            assert_eq!(outcome.idle_threads, 0);
            assert_eq!(outcome.tally.writes_past_end, 0);
        }
    }

    #[test]
    fn unguarded_threads_past_the_end_are_counted_in_the_padding() {
        let options = GeometryOptions {
            n: 1000,
            grid: [4, 1],
            guarded: false,
            ..GeometryOptions::notebook_1d()
        };
        let outcome = run(&options, None, RunControl::unattended()).unwrap();
        assert_eq!(outcome.idle_threads, 24);
        assert_eq!(outcome.tally.writes_past_end, 24);
        assert_eq!(outcome.tally.incremented_once, 1000);
    }

    #[test]
    fn unguarded_2d_columns_wrap_into_the_next_row() {
        // 10 x 10 with 4 x 4 blocks along rows: 12 x 12 threads, 2 extra columns per row.
        let options = GeometryOptions {
            rows: 10,
            cols: 10,
            block: [4, 4],
            grid: [3, 3],
            guarded: false,
            ..GeometryOptions::notebook_2d()
        };
        let outcome = run(&options, None, RunControl::unattended()).unwrap();
        // Columns 10 and 11 of rows 0..=8 wrap onto columns 0 and 1 of rows 1..=9.
        assert_eq!(outcome.tally.touched_more_than_once, 9 * 2);
        assert_eq!(outcome.tally.missed, 0);
        let guarded = GeometryOptions {
            guarded: true,
            ..options
        };
        let outcome = run(&guarded, None, RunControl::unattended()).unwrap();
        assert_eq!(outcome.tally.incremented_once, 100);
        assert_eq!(outcome.idle_threads, 144 - 100);
    }

    #[test]
    fn a_small_grid_misses_elements_and_owners_follow_the_index() {
        let options = GeometryOptions {
            n: 1000,
            grid: [2, 1],
            ..GeometryOptions::notebook_1d()
        };
        let outcome = run(&options, None, RunControl::unattended()).unwrap();
        assert_eq!(outcome.tally.missed, 1000 - 512);
        assert_eq!(
            options.owner(0, 300),
            Some(Owner {
                block: [1, 0],
                thread: [44, 0]
            })
        );
        assert_eq!(options.owner(0, 600), None);
        assert!(GeometryOptions {
            block: [2048, 1],
            ..options
        }
        .validate()
        .is_err());
    }
}
