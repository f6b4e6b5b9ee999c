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
    fn ends_are_exact() {
        let mut values = vec![5.0, -2.0, 7.5];
        assert_eq!(percentile_linear(&mut values, 0.0), Some(-2.0));
        assert_eq!(percentile_linear(&mut values, 100.0), Some(7.5));
    }
}
