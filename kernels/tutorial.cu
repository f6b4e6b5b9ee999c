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
// Monte Carlo pi with MWC64X (D. B. Thomas, "The MWC64X Random Number Generator", 2011,
// http://cas.ee.ic.ac.uk/people/dt10/research/rngs-gpu-mwc64x.html): a multiply-with-carry
// generator (G. Marsaglia) with 32-bit x and c, multiplier A = 4294883355, and the output x ^ c,
// which its author reports to pass TestU01's BigCrush (an independent battery, A. L. Voskov's
// SmokeRand, lists the same construction with another multiplier, 0xff676488, as passing
// BigCrush and PractRand to 16 TiB, where plain MWC64, whose output is x alone, fails).
// Its period is (M - 1) / 2, about 2^63,
// with M = A * 2^32 - 1 and (M - 1) / 2 both prime (the unit tests check this); a run of 1e12
// samples uses 2^41 words of it. The step is one 32 x 32 -> 64-bit multiply-add:
// t = A * x + c, then x = low word of t, c = high word.
//
// Why MWC64X and not PCG32 (used until 2026-11-23: 0.78e12 samples/s on the H100, 1e10 samples
// in 12.75 ms): the kernel is bound by the SM's instruction issue and integer pipes, not by
// memory. A PCG32 word costs a 64 x 64-bit multiply-add (three or four IMADs) plus the output
// permutation's funnel shifts and rotate: its loop was 60 SASS instructions per 2 samples
// (30 per sample, 13 of them IMAD and 10 SHF). An MWC64X word is one IMAD.WIDE.U32, a move of
// the carry into the next addend pair, and one LOP3 for x ^ c (with the coordinate's mask).
// Per sample, in the loops below, read with cuobjdump -sass from nvcc 13.5 -arch=sm_90
// --fmad=false (NVRTC's PTX through ptxas gives the same loops):
// - monte_carlo_pi (integer test): 51 per 4 samples = 12.75 per sample (20 IMAD of which
//   16 IMAD.WIDE, 10 VIADD and 2-4 MOVs that place the carry and zero in the next addend pair,
//   8 LOP3, 2 IADD3.X for the count, ...), 32 registers;
// - monte_carlo_pi_double_test (FP64 test): 62 per 4 samples = 15.5 per sample (18 IMAD,
//   8 DADD, 8 DFMA, 8 LOP3, 8 VIADD, 4 MOVs of 0x43300000, 4 LEA.HI, ...), 28 registers;
// - monte_carlo_pi_alternating_test: 59 per 4 samples = 14.75 per sample, with half the FP64
//   work and 3 IMAD.WIDE per sample instead of 4, 30 registers.
// All three fit 2048 threads per SM (at most 32 registers). At PCG32's measured rate per
// instruction that is about 0.78e12 * 30 / 13 = 1.8e12 samples/s; which test wins depends on
// whether the IMAD.WIDEs (4 per sample in the integer test, 2 in the FP64 one) or the FP64 pipe
// is the tighter limit, so all three are kept and timed on the GPU at hand.
//
// The state (x, c) stands for w = A * x + c, and one step is w -> A * w mod M (Thomas; the
// unit tests check it against stepping), so the state `delta` words on is w * A^delta mod M.
// Sample j takes words 2j (x) and 2j + 1 (y) of the sequence that starts at the seed's state
// (SplitMix64 of the seed, mapped into [1, M - 1], as mwc64x_start below); each thread jumps to
// its share with the table of A^(2^k), so the count depends only on (seed, n): the same on
// every GPU, every launch shape, and the CPU, which replays the sequence (src/tutorial/mc_pi.rs).
//
// A coordinate is the top 24 bits of its word, X in [0, 2^24), x = X / 2^24 (exact in float32),
// and the point is inside the quarter circle when X*X + Y*Y < 2^48, which is exactly
// x*x + y*y < 1 without any rounding. (The 2^24 x 2^24 grid of lower-left corners has about
// pi * 2^46 + 2^24 points inside, so the expected estimate is pi + 4 / 2^24 = pi + 2.4e-7:
// 0.015 standard errors at 1e10 samples, 0.15 at 1e12.) Two tests give that answer bit for
// bit, on different units of the SM (the third kernel alternates them; TutorialGpu::open times
// the three kernels and keeps the fastest):
// - integer: with W = X * 2^8 and V = Y * 2^8, W*W + V*V carries out of 64 bits exactly when
//   the point is outside (count_outside_integer);
// - FP64: W (the word with its low 8 bits cleared, one LOP3 with the xor) becomes a double
//   exactly (the bits (0x43300000, W) are 2^52 + W), and W*W + V*V - 2^64 is exact in two FMAs
//   (every term is a multiple of 2^16 below 2^66); its sign bit is the answer, added to the
//   count by one LEA.HI, with no compare or select.
#define MWC_A 4294883355u
#define MWC_M 18446383549859758079ull
// -M^-1 mod 2^64, for the Montgomery products of the jump (R = 2^64).
#define MWC_M_NEG_INV 0xfffeb81b00000001ull

// A^(2^k) * 2^64 mod M for k = 0..63 (the Montgomery form of A^(2^k)), checked against the
// CPU's own table by the unit tests (mwc64x_jump_table_in_the_kernel_is_the_cpus).
__constant__ unsigned long long mwc_jump_table[64] = {
    0x0000000100000000ull, 0x0000000000000001ull, 0xfffd7037a3fad2d9ull, 0xe38de6c87a5f8207ull,
    0xecace5893ead6770ull, 0x0b195a75f67cbd7cull, 0x9dbb20d9021b1aeeull, 0x455047b843851f5eull,
    0x35a691d8afb9097aull, 0x2347965b498c9e45ull, 0x73128ca96929d57full, 0x144c64ba725056b8ull,
    0x3e16f5a3c3f6d809ull, 0xf1ea9f9a532ff1f3ull, 0xbe14c8eeefd8cbd2ull, 0xb9ba90a36b0d78ecull,
    0xe238aa5ae02464d0ull, 0x05813d2c77396ae3ull, 0xe297cc88067b042full, 0x7204703807e4ee8eull,
    0xb08c498011110f62ull, 0x3959f88880e7e574ull, 0xf8d8a7f77e0b67d5ull, 0x7e68f976f62d4c98ull,
    0xd75464d9a3b5a497ull, 0xa5d40611b8bbf08cull, 0x3bcd85f4805418c4ull, 0x8d8a630c56021b2aull,
    0xaa7a860b8d9e6a5cull, 0x9df01f91d64e08a6ull, 0x28c6991ed7b34a38ull, 0x084f0bb2fb4009e3ull,
    0x02968ff242a826adull, 0xa203eb5b6245df6aull, 0x5b21ad11932fd625ull, 0xcd0d408d3dffaeb3ull,
    0x23952ffd77e6567full, 0x382ea63a5a4072ffull, 0x120a10a58c142cbbull, 0xc4c984034089745eull,
    0x4d4ad1a3c35ba040ull, 0xc032381de4b1b3c4ull, 0xd52f5f70b37fe39full, 0x0db77517817593b9ull,
    0x03a63f6b272e1531ull, 0xbe88086a02fa6c20ull, 0x29648a8b99331bc6ull, 0xc690db50a5827027ull,
    0x7fbff8b0a64f62a8ull, 0xba9e1fa3d65d59b4ull, 0x70af5dfa63fc2d13ull, 0x57698c62e4eee48cull,
    0xa2a7733b54c68de5ull, 0x8003d15479edc4bcull, 0x16816a6d979f2935ull, 0x05241aa002f20961ull,
    0x2a8a105d2bea79feull, 0x2829d427045b11d2ull, 0xa69199f62d711f94ull, 0xc7c48f23a4698eecull,
    0x498b204a7e47cab1ull, 0xa54a9596660fb35aull, 0xf994633a46c2410aull, 0xde0024651ea77353ull,
};

// a * b * 2^-64 mod M for a, b < M (Montgomery, R = 2^64). With b = A^(2^k) * 2^64 mod M from
// the table this is a * A^(2^k) mod M, so the jump stays in ordinary residues throughout.
__device__ __forceinline__ unsigned long long mwc_montgomery(unsigned long long a, unsigned long long b) {
    const unsigned long long low = a * b;
    const unsigned long long high = __umul64hi(a, b);
    const unsigned long long m = low * MWC_M_NEG_INV;
    // (a*b + m*M) / 2^64: the low words cancel (a carry when low != 0); the sum is below 2M.
    const unsigned long long sum = high + __umul64hi(m, MWC_M);
    const unsigned long long total = sum + (low != 0 ? 1ull : 0ull);
    const bool overflow = sum < high || total < sum;
    return overflow || total >= MWC_M ? total - MWC_M : total;
}

// The residue w in [1, M - 1] that the sequence of `seed` starts from: SplitMix64 of the seed
// (G. L. Steele, D. Lea, C. H. Flood, "Fast splittable pseudorandom number generators",
// OOPSLA 2014), reduced into [0, M - 2] by one subtraction (2 (M - 1) > 2^64), plus one.
__device__ __forceinline__ unsigned long long mwc64x_start(unsigned long long seed) {
    unsigned long long z = seed + 0x9e3779b97f4a7c15ull;
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    z ^= z >> 31;
    return (z >= MWC_M - 1 ? z - (MWC_M - 1) : z) + 1;
}

// The state `delta` words after the residue w: w * A^delta mod M, one Montgomery product per
// set bit of delta.
__device__ unsigned long long mwc64x_jump(unsigned long long w, unsigned long long delta) {
    for (int k = 0; delta != 0; ++k, delta >>= 1) {
        if (delta & 1) w = mwc_montgomery(w, mwc_jump_table[k]);
    }
    return w;
}

// One word: returns x ^ c and steps (x, c).
__device__ __forceinline__ unsigned int mwc64x_next(unsigned int& x, unsigned int& c) {
    const unsigned int word = x ^ c;
    const unsigned long long t = (unsigned long long)x * MWC_A + c;
    x = (unsigned int)t;
    c = (unsigned int)(t >> 32);
    return word;
}

// The integer test adds 1 to `outside` when the point is outside. With W = X * 2^8 and
// V = Y * 2^8 (the words with their low 8 bits cleared: one LOP3 each, with the xor),
// W*W + V*V = (X*X + Y*Y) * 2^16 reaches 2^64 exactly when X*X + Y*Y >= 2^48, so the point is
// outside exactly when the 64-bit sum carries out. PTX's carry chain makes that one IMAD.WIDE
// with a carry-out predicate, and the count one IADD3.X (which adds two samples' carries).
// (Written with 64-bit C arithmetic and a compare instead, the loop took 14.5 instructions
// per sample; shifted 24-bit coordinates with a sign test, 14.5; this form, 12.75.)
__device__ __forceinline__ void count_outside_integer(unsigned int x, unsigned int c, unsigned int x2,
                                                      unsigned int c2, unsigned int& outside) {
    const unsigned int w = (x ^ c) & 0xffffff00u;
    const unsigned int v = (x2 ^ c2) & 0xffffff00u;
    const unsigned long long w_squared = (unsigned long long)w * w;
    asm("{\n\t"
        ".reg .u32 sum_low, sum_high;\n\t"
        "mad.lo.cc.u32 sum_low, %1, %1, %2;\n\t"
        "madc.hi.cc.u32 sum_high, %1, %1, %3;\n\t"
        "addc.u32 %0, %0, 0;\n\t"
        "}"
        : "+r"(outside)
        : "r"(v), "r"((unsigned int)w_squared), "r"((unsigned int)(w_squared >> 32)));
}

// The FP64 test, 1 when inside: W*W + V*V - 2^64 (exact, see above) is negative (a zero sum,
// on the circle, is +0: outside, as in the integer test).
__device__ __forceinline__ unsigned int inside_double(unsigned int x, unsigned int c,
                                                      unsigned int x2, unsigned int c2) {
    const double w = __hiloint2double(0x43300000, (int)((x ^ c) & 0xffffff00u)) - 4503599627370496.0;
    const double v = __hiloint2double(0x43300000, (int)((x2 ^ c2) & 0xffffff00u)) - 4503599627370496.0;
    const double s = fma(v, v, fma(w, w, -18446744073709551616.0));
    return (unsigned int)__double2hiint(s) >> 31;
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

// The hit tests of the Monte Carlo kernels: all on the integer units, all on the FP64 units,
// or alternating (each sample pair: one of each), which splits the work between the integer
// multiply pipe (already busy with the generator's IMAD.WIDEs) and the FP64 pipe.
enum PiTest { PI_TEST_INTEGER, PI_TEST_DOUBLE, PI_TEST_ALTERNATING };

// Counts the samples [first_sample, first_sample + sample_count) inside the quarter circle and
// adds the count to *inside. A thread's share must stay below 2^32 samples (the host launches
// at most 2^35 samples at once). Each thread takes one contiguous share, jumps to it once, and
// steps two words per sample.
template <PiTest TEST>
__device__ __forceinline__ void count_inside(unsigned long long seed,
                                             unsigned long long first_sample,
                                             unsigned long long sample_count,
                                             unsigned long long* inside) {
    const unsigned long long threads = (unsigned long long)gridDim.x * blockDim.x;
    const unsigned long long thread = (unsigned long long)blockIdx.x * blockDim.x + threadIdx.x;
    const unsigned long long begin = sample_count * thread / threads;
    const unsigned long long end = sample_count * (thread + 1) / threads;
    const unsigned long long w = mwc64x_jump(mwc64x_start(seed), 2 * (first_sample + begin));
    unsigned int x = (unsigned int)(w / MWC_A);
    unsigned int c = (unsigned int)(w % MWC_A);
    const unsigned int samples = (unsigned int)(end - begin);
    // Samples found inside by the FP64 test, outside by the integer test.
    unsigned int inside_double_count = 0;
    unsigned int outside_integer_count = 0;
    unsigned int integer_samples = 0;
    if (TEST == PI_TEST_ALTERNATING) {
        const unsigned int pairs = samples / 2;
#pragma unroll 2
        for (unsigned int k = 0; k < pairs; ++k) {
            const unsigned int x0 = x, c0 = c;
            mwc64x_next(x, c);
            const unsigned int x1 = x, c1 = c;
            mwc64x_next(x, c);
            const unsigned int x2 = x, c2 = c;
            mwc64x_next(x, c);
            const unsigned int x3 = x, c3 = c;
            mwc64x_next(x, c);
            count_outside_integer(x0, c0, x1, c1, outside_integer_count);
            inside_double_count += inside_double(x2, c2, x3, c3);
        }
        integer_samples = pairs;
        if (samples & 1) {
            const unsigned int x0 = x, c0 = c;
            mwc64x_next(x, c);
            count_outside_integer(x0, c0, x, c, outside_integer_count);
            integer_samples += 1;
        }
    } else {
#pragma unroll 4
        for (unsigned int k = 0; k < samples; ++k) {
            const unsigned int x0 = x, c0 = c;
            mwc64x_next(x, c);
            const unsigned int x1 = x, c1 = c;
            mwc64x_next(x, c);
            if (TEST == PI_TEST_DOUBLE) {
                inside_double_count += inside_double(x0, c0, x1, c1);
            } else {
                count_outside_integer(x0, c0, x1, c1, outside_integer_count);
            }
        }
        integer_samples = TEST == PI_TEST_INTEGER ? samples : 0;
    }
    add_block_count(inside_double_count + (integer_samples - outside_integer_count), inside);
}

// The three Monte Carlo kernels count the same samples the same way; the hit test runs on the
// integer units, on the FP64 units, or on both in turn. TutorialGpu::open times them once and
// keeps the fastest on the GPU at hand, after checking that their counts are equal.
extern "C" __global__ void __launch_bounds__(PI_BLOCK) monte_carlo_pi(unsigned long long seed,
                                                                       unsigned long long first_sample,
                                                                       unsigned long long sample_count,
                                                                       unsigned long long* inside) {
    count_inside<PI_TEST_INTEGER>(seed, first_sample, sample_count, inside);
}

extern "C" __global__ void __launch_bounds__(PI_BLOCK) monte_carlo_pi_double_test(unsigned long long seed,
                                                                                   unsigned long long first_sample,
                                                                                   unsigned long long sample_count,
                                                                                   unsigned long long* inside) {
    count_inside<PI_TEST_DOUBLE>(seed, first_sample, sample_count, inside);
}

extern "C" __global__ void __launch_bounds__(PI_BLOCK) monte_carlo_pi_alternating_test(unsigned long long seed,
                                                                                        unsigned long long first_sample,
                                                                                        unsigned long long sample_count,
                                                                                        unsigned long long* inside) {
    count_inside<PI_TEST_ALTERNATING>(seed, first_sample, sample_count, inside);
}
