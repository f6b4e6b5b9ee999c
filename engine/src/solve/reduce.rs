//! The one order in which the solver sums: blocks of [`BLOCK`] consecutive values, each added
//! as a tree (value `t` takes value `t + stride` for strides 128, 64, ..., 1; missing values
//! are 0), then the blocks' sums in the same way, until one value is left. CUDA's blocks of
//! 256 threads add in exactly this order (`kernels/multigrid.cu`), so a dot product is the
//! same on both.

use rayon::prelude::*;

/// Values per block.
pub const BLOCK: usize = 256;

/// The tree sum of one block (`values.len() <= BLOCK`, padded with 0).
fn block_sum(values: impl Iterator<Item = f64>) -> f64 {
    let mut lane = [0.0f64; BLOCK];
    for (slot, value) in lane.iter_mut().zip(values) {
        *slot = value;
    }
    let mut stride = BLOCK / 2;
    while stride > 0 {
        for t in 0..stride {
            lane[t] += lane[t + stride];
        }
        stride /= 2;
    }
    lane[0]
}

/// The sums of each block of `values`.
pub fn block_sums(values: &[f64]) -> Vec<f64> {
    values
        .par_chunks(BLOCK)
        .map(|chunk| block_sum(chunk.iter().copied()))
        .collect()
}

/// `Σ a_i b_i` in the solver's order.
pub fn dot(a: &[f64], b: &[f64]) -> f64 {
    let mut partial: Vec<f64> = a
        .par_chunks(BLOCK)
        .zip(b.par_chunks(BLOCK))
        .map(|(x, y)| block_sum(x.iter().zip(y).map(|(x, y)| x * y)))
        .collect();
    while partial.len() > 1 {
        partial = block_sums(&partial);
    }
    partial.first().copied().unwrap_or(0.0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_tree_adds_pairs_at_halving_strides() {
        // 1e16 + 1 - 1e16 in the tree's order: lanes 0 and 128 meet first.
        let mut a = vec![0.0; 300];
        a[0] = 1e16;
        a[128] = -1e16;
        a[1] = 1.0;
        a[299] = 2.0;
        let ones = vec![1.0; 300];
        assert_eq!(dot(&a, &ones), 3.0);
        assert_eq!(dot(&[], &[]), 0.0);
    }
}
