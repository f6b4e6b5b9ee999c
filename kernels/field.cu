// heatlab: the jagged field on the GPU (src/compute/cuda/field.rs drives these with cuFFT).
//
// The notebook's recipe, as src/field/jagged.rs computes it on the CPU:
//   noise  = np.random.default_rng(seed).random((rows, cols), dtype=np.float32)
//   field  = ifft2(ifftshift(fftshift(fft2(noise)) * radius**exponent)) * (radius < cutoff*rows)
//   field  = field.real * (field.real > np.percentile(field.real, percentile))
// Here: jagged_noise draws NumPy's PCG64 stream in parallel (every thread jumps to its own
// words), cuFFT's D2Z/Z2D transforms run in float64 as NumPy's do, jagged_filter and
// jagged_mask apply the radial filter and the cutoff, the radix_* kernels find the percentile
// exactly (the same order statistics and interpolation as NumPy), and jagged_keep writes the
// float32 field. Compiled without fused multiply-adds, like every heatlab kernel.

// ---------------------------------------------------------------------------------------------
// PCG64 (XSL RR 128/64), NumPy's default bit generator. 128-bit state as two 64-bit words.
struct u128 {
    unsigned long long lo, hi;
};

__device__ __forceinline__ u128 make_u128(unsigned long long lo, unsigned long long hi) {
    u128 r;
    r.lo = lo;
    r.hi = hi;
    return r;
}

// a * b modulo 2^128.
__device__ __forceinline__ u128 mul128(u128 a, u128 b) {
    return make_u128(a.lo * b.lo, __umul64hi(a.lo, b.lo) + a.lo * b.hi + a.hi * b.lo);
}

// a + b modulo 2^128.
__device__ __forceinline__ u128 add128(u128 a, u128 b) {
    const unsigned long long lo = a.lo + b.lo;
    return make_u128(lo, a.hi + b.hi + (lo < a.lo ? 1ull : 0ull));
}

// PCG's default 128-bit multiplier, 0x2360ed051fc65da44385df649fccf645.
__device__ __forceinline__ u128 pcg64_multiplier() {
    return make_u128(0x4385df649fccf645ull, 0x2360ed051fc65da4ull);
}

// The state `delta` steps after `state` (F. B. Brown's O(log n) jump of an LCG).
__device__ u128 pcg64_advance(u128 state, unsigned long long delta, u128 increment) {
    u128 multiplier = pcg64_multiplier();
    u128 plus = increment;
    u128 acc_multiplier = make_u128(1, 0);
    u128 acc_plus = make_u128(0, 0);
    while (delta > 0) {
        if (delta & 1) {
            acc_multiplier = mul128(acc_multiplier, multiplier);
            acc_plus = add128(mul128(acc_plus, multiplier), plus);
        }
        plus = mul128(add128(multiplier, make_u128(1, 0)), plus);
        multiplier = mul128(multiplier, multiplier);
        delta >>= 1;
    }
    return add128(mul128(acc_multiplier, state), acc_plus);
}

// XSL RR output of a state: (hi ^ lo) rotated right by the top 6 bits.
__device__ __forceinline__ unsigned long long pcg64_output(u128 state) {
    const unsigned long long x = state.hi ^ state.lo;
    const unsigned int rot = (unsigned int)(state.hi >> 58);
    return (x >> rot) | (x << ((64u - rot) & 63u));
}

// NumPy's random(dtype=float32) from a 32-bit word: its top 24 bits times 2^-24 (exact).
__device__ __forceinline__ double uniform_f32(unsigned int word) {
    return (double)((float)(word >> 8) * (1.0f / 16777216.0f));
}

// Fills noise[0..cells) with NumPy's float32 draws as float64. Word w of the stream (the
// (w+1)-th 64-bit output after `state`, which is the generator's state before its first draw)
// gives cells 2w (its low half) and 2w + 1 (its high half), as NumPy's buffered next_uint32 does.
// Thread g takes words g, g + G, g + 2G, ... (G threads in all): it jumps to word g once, then
// advances G steps at a time with the affine map (stride_multiplier, stride_plus) the host
// computed, so neighbouring threads write neighbouring cells.
extern "C" __global__ void jagged_noise(double* noise, long long cells,
                                        unsigned long long state_lo, unsigned long long state_hi,
                                        unsigned long long increment_lo, unsigned long long increment_hi,
                                        unsigned long long stride_multiplier_lo,
                                        unsigned long long stride_multiplier_hi,
                                        unsigned long long stride_plus_lo,
                                        unsigned long long stride_plus_hi) {
    const long long words = (cells + 1) / 2;
    const long long first = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    const long long stride = (long long)gridDim.x * blockDim.x;
    if (first >= words) return;
    const u128 increment = make_u128(increment_lo, increment_hi);
    const u128 stride_multiplier = make_u128(stride_multiplier_lo, stride_multiplier_hi);
    const u128 stride_plus = make_u128(stride_plus_lo, stride_plus_hi);
    // The state whose next step gives word `first`.
    u128 state = pcg64_advance(make_u128(state_lo, state_hi), (unsigned long long)first, increment);
    for (long long w = first; w < words; w += stride) {
        const u128 stepped = add128(mul128(state, pcg64_multiplier()), increment);
        const unsigned long long word = pcg64_output(stepped);
        const long long cell = 2 * w;
        noise[cell] = uniform_f32((unsigned int)word);
        if (cell + 1 < cells) noise[cell + 1] = uniform_f32((unsigned int)(word >> 32));
        state = add128(mul128(state, stride_multiplier), stride_plus);
    }
}

// ---------------------------------------------------------------------------------------------
// The radial filter and the cutoff.

// The offset from the centre that fftshift gives frequency index u of an n-point transform.
__device__ __forceinline__ long long signed_frequency(long long u, long long n) {
    return u < n - n / 2 ? u : u - n;
}

// NumPy's radius: 1 + sqrt(di**2 + dj**2) in float64.
__device__ __forceinline__ double radius_of(long long di, long long dj) {
    return 1.0 + sqrt((double)(di * di + dj * dj));
}

// Multiplies the half spectrum (rows x (cols/2 + 1) complex values, cuFFT's D2Z layout) by
// radius ** exponent, the filter evaluated at each frequency's fftshifted position.
extern "C" __global__ void jagged_filter(double2* spectrum, int rows, int cols, double exponent) {
    const long long half = cols / 2 + 1;
    const long long count = (long long)rows * half;
    for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < count;
         i += (long long)gridDim.x * blockDim.x) {
        const long long u = i / half;
        const long long v = i - u * half;
        const double factor = pow(radius_of(signed_frequency(u, rows), signed_frequency(v, cols)), exponent);
        double2 value = spectrum[i];
        value.x = value.x * factor;
        value.y = value.y * factor;
        spectrum[i] = value;
    }
}

// Scales cuFFT's unnormalised inverse by `scale` (1 / cells, as NumPy's ifft2) and zeroes the
// cells whose radius from the centre is not below `limit` (cutoff * rows).
extern "C" __global__ void jagged_mask(double* field, int rows, int cols, double scale, double limit) {
    const long long count = (long long)rows * cols;
    for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < count;
         i += (long long)gridDim.x * blockDim.x) {
        const long long r = i / cols;
        const long long c = i - r * cols;
        const bool inside = radius_of(r - rows / 2, c - cols / 2) < limit;
        field[i] = inside ? field[i] * scale : 0.0;
    }
}

// ---------------------------------------------------------------------------------------------
// The percentile: a radix select on the values' total-order keys (f64::total_cmp's order),
// eight passes of eight bits from the top. The state lives on the device, so the passes queue
// without the host waiting between them.
struct SelectState {
    unsigned long long prefix;      // the wanted key's bits found so far
    unsigned long long rank;        // its rank among the keys that share those bits
    unsigned long long equal_count; // after the last pass: how many keys equal the wanted one
    unsigned long long above_key;   // the smallest key above the wanted one (~0 when none)
    double threshold;               // the interpolated percentile
};

__device__ __forceinline__ unsigned long long order_key(double value) {
    const unsigned long long bits = (unsigned long long)__double_as_longlong(value);
    return (bits >> 63) ? ~bits : bits | 0x8000000000000000ull;
}

__device__ __forceinline__ double key_value(unsigned long long key) {
    const unsigned long long bits = (key >> 63) ? key & 0x7fffffffffffffffull : ~key;
    return __longlong_as_double((long long)bits);
}

#define RADIX_BINS 256
#define RADIX_THREADS 256

// Counts, per value of the 8 bits at `shift`, the keys whose higher bits equal the state's
// prefix; adds the block's counts to histogram[0..256).
extern "C" __global__ void __launch_bounds__(RADIX_THREADS) radix_histogram(
    const double* values, long long count, const SelectState* state, int shift,
    unsigned long long* histogram) {
    __shared__ unsigned int bins[RADIX_BINS];
    bins[threadIdx.x] = 0;
    __syncthreads();
    const unsigned long long high_mask = shift >= 56 ? 0ull : ~0ull << (shift + 8);
    const unsigned long long prefix = state->prefix & high_mask;
    for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < count;
         i += (long long)gridDim.x * blockDim.x) {
        const unsigned long long key = order_key(values[i]);
        const bool counted = (key & high_mask) == prefix;
        const unsigned int bin = (unsigned int)(key >> shift) & 255u;
        // Lanes with the same bin add once (most keys share a few bins in the first passes).
        const unsigned int active = __activemask();
        const unsigned int counting = __ballot_sync(active, counted);
        if (counted) {
            const unsigned int same = __match_any_sync(counting, bin);
            if ((__ffs(same) - 1) == (int)(threadIdx.x & 31)) atomicAdd(&bins[bin], __popc(same));
        }
    }
    __syncthreads();
    const unsigned int mine = bins[threadIdx.x];
    if (mine > 0) atomicAdd(&histogram[threadIdx.x], (unsigned long long)mine);
}

// Finds the bin holding the state's rank, appends it to the prefix, keeps the rank within
// the bin, and clears the histogram for the next pass. One block of RADIX_BINS threads.
extern "C" __global__ void __launch_bounds__(RADIX_BINS) radix_pick(SelectState* state, int shift,
                                                                    unsigned long long* histogram) {
    __shared__ unsigned long long counts[RADIX_BINS];
    counts[threadIdx.x] = histogram[threadIdx.x];
    histogram[threadIdx.x] = 0;
    __syncthreads();
    if (threadIdx.x == 0) {
        unsigned long long before = 0;
        const unsigned long long rank = state->rank;
        for (int bin = 0; bin < RADIX_BINS; ++bin) {
            if (rank < before + counts[bin]) {
                state->prefix |= (unsigned long long)bin << shift;
                state->rank = rank - before;
                state->equal_count = counts[bin];
                break;
            }
            before += counts[bin];
        }
    }
}

// The smallest key above the selected one, into state->above_key (set to ~0 before).
extern "C" __global__ void __launch_bounds__(RADIX_THREADS) radix_min_above(
    const double* values, long long count, SelectState* state) {
    const unsigned long long selected = state->prefix;
    unsigned long long smallest = ~0ull;
    for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < count;
         i += (long long)gridDim.x * blockDim.x) {
        const unsigned long long key = order_key(values[i]);
        if (key > selected && key < smallest) smallest = key;
    }
    for (int offset = 16; offset > 0; offset /= 2) {
        const unsigned long long other = __shfl_down_sync(0xffffffffu, smallest, offset);
        smallest = other < smallest ? other : smallest;
    }
    if ((threadIdx.x & 31) == 0 && smallest != ~0ull) atomicMin(&state->above_key, smallest);
}

// NumPy's linear interpolation between the order statistics at `previous_index` (selected)
// and the next one, as src/grid/percentile.rs's lerp (no fused multiply-add).
extern "C" __global__ void radix_threshold(SelectState* state, int has_next, double gamma) {
    if (threadIdx.x != 0 || blockIdx.x != 0) return;
    const double previous = key_value(state->prefix);
    double next = previous;
    if (has_next && state->rank + 1 >= state->equal_count && state->above_key != ~0ull) {
        next = key_value(state->above_key);
    }
    const double diff = next - previous;
    state->threshold = gamma >= 0.5 ? next - diff * (1.0 - gamma) : previous + diff * gamma;
}

// field[i] = values[i] (to float32) where it is above the threshold, else 0.
extern "C" __global__ void jagged_keep(const double* values, long long count, const SelectState* state,
                                       float* field) {
    const double threshold = state->threshold;
    for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < count;
         i += (long long)gridDim.x * blockDim.x) {
        const double value = values[i];
        field[i] = value > threshold ? (float)value : 0.0f;
    }
}
