// heatlab frame ranges: the colour range of a preview's block means, picked on the GPU where the
// means are, so that only the means and two numbers cross to the host. Mirrors the host's
// RangeMode::resolve (src/grid/range.rs, src/grid/percentile.rs) bit for bit: min-max is the
// smallest and largest finite value (0..0 when none); a percentile pair is NumPy's linear
// interpolation between order statistics of the finite values, found here by a radix select on
// their total-order keys (8 bits a pass, up to four ranks at once). Compiled by NVRTC with
// --fmad=false, so the interpolation rounds as the host's does.
//
// The launches of one preview, in order on one stream (no host wait between them):
//   range_scan (the state zeroed before), then for a percentile pair range_ranks and four
//   passes of range_histogram + range_pick (shifts 24, 16, 8, 0), then range_finish.

#define RANGE_SELECTIONS 4
#define RANGE_BINS 256
#define RANGE_THREADS 256

struct RangeState {
    unsigned int count;     // finite values
    unsigned int low_not;   // ~(smallest finite key): a maximum, so that zero is its start
    unsigned int high;      // largest finite key
    unsigned int prefix[RANGE_SELECTIONS];  // each wanted key's bits found so far
    unsigned int rank[RANGE_SELECTIONS];    // its rank among the keys sharing those bits
    unsigned int histogram[RANGE_SELECTIONS][RANGE_BINS];
};

__device__ __forceinline__ unsigned int range_key(float value) {
    const unsigned int bits = __float_as_uint(value);
    return (bits >> 31) ? ~bits : bits | 0x80000000u;
}

__device__ __forceinline__ float range_value(unsigned int key) {
    return __uint_as_float((key >> 31) ? key & 0x7fffffffu : ~key);
}

__device__ __forceinline__ bool range_finite(float value) {
    return (__float_as_uint(value) & 0x7f800000u) != 0x7f800000u;
}

// The count of finite values and their smallest and largest keys.
extern "C" __global__ void __launch_bounds__(RANGE_THREADS)
range_scan(const float* __restrict__ values, int n, RangeState* state) {
    unsigned int count = 0, low_not = 0, high = 0;
    for (long long i = (long long)blockIdx.x * RANGE_THREADS + threadIdx.x; i < n; i += (long long)gridDim.x * RANGE_THREADS) {
        const float v = values[i];
        if (range_finite(v)) {
            const unsigned int key = range_key(v);
            count += 1;
            low_not = max(low_not, ~key);
            high = max(high, key);
        }
    }
    for (int offset = 16; offset > 0; offset /= 2) {
        count += __shfl_down_sync(0xffffffffu, count, offset);
        low_not = max(low_not, __shfl_down_sync(0xffffffffu, low_not, offset));
        high = max(high, __shfl_down_sync(0xffffffffu, high, offset));
    }
    if ((threadIdx.x & 31) == 0 && count > 0) {
        atomicAdd(&state->count, count);
        atomicMax(&state->low_not, low_not);
        atomicMax(&state->high, high);
    }
}

// Where NumPy's linear percentile `q` of `n >= 1` values falls (src/grid/percentile.rs's
// LinearRanks::of).
__device__ __forceinline__ void linear_ranks(unsigned int n, double q, unsigned int* previous,
                                             unsigned int* next, double* gamma) {
    const double virtual_index = (q / 100.0) * (double)(n - 1);
    unsigned int p = (unsigned int)floor(virtual_index);
    if (p > n - 1) p = n - 1;
    *previous = p;
    *next = p + 1 < n ? p + 1 : n - 1;
    *gamma = virtual_index - (double)p;
}

// The four ranks wanted: both order statistics around each of `low <= high`.
extern "C" __global__ void range_ranks(RangeState* state, double low, double high) {
    if (threadIdx.x != 0 || blockIdx.x != 0) return;
    const unsigned int n = state->count;
    if (n == 0) return;
    double gamma;
    linear_ranks(n, low, &state->rank[0], &state->rank[1], &gamma);
    linear_ranks(n, high, &state->rank[2], &state->rank[3], &gamma);
}

// The first selection with the same prefix as `selection`: selections that share a prefix
// share its histogram, which is counted once.
__device__ __forceinline__ int range_leader(const RangeState* state, int selection) {
    for (int other = 0; other < selection; ++other) {
        if (state->prefix[other] == state->prefix[selection]) return other;
    }
    return selection;
}

// Counts, per value of the 8 bits at `shift`, the finite keys whose higher bits equal each
// leading selection's prefix, into its histogram.
extern "C" __global__ void __launch_bounds__(RANGE_THREADS)
range_histogram(const float* __restrict__ values, int n, RangeState* state, int shift) {
    __shared__ unsigned int bins[RANGE_SELECTIONS][RANGE_BINS];
    __shared__ unsigned int prefixes[RANGE_SELECTIONS];
    __shared__ int leads[RANGE_SELECTIONS];
    for (int s = 0; s < RANGE_SELECTIONS; ++s) bins[s][threadIdx.x] = 0;
    if (threadIdx.x < RANGE_SELECTIONS) {
        prefixes[threadIdx.x] = state->prefix[threadIdx.x];
        leads[threadIdx.x] = range_leader(state, threadIdx.x) == (int)threadIdx.x;
    }
    __syncthreads();
    if (state->count == 0) return;
    const unsigned int high_mask = shift >= 24 ? 0u : ~0u << (shift + 8);
    for (long long i = (long long)blockIdx.x * RANGE_THREADS + threadIdx.x; i < n; i += (long long)gridDim.x * RANGE_THREADS) {
        const float v = values[i];
        const unsigned int key = range_key(v);
        const bool finite = range_finite(v);
        const unsigned int bin = (key >> shift) & 255u;
        const unsigned int active = __activemask();
        for (int s = 0; s < RANGE_SELECTIONS; ++s) {
            if (!leads[s]) continue;
            const bool counted = finite && ((key ^ prefixes[s]) & high_mask) == 0;
            // Lanes with the same bin add once (most keys share a few bins in the first passes).
            const unsigned int counting = __ballot_sync(active, counted);
            if (counted) {
                const unsigned int same = __match_any_sync(counting, bin);
                if ((__ffs(same) - 1) == (int)(threadIdx.x & 31)) atomicAdd(&bins[s][bin], __popc(same));
            }
        }
    }
    __syncthreads();
    for (int s = 0; s < RANGE_SELECTIONS; ++s) {
        const unsigned int mine = bins[s][threadIdx.x];
        if (leads[s] && mine > 0) atomicAdd(&state->histogram[s][threadIdx.x], mine);
    }
}

// Finds the bin holding each selection's rank (in its leader's histogram), appends it to the
// prefix, keeps the rank within the bin, then clears the histograms for the next pass. One
// block of RANGE_BINS threads.
extern "C" __global__ void __launch_bounds__(RANGE_BINS) range_pick(RangeState* state, int shift) {
    __shared__ int leaders[RANGE_SELECTIONS];
    if (threadIdx.x < RANGE_SELECTIONS) leaders[threadIdx.x] = range_leader(state, threadIdx.x);
    __syncthreads();
    if (state->count > 0 && threadIdx.x < RANGE_SELECTIONS) {
        const unsigned int* counts = state->histogram[leaders[threadIdx.x]];
        const unsigned int rank = state->rank[threadIdx.x];
        unsigned int before = 0;
        for (int bin = 0; bin < RANGE_BINS; ++bin) {
            if (rank < before + counts[bin]) {
                state->prefix[threadIdx.x] |= (unsigned int)bin << shift;
                state->rank[threadIdx.x] = rank - before;
                break;
            }
            before += counts[bin];
        }
    }
    __syncthreads();
    for (int s = 0; s < RANGE_SELECTIONS; ++s) state->histogram[s][threadIdx.x] = 0;
}

// src/grid/percentile.rs's lerp (no fused multiply-add: --fmad=false).
__device__ __forceinline__ double range_lerp(double a, double b, double t) {
    const double diff = b - a;
    return t >= 0.5 ? b - diff * (1.0 - t) : a + diff * t;
}

// The range into out[0] (low) and out[1] (high): `percentile` 0 for min-max, 1 for the pair
// `low <= high` selected above.
extern "C" __global__ void range_finish(const RangeState* state, int percentile, double low,
                                        double high, float* out) {
    if (threadIdx.x != 0 || blockIdx.x != 0) return;
    const unsigned int n = state->count;
    if (n == 0) {
        out[0] = 0.0f;
        out[1] = 0.0f;
        return;
    }
    if (!percentile) {
        out[0] = range_value(~state->low_not);
        out[1] = range_value(state->high);
        return;
    }
    unsigned int previous, next;
    double gamma;
    linear_ranks(n, low, &previous, &next, &gamma);
    const double low_value = previous + 1 >= n
        ? (double)range_value(state->prefix[0])
        : range_lerp((double)range_value(state->prefix[0]), (double)range_value(state->prefix[1]), gamma);
    linear_ranks(n, high, &previous, &next, &gamma);
    const double high_value = previous + 1 >= n
        ? (double)range_value(state->prefix[2])
        : range_lerp((double)range_value(state->prefix[2]), (double)range_value(state->prefix[3]), gamma);
    out[0] = (float)low_value;
    out[1] = (float)high_value;
}
