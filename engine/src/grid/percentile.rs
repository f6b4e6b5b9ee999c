//! `np.percentile(a, q)` with NumPy's default (linear) method, in O(n) by selection.

/// Where NumPy's linear percentile of `n` values falls: between the order statistics at
/// `previous_index` and `next_index`, a fraction `gamma` of the way (see [`interpolate`]).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct LinearRanks {
    /// The lower order statistic's rank (0-based).
    pub previous_index: usize,
    /// The upper one's: `previous_index + 1`, or `previous_index` at the top.
    pub next_index: usize,
    /// How far between them.
    pub gamma: f64,
}

impl LinearRanks {
    /// The ranks of the `q`-th percentile (0..=100) of `n >= 1` values.
    pub fn of(n: usize, q: f64) -> Self {
        let virtual_index = (q / 100.0) * (n - 1) as f64;
        let previous_index = (virtual_index.floor() as usize).min(n - 1);
        Self {
            previous_index,
            next_index: (previous_index + 1).min(n - 1),
            gamma: virtual_index - previous_index as f64,
        }
    }
}

/// The `q`-th percentile (0..=100) of `values` as NumPy computes it for float64 data.
/// Returns `None` for an empty slice. `values` is reordered.
pub fn percentile_linear(values: &mut [f64], q: f64) -> Option<f64> {
    let n = values.len();
    if n == 0 {
        return None;
    }
    let LinearRanks {
        previous_index,
        next_index,
        gamma,
    } = LinearRanks::of(n, q);
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
    let (low_ranks, high_ranks) = (LinearRanks::of(n, low), LinearRanks::of(n, high));
    let (low_previous, high_previous) = (low_ranks.previous_index, high_ranks.previous_index);
    let (_, &mut low_value, above) = values.select_nth_unstable_by(low_previous, f64::total_cmp);
    let low_next = above.iter().copied().fold(f64::INFINITY, f64::min);
    let low_result = if low_previous + 1 >= n {
        low_value
    } else {
        lerp(low_value, low_next, low_ranks.gamma)
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
        lerp(high_value, high_next, high_ranks.gamma)
    };
    Some((low_result, high_result))
}

/// Two percentiles `low <= high` (0..=100) of the finite values among `values`, equal bit for
/// bit to [`percentile_pair_linear`] on those values widened to f64, without copying or
/// reordering them: the four order statistics it needs are found by a radix select on the
/// values' total-order keys. A histogram of the upper 11 bits (small enough to stay in the
/// first-level cache) locates the bucket of each wanted rank; the keys of those few buckets
/// are collected and the ranks selected among them. Both passes run on rayon's threads in
/// chunks. About 10x faster than copying and selecting on a display-sized Laplacian.
/// Returns `None` when no value is finite.
pub fn percentile_pair_finite_f32(values: &[f32], low: f64, high: f64) -> Option<(f64, f64)> {
    let (low, high) = (low.min(high), low.max(high));
    let histogram = bucket_histogram(values);
    let n: usize = histogram.iter().map(|&c| c as usize).sum();
    if n == 0 {
        return None;
    }
    let (low_ranks, high_ranks) = (LinearRanks::of(n, low), LinearRanks::of(n, high));
    let (low_previous, high_previous) = (low_ranks.previous_index, high_ranks.previous_index);
    let ranks = [
        low_previous,
        low_ranks.next_index,
        high_previous,
        high_ranks.next_index,
    ];
    // The bucket of each rank, and the rank within it.
    let mut located = [(0u32, 0usize); 4];
    for (slot, &rank) in located.iter_mut().zip(&ranks) {
        let mut before = 0usize;
        for (bucket, &count) in histogram.iter().enumerate() {
            let count = count as usize;
            if rank < before + count {
                *slot = (bucket as u32, rank - before);
                break;
            }
            before += count;
        }
    }
    let mut wanted: Vec<u32> = located.iter().map(|&(bucket, _)| bucket).collect();
    wanted.sort_unstable();
    wanted.dedup();
    let mut candidates = bucket_keys(values, &wanted);
    let mut keys = [0u32; 4];
    for (slot, &(bucket, within)) in keys.iter_mut().zip(&located) {
        let Ok(list) = wanted.binary_search(&bucket) else {
            return None;
        };
        let list = &mut candidates[list];
        *slot = *list.select_nth_unstable(within).1;
    }
    let value = |slot: usize| f64::from(from_order_key(keys[slot]));
    let low_result = if low_previous + 1 >= n {
        value(0)
    } else {
        lerp(value(0), value(1), low_ranks.gamma)
    };
    let high_result = if high_previous + 1 >= n {
        value(2)
    } else {
        lerp(value(2), value(3), high_ranks.gamma)
    };
    Some((low_result, high_result))
}

/// Bits of the order key that pick a bucket of the radix select.
const BUCKET_BITS: u32 = 11;
/// The shift that leaves a key's bucket.
const BUCKET_SHIFT: u32 = 32 - BUCKET_BITS;
/// Values per chunk of rayon's work.
const SELECT_CHUNK: usize = 1 << 15;

/// How many finite values fall in each bucket of the upper [`BUCKET_BITS`] of their keys.
fn bucket_histogram(values: &[f32]) -> Vec<u32> {
    use rayon::prelude::*;
    values
        .par_chunks(SELECT_CHUNK)
        .map(|chunk| {
            // Neighbouring values of a smooth field fall in the same bucket: four counters per
            // bucket, one per position modulo four, so that consecutive increments do not wait
            // for each other. A chunk of 2^15 values puts at most 2^13 in one counter.
            let mut counts = vec![[0u16; 4]; 1 << BUCKET_BITS];
            let mut quads = chunk.chunks_exact(4);
            for quad in &mut quads {
                for (lane, &v) in quad.iter().enumerate() {
                    let bucket = (order_key(v) >> BUCKET_SHIFT) as usize;
                    counts[bucket][lane] += u16::from(v.is_finite());
                }
            }
            let mut total: Vec<u32> = counts
                .iter()
                .map(|lanes| lanes.iter().map(|&c| u32::from(c)).sum())
                .collect();
            for &v in quads.remainder() {
                total[(order_key(v) >> BUCKET_SHIFT) as usize] += u32::from(v.is_finite());
            }
            total
        })
        .reduce(
            || vec![0u32; 1 << BUCKET_BITS],
            |mut total, counts| {
                total.iter_mut().zip(&counts).for_each(|(t, c)| *t += c);
                total
            },
        )
}

/// The keys of the values in the `wanted` buckets (sorted, at most four), one list per bucket.
fn bucket_keys(values: &[f32], wanted: &[u32]) -> Vec<Vec<u32>> {
    use rayon::prelude::*;
    // Each bucket's list among the wanted ones (NOT_WANTED for the others): one load per value
    // and a branch that is almost never taken, where a search among the wanted buckets took a
    // mispredicted branch for about every other value.
    const NOT_WANTED: u8 = u8::MAX;
    let mut list_of_bucket = vec![NOT_WANTED; 1 << BUCKET_BITS];
    for (list, &bucket) in wanted.iter().enumerate() {
        list_of_bucket[bucket as usize] = list as u8;
    }
    // A wanted bucket holds finite values only (infinities and NaN have the exponent no finite
    // value has), so no check is needed.
    values
        .par_chunks(SELECT_CHUNK)
        .map(|chunk| {
            let mut lists = vec![Vec::new(); wanted.len()];
            for &v in chunk {
                let key = order_key(v);
                let list = list_of_bucket[(key >> BUCKET_SHIFT) as usize];
                if list != NOT_WANTED {
                    lists[usize::from(list)].push(key);
                }
            }
            lists
        })
        .reduce(
            || vec![Vec::new(); wanted.len()],
            |mut all, lists| {
                all.iter_mut().zip(lists).for_each(|(a, l)| a.extend(l));
                all
            },
        )
}

/// A key whose unsigned order is `f32::total_cmp`'s order: negative values have all their
/// bits flipped, the others only the sign bit. Computed without a branch: the signs of a
/// Laplacian are as good as random, and a mispredicted branch per value cost more than the
/// rest of the histogram.
fn order_key(value: f32) -> u32 {
    let bits = value.to_bits();
    // All ones for a negative value (an arithmetic shift copies the sign bit), else zero.
    let negative = ((bits as i32) >> 31) as u32;
    bits ^ (negative | 0x8000_0000)
}

/// The value of an [`order_key`].
fn from_order_key(key: u32) -> f32 {
    if key >> 31 == 1 {
        f32::from_bits(key & 0x7FFF_FFFF)
    } else {
        f32::from_bits(!key)
    }
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
    fn the_radix_select_equals_the_f64_selection_bit_for_bit() {
        let mut state = 0x2545_F491_4F6C_DD1D_u64;
        let mut next = || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state
        };
        let specials = [
            f32::NAN,
            f32::INFINITY,
            f32::NEG_INFINITY,
            -0.0,
            0.0,
            f32::MIN_POSITIVE,
            -f32::MAX,
        ];
        for n in [1usize, 2, 3, 7, 100, 1000, 65_537, 262_144] {
            for kind in 0..4 {
                let values: Vec<f32> = (0..n)
                    .map(|i| {
                        let r = next();
                        match kind {
                            // Spread over many exponents.
                            0 => f32::from_bits((r >> 32) as u32 & 0xBF7F_FFFF),
                            // Clustered: one bucket of the first level holds most of them.
                            1 => 0.5 + (r >> 40) as f32 / (1u64 << 26) as f32,
                            // Few distinct values.
                            2 => (r % 5) as f32 - 2.0,
                            // Specials mixed in.
                            _ if i % 9 == 0 => specials[(r % 7) as usize],
                            _ => (r >> 40) as f32 / (1u64 << 20) as f32 - 4.0,
                        }
                    })
                    .collect();
                let mut widened: Vec<f64> = values
                    .iter()
                    .filter(|v| v.is_finite())
                    .map(|&v| f64::from(v))
                    .collect();
                for (low, high) in [(5.0, 95.0), (0.0, 100.0), (30.0, 30.0), (99.9, 100.0)] {
                    let expected = percentile_pair_linear(&mut widened, low, high);
                    let fast = percentile_pair_finite_f32(&values, low, high);
                    let bits =
                        |pair: Option<(f64, f64)>| pair.map(|(a, b)| (a.to_bits(), b.to_bits()));
                    assert_eq!(
                        bits(fast),
                        bits(expected),
                        "n={n} kind={kind} q=({low},{high})"
                    );
                }
            }
        }
        assert_eq!(percentile_pair_finite_f32(&[f32::NAN], 5.0, 95.0), None);
    }

    #[test]
    fn order_keys_sort_as_total_cmp() {
        let mut values: Vec<f32> = (0..100_000u32)
            .map(|i| f32::from_bits(i.wrapping_mul(2_654_435_761)))
            .collect();
        values.extend([
            0.0,
            -0.0,
            f32::INFINITY,
            f32::NEG_INFINITY,
            f32::NAN,
            -f32::NAN,
        ]);
        for &v in &values {
            assert_eq!(from_order_key(order_key(v)).to_bits(), v.to_bits());
        }
        let mut by_key = values.clone();
        by_key.sort_by_key(|&v| order_key(v));
        values.sort_by(f32::total_cmp);
        let bits = |v: &[f32]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
        assert_eq!(bits(&by_key), bits(&values));
    }

    #[test]
    fn ends_are_exact() {
        let mut values = vec![5.0, -2.0, 7.5];
        assert_eq!(percentile_linear(&mut values, 0.0), Some(-2.0));
        assert_eq!(percentile_linear(&mut values, 100.0), Some(7.5));
    }
}
