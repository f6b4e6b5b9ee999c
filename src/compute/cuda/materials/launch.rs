//! The launches of the heat-problem kernels (`kernels/materials.cu`): each entry point's
//! geometry, arguments and contract (the `// SAFETY:` line) in one place.

use std::sync::Arc;

use cudarc::driver::{CudaFunction, CudaStream, LaunchConfig, PushKernelArg};

use super::super::{dims, driver_error, FieldBuffers};
use super::{DeviceProblem, MaterialKernel, BLOCKED_WARPS, SCALAR_ROWS, VEC_ROWS};

/// Ledger cells each booking thread books (`BOOKING_CELLS_PER_THREAD` in the source).
const BOOKING_CELLS_PER_THREAD: u32 = 4;
use crate::error::{HeatlabError, Result};
use crate::grid::GridSize;

/// The launch of `kernel` over a field of `size`, and the blocked kernels' rows per warp.
pub(super) fn launch_geometry(
    kernel: MaterialKernel,
    size: GridSize,
    shared: u32,
) -> (LaunchConfig, i32) {
    let (rows, cols) = (size.rows as u32, size.cols as u32);
    let config = |grid_dim: (u32, u32, u32), block_dim: (u32, u32, u32)| LaunchConfig {
        grid_dim,
        block_dim,
        shared_mem_bytes: shared,
    };
    match kernel {
        MaterialKernel::Scalar => (
            config(
                (cols.div_ceil(32), rows.div_ceil(8 * SCALAR_ROWS), 1),
                (32, 8, 1),
            ),
            0,
        ),
        MaterialKernel::Vec4 => (
            config(
                ((cols / 4).div_ceil(128), rows.div_ceil(VEC_ROWS), 1),
                (128, 1, 1),
            ),
            0,
        ),
        MaterialKernel::Blocked {
            steps_per_launch,
            segment_rows,
            ..
        } => {
            let segments = rows.div_ceil(segment_rows);
            (
                config(
                    (
                        cols.div_ceil(128 - 2 * steps_per_launch),
                        segments.div_ceil(BLOCKED_WARPS),
                        1,
                    ),
                    (32, BLOCKED_WARPS, 1),
                ),
                segment_rows as i32,
            )
        }
    }
}

/// One launch of a stepping kernel from `current` into `next`.
pub(super) fn launch_step(
    stream: &Arc<CudaStream>,
    function: &CudaFunction,
    kernel: MaterialKernel,
    problem: &DeviceProblem,
    buffers: &mut FieldBuffers,
) -> Result<()> {
    let (rows, cols) = dims(problem.size)?;
    let (config, segment_rows) = launch_geometry(kernel, problem.size, problem.table_bytes);
    let mut launch = stream.launch_builder(function);
    launch
        .arg(&buffers.current)
        .arg(&mut buffers.next)
        .arg(&problem.map)
        .arg(&problem.tables)
        .arg(&problem.kinds)
        .arg(&rows)
        .arg(&cols);
    if let MaterialKernel::Blocked { .. } = kernel {
        launch.arg(&segment_rows);
        // SAFETY: materials_blocked_k{4,8}{,c}_pr*_pc*(const float* in, float* out, const unsigned
        // char* map, const float* tables, int n, int rows, int cols, int segment_rows): in and
        // out are distinct buffers of rows*cols floats, map rows*cols bytes (kinds below n,
        // checked on upload), tables the n*n + 10n + 4 floats of `packed`, copied into the
        // dynamic shared memory the config gives; cols % 4 == 0 (`supports`) so float4 and
        // 4-byte map loads are aligned; lanes outside the grid neither read unwrapped nor write.
        unsafe { launch.launch(config) }.map_err(driver_error("launching materials_blocked"))?;
    } else {
        // SAFETY: materials_step_{scalar,vec4}_pr*_pc*(const float* in, float* out, const
        // unsigned char* map, const float* tables, int n, int rows, int cols): as above; the
        // vec4 kernel only runs where cols % 4 == 0; threads outside the grid read clamped or
        // wrapped cells only and write nothing.
        unsafe { launch.launch(config) }.map_err(driver_error("launching materials_step"))?;
    }
    Ok(())
}

/// One launch of a one-step kernel from `current` into `next` that also adds the energy the
/// step exchanges to the ledger's sums: the step's grid behind rows of blocks that book the
/// ledger's cells (as few as hold them, first so that they start first).
pub(super) fn launch_booked_step(
    stream: &Arc<CudaStream>,
    function: &CudaFunction,
    kernel: MaterialKernel,
    problem: &mut DeviceProblem,
    buffers: &mut FieldBuffers,
) -> Result<()> {
    let (rows, cols) = dims(problem.size)?;
    let (mut config, _) = launch_geometry(kernel, problem.size, problem.table_bytes);
    let Some(ledger) = problem.ledger.as_mut() else {
        return Err(HeatlabError::Internal("no energy ledger is held".into()));
    };
    ledger.sources += ledger.host.sources_per_step();
    let threads = config.block_dim.0 * config.block_dim.1;
    let booking_blocks = (ledger.count as u32)
        .div_ceil(threads * BOOKING_CELLS_PER_THREAD)
        .max(1);
    let booking_rows = booking_blocks.div_ceil(config.grid_dim.0);
    config.grid_dim.1 += booking_rows;
    let booking_rows = booking_rows as i32;
    let mut launch = stream.launch_builder(function);
    launch
        .arg(&buffers.current)
        .arg(&mut buffers.next)
        .arg(&problem.map)
        .arg(&problem.tables)
        .arg(&problem.kinds)
        .arg(&rows)
        .arg(&cols)
        .arg(&ledger.capacity)
        .arg(&ledger.cells)
        .arg(&ledger.count)
        .arg(&booking_rows)
        .arg(&mut ledger.sums);
    // SAFETY: materials_step_{scalar,vec4}_booked_pr*_pc*(const float* in, float* out, const
    // unsigned char* map, const float* tables, int n, int rows, int cols, const double*
    // capacity, const unsigned* cells, int count, int booking_rows, double* exchange): the
    // step's arguments as in `launch_step`; capacity n doubles, cells `count` indices below
    // rows*cols (from the ledger of this map), exchange 5 * booking_slots(count) doubles. The
    // first booking_rows rows of blocks only book (each thread BOOKING_CELLS_PER_THREAD ledger
    // indices, those at or past count add nothing) and write no cell: booking block b adds to
    // exchange[5b..5b+5] only when b * 4 * threads < count, so b < count / 128 rounded up,
    // within the slots (a block has 128 or 256 threads); the rows after them are the step's grid exactly, shifted down
    // by booking_rows (grid rows stay far below the 65535 limit: VEC_ROWS or 32 cell rows a
    // block row).
    unsafe { launch.launch(config) }.map_err(driver_error("launching materials_step_booked"))?;
    Ok(())
}
