// heatlab field edits: one brush dab over its bounding box, and gathering or setting a few
// cells by index. Compiled by NVRTC with --fmad=false; brush_stamp evaluates the f32 arithmetic
// of src/compute/brush.rs (BrushStamp::weight and stamped) in the same order, so CUDA and the CPU
// agree to the bit. The floor of a removal is chosen without any float select between a value
// and zero: the optimiser may turn `v < 0.0f ? v : 0.0f` into min.f32, which gives -0 for v = -0
// where the CPU reference takes +0 (the first H100 run differed at a -0 cell under removals, and
// exactly where a CPU replay with that min differs; tests/cuda_brush.rs now covers both zeros
// under removal at every shape).

// Adds amount * weight to each cell of the box rows [row0, row0 + box_rows) x columns
// [col0, col0 + box_cols) whose centre lies within the disc: d2 = dx*dx + dy*dy, outside when
// d2 > r2; edge 1 (hard): weight 1; edge 0 (soft): u = 1 - d2*inv_r2, weight u*u. Removing
// (amount < 0) never goes below min(value, 0), where min(-0, +0) is +0 as on the CPU.
extern "C" __global__ void brush_stamp(float* __restrict__ field, int cols,
                                       int row0, int col0, int box_rows, int box_cols,
                                       float centre_row, float centre_col, float r2, float inv_r2,
                                       float amount, int edge) {
    const int bx = blockIdx.x * blockDim.x + threadIdx.x;
    const int by = blockIdx.y * blockDim.y + threadIdx.y;
    if (bx >= box_cols || by >= box_rows) return;
    const int row = row0 + by;
    const int col = col0 + bx;
    const float dy = (float)row - centre_row;
    const float dx = (float)col - centre_col;
    const float d2 = dx * dx + dy * dy;
    if (d2 > r2) return;
    float weight = 1.0f;
    if (edge == 0) {
        const float u = 1.0f - d2 * inv_r2;
        weight = u * u;
    }
    const size_t index = (size_t)row * cols + col;
    const float value = field[index];
    const float next = value + amount * weight;
    if (amount < 0.0f) {
        // A cell below zero keeps its value: amount * weight <= 0, so next <= value and the
        // floor (the value) is the result.
        if (value < 0.0f) return;
        // Otherwise (value +0, -0, positive) the floor is +0. Tested and chosen on the bits, so
        // that no min/max can pick the other zero: a negative next (not -0, not NaN: bits above
        // 0x80000000 up to -inf's 0xff800000) becomes +0; -0 (value -0 at weight 0) stays -0.
        const unsigned int bits = __float_as_uint(next);
        const bool below_zero = bits > 0x80000000u && bits <= 0xff800000u;
        field[index] = __uint_as_float(below_zero ? 0u : bits);
        return;
    }
    field[index] = next;
}

// out[i] = field[cells[i]] for i < n.
extern "C" __global__ void gather_cells(const float* __restrict__ field,
                                        const unsigned int* __restrict__ cells,
                                        float* __restrict__ out, int n) {
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    out[i] = field[cells[i]];
}

// field[cells[i]] = values[i] for i < n (indices are distinct).
extern "C" __global__ void scatter_cells(float* __restrict__ field,
                                         const unsigned int* __restrict__ cells,
                                         const float* __restrict__ values, int n) {
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    field[cells[i]] = values[i];
}
