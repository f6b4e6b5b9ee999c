//! The lab's bad kernels: the template (the user's starting point) with one mistake each,
//! shared by `tests/core/lab.rs` (their verdicts), `tests/gui/render.rs` and
//! `examples/lab_screenshots.rs` (the compile error shown in the screenshot).

use heatlab_engine::compute::cuda::user_kernel::USER_KERNEL_TEMPLATE;

/// The template with `anchor` (which it holds exactly once) replaced by `replacement`: each bad
/// kernel of these tests is the user's starting point with one mistake in it.
pub fn template_with(anchor: &str, replacement: &str) -> String {
    assert_eq!(
        USER_KERNEL_TEMPLATE.matches(anchor).count(),
        1,
        "the template no longer holds {anchor:?} once"
    );
    USER_KERNEL_TEMPLATE.replacen(anchor, replacement, 1)
}

/// The statement whose semicolon the syntax error drops.
pub const SEMICOLON_STATEMENT: &str = "    const int tx = threadIdx.x, ty = threadIdx.y;\n";

/// A compile error: a missing semicolon.
pub fn syntax_error() -> String {
    template_with(
        SEMICOLON_STATEMENT,
        "    const int tx = threadIdx.x, ty = threadIdx.y  // the semicolon is missing\n",
    )
}

/// The line of the syntax error's missing semicolon (NVRTC may name it or the next one).
pub fn syntax_error_line() -> usize {
    // `template_with` checks that the statement is there; without it this counts every line.
    let at = USER_KERNEL_TEMPLATE
        .find(SEMICOLON_STATEMENT)
        .unwrap_or(USER_KERNEL_TEMPLATE.len());
    USER_KERNEL_TEMPLATE[..at].lines().count() + 1
}

/// Wrong: reads the cell itself instead of its right neighbour.
pub fn off_by_one() -> String {
    template_with(
        "                    - tile[ty + 1][tx + 2];\n",
        "                    - tile[ty + 1][tx + 1];\n",
    )
}

/// Writes far outside `out` (a fault).
pub fn out_of_bounds() -> String {
    template_with(
        "    out[i] = mid - coeff * l;\n",
        "    out[i] = mid - coeff * l;\n    out[i + ((size_t)1 << 36)] = 0.0f;  // far outside the buffer\n",
    )
}

/// Never returns: clock64() is a volatile read that no compiler may remove, and it never goes
/// back.
pub fn endless_loop() -> String {
    template_with(
        "    __syncthreads();\n",
        "    __syncthreads();\n    const long long started = clock64();\n    while (clock64() >= started) { }  // never ends\n",
    )
}
