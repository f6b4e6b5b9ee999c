// heatlab's stencil helpers, compiled in front of diffusion.cu and display.cu (each module is
// compiled on its own by NVRTC, so the helpers they share live here, once).
//
// Layout: row-major float32, `rows` x `cols`, index = row * cols + col (NumPy's C order).
// Boundaries (the value of ghost cells outside the grid):
//   BC_DIRICHLET  0 outside (the tutorial's kernel)
//   BC_NEUMANN    the nearest edge cell (insulated, conserves heat)
//   BC_PERIODIC   wrap around (torus, conserves heat)

#define BC_DIRICHLET 0
#define BC_NEUMANN 1
#define BC_PERIODIC 2

// Every uniform boundary, once: X(name, BC_*, ...) for each, the rest of the arguments passed
// on to X. Each per-boundary kernel is one line, HEATLAB_FOR_EACH_BOUNDARY(MAKER, ...), whose
// MAKER defines the extern "C" kernel <base>_<name>; the host loads <base>_<name> for every
// Boundary::ALL (engine/src/compute/cuda/per_boundary.rs), <name> being Boundary::name() and
// BC_* its kernel_index(). Always pass at least one argument after X (C++17 wants one for the
// `...`); the makers take what the kernel's name is built from.
#define HEATLAB_FOR_EACH_BOUNDARY(X, ...) \
    X(dirichlet, BC_DIRICHLET, __VA_ARGS__) \
    X(neumann, BC_NEUMANN, __VA_ARGS__) \
    X(periodic, BC_PERIODIC, __VA_ARGS__)
// Not a boundary: the caller knows that the cell and its four neighbours lie inside the grid,
// where every boundary reads the same cells, so no ghost is looked for. Negative, apart from the
// boundaries' 0, 1, 2, ... and from display.cu's LAYER_FIELD (-1).
#define BC_INSIDE -2

// Where the value of cell (r, c), maybe a ghost outside the grid, comes from under BC: (r, c)
// is moved to the cell it reads; false for Dirichlet's ghosts, which are 0 and read nothing.
template <int BC>
__device__ __forceinline__ bool ghost_source(int& r, int& c, int rows, int cols) {
    if (BC == BC_DIRICHLET) {
        return r >= 0 && r < rows && c >= 0 && c < cols;
    } else if (BC == BC_NEUMANN) {
        r = r < 0 ? 0 : (r >= rows ? rows - 1 : r);
        c = c < 0 ? 0 : (c >= cols ? cols - 1 : c);
    } else if (BC == BC_PERIODIC) {
        r = r < 0 ? r + rows : (r >= rows ? r - rows : r);
        c = c < 0 ? c + cols : (c >= cols ? c - cols : c);
    }
    return true;
}

// The value of cell (r, c) under BC. LOAD_ALWAYS: a ghost that reads nothing loads the grid's
// first cell anyway and gives 0, so that no branch stands between a thread's loads of several
// cells and they are in flight together (the same values).
template <int BC, bool LOAD_ALWAYS = false>
__device__ __forceinline__ float sample(const float* __restrict__ f, int r, int c, int rows, int cols) {
    const bool reads = ghost_source<BC>(r, c, rows, cols);
    if (!LOAD_ALWAYS) {
        if (!reads) return 0.0f;
        return __ldg(&f[(size_t)r * cols + c]);
    }
    const float value = __ldg(f + (reads ? (size_t)r * cols + c : 0));
    return reads ? value : 0.0f;
}

// The Laplacian of cell (r, c): 4*f - up - down - left - right, summed in this order in float32
// (NumPy's order and the CPU's; compiled with --fmad=false, so no multiply-add is fused).
template <int BC, bool LOAD_ALWAYS = false>
__device__ __forceinline__ float laplacian_at(const float* __restrict__ f, int r, int c, int rows, int cols) {
    const float* cell = f + (size_t)r * cols + c;
    if (BC == BC_INSIDE) {
        // The neighbours from the cell's own address: the same loads, fewer instructions.
        return 4.0f * __ldg(cell) - __ldg(cell - cols) - __ldg(cell + cols) - __ldg(cell - 1) - __ldg(cell + 1);
    }
    const float mid = __ldg(cell);
    return 4.0f * mid - sample<BC, LOAD_ALWAYS>(f, r - 1, c, rows, cols) - sample<BC, LOAD_ALWAYS>(f, r + 1, c, rows, cols)
           - sample<BC, LOAD_ALWAYS>(f, r, c - 1, rows, cols) - sample<BC, LOAD_ALWAYS>(f, r, c + 1, rows, cols);
}
