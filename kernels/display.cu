// heatlab display kernels: reduce a field to the size it is shown at (the host picks the range
// and colours the few reduced values), and its statistics, so that only small arrays cross to
// the host. Compiled by NVRTC with --fmad=false; block_mean mirrors src/compute/preview.rs so
// that GPU and CPU previews are identical.

// Block means: each pixel the mean of its factor x factor block of cells (partial blocks at the
// right and bottom edges average what they hold), summed in double cell by cell in row-major
// order and divided once, exactly as the CPU does.
//
// A block owns MEAN_PIXELS consecutive pixels of one output row. Its first warp sums, one pixel
// a thread, while the other MEAN_STAGERS threads stage cells into shared memory with coalesced
// loads. A stage holds `units` units of each pixel; a unit is `width` cells of one row: a whole
// row of the pixel's block when factor <= MEAN_STAGE_WIDTH (then a stage is units = rows of the
// block), else a chunk of MEAN_STAGE_WIDTH cells of one row (one unit a stage). Stages are
// double-buffered, so the stagers load the next while the first warp sums this one, with one
// barrier per stage. A pixel's cells of a unit lie together, `stride` = width | 1 floats from
// the next pixel's: an odd stride puts the 32 summing threads' reads in 32 different banks.
// The Laplacian's kernels compute each cell's Laplacian as it is staged (laplacian_at, as the
// Laplacian kernel of diffusion.cu does), so no full-size Laplacian is written or read back.
#define MEAN_PIXELS 32
#define MEAN_STAGERS 128
#define MEAN_THREADS (MEAN_PIXELS + MEAN_STAGERS)
// Cells of each pixel in a stage, at most (width * units).
#define MEAN_STAGE_WIDTH 32
// Cells each stager loads per stage: MEAN_PIXELS * MEAN_STAGE_WIDTH / MEAN_STAGERS.
#define MEAN_SLOTS 8
// Floats of one pixel in a stage's buffer, at most: units * (width | 1) is largest for width 2
// (16 units of 3 floats).
#define MEAN_PIXEL_FLOATS 48
// The layer argument of the template for the field itself (the Laplacian's take a BC_*).
#define LAYER_FIELD -1

// Cell (r, c) of the layer: loads only, no branch between them (see sample's LOAD_ALWAYS).
template <int LAYER>
__device__ __forceinline__ float layer_value(const float* __restrict__ f, int r, int c, int rows, int cols) {
    if (LAYER == LAYER_FIELD) return __ldg(&f[(size_t)r * cols + c]);
    return laplacian_at<LAYER, true>(f, r, c, rows, cols);
}

// n / d for 0 <= n < 4096 and d >= 1, given inverse = 1.0f / d: exact, since (n + 0.5) / d lies
// at least 0.5 / d from an integer and its float product errs by less than n / d * 2^-23, and
// far cheaper than an integer division by a number known only at run time.
__device__ __forceinline__ int small_quotient(int n, float inverse) {
    return __float2int_rz(__fmul_rn((float)n + 0.5f, inverse));
}

// The cells of one stage staged by one stager: slot i of `slot_col` is the cell's column from
// the stage's first column (-1: no cell), of `slot_unit` its unit, of `slot_at` its place in
// the buffer. A slot without a cell in the grid reads (safe_r, safe_c), a cell of the grid, and
// stores nothing that is summed: every slot loads, with no branch between the loads, so that
// all of the stager's loads are in flight together.
template <int LAYER>
__device__ __forceinline__ void stage_cells(const float* __restrict__ f, float* __restrict__ buffer, int rows,
                                            int cols, int row, int row_end, int first_col, int safe_r, int safe_c,
                                            const int (&slot_unit)[MEAN_SLOTS], const int (&slot_col)[MEAN_SLOTS],
                                            const int (&slot_at)[MEAN_SLOTS]) {
    float values[MEAN_SLOTS];
#pragma unroll
    for (int i = 0; i < MEAN_SLOTS; ++i) {
        const int r = row + slot_unit[i];
        const int c = first_col + slot_col[i];
        const bool inside = slot_col[i] >= 0 && r < row_end && c < cols;
        values[i] = layer_value<LAYER>(f, inside ? r : safe_r, inside ? c : safe_c, rows, cols);
    }
#pragma unroll
    for (int i = 0; i < MEAN_SLOTS; ++i) {
        if (slot_col[i] >= 0) buffer[slot_at[i]] = values[i];
    }
}

template <int LAYER>
__device__ __forceinline__ void block_mean(const float* __restrict__ f, float* __restrict__ out, int rows,
                                           int cols, int factor, int out_rows, int out_cols) {
    __shared__ float staged[2][MEAN_PIXELS * MEAN_PIXEL_FLOATS];
    const int groups = (out_cols + MEAN_PIXELS - 1) / MEAN_PIXELS;
    const int out_row = blockIdx.x / groups;
    const int first_pixel = (blockIdx.x - out_row * groups) * MEAN_PIXELS;
    if (out_row >= out_rows) return;  // the whole block: no barrier is left waiting
    const int width = min(factor, MEAN_STAGE_WIDTH);
    const int chunks = (factor + width - 1) / width;
    const int units = factor <= MEAN_STAGE_WIDTH ? MEAN_STAGE_WIDTH / factor : 1;
    const int stride = width | 1;
    const int r0 = out_row * factor;
    const int row_end = r0 + min(factor, rows - r0);
    const int c0 = first_pixel * factor;
    const int stages = ((row_end - r0) * chunks + units - 1) / units;
    const bool stager = threadIdx.x >= MEAN_PIXELS;
    // A stager's cells, the same in every stage (see stage_cells).
    int slot_unit[MEAN_SLOTS], slot_col[MEAN_SLOTS], slot_at[MEAN_SLOTS];
    const int unit_cells = MEAN_PIXELS * width;
    const float inverse_unit_cells = 1.0f / (float)unit_cells;
    const float inverse_width = 1.0f / (float)width;
#pragma unroll
    for (int i = 0; i < MEAN_SLOTS; ++i) {
        // 0 <= j < MEAN_PIXELS * MEAN_STAGE_WIDTH = 1024 for a stager (the summing warp's slots
        // hold no cell).
        const int j = max((int)threadIdx.x - MEAN_PIXELS, 0) + i * MEAN_STAGERS;
        const int unit = small_quotient(j, inverse_unit_cells);
        const int pixel = small_quotient(j - unit * unit_cells, inverse_width);
        const int k = j - unit * unit_cells - pixel * width;
        slot_unit[i] = unit;
        slot_col[i] = stager && unit < units ? pixel * factor + k : -1;
        slot_at[i] = (unit * MEAN_PIXELS + pixel) * stride + k;
    }
    // The largest column of a stage's cells from its first.
    const int last_slot_col = (MEAN_PIXELS - 1) * factor + width - 1;
    // Summing thread p's pixel.
    const int pixel = threadIdx.x;
    const bool owns = !stager && first_pixel + pixel < out_cols;
    const int pixel_c0 = c0 + pixel * factor;
    double sum = 0.0;
    // Step s: the stagers stage stage s into buffer s & 1 while the first warp sums stage s - 1
    // from the other buffer, which the stagers write again only after the barrier of step s.
    for (int step = 0; step <= stages; ++step) {
        const int stage = stager ? step : step - 1;
        const int unit = stage * units;
        const int row_offset = chunks == 1 ? unit : unit / chunks;
        const int row = r0 + row_offset;
        const int chunk = unit - row_offset * chunks;
        float* buffer = staged[stage & 1];
        if (stager) {
            const int first_col = c0 + chunk * width;
            // A stage whose cells and their neighbours all lie inside the grid (most of a large
            // field's) computes its Laplacians without looking for ghosts: the same values.
            const bool inside = LAYER != LAYER_FIELD && row > 0 && row + units < rows && first_col > 0 &&
                                first_col + last_slot_col + 1 < cols;
            // A slot without a cell reads the stage's first (the block's first row in a
            // partial stage) instead, which lies inside when the stage does.
            if (stage < stages && inside) {
                stage_cells<BC_INSIDE>(f, buffer, rows, cols, row, row_end, first_col, row, first_col,
                                       slot_unit, slot_col, slot_at);
            } else if (stage < stages) {
                stage_cells<LAYER>(f, buffer, rows, cols, row, row_end, first_col, r0, c0, slot_unit,
                                   slot_col, slot_at);
            }
        } else if (stage >= 0 && owns) {
            // Cells of this pixel in each unit: the chunk's, cut at the pixel's and grid's edges.
            const int first = chunk * width;
            const int n = min(min(width, factor - first), cols - pixel_c0 - first);
            for (int u = 0; u < units && row + u < row_end; ++u) {
                const float* cells = buffer + (u * MEAN_PIXELS + pixel) * stride;
                for (int k = 0; k < n; ++k) sum += (double)cells[k];
            }
        }
        __syncthreads();
    }
    if (owns) {
        const double count = (double)(row_end - r0) * (double)min(factor, cols - pixel_c0);
        out[(size_t)out_row * out_cols + first_pixel + pixel] = (float)(sum / count);
    }
}

// BLOCKS blocks per SM at least: the field's fit 8 (48 registers, none spilled), the
// Laplacian's, with five loads a cell, 7 (56 registers).
#define BLOCK_MEAN_KERNEL(NAME, LAYER, BLOCKS)                                                      \
    extern "C" __global__ void __launch_bounds__(MEAN_THREADS, BLOCKS) block_mean_##NAME(           \
        const float* __restrict__ f, float* __restrict__ out, int rows, int cols, int factor,       \
        int out_rows, int out_cols) {                                                               \
        block_mean<LAYER>(f, out, rows, cols, factor, out_rows, out_cols);                          \
    }
BLOCK_MEAN_KERNEL(field, LAYER_FIELD, 8)
// block_mean_laplacian_<boundary>, one per boundary (HEATLAB_FOR_EACH_BOUNDARY, stencil.cu).
#define BLOCK_MEAN_LAPLACIAN_KERNEL(NAME, BC, BLOCKS) BLOCK_MEAN_KERNEL(laplacian_##NAME, BC, BLOCKS)
HEATLAB_FOR_EACH_BOUNDARY(BLOCK_MEAN_LAPLACIAN_KERNEL, 7)

// Total, minimum and maximum of a field, as partial results per block: the host adds the
// STATS_BLOCKS partials in order. Sums in double (like the CPU's statistics); fminf/fmaxf skip
// NaN as Rust's f32::min/max do. The launch is fixed (STATS_BLOCKS x STATS_THREADS), so a given
// field always gives the same total.
#define STATS_THREADS 256
extern "C" __global__ void __launch_bounds__(STATS_THREADS)
field_stats(const float* __restrict__ field, long long n, double* __restrict__ partial) {
    __shared__ double sums[STATS_THREADS];
    __shared__ float lows[STATS_THREADS];
    __shared__ float highs[STATS_THREADS];
    double sum = 0.0;
    float low = __int_as_float(0x7f800000), high = __int_as_float(0xff800000);  // +inf, -inf
    const long long stride = (long long)gridDim.x * STATS_THREADS;
    for (long long i = (long long)blockIdx.x * STATS_THREADS + threadIdx.x; i < n; i += stride) {
        const float v = field[i];
        sum += (double)v;
        low = fminf(low, v);
        high = fmaxf(high, v);
    }
    sums[threadIdx.x] = sum;
    lows[threadIdx.x] = low;
    highs[threadIdx.x] = high;
    __syncthreads();
    for (int half = STATS_THREADS / 2; half > 0; half /= 2) {
        if (threadIdx.x < half) {
            sums[threadIdx.x] += sums[threadIdx.x + half];
            lows[threadIdx.x] = fminf(lows[threadIdx.x], lows[threadIdx.x + half]);
            highs[threadIdx.x] = fmaxf(highs[threadIdx.x], highs[threadIdx.x + half]);
        }
        __syncthreads();
    }
    if (threadIdx.x == 0) {
        partial[3 * blockIdx.x + 0] = sums[0];
        partial[3 * blockIdx.x + 1] = (double)lows[0];
        partial[3 * blockIdx.x + 2] = (double)highs[0];
    }
}
