// heatlab's GPU basics (seeds 000, 002 and 003: the element-wise maximum, the launch geometry of
// increment kernels, sin(x)*exp(y), row sums and reductions), compiled at run time by NVRTC for
// the device's own architecture with --fmad=false, like the other kernels.
//
// Every kernel has a twin on the CPU in src/tutorial/basics/ that the tests compare it with.
// Indices are computed in 64 bits wherever an array may pass 2^32 elements.

// ---------------------------------------------------------------------------------------------
// The maximum ladder (seed 000): c = max(a, b), one element per thread, guarded. fmaxf returns
// the other operand when one is NaN, as Rust's f32::max does, so the CPU's result is equal bit
// for bit.
extern "C" __global__ void maximum(const float* __restrict__ a,
                                   const float* __restrict__ b,
                                   float* __restrict__ c,
                                   unsigned long long n) {
    const unsigned long long i = (unsigned long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        c[i] = fmaxf(a[i], b[i]);
    }
}

// ---------------------------------------------------------------------------------------------
// Launch geometry (seed 002): add one to every element, the notebook's `i = cuda.grid(1)`.
// With `guarded` = 0 the `if i < n` test is left out and every launched thread writes: the
// caller then pads `x` to the launched thread count, so that the writes past the end land in
// padding it reads back and reports, never in memory that belongs to something else.
extern "C" __global__ void increment_1d(double* x, unsigned long long n, int guarded) {
    const unsigned long long i = (unsigned long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (guarded == 0 || i < n) {
        x[i] += 1.0;
    }
}

// The 2-D version: `x, y = cuda.grid(2)` over a rows x cols array in row-major order. With
// `x_along_rows` = 1 the grid's x (the fastest-varying thread index) walks the rows, as the
// notebook's `arr[x, y]` does, so neighbouring threads touch elements a whole row apart; with 0
// it walks the columns and a warp touches neighbouring elements (coalesced). Without the guard a
// column index past the end wraps into the next row, so that two threads add to one element:
// those adds are atomic, so that the count of touches read back is exact (a plain `+=` would
// race and lose some). The caller pads `x` past the last launched index, as for 1-D.
extern "C" __global__ void increment_2d(double* x,
                                        unsigned int rows,
                                        unsigned int cols,
                                        int x_along_rows,
                                        int guarded) {
    const unsigned int tx = blockIdx.x * blockDim.x + threadIdx.x;
    const unsigned int ty = blockIdx.y * blockDim.y + threadIdx.y;
    const unsigned long long row = x_along_rows ? tx : ty;
    const unsigned long long col = x_along_rows ? ty : tx;
    if (guarded) {
        if (row < rows && col < cols) {
            x[row * cols + col] += 1.0;
        }
    } else {
        atomicAdd(&x[row * cols + col], 1.0);
    }
}

// ---------------------------------------------------------------------------------------------
// sin(x) * exp(y) (seed 003's @vectorize), in float32 with the precise library functions, in
// float32 with the fast hardware approximations (__sinf, __expf: what --use_fast_math picks),
// and in float64.
extern "C" __global__ void sin_exp_f32(const float* __restrict__ x,
                                       const float* __restrict__ y,
                                       float* __restrict__ z,
                                       unsigned long long n) {
    const unsigned long long i = (unsigned long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        z[i] = sinf(x[i]) * expf(y[i]);
    }
}

extern "C" __global__ void sin_exp_f32_fast(const float* __restrict__ x,
                                            const float* __restrict__ y,
                                            float* __restrict__ z,
                                            unsigned long long n) {
    const unsigned long long i = (unsigned long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        z[i] = __sinf(x[i]) * __expf(y[i]);
    }
}

extern "C" __global__ void sin_exp_f64(const double* __restrict__ x,
                                       const double* __restrict__ y,
                                       double* __restrict__ z,
                                       unsigned long long n) {
    const unsigned long long i = (unsigned long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        z[i] = sin(x[i]) * exp(y[i]);
    }
}

// ---------------------------------------------------------------------------------------------
// Row sums of a rows x cols float32 matrix (seed 003's @guvectorize). The notebook's `tmp = 0.`
// is a float64, so each row is summed in float64 and the sum rounded to float32 once.
//
// One thread per row, the notebook's loop: threads of a warp read addresses a row apart.
extern "C" __global__ void row_sums_thread(const float* __restrict__ a,
                                           float* __restrict__ sums,
                                           unsigned int rows,
                                           unsigned int cols) {
    const unsigned long long row = (unsigned long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (row < rows) {
        double total = 0.0;
        for (unsigned int col = 0; col < cols; ++col) {
            total += a[row * cols + col];
        }
        sums[row] = (float)total;
    }
}

// One warp per row: the lanes stride along the row (neighbouring addresses, coalesced) and
// shuffles add the 32 partial sums. blockDim.x must be a multiple of 32, so that a warp's
// lanes share one row and leave together.
extern "C" __global__ void row_sums_warp(const float* __restrict__ a,
                                         float* __restrict__ sums,
                                         unsigned int rows,
                                         unsigned int cols) {
    const unsigned long long row =
        ((unsigned long long)blockIdx.x * blockDim.x + threadIdx.x) / 32;
    const unsigned int lane = threadIdx.x % 32;
    if (row >= rows) {
        return;
    }
    double total = 0.0;
    for (unsigned int col = lane; col < cols; col += 32) {
        total += a[row * cols + col];
    }
    for (int offset = 16; offset > 0; offset >>= 1) {
        total += __shfl_down_sync(0xffffffffu, total, offset);
    }
    if (lane == 0) {
        sums[row] = (float)total;
    }
}

// ---------------------------------------------------------------------------------------------
// Reductions of a float64 array (seed 003's @cuda.reduce): op 0 sums, op 1 multiplies. Every
// thread first folds its grid-stride share (elements i, i + stride, ...), then the kernels
// differ in how the threads' partial results are combined.
#define REDUCE_BLOCK 256

__device__ __forceinline__ double reduce_identity(int op) {
    return op == 0 ? 0.0 : 1.0;
}

__device__ __forceinline__ double reduce_combine(double a, double b, int op) {
    return op == 0 ? a + b : a * b;
}

__device__ __forceinline__ double fold_share(const double* __restrict__ x,
                                             unsigned long long n,
                                             int op) {
    double partial = reduce_identity(op);
    const unsigned long long stride = (unsigned long long)gridDim.x * blockDim.x;
    for (unsigned long long i = (unsigned long long)blockIdx.x * blockDim.x + threadIdx.x; i < n;
         i += stride) {
        partial = reduce_combine(partial, x[i], op);
    }
    return partial;
}

// Combines `value` into *address atomically: the hardware's atomicAdd for sums (sm_60 and
// later), a compare-and-swap loop otherwise (there is no atomic multiply).
__device__ void atomic_combine(double* address, double value, int op) {
#if __CUDA_ARCH__ >= 600
    if (op == 0) {
        atomicAdd(address, value);
        return;
    }
#endif
    unsigned long long* word = reinterpret_cast<unsigned long long*>(address);
    unsigned long long old = *word;
    unsigned long long assumed;
    do {
        assumed = old;
        const double combined = reduce_combine(__longlong_as_double((long long)assumed), value, op);
        old = atomicCAS(word, assumed, (unsigned long long)__double_as_longlong(combined));
    } while (assumed != old);
}

// Atomics: every thread combines its partial into the one result (which the host sets to the
// identity first). The order of the combinations varies from run to run.
extern "C" __global__ void reduce_atomic(const double* __restrict__ x,
                                         unsigned long long n,
                                         int op,
                                         double* result) {
    atomic_combine(result, fold_share(x, n, op), op);
}

// A tree in shared memory: the block's partials are halved log2(REDUCE_BLOCK) times, one
// __syncthreads() per level; block b writes partials[b]. A second launch of one block over the
// partials gives the result. Needs blockDim.x == REDUCE_BLOCK.
extern "C" __global__ void __launch_bounds__(REDUCE_BLOCK)
    reduce_tree(const double* __restrict__ x, unsigned long long n, int op, double* partials) {
    __shared__ double shared[REDUCE_BLOCK];
    shared[threadIdx.x] = fold_share(x, n, op);
    __syncthreads();
    for (unsigned int half = REDUCE_BLOCK / 2; half > 0; half >>= 1) {
        if (threadIdx.x < half) {
            shared[threadIdx.x] = reduce_combine(shared[threadIdx.x], shared[threadIdx.x + half], op);
        }
        __syncthreads();
    }
    if (threadIdx.x == 0) {
        partials[blockIdx.x] = shared[0];
    }
}

__device__ __forceinline__ double warp_fold(double value, int op) {
    for (int offset = 16; offset > 0; offset >>= 1) {
        value = reduce_combine(value, __shfl_down_sync(0xffffffffu, value, offset), op);
    }
    return value;
}

// Warp shuffles: each warp combines its 32 partials in registers, the warps' results meet in
// shared memory, and the first warp combines those: one __syncthreads() in all. Block b writes
// partials[b]; a second launch of one block gives the result. Needs blockDim.x == REDUCE_BLOCK.
extern "C" __global__ void __launch_bounds__(REDUCE_BLOCK)
    reduce_warp(const double* __restrict__ x, unsigned long long n, int op, double* partials) {
    __shared__ double warps[REDUCE_BLOCK / 32];
    const unsigned int lane = threadIdx.x % 32;
    const unsigned int warp = threadIdx.x / 32;
    const double partial = warp_fold(fold_share(x, n, op), op);
    if (lane == 0) {
        warps[warp] = partial;
    }
    __syncthreads();
    if (warp == 0) {
        const double value = lane < REDUCE_BLOCK / 32 ? warps[lane] : reduce_identity(op);
        const double total = warp_fold(value, op);
        if (lane == 0) {
            partials[blockIdx.x] = total;
        }
    }
}
