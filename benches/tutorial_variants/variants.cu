// Candidate shapes of the tutorial kernels, timed side by side by examples/tutorial_variants.rs
// on the GPU machine to choose the ones kernels/tutorial.cu uses (issue 11, item 4).
// Element-wise: (inputs..., output, n[, mean, sigma]); pi: (seed, first_sample, sample_count, inside).

typedef unsigned long long u64;

// ------------------------------------------------------------------------------------------
// Hidden layer
extern "C" __global__ void hl_base(const float* __restrict__ g, const float* __restrict__ w,
                                   float* __restrict__ a, u64 n) {
    const u64 stride = (u64)gridDim.x * blockDim.x;
    for (u64 i = (u64)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride) {
        a[i] = tanhf(g[i] / 255.0f * w[i]);
    }
}

__device__ __forceinline__ float act(float g, float w) { return tanhf(g / 255.0f * w); }

// One float4 group per thread; the n % 4 tail elements go to the threads after the groups.
extern "C" __global__ void hl_v4(const float* __restrict__ g, const float* __restrict__ w,
                                 float* __restrict__ a, u64 n) {
    const u64 groups = n / 4;
    const u64 i = (u64)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < groups) {
        const float4 gv = reinterpret_cast<const float4*>(g)[i];
        const float4 wv = reinterpret_cast<const float4*>(w)[i];
        reinterpret_cast<float4*>(a)[i] =
            make_float4(act(gv.x, wv.x), act(gv.y, wv.y), act(gv.z, wv.z), act(gv.w, wv.w));
    } else {
        const u64 j = 4 * groups + (i - groups);
        if (j < n) a[j] = act(g[j], w[j]);
    }
}

// Two float4 groups per thread (i and i + blockDim.x within the block's span).
extern "C" __global__ void hl_v4x2(const float* __restrict__ g, const float* __restrict__ w,
                                   float* __restrict__ a, u64 n) {
    const u64 groups = n / 4;
    const u64 base = (u64)blockIdx.x * blockDim.x * 2 + threadIdx.x;
    float4 gv[2], wv[2];
#pragma unroll
    for (int k = 0; k < 2; ++k) {
        const u64 i = base + (u64)k * blockDim.x;
        if (i < groups) {
            gv[k] = reinterpret_cast<const float4*>(g)[i];
            wv[k] = reinterpret_cast<const float4*>(w)[i];
        }
    }
#pragma unroll
    for (int k = 0; k < 2; ++k) {
        const u64 i = base + (u64)k * blockDim.x;
        if (i < groups) {
            reinterpret_cast<float4*>(a)[i] = make_float4(act(gv[k].x, wv[k].x), act(gv[k].y, wv[k].y),
                                                          act(gv[k].z, wv[k].z), act(gv[k].w, wv[k].w));
        }
    }
    if (blockIdx.x == 0 && threadIdx.x < (n & 3)) {
        const u64 j = 4 * groups + threadIdx.x;
        a[j] = act(g[j], w[j]);
    }
}

// ------------------------------------------------------------------------------------------
// Gaussian PDF
#define SQRT_2PI_F 2.5066282746310002f
__device__ __forceinline__ float pdf1(float x, float mean, float sigma, float norm) {
    const float z = (x - mean) / sigma;
    return expf(-0.5f * (z * z)) / norm;
}

extern "C" __global__ void g_base(const float* __restrict__ x, float* __restrict__ p, u64 n,
                                  float mean, float sigma) {
    const float norm = sigma * SQRT_2PI_F;
    const u64 stride = (u64)gridDim.x * blockDim.x;
    for (u64 i = (u64)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride) {
        p[i] = pdf1(x[i], mean, sigma, norm);
    }
}

template <int GROUPS, bool STREAMING>
__device__ __forceinline__ void g_groups(const float* __restrict__ x, float* __restrict__ p, u64 n,
                                         float mean, float sigma) {
    const float norm = sigma * SQRT_2PI_F;
    const u64 groups = n / 4;
    const u64 base = (u64)blockIdx.x * blockDim.x * GROUPS + threadIdx.x;
    float4 v[GROUPS];
#pragma unroll
    for (int k = 0; k < GROUPS; ++k) {
        const u64 i = base + (u64)k * blockDim.x;
        if (i < groups) {
            const float4* src = reinterpret_cast<const float4*>(x) + i;
            v[k] = STREAMING ? __ldcs(src) : *src;
        }
    }
#pragma unroll
    for (int k = 0; k < GROUPS; ++k) {
        const u64 i = base + (u64)k * blockDim.x;
        if (i < groups) {
            const float4 r = make_float4(pdf1(v[k].x, mean, sigma, norm), pdf1(v[k].y, mean, sigma, norm),
                                         pdf1(v[k].z, mean, sigma, norm), pdf1(v[k].w, mean, sigma, norm));
            float4* dst = reinterpret_cast<float4*>(p) + i;
            if (STREAMING) __stcs(dst, r); else *dst = r;
        }
    }
    if (blockIdx.x == 0 && threadIdx.x < (n & 3)) {
        const u64 j = 4 * groups + threadIdx.x;
        p[j] = pdf1(x[j], mean, sigma, norm);
    }
}

extern "C" __global__ void g_v4(const float* __restrict__ x, float* __restrict__ p, u64 n, float mean, float sigma) {
    g_groups<1, false>(x, p, n, mean, sigma);
}
extern "C" __global__ void g_v4x2(const float* __restrict__ x, float* __restrict__ p, u64 n, float mean, float sigma) {
    g_groups<2, false>(x, p, n, mean, sigma);
}
extern "C" __global__ void g_v4x4(const float* __restrict__ x, float* __restrict__ p, u64 n, float mean, float sigma) {
    g_groups<4, false>(x, p, n, mean, sigma);
}
extern "C" __global__ void g_v4x2cs(const float* __restrict__ x, float* __restrict__ p, u64 n, float mean, float sigma) {
    g_groups<2, true>(x, p, n, mean, sigma);
}
extern "C" __global__ void g_v4x4cs(const float* __restrict__ x, float* __restrict__ p, u64 n, float mean, float sigma) {
    g_groups<4, true>(x, p, n, mean, sigma);
}

// ------------------------------------------------------------------------------------------
// Monte Carlo pi
#define PHILOX_M0 0xD2511F53u
#define PHILOX_M1 0xCD9E8D57u
#define PHILOX_W0 0x9E3779B9u
#define PHILOX_W1 0xBB67AE85u

__device__ __forceinline__ uint4 philox_rounds(uint4 ctr, uint2 key, int rounds) {
    for (int round = 0; round < rounds; ++round) {
        const unsigned int lo0 = PHILOX_M0 * ctr.x;
        const unsigned int hi0 = __umulhi(PHILOX_M0, ctr.x);
        const unsigned int lo1 = PHILOX_M1 * ctr.z;
        const unsigned int hi1 = __umulhi(PHILOX_M1, ctr.z);
        ctr = make_uint4(hi1 ^ ctr.y ^ key.x, lo1, hi0 ^ ctr.w ^ key.y, lo0);
        key.x += PHILOX_W0;
        key.y += PHILOX_W1;
    }
    return ctr;
}

__device__ __forceinline__ unsigned int inside_base(unsigned int word_x, unsigned int word_y) {
    const u64 x = word_x >> 8;
    const u64 y = word_y >> 8;
    return (x * x + y * y) < (1ull << 48) ? 1u : 0u;
}

#define PI_BLOCK 256

__device__ __forceinline__ void block_add(u64 count, u64* inside) {
    for (int offset = 16; offset > 0; offset /= 2) count += __shfl_down_sync(0xffffffffu, count, offset);
    __shared__ u64 warp_counts[PI_BLOCK / 32];
    const int lane = threadIdx.x % 32;
    const int warp = threadIdx.x / 32;
    if (lane == 0) warp_counts[warp] = count;
    __syncthreads();
    if (warp == 0) {
        count = lane < PI_BLOCK / 32 ? warp_counts[lane] : 0ull;
        for (int offset = 16; offset > 0; offset /= 2) count += __shfl_down_sync(0xffffffffu, count, offset);
        if (lane == 0 && count > 0) atomicAdd(inside, count);
    }
}

// P0: today's kernel.
extern "C" __global__ void __launch_bounds__(PI_BLOCK) pi_base(u64 seed, u64 first_sample, u64 sample_count, u64* inside) {
    const uint2 key = make_uint2((unsigned int)seed, (unsigned int)(seed >> 32));
    const u64 first_block = first_sample / 2;
    const u64 blocks = (sample_count + 1) / 2;
    const u64 stride = (u64)gridDim.x * blockDim.x;
    u64 count = 0;
    for (u64 k = (u64)blockIdx.x * blockDim.x + threadIdx.x; k < blocks; k += stride) {
        const u64 counter = first_block + k;
        const uint4 words = philox_rounds(make_uint4((unsigned int)counter, (unsigned int)(counter >> 32), 0u, 0u), key, 10);
        count += inside_base(words.x, words.y);
        if (2 * k + 1 < sample_count) count += inside_base(words.z, words.w);
    }
    block_add(count, inside);
}

// The exact test as the high word of X^2 + Y^2 (< 2^49): inside when it is below 2^16.
__device__ __forceinline__ unsigned int inside_hi(unsigned int word_x, unsigned int word_y) {
    const u64 x = word_x >> 8;
    const u64 y = word_y >> 8;
    return (unsigned int)((x * x + y * y) >> 32) < 0x10000u ? 1u : 0u;
}

// The same test on the FP64 pipe: 2^52 + X built from its bits, minus 2^52, is X exactly; the
// squares (< 2^48) and their sum (< 2^49) are exact in a double.
__device__ __forceinline__ unsigned int inside_f64(unsigned int word_x, unsigned int word_y) {
    const double x = __hiloint2double(0x43300000, word_x >> 8) - 4503599627370496.0;
    const double y = __hiloint2double(0x43300000, word_y >> 8) - 4503599627370496.0;
    return x * x + y * y < 281474976710656.0 ? 1u : 0u;
}

// The thread's contiguous share [begin, end) of `items`.
__device__ __forceinline__ void share(u64 items, u64* begin, u64* end) {
    const u64 threads = (u64)gridDim.x * blockDim.x;
    const u64 t = (u64)blockIdx.x * blockDim.x + threadIdx.x;
    *begin = items * t / threads;
    *end = items * (t + 1) / threads;
}

// P1/P2: Philox with hoisted keys, contiguous shares, 32-bit loop and count.
template <int ROUNDS, bool F64>
__device__ __forceinline__ void pi_philox(u64 seed, u64 first_sample, u64 sample_count, u64* inside) {
    uint2 keys[ROUNDS];
    keys[0] = make_uint2((unsigned int)seed, (unsigned int)(seed >> 32));
#pragma unroll
    for (int r = 1; r < ROUNDS; ++r) keys[r] = make_uint2(keys[r - 1].x + PHILOX_W0, keys[r - 1].y + PHILOX_W1);
    const u64 full_blocks = sample_count / 2;
    u64 begin, end;
    share(full_blocks, &begin, &end);
    const u64 first_block = first_sample / 2 + begin;
    const unsigned int count_blocks = (unsigned int)(end - begin);
    unsigned int count = 0;
    unsigned int lo = (unsigned int)first_block;
    unsigned int hi = (unsigned int)(first_block >> 32);
    for (unsigned int k = 0; k < count_blocks; ++k) {
        uint4 ctr = make_uint4(lo, hi, 0u, 0u);
#pragma unroll
        for (int r = 0; r < ROUNDS; ++r) {
            const unsigned int lo0 = PHILOX_M0 * ctr.x;
            const unsigned int hi0 = __umulhi(PHILOX_M0, ctr.x);
            const unsigned int lo1 = PHILOX_M1 * ctr.z;
            const unsigned int hi1 = __umulhi(PHILOX_M1, ctr.z);
            ctr = make_uint4(hi1 ^ ctr.y ^ keys[r].x, lo1, hi0 ^ ctr.w ^ keys[r].y, lo0);
        }
        count += F64 ? inside_f64(ctr.x, ctr.y) + inside_f64(ctr.z, ctr.w)
                     : inside_hi(ctr.x, ctr.y) + inside_hi(ctr.z, ctr.w);
        lo += 1;
        hi += (lo == 0) ? 1u : 0u;
    }
    u64 total = count;
    // The odd last sample: the first half of the block after the full ones, by the last thread.
    if ((sample_count & 1) && blockIdx.x == gridDim.x - 1 && threadIdx.x == blockDim.x - 1) {
        const u64 counter = first_sample / 2 + full_blocks;
        uint4 ctr = philox_rounds(make_uint4((unsigned int)counter, (unsigned int)(counter >> 32), 0u, 0u),
                                  keys[0], ROUNDS);
        total += inside_hi(ctr.x, ctr.y);
    }
    block_add(total, inside);
}

extern "C" __global__ void __launch_bounds__(PI_BLOCK) pi_philox10(u64 s, u64 f, u64 c, u64* in) { pi_philox<10, false>(s, f, c, in); }
extern "C" __global__ void __launch_bounds__(PI_BLOCK) pi_philox10d(u64 s, u64 f, u64 c, u64* in) { pi_philox<10, true>(s, f, c, in); }
extern "C" __global__ void __launch_bounds__(PI_BLOCK) pi_philox7(u64 s, u64 f, u64 c, u64* in) { pi_philox<7, false>(s, f, c, in); }
extern "C" __global__ void __launch_bounds__(PI_BLOCK) pi_philox7d(u64 s, u64 f, u64 c, u64* in) { pi_philox<7, true>(s, f, c, in); }

// P3: PCG32 (XSH RR 64/32, O'Neill 2014), one sequence; sample j = words 2j, 2j + 1. Each thread
// jumps to its share with the LCG's O(log n) advance.
#define PCG_MULT 6364136223846793005ull
#define PCG_STREAM 54ull

__device__ __forceinline__ unsigned int pcg_output(u64 old) {
    const unsigned int xorshifted = (unsigned int)(((old >> 18) ^ old) >> 27);
    const unsigned int rot = (unsigned int)(old >> 59);
    return (xorshifted >> rot) | (xorshifted << ((0u - rot) & 31));
}

__device__ __forceinline__ u64 pcg_advance(u64 state, u64 delta, u64 inc) {
    u64 cur_mult = PCG_MULT, cur_plus = inc, acc_mult = 1, acc_plus = 0;
    while (delta > 0) {
        if (delta & 1) {
            acc_mult *= cur_mult;
            acc_plus = acc_plus * cur_mult + cur_plus;
        }
        cur_plus = (cur_mult + 1) * cur_plus;
        cur_mult *= cur_mult;
        delta /= 2;
    }
    return acc_mult * state + acc_plus;
}

template <bool F64>
__device__ __forceinline__ void pi_pcg(u64 seed, u64 first_sample, u64 sample_count, u64* inside) {
    const u64 inc = (PCG_STREAM << 1) | 1;
    u64 state = 0;
    state = state * PCG_MULT + inc;
    state += seed;
    state = state * PCG_MULT + inc;
    u64 begin, end;
    share(sample_count, &begin, &end);
    state = pcg_advance(state, 2 * (first_sample + begin), inc);
    const unsigned int samples = (unsigned int)(end - begin);
    unsigned int count = 0;
    for (unsigned int k = 0; k < samples; ++k) {
        const u64 s1 = state * PCG_MULT + inc;
        const unsigned int wx = pcg_output(state);
        const unsigned int wy = pcg_output(s1);
        state = s1 * PCG_MULT + inc;
        count += F64 ? inside_f64(wx, wy) : inside_hi(wx, wy);
    }
    block_add(count, inside);
}

extern "C" __global__ void __launch_bounds__(PI_BLOCK) pi_pcg(u64 s, u64 f, u64 c, u64* in) { pi_pcg<false>(s, f, c, in); }
extern "C" __global__ void __launch_bounds__(PI_BLOCK) pi_pcgd(u64 s, u64 f, u64 c, u64* in) { pi_pcg<true>(s, f, c, in); }

// P4: PCG32 with two independent interleaved halves per thread (more instruction-level
// parallelism): the thread's share is split in two and both run in the same loop.
extern "C" __global__ void __launch_bounds__(PI_BLOCK) pi_pcg2(u64 seed, u64 first_sample, u64 sample_count, u64* inside) {
    const u64 inc = (PCG_STREAM << 1) | 1;
    u64 s0 = 0;
    s0 = s0 * PCG_MULT + inc;
    s0 += seed;
    s0 = s0 * PCG_MULT + inc;
    u64 begin, end;
    share(sample_count, &begin, &end);
    const u64 half = (end - begin) / 2;
    u64 a = pcg_advance(s0, 2 * (first_sample + begin), inc);
    u64 b = pcg_advance(s0, 2 * (first_sample + begin + half), inc);
    unsigned int count = 0;
    for (unsigned int k = 0; k < (unsigned int)half; ++k) {
        const u64 a1 = a * PCG_MULT + inc;
        const u64 b1 = b * PCG_MULT + inc;
        count += inside_hi(pcg_output(a), pcg_output(a1));
        count += inside_hi(pcg_output(b), pcg_output(b1));
        a = a1 * PCG_MULT + inc;
        b = b1 * PCG_MULT + inc;
    }
    if ((end - begin) & 1) {
        const u64 b1 = b * PCG_MULT + inc;
        count += inside_hi(pcg_output(b), pcg_output(b1));
    }
    block_add(count, inside);
}
