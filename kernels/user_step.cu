// heatlab user kernel: edit it in the Kernel lab, compile, validate, then step with it.
//
// THE CONTRACT (heatlab reads the three HEATLAB_ defines below from this text)
//
//   extern "C" __global__ void user_step(const float* in, float* out, float* lapl,
//                                        int rows, int cols, float coeff, int boundary)
//
//   in       the field before the step: rows x cols float32, row-major (index = row*cols + col).
//            Read only.
//   out      a different buffer of the same size: write f_next = f - coeff*lapl for EVERY cell.
//   lapl     a third buffer of the same size: write the Laplacian of `in` for EVERY cell,
//            lapl = 4*f - up - down - left - right (subtracted in this order).
//   boundary the value of the ghost cells outside the grid: 0 Dirichlet (zero outside),
//            1 Neumann (the nearest edge cell), 2 periodic (wrap around). heatlab passes only the
//            boundaries listed in HEATLAB_BOUNDARIES.
//
//   Launch:  block (HEATLAB_BLOCK_X, HEATLAB_BLOCK_Y, 1), at most 1024 threads;
//            grid (ceil(cols / HEATLAB_BLOCK_X), ceil(rows / HEATLAB_BLOCK_Y), 1):
//            x along columns, y down rows (at most 65535 blocks), one launch per step.
//            Threads outside the grid must not write. No dynamic shared memory.
//   Compile: NVRTC for the device's own architecture with --fmad=false (no fused multiply-add),
//            so that the same arithmetic in the same order gives the CPU's result bit for bit.
//
// Before the simulation may use it, heatlab runs it in a separate process on small fields of
// odd sizes (every boundary listed) and on the current field, against the CPU reference.
// Only a kernel whose field and Laplacian are bit-identical can step the simulation.
//
// This template is heatlab's `shared` kernel: a tile plus a one-cell halo in shared memory.

#define HEATLAB_BLOCK_X 32
#define HEATLAB_BLOCK_Y 8
#define HEATLAB_BOUNDARIES "dirichlet neumann periodic"

#define TILE_X HEATLAB_BLOCK_X
#define TILE_Y HEATLAB_BLOCK_Y

// The value of cell (r, c) or of a ghost cell one step outside the grid.
__device__ float ghost_or_cell(const float* in, int r, int c, int rows, int cols, int boundary) {
    if (r < -1 || r > rows || c < -1 || c > cols) return 0.0f;  // never used
    if (boundary == 0) {
        if (r < 0 || r >= rows || c < 0 || c >= cols) return 0.0f;
    } else if (boundary == 1) {
        r = r < 0 ? 0 : (r >= rows ? rows - 1 : r);
        c = c < 0 ? 0 : (c >= cols ? cols - 1 : c);
    } else {
        r = r < 0 ? r + rows : (r >= rows ? r - rows : r);
        c = c < 0 ? c + cols : (c >= cols ? c - cols : c);
    }
    return in[(size_t)r * cols + c];
}

extern "C" __global__ void user_step(const float* in, float* out, float* lapl,
                                     int rows, int cols, float coeff, int boundary) {
    __shared__ float tile[TILE_Y + 2][TILE_X + 2];
    const int tx = threadIdx.x, ty = threadIdx.y;
    const int c = blockIdx.x * TILE_X + tx;
    const int r = blockIdx.y * TILE_Y + ty;
    // Every thread loads (ghosts included) before the barrier; none returns early.
    tile[ty + 1][tx + 1] = ghost_or_cell(in, r, c, rows, cols, boundary);
    if (ty == 0) tile[0][tx + 1] = ghost_or_cell(in, r - 1, c, rows, cols, boundary);
    if (ty == TILE_Y - 1) tile[TILE_Y + 1][tx + 1] = ghost_or_cell(in, r + 1, c, rows, cols, boundary);
    if (tx == 0) tile[ty + 1][0] = ghost_or_cell(in, r, c - 1, rows, cols, boundary);
    if (tx == TILE_X - 1) tile[ty + 1][TILE_X + 1] = ghost_or_cell(in, r, c + 1, rows, cols, boundary);
    __syncthreads();
    if (r >= rows || c >= cols) return;
    const float mid = tile[ty + 1][tx + 1];
    const float l = 4.0f * mid - tile[ty][tx + 1] - tile[ty + 2][tx + 1] - tile[ty + 1][tx]
                    - tile[ty + 1][tx + 2];
    const size_t i = (size_t)r * cols + c;
    lapl[i] = l;
    out[i] = mid - coeff * l;
}
