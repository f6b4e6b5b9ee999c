
// ---------------------------------------------------------------------------------------------
// The field resident on chip (appended to stencil.cu and diffusion.cu, whose BC_*, FULL_MASK,
// wrap_index and jacobi_quad it uses): one persistent launch takes many steps of a field small
// enough to live in the registers of all SMs at once (2000x2000 is 16 MB; an H100's 132 SMs
// hold 33 MB of registers), so a step reads no memory at all.
//
// The grid is cut into tiles of 128 - 2H columns (strips) by `band_rows` rows (bands), one
// block per tile and every block resident at once (the host launches it cooperatively, which
// the driver refuses when the blocks would not all fit). A block holds its tile plus a ring of
// H cells around it: lane l of warp w holds 4 columns and RESIDENT_ROWS rows in registers.
// Each step, left and right neighbours come from shuffles, the rows above and below a warp's
// from shared memory (double-buffered by the step's parity, so one barrier per step), and
// every held cell is updated in place (the old row above is kept aside).
// The ring's values go wrong from its outer edge inwards, one cell per step, so after H steps
// the tile itself is still exact; then each block writes the H-wide border of its tile to
// global memory, all blocks meet at a grid barrier, and each reloads its ring from there.
// Exchanges alternate between `out` and `in` (`in` is scratch once loaded), so a block that
// runs ahead never overwrites what a slower one is still reading; the last values go to `out`.
//
// Bands are `band_rows = warps * RESIDENT_ROWS - 2H` rows, laid from the top, but the last band
// holds the grid's last `band_rows` rows (the one before it is cut short): so the grid's first
// row is always row H of the top band's first warp and its last row row RESIDENT_ROWS - 1 - H
// of the bottom band's last warp, and the ghost rule of those rows is applied at indices known
// when compiling. (Testing each row against the grid's edges at run time kept dozens of
// predicates alive across the update and spilled hundreds of bytes a thread.)
// Boundaries: as in the temporal kernel, a cell on the grid's edge uses the ghost rule for its
// outside neighbour; cells held outside the grid are never used. Periodic tiles load wrapped
// values and step them exactly as the torus would.
// Only the top and the bottom band may hold the grid's first or last row, rings included (a
// ring stepping an edge row without its ghost rule would carry the error inwards): the host
// lays out bands longer than H, and a band cut short before the last band longer than H.
// Requires cols % 4 == 0, H % 4 == 0, warps * RESIDENT_ROWS == band_rows + 2H, two bands or more.
// ---------------------------------------------------------------------------------------------
#define RESIDENT_ROWS 19
// 16 warps, one block per SM: 4 warps per scheduler share its 16K registers, so 128 registers
// a thread, 76 of them the cells. (19 warps of 16 rows got 96 registers and 512 bytes of local
// memory a thread: 8.5 us per step at 2000x2000. 16 warps of 19 rows with the edge rows tested
// at run time used 776 bytes of local memory: 5.2 us per step on the H100.) 2000x2000 needs 16
// warps of 19 rows (tiles of 288 rows + 2H on 126 SMs); the host checks that a field's tiles fit.
#define RESIDENT_MAX_THREADS 512

// Every block of the launch waits here until all have arrived; global writes before it are
// visible to every block after it. `barrier[0]` counts arrivals (reset by the last one),
// `barrier[1]` is the generation the waiters watch. Deadlocks unless all blocks are resident.
__device__ __forceinline__ void resident_grid_barrier(unsigned int* barrier, unsigned int blocks) {
    __syncthreads();
    if (threadIdx.x == 0 && threadIdx.y == 0) {
        volatile unsigned int* generation = barrier + 1;
        const unsigned int seen = *generation;
        __threadfence();
        if (atomicAdd(barrier, 1u) == blocks - 1) {
            atomicExch(barrier, 0u);
            __threadfence();
            atomicAdd(barrier + 1, 1u);
        } else {
            while (*generation == seen) {
            }
        }
        __threadfence();
    }
    __syncthreads();
}

// A lane's four cells of row r from `f` (through L2: other blocks wrote them during the launch),
// wrapped for periodic grids, 0 outside the grid otherwise (such cells are never used).
template <int BC>
__device__ __forceinline__ float4 resident_load(const float* f, int r, int c0, int rows, int cols) {
    if (BC == BC_PERIODIC) {
        r = wrap_index(r, rows);
        c0 = wrap_index(c0, cols);
    } else if (r < 0 || r >= rows || c0 < 0 || c0 >= cols) {
        return make_float4(0.0f, 0.0f, 0.0f, 0.0f);
    }
    return __ldcg(reinterpret_cast<const float4*>(f + (size_t)r * cols + c0));
}

// One step of a thread's cells, given the old rows just above and below them (`below` is read
// from shared memory only for the last row, so that it holds no registers meanwhile). `top`:
// the thread's row H is the grid's first row; `bottom`: its row RESIDENT_ROWS - 1 - H is the
// grid's last (see the band layout above); `left_edge`, `right_edge`: its cells are the grid's
// first or last four columns.
template <int BC, int H>
__device__ __forceinline__ void resident_update(float4 (&v)[RESIDENT_ROWS], float4 above, const float4* below,
                                                bool top, bool bottom, bool left_edge, bool right_edge, float coeff) {
    const float4 zero = make_float4(0.0f, 0.0f, 0.0f, 0.0f);
    float4 previous = above;  // the old value of the row above row i
#pragma unroll
    for (int i = 0; i < RESIDENT_ROWS; ++i) {
        const float4 mid = v[i];
        float4 up = previous;
        // Every index stays inside the array even where the row below comes from `below`.
        const float4 next_row = v[i + 1 < RESIDENT_ROWS ? i + 1 : RESIDENT_ROWS - 1];
        float4 down = i + 1 < RESIDENT_ROWS ? next_row : (below != nullptr ? *below : zero);
        float left = __shfl_up_sync(FULL_MASK, mid.w, 1);
        float right = __shfl_down_sync(FULL_MASK, mid.x, 1);
        if (BC != BC_PERIODIC) {
            if (i == H && top) up = BC == BC_DIRICHLET ? zero : mid;
            if (i == RESIDENT_ROWS - 1 - H && bottom) down = BC == BC_DIRICHLET ? zero : mid;
            if (left_edge) left = BC == BC_DIRICHLET ? 0.0f : mid.x;
            if (right_edge) right = BC == BC_DIRICHLET ? 0.0f : mid.w;
        }
        previous = mid;
        v[i] = jacobi_quad(mid, up, down, left, right, coeff);
    }
}

// Where a thread's cells lie: its first row and column, and its tile's owned rectangle.
struct ResidentPlace {
    int r0, c0;
    int own_r0, own_r1, own_c0, own_c1;
};

// Whether row r of this lane is in the block's own tile (else in its ring, or past it).
__device__ __forceinline__ bool resident_owned(const ResidentPlace& p, int r) {
    return r >= p.own_r0 && r < p.own_r1 && p.c0 >= p.own_c0 && p.c0 < p.own_c1;
}

// Writes the H-wide border of the block's own tile to `buffer`, for the neighbours' rings.
template <int H>
__device__ __forceinline__ void resident_publish(const float4 (&v)[RESIDENT_ROWS], const ResidentPlace& p,
                                                 float* buffer, int cols) {
    const bool border_cols = p.c0 < p.own_c0 + H || p.c0 >= p.own_c1 - H;
#pragma unroll
    for (int i = 0; i < RESIDENT_ROWS; ++i) {
        const int r = p.r0 + i;
        const bool border = border_cols || r < p.own_r0 + H || r >= p.own_r1 - H;
        if (border && resident_owned(p, r)) {
            __stcg(reinterpret_cast<float4*>(buffer + (size_t)r * cols + p.c0), v[i]);
        }
    }
}

// Reloads every held cell outside the block's own tile from `buffer`.
template <int BC>
__device__ __forceinline__ void resident_reload(float4 (&v)[RESIDENT_ROWS], const ResidentPlace& p,
                                                const float* buffer, int rows, int cols) {
#pragma unroll
    for (int i = 0; i < RESIDENT_ROWS; ++i) {
        const int r = p.r0 + i;
        if (!resident_owned(p, r)) v[i] = resident_load<BC>(buffer, r, p.c0, rows, cols);
    }
}

template <int BC, int H>
__device__ __forceinline__ void jacobi_resident(float* in, float* out, int rows, int cols, float coeff, int steps,
                                                int band_rows, unsigned int* barrier) {
    constexpr int OWN_COLS = 128 - 2 * H;
    // [parity][top, bottom][warp][lane]: each warp's first and last rows, for its neighbours.
    extern __shared__ float4 resident_edges[];
    const int lane = threadIdx.x;
    const int warp = threadIdx.y;
    const int warps = blockDim.y;
    ResidentPlace p;
    const bool last_band = blockIdx.y == gridDim.y - 1;
    p.own_r0 = last_band ? rows - band_rows : blockIdx.y * band_rows;
    p.own_r1 = last_band ? rows : min(p.own_r0 + band_rows, rows - band_rows);
    p.own_c0 = blockIdx.x * OWN_COLS;
    p.own_c1 = min(p.own_c0 + OWN_COLS, cols);
    p.r0 = p.own_r0 - H + warp * RESIDENT_ROWS;
    p.c0 = p.own_c0 - H + lane * 4;
    // Which edges this thread's cells touch (their ghost rule is applied in resident_update).
    const bool grid_top = blockIdx.y == 0 && warp == 0;
    const bool grid_bottom = last_band && warp == warps - 1;
    const bool left_edge = p.c0 == 0;
    const bool right_edge = p.c0 + 4 == cols;

    float4 v[RESIDENT_ROWS];
#pragma unroll
    for (int i = 0; i < RESIDENT_ROWS; ++i) v[i] = resident_load<BC>(in, p.r0 + i, p.c0, rows, cols);

    const float4 zero = make_float4(0.0f, 0.0f, 0.0f, 0.0f);
    const unsigned int blocks = gridDim.x * gridDim.y;
    int done = 0;
    int exchanges = 0;
    while (true) {
        const int round = min(H, steps - done);
        for (int s = 0; s < round; ++s) {
            float4* top = resident_edges + ((done + s) & 1) * 2 * warps * 32;
            float4* bottom = top + warps * 32;
            top[warp * 32 + lane] = v[0];
            bottom[warp * 32 + lane] = v[RESIDENT_ROWS - 1];
            __syncthreads();
            // Outside the tile's first and last warps: the ring's outer edge, never used.
            const float4 above = warp > 0 ? bottom[(warp - 1) * 32 + lane] : zero;
            const float4* below = warp + 1 < warps ? &top[(warp + 1) * 32 + lane] : nullptr;
            resident_update<BC, H>(v, above, below, grid_top, grid_bottom, left_edge, right_edge, coeff);
        }
        done += round;
        if (done >= steps) break;
        ++exchanges;
        float* buffer = (exchanges & 1) ? out : in;
        resident_publish<H>(v, p, buffer, cols);
        resident_grid_barrier(barrier, blocks);
        resident_reload<BC>(v, p, buffer, rows, cols);
    }
    // The last exchange went through `out`: wait until every block has reloaded from it.
    if (exchanges & 1) resident_grid_barrier(barrier, blocks);
#pragma unroll
    for (int i = 0; i < RESIDENT_ROWS; ++i) {
        const int r = p.r0 + i;
        if (resident_owned(p, r)) *reinterpret_cast<float4*>(out + (size_t)r * cols + p.c0) = v[i];
    }
}

#define RESIDENT_KERNEL(NAME, BC, H)                                                              \
    extern "C" __global__ void __launch_bounds__(RESIDENT_MAX_THREADS, 1) jacobi_resident_h##H##_##NAME( \
        float* in, float* out, int rows, int cols, float coeff, int steps, int band_rows,         \
        unsigned int* barrier) {                                                                  \
        jacobi_resident<BC, H>(in, out, rows, cols, coeff, steps, band_rows, barrier);            \
    }
HEATLAB_FOR_EACH_BOUNDARY(RESIDENT_KERNEL, 4)
HEATLAB_FOR_EACH_BOUNDARY(RESIDENT_KERNEL, 8)
