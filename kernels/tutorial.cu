// heatlab tutorial kernels (seed 001: hidden layer, Gaussian PDF, Monte Carlo pi), compiled at
// run time by NVRTC for the device's own architecture, with --fmad=false like diffusion.cu.
//
// The CPU versions in src/tutorial/ evaluate the same formulas in the same order, so the
// element-wise kernels agree with them to a few units in the last place (the GPU's tanhf/expf
// are not glibc's), and the Monte Carlo count agrees exactly (integer arithmetic only).

// ---------------------------------------------------------------------------------------------
// Hidden layer: activation = tanh(greyscale / 255 * weight), float32 throughout.
// Grid-stride loop so that any launch covers any n (64-bit indices: n may exceed 2^31).
extern "C" __global__ void hidden_layer(const float* __restrict__ greyscales,
                                        const float* __restrict__ weights,
                                        float* __restrict__ activations,
                                        unsigned long long n) {
    const unsigned long long stride = (unsigned long long)gridDim.x * blockDim.x;
    for (unsigned long long i = (unsigned long long)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride) {
        const float normalized = greyscales[i] / 255.0f;
        activations[i] = tanhf(normalized * weights[i]);
    }
}

// ---------------------------------------------------------------------------------------------
// Gaussian PDF: exp(-z*z/2) / (sigma * sqrt(2*pi)) with z = (x - mean) / sigma, float32.
// The division by sigma * sqrt(2*pi) is kept as the formula writes it (not a multiply by its
// inverse) so that the CPU does exactly the same operations in the same order.
#define SQRT_2PI_F 2.5066282746310002f
extern "C" __global__ void gaussian_pdf(const float* __restrict__ x,
                                        float* __restrict__ pdf,
                                        unsigned long long n,
                                        float mean,
                                        float sigma) {
    const float norm = sigma * SQRT_2PI_F;
    const unsigned long long stride = (unsigned long long)gridDim.x * blockDim.x;
    for (unsigned long long i = (unsigned long long)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride) {
        const float z = (x[i] - mean) / sigma;
        pdf[i] = expf(-0.5f * (z * z)) / norm;
    }
}

// ---------------------------------------------------------------------------------------------
// Monte Carlo pi with Philox4x32-10 (Salmon et al., SC'11; Random123's constants and rounds).
// Sample j uses the block of counter (j / 2, 0, 0) under key (seed low word, seed high word):
// words 0 and 1 give point 2k, words 2 and 3 point 2k + 1. A coordinate is the top 24 bits of
// its word, X in [0, 2^24), x = X / 2^24 (exact in float32), and the point is inside the quarter
// circle when X*X + Y*Y < 2^48, which is exactly x*x + y*y < 1 without any rounding. So the
// count depends only on (seed, n): the same on every GPU, every launch shape, and the CPU.
#define PHILOX_M0 0xD2511F53u
#define PHILOX_M1 0xCD9E8D57u
#define PHILOX_W0 0x9E3779B9u
#define PHILOX_W1 0xBB67AE85u

__device__ __forceinline__ uint4 philox4x32_10(uint4 ctr, uint2 key) {
#pragma unroll
    for (int round = 0; round < 10; ++round) {
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

__device__ __forceinline__ unsigned int inside_quarter_circle(unsigned int word_x, unsigned int word_y) {
    const unsigned long long x = word_x >> 8;
    const unsigned long long y = word_y >> 8;
    return (x * x + y * y) < (1ull << 48) ? 1u : 0u;
}

#define PI_BLOCK 256

// Counts the samples [first_sample, first_sample + sample_count) that fall inside the quarter
// circle and adds the count to *inside. first_sample must be even (chunks start on a block).
// Each thread walks counters with a grid stride; the block sums its threads' counts (warp
// shuffles, then shared memory) and one thread per block does one 64-bit atomic add.
extern "C" __global__ void __launch_bounds__(PI_BLOCK) monte_carlo_pi(unsigned long long seed,
                                                                       unsigned long long first_sample,
                                                                       unsigned long long sample_count,
                                                                       unsigned long long* inside) {
    const uint2 key = make_uint2((unsigned int)seed, (unsigned int)(seed >> 32));
    const unsigned long long first_block = first_sample / 2;
    const unsigned long long blocks = (sample_count + 1) / 2;
    const unsigned long long stride = (unsigned long long)gridDim.x * blockDim.x;
    unsigned long long count = 0;
    for (unsigned long long k = (unsigned long long)blockIdx.x * blockDim.x + threadIdx.x; k < blocks; k += stride) {
        const unsigned long long counter = first_block + k;
        const uint4 words = philox4x32_10(make_uint4((unsigned int)counter, (unsigned int)(counter >> 32), 0u, 0u), key);
        count += inside_quarter_circle(words.x, words.y);
        if (2 * k + 1 < sample_count) count += inside_quarter_circle(words.z, words.w);
    }
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
