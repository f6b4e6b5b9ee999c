//! Monte Carlo pi (seed `001_...`): the fraction of random points of the unit square that fall
//! inside the quarter circle, times 4, over billions of samples and no sample array.
//!
//! The generator is MWC64X (D. B. Thomas, "The MWC64X Random Number Generator", 2011,
//! <http://cas.ee.ic.ac.uk/people/dt10/research/rngs-gpu-mwc64x.html>): a multiply-with-carry
//! generator with 32-bit `x` and `c`, multiplier `A = 4294883355` and output `x ^ c`, which its
//! author reports to pass TestU01's BigCrush; its period is `(M - 1) / 2`, about 2^63, with
//! `M = A * 2^32 - 1` (see [`Mwc64x`]). The sequence of a seed starts at SplitMix64 of the seed
//! ([`Mwc64x::from_seed`]); sample `j` takes its words `2j` (x) and `2j + 1` (y). Any part of it
//! is reached in O(log n) steps, since the state `(x, c)` stands for `w = A x + c` and one step
//! is `w -> A w mod M`, so any split of the work over threads (CPU or GPU) draws the same
//! samples. A coordinate is the top 24 bits of its word, `X / 2^24`, and a point is inside when
//! `X^2 + Y^2 < 2^48`, which is exactly `x^2 + y^2 < 1` for those float32 coordinates. The CPU
//! and the GPU agree exactly.
//!
//! Earlier generators, kept with their known-answer tests: Philox4x32-10 ([`philox4x32_10`],
//! runs recorded before 2026-11-23) and PCG32 ([`Pcg32`], seeded `pcg32_srandom_r(seed, 54)`,
//! runs of 2026-11-23); counts of those runs differ from today's for the same seed. MWC64X
//! replaced PCG32 because a PCG32 word costs a 64 x 64-bit multiply-add plus its output
//! permutation (30 GPU instructions per sample, 0.78e12 samples a second on an H100) where an
//! MWC64X word is one 32 x 32 -> 64-bit multiply-add and an xor (13 to 15.5 per sample; the
//! kernel's comment in `kernels/tutorial.cu` has the instruction counts).

use std::time::Duration;

use rayon::prelude::*;

use super::{
    time_cpu_versions, CpuThreads, KernelRun, KernelSummary, KernelTimings, PhaseProgress,
    RunControl, RunOptions, TutorialGpu, TutorialKernel,
};
use crate::error::{HeatlabError, Result};

mod gpu_runner;
pub use gpu_runner::count_inside_range_gpu;
use gpu_runner::run_gpu;

const PHILOX_M0: u32 = 0xD251_1F53;
const PHILOX_M1: u32 = 0xCD9E_8D57;
const PHILOX_W0: u32 = 0x9E37_79B9;
const PHILOX_W1: u32 = 0xBB67_AE85;

/// Samples per chunk of CPU work.
const CPU_PI_CHUNK: u64 = 1 << 16;
/// Samples per GPU launch: long runs are split so that they can be cancelled and report
/// progress; a few hundredths of a second on an H100. The kernel needs at most 2^35.
const GPU_PI_CHUNK: u64 = 1 << 35;
/// Points kept for the scatter plot.
pub const SCATTER_POINTS: usize = 4000;

/// Philox4x32-10: ten rounds of the Random123 bijection of `counter` under `key` (the generator
/// of runs recorded before 2026-11-23).
pub fn philox4x32_10(counter: [u32; 4], key: [u32; 2]) -> [u32; 4] {
    let mulhilo = |a: u32, b: u32| {
        let product = u64::from(a) * u64::from(b);
        ((product >> 32) as u32, product as u32)
    };
    let mut ctr = counter;
    let mut key = key;
    for _ in 0..10 {
        let (hi0, lo0) = mulhilo(PHILOX_M0, ctr[0]);
        let (hi1, lo1) = mulhilo(PHILOX_M1, ctr[2]);
        ctr = [hi1 ^ ctr[1] ^ key[0], lo1, hi0 ^ ctr[3] ^ key[1], lo0];
        key = [
            key[0].wrapping_add(PHILOX_W0),
            key[1].wrapping_add(PHILOX_W1),
        ];
    }
    ctr
}

/// The multiplier of PCG32's LCG.
pub const PCG_MULTIPLIER: u64 = 6_364_136_223_846_793_005;
/// The sequence selector of the Monte Carlo samples of 2026-11-23: the one of `pcg32-demo.c`,
/// so that seed 42 gives that demo's first numbers.
pub const PCG_STREAM: u64 = 54;

/// PCG32 (XSH RR 64/32), as `pcg_basic.c`: a 64-bit LCG whose state is permuted into each
/// 32-bit output (the generator of the runs of 2026-11-23).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Pcg32 {
    state: u64,
    increment: u64,
}

impl Pcg32 {
    /// `pcg32_srandom_r(initstate, initseq)`.
    pub fn new(initstate: u64, initseq: u64) -> Self {
        let mut generator = Self {
            state: 0,
            increment: (initseq << 1) | 1,
        };
        generator.next_u32();
        generator.state = generator.state.wrapping_add(initstate);
        generator.next_u32();
        generator
    }

    /// The next output (`pcg32_random_r`).
    pub fn next_u32(&mut self) -> u32 {
        let old = self.state;
        self.state = old
            .wrapping_mul(PCG_MULTIPLIER)
            .wrapping_add(self.increment);
        let xorshifted = (((old >> 18) ^ old) >> 27) as u32;
        xorshifted.rotate_right((old >> 59) as u32)
    }

    /// Skips `delta` outputs in O(log delta) steps (`pcg32_advance_r`); the period is 2^64, so
    /// `delta` counts modulo 2^64.
    pub fn advance(&mut self, delta: u64) {
        let (multiplier, plus) = crate::field::numpy_rng::lcg_jump(
            u128::from(PCG_MULTIPLIER),
            u128::from(self.increment),
            delta,
        );
        // The jump modulo 2^128 taken modulo 2^64 is the jump of the 64-bit LCG.
        self.state = (multiplier as u64)
            .wrapping_mul(self.state)
            .wrapping_add(plus as u64);
    }
}

/// The multiplier of MWC64X (`MWC_A` in `kernels/tutorial.cu`).
pub const MWC64X_A: u32 = 4_294_883_355;
/// `A * 2^32 - 1`, prime, as is `(M - 1) / 2` (`MWC_M` in `kernels/tutorial.cu`).
pub const MWC64X_M: u64 = ((MWC64X_A as u64) << 32) - 1;
/// The period of MWC64X: the order of `A` modulo `M`, which is `(M - 1) / 2` (a test checks it).
pub const MWC64X_PERIOD: u64 = (MWC64X_M - 1) / 2;
/// `-M^-1 mod 2^64`, for the Montgomery products of the GPU's jump (`MWC_M_NEG_INV`).
const MWC64X_M_NEG_INV: u64 = inverse_mod_2_64(MWC64X_M).wrapping_neg();

/// `a^-1 mod 2^64` for odd `a` (Newton's iteration, each step doubling the correct bits).
const fn inverse_mod_2_64(a: u64) -> u64 {
    let mut inverse = a; // correct to 3 bits for odd a
    let mut step = 0;
    while step < 5 {
        inverse = inverse.wrapping_mul(2u64.wrapping_sub(a.wrapping_mul(inverse)));
        step += 1;
    }
    inverse
}

/// `a * b mod M`.
fn mul_mod_m(a: u64, b: u64) -> u64 {
    ((u128::from(a) * u128::from(b)) % u128::from(MWC64X_M)) as u64
}

/// `A^exponent mod M`, by squaring.
fn power_of_a(exponent: u64) -> u64 {
    let (mut power, mut square, mut exponent) = (1u64, u64::from(MWC64X_A), exponent);
    while exponent > 0 {
        if exponent & 1 == 1 {
            power = mul_mod_m(power, square);
        }
        square = mul_mod_m(square, square);
        exponent >>= 1;
    }
    power
}

/// `a * b * 2^-64 mod M` for `a, b < M`: the Montgomery product of the GPU's jump
/// (`mwc_montgomery` in `kernels/tutorial.cu`), step for step.
pub fn mwc64x_montgomery(a: u64, b: u64) -> u64 {
    let product = u128::from(a) * u128::from(b);
    let (low, high) = (product as u64, (product >> 64) as u64);
    let m = low.wrapping_mul(MWC64X_M_NEG_INV);
    let m_high = ((u128::from(m) * u128::from(MWC64X_M)) >> 64) as u64;
    let (sum, overflow_1) = high.overflowing_add(m_high);
    let (total, overflow_2) = sum.overflowing_add(u64::from(low != 0));
    if overflow_1 || overflow_2 || total >= MWC64X_M {
        total.wrapping_sub(MWC64X_M)
    } else {
        total
    }
}

/// The GPU's jump table (`mwc_jump_table` in `kernels/tutorial.cu`): `A^(2^k) * 2^64 mod M`,
/// the Montgomery form of `A^(2^k)`, for k = 0..63.
pub fn mwc64x_jump_table() -> [u64; 64] {
    let two_64_mod_m = ((1u128 << 64) % u128::from(MWC64X_M)) as u64;
    let mut table = [0u64; 64];
    let mut power = u64::from(MWC64X_A); // A^(2^k)
    for entry in &mut table {
        *entry = mul_mod_m(power, two_64_mod_m);
        power = mul_mod_m(power, power);
    }
    table
}

/// The residue `delta` words after `w`, the way the GPU computes it (`mwc64x_jump`): one
/// Montgomery product with the table's `A^(2^k)` per set bit of `delta`. The CPU's own
/// [`Mwc64x::advance`] computes `A^delta` directly; the tests check that both agree.
pub fn mwc64x_jump_like_the_gpu(w: u64, delta: u64) -> u64 {
    let table = mwc64x_jump_table();
    let (mut w, mut delta) = (w, delta);
    for entry in table {
        if delta == 0 {
            break;
        }
        if delta & 1 == 1 {
            w = mwc64x_montgomery(w, entry);
        }
        delta >>= 1;
    }
    w
}

/// SplitMix64's output for `seed` (G. L. Steele, D. Lea, C. H. Flood, "Fast splittable
/// pseudorandom number generators", OOPSLA 2014; the constants of Vigna's `splitmix64.c`).
pub fn splitmix64(seed: u64) -> u64 {
    let mut z = seed.wrapping_add(0x9e37_79b9_7f4a_7c15);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// MWC64X (D. B. Thomas, 2011): the multiply-with-carry step `t = A x + c`, `x = t mod 2^32`,
/// `c = t / 2^32`, output `x ^ c` before the step. The state stands for the residue
/// `w = A x + c` in `[1, M - 1]`, and a step is `w -> A w mod M`, so the period is the order of
/// `A` modulo `M`: [`MWC64X_PERIOD`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Mwc64x {
    x: u32,
    c: u32,
}

impl Mwc64x {
    /// The generator at residue `w` (in `[1, M - 1]`): `x = w / A`, `c = w mod A`.
    pub fn from_residue(w: u64) -> Self {
        let a = u64::from(MWC64X_A);
        Self {
            x: (w / a) as u32,
            c: (w % a) as u32,
        }
    }

    /// The sequence of `seed` (`mwc64x_start` in `kernels/tutorial.cu`): the residue is
    /// SplitMix64 of the seed reduced into `[0, M - 2]` (one subtraction, since
    /// `2 (M - 1) > 2^64`), plus one, so never 0 (a fixed point) and every seed valid.
    pub fn from_seed(seed: u64) -> Self {
        let z = splitmix64(seed);
        let reduced = if z >= MWC64X_M - 1 {
            z - (MWC64X_M - 1)
        } else {
            z
        };
        Self::from_residue(reduced + 1)
    }

    /// The residue `A x + c` that the state stands for.
    pub fn residue(&self) -> u64 {
        u64::from(MWC64X_A) * u64::from(self.x) + u64::from(self.c)
    }

    /// The next output, `x ^ c`, and one step.
    pub fn next_u32(&mut self) -> u32 {
        let word = self.x ^ self.c;
        let t = u64::from(MWC64X_A) * u64::from(self.x) + u64::from(self.c);
        self.x = t as u32;
        self.c = (t >> 32) as u32;
        word
    }

    /// Skips `delta` outputs in O(log delta) steps: the residue times `A^delta` modulo `M`.
    pub fn advance(&mut self, delta: u64) {
        *self = Self::from_residue(mul_mod_m(self.residue(), power_of_a(delta)));
    }
}

/// The generator of the samples of `seed`, positioned at sample `first` (output `2 first`,
/// modulo 2^64 as on the GPU).
fn samples_from(seed: u64, first: u64) -> Mwc64x {
    let mut generator = Mwc64x::from_seed(seed);
    generator.advance(first.wrapping_mul(2));
    generator
}

fn inside_quarter_circle(word_x: u32, word_y: u32) -> bool {
    let x = u64::from(word_x >> 8);
    let y = u64::from(word_y >> 8);
    x * x + y * y < 1 << 48
}

/// Samples `[first_sample, first_sample + sample_count)` inside the quarter circle, counted on
/// the calling thread.
pub fn count_inside_range(seed: u64, first_sample: u64, sample_count: u64) -> u64 {
    let mut generator = samples_from(seed, first_sample);
    let mut count = 0;
    for _ in 0..sample_count {
        let word_x = generator.next_u32();
        let word_y = generator.next_u32();
        count += u64::from(inside_quarter_circle(word_x, word_y));
    }
    count
}

/// Samples among the first `n` inside the quarter circle, on one thread or all, in chunks
/// that check the cancel flag and report progress.
pub fn count_inside_cpu(
    n: u64,
    seed: u64,
    threads: CpuThreads,
    control: RunControl<'_>,
) -> Result<u64> {
    let progress = PhaseProgress::new(control, threads.phase(), n);
    let chunks = n.div_ceil(CPU_PI_CHUNK);
    let chunk = |index: u64| -> Result<u64> {
        progress.check()?;
        let first = index * CPU_PI_CHUNK;
        let count = CPU_PI_CHUNK.min(n - first);
        let inside = count_inside_range(seed, first, count);
        progress.advance(count);
        Ok(inside)
    };
    match threads {
        CpuThreads::One => (0..chunks).map(chunk).sum(),
        CpuThreads::All => (0..chunks).into_par_iter().map(chunk).sum(),
    }
}

/// One sample point for the scatter plot.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct PiPoint {
    /// x in [0, 1).
    pub x: f32,
    /// y in [0, 1).
    pub y: f32,
    /// Whether the point counts as inside the quarter circle.
    pub inside: bool,
}

/// The first `count` sample points of `seed`, the very points the count starts with.
pub fn first_points(seed: u64, count: usize) -> Vec<PiPoint> {
    const SCALE: f32 = 1.0 / 16_777_216.0;
    let point = |word_x: u32, word_y: u32| PiPoint {
        x: (word_x >> 8) as f32 * SCALE,
        y: (word_y >> 8) as f32 * SCALE,
        inside: inside_quarter_circle(word_x, word_y),
    };
    let mut generator = samples_from(seed, 0);
    (0..count)
        .map(|_| {
            let word_x = generator.next_u32();
            let word_y = generator.next_u32();
            point(word_x, word_y)
        })
        .collect()
}

/// The estimate of pi from a count.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct PiEstimate {
    /// Samples inside the quarter circle.
    pub inside: u64,
    /// Samples drawn.
    pub samples: u64,
    /// `4 * inside / samples`.
    pub estimate: f64,
    /// Its standard error, `4 * sqrt(p (1 - p) / n)` with `p = inside / samples`.
    pub standard_error: f64,
    /// `estimate - pi`.
    pub error: f64,
}

impl PiEstimate {
    /// The estimate from `inside` of `samples`.
    pub fn new(inside: u64, samples: u64) -> Self {
        let n = samples.max(1) as f64;
        let p = inside as f64 / n;
        let estimate = 4.0 * p;
        Self {
            inside,
            samples,
            estimate,
            standard_error: 4.0 * (p * (1.0 - p) / n).sqrt(),
            error: estimate - std::f64::consts::PI,
        }
    }
}

/// A Monte Carlo pi run: the estimate, the first points for a scatter plot, and the report.
#[derive(Debug, Clone)]
pub struct PiOutput {
    /// The estimate (the GPU's count when the GPU ran; the CPU's is the same).
    pub estimate: PiEstimate,
    /// The first [`SCATTER_POINTS`] samples (fewer when n is smaller).
    pub points: Vec<PiPoint>,
    /// Timings, agreement and summary.
    pub run: KernelRun,
}

/// Runs the CPU versions that `options.cpu` asks for and, with a GPU, the GPU counts,
/// `options.repeats` times each. Nothing of size n is stored anywhere.
pub fn run(
    options: &RunOptions,
    gpu: Option<&TutorialGpu>,
    control: RunControl<'_>,
) -> Result<PiOutput> {
    options.validate()?;
    let cpu_runs = options.cpu.one_thread() || options.cpu.all_threads();
    if !cpu_runs && gpu.is_none() {
        return Err(HeatlabError::InvalidInput(
            "nothing to run: no GPU and the CPU runs are skipped".into(),
        ));
    }
    let mut timings = KernelTimings::none(rayon::current_num_threads());
    let cpu_count = time_cpu_versions(options, &mut timings, |threads| {
        count_inside_cpu(options.n, options.seed, threads, control)
    })?;

    let mut gpu_count = None;
    let mut gpu_name = None;
    if let Some(gpu) = gpu {
        gpu_count = Some(run_gpu(gpu, options, control, &mut timings)?);
        gpu_name = Some(gpu.name().to_string());
    }
    let difference = match (gpu_count, cpu_count) {
        (Some(gpu), Some(cpu)) => Some(gpu.abs_diff(cpu) as f64),
        _ => None,
    };
    let inside = gpu_count.or(cpu_count).unwrap_or(0);
    let estimate = PiEstimate::new(inside, options.n);
    let scatter = usize::try_from(options.n).map_or(SCATTER_POINTS, |n| n.min(SCATTER_POINTS));
    let run = KernelRun {
        kernel: TutorialKernel::MonteCarloPi,
        n: options.n,
        seed: options.seed,
        repeats: options.repeats,
        gpu: gpu_name,
        result: KernelSummary::MonteCarloPi(estimate),
        timings,
        max_abs_difference_gpu_cpu: difference,
        transfer_bytes: 16,
        gpu_kernel: gpu.map(|gpu| gpu.monte_carlo_pi_kernel().to_string()),
    };
    Ok(PiOutput {
        estimate,
        points: first_points(options.seed, scatter),
        run,
    })
}

/// Seconds per sample on one CPU thread, measured on 65536 samples: a quick figure for
/// warning before a one-thread run of billions of samples.
pub fn estimate_cpu_seconds_per_sample() -> Duration {
    let started = std::time::Instant::now();
    let count = count_inside_range(0, 0, 1 << 16);
    std::hint::black_box(count);
    started.elapsed() / (1 << 16)
}

#[cfg(test)]
mod tests;
