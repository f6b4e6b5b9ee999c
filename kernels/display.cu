// heatlab display kernels: reduce a field to the size it is shown at (the host picks the range
// and colours the few reduced values), and its statistics, so that only small arrays cross to
// the host. Compiled by NVRTC with --fmad=false; block_mean mirrors src/compute/preview.rs so
// that GPU and CPU previews are identical.

// Mean of each factor x factor block (partial blocks at the edges average what they hold),
// accumulated in double in row-major order, like the CPU.
extern "C" __global__ void block_mean(const float* __restrict__ field, float* __restrict__ out,
                                      int rows, int cols, int factor, int out_rows, int out_cols) {
    const int bc = blockIdx.x * blockDim.x + threadIdx.x;
    const int br = blockIdx.y * blockDim.y + threadIdx.y;
    if (bc >= out_cols || br >= out_rows) return;
    const int r0 = br * factor;
    const int c0 = bc * factor;
    const int r1 = min(r0 + factor, rows);
    const int c1 = min(c0 + factor, cols);
    double sum = 0.0;
    for (int r = r0; r < r1; ++r) {
        for (int c = c0; c < c1; ++c) {
            sum += (double)field[(size_t)r * cols + c];
        }
    }
    out[(size_t)br * out_cols + bc] = (float)(sum / (double)((r1 - r0) * (c1 - c0)));
}

// Total, minimum and maximum of a field, as partial results per block: the host adds the
// STATS_BLOCKS partials in order. Sums in double (like the CPU's statistics); fminf/fmaxf skip
// NaN as Rust's f32::min/max do. The launch is fixed (STATS_BLOCKS x STATS_THREADS), so a given
// field always gives the same total.
#define STATS_THREADS 256
extern "C" __global__ void __launch_bounds__(STATS_THREADS)
field_stats(const float* __restrict__ field, long long n, double* __restrict__ partial) {
    __shared__ double sums[STATS_THREADS];
    __shared__ float lows[STATS_THREADS];
    __shared__ float highs[STATS_THREADS];
    double sum = 0.0;
    float low = __int_as_float(0x7f800000), high = __int_as_float(0xff800000);  // +inf, -inf
    const long long stride = (long long)gridDim.x * STATS_THREADS;
    for (long long i = (long long)blockIdx.x * STATS_THREADS + threadIdx.x; i < n; i += stride) {
        const float v = field[i];
        sum += (double)v;
        low = fminf(low, v);
        high = fmaxf(high, v);
    }
    sums[threadIdx.x] = sum;
    lows[threadIdx.x] = low;
    highs[threadIdx.x] = high;
    __syncthreads();
    for (int half = STATS_THREADS / 2; half > 0; half /= 2) {
        if (threadIdx.x < half) {
            sums[threadIdx.x] += sums[threadIdx.x + half];
            lows[threadIdx.x] = fminf(lows[threadIdx.x], lows[threadIdx.x + half]);
            highs[threadIdx.x] = fmaxf(highs[threadIdx.x], highs[threadIdx.x + half]);
        }
        __syncthreads();
    }
    if (threadIdx.x == 0) {
        partial[3 * blockIdx.x + 0] = sums[0];
        partial[3 * blockIdx.x + 1] = (double)lows[0];
        partial[3 * blockIdx.x + 2] = (double)highs[0];
    }
}
