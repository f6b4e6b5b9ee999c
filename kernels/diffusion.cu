// heatlab diffusion kernels, compiled at run time by NVRTC for the device's own architecture.
//
// The step is Jacobi: read `in`, write `out`, never the same buffer.
//   lapl = 4*f - up - down - left - right      (summed in this order, as NumPy and the CPU do)
//   f_next = f - coeff * lapl
// heatlab compiles with --fmad=false so that no multiply-add is fused and the GPU result equals
// the CPU's bit for bit.
//
// Layout: row-major float32, `rows` x `cols`, index = row * cols + col (NumPy's C order).
// Boundaries (the value of ghost cells outside the grid):
//   BC_DIRICHLET  0 outside (the tutorial's kernel)
//   BC_NEUMANN    the nearest edge cell (insulated, conserves heat)
//   BC_PERIODIC   wrap around (torus, conserves heat)

#define BC_DIRICHLET 0
#define BC_NEUMANN 1
#define BC_PERIODIC 2

// Rows one thread marches down in the Jacobi kernel: the cell above and the cell itself are
// reused from registers, so each row costs one new vertical load.
#define ROWS_PER_THREAD 4

template <int BC>
__device__ __forceinline__ float sample(const float* __restrict__ f, int r, int c, int rows, int cols) {
    if (BC == BC_DIRICHLET) {
        if (r < 0 || r >= rows || c < 0 || c >= cols) return 0.0f;
    } else if (BC == BC_NEUMANN) {
        r = r < 0 ? 0 : (r >= rows ? rows - 1 : r);
        c = c < 0 ? 0 : (c >= cols ? cols - 1 : c);
    } else {
        r = r < 0 ? r + rows : (r >= rows ? r - rows : r);
        c = c < 0 ? c + cols : (c >= cols ? c - cols : c);
    }
    return __ldg(&f[(size_t)r * cols + c]);
}

// One Jacobi step. Block (32, 8); each thread owns one column and ROWS_PER_THREAD rows.
template <int BC>
__device__ __forceinline__ void jacobi_step(const float* __restrict__ in, float* __restrict__ out,
                                            int rows, int cols, float coeff) {
    const int c = blockIdx.x * blockDim.x + threadIdx.x;
    const int r0 = (blockIdx.y * blockDim.y + threadIdx.y) * ROWS_PER_THREAD;
    if (c >= cols || r0 >= rows) return;
    const int r_end = min(r0 + ROWS_PER_THREAD, rows);
    float up = sample<BC>(in, r0 - 1, c, rows, cols);
    float mid = __ldg(&in[(size_t)r0 * cols + c]);
    for (int r = r0; r < r_end; ++r) {
        const float down = sample<BC>(in, r + 1, c, rows, cols);
        const float left = sample<BC>(in, r, c - 1, rows, cols);
        const float right = sample<BC>(in, r, c + 1, rows, cols);
        const float lapl = 4.0f * mid - up - down - left - right;
        out[(size_t)r * cols + c] = mid - coeff * lapl;
        up = mid;
        mid = down;
    }
}

extern "C" __global__ void jacobi_step_dirichlet(const float* __restrict__ in, float* __restrict__ out,
                                                 int rows, int cols, float coeff) {
    jacobi_step<BC_DIRICHLET>(in, out, rows, cols, coeff);
}
extern "C" __global__ void jacobi_step_neumann(const float* __restrict__ in, float* __restrict__ out,
                                               int rows, int cols, float coeff) {
    jacobi_step<BC_NEUMANN>(in, out, rows, cols, coeff);
}
extern "C" __global__ void jacobi_step_periodic(const float* __restrict__ in, float* __restrict__ out,
                                                int rows, int cols, float coeff) {
    jacobi_step<BC_PERIODIC>(in, out, rows, cols, coeff);
}

// The Laplacian of a field, one thread per cell. Only computed when it is shown or exported.
template <int BC>
__device__ __forceinline__ void laplacian(const float* __restrict__ f, float* __restrict__ lapl,
                                          int rows, int cols) {
    const int c = blockIdx.x * blockDim.x + threadIdx.x;
    const int r = blockIdx.y * blockDim.y + threadIdx.y;
    if (c >= cols || r >= rows) return;
    const float mid = f[(size_t)r * cols + c];
    lapl[(size_t)r * cols + c] = 4.0f * mid - sample<BC>(f, r - 1, c, rows, cols)
                                 - sample<BC>(f, r + 1, c, rows, cols)
                                 - sample<BC>(f, r, c - 1, rows, cols)
                                 - sample<BC>(f, r, c + 1, rows, cols);
}

extern "C" __global__ void laplacian_dirichlet(const float* __restrict__ f, float* __restrict__ lapl,
                                               int rows, int cols) {
    laplacian<BC_DIRICHLET>(f, lapl, rows, cols);
}
extern "C" __global__ void laplacian_neumann(const float* __restrict__ f, float* __restrict__ lapl,
                                             int rows, int cols) {
    laplacian<BC_NEUMANN>(f, lapl, rows, cols);
}
extern "C" __global__ void laplacian_periodic(const float* __restrict__ f, float* __restrict__ lapl,
                                              int rows, int cols) {
    laplacian<BC_PERIODIC>(f, lapl, rows, cols);
}

// A faithful port of the tutorial's Numba kernel, kept ONLY as a benchmark baseline.
// 8x8 shared tile with a one-cell halo; x (threadIdx.x) indexes rows as Numba's cuda.grid(2) does,
// so a warp walks down a column (uncoalesced); the Laplacian is written every step; and the field
// is updated IN PLACE while neighbouring blocks may still read it: a race, which is why the
// simulation never uses it. Numba types `4 * float32` as float64, so `val` is a double here too.
// The one change: out-of-range threads of a partial block read nothing (Numba reads past the end).
#define SEED_TPB 8
extern "C" __global__ void seed_diffusion_inplace(float* field, float* lapl, int rows, int cols, float coeff) {
    __shared__ float sharedarray[SEED_TPB + 2][SEED_TPB + 2];
    const int x = blockIdx.x * blockDim.x + threadIdx.x;
    const int y = blockIdx.y * blockDim.y + threadIdx.y;
    const int tx = threadIdx.x;
    const int ty = threadIdx.y;
    const bool inside = x < rows && y < cols;
    if (inside) {
        if (tx == 0 && x > 0) sharedarray[0][ty + 1] = field[(size_t)(x - 1) * cols + y];
        if (ty == 0 && y > 0) sharedarray[tx + 1][0] = field[(size_t)x * cols + y - 1];
        if (tx == SEED_TPB - 1 && x < rows - 1) sharedarray[SEED_TPB + 1][ty + 1] = field[(size_t)(x + 1) * cols + y];
        if (ty == SEED_TPB - 1 && y < cols - 1) sharedarray[tx + 1][SEED_TPB + 1] = field[(size_t)x * cols + y + 1];
    }
    sharedarray[tx + 1][ty + 1] = inside ? field[(size_t)x * cols + y] : 0.0f;
    double val = 4 * (double)sharedarray[tx + 1][ty + 1];
    __syncthreads();
    if (x > 0) val -= sharedarray[tx][ty + 1];
    if (y > 0) val -= sharedarray[tx + 1][ty];
    if (x < rows - 1) val -= sharedarray[tx + 2][ty + 1];
    if (y < cols - 1) val -= sharedarray[tx + 1][ty + 2];
    if (inside) {
        lapl[(size_t)x * cols + y] = (float)val;
        field[(size_t)x * cols + y] = (float)(field[(size_t)x * cols + y] - val * (double)coeff);
    }
}
