//! The launches of the heat-problem kernels (`kernels/materials.cu`): each entry point's
//! geometry, arguments and contract (the `// SAFETY:` line) in one place.

use std::sync::Arc;

use cudarc::driver::{CudaFunction, CudaStream, LaunchArgs, LaunchConfig, PushKernelArg};

use super::super::{dims, driver_error, FieldBuffers};
use super::tiles::TileClasses;
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
        MaterialKernel::Blocked { segment_rows, .. }
        | MaterialKernel::Tiled { segment_rows, .. } => {
            let steps_per_launch = kernel.steps_per_launch() as u32;
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

/// A launch of `function` with the arguments every stepping kernel takes first: `in` (the
/// current field), `out` (the next), the kind map, the tables, the number of kinds, rows, cols.
fn step_launch<'a>(
    stream: &'a Arc<CudaStream>,
    function: &'a CudaFunction,
    problem: &'a DeviceProblem,
    buffers: &'a mut FieldBuffers,
    rows: &'a i32,
    cols: &'a i32,
) -> LaunchArgs<'a> {
    let mut launch = stream.launch_builder(function);
    launch
        .arg(&buffers.current)
        .arg(&mut buffers.next)
        .arg(&problem.map)
        .arg(&problem.tables)
        .arg(&problem.kinds)
        .arg(rows)
        .arg(cols);
    launch
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
    let mut launch = step_launch(stream, function, problem, buffers, &rows, &cols);
    if let MaterialKernel::Blocked { .. } | MaterialKernel::Tiled { .. } = kernel {
        launch.arg(&segment_rows);
        // SAFETY: materials_blocked_k{4,8}{,c}_pr*_pc* and materials_tiled_k8{,d}_pr*_pc*
        // (const float* in, float* out, const unsigned char* map, const float* tables, int n,
        // int rows, int cols, int segment_rows): in and out are distinct buffers of rows*cols
        // floats, map rows*cols bytes (kinds below n, checked on upload), tables the n*n + 10n
        // + 4 floats of `packed`, copied into the dynamic shared memory the config gives;
        // cols % 4 == 0 (`supports`) so float4 and 4-byte map loads are aligned; lanes outside
        // the grid neither read unwrapped nor write (a tiled kernel's one-kind march only runs
        // where its rows and columns lie inside the grid or wrap).
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

/// One launch of a tiled kernel from `current` into `next`: `lean` (`materials_tiled_k8{,d}`)
/// over every tile, which marches the one-kind tiles, then `mixed` (`materials_tiled_mixed_k8`)
/// over the tiles `tiles` lists, each shared by `tiles.parts` warps.
pub(super) fn launch_tiled_step(
    stream: &Arc<CudaStream>,
    lean: &CudaFunction,
    mixed: &CudaFunction,
    kernel: MaterialKernel,
    problem: &DeviceProblem,
    tiles: &TileClasses,
    buffers: &mut FieldBuffers,
) -> Result<()> {
    let (rows, cols) = dims(problem.size)?;
    let (config, segment_rows) = launch_geometry(kernel, problem.size, problem.table_bytes);
    let mut launch = stream.launch_builder(lean);
    launch
        .arg(&buffers.current)
        .arg(&mut buffers.next)
        .arg(&problem.tables)
        .arg(&problem.kinds)
        .arg(&rows)
        .arg(&cols)
        .arg(&segment_rows)
        .arg(&tiles.kinds);
    // SAFETY: materials_tiled_k8{,d}_pr*_pc*(const float* in, float* out, const float* tables,
    // int n, int rows, int cols, int segment_rows, const int* tile_kinds): in, out and tables
    // as in `launch_step`; tile_kinds was classified for this problem and segment length
    // (strips * segments entries, kinds below n or -1), and the grid is the one it was
    // classified with; a one-kind tile's march reads inside the grid, clamped or wrapped, and
    // writes only its own rows and kept columns.
    unsafe { launch.launch(config) }.map_err(driver_error("launching materials_tiled"))?;
    if tiles.mixed_count == 0 {
        return Ok(());
    }
    let (count, parts) = (tiles.mixed_count as i32, tiles.parts as i32);
    let mixed_config = LaunchConfig {
        grid_dim: (
            (tiles.mixed_count * tiles.parts).div_ceil(BLOCKED_WARPS),
            1,
            1,
        ),
        block_dim: (32, BLOCKED_WARPS, 1),
        shared_mem_bytes: problem.table_bytes,
    };
    let mut launch = step_launch(stream, mixed, problem, buffers, &rows, &cols);
    launch
        .arg(&segment_rows)
        .arg(&tiles.mixed)
        .arg(&count)
        .arg(&parts);
    // SAFETY: materials_tiled_mixed_k8_pr*_pc*(const float* in, float* out, const unsigned
    // char* map, const float* tables, int n, int rows, int cols, int segment_rows, const
    // unsigned* tiles, int count, int parts): as `materials_blocked_k8` for the warps below
    // count * parts, each on its share of the rows of tile tiles[warp / parts] (a tile index
    // below strips * segments, from the classification of this problem; the shares do not
    // overlap); the other warps only copy the tables. The one-kind tiles the launch before
    // wrote are not among them, so no cell is written twice.
    unsafe { launch.launch(mixed_config) }
        .map_err(driver_error("launching materials_tiled_mixed"))?;
    Ok(())
}
