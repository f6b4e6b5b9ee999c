//! The launches of the diffusion kernels (`kernels/diffusion.cu`) and of the Kernel lab's
//! `user_step`, written once: one typed function per kernel entry point, each with its
//! contract (the `// SAFETY:` line) and its error label, and the one loop that steps the
//! double buffers with any of them.

use std::sync::Arc;

use cudarc::driver::{CudaFunction, CudaSlice, CudaStream, LaunchConfig, PushKernelArg};

use super::{dims, driver_error, FieldBuffers};
use crate::error::{HeatlabError, Result};

/// What every double-buffered step reads and writes: the current field, the next one, the
/// grid's shape and the coefficient.
pub(super) struct StepOperands<'a> {
    input: &'a CudaSlice<f32>,
    output: &'a mut CudaSlice<f32>,
    rows: i32,
    cols: i32,
    coeff: f32,
}

impl FieldBuffers {
    /// The operands of one step from `current` into `next`, and the Laplacian buffer when it
    /// is allocated.
    fn step_operands(
        &mut self,
        coeff: f32,
    ) -> Result<(StepOperands<'_>, Option<&mut CudaSlice<f32>>)> {
        let (rows, cols) = dims(self.size)?;
        let operands = StepOperands {
            input: &self.current,
            output: &mut self.next,
            rows,
            cols,
            coeff,
        };
        Ok((operands, self.laplacian.as_mut()))
    }
}

/// The Laplacian buffer a kernel that writes the Laplacian in its pass needs, allocated
/// beforehand (an allocation cannot be captured into a graph).
fn allocated<'a>(
    laplacian: Option<&'a mut CudaSlice<f32>>,
    kernel: &str,
) -> Result<&'a mut CudaSlice<f32>> {
    laplacian.ok_or_else(|| HeatlabError::Cuda {
        context: format!("launching {kernel}"),
        message: "the Laplacian buffer was not allocated".into(),
    })
}

/// Which kernel a step loop launches, with what its launch needs beyond [`StepOperands`].
#[derive(Clone, Copy)]
pub(super) enum StepLaunch<'f> {
    /// `jacobi_step*` (one step per launch, the field only).
    Jacobi(&'f CudaFunction),
    /// `jacobi_temporal_*` (several steps per launch, in segments of `segment_rows` rows).
    Temporal(&'f CudaFunction, i32),
    /// `shared_step_*` (one step, and the Laplacian of its input).
    Shared(&'f CudaFunction),
    /// The Kernel lab's `user_step` (one step and the Laplacian, the boundary as an index).
    User(&'f CudaFunction, i32),
}

/// Queues `launches` launches of `kernel` with `config`, flipping the buffers after each so
/// that the step just written becomes the current field: the one step loop of every
/// double-buffered kernel, built-in or the user's.
pub(super) fn step_loop(
    stream: &Arc<CudaStream>,
    kernel: StepLaunch<'_>,
    config: LaunchConfig,
    buffers: &mut FieldBuffers,
    launches: u64,
    coeff: f32,
) -> Result<()> {
    for _ in 0..launches {
        let (operands, laplacian) = buffers.step_operands(coeff)?;
        match kernel {
            StepLaunch::Jacobi(function) => jacobi_step(stream, function, config, operands)?,
            StepLaunch::Temporal(function, segment_rows) => {
                jacobi_temporal(stream, function, config, operands, segment_rows)?;
            }
            StepLaunch::Shared(function) => {
                let laplacian = allocated(laplacian, "shared_step")?;
                shared_step(stream, function, config, operands, laplacian)?;
            }
            StepLaunch::User(function, boundary) => {
                let laplacian = allocated(laplacian, "user_step")?;
                user_step(stream, function, config, operands, laplacian, boundary)?;
            }
        }
        buffers.flip();
    }
    Ok(())
}

/// One launch of `jacobi_step{,_vec4}_*`.
fn jacobi_step(
    stream: &Arc<CudaStream>,
    function: &CudaFunction,
    config: LaunchConfig,
    step: StepOperands<'_>,
) -> Result<()> {
    let mut launch = stream.launch_builder(function);
    launch
        .arg(step.input)
        .arg(step.output)
        .arg(&step.rows)
        .arg(&step.cols)
        .arg(&step.coeff);
    // SAFETY: jacobi_step{,_vec4}_*(const float* in, float* out, int rows, int cols, float
    // coeff): distinct buffers of rows*cols floats; the vec4 kernel is only chosen when
    // cols % 4 == 0; threads outside rows x cols neither read nor write.
    unsafe { launch.launch(config) }.map_err(driver_error("launching jacobi_step"))?;
    Ok(())
}

/// One launch of `jacobi_temporal_k*w*_*` (several steps).
fn jacobi_temporal(
    stream: &Arc<CudaStream>,
    function: &CudaFunction,
    config: LaunchConfig,
    step: StepOperands<'_>,
    segment_rows: i32,
) -> Result<()> {
    let mut launch = stream.launch_builder(function);
    launch
        .arg(step.input)
        .arg(step.output)
        .arg(&step.rows)
        .arg(&step.cols)
        .arg(&step.coeff)
        .arg(&segment_rows);
    // SAFETY: jacobi_temporal_k*w*_*(const float* in, float* out, int rows, int cols, float
    // coeff, int segment_rows): distinct buffers of rows*cols floats, cols % 4 == 0 (checked by
    // `supports`) so float4 accesses are aligned; warps outside the grid return and lanes
    // outside it neither read unwrapped nor write.
    unsafe { launch.launch(config) }.map_err(driver_error("launching jacobi_temporal"))?;
    Ok(())
}

/// One launch of `shared_step_*`, which also writes the Laplacian of its input.
fn shared_step(
    stream: &Arc<CudaStream>,
    function: &CudaFunction,
    config: LaunchConfig,
    step: StepOperands<'_>,
    laplacian: &mut CudaSlice<f32>,
) -> Result<()> {
    let mut launch = stream.launch_builder(function);
    launch
        .arg(step.input)
        .arg(step.output)
        .arg(laplacian)
        .arg(&step.rows)
        .arg(&step.cols)
        .arg(&step.coeff);
    // SAFETY: shared_step_*(const float* in, float* out, float* lapl, int rows, int cols,
    // float coeff): three distinct buffers of rows*cols floats; the block is
    // SHARED_TILE_X x SHARED_TILE_Y = 32 x 8 as the kernel's static tile assumes; threads
    // outside rows x cols read at most one ghost cell away (wrapped once) and write nothing.
    unsafe { launch.launch(config) }.map_err(driver_error("launching shared_step"))?;
    Ok(())
}

/// One launch of the Kernel lab's `user_step`.
fn user_step(
    stream: &Arc<CudaStream>,
    function: &CudaFunction,
    config: LaunchConfig,
    step: StepOperands<'_>,
    laplacian: &mut CudaSlice<f32>,
    boundary: i32,
) -> Result<()> {
    let mut launch = stream.launch_builder(function);
    launch
        .arg(step.input)
        .arg(step.output)
        .arg(laplacian)
        .arg(&step.rows)
        .arg(&step.cols)
        .arg(&step.coeff)
        .arg(&boundary);
    // SAFETY: user_step(const float* in, float* out, float* lapl, int rows, int cols, float
    // coeff, int boundary), the contract of kernels/user_step.cu: three distinct buffers of
    // rows*cols floats and the block the source declares. The kernel is the user's: it reaches
    // this context only after a separate process ran it on small fields and on this field and
    // found it bit-identical to the CPU reference.
    unsafe { launch.launch(config) }.map_err(driver_error("launching user_step"))?;
    Ok(())
}

/// One launch of `laplacian_*`: the Laplacian of `field` into `laplacian`.
pub(super) fn laplacian(
    stream: &Arc<CudaStream>,
    function: &CudaFunction,
    field: &CudaSlice<f32>,
    laplacian: &mut CudaSlice<f32>,
    (rows, cols): (i32, i32),
) -> Result<()> {
    let config = LaunchConfig {
        grid_dim: ((cols as u32).div_ceil(32), (rows as u32).div_ceil(8), 1),
        block_dim: (32, 8, 1),
        shared_mem_bytes: 0,
    };
    let mut launch = stream.launch_builder(function);
    launch.arg(field).arg(laplacian).arg(&rows).arg(&cols);
    // SAFETY: laplacian_*(const float* f, float* lapl, int rows, int cols): both buffers hold
    // rows*cols floats; threads outside rows x cols return.
    unsafe { launch.launch(config) }.map_err(driver_error("launching laplacian"))?;
    Ok(())
}

/// One launch of `seed_diffusion_inplace`, the tutorial's kernel: a step of `field` in place,
/// writing its Laplacian.
pub(super) fn seed_diffusion_inplace(
    stream: &Arc<CudaStream>,
    function: &CudaFunction,
    config: LaunchConfig,
    field: &mut CudaSlice<f32>,
    laplacian: &mut CudaSlice<f32>,
    (rows, cols, coeff): (i32, i32, f32),
) -> Result<()> {
    let mut launch = stream.launch_builder(function);
    launch
        .arg(field)
        .arg(laplacian)
        .arg(&rows)
        .arg(&cols)
        .arg(&coeff);
    // SAFETY: seed_diffusion_inplace(float* field, float* lapl, int rows, int cols, float
    // coeff): both buffers hold rows*cols floats and the grid covers exactly rows x cols cells.
    unsafe { launch.launch(config) }.map_err(driver_error("launching seed_diffusion_inplace"))?;
    Ok(())
}
