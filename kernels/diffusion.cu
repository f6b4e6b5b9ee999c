// heatlab diffusion kernels, compiled at run time by NVRTC for the device's own architecture.
//
// The step is Jacobi: read `in`, write `out`, never the same buffer.
//   lapl = 4*f - up - down - left - right      (summed in this order, as NumPy and the CPU do)
//   f_next = f - coeff * lapl
// heatlab compiles with --fmad=false so that no multiply-add is fused and the GPU result equals
// the CPU's bit for bit.
//
// Layout, boundaries (BC_*), `sample<BC>` (a cell or its ghost) and `laplacian_at<BC>`:
// kernels/stencil.cu, compiled in front of this file.

// Rows one thread marches down in the Jacobi kernel: the cell above and the cell itself are
// reused from registers, so each row costs one new vertical load.
#define ROWS_PER_THREAD 4

// One Jacobi step. Block (32, 8); each thread owns one column and ROWS_PER_THREAD rows.
template <int BC>
__device__ __forceinline__ void jacobi_step(const float* __restrict__ in, float* __restrict__ out,
                                            int rows, int cols, float coeff) {
    const int c = blockIdx.x * blockDim.x + threadIdx.x;
    const int r0 = (blockIdx.y * blockDim.y + threadIdx.y) * ROWS_PER_THREAD;
    if (c >= cols || r0 >= rows) return;
    const int r_end = min(r0 + ROWS_PER_THREAD, rows);
    float up = sample<BC>(in, r0 - 1, c, rows, cols);
    float mid = __ldg(&in[(size_t)r0 * cols + c]);
    for (int r = r0; r < r_end; ++r) {
        const float down = sample<BC>(in, r + 1, c, rows, cols);
        const float left = sample<BC>(in, r, c - 1, rows, cols);
        const float right = sample<BC>(in, r, c + 1, rows, cols);
        const float lapl = 4.0f * mid - up - down - left - right;
        out[(size_t)r * cols + c] = mid - coeff * lapl;
        up = mid;
        mid = down;
    }
}

// The kernels, one per boundary (HEATLAB_FOR_EACH_BOUNDARY, stencil.cu): FN_<boundary> runs FN<BC>.
#define JACOBI_STEP_KERNEL(NAME, BC, FN)                                                          \
    extern "C" __global__ void FN##_##NAME(const float* __restrict__ in, float* __restrict__ out, \
                                           int rows, int cols, float coeff) {                     \
        FN<BC>(in, out, rows, cols, coeff);                                                       \
    }
HEATLAB_FOR_EACH_BOUNDARY(JACOBI_STEP_KERNEL, jacobi_step)

// The Laplacian of a field, one thread per cell, for downloads and exports (the display's block
// means compute it as they read the field).
template <int BC>
__device__ __forceinline__ void laplacian(const float* __restrict__ f, float* __restrict__ lapl,
                                          int rows, int cols) {
    const int c = blockIdx.x * blockDim.x + threadIdx.x;
    const int r = blockIdx.y * blockDim.y + threadIdx.y;
    if (c >= cols || r >= rows) return;
    lapl[(size_t)r * cols + c] = laplacian_at<BC>(f, r, c, rows, cols);
}

#define LAPLACIAN_KERNEL(NAME, BC, FN)                                                             \
    extern "C" __global__ void FN##_##NAME(const float* __restrict__ f, float* __restrict__ lapl, \
                                           int rows, int cols) {                                  \
        FN<BC>(f, lapl, rows, cols);                                                              \
    }
HEATLAB_FOR_EACH_BOUNDARY(LAPLACIAN_KERNEL, laplacian)

// A faithful port of the tutorial's Numba kernel, kept ONLY as a benchmark baseline.
// 8x8 shared tile with a one-cell halo; x (threadIdx.x) indexes rows as Numba's cuda.grid(2) does,
// so a warp walks down a column (uncoalesced); the Laplacian is written every step; and the field
// is updated IN PLACE while neighbouring blocks may still read it: a race, which is why the
// simulation never uses it. Numba types `4 * float32` as float64, so `val` is a double here too.
// The one change: out-of-range threads of a partial block read nothing (Numba reads past the end).
#define SEED_TPB 8
extern "C" __global__ void seed_diffusion_inplace(float* field, float* lapl, int rows, int cols, float coeff) {
    __shared__ float sharedarray[SEED_TPB + 2][SEED_TPB + 2];
    const int x = blockIdx.x * blockDim.x + threadIdx.x;
    const int y = blockIdx.y * blockDim.y + threadIdx.y;
    const int tx = threadIdx.x;
    const int ty = threadIdx.y;
    const bool inside = x < rows && y < cols;
    if (inside) {
        if (tx == 0 && x > 0) sharedarray[0][ty + 1] = field[(size_t)(x - 1) * cols + y];
        if (ty == 0 && y > 0) sharedarray[tx + 1][0] = field[(size_t)x * cols + y - 1];
        if (tx == SEED_TPB - 1 && x < rows - 1) sharedarray[SEED_TPB + 1][ty + 1] = field[(size_t)(x + 1) * cols + y];
        if (ty == SEED_TPB - 1 && y < cols - 1) sharedarray[tx + 1][SEED_TPB + 1] = field[(size_t)x * cols + y + 1];
    }
    sharedarray[tx + 1][ty + 1] = inside ? field[(size_t)x * cols + y] : 0.0f;
    double val = 4 * (double)sharedarray[tx + 1][ty + 1];
    __syncthreads();
    if (x > 0) val -= sharedarray[tx][ty + 1];
    if (y > 0) val -= sharedarray[tx + 1][ty];
    if (x < rows - 1) val -= sharedarray[tx + 2][ty + 1];
    if (y < cols - 1) val -= sharedarray[tx + 1][ty + 2];
    if (inside) {
        lapl[(size_t)x * cols + y] = (float)val;
        field[(size_t)x * cols + y] = (float)(field[(size_t)x * cols + y] - val * (double)coeff);
    }
}

// The tutorial's design made correct: a tile plus a one-cell halo in shared memory and the
// Laplacian written in the same pass, but double-buffered (read `in`, write `out`), so no block
// reads a cell another block has already updated; every boundary; any size. Block
// (SHARED_TILE_X, SHARED_TILE_Y), x along columns so that a warp reads a row (coalesced).
// `lapl` receives the Laplacian of `in`, the field before the step.
#define SHARED_TILE_X 32
#define SHARED_TILE_Y 8
// A cell of the grid or one of its ghosts one cell outside. Threads of a partial block farther
// out load nothing: their values are never used, and a periodic wrap from there would not land
// inside the grid.
template <int BC>
__device__ __forceinline__ float tile_value(const float* __restrict__ in, int r, int c, int rows, int cols) {
    if (r < -1 || r > rows || c < -1 || c > cols) return 0.0f;
    return sample<BC>(in, r, c, rows, cols);
}
template <int BC>
__device__ __forceinline__ void shared_step(const float* __restrict__ in, float* __restrict__ out,
                                            float* __restrict__ lapl, int rows, int cols, float coeff) {
    __shared__ float tile[SHARED_TILE_Y + 2][SHARED_TILE_X + 2];
    const int tx = threadIdx.x, ty = threadIdx.y;
    const int c = blockIdx.x * SHARED_TILE_X + tx;
    const int r = blockIdx.y * SHARED_TILE_Y + ty;
    // Every thread of the block loads, even outside the grid (ghost values), and none returns
    // before the barrier.
    tile[ty + 1][tx + 1] = tile_value<BC>(in, r, c, rows, cols);
    if (ty == 0) tile[0][tx + 1] = tile_value<BC>(in, r - 1, c, rows, cols);
    if (ty == SHARED_TILE_Y - 1) tile[SHARED_TILE_Y + 1][tx + 1] = tile_value<BC>(in, r + 1, c, rows, cols);
    if (tx == 0) tile[ty + 1][0] = tile_value<BC>(in, r, c - 1, rows, cols);
    if (tx == SHARED_TILE_X - 1) tile[ty + 1][SHARED_TILE_X + 1] = tile_value<BC>(in, r, c + 1, rows, cols);
    __syncthreads();
    if (r >= rows || c >= cols) return;
    // Partial blocks: a neighbour outside the grid was loaded by a thread outside the grid, as
    // the ghost value of this boundary, so the edge cells read the right value here too.
    const float mid = tile[ty + 1][tx + 1];
    const float l = 4.0f * mid - tile[ty][tx + 1] - tile[ty + 2][tx + 1] - tile[ty + 1][tx]
                    - tile[ty + 1][tx + 2];
    const size_t i = (size_t)r * cols + c;
    lapl[i] = l;
    out[i] = mid - coeff * l;
}

#define SHARED_STEP_KERNEL(NAME, BC, FN)                                                           \
    extern "C" __global__ void FN##_##NAME(const float* __restrict__ in, float* __restrict__ out, \
                                           float* __restrict__ lapl, int rows, int cols,          \
                                           float coeff) {                                         \
        FN<BC>(in, out, lapl, rows, cols, coeff);                                                 \
    }
HEATLAB_FOR_EACH_BOUNDARY(SHARED_STEP_KERNEL, shared_step)

// ---------------------------------------------------------------------------------------------
// Bandwidth-bound single step: float4 loads and stores, ROWS rows per thread (8 or 16: more rows
// per thread re-read fewer halo rows, fewer give more threads for small fields).
// Requires cols % 4 == 0 (the host falls back to jacobi_step otherwise). Block (32, y): a warp
// covers 128 consecutive columns of one row band; horizontal neighbours inside the warp come
// from shuffles, only the warp's two edge lanes load a scalar from the next quad.
// ---------------------------------------------------------------------------------------------
#define FULL_MASK 0xffffffffu

__device__ __forceinline__ int wrap_index(int i, int n) {
    int m = i % n;
    return m < 0 ? m + n : m;
}

// A row's quad, or the ghost quad for rows outside the grid (rows past the ghost row are only
// loaded, never used, and are wrapped or clamped into the grid).
template <int BC>
__device__ __forceinline__ float4 row_quad(const float4* __restrict__ f4, int r, int q, int rows, int quads) {
    if (BC == BC_DIRICHLET) {
        if (r < 0 || r >= rows) return make_float4(0.0f, 0.0f, 0.0f, 0.0f);
    } else if (BC == BC_NEUMANN) {
        r = r < 0 ? 0 : (r >= rows ? rows - 1 : r);
    } else {
        r = wrap_index(r, rows);
    }
    return __ldg(&f4[(size_t)r * quads + q]);
}

// The value left of column c0 (the quad's first column) in row r: the ghost at the left edge.
template <int BC>
__device__ __forceinline__ float left_of_quad(const float* __restrict__ f, int r, int c0, int cols, float first) {
    if (c0 > 0) return __ldg(&f[(size_t)r * cols + c0 - 1]);
    if (BC == BC_DIRICHLET) return 0.0f;
    if (BC == BC_NEUMANN) return first;
    return __ldg(&f[(size_t)r * cols + cols - 1]);
}

// The value right of column c0 + 3 in row r: the ghost at the right edge.
template <int BC>
__device__ __forceinline__ float right_of_quad(const float* __restrict__ f, int r, int c0, int cols, float last) {
    if (c0 + 4 < cols) return __ldg(&f[(size_t)r * cols + c0 + 4]);
    if (BC == BC_DIRICHLET) return 0.0f;
    if (BC == BC_NEUMANN) return last;
    return __ldg(&f[(size_t)r * cols]);
}

__device__ __forceinline__ float jacobi_cell(float mid, float up, float down, float left, float right, float coeff) {
    const float lapl = 4.0f * mid - up - down - left - right;
    return mid - coeff * lapl;
}

__device__ __forceinline__ float4 jacobi_quad(float4 mid, float4 up, float4 down, float left, float right, float coeff) {
    float4 out;
    out.x = jacobi_cell(mid.x, up.x, down.x, left, mid.y, coeff);
    out.y = jacobi_cell(mid.y, up.y, down.y, mid.x, mid.z, coeff);
    out.z = jacobi_cell(mid.z, up.z, down.z, mid.y, mid.w, coeff);
    out.w = jacobi_cell(mid.w, up.w, down.w, mid.z, right, coeff);
    return out;
}

template <int BC, int ROWS>
__device__ __forceinline__ void jacobi_step_vec4(const float* __restrict__ in, float* __restrict__ out,
                                                 int rows, int cols, float coeff) {
    const int quads = cols >> 2;
    const int q = blockIdx.x * blockDim.x + threadIdx.x;
    const int r0 = (blockIdx.y * blockDim.y + threadIdx.y) * ROWS;
    const int lane = threadIdx.x & 31;
    // No early return: every lane must reach the shuffles.
    const bool column_active = q < quads;
    const int qc = column_active ? q : quads - 1;
    const float4* in4 = reinterpret_cast<const float4*>(in);
    float4* out4 = reinterpret_cast<float4*>(out);
    const int c0 = qc * 4;
    // All loads first, so that ROWS + 2 of them (and the edge lanes' scalars) are in flight at
    // once: a single-step kernel is limited by memory latency unless many bytes are in flight.
    float4 column[ROWS + 2];
#pragma unroll
    for (int i = 0; i < ROWS + 2; ++i) column[i] = row_quad<BC>(in4, r0 - 1 + i, qc, rows, quads);
    const bool left_edge = lane == 0 || c0 == 0;
    const bool right_edge = lane == 31 || c0 + 4 >= cols;
    float left_outside[ROWS];
    float right_outside[ROWS];
#pragma unroll
    for (int i = 0; i < ROWS; ++i) {
        const int r = min(r0 + i, rows - 1);
        left_outside[i] = left_edge ? left_of_quad<BC>(in, r, c0, cols, column[i + 1].x) : 0.0f;
        right_outside[i] = right_edge ? right_of_quad<BC>(in, r, c0, cols, column[i + 1].w) : 0.0f;
    }
#pragma unroll
    for (int i = 0; i < ROWS; ++i) {
        const int r = r0 + i;
        const float4 mid = column[i + 1];
        float left = __shfl_up_sync(FULL_MASK, mid.w, 1);
        float right = __shfl_down_sync(FULL_MASK, mid.x, 1);
        if (left_edge) left = left_outside[i];
        if (right_edge) right = right_outside[i];
        if (r < rows && column_active) {
            out4[(size_t)r * quads + qc] = jacobi_quad(mid, column[i], column[i + 2], left, right, coeff);
        }
    }
}

#define VEC4_KERNEL(NAME, BC, ROWS)                                                               \
    extern "C" __global__ void jacobi_step_vec4r##ROWS##_##NAME(                                    \
        const float* __restrict__ in, float* __restrict__ out, int rows, int cols, float coeff) {   \
        jacobi_step_vec4<BC, ROWS>(in, out, rows, cols, coeff);                                     \
    }
HEATLAB_FOR_EACH_BOUNDARY(VEC4_KERNEL, 8)
HEATLAB_FOR_EACH_BOUNDARY(VEC4_KERNEL, 16)

// ---------------------------------------------------------------------------------------------
// Temporal blocking in registers: K steps per launch, one read and one write of the field.
//
// Each warp owns a strip of 32*W columns (W per lane) and a segment of `segment_rows` rows, and
// marches down it one row at a time. Level 0 is the field as loaded; level k (1..K) of row j is
// computed as soon as level k-1 holds rows j-1, j, j+1, so level k trails level 0 by k rows.
// Each level keeps its last three rows in registers; left and right neighbours come from warp
// shuffles. Values near the strip's sides and the segment's ends are computed redundantly
// (K/W lanes each side, K rows above and below) and discarded, so warps never talk to each
// other and no shared memory or barrier is needed. Requires cols % W == 0 and K % W == 0.
// heatlab instantiates W = 4 (the most work per shuffle). W = 2, with twice the warps, was
// measured slower on the H100 even at 2000x2000 (5.87 against 5.50 us per step).
//
// Boundaries: for Dirichlet and Neumann a cell on the grid's edge uses the ghost rule for its
// outside neighbour at every level (0, or itself); values computed outside the grid are never
// used. For periodic, rows and columns outside the grid are loaded wrapped, and the marching
// computes them exactly as the torus would, so no special case is needed.
// ---------------------------------------------------------------------------------------------
template <int W>
struct Lanes {
    float v[W];
};

template <int W>
__device__ __forceinline__ Lanes<W> zero_lanes() {
    Lanes<W> out;
#pragma unroll
    for (int e = 0; e < W; ++e) out.v[e] = 0.0f;
    return out;
}

template <int BC, int W>
__device__ __forceinline__ Lanes<W> load_level0(const float* __restrict__ f, int r, int c0, int rows, int cols) {
    if (BC == BC_PERIODIC) {
        r = wrap_index(r, rows);
        c0 = wrap_index(c0, cols);
    } else if (r < 0 || r >= rows || c0 < 0 || c0 >= cols) {
        return zero_lanes<W>();
    }
    const float* p = f + (size_t)r * cols + c0;
    Lanes<W> out;
    if constexpr (W == 4) {
        const float4 t = __ldg(reinterpret_cast<const float4*>(p));
        out.v[0] = t.x; out.v[1] = t.y; out.v[2] = t.z; out.v[3] = t.w;
    } else {
        const float2 t = __ldg(reinterpret_cast<const float2*>(p));
        out.v[0] = t.x; out.v[1] = t.y;
    }
    return out;
}

template <int W>
__device__ __forceinline__ void store_lanes(float* p, const Lanes<W>& value) {
    if constexpr (W == 4) {
        *reinterpret_cast<float4*>(p) = make_float4(value.v[0], value.v[1], value.v[2], value.v[3]);
    } else {
        *reinterpret_cast<float2*>(p) = make_float2(value.v[0], value.v[1]);
    }
}

template <int W>
__device__ __forceinline__ Lanes<W> jacobi_lanes(const Lanes<W>& mid, const Lanes<W>& up, const Lanes<W>& down,
                                                 float left, float right, float coeff) {
    Lanes<W> out;
#pragma unroll
    for (int e = 0; e < W; ++e) {
        const float l = e == 0 ? left : mid.v[e == 0 ? 0 : e - 1];
        const float r = e == W - 1 ? right : mid.v[e == W - 1 ? 0 : e + 1];
        out.v[e] = jacobi_cell(mid.v[e], up.v[e], down.v[e], l, r, coeff);
    }
    return out;
}

// One row of the march: load level 0's next row, then update every level by one row.
// CHECK_ROWS is false for warps whose rows never reach the grid's top or bottom row, which then
// skip the per-level ghost-row tests (measured: 5.50 -> 4.27 us per step at 2000x2000, with the
// row loop unrolled three times so that the window shifts become register renames). Testing
// the edge columns the same way made the edge strips' warps, which set the time of a one-wave
// launch, slower (4.67 us), so the column tests stay: they are loop-invariant.
template <int BC, int K, int W, bool CHECK_ROWS, bool CHECK_COLS>
__device__ __forceinline__ void temporal_row(Lanes<W> (&window)[K][3], const Lanes<W>& loaded, int j0, int rows,
                                             int cols, int c0, float coeff, float* __restrict__ out, bool writes,
                                             int r_start, int r_end) {
    window[0][0] = window[0][1];
    window[0][1] = window[0][2];
    window[0][2] = loaded;
#pragma unroll
    for (int k = 1; k <= K; ++k) {
        const int j = j0 - k;  // row of level k computed now
        const Lanes<W> mid = window[k - 1][1];
        Lanes<W> up = window[k - 1][0];
        Lanes<W> down = window[k - 1][2];
        float left = __shfl_up_sync(FULL_MASK, mid.v[W - 1], 1);
        float right = __shfl_down_sync(FULL_MASK, mid.v[0], 1);
        if (BC != BC_PERIODIC) {
            if (CHECK_ROWS) {
                if (j == 0) up = (BC == BC_DIRICHLET) ? zero_lanes<W>() : mid;
                if (j == rows - 1) down = (BC == BC_DIRICHLET) ? zero_lanes<W>() : mid;
            }
            if (CHECK_COLS) {
                if (c0 == 0) left = (BC == BC_DIRICHLET) ? 0.0f : mid.v[0];
                if (c0 + W == cols) right = (BC == BC_DIRICHLET) ? 0.0f : mid.v[W - 1];
            }
        }
        const Lanes<W> next = jacobi_lanes<W>(mid, up, down, left, right, coeff);
        if (k < K) {
            window[k][0] = window[k][1];
            window[k][1] = window[k][2];
            window[k][2] = next;
        } else if (writes && j >= r_start && j < r_end) {
            store_lanes<W>(out + (size_t)j * cols + c0, next);
        }
    }
}

// The march of one warp down its rows. The next row's load is issued AHEAD rows ahead (1 or 2)
// so that its latency overlaps the K updates.
template <int BC, int K, int W, int AHEAD, bool CHECK_ROWS, bool CHECK_COLS>
__device__ __forceinline__ void temporal_march(const float* __restrict__ in, float* __restrict__ out, int rows,
                                               int cols, int c0, float coeff, bool writes, int r_start, int r_end) {
    // window[k][0..2]: level k at rows (j-1, j, j+1) for the next level's row j.
    Lanes<W> window[K][3];
#pragma unroll
    for (int k = 0; k < K; ++k) {
        window[k][0] = window[k][1] = window[k][2] = zero_lanes<W>();
    }
    const int first = r_start - K;
    const int last = r_end - 1 + K;
    Lanes<W> prefetched = load_level0<BC, W>(in, first, c0, rows, cols);
    Lanes<W> prefetched2 = AHEAD == 2 ? load_level0<BC, W>(in, first + 1, c0, rows, cols) : zero_lanes<W>();
#pragma unroll 3
    for (int j0 = first; j0 <= last; ++j0) {
        const Lanes<W> loaded = prefetched;
        if (AHEAD == 2) {
            prefetched = prefetched2;
            prefetched2 = load_level0<BC, W>(in, j0 + 2, c0, rows, cols);
        } else {
            prefetched = load_level0<BC, W>(in, j0 + 1, c0, rows, cols);
        }
        temporal_row<BC, K, W, CHECK_ROWS, CHECK_COLS>(window, loaded, j0, rows, cols, c0, coeff, out, writes,
                                                       r_start, r_end);
    }
}

// SPLIT_COLS: warps whose strip reaches neither the first nor the last column skip the
// per-level edge-column tests too. Off in the kernels for small fields: at 2000x2000 the edge
// strips' warps, which set the time of a one-wave launch, became slower (4.67 against 4.27 us).
template <int BC, int K, int W, int AHEAD, bool SPLIT_COLS>
__device__ __forceinline__ void jacobi_temporal(const float* __restrict__ in, float* __restrict__ out,
                                                int rows, int cols, float coeff, int segment_rows) {
    constexpr int HALO_LANES = K / W;
    constexpr int OUT_COLS = 32 * W - 2 * K;
    const int lane = threadIdx.x & 31;
    const int strip = blockIdx.x;
    const int segment = blockIdx.y * blockDim.y + threadIdx.y;
    const int r_start = segment * segment_rows;
    if (r_start >= rows) return;  // whole warp leaves together (threadIdx.y is per warp)
    const int r_end = min(r_start + segment_rows, rows);
    const int strip_first = strip * OUT_COLS - K;  // first column of the warp's strip
    const int c0 = strip_first + lane * W;         // first column of this lane
    const bool writes = lane >= HALO_LANES && lane < 32 - HALO_LANES && c0 < cols;
    // Rows computed are r_start - 2K .. r_end - 1 + K: do they include the grid's first or last row?
    const bool touches_edge = r_start - 2 * K <= 0 || r_end - 1 + K >= rows - 1;
    const bool touches_cols = !SPLIT_COLS || strip_first <= 0 || strip_first + 32 * W >= cols;
    if (touches_edge) {
        if (touches_cols) {
            temporal_march<BC, K, W, AHEAD, true, true>(in, out, rows, cols, c0, coeff, writes, r_start, r_end);
        } else {
            temporal_march<BC, K, W, AHEAD, true, false>(in, out, rows, cols, c0, coeff, writes, r_start, r_end);
        }
    } else if (touches_cols) {
        temporal_march<BC, K, W, AHEAD, false, true>(in, out, rows, cols, c0, coeff, writes, r_start, r_end);
    } else {
        temporal_march<BC, K, W, AHEAD, false, false>(in, out, rows, cols, c0, coeff, writes, r_start, r_end);
    }
}

#define TEMPORAL_KERNEL(NAME, BC, K, W)                                                           \
    extern "C" __global__ void __launch_bounds__(128) jacobi_temporal_k##K##w##W##_##NAME(          \
        const float* __restrict__ in, float* __restrict__ out, int rows, int cols, float coeff,   \
        int segment_rows) {                                                                       \
        jacobi_temporal<BC, K, W, 1, false>(in, out, rows, cols, coeff, segment_rows);            \
    }
HEATLAB_FOR_EACH_BOUNDARY(TEMPORAL_KERNEL, 4, 4)
HEATLAB_FOR_EACH_BOUNDARY(TEMPORAL_KERNEL, 8, 4)

// For fields of many waves (8192x8192 and up): four blocks per SM instead of three (at most 128
// registers a thread instead of 139: more warps to hide the shuffles' and loads' latency), and
// interior strips without edge-column tests; loads AHEAD rows ahead.
#define TEMPORAL_PACKED_KERNEL(NAME, BC, K, W, AHEAD)                                             \
    extern "C" __global__ void __launch_bounds__(128, 4) jacobi_temporal_packed##AHEAD##_k##K##w##W##_##NAME( \
        const float* __restrict__ in, float* __restrict__ out, int rows, int cols, float coeff,   \
        int segment_rows) {                                                                       \
        jacobi_temporal<BC, K, W, AHEAD, true>(in, out, rows, cols, coeff, segment_rows);         \
    }
HEATLAB_FOR_EACH_BOUNDARY(TEMPORAL_PACKED_KERNEL, 8, 4, 1)
HEATLAB_FOR_EACH_BOUNDARY(TEMPORAL_PACKED_KERNEL, 8, 4, 2)
