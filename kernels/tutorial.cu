// heatlab tutorial kernels (seed 001: hidden layer, Gaussian PDF, Monte Carlo pi), compiled at
// run time by NVRTC for the device's own architecture, with --fmad=false like diffusion.cu.
//
// The CPU versions in src/tutorial/ evaluate the same formulas in the same order, so the
// element-wise kernels agree with them to a few units in the last place (the GPU's tanhf/expf
// are not glibc's), and the Monte Carlo count agrees exactly (integer arithmetic only).

// ---------------------------------------------------------------------------------------------
// Holds the stream for `nanoseconds` (one thread watching the GPU's global timer), so that the
// host can queue a batch of launches behind it: the batch then runs back to back at the GPU's
// pace, not at the pace the host submits launches (see time_device_resident in gpu.rs).
extern "C" __global__ void hold_stream(unsigned long long nanoseconds) {
    unsigned long long start;
    unsigned long long now;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(start));
    do {
#if __CUDA_ARCH__ >= 700
        __nanosleep(1000);
#endif
        asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(now));
    } while (now - start < nanoseconds);
}

// ---------------------------------------------------------------------------------------------
// The element-wise kernels are memory bound: each thread moves whole float4 groups (16-byte
// loads and stores) and issues all of its loads before computing, so that enough bytes are in
// flight to keep HBM busy. Thread i of block b handles groups b * GROUPS * blockDim.x + i +
// k * blockDim.x for k < GROUPS (neighbouring threads touch neighbouring groups: coalesced).
// The n % 4 tail elements, past the last whole group, go to the first threads of block 0.
// Every pointer must be 16-byte aligned: cudarc's allocations are, and the chunked pinned runs
// split arrays at multiples of 4 elements. The launch covers n / 4 groups with one grid of
// ceil(groups / (GROUPS * blockDim.x)) blocks (at least one, for the tail).

// Hidden layer: activation = tanh(greyscale / 255 * weight), float32 throughout.
#define HIDDEN_GROUPS 1
__device__ __forceinline__ float activation(float greyscale, float weight) {
    const float normalized = greyscale / 255.0f;
    return tanhf(normalized * weight);
}

extern "C" __global__ void hidden_layer(const float* __restrict__ greyscales,
                                        const float* __restrict__ weights,
                                        float* __restrict__ activations,
                                        unsigned long long n) {
    const unsigned long long groups = n / 4;
    const unsigned long long base = (unsigned long long)blockIdx.x * blockDim.x * HIDDEN_GROUPS + threadIdx.x;
    float4 g[HIDDEN_GROUPS], w[HIDDEN_GROUPS];
#pragma unroll
    for (int k = 0; k < HIDDEN_GROUPS; ++k) {
        const unsigned long long i = base + (unsigned long long)k * blockDim.x;
        if (i < groups) {
            g[k] = reinterpret_cast<const float4*>(greyscales)[i];
            w[k] = reinterpret_cast<const float4*>(weights)[i];
        }
    }
#pragma unroll
    for (int k = 0; k < HIDDEN_GROUPS; ++k) {
        const unsigned long long i = base + (unsigned long long)k * blockDim.x;
        if (i < groups) {
            reinterpret_cast<float4*>(activations)[i] =
                make_float4(activation(g[k].x, w[k].x), activation(g[k].y, w[k].y),
                            activation(g[k].z, w[k].z), activation(g[k].w, w[k].w));
        }
    }
    if (blockIdx.x == 0 && threadIdx.x < (n & 3)) {
        const unsigned long long j = 4 * groups + threadIdx.x;
        activations[j] = activation(greyscales[j], weights[j]);
    }
}

// Gaussian PDF: exp(-z*z/2) / (sigma * sqrt(2*pi)) with z = (x - mean) / sigma, float32.
// The division by sigma * sqrt(2*pi) is kept as the formula writes it (not a multiply by its
// inverse) so that the CPU does exactly the same operations in the same order.
#define SQRT_2PI_F 2.5066282746310002f
#define GAUSSIAN_GROUPS 2
__device__ __forceinline__ float gaussian(float x, float mean, float sigma, float norm) {
    const float z = (x - mean) / sigma;
    return expf(-0.5f * (z * z)) / norm;
}

extern "C" __global__ void gaussian_pdf(const float* __restrict__ x,
                                        float* __restrict__ pdf,
                                        unsigned long long n,
                                        float mean,
                                        float sigma) {
    const float norm = sigma * SQRT_2PI_F;
    const unsigned long long groups = n / 4;
    const unsigned long long base = (unsigned long long)blockIdx.x * blockDim.x * GAUSSIAN_GROUPS + threadIdx.x;
    float4 v[GAUSSIAN_GROUPS];
#pragma unroll
    for (int k = 0; k < GAUSSIAN_GROUPS; ++k) {
        const unsigned long long i = base + (unsigned long long)k * blockDim.x;
        if (i < groups) v[k] = reinterpret_cast<const float4*>(x)[i];
    }
#pragma unroll
    for (int k = 0; k < GAUSSIAN_GROUPS; ++k) {
        const unsigned long long i = base + (unsigned long long)k * blockDim.x;
        if (i < groups) {
            reinterpret_cast<float4*>(pdf)[i] =
                make_float4(gaussian(v[k].x, mean, sigma, norm), gaussian(v[k].y, mean, sigma, norm),
                            gaussian(v[k].z, mean, sigma, norm), gaussian(v[k].w, mean, sigma, norm));
        }
    }
    if (blockIdx.x == 0 && threadIdx.x < (n & 3)) {
        const unsigned long long j = 4 * groups + threadIdx.x;
        pdf[j] = gaussian(x[j], mean, sigma, norm);
    }
}

// ---------------------------------------------------------------------------------------------
// Monte Carlo pi with Philox4x32-7 (Salmon, Moraes, Dror and Shaw, "Parallel random numbers: as
// easy as 1, 2, 3", SC'11; Random123's constants). Seven rounds is the smallest count with
// which Philox4x32 passes all of TestU01's BigCrush in the paper's tests (its Table 2);
// Random123 uses ten by default as a safety margin, and heatlab used ten until the count had to
// reach 1e12 samples/s. Sample j uses the block of counter (j / 2, 0, 0) under key (seed low
// word, seed high word): words 0 and 1 give point 2k, words 2 and 3 point 2k + 1. A coordinate
// is the top 24 bits of its word, X in [0, 2^24), x = X / 2^24 (exact in float32), and the
// point is inside the quarter circle when X*X + Y*Y < 2^48, which is exactly x*x + y*y < 1
// without any rounding. So the count depends only on (seed, n): the same on every GPU, every
// launch shape, and the CPU.
#define PHILOX_ROUNDS 7
#define PHILOX_M0 0xD2511F53u
#define PHILOX_M1 0xCD9E8D57u
#define PHILOX_W0 0x9E3779B9u
#define PHILOX_W1 0xBB67AE85u

// Counts one point, integer only: X*X + Y*Y (< 2^49) is below 2^48 when its high word is below
// 2^16.
__device__ __forceinline__ unsigned int inside_integer(unsigned int word_x, unsigned int word_y) {
    const unsigned long long x = word_x >> 8;
    const unsigned long long y = word_y >> 8;
    return (unsigned int)((x * x + y * y) >> 32) < 0x10000u ? 1u : 0u;
}

// The same test on the FP64 units, which an H100 has beside its integer units: the double whose
// bits are (0x43300000, X) is 2^52 + X exactly, so subtracting 2^52 gives X exactly; X*X and
// Y*Y (< 2^48) and their sum (< 2^49) are exact in a double's 53 bits. So this is the integer
// test, bit for bit, computed elsewhere in the SM (the integer units are busy with Philox).
__device__ __forceinline__ unsigned int inside_double(unsigned int word_x, unsigned int word_y) {
    const double x = __hiloint2double(0x43300000, (int)(word_x >> 8)) - 4503599627370496.0;
    const double y = __hiloint2double(0x43300000, (int)(word_y >> 8)) - 4503599627370496.0;
    return x * x + y * y < 281474976710656.0 ? 1u : 0u;
}

__device__ __forceinline__ uint4 philox4x32_7(uint4 ctr, uint2 key) {
#pragma unroll
    for (int round = 0; round < PHILOX_ROUNDS; ++round) {
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

#define PI_BLOCK 256

// Adds the block's counts to *inside: warp shuffles, then shared memory, then one 64-bit atomic
// add per block.
__device__ __forceinline__ void add_block_count(unsigned long long count, unsigned long long* inside) {
    for (int offset = 16; offset > 0; offset /= 2) count += __shfl_down_sync(0xffffffffu, count, offset);
    __shared__ unsigned long long warp_counts[PI_BLOCK / 32];
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

// Counts the samples [first_sample, first_sample + sample_count) inside the quarter circle and
// adds the count to *inside. first_sample must be even (chunks start on a Philox block), and a
// thread's share must stay below 2^32 blocks (the host launches at most 2^35 samples at once).
// Each thread takes one contiguous share of the whole blocks, the keys of every round are
// computed once per thread, and the loop counts in 32 bits; the odd last sample (the first half
// of the next block) goes to the grid's last thread.
// WIDE_PRODUCT computes each Philox product as one 64-bit product instead of its low and high
// words apart: the same numbers, but the compiler may issue fewer multiplies.
template <bool DOUBLE_TEST, bool WIDE_PRODUCT>
__device__ __forceinline__ void count_inside(unsigned long long seed,
                                             unsigned long long first_sample,
                                             unsigned long long sample_count,
                                             unsigned long long* inside) {
    uint2 keys[PHILOX_ROUNDS];
    keys[0] = make_uint2((unsigned int)seed, (unsigned int)(seed >> 32));
#pragma unroll
    for (int round = 1; round < PHILOX_ROUNDS; ++round) {
        keys[round] = make_uint2(keys[round - 1].x + PHILOX_W0, keys[round - 1].y + PHILOX_W1);
    }
    const unsigned long long whole_blocks = sample_count / 2;
    const unsigned long long threads = (unsigned long long)gridDim.x * blockDim.x;
    const unsigned long long thread = (unsigned long long)blockIdx.x * blockDim.x + threadIdx.x;
    const unsigned long long begin = whole_blocks * thread / threads;
    const unsigned long long end = whole_blocks * (thread + 1) / threads;
    const unsigned long long first_counter = first_sample / 2 + begin;
    unsigned int counter_lo = (unsigned int)first_counter;
    unsigned int counter_hi = (unsigned int)(first_counter >> 32);
    const unsigned int blocks = (unsigned int)(end - begin);
    unsigned int count = 0;
#pragma unroll 2
    for (unsigned int k = 0; k < blocks; ++k) {
        uint4 ctr = make_uint4(counter_lo, counter_hi, 0u, 0u);
#pragma unroll
        for (int round = 0; round < PHILOX_ROUNDS; ++round) {
            if (WIDE_PRODUCT) {
                const unsigned long long p0 = (unsigned long long)PHILOX_M0 * ctr.x;
                const unsigned long long p1 = (unsigned long long)PHILOX_M1 * ctr.z;
                ctr = make_uint4((unsigned int)(p1 >> 32) ^ ctr.y ^ keys[round].x, (unsigned int)p1,
                                 (unsigned int)(p0 >> 32) ^ ctr.w ^ keys[round].y, (unsigned int)p0);
            } else {
                const unsigned int lo0 = PHILOX_M0 * ctr.x;
                const unsigned int hi0 = __umulhi(PHILOX_M0, ctr.x);
                const unsigned int lo1 = PHILOX_M1 * ctr.z;
                const unsigned int hi1 = __umulhi(PHILOX_M1, ctr.z);
                ctr = make_uint4(hi1 ^ ctr.y ^ keys[round].x, lo1, hi0 ^ ctr.w ^ keys[round].y, lo0);
            }
        }
        count += DOUBLE_TEST ? inside_double(ctr.x, ctr.y) + inside_double(ctr.z, ctr.w)
                             : inside_integer(ctr.x, ctr.y) + inside_integer(ctr.z, ctr.w);
        counter_lo += 1;
        counter_hi += counter_lo == 0 ? 1u : 0u;
    }
    unsigned long long total = count;
    if ((sample_count & 1) != 0 && thread == threads - 1) {
        const unsigned long long counter = first_sample / 2 + whole_blocks;
        const uint4 words = philox4x32_7(make_uint4((unsigned int)counter, (unsigned int)(counter >> 32), 0u, 0u), keys[0]);
        total += inside_integer(words.x, words.y);
    }
    add_block_count(total, inside);
}

// The four Monte Carlo kernels count the same samples the same way; they differ in how the
// hardware is asked to do it (the hit test on the integer or the FP64 units; Philox's products
// as low and high words or as one 64-bit product). TutorialGpu::open times them all once and
// keeps the fastest on the GPU at hand, after checking that their counts are equal.
#define PI_KERNEL(name, double_test, wide_product)                                                  \
    extern "C" __global__ void __launch_bounds__(PI_BLOCK) name(unsigned long long seed,            \
                                                                unsigned long long first_sample,    \
                                                                unsigned long long sample_count,    \
                                                                unsigned long long* inside) {       \
        count_inside<double_test, wide_product>(seed, first_sample, sample_count, inside);          \
    }
PI_KERNEL(monte_carlo_pi, false, false)
PI_KERNEL(monte_carlo_pi_double_test, true, false)
PI_KERNEL(monte_carlo_pi_wide, false, true)
PI_KERNEL(monte_carlo_pi_wide_double_test, true, true)
