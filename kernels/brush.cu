// heatlab field edits: one brush dab over its bounding box, and gathering or setting a few
// cells by index. Compiled by NVRTC with --fmad=false; brush_stamp evaluates the f32 operations
// of src/compute/brush.rs (BrushStamp::weight and stamped) in the same order, with comparisons
// instead of fminf/fmaxf, so CUDA and the CPU agree to the bit.

// Adds amount * weight to each cell of the box rows [row0, row0 + box_rows) x columns
// [col0, col0 + box_cols) whose centre lies within the disc: d2 = dx*dx + dy*dy, outside when
// d2 > r2; edge 1 (hard): weight 1; edge 0 (soft): u = 1 - d2*inv_r2, weight u*u. Removing
// (amount < 0) never goes below min(value, 0).
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
    float next = value + amount * weight;
    if (amount < 0.0f) {
        const float floor_value = value < 0.0f ? value : 0.0f;
        if (next < floor_value) next = floor_value;
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
