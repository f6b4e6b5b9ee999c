//! `np.percentile(a, q)` with NumPy's default (linear) method, in O(n) by selection.

/// The `q`-th percentile (0..=100) of `values` as NumPy computes it for float64 data.
/// Returns `None` for an empty slice. `values` is reordered.
pub fn percentile_linear(values: &mut [f64], q: f64) -> Option<f64> {
    let n = values.len();
    if n == 0 {
        return None;
    }
    let virtual_index = (q / 100.0) * (n - 1) as f64;
    let previous_index = (virtual_index.floor() as usize).min(n - 1);
    let next_index = (previous_index + 1).min(n - 1);
    let gamma = virtual_index - previous_index as f64;
    let (_, &mut previous, above) = values.select_nth_unstable_by(previous_index, f64::total_cmp);
    let next = if next_index == previous_index {
        previous
    } else {
        above.iter().copied().fold(f64::INFINITY, f64::min)
    };
    Some(lerp(previous, next, gamma))
}

/// Two percentiles `low <= high` (0..=100) of `values`, each exactly as [`percentile_linear`]
/// gives it, with the second selection confined to the part above the first (about half the
/// work of two separate calls). Returns `None` for an empty slice. `values` is reordered.
pub fn percentile_pair_linear(values: &mut [f64], low: f64, high: f64) -> Option<(f64, f64)> {
    let (low, high) = (low.min(high), low.max(high));
    let n = values.len();
    if n == 0 {
        return None;
    }
    let index = |q: f64| {
        let virtual_index = (q / 100.0) * (n - 1) as f64;
        let previous = (virtual_index.floor() as usize).min(n - 1);
        (virtual_index, previous)
    };
    let (low_virtual, low_previous) = index(low);
    let (high_virtual, high_previous) = index(high);
    let (_, &mut low_value, above) = values.select_nth_unstable_by(low_previous, f64::total_cmp);
    let low_next = above.iter().copied().fold(f64::INFINITY, f64::min);
    let low_result = if low_previous + 1 >= n {
        low_value
    } else {
        lerp(low_value, low_next, low_virtual - low_previous as f64)
    };
    // Everything above `low_previous` is now in `values[low_previous + 1..]`.
    let high_value = if high_previous == low_previous {
        low_value
    } else {
        let offset = low_previous + 1;
        *values[offset..]
            .select_nth_unstable_by(high_previous - offset, f64::total_cmp)
            .1
    };
    let high_result = if high_previous + 1 >= n {
        high_value
    } else {
        let high_next = values[high_previous + 1..]
            .iter()
            .copied()
            .fold(f64::INFINITY, f64::min);
        lerp(high_value, high_next, high_virtual - high_previous as f64)
    };
    Some((low_result, high_result))
}

/// NumPy's `_lerp`: computed from the nearer end so that it is monotonic and exact at the ends.
fn lerp(a: f64, b: f64, t: f64) -> f64 {
    let diff = b - a;
    if t >= 0.5 {
        b - diff * (1.0 - t)
    } else {
        a + diff * t
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn matches_numpy_on_small_arrays() {
        // np.percentile([3, 1, 4, 1, 5], 70) == 3.8
        let mut values = vec![3.0, 1.0, 4.0, 1.0, 5.0];
        assert!((percentile_linear(&mut values, 70.0).unwrap() - 3.8).abs() < 1e-12);
        // np.percentile(np.arange(10.0), 70) == 6.3
        let mut values: Vec<f64> = (0..10).rev().map(f64::from).collect();
        assert!((percentile_linear(&mut values, 70.0).unwrap() - 6.3).abs() < 1e-12);
        let mut one = vec![2.5];
        assert_eq!(percentile_linear(&mut one, 70.0), Some(2.5));
        assert_eq!(percentile_linear(&mut [], 70.0), None);
    }

    #[test]
    fn a_pair_equals_two_single_percentiles() {
        // A small xorshift generator: `grid` sits below `field`, whose NumPy generator it
        // does not import.
        let mut state = 0x9E37_79B9_7F4A_7C15_u64;
        let mut next_f64 = || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            (state >> 11) as f64 / (1u64 << 53) as f64
        };
        for n in [1usize, 2, 3, 10, 101, 1000] {
            let values: Vec<f64> = (0..n).map(|_| next_f64() - 0.5).collect();
            for (low, high) in [
                (5.0, 95.0),
                (0.0, 100.0),
                (30.0, 30.0),
                (70.0, 71.0),
                (99.9, 100.0),
            ] {
                let single = |q| percentile_linear(&mut values.clone(), q).unwrap();
                let pair = percentile_pair_linear(&mut values.clone(), low, high).unwrap();
                assert_eq!(pair, (single(low), single(high)), "n={n} q=({low},{high})");
            }
        }
        assert_eq!(percentile_pair_linear(&mut [], 5.0, 95.0), None);
    }

    #[test]
    fn ends_are_exact() {
        let mut values = vec![5.0, -2.0, 7.5];
        assert_eq!(percentile_linear(&mut values, 0.0), Some(-2.0));
        assert_eq!(percentile_linear(&mut values, 100.0), Some(7.5));
    }
}
