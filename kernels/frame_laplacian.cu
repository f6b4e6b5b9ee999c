
// heatlab frame previews (appended to diffusion.cu, whose `sample` it uses): the block means of
// the Laplacian without writing the Laplacian out. Each cell's Laplacian is computed as
// laplacian<BC> computes it, and the means accumulate in double in row-major order as
// block_mean (kernels/display.cu) does, so the result equals block_mean of the Laplacian
// buffer bit for bit, for a read of the field instead of a write and two reads.
template <int BC>
__device__ __forceinline__ void block_mean_laplacian(const float* __restrict__ f,
                                                     float* __restrict__ out, int rows, int cols,
                                                     int factor, int out_rows, int out_cols) {
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
            const float mid = f[(size_t)r * cols + c];
            const float lapl = 4.0f * mid - sample<BC>(f, r - 1, c, rows, cols)
                               - sample<BC>(f, r + 1, c, rows, cols)
                               - sample<BC>(f, r, c - 1, rows, cols)
                               - sample<BC>(f, r, c + 1, rows, cols);
            sum += (double)lapl;
        }
    }
    out[(size_t)br * out_cols + bc] = (float)(sum / (double)((r1 - r0) * (c1 - c0)));
}

extern "C" __global__ void block_mean_laplacian_dirichlet(const float* __restrict__ f,
                                                          float* __restrict__ out, int rows,
                                                          int cols, int factor, int out_rows,
                                                          int out_cols) {
    block_mean_laplacian<BC_DIRICHLET>(f, out, rows, cols, factor, out_rows, out_cols);
}
extern "C" __global__ void block_mean_laplacian_neumann(const float* __restrict__ f,
                                                        float* __restrict__ out, int rows,
                                                        int cols, int factor, int out_rows,
                                                        int out_cols) {
    block_mean_laplacian<BC_NEUMANN>(f, out, rows, cols, factor, out_rows, out_cols);
}
extern "C" __global__ void block_mean_laplacian_periodic(const float* __restrict__ f,
                                                         float* __restrict__ out, int rows,
                                                         int cols, int factor, int out_rows,
                                                         int out_cols) {
    block_mean_laplacian<BC_PERIODIC>(f, out, rows, cols, factor, out_rows, out_cols);
}
