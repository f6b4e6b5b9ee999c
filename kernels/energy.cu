// heatlab stored energy of a heat problem, summed on the device so that only one number per
// row crosses to the host. Mirrors src/problem/energy.rs's stored_energy bit for bit: each
// row's chunks of STORED_ENERGY_CHUNK columns summed on their own (in column order, cells of
// weight 0 skipped), the chunks of a row in order, then (on the host) the rows in order; every
// product and sum rounded alone (__dmul_rn, __dadd_rn: no fused multiply-add).
//
// Launches, in order on one stream: stored_energy_chunks (one thread per chunk of a row), then
// stored_energy_rows (one thread per row).

#define STORED_ENERGY_CHUNK 256

// partial[row * chunks + chunk]: the sum of weight[kind] * T over the chunk's cells.
extern "C" __global__ void stored_energy_chunks(const float* __restrict__ field,
                                                const unsigned char* __restrict__ map,
                                                const double* __restrict__ weight, int rows, int cols,
                                                int chunks, double* __restrict__ partial) {
    const long long at = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (at >= (long long)rows * chunks) return;
    const int row = (int)(at / chunks);
    const int c0 = (int)(at % chunks) * STORED_ENERGY_CHUNK;
    const int c1 = min(c0 + STORED_ENERGY_CHUNK, cols);
    const size_t base = (size_t)row * cols;
    double sum = 0.0;
    for (int c = c0; c < c1; ++c) {
        const double w = weight[map[base + c]];
        if (w != 0.0) sum = __dadd_rn(sum, __dmul_rn(w, (double)field[base + c]));
    }
    partial[at] = sum;
}

// row_sums[row]: the row's chunk sums added in order.
extern "C" __global__ void stored_energy_rows(const double* __restrict__ partial, int rows, int chunks,
                                              double* __restrict__ row_sums) {
    const int row = blockIdx.x * blockDim.x + threadIdx.x;
    if (row >= rows) return;
    double sum = 0.0;
    for (int j = 0; j < chunks; ++j) sum = __dadd_rn(sum, partial[(size_t)row * chunks + j]);
    row_sums[row] = sum;
}
