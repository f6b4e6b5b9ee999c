// heatlab heat-problem kernels (materials, heaters, held cells, the four sides), compiled at run
// time by NVRTC. They evaluate the CPU reference's step (src/problem/step.rs) bit for bit:
//
//   face to a neighbour of kind j and value u:  a_ij * (u - v)
//   face at a side that does not wrap:          side_gain * (outside - v) + side_bias
//   sum = ((left + right) + top) + bottom
//   new = (v + sum) + source_i;  held cells keep v
//
// Every operation is an explicitly rounded intrinsic (__fmul_rn, __fadd_rn, __fsub_rn), which
// NVRTC never contracts into a fused multiply-add, whatever the compile options.
//
// Layout: row-major float32 field and uint8 kind map, `rows` x `cols`. The tables are the
// packed f32 array of StepTables::packed for `n` kinds:
//   pair (n*n) | source (n) | side_gain (4n) | side_bias (4n) | outside (4) | held (n, 0 or 1)
// Sides are indexed left 0, right 1, top 2, bottom 3. Each kernel copies the tables into
// dynamic shared memory (the launch gives table_floats(n) * 4 bytes).
//
// PR: top and bottom wrap; PC: left and right wrap. Each kernel is instantiated for the four
// combinations, suffixed _pr<0|1>_pc<0|1>. The blocked kernels come inlined (k4, k8) and
// compact (k4c, k8c: the mixed-kind path called, not inlined per level).

#define FULL_MASK 0xffffffffu
#define SIDE_LEFT 0
#define SIDE_RIGHT 1
#define SIDE_TOP 2
#define SIDE_BOTTOM 3

struct Tables {
    const float* pair;
    const float* source;
    const float* side_gain;
    const float* side_bias;
    const float* outside;
    const float* held;
    int n;
};

extern __shared__ float shared_tables[];

// Copies the packed tables into shared memory; every thread of the block must call it.
__device__ __forceinline__ Tables load_tables(const float* __restrict__ tables, int n) {
    const int total = n * n + 10 * n + 4;
    const int threads = blockDim.x * blockDim.y;
    for (int i = threadIdx.y * blockDim.x + threadIdx.x; i < total; i += threads) {
        shared_tables[i] = __ldg(&tables[i]);
    }
    __syncthreads();
    Tables t;
    t.n = n;
    t.pair = shared_tables;
    t.source = t.pair + n * n;
    t.side_gain = t.source + n;
    t.side_bias = t.side_gain + 4 * n;
    t.outside = t.side_bias + 4 * n;
    t.held = t.outside + 4;
    return t;
}

__device__ __forceinline__ int wrap_index(int i, int n) {
    int m = i % n;
    return m < 0 ? m + n : m;
}

// One face: to a neighbour (kind j, value u) or, where `side` is set, to the outside.
__device__ __forceinline__ float face(const Tables& t, int i, float v, float u, int j, bool side, int which) {
    if (side) {
        const int at = which * t.n + i;
        return __fadd_rn(__fmul_rn(t.side_gain[at], __fsub_rn(t.outside[which], v)), t.side_bias[at]);
    }
    return __fmul_rn(t.pair[i * t.n + j], __fsub_rn(u, v));
}

// What one cell around it looks like: values, kinds, and which faces are sides.
struct Around {
    float left, right, top, bottom;
    int kl, kr, kt, kb;
    bool sl, sr, st, sb;
};

__device__ __forceinline__ float update_cell(const Tables& t, int i, float v, const Around& a) {
    if (t.held[i] != 0.0f) return v;
    const float fl = face(t, i, v, a.left, a.kl, a.sl, SIDE_LEFT);
    const float fr = face(t, i, v, a.right, a.kr, a.sr, SIDE_RIGHT);
    const float ft = face(t, i, v, a.top, a.kt, a.st, SIDE_TOP);
    const float fb = face(t, i, v, a.bottom, a.kb, a.sb, SIDE_BOTTOM);
    const float sum = __fadd_rn(__fadd_rn(__fadd_rn(fl, fr), ft), fb);
    return __fadd_rn(__fadd_rn(v, sum), t.source[i]);
}

__device__ __forceinline__ int byte_of(unsigned word, int e) { return (word >> (8 * e)) & 0xff; }

// ---------------------------------------------------------------------------------------------
// One step, any width: block (32, 8), each thread one column and SCALAR_ROWS rows.
// ---------------------------------------------------------------------------------------------
#define SCALAR_ROWS 4

template <bool PR, bool PC>
__device__ __forceinline__ void materials_step_scalar(const float* __restrict__ in, float* __restrict__ out,
                                                      const unsigned char* __restrict__ map,
                                                      const float* __restrict__ tables, int n, int rows, int cols,
                                                      int block_y) {
    const Tables t = load_tables(tables, n);
    const int c = blockIdx.x * blockDim.x + threadIdx.x;
    const int r0 = (block_y * blockDim.y + threadIdx.y) * SCALAR_ROWS;
    if (c >= cols) return;
    const int r_end = min(r0 + SCALAR_ROWS, rows);
    // Where a side does not wrap, the neighbour index points at the cell itself (unused).
    const int cl = c > 0 ? c - 1 : (PC ? cols - 1 : c);
    const int cr = c + 1 < cols ? c + 1 : (PC ? 0 : c);
    for (int r = r0; r < r_end; ++r) {
        const size_t row = (size_t)r * cols;
        const int ru = r > 0 ? r - 1 : (PR ? rows - 1 : r);
        const int rd = r + 1 < rows ? r + 1 : (PR ? 0 : r);
        const size_t up = (size_t)ru * cols;
        const size_t down = (size_t)rd * cols;
        Around a;
        a.left = __ldg(&in[row + cl]);
        a.right = __ldg(&in[row + cr]);
        a.top = __ldg(&in[up + c]);
        a.bottom = __ldg(&in[down + c]);
        a.kl = __ldg(&map[row + cl]);
        a.kr = __ldg(&map[row + cr]);
        a.kt = __ldg(&map[up + c]);
        a.kb = __ldg(&map[down + c]);
        a.sl = !PC && c == 0;
        a.sr = !PC && c == cols - 1;
        a.st = !PR && r == 0;
        a.sb = !PR && r == rows - 1;
        out[row + c] = update_cell(t, __ldg(&map[row + c]), __ldg(&in[row + c]), a);
    }
}

// ---------------------------------------------------------------------------------------------
// One step, cols % 4 == 0: block (128, 1), each thread a quad of four columns and VEC_ROWS rows,
// every load issued before any arithmetic so that enough bytes are in flight. Left and right
// neighbours (values and kinds) come from warp shuffles; the lanes at a warp's or the grid's
// edges load theirs.
// ---------------------------------------------------------------------------------------------
#define VEC_ROWS 8

template <bool PR>
__device__ __forceinline__ int row_of(int r, int rows) {
    return PR ? wrap_index(r, rows) : min(max(r, 0), rows - 1);
}

// The four cells of a quad (values `mid`, kinds `mk`) from the rows above and below and the
// values and kinds left of the first and right of the last.
__device__ __forceinline__ float4 update_quad(const Tables& t, float4 mid, unsigned mk, float4 up, unsigned uk,
                                              float4 down, unsigned dk, float left, int kl, float right, int kr,
                                              bool side_left, bool side_right, bool side_top, bool side_bottom) {
    const float m[4] = {mid.x, mid.y, mid.z, mid.w};
    const float u[4] = {up.x, up.y, up.z, up.w};
    const float d[4] = {down.x, down.y, down.z, down.w};
    float o[4];
#pragma unroll
    for (int e = 0; e < 4; ++e) {
        Around a;
        a.left = e == 0 ? left : m[e == 0 ? 0 : e - 1];
        a.kl = e == 0 ? kl : byte_of(mk, e == 0 ? 0 : e - 1);
        a.right = e == 3 ? right : m[e == 3 ? 3 : e + 1];
        a.kr = e == 3 ? kr : byte_of(mk, e == 3 ? 3 : e + 1);
        a.top = u[e];
        a.kt = byte_of(uk, e);
        a.bottom = d[e];
        a.kb = byte_of(dk, e);
        a.sl = e == 0 && side_left;
        a.sr = e == 3 && side_right;
        a.st = side_top;
        a.sb = side_bottom;
        o[e] = update_cell(t, byte_of(mk, e), m[e], a);
    }
    return make_float4(o[0], o[1], o[2], o[3]);
}

template <bool PR, bool PC>
__device__ __forceinline__ void materials_step_vec4(const float* __restrict__ in, float* __restrict__ out,
                                                    const unsigned char* __restrict__ map,
                                                    const float* __restrict__ tables, int n, int rows, int cols,
                                                    int block_y) {
    const int quads = cols >> 2;
    const int q = blockIdx.x * blockDim.x + threadIdx.x;
    const int r0 = block_y * VEC_ROWS;
    const int lane = threadIdx.x & 31;
    // No early return: every lane must reach the shuffles.
    const bool active = q < quads;
    const int qc = active ? q : quads - 1;
    const int c0 = qc * 4;
    const float4* in4 = reinterpret_cast<const float4*>(in);
    const unsigned* map4 = reinterpret_cast<const unsigned*>(map);
    float4 column[VEC_ROWS + 2];
    unsigned kinds[VEC_ROWS + 2];
#pragma unroll
    for (int i = 0; i < VEC_ROWS + 2; ++i) {
        const size_t at = (size_t)row_of<PR>(r0 - 1 + i, rows) * quads + qc;
        column[i] = __ldg(&in4[at]);
        kinds[i] = __ldg(&map4[at]);
    }
    const bool left_edge = lane == 0 || c0 == 0;
    const bool right_edge = lane == 31 || c0 + 4 >= cols;
    const int cl = c0 > 0 ? c0 - 1 : (PC ? cols - 1 : 0);
    const int cr = c0 + 4 < cols ? c0 + 4 : (PC ? 0 : cols - 1);
    float left_value[VEC_ROWS], right_value[VEC_ROWS];
    int left_kind[VEC_ROWS], right_kind[VEC_ROWS];
#pragma unroll
    for (int i = 0; i < VEC_ROWS; ++i) {
        const size_t row = (size_t)min(r0 + i, rows - 1) * cols;
        left_value[i] = left_edge ? __ldg(&in[row + cl]) : 0.0f;
        left_kind[i] = left_edge ? __ldg(&map[row + cl]) : 0;
        right_value[i] = right_edge ? __ldg(&in[row + cr]) : 0.0f;
        right_kind[i] = right_edge ? __ldg(&map[row + cr]) : 0;
    }
    // The tables are copied after the field's loads are issued, so that their barrier
    // overlaps the loads' latency instead of delaying them.
    const Tables t = load_tables(tables, n);
    const bool side_left = !PC && c0 == 0;
    const bool side_right = !PC && c0 + 4 == cols;
    float4* out4 = reinterpret_cast<float4*>(out);
#pragma unroll
    for (int i = 0; i < VEC_ROWS; ++i) {
        const int r = r0 + i;
        const float4 mid = column[i + 1];
        const unsigned mk = kinds[i + 1];
        float left = __shfl_up_sync(FULL_MASK, mid.w, 1);
        int kl = __shfl_up_sync(FULL_MASK, byte_of(mk, 3), 1);
        float right = __shfl_down_sync(FULL_MASK, mid.x, 1);
        int kr = __shfl_down_sync(FULL_MASK, byte_of(mk, 0), 1);
        if (left_edge) {
            left = left_value[i];
            kl = left_kind[i];
        }
        if (right_edge) {
            right = right_value[i];
            kr = right_kind[i];
        }
        if (r < rows && active) {
            out4[(size_t)r * quads + qc] =
                update_quad(t, mid, mk, column[i], kinds[i], column[i + 2], kinds[i + 2], left, kl, right, kr,
                            side_left, side_right, !PR && r == 0, !PR && r == rows - 1);
        }
    }
}

// ---------------------------------------------------------------------------------------------
// K steps per launch, cols % 4 == 0: temporal blocking in registers, as jacobi_temporal in
// diffusion.cu. Each warp owns a strip of 128 columns (4 per lane) and a segment of
// `segment_rows` rows and marches down it; level k of row j is computed once level k-1 holds
// rows j-1..j+1. The kind map is read once per row with the field and kept for the K + 2 rows
// the levels need (with each quad's left and right neighbours' kinds, shuffled once). Cells near
// the strip's sides and the segment's ends are computed redundantly and discarded. Where a side
// does not wrap, cells beyond it are loaded as 0 of kind 0 and never reach a kept cell (the
// edge cells use the side's terms); where it wraps, rows and columns are loaded wrapped and the
// march computes the torus.
// Materials come in regions: where the three rows a level reads are all of one kind across the
// warp (and no side is in reach), the level takes a warp-uniform fast path that reads that
// kind's gain and source once instead of four gains per cell; the expression is the same.
// ---------------------------------------------------------------------------------------------
struct QuadKinds {
    unsigned word;   // the quad's four kinds
    unsigned sides;  // kind left of the quad | kind right of it << 8
    int uniform;     // the kind of every cell of the warp's row and their neighbours, or -1
};

// The warp's row is of one kind `k` (every lane's four cells and both neighbours): the levels
// that read only such rows take the fast path of blocked_row.
__device__ __forceinline__ int uniform_kind(unsigned word, unsigned kl, unsigned kr) {
    const unsigned k0 = word & 0xff;
    const unsigned first = __shfl_sync(FULL_MASK, k0, 0);
    const bool mine = word == k0 * 0x01010101u && kl == k0 && kr == k0 && k0 == first;
    return __all_sync(FULL_MASK, mine) ? (int)first : -1;
}

// A quad of one kind `i` away from every side: the same expression as update_cell with the
// kind's gain and source read once.
__device__ __forceinline__ float4 update_uniform_quad(const Tables& t, int i, float4 mid, float4 up, float4 down,
                                                      float left, float right) {
    if (t.held[i] != 0.0f) return mid;
    const float a = t.pair[i * t.n + i];
    const float source = t.source[i];
    const float m[4] = {mid.x, mid.y, mid.z, mid.w};
    const float u[4] = {up.x, up.y, up.z, up.w};
    const float d[4] = {down.x, down.y, down.z, down.w};
    float o[4];
#pragma unroll
    for (int e = 0; e < 4; ++e) {
        const float v = m[e];
        const float l = e == 0 ? left : m[e == 0 ? 0 : e - 1];
        const float r = e == 3 ? right : m[e == 3 ? 3 : e + 1];
        const float fl = __fmul_rn(a, __fsub_rn(l, v));
        const float fr = __fmul_rn(a, __fsub_rn(r, v));
        const float ft = __fmul_rn(a, __fsub_rn(u[e], v));
        const float fb = __fmul_rn(a, __fsub_rn(d[e], v));
        const float sum = __fadd_rn(__fadd_rn(__fadd_rn(fl, fr), ft), fb);
        o[e] = __fadd_rn(__fadd_rn(v, sum), source);
    }
    return make_float4(o[0], o[1], o[2], o[3]);
}

template <bool PR, bool PC>
__device__ __forceinline__ void load_row(const float* __restrict__ f, const unsigned char* __restrict__ map, int r,
                                         int c0, int rows, int cols, float4& value, unsigned& word) {
    if (PR) {
        r = wrap_index(r, rows);
    }
    if (PC) {
        c0 = wrap_index(c0, cols);
    }
    if (r < 0 || r >= rows || c0 < 0 || c0 >= cols) {
        value = make_float4(0.0f, 0.0f, 0.0f, 0.0f);
        word = 0;
        return;
    }
    const size_t at = (size_t)r * cols + c0;
    value = __ldg(reinterpret_cast<const float4*>(f + at));
    word = __ldg(reinterpret_cast<const unsigned*>(map + at));
}

// The mixed-kind path as one function that every level calls (COMPACT kernels): less code and
// fewer registers for the one-kind path, at the cost of a call where kinds mix.
__device__ __noinline__ float4 update_quad_call(Tables t, float4 mid, unsigned mk, float4 up, unsigned uk,
                                                float4 down, unsigned dk, float left, int kl, float right, int kr,
                                                bool side_left, bool side_right, bool side_top, bool side_bottom) {
    return update_quad(t, mid, mk, up, uk, down, dk, left, kl, right, kr, side_left, side_right, side_top,
                       side_bottom);
}

template <bool PR, bool PC, int K, bool COMPACT, bool CHECK_ROWS>
__device__ __forceinline__ void blocked_row(const Tables& t, float4 (&window)[K][3], QuadKinds (&kinds)[K + 2],
                                            float4 loaded, unsigned loaded_word, int j0, int rows, int cols, int c0,
                                            bool warp_sides, float* __restrict__ out, bool writes, int r_start,
                                            int r_end) {
    window[0][0] = window[0][1];
    window[0][1] = window[0][2];
    window[0][2] = loaded;
#pragma unroll
    for (int m = 0; m < K + 1; ++m) kinds[m] = kinds[m + 1];
    kinds[K + 1].word = loaded_word;
    const unsigned kl = __shfl_up_sync(FULL_MASK, byte_of(loaded_word, 3), 1);
    const unsigned kr = __shfl_down_sync(FULL_MASK, byte_of(loaded_word, 0), 1);
    kinds[K + 1].sides = kl | (kr << 8);
    kinds[K + 1].uniform = uniform_kind(loaded_word, kl, kr);
    const bool side_left = !PC && c0 == 0;
    const bool side_right = !PC && c0 + 4 == cols;
#pragma unroll
    for (int k = 1; k <= K; ++k) {
        const int j = j0 - k;  // row of level k computed now
        const float4 mid = window[k - 1][1];
        const float left = __shfl_up_sync(FULL_MASK, mid.w, 1);
        const float right = __shfl_down_sync(FULL_MASK, mid.x, 1);
        const QuadKinds here = kinds[K + 1 - k];
        const bool side_top = !PR && CHECK_ROWS && j == 0;
        const bool side_bottom = !PR && CHECK_ROWS && j == rows - 1;
        // Warp-uniform: one kind in the rows this level reads, and no side in reach.
        const bool fast = here.uniform >= 0 && here.uniform == kinds[K - k].uniform &&
                          here.uniform == kinds[K + 2 - k].uniform && !warp_sides && !side_top && !side_bottom;
        float4 next;
        if (fast) {
            next = update_uniform_quad(t, here.uniform, mid, window[k - 1][0], window[k - 1][2], left, right);
        } else if (COMPACT) {
            next = update_quad_call(t, mid, here.word, window[k - 1][0], kinds[K - k].word, window[k - 1][2],
                                    kinds[K + 2 - k].word, left, byte_of(here.sides, 0), right,
                                    byte_of(here.sides, 1), side_left, side_right, side_top, side_bottom);
        } else {
            next = update_quad(t, mid, here.word, window[k - 1][0], kinds[K - k].word, window[k - 1][2],
                               kinds[K + 2 - k].word, left, byte_of(here.sides, 0), right, byte_of(here.sides, 1),
                               side_left, side_right, side_top, side_bottom);
        }
        if (k < K) {
            window[k][0] = window[k][1];
            window[k][1] = window[k][2];
            window[k][2] = next;
        } else if (writes && j >= r_start && j < r_end) {
            *reinterpret_cast<float4*>(out + (size_t)j * cols + c0) = next;
        }
    }
}

template <bool PR, bool PC, int K, bool COMPACT>
__device__ __forceinline__ void materials_blocked(const float* __restrict__ in, float* __restrict__ out,
                                                  const unsigned char* __restrict__ map,
                                                  const float* __restrict__ tables, int n, int rows, int cols,
                                                  int segment_rows) {
    const Tables t = load_tables(tables, n);
    constexpr int HALO_LANES = K / 4;
    constexpr int OUT_COLS = 128 - 2 * K;
    const int lane = threadIdx.x & 31;
    const int segment = blockIdx.y * blockDim.y + threadIdx.y;
    const int r_start = segment * segment_rows;
    if (r_start >= rows) return;  // the whole warp leaves together, after the barrier
    const int r_end = min(r_start + segment_rows, rows);
    const int c0 = blockIdx.x * OUT_COLS - K + lane * 4;
    const bool writes = lane >= HALO_LANES && lane < 32 - HALO_LANES && c0 < cols;
    float4 window[K][3];
    QuadKinds kinds[K + 2];
#pragma unroll
    for (int k = 0; k < K; ++k) {
        window[k][0] = window[k][1] = window[k][2] = make_float4(0.0f, 0.0f, 0.0f, 0.0f);
    }
#pragma unroll
    for (int m = 0; m < K + 2; ++m) {
        kinds[m].word = kinds[m].sides = 0;
        kinds[m].uniform = -1;
    }
    // Whether a lane of the warp has a left or right side face (then no level is fast).
    const bool warp_sides = __any_sync(FULL_MASK, !PC && (c0 == 0 || c0 + 4 == cols));
    const int first = r_start - K;
    const int last = r_end - 1 + K;
    const bool touches_edge = first - K <= 0 || last >= rows - 1;
    float4 prefetched;
    unsigned prefetched_word;
    load_row<PR, PC>(in, map, first, c0, rows, cols, prefetched, prefetched_word);
    if (touches_edge) {
        for (int j0 = first; j0 <= last; ++j0) {
            const float4 loaded = prefetched;
            const unsigned word = prefetched_word;
            load_row<PR, PC>(in, map, j0 + 1, c0, rows, cols, prefetched, prefetched_word);
            blocked_row<PR, PC, K, COMPACT, true>(t, window, kinds, loaded, word, j0, rows, cols, c0, warp_sides, out, writes,
                                         r_start, r_end);
        }
    } else {
        for (int j0 = first; j0 <= last; ++j0) {
            const float4 loaded = prefetched;
            const unsigned word = prefetched_word;
            load_row<PR, PC>(in, map, j0 + 1, c0, rows, cols, prefetched, prefetched_word);
            blocked_row<PR, PC, K, COMPACT, false>(t, window, kinds, loaded, word, j0, rows, cols, c0, warp_sides, out,
                                          writes, r_start, r_end);
        }
    }
}

// ---------------------------------------------------------------------------------------------
// The energy that one step from `field` puts in through the sides and from held cells, for the
// cells of the ledger (EnergyLedger::cells), in f64 as EnergyLedger::step_exchange: each thread
// one cell (`at`; threads at or past `count` add nothing) into sums[0..3] (the sides) and
// sums[4] (held cells). `capacity` holds each kind's heat capacity.
// ---------------------------------------------------------------------------------------------
__device__ __forceinline__ double warp_sum(double value) {
#pragma unroll
    for (int offset = 16; offset > 0; offset >>= 1) value += __shfl_down_sync(FULL_MASK, value, offset);
    return value;
}

template <bool PR, bool PC>
__device__ __forceinline__ void exchange_of_cell(int at, const float* __restrict__ field,
                                                 const unsigned char* __restrict__ map,
                                                 const float* __restrict__ tables,
                                                 const double* __restrict__ capacity,
                                                 const unsigned* __restrict__ cells, int count, int n, int rows,
                                                 int cols, double sums[5]) {
    const float* source = tables + n * n;
    const float* side_gain = source + n;
    const float* side_bias = side_gain + 4 * n;
    const float* outside = side_bias + 4 * n;
    const float* held = outside + 4;
#pragma unroll
    for (int s = 0; s < 5; ++s) sums[s] = 0.0;
    if (at < count) {
        const int here = (int)cells[at];
        const int row = here / cols;
        const int col = here % cols;
        const int kind = map[here];
        const double c = capacity[kind];
        const double v = (double)field[here];
        int neighbour[4];
        neighbour[SIDE_LEFT] = col > 0 ? here - 1 : (PC ? here + cols - 1 : -1);
        neighbour[SIDE_RIGHT] = col + 1 < cols ? here + 1 : (PC ? here + 1 - cols : -1);
        neighbour[SIDE_TOP] = row > 0 ? here - cols : (PR ? here + (rows - 1) * cols : -1);
        neighbour[SIDE_BOTTOM] = row + 1 < rows ? here + cols : (PR ? col : -1);
#pragma unroll
        for (int side = 0; side < 4; ++side) {
            const int cell = neighbour[side];
            if (cell < 0) {
                const int k = side * n + kind;
                const double gain = (double)side_gain[k];
                const double out = (double)outside[side];
                const double bias = (double)side_bias[k];
                sums[side] = __dadd_rn(sums[side], __dmul_rn(c, __dadd_rn(__dmul_rn(gain, __dsub_rn(out, v)), bias)));
            } else if (held[map[cell]] != 0.0f) {
                const double gain = (double)tables[kind * n + map[cell]];
                const double u = (double)field[cell];
                sums[4] = __dadd_rn(sums[4], __dmul_rn(__dmul_rn(c, gain), __dsub_rn(u, v)));
            }
        }
    }
}

// The most warps a booking block has (the scalar kernel's 32 x 8 threads).
#define BOOKING_WARPS 8
// Ledger cells each booking thread books (their loads independent, so they overlap): few
// booking blocks, so that they do not push the step's blocks into one more wave (at 2000² the
// vec4 step is 1000 blocks, 1.9 waves of 4 blocks on 132 SMs; a block per 128 cells of the
// ledger made it 2.02).
#define BOOKING_CELLS_PER_THREAD 4

// One step with the energy booked in the same launch: the first `booking_rows` rows of blocks
// of the grid book the exchange of the step's input (the ledger's cells, each thread
// BOOKING_CELLS_PER_THREAD of them, a block's threads apart), the rows after them step (as block row blockIdx.y - booking_rows). Booking blocks come
// first so that they start first: their chains of dependent loads overlap the steps instead of
// ending the launch. Both only read `in`, so they may run in any order. Each booking
// block adds its five sums to slots of its own, exchange[5 * block + s] (no atomics: a block's
// slots are only written by that block, and steps are launched one after the other); the host
// adds the slots up in order when it takes them.
template <bool PR, bool PC>
__device__ __forceinline__ bool booked_here(const float* __restrict__ in, const unsigned char* __restrict__ map,
                                            const float* __restrict__ tables, const double* __restrict__ capacity,
                                            const unsigned* __restrict__ cells, int count, int n, int rows, int cols,
                                            int booking_rows, double* __restrict__ exchange) {
    if ((int)blockIdx.y >= booking_rows) return false;
    const int block = blockIdx.y * gridDim.x + blockIdx.x;
    const int threads = blockDim.x * blockDim.y;
    const int thread = threadIdx.y * blockDim.x + threadIdx.x;
    double sums[5] = {0.0, 0.0, 0.0, 0.0, 0.0};
#pragma unroll
    for (int k = 0; k < BOOKING_CELLS_PER_THREAD; ++k) {
        double cell[5];
        const int at = (block * BOOKING_CELLS_PER_THREAD + k) * threads + thread;
        exchange_of_cell<PR, PC>(at, in, map, tables, capacity, cells, count, n, rows, cols, cell);
#pragma unroll
        for (int s = 0; s < 5; ++s) sums[s] = __dadd_rn(sums[s], cell[s]);
    }
    __shared__ double warp_sums[5][BOOKING_WARPS];
    const int warp = thread >> 5;
#pragma unroll
    for (int s = 0; s < 5; ++s) {
        const double total = warp_sum(sums[s]);
        if ((thread & 31) == 0) warp_sums[s][warp] = total;
    }
    __syncthreads();
    // Blocks past the ledger's last cell (the grid is rounded up to whole rows) have no slots.
    if (thread == 0 && block * BOOKING_CELLS_PER_THREAD * threads < count) {
#pragma unroll
        for (int s = 0; s < 5; ++s) {
            double total = 0.0;
            for (int w = 0; w < threads >> 5; ++w) total += warp_sums[s][w];
            exchange[5 * block + s] += total;
        }
    }
    return true;
}

#define STEP_ARGS                                                                                               \
    const float *__restrict__ in, float *__restrict__ out, const unsigned char *__restrict__ map,              \
        const float *__restrict__ tables, int n, int rows, int cols
#define BOOKING_ARGS                                                                                            \
    const double *__restrict__ capacity, const unsigned *__restrict__ cells, int count, int booking_rows,      \
        double *__restrict__ exchange
#define BLOCKED_KERNEL(NAME, K, COMPACT, PR, PC)                                                                \
    extern "C" __global__ void __launch_bounds__(128) NAME##_pr##PR##_pc##PC(STEP_ARGS, int segment_rows) {    \
        materials_blocked<PR, PC, K, COMPACT>(in, out, map, tables, n, rows, cols, segment_rows);               \
    }

#define MATERIAL_KERNELS(PR, PC)                                                                                \
    extern "C" __global__ void materials_step_scalar_pr##PR##_pc##PC(STEP_ARGS) {                               \
        materials_step_scalar<PR, PC>(in, out, map, tables, n, rows, cols, blockIdx.y);                         \
    }                                                                                                           \
    extern "C" __global__ void __launch_bounds__(128) materials_step_vec4_pr##PR##_pc##PC(STEP_ARGS) {          \
        materials_step_vec4<PR, PC>(in, out, map, tables, n, rows, cols, blockIdx.y);                           \
    }                                                                                                           \
    extern "C" __global__ void materials_step_scalar_booked_pr##PR##_pc##PC(STEP_ARGS, BOOKING_ARGS) {          \
        if (booked_here<PR, PC>(in, map, tables, capacity, cells, count, n, rows, cols, booking_rows, exchange)) \
            return;                                                                                             \
        materials_step_scalar<PR, PC>(in, out, map, tables, n, rows, cols, blockIdx.y - booking_rows);          \
    }                                                                                                           \
    extern "C" __global__ void __launch_bounds__(128)                                                           \
        materials_step_vec4_booked_pr##PR##_pc##PC(STEP_ARGS, BOOKING_ARGS) {                                   \
        if (booked_here<PR, PC>(in, map, tables, capacity, cells, count, n, rows, cols, booking_rows, exchange)) \
            return;                                                                                             \
        materials_step_vec4<PR, PC>(in, out, map, tables, n, rows, cols, blockIdx.y - booking_rows);            \
    }                                                                                                           \
    BLOCKED_KERNEL(materials_blocked_k4, 4, false, PR, PC)                                                      \
    BLOCKED_KERNEL(materials_blocked_k4c, 4, true, PR, PC)                                                      \
    BLOCKED_KERNEL(materials_blocked_k8, 8, false, PR, PC)                                                      \
    BLOCKED_KERNEL(materials_blocked_k8c, 8, true, PR, PC)
MATERIAL_KERNELS(0, 0)
MATERIAL_KERNELS(0, 1)
MATERIAL_KERNELS(1, 0)
MATERIAL_KERNELS(1, 1)
