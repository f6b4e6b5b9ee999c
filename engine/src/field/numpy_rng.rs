//! NumPy's default generator, bit for bit: `np.random.default_rng(seed).random(shape, dtype=np.float32)`.
//!
//! `default_rng(seed)` is PCG64 seeded through `SeedSequence(seed)`. The 128-bit LCG and its
//! XSL-RR output are `rand_pcg::Pcg64`; the SeedSequence hashing is written out here because no
//! crate reproduces it. Constants and structure follow NumPy's `bit_generator.pyx`.

use rand_core::Rng;
use rand_pcg::Pcg64;

const INIT_A: u32 = 0x43b0_d7e5;
const MULT_A: u32 = 0x931e_8875;
const INIT_B: u32 = 0x8b51_f9dd;
const MULT_B: u32 = 0x58f3_8ded;
const MIX_MULT_L: u32 = 0xca01_f9dd;
const MIX_MULT_R: u32 = 0x4973_f715;
const XSHIFT: u32 = 16;
const POOL_SIZE: usize = 4;

/// NumPy's `SeedSequence` for an integer seed with no spawn key.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SeedSequence {
    pool: [u32; POOL_SIZE],
}

fn hashmix(value: u32, hash_const: &mut u32) -> u32 {
    let mut value = value ^ *hash_const;
    *hash_const = hash_const.wrapping_mul(MULT_A);
    value = value.wrapping_mul(*hash_const);
    value ^ (value >> XSHIFT)
}

fn mix(x: u32, y: u32) -> u32 {
    let result = MIX_MULT_L
        .wrapping_mul(x)
        .wrapping_sub(MIX_MULT_R.wrapping_mul(y));
    result ^ (result >> XSHIFT)
}

impl SeedSequence {
    /// Mixes `seed` into the entropy pool exactly as `np.random.SeedSequence(seed)` does.
    pub fn new(seed: u64) -> Self {
        // An integer seed becomes its 32-bit words, least significant first ([0] for zero).
        let mut entropy = vec![seed as u32];
        if seed >> 32 != 0 {
            entropy.push((seed >> 32) as u32);
        }
        let mut hash_const = INIT_A;
        let mut pool = [0u32; POOL_SIZE];
        for (i, slot) in pool.iter_mut().enumerate() {
            let word = entropy.get(i).copied().unwrap_or(0);
            *slot = hashmix(word, &mut hash_const);
        }
        for i_src in 0..POOL_SIZE {
            for i_dst in 0..POOL_SIZE {
                if i_src != i_dst {
                    let hashed = hashmix(pool[i_src], &mut hash_const);
                    pool[i_dst] = mix(pool[i_dst], hashed);
                }
            }
        }
        for &word in entropy.iter().skip(POOL_SIZE) {
            for slot in pool.iter_mut() {
                let hashed = hashmix(word, &mut hash_const);
                *slot = mix(*slot, hashed);
            }
        }
        Self { pool }
    }

    /// The mixed entropy pool (NumPy's `SeedSequence.pool`).
    pub fn pool(&self) -> [u32; POOL_SIZE] {
        self.pool
    }

    /// `generate_state(n_words, np.uint64)`: 32-bit words paired little-endian.
    pub fn generate_state_u64(&self, n_words: usize) -> Vec<u64> {
        let mut hash_const = INIT_B;
        let words: Vec<u32> = (0..n_words * 2)
            .map(|i| {
                let mut value = self.pool[i % POOL_SIZE] ^ hash_const;
                hash_const = hash_const.wrapping_mul(MULT_B);
                value = value.wrapping_mul(hash_const);
                value ^ (value >> XSHIFT)
            })
            .collect();
        words
            .chunks_exact(2)
            .map(|pair| u64::from(pair[0]) | (u64::from(pair[1]) << 32))
            .collect()
    }
}

/// PCG's default 128-bit multiplier (NumPy's `PCG_DEFAULT_MULTIPLIER_128`).
pub const PCG64_MULTIPLIER: u128 = 0x2360_ed05_1fc6_5da4_4385_df64_9fcc_f645;

/// The raw PCG64 stream of `np.random.default_rng(seed)`, for generators that draw it in
/// parallel (the GPU's): its 128-bit LCG state before the first draw, and its increment.
/// Draw `w` (counting from 0) is [`pcg64_output`] of the state `w + 1` steps after `state`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Pcg64Stream {
    /// The state before the first draw.
    pub state: u128,
    /// The LCG's increment (always odd).
    pub increment: u128,
}

impl Pcg64Stream {
    /// The stream of `np.random.default_rng(seed)`: NumPy's `pcg_setseq_128_srandom_r` (and
    /// `rand_pcg`'s `Pcg64::new`): from state 0, one step, add the initial state, one step.
    pub fn new(seed: u64) -> Self {
        let words = SeedSequence::new(seed).generate_state_u64(4);
        let init_state = (u128::from(words[0]) << 64) | u128::from(words[1]);
        let init_seq = (u128::from(words[2]) << 64) | u128::from(words[3]);
        let increment = (init_seq << 1) | 1;
        let state = increment
            .wrapping_add(init_state)
            .wrapping_mul(PCG64_MULTIPLIER)
            .wrapping_add(increment);
        Self { state, increment }
    }

    /// The affine map `state -> multiplier * state + plus` that advances the LCG by `delta`
    /// steps (F. B. Brown, "Random number generation with arbitrary strides", 1994).
    pub fn jump(&self, delta: u64) -> (u128, u128) {
        lcg_jump(PCG64_MULTIPLIER, self.increment, delta)
    }

    /// Draw `index` (the 64-bit output), computed by jumping rather than stepping.
    pub fn draw_at(&self, index: u64) -> u64 {
        let (multiplier, plus) = self.jump(index + 1);
        pcg64_output(multiplier.wrapping_mul(self.state).wrapping_add(plus))
    }
}

/// The affine map `state -> multiplier * state + plus` that advances the LCG
/// `state -> lcg_multiplier * state + increment` (modulo 2^128) by `delta` steps, in O(log delta)
/// (F. B. Brown, "Random number generation with arbitrary strides", 1994). Reduction modulo 2^k
/// commutes with sums and products, so the low 64 bits of the map are the jump of the same LCG
/// modulo 2^64 (PCG32's).
pub fn lcg_jump(lcg_multiplier: u128, increment: u128, delta: u64) -> (u128, u128) {
    let (mut multiplier, mut plus) = (lcg_multiplier, increment);
    let (mut acc_multiplier, mut acc_plus) = (1u128, 0u128);
    let mut delta = delta;
    while delta > 0 {
        if delta & 1 == 1 {
            acc_multiplier = acc_multiplier.wrapping_mul(multiplier);
            acc_plus = acc_plus.wrapping_mul(multiplier).wrapping_add(plus);
        }
        plus = multiplier.wrapping_add(1).wrapping_mul(plus);
        multiplier = multiplier.wrapping_mul(multiplier);
        delta >>= 1;
    }
    (acc_multiplier, acc_plus)
}

/// PCG64's XSL RR output of a state: the two halves xored, rotated right by the top 6 bits.
pub fn pcg64_output(state: u128) -> u64 {
    let high = (state >> 64) as u64;
    let low = state as u64;
    (high ^ low).rotate_right((high >> 58) as u32)
}

/// `np.random.default_rng(seed)` restricted to what heatlab draws from it.
pub struct NumpyGenerator {
    pcg: Pcg64,
    /// NumPy's PCG64 hands out 32-bit values as the two halves of one 64-bit output,
    /// low half first; the high half waits here.
    buffered_high: Option<u32>,
}

impl NumpyGenerator {
    /// `np.random.default_rng(seed)`.
    pub fn new(seed: u64) -> Self {
        let state = SeedSequence::new(seed).generate_state_u64(4);
        let init_state = (u128::from(state[0]) << 64) | u128::from(state[1]);
        let init_seq = (u128::from(state[2]) << 64) | u128::from(state[3]);
        Self {
            pcg: Pcg64::new(init_state, init_seq),
            buffered_high: None,
        }
    }

    /// NumPy's `next_uint32`.
    pub fn next_u32(&mut self) -> u32 {
        if let Some(high) = self.buffered_high.take() {
            return high;
        }
        let next = self.pcg.next_u64();
        self.buffered_high = Some((next >> 32) as u32);
        next as u32
    }

    /// NumPy's `next_uint64`.
    pub fn next_u64(&mut self) -> u64 {
        self.pcg.next_u64()
    }

    /// One draw of `random(dtype=np.float32)`: 24 random bits scaled to [0, 1).
    pub fn next_f32(&mut self) -> f32 {
        (self.next_u32() >> 8) as f32 * (1.0 / 16_777_216.0)
    }

    /// One draw of `random()` (float64): 53 random bits scaled to [0, 1).
    pub fn next_f64(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 * (1.0 / 9_007_199_254_740_992.0)
    }

    /// `random(n, dtype=np.float32)`.
    pub fn random_f32(&mut self, n: usize) -> Vec<f32> {
        (0..n).map(|_| self.next_f32()).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn seed_sequence_pool_matches_numpy() {
        let pool = SeedSequence::new(3_966_789).pool();
        assert_eq!(pool, [0x42c1_4881, 0x32bd_c0f9, 0x5512_b93f, 0x18c4_b00e]);
    }

    #[test]
    fn jumping_gives_the_stepped_draws() {
        for seed in [0, 7, 3_966_789, u64::MAX] {
            let stream = Pcg64Stream::new(seed);
            let mut generator = NumpyGenerator::new(seed);
            let stepped: Vec<u64> = (0..1000).map(|_| generator.next_u64()).collect();
            for index in [0usize, 1, 2, 31, 32, 33, 500, 999] {
                assert_eq!(
                    stream.draw_at(index as u64),
                    stepped[index],
                    "seed {seed} draw {index}"
                );
            }
            // A jump by 37 composed with a jump by 5 is a jump by 42.
            let (m37, p37) = stream.jump(37);
            let (m5, p5) = stream.jump(5);
            let after_42 = m5
                .wrapping_mul(m37.wrapping_mul(stream.state).wrapping_add(p37))
                .wrapping_add(p5);
            assert_eq!(pcg64_output(after_42), stepped[41]);
        }
    }

    #[test]
    fn first_floats_match_numpy() {
        let mut generator = NumpyGenerator::new(3_966_789);
        let floats = generator.random_f32(3);
        assert_eq!(floats, vec![0.845_483_6, 0.812_550_54, 0.442_750_87]);
    }
}
