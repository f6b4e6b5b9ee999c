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

// One face of a cell of kind i: to a neighbour (kind j, value u; `gains` is the pair table's
// row of kind i) or, where `side` is set, to the outside.
__device__ __forceinline__ float face(const Tables& t, const float* gains, int i, float v, float u, int j, bool side,
                                      int which) {
    if (side) {
        const int at = which * t.n + i;
        return __fadd_rn(__fmul_rn(t.side_gain[at], __fsub_rn(t.outside[which], v)), t.side_bias[at]);
    }
    return __fmul_rn(gains[j], __fsub_rn(u, v));
}

// The side face of a cell of kind i (no neighbour).
__device__ __forceinline__ float face(const Tables& t, int i, float v, float u, int j, bool side, int which) {
    return face(t, t.pair + i * t.n, i, v, u, j, side, which);
}

// What one cell around it looks like: values, kinds, and which faces are sides.
struct Around {
    float left, right, top, bottom;
    int kl, kr, kt, kb;
    bool sl, sr, st, sb;
};

// Held cells keep v: selected, not branched to, so that a warp's cells take one path.
__device__ __forceinline__ float update_cell(const Tables& t, int i, float v, const Around& a) {
    const bool held = t.held[i] != 0.0f;
    const float* gains = t.pair + i * t.n;
    const float fl = face(t, gains, i, v, a.left, a.kl, a.sl, SIDE_LEFT);
    const float fr = face(t, gains, i, v, a.right, a.kr, a.sr, SIDE_RIGHT);
    const float ft = face(t, gains, i, v, a.top, a.kt, a.st, SIDE_TOP);
    const float fb = face(t, gains, i, v, a.bottom, a.kb, a.sb, SIDE_BOTTOM);
    const float sum = __fadd_rn(__fadd_rn(__fadd_rn(fl, fr), ft), fb);
    return held ? v : __fadd_rn(__fadd_rn(v, sum), t.source[i]);
}

// Byte e of a word (one PRMT).
__device__ __forceinline__ int byte_of(unsigned word, int e) { return (int)__byte_perm(word, 0u, 0x4440u + e); }

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

template <bool PR, bool PC, int K, bool COMPACT, bool CHECK_ROWS, bool CHECK_COLS>
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
    const bool side_left = !PC && CHECK_COLS && c0 == 0;
    const bool side_right = !PC && CHECK_COLS && c0 + 4 == cols;
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

// Rows first..last of a warp's march (loading one row ahead).
template <bool PR, bool PC, int K, bool COMPACT, bool CHECK_ROWS, bool CHECK_COLS>
__device__ __forceinline__ void blocked_rows(const Tables& t, float4 (&window)[K][3], QuadKinds (&kinds)[K + 2],
                                             float4& prefetched, unsigned& prefetched_word,
                                             const float* __restrict__ in, const unsigned char* __restrict__ map,
                                             int first, int last, int rows, int cols, int c0, bool warp_sides,
                                             float* __restrict__ out, bool writes, int r_start, int r_end) {
    for (int j0 = first; j0 <= last; ++j0) {
        const float4 loaded = prefetched;
        const unsigned word = prefetched_word;
        load_row<PR, PC>(in, map, j0 + 1, c0, rows, cols, prefetched, prefetched_word);
        blocked_row<PR, PC, K, COMPACT, CHECK_ROWS, CHECK_COLS>(t, window, kinds, loaded, word, j0, rows, cols, c0,
                                                                warp_sides, out, writes, r_start, r_end);
    }
}

// The march of one warp down rows r_start - K .. r_end - 1 + K of its strip (lane columns c0..c0+3),
// writing level K's rows r_start .. r_end - 1 where `writes`.
template <bool PR, bool PC, int K, bool COMPACT>
__device__ __forceinline__ void blocked_march(const Tables& t, const float* __restrict__ in, float* __restrict__ out,
                                              const unsigned char* __restrict__ map, int rows, int cols, int c0,
                                              bool writes, int r_start, int r_end) {
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
    // Compile-time side tests where the warp reaches no side: no branch per face.
    if (touches_edge) {
        if (warp_sides) {
            blocked_rows<PR, PC, K, COMPACT, true, true>(t, window, kinds, prefetched, prefetched_word, in, map,
                                                         first, last, rows, cols, c0, warp_sides, out, writes,
                                                         r_start, r_end);
        } else {
            blocked_rows<PR, PC, K, COMPACT, true, false>(t, window, kinds, prefetched, prefetched_word, in, map,
                                                          first, last, rows, cols, c0, warp_sides, out, writes,
                                                          r_start, r_end);
        }
    } else if (warp_sides) {
        blocked_rows<PR, PC, K, COMPACT, false, true>(t, window, kinds, prefetched, prefetched_word, in, map, first,
                                                      last, rows, cols, c0, warp_sides, out, writes, r_start,
                                                      r_end);
    } else {
        blocked_rows<PR, PC, K, COMPACT, false, false>(t, window, kinds, prefetched, prefetched_word, in, map, first,
                                                       last, rows, cols, c0, warp_sides, out, writes, r_start,
                                                       r_end);
    }
}

// A warp's place in a blocked launch: its strip of 128 columns (K of them on each side computed
// only to feed the others) and its segment of rows.
template <int K>
struct WarpTile {
    int lane, strip_first, c0, r_start, r_end;
    bool writes;
};

template <int K>
__device__ __forceinline__ WarpTile<K> warp_tile(int strip, int segment, int rows, int cols, int segment_rows) {
    constexpr int HALO_LANES = K / 4;
    constexpr int OUT_COLS = 128 - 2 * K;
    WarpTile<K> w;
    w.lane = threadIdx.x & 31;
    w.r_start = segment * segment_rows;
    w.r_end = min(w.r_start + segment_rows, rows);
    w.strip_first = strip * OUT_COLS - K;
    w.c0 = w.strip_first + w.lane * 4;
    w.writes = w.lane >= HALO_LANES && w.lane < 32 - HALO_LANES && w.c0 < cols;
    return w;
}

// The warp's tile in a launch of one warp per tile: strip blockIdx.x, segment from the block's
// row and the warp; tiles are numbered segment * strips + strip.
template <int K>
__device__ __forceinline__ WarpTile<K> launch_tile(int rows, int cols, int segment_rows) {
    return warp_tile<K>(blockIdx.x, blockIdx.y * blockDim.y + threadIdx.y, rows, cols, segment_rows);
}

template <bool PR, bool PC, int K, bool COMPACT>
__device__ __forceinline__ void materials_blocked(const float* __restrict__ in, float* __restrict__ out,
                                                  const unsigned char* __restrict__ map,
                                                  const float* __restrict__ tables, int n, int rows, int cols,
                                                  int segment_rows) {
    const Tables t = load_tables(tables, n);
    const WarpTile<K> w = launch_tile<K>(rows, cols, segment_rows);
    if (w.r_start >= rows) return;  // the whole warp leaves together, after the barrier
    blocked_march<PR, PC, K, COMPACT>(t, in, out, map, rows, cols, w.c0, w.writes, w.r_start, w.r_end);
}

// ---------------------------------------------------------------------------------------------
// K steps per launch by tiles (TILED kernels), a tile being a warp's strip of 128 columns and
// segment of rows as in the blocked kernels. When a problem is uploaded, classify_tiles reads the
// kinds of every cell each tile's march reads (rows r_start - K .. r_end - 1 + K of its 128
// columns): a tile whose cells are all of one kind and that reaches no side that does not wrap
// is marched without the kind map (materials_tiled: the uniform kernel's march with the material
// expression, the kind's gain `a` and source `s` in registers; a held kind's tile is copied).
// The other tiles, listed by the host, are marched by materials_tiled_mixed (blocked_march),
// launched after it on the same input: the tiles are disjoint, so the order does not matter,
// and each kernel keeps its own registers.
//
// The one-kind march computes each face between two cells once (ANTISYM): the face a cell gets
// from its left (top) neighbour is the negation of the face that neighbour got from its right
// (bottom) one, a * (l - v) = -(a * (v - l)), exact in round-to-nearest except where l == v,
// where it gives -0 instead of +0. A zero's sign changes only a sum that is zero, then only
// v + sum where v is zero too, and (v + sum) + s not at all unless s is -0: where a kind's source
// is -0, the host launches the kernel that computes every face (materials_tiled_k8d).
// ---------------------------------------------------------------------------------------------

// Whether a tile's march reaches a side that does not wrap (rows first..last, 128 columns from
// strip_first): its cells next to the side then take the side's faces.
template <bool PR, bool PC>
__device__ __forceinline__ bool tile_reaches_side(int first, int last, int strip_first, int rows, int cols) {
    return (!PR && (first < 0 || last > rows - 1)) || (!PC && (strip_first < 0 || strip_first + 128 > cols));
}

// The kind of every cell of the grid in rows first..last of the warp's strip, or -1 where kinds
// mix (warp-uniform). Rows and columns beyond a side that does not wrap are not read.
template <bool PR, bool PC>
__device__ __forceinline__ int tile_kind(const unsigned char* __restrict__ map, int first, int last, int c0,
                                         int rows, int cols) {
    if (!PR) {
        first = max(first, 0);
        last = min(last, rows - 1);
    }
    const bool lane_inside = PC || (c0 >= 0 && c0 < cols);
    const int source_lane = __ffs(__ballot_sync(FULL_MASK, lane_inside)) - 1;
    const unsigned* words =
        reinterpret_cast<const unsigned*>(map + (PC ? wrap_index(c0, cols) : min(max(c0, 0), cols - 4)));
    const int stride = cols >> 2;
    const unsigned kind =
        __shfl_sync(FULL_MASK, __ldg(&words[(size_t)row_of<PR>(first, rows) * stride]) & 0xffu, source_lane);
    const unsigned want = kind * 0x01010101u;
    unsigned differ = 0;
    if (lane_inside) {
#pragma unroll 8
        for (int r = first; r <= last; ++r) differ |= __ldg(&words[(size_t)row_of<PR>(r, rows) * stride]) ^ want;
    }
    return __any_sync(FULL_MASK, differ != 0) ? -1 : (int)kind;
}

// One row of a one-kind tile's march: rows beyond the grid's first and last (prefetched, or
// beyond a side) are loaded clamped and never used.
template <bool PR>
__device__ __forceinline__ float4 load_quad(const float* __restrict__ f, int r, int c, int rows, int cols) {
    return __ldg(reinterpret_cast<const float4*>(f + (size_t)row_of<PR>(r, rows) * cols + c));
}

// Which faces of a quad are sides, and the tables to take them from (SIDES marches only).
struct QuadSides {
    const Tables* t;
    int kind;
    bool left, right, top, bottom;
};

// The four cells of a quad of one kind: update_cell's expression with the kind's gain `a` and
// source `s`. With ANTISYM the top faces come negated from `carry` (the bottom faces the row
// above got at this level, which it takes back) and each face inside the quad is computed once.
// With SIDES, faces on a side are the side's (never carried: a side's row has no neighbour
// beyond it whose face it would be).
template <bool ANTISYM, bool SIDES>
__device__ __forceinline__ float4 one_kind_quad(float a, float s, float4 mid, float4 up, float4 down, float left,
                                                float right, float4& carry, const QuadSides& sides) {
    const float m[4] = {mid.x, mid.y, mid.z, mid.w};
    const float d[4] = {down.x, down.y, down.z, down.w};
    const float u[4] = {up.x, up.y, up.z, up.w};
    const float c[4] = {carry.x, carry.y, carry.z, carry.w};
    float fb[4], fr[4], ft[4];
#pragma unroll
    for (int e = 0; e < 4; ++e) {
        fb[e] = SIDES && sides.bottom ? face(*sides.t, sides.kind, m[e], 0.0f, 0, true, SIDE_BOTTOM)
                                      : __fmul_rn(a, __fsub_rn(d[e], m[e]));
        const float r = e == 3 ? right : m[e == 3 ? 3 : e + 1];
        fr[e] = SIDES && e == 3 && sides.right ? face(*sides.t, sides.kind, m[e], 0.0f, 0, true, SIDE_RIGHT)
                                               : __fmul_rn(a, __fsub_rn(r, m[e]));
        // fl + ft + ... with ANTISYM: ft = -carry, taken as a subtraction below.
        ft[e] = SIDES && sides.top ? face(*sides.t, sides.kind, m[e], 0.0f, 0, true, SIDE_TOP)
                                   : (ANTISYM ? c[e] : __fmul_rn(a, __fsub_rn(u[e], m[e])));
    }
    const float fl0 = SIDES && sides.left ? face(*sides.t, sides.kind, m[0], 0.0f, 0, true, SIDE_LEFT)
                                          : __fmul_rn(a, __fsub_rn(left, m[0]));
    const bool top_carried = ANTISYM && !(SIDES && sides.top);
    float o[4];
#pragma unroll
    for (int e = 0; e < 4; ++e) {
        float horizontal;
        if (e == 0) {
            horizontal = __fadd_rn(fl0, fr[0]);
        } else if (ANTISYM) {
            // fl + fr with fl = -fr of the cell to the left: fr - that.
            horizontal = __fsub_rn(fr[e], fr[e == 0 ? 0 : e - 1]);
        } else {
            horizontal = __fadd_rn(__fmul_rn(a, __fsub_rn(m[e == 0 ? 0 : e - 1], m[e])), fr[e]);
        }
        const float vertical = top_carried ? __fsub_rn(horizontal, ft[e]) : __fadd_rn(horizontal, ft[e]);
        const float sum = __fadd_rn(vertical, fb[e]);
        o[e] = __fadd_rn(__fadd_rn(m[e], sum), s);
    }
    if (ANTISYM) carry = make_float4(fb[0], fb[1], fb[2], fb[3]);
    return make_float4(o[0], o[1], o[2], o[3]);
}

// The cell of a quad on a left or right side that does not wrap (`which`), in a row away from
// the top and bottom: one_kind_quad's expression for that cell alone, its side face the side's.
// `inner` is the quad's cell next to it, `c` its carried top face (ANTISYM) and `u` the value
// above it (otherwise).
template <bool ANTISYM>
__device__ __forceinline__ float edge_cell(const Tables& t, int kind, float a, float s, float v, float inner,
                                           float c, float u, float d, int which) {
    const float side = face(t, kind, v, 0.0f, 0, true, which);
    float horizontal;
    if (which == SIDE_LEFT) {
        horizontal = __fadd_rn(side, __fmul_rn(a, __fsub_rn(inner, v)));
    } else if (ANTISYM) {
        horizontal = __fsub_rn(side, __fmul_rn(a, __fsub_rn(v, inner)));
    } else {
        horizontal = __fadd_rn(__fmul_rn(a, __fsub_rn(inner, v)), side);
    }
    const float vertical = ANTISYM ? __fsub_rn(horizontal, c) : __fadd_rn(horizontal, __fmul_rn(a, __fsub_rn(u, v)));
    const float sum = __fadd_rn(vertical, __fmul_rn(a, __fsub_rn(d, v)));
    return __fadd_rn(__fadd_rn(v, sum), s);
}

// One row of a one-kind tile's march: every level computes its row as if no side were near;
// with ROW_SIDES, a row on the top or bottom side (warp-uniform, rare) is computed again with the
// sides' faces, and with COL_SIDES the lanes on a left or right side compute their edge cell
// again.
template <bool PR, int K, bool ANTISYM, bool ROW_SIDES, bool COL_SIDES>
__device__ __forceinline__ void one_kind_row(float4 (&window)[K][3], float4 (&carry)[K], float4 loaded, int j0,
                                             float a, float s, const QuadSides& sides, int rows,
                                             float* __restrict__ out, int cols, int c0, bool writes, int r_start,
                                             int r_end) {
    window[0][0] = window[0][1];
    window[0][1] = window[0][2];
    window[0][2] = loaded;
#pragma unroll
    for (int k = 1; k <= K; ++k) {
        const int j = j0 - k;  // row of level k computed now
        const float4 mid = window[k - 1][1];
        const float4 up = window[k - 1][0];
        const float4 down = window[k - 1][2];
        const float left = __shfl_up_sync(FULL_MASK, mid.w, 1);
        const float right = __shfl_down_sync(FULL_MASK, mid.x, 1);
        const float4 carried = carry[k - 1];
        float4 next = one_kind_quad<ANTISYM, false>(a, s, mid, up, down, left, right, carry[k - 1], sides);
        if (ROW_SIDES && !PR && (j == 0 || j == rows - 1)) {
            QuadSides here = sides;
            here.top = j == 0;
            here.bottom = j == rows - 1;
            float4 unused = carried;
            next = one_kind_quad<ANTISYM, true>(a, s, mid, up, down, left, right, unused, here);
        } else if (COL_SIDES && sides.left) {
            next.x =
                edge_cell<ANTISYM>(*sides.t, sides.kind, a, s, mid.x, mid.y, carried.x, up.x, down.x, SIDE_LEFT);
        } else if (COL_SIDES && sides.right) {
            next.w =
                edge_cell<ANTISYM>(*sides.t, sides.kind, a, s, mid.w, mid.z, carried.w, up.w, down.w, SIDE_RIGHT);
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

// Where a one-kind tile's march is: its window, carried faces and the next two rows loaded.
template <int K>
struct OneKindMarch {
    float4 window[K][3];
    float4 carry[K];
    float4 prefetched, prefetched2;
    int c;  // the lanes' first column, wrapped or clamped
};

// Iterations from..to-1 of a one-kind tile's march (loads two rows ahead). ROW_SIDES: they may
// compute the top or bottom row (not unrolled: few); otherwise unrolled three times, so that
// the window's shifts become register renames.
template <bool PR, int K, bool ANTISYM, bool ROW_SIDES, bool COL_SIDES>
__device__ __forceinline__ void one_kind_rows(OneKindMarch<K>& m, int from, int to, const float* __restrict__ in,
                                              float a, float s, const QuadSides& sides, int rows,
                                              float* __restrict__ out, int cols, int c0, bool writes, int r_start,
                                              int r_end) {
    if (ROW_SIDES) {
        for (int j0 = from; j0 < to; ++j0) {
            const float4 loaded = m.prefetched;
            m.prefetched = m.prefetched2;
            m.prefetched2 = load_quad<PR>(in, j0 + 2, m.c, rows, cols);
            one_kind_row<PR, K, ANTISYM, true, COL_SIDES>(m.window, m.carry, loaded, j0, a, s, sides, rows, out,
                                                          cols, c0, writes, r_start, r_end);
        }
    } else {
#pragma unroll 3
        for (int j0 = from; j0 < to; ++j0) {
            const float4 loaded = m.prefetched;
            m.prefetched = m.prefetched2;
            m.prefetched2 = load_quad<PR>(in, j0 + 2, m.c, rows, cols);
            one_kind_row<PR, K, ANTISYM, false, COL_SIDES>(m.window, m.carry, loaded, j0, a, s, sides, rows, out,
                                                           cols, c0, writes, r_start, r_end);
        }
    }
}

// The march of a one-kind tile. SIDES: the tile reaches a side that does not wrap; the
// iterations whose levels compute row 0 or the last row (j0 in 1..K or rows..rows-1+K) take the
// top and bottom sides' faces, the others only the left and right sides'.
template <bool PR, bool PC, int K, bool ANTISYM, bool SIDES>
__device__ __forceinline__ void one_kind_march(const Tables& t, int kind, const float* __restrict__ in,
                                               float* __restrict__ out, int rows, int cols, int c0, bool writes,
                                               int r_start, int r_end) {
    OneKindMarch<K> m;
#pragma unroll
    for (int k = 0; k < K; ++k) {
        m.window[k][0] = m.window[k][1] = m.window[k][2] = m.carry[k] = make_float4(0.0f, 0.0f, 0.0f, 0.0f);
    }
    const float a = t.pair[kind * t.n + kind];
    const float s = t.source[kind];
    QuadSides sides;
    sides.t = &t;
    sides.kind = kind;
    sides.left = SIDES && !PC && c0 == 0;
    sides.right = SIDES && !PC && c0 + 4 == cols;
    sides.top = sides.bottom = false;
    // Lanes beyond a side load clamped columns, never used.
    m.c = PC ? wrap_index(c0, cols) : min(max(c0, 0), cols - 4);
    const int first = r_start - K;
    const int end = r_end + K;  // one past the last iteration
    m.prefetched = load_quad<PR>(in, first, m.c, rows, cols);
    m.prefetched2 = load_quad<PR>(in, first + 1, m.c, rows, cols);
    if (!SIDES) {
        one_kind_rows<PR, K, ANTISYM, false, false>(m, first, end, in, a, s, sides, rows, out, cols, c0, writes,
                                                    r_start, r_end);
        return;
    }
    const int top_end = PR ? first : min(max(K + 1, first), end);
    const int bottom_start = PR ? end : min(max(rows, top_end), end);
    one_kind_rows<PR, K, ANTISYM, true, !PC>(m, first, top_end, in, a, s, sides, rows, out, cols, c0, writes, r_start,
                                             r_end);
    one_kind_rows<PR, K, ANTISYM, false, !PC>(m, top_end, bottom_start, in, a, s, sides, rows, out, cols, c0, writes,
                                              r_start, r_end);
    one_kind_rows<PR, K, ANTISYM, true, !PC>(m, bottom_start, end, in, a, s, sides, rows, out, cols, c0, writes,
                                             r_start, r_end);
}

// Each tile's kind (tile_kind) into tile_kinds[segment * strips + strip], for a launch of the
// tiled kernels' geometry; warps past the last segment write nothing.
template <bool PR, bool PC, int K>
__device__ __forceinline__ void classify_tiles(const unsigned char* __restrict__ map, int rows, int cols,
                                               int segment_rows, int* __restrict__ tile_kinds) {
    const WarpTile<K> w = launch_tile<K>(rows, cols, segment_rows);
    if (w.r_start >= rows) return;
    const int kind = tile_kind<PR, PC>(map, w.r_start - K, w.r_end - 1 + K, w.c0, rows, cols);
    const int segment = blockIdx.y * blockDim.y + threadIdx.y;
    if (w.lane == 0) tile_kinds[segment * gridDim.x + blockIdx.x] = kind;
}

// One tile of a tiled launch, if of one kind (tile_kinds from classify_tiles; a mixed tile, -1,
// is left to mixed_tile_part): a held kind's tile is copied, the others march without the kind
// map. ANTISYM computes each face once: the host launches it only where no kind's source is -0.
template <bool PR, bool PC, int K, bool ANTISYM>
__device__ __forceinline__ void one_kind_tile(const Tables& t, const float* __restrict__ in, float* __restrict__ out,
                                              int rows, int cols, int segment_rows, int strip, int segment,
                                              int strips, const int* __restrict__ tile_kinds) {
    const WarpTile<K> w = warp_tile<K>(strip, segment, rows, cols, segment_rows);
    if (w.r_start >= rows) return;  // the whole warp leaves together
    const int kind = __ldg(&tile_kinds[segment * strips + strip]);
    if (kind < 0) return;
    if (t.held[kind] != 0.0f) {
        for (int j = w.r_start; j < w.r_end && w.writes; ++j) {
            const size_t at = (size_t)j * cols + w.c0;
            *reinterpret_cast<float4*>(out + at) = __ldg(reinterpret_cast<const float4*>(in + at));
        }
        return;
    }
    if (tile_reaches_side<PR, PC>(w.r_start - K, w.r_end - 1 + K, w.strip_first, rows, cols)) {
        one_kind_march<PR, PC, K, ANTISYM, true>(t, kind, in, out, rows, cols, w.c0, w.writes, w.r_start, w.r_end);
    } else {
        one_kind_march<PR, PC, K, ANTISYM, false>(t, kind, in, out, rows, cols, w.c0, w.writes, w.r_start, w.r_end);
    }
}

// One share of a mixed tile, `parts` warps to a tile (each marches its share of the tile's rows,
// with its own halo: more warps and shorter marches for the few mixed tiles): warp `index` <
// count * parts takes share index % parts of tile tiles[index / parts], by the blocked march.
template <bool PR, bool PC, int K>
__device__ __forceinline__ void mixed_tile_part(const Tables& t, const float* __restrict__ in, float* __restrict__ out,
                                                const unsigned char* __restrict__ map, int rows, int cols,
                                                int segment_rows, int strips, const unsigned* __restrict__ tiles,
                                                int count, int parts, int index) {
    if (index >= count * parts) return;  // the whole warp leaves together
    const int tile = (int)__ldg(&tiles[index / parts]);
    const WarpTile<K> w = warp_tile<K>(tile % strips, tile / strips, rows, cols, segment_rows);
    const int share = (segment_rows + parts - 1) / parts;
    const int r_start = w.r_start + (index % parts) * share;
    const int r_end = min(r_start + share, w.r_end);
    if (r_start >= r_end) return;
    blocked_march<PR, PC, K, false>(t, in, out, map, rows, cols, w.c0, w.writes, r_start, r_end);
}

template <int K>
__device__ __forceinline__ int strips_of(int cols) {
    return (cols + 128 - 2 * K - 1) / (128 - 2 * K);
}

// The one-kind tiles: blocks of the blocked kernels' grid (strip blockIdx.x, segments of the
// block's row and its warps).
template <bool PR, bool PC, int K, bool ANTISYM>
__device__ __forceinline__ void materials_tiled(const float* __restrict__ in, float* __restrict__ out,
                                                const float* __restrict__ tables, int n, int rows, int cols,
                                                int segment_rows, const int* __restrict__ tile_kinds) {
    const Tables t = load_tables(tables, n);
    one_kind_tile<PR, PC, K, ANTISYM>(t, in, out, rows, cols, segment_rows, blockIdx.x,
                                      blockIdx.y * blockDim.y + threadIdx.y, gridDim.x, tile_kinds);
}

// The mixed tiles, after materials_tiled: block b's warps take shares b * blockDim.y + warp.
template <bool PR, bool PC, int K>
__device__ __forceinline__ void materials_tiled_mixed(const float* __restrict__ in, float* __restrict__ out,
                                                      const unsigned char* __restrict__ map,
                                                      const float* __restrict__ tables, int n, int rows, int cols,
                                                      int segment_rows, const unsigned* __restrict__ tiles,
                                                      int count, int parts) {
    const Tables t = load_tables(tables, n);
    mixed_tile_part<PR, PC, K>(t, in, out, map, rows, cols, segment_rows, strips_of<K>(cols), tiles, count, parts,
                               blockIdx.x * blockDim.y + threadIdx.y);
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

// Four blocks of 128 threads per SM (at most 128 registers a thread), as the uniform packed kernels.
// The mixed tiles' kernel has the blocked kernels' bounds.
#define TILED_KERNEL(NAME, K, ANTISYM, PR, PC)                                                                  \
    extern "C" __global__ void __launch_bounds__(128, 4)                                                        \
        NAME##_pr##PR##_pc##PC(const float *__restrict__ in, float *__restrict__ out,                           \
                               const float *__restrict__ tables, int n, int rows, int cols, int segment_rows,   \
                               const int *__restrict__ tile_kinds) {                                           \
        materials_tiled<PR, PC, K, ANTISYM>(in, out, tables, n, rows, cols, segment_rows, tile_kinds);          \
    }
#define TILED_SUPPORT_KERNELS(K, PR, PC)                                                                        \
    extern "C" __global__ void __launch_bounds__(128) materials_classify_tiles_k##K##_pr##PR##_pc##PC(         \
        const unsigned char *__restrict__ map, int rows, int cols, int segment_rows, int *__restrict__ kinds) { \
        classify_tiles<PR, PC, K>(map, rows, cols, segment_rows, kinds);                                        \
    }                                                                                                           \
    extern "C" __global__ void __launch_bounds__(128) materials_tiled_mixed_k##K##_pr##PR##_pc##PC(             \
        STEP_ARGS, int segment_rows, const unsigned *__restrict__ tiles, int count, int parts) {                \
        materials_tiled_mixed<PR, PC, K>(in, out, map, tables, n, rows, cols, segment_rows, tiles, count, parts); \
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
    BLOCKED_KERNEL(materials_blocked_k8c, 8, true, PR, PC)                                                     \
    TILED_KERNEL(materials_tiled_k8, 8, true, PR, PC)                                                           \
    TILED_KERNEL(materials_tiled_k8d, 8, false, PR, PC)                                                         \
    TILED_SUPPORT_KERNELS(8, PR, PC)
MATERIAL_KERNELS(0, 0)
MATERIAL_KERNELS(0, 1)
MATERIAL_KERNELS(1, 0)
MATERIAL_KERNELS(1, 1)
