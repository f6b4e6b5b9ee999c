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
// Monte Carlo pi with PCG32 (M. E. O'Neill, "PCG: A Family of Simple Fast Space-Efficient
// Statistically Good Algorithms for Random Number Generation", Harvey Mudd College
// HMC-CS-2014-0905, 2014): pcg_basic.c's XSH RR 64/32 generator, which passes TestU01's
// BigCrush and PractRand in that report, seeded as pcg32_srandom_r(seed, PCG_STREAM). Sample j
// takes outputs 2j (x) and 2j + 1 (y) of that one sequence; each thread jumps to its share with
// the LCG's O(log n) advance (F. B. Brown, "Random number generation with arbitrary strides",
// Trans. Am. Nucl. Soc. 71, 1994; pcg_advance_lcg_64 in pcg_basic.c), so the samples are the
// sequence's own whatever the launch shape. A coordinate is the top 24 bits of its word, X in
// [0, 2^24), x = X / 2^24 (exact in float32), and the point is inside the quarter circle when
// X*X + Y*Y < 2^48, which is exactly x*x + y*y < 1 without any rounding. So the count depends
// only on (seed, n): the same on every GPU, every launch shape, and the CPU (which replays the
// same sequence). Per sample PCG32 costs two 64-bit multiply-adds and a few shifts, where
// Philox4x32-7 (used before) cost seven rounds of two 32x32 -> 64-bit products per two samples.
#define PCG_MULTIPLIER 6364136223846793005ull
#define PCG_STREAM 54ull

// The output function of the word whose state is `old`: ((old >> 18) ^ old) >> 27, rotated
// right by old >> 59. The low word of (old >> 27) ^ (old >> 45) is a funnel shift and a shift.
__device__ __forceinline__ unsigned int pcg_output(unsigned long long old) {
    const unsigned int lo = (unsigned int)old;
    const unsigned int hi = (unsigned int)(old >> 32);
    const unsigned int xorshifted = __funnelshift_r(lo, hi, 27) ^ (hi >> 13);
    return __funnelshift_r(xorshifted, xorshifted, hi >> 27);
}

// The state `delta` steps after `state` (pcg_advance_lcg_64).
__device__ unsigned long long pcg_advance(unsigned long long state, unsigned long long delta,
                                          unsigned long long increment) {
    unsigned long long multiplier = PCG_MULTIPLIER;
    unsigned long long plus = increment;
    unsigned long long acc_multiplier = 1;
    unsigned long long acc_plus = 0;
    while (delta > 0) {
        if (delta & 1) {
            acc_multiplier *= multiplier;
            acc_plus = acc_plus * multiplier + plus;
        }
        plus = (multiplier + 1) * plus;
        multiplier *= multiplier;
        delta >>= 1;
    }
    return acc_multiplier * state + acc_plus;
}

// Counts one point, integer only: X*X + Y*Y (< 2^49) is below 2^48 when its high word is below
// 2^16.
__device__ __forceinline__ unsigned int inside_integer(unsigned int word_x, unsigned int word_y) {
    const unsigned long long x = word_x >> 8;
    const unsigned long long y = word_y >> 8;
    return (unsigned int)((x * x + y * y) >> 32) < 0x10000u ? 1u : 0u;
}

// The same test on the FP64 units: the double whose bits are (0x43300000, X) is 2^52 + X
// exactly, so subtracting 2^52 gives X exactly; X*X and Y*Y (< 2^48) and their sum (< 2^49)
// are exact in a double's 53 bits. So this is the integer test, bit for bit, computed on other
// units of the SM than the generator's.
__device__ __forceinline__ unsigned int inside_double(unsigned int word_x, unsigned int word_y) {
    const double x = __hiloint2double(0x43300000, (int)(word_x >> 8)) - 4503599627370496.0;
    const double y = __hiloint2double(0x43300000, (int)(word_y >> 8)) - 4503599627370496.0;
    return x * x + y * y < 281474976710656.0 ? 1u : 0u;
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
// adds the count to *inside. A thread's share must stay below 2^32 samples (the host launches
// at most 2^35 samples at once). Each thread takes one contiguous share, jumps to it, and
// steps two words per sample (the second word's state and the next sample's are both one
// multiply-add from the current state, so they do not wait on each other).
template <bool DOUBLE_TEST>
__device__ __forceinline__ void count_inside(unsigned long long seed,
                                             unsigned long long first_sample,
                                             unsigned long long sample_count,
                                             unsigned long long* inside) {
    const unsigned long long increment = (PCG_STREAM << 1) | 1;
    const unsigned long long threads = (unsigned long long)gridDim.x * blockDim.x;
    const unsigned long long thread = (unsigned long long)blockIdx.x * blockDim.x + threadIdx.x;
    const unsigned long long begin = sample_count * thread / threads;
    const unsigned long long end = sample_count * (thread + 1) / threads;
    // pcg32_srandom_r(seed, PCG_STREAM): one step from 0, add the seed, one more step.
    const unsigned long long seeded = (increment + seed) * PCG_MULTIPLIER + increment;
    unsigned long long state = pcg_advance(seeded, 2 * (first_sample + begin), increment);
    const unsigned long long two_steps_multiplier = PCG_MULTIPLIER * PCG_MULTIPLIER;
    const unsigned long long two_steps_plus = (PCG_MULTIPLIER + 1) * increment;
    const unsigned int samples = (unsigned int)(end - begin);
    unsigned int count = 0;
#pragma unroll 2
    for (unsigned int k = 0; k < samples; ++k) {
        const unsigned long long second = state * PCG_MULTIPLIER + increment;
        const unsigned int word_x = pcg_output(state);
        const unsigned int word_y = pcg_output(second);
        state = state * two_steps_multiplier + two_steps_plus;
        count += DOUBLE_TEST ? inside_double(word_x, word_y) : inside_integer(word_x, word_y);
    }
    add_block_count(count, inside);
}

// The two Monte Carlo kernels count the same samples the same way; the hit test runs on the
// integer units or on the FP64 units. TutorialGpu::open times both once and keeps the faster on
// the GPU at hand, after checking that their counts are equal.
extern "C" __global__ void __launch_bounds__(PI_BLOCK) monte_carlo_pi(unsigned long long seed,
                                                                       unsigned long long first_sample,
                                                                       unsigned long long sample_count,
                                                                       unsigned long long* inside) {
    count_inside<false>(seed, first_sample, sample_count, inside);
}

extern "C" __global__ void __launch_bounds__(PI_BLOCK) monte_carlo_pi_double_test(unsigned long long seed,
                                                                                   unsigned long long first_sample,
                                                                                   unsigned long long sample_count,
                                                                                   unsigned long long* inside) {
    count_inside<true>(seed, first_sample, sample_count, inside);
}
