// The multigrid solver's operations (engine/src/solve): every cell's update is the CPU
// reference's expression (engine/src/solve/cpu.rs), in double precision, in the same order,
// compiled without fused multiply-adds, so the two agree bit for bit. One thread per cell
// unless said otherwise; threads past the grid return.

#define CUDART_INF __longlong_as_double(0x7ff0000000000000LL)

struct Grid {
    int rows;
    int cols;
    int periodic_rows;
    int periodic_cols;
};

__device__ __forceinline__ long long cell_index() {
    return (long long)blockIdx.x * blockDim.x + threadIdx.x;
}

// ((G_w T_w + G_e T_e) + G_n T_n) + G_s T_s, a missing neighbour's term 0.
__device__ __forceinline__ double neighbour_sum(Grid g, const double* east, const double* south,
                                                const double* x, int row, int col) {
    long long here = (long long)row * g.cols + col;
    double west_term = 0.0, east_term = 0.0, north_term = 0.0, south_term = 0.0;
    if (col > 0) {
        west_term = east[here - 1] * x[here - 1];
    } else if (g.periodic_cols && g.cols > 1) {
        long long w = here + g.cols - 1;
        west_term = east[w] * x[w];
    }
    if (col + 1 < g.cols) {
        east_term = east[here] * x[here + 1];
    } else if (g.periodic_cols && g.cols > 1) {
        east_term = east[here] * x[(long long)row * g.cols];
    }
    if (row > 0) {
        long long n = here - g.cols;
        north_term = south[n] * x[n];
    } else if (g.periodic_rows && g.rows > 1) {
        long long n = (long long)(g.rows - 1) * g.cols + col;
        north_term = south[n] * x[n];
    }
    if (row + 1 < g.rows) {
        south_term = south[here] * x[here + g.cols];
    } else if (g.periodic_rows && g.rows > 1) {
        south_term = south[here] * x[col];
    }
    return ((west_term + east_term) + north_term) + south_term;
}

// One red-black half-sweep out of place: cells of `colour` take (rhs + sum) / (diag + sigma C).
extern "C" __global__ void mg_smooth(Grid g, const unsigned char* free_cells,
                                     const double* east, const double* south,
                                     const double* diagonal, const double* capacity,
                                     double sigma, int colour, const double* x,
                                     const double* rhs, double* out) {
    long long i = cell_index();
    if (i >= (long long)g.rows * g.cols) return;
    int row = (int)(i / g.cols), col = (int)(i % g.cols);
    double denominator = diagonal[i] + sigma * capacity[i];
    bool updated = free_cells[i] == 1 && ((row + col) % 2) == colour && denominator > 0.0;
    out[i] = updated ? (rhs[i] + neighbour_sum(g, east, south, x, row, col)) / denominator : x[i];
}

// r = rhs - ((diag + sigma C) x - sum) on free cells, 0 elsewhere.
extern "C" __global__ void mg_residual(Grid g, const unsigned char* free_cells,
                                       const double* east, const double* south,
                                       const double* diagonal, const double* capacity,
                                       double sigma, const double* x, const double* rhs,
                                       double* out) {
    long long i = cell_index();
    if (i >= (long long)g.rows * g.cols) return;
    int row = (int)(i / g.cols), col = (int)(i % g.cols);
    if (free_cells[i] == 1) {
        double denominator = diagonal[i] + sigma * capacity[i];
        out[i] = rhs[i] - (denominator * x[i] - neighbour_sum(g, east, south, x, row, col));
    } else {
        out[i] = 0.0;
    }
}

// q = (diag + sigma C) p - sum on free cells, 0 elsewhere.
extern "C" __global__ void mg_apply(Grid g, const unsigned char* free_cells, const double* east,
                                    const double* south, const double* diagonal,
                                    const double* capacity, double sigma, const double* p,
                                    double* q) {
    long long i = cell_index();
    if (i >= (long long)g.rows * g.cols) return;
    int row = (int)(i / g.cols), col = (int)(i % g.cols);
    if (free_cells[i] == 1) {
        double denominator = diagonal[i] + sigma * capacity[i];
        q[i] = denominator * p[i] - neighbour_sum(g, east, south, p, row, col);
    } else {
        q[i] = 0.0;
    }
}

// The coarse right side: each coarse cell sums its fine cells' residuals in row-major order;
// its value becomes 0.
extern "C" __global__ void mg_restrict(Grid fine, Grid coarse, int row_factor, int col_factor,
                                       const double* residual, double* rhs, double* x) {
    long long i = cell_index();
    if (i >= (long long)coarse.rows * coarse.cols) return;
    int row = (int)(i / coarse.cols), col = (int)(i % coarse.cols);
    double sum = 0.0;
    int row_end = min(row_factor * (row + 1), fine.rows);
    int col_end = min(col_factor * (col + 1), fine.cols);
    for (int r = row_factor * row; r < row_end; ++r) {
        for (int c = col_factor * col; c < col_end; ++c) {
            sum += residual[(long long)r * fine.cols + c];
        }
    }
    rhs[i] = sum;
    x[i] = 0.0;
}

// x_fine += weight * x_coarse(parent) on free fine cells.
extern "C" __global__ void mg_prolong(Grid fine, int coarse_cols, int row_factor, int col_factor,
                                      const unsigned char* free_cells, double weight,
                                      const double* correction, double* x) {
    long long i = cell_index();
    if (i >= (long long)fine.rows * fine.cols) return;
    if (free_cells[i] != 1) return;
    int row = (int)(i / fine.cols), col = (int)(i % fine.cols);
    long long parent = (long long)(row / row_factor) * coarse_cols + col / col_factor;
    x[i] += weight * correction[parent];
}

// The coarsest grid's exact solve on one thread: Gaussian elimination without pivoting,
// engine/src/solve/coarsest.rs's `eliminate` step by step. `work` holds n*n + 2n doubles.
extern "C" __global__ void mg_coarsest(int n, const double* matrix, double singular_pivot,
                                       const double* rhs, double* x, double* work) {
    if (blockIdx.x != 0 || threadIdx.x != 0) return;
    double* a = work;
    double* diagonal = work + n * n;
    double* zero = diagonal + n;
    for (int k = 0; k < n * n; ++k) a[k] = matrix[k];
    for (int k = 0; k < n; ++k) {
        x[k] = rhs[k];
        diagonal[k] = a[k * n + k];
        zero[k] = 0.0;
    }
    for (int k = 0; k < n; ++k) {
        double pivot = a[k * n + k];
        if (fabs(pivot) <= singular_pivot * fabs(diagonal[k])) {
            zero[k] = 1.0;
            continue;
        }
        for (int r = k + 1; r < n; ++r) {
            double factor = a[r * n + k] / pivot;
            if (factor == 0.0) continue;
            for (int j = k; j < n; ++j) a[r * n + j] -= factor * a[k * n + j];
            x[r] -= factor * x[k];
        }
    }
    for (int k = n - 1; k >= 0; --k) {
        if (zero[k] != 0.0) {
            x[k] = 0.0;
            continue;
        }
        double sum = x[k];
        for (int j = k + 1; j < n; ++j) sum -= a[k * n + j] * x[j];
        x[k] = sum / a[k * n + k];
    }
}

// Block sums in the solver's order (engine/src/solve/reduce.rs): 256 threads, lane t takes
// lane t + stride for strides 128, 64, ..., 1.
__device__ __forceinline__ void block_tree(double* lane) {
    for (int stride = 128; stride > 0; stride >>= 1) {
        __syncthreads();
        if (threadIdx.x < stride) lane[threadIdx.x] = lane[threadIdx.x] + lane[threadIdx.x + stride];
    }
}

extern "C" __global__ void mg_dot_blocks(long long n, const double* a, const double* b,
                                         double* partial) {
    __shared__ double lane[256];
    long long i = cell_index();
    lane[threadIdx.x] = i < n ? a[i] * b[i] : 0.0;
    block_tree(lane);
    if (threadIdx.x == 0) partial[blockIdx.x] = lane[0];
}

extern "C" __global__ void mg_sum_blocks(long long n, const double* values, double* partial) {
    __shared__ double lane[256];
    long long i = cell_index();
    lane[threadIdx.x] = i < n ? values[i] : 0.0;
    block_tree(lane);
    if (threadIdx.x == 0) partial[blockIdx.x] = lane[0];
}

// Order-preserving keys of doubles for atomic minima and maxima.
__device__ __forceinline__ unsigned long long order_key(double v) {
    unsigned long long bits = (unsigned long long)__double_as_longlong(v);
    return (bits >> 63) ? ~bits : (bits | 0x8000000000000000ull);
}

// slots: [0] max |r| (key), [1] max change (key), [2] min x (key), [3] max x (key).
extern "C" __global__ void mg_reset_slots(unsigned long long* slots) {
    if (threadIdx.x == 0 && blockIdx.x == 0) {
        slots[0] = order_key(0.0);
        slots[1] = order_key(0.0);
        slots[2] = 0xFFFFFFFFFFFFFFFFull;
        slots[3] = 0ull;
    }
}

// Folds each thread's four figures over the block (a tree in shared memory), then one atomic
// per slot and block: atomics on the same four words from every thread would serialise.
__device__ __forceinline__ void fold_slots(double residual, double change, double lo, double hi,
                                           unsigned long long* slots) {
    __shared__ unsigned long long keys[4][256];
    unsigned t = threadIdx.x;
    keys[0][t] = order_key(residual);
    keys[1][t] = order_key(change);
    keys[2][t] = order_key(lo);
    keys[3][t] = order_key(hi);
    for (unsigned stride = blockDim.x / 2; stride > 0; stride >>= 1) {
        __syncthreads();
        if (t < stride) {
            keys[0][t] = max(keys[0][t], keys[0][t + stride]);
            keys[1][t] = max(keys[1][t], keys[1][t + stride]);
            keys[2][t] = min(keys[2][t], keys[2][t + stride]);
            keys[3][t] = max(keys[3][t], keys[3][t + stride]);
        }
    }
    if (t == 0) {
        atomicMax(&slots[0], keys[0][0]);
        atomicMax(&slots[1], keys[1][0]);
        atomicMin(&slots[2], keys[2][0]);
        atomicMax(&slots[3], keys[3][0]);
    }
}

// x += alpha p, r -= alpha q on free cells; then the maxima (|r| and |alpha p| of free cells,
// min and max of x over all). Every thread of a block takes part in the fold (blocks of 256).
extern "C" __global__ void mg_step(long long n, const unsigned char* free_cells, double alpha,
                                   const double* p, const double* q, double* x, double* r,
                                   unsigned long long* slots) {
    long long i = cell_index();
    double residual = 0.0, change = 0.0, lo = CUDART_INF, hi = -CUDART_INF;
    if (i < n) {
        if (free_cells[i] == 1) {
            x[i] += alpha * p[i];
            r[i] -= alpha * q[i];
            residual = fabs(r[i]);
            change = fabs(alpha * p[i]);
        }
        lo = x[i];
        hi = x[i];
    }
    fold_slots(residual, change, lo, hi, slots);
}

// The maxima of the start: |r| of free cells, min and max of x.
extern "C" __global__ void mg_norms(long long n, const unsigned char* free_cells, const double* x,
                                    const double* r, unsigned long long* slots) {
    long long i = cell_index();
    double residual = 0.0, lo = CUDART_INF, hi = -CUDART_INF;
    if (i < n) {
        residual = free_cells[i] == 1 ? fabs(r[i]) : 0.0;
        lo = x[i];
        hi = x[i];
    }
    fold_slots(residual, 0.0, lo, hi, slots);
}

// p = z + beta p.
extern "C" __global__ void mg_direction(long long n, const double* z, double beta, double* p) {
    long long i = cell_index();
    if (i >= n) return;
    p[i] = z[i] + beta * p[i];
}

// The start: free cells take the field's values, held cells their temperatures.
extern "C" __global__ void mg_load(long long n, const double* held, const float* field,
                                   double* x) {
    long long i = cell_index();
    if (i >= n) return;
    double t = held[i];
    x[i] = isnan(t) ? (double)field[i] : t;
}

// The right side of a request: 0 steady, 1 backward Euler, 2 Crank-Nicolson (see
// engine/src/solve/cpu.rs's implicit_rhs).
extern "C" __global__ void mg_rhs(Grid g, const unsigned char* free_cells, const double* east,
                                  const double* south, const double* diagonal,
                                  const double* capacity, const double* b, int request,
                                  double sigma, const double* x, double* rhs) {
    long long i = cell_index();
    if (i >= (long long)g.rows * g.cols) return;
    int row = (int)(i / g.cols), col = (int)(i % g.cols);
    if (free_cells[i] != 1) {
        rhs[i] = 0.0;
        return;
    }
    if (request == 0) {
        rhs[i] = b[i];
    } else if (request == 1) {
        rhs[i] = (sigma * capacity[i]) * x[i] + b[i];
    } else {
        double s = neighbour_sum(g, east, south, x, row, col);
        rhs[i] = ((sigma * capacity[i]) * x[i] - ((diagonal[i] * x[i]) - s)) + 2.0 * b[i];
    }
}

// The field's free cells take the solution, rounded to float.
extern "C" __global__ void mg_store(long long n, const unsigned char* free_cells, const double* x,
                                    float* field) {
    long long i = cell_index();
    if (i >= n) return;
    if (free_cells[i] == 1) field[i] = (float)x[i];
}
