//! Tests of `tutorial/mc_pi.rs`.
use super::*;

/// Miller-Rabin with the first 12 primes as bases: exact for every n < 3.3e24.
fn is_prime(n: u64) -> bool {
    let n128 = u128::from(n);
    let pow_mod = |base: u64, exponent: u64| {
        let (mut result, mut square, mut e) = (1u128, u128::from(base) % n128, exponent);
        while e > 0 {
            if e & 1 == 1 {
                result = result * square % n128;
            }
            square = square * square % n128;
            e >>= 1;
        }
        result
    };
    if n < 2 {
        return false;
    }
    let bases = [2u64, 3, 5, 7, 11, 13, 17, 19, 23, 29, 31, 37];
    if bases.contains(&n) {
        return true;
    }
    let (mut d, mut s) = (n - 1, 0);
    while d % 2 == 0 {
        d /= 2;
        s += 1;
    }
    bases.iter().all(|&a| {
        let mut x = pow_mod(a, d);
        if x == 1 || x == n128 - 1 {
            return true;
        }
        for _ in 1..s {
            x = x * x % n128;
            if x == n128 - 1 {
                return true;
            }
        }
        false
    })
}

#[test]
fn mwc64x_constants_are_thomass_and_the_period_is_half_the_modulus() {
    assert_eq!(MWC64X_M, 18_446_383_549_859_758_079);
    assert!(is_prime(MWC64X_M) && is_prime(MWC64X_PERIOD));
    // The order of A divides M - 1 = 2 (M - 1) / 2; it is neither 1 nor 2, so it is the
    // period, (M - 1) / 2 (A is a square modulo M).
    assert_eq!(power_of_a(MWC64X_PERIOD), 1);
    assert_ne!(power_of_a(2), 1);
    assert_eq!(MWC64X_M.wrapping_mul(MWC64X_M_NEG_INV), u64::MAX);
}

#[test]
fn mwc64x_step_is_thomass_reference_step() {
    // mwc64x_rng.cl: Xn = A * X + C (32 bits); carry = Xn < C; Cn = mad_hi(A, X, carry).
    let mut generator = Mwc64x::from_seed(12_345);
    for _ in 0..10_000 {
        let (x, c) = (generator.x, generator.c);
        let word = generator.next_u32();
        let xn = MWC64X_A.wrapping_mul(x).wrapping_add(c);
        let carry = u32::from(xn < c);
        let cn = ((u64::from(MWC64X_A) * u64::from(x)) >> 32) as u32 + carry;
        assert_eq!(word, x ^ c);
        assert_eq!((generator.x, generator.c), (xn, cn));
        // and the residue is multiplied by A modulo M
        assert_eq!(
            generator.residue(),
            mul_mod_m(
                u64::from(MWC64X_A) * u64::from(x) + u64::from(c),
                u64::from(MWC64X_A)
            )
        );
    }
}

#[test]
fn pcg32_advance_equals_stepping_one_by_one() {
    let start = Pcg32::new(42, 54);
    let mut stepped = start;
    for delta in 0..500u64 {
        let mut jumped = start;
        jumped.advance(delta);
        assert_eq!(jumped, stepped, "delta {delta}");
        stepped.next_u32();
    }
    // A whole period (2^64) comes back: two jumps of 2^63.
    let mut around = start;
    around.advance(1 << 63);
    around.advance(1 << 63);
    assert_eq!(around, start);
}

#[test]
fn mwc64x_skip_ahead_equals_stepping_one_by_one() {
    for seed in [0, 1, 42, u64::MAX] {
        let start = Mwc64x::from_seed(seed);
        let mut stepped = start;
        for delta in 0..3000u64 {
            let mut jumped = start;
            jumped.advance(delta);
            assert_eq!(jumped, stepped, "seed {seed}, delta {delta}");
            assert_eq!(
                Mwc64x::from_residue(mwc64x_jump_like_the_gpu(start.residue(), delta)),
                stepped,
                "the GPU's jump, seed {seed}, delta {delta}"
            );
            stepped.next_u32();
        }
        // Far jumps compose, and a whole period comes back.
        let mut far = start;
        far.advance(1 << 40);
        far.advance(12_345);
        let mut direct = start;
        direct.advance((1 << 40) + 12_345);
        assert_eq!(far, direct);
        let mut around = start;
        around.advance(MWC64X_PERIOD);
        assert_eq!(around, start);
    }
}

#[test]
fn gpu_jump_equals_the_modular_power_everywhere() {
    let mut probe = 0x0123_4567_89ab_cdefu64;
    for _ in 0..2000 {
        probe = splitmix64(probe);
        let w = probe % (MWC64X_M - 1) + 1;
        let delta = splitmix64(probe ^ 1) >> (probe % 64);
        assert_eq!(
            mwc64x_jump_like_the_gpu(w, delta),
            mul_mod_m(w, power_of_a(delta)),
            "w {w}, delta {delta}"
        );
        let other = splitmix64(probe ^ 2) % MWC64X_M;
        let two_64 = ((1u128 << 64) % u128::from(MWC64X_M)) as u64;
        assert_eq!(
            mul_mod_m(mwc64x_montgomery(w, other), two_64),
            mul_mod_m(w, other)
        );
    }
    // The largest operands, where the Montgomery sum passes 2^64.
    let top = MWC64X_M - 1;
    let two_64 = ((1u128 << 64) % u128::from(MWC64X_M)) as u64;
    assert_eq!(
        mul_mod_m(mwc64x_montgomery(top, top), two_64),
        mul_mod_m(top, top)
    );
}

/// The hexadecimal numbers between `start` and the next `}` of the kernel source.
fn kernel_numbers(start: &str) -> Vec<u64> {
    let source = crate::tutorial::TUTORIAL_SOURCE;
    let from = source.find(start).expect("the marker is in tutorial.cu") + start.len();
    let to = from + source[from..].find('}').expect("a closing brace");
    source[from..to]
        .split(',')
        .map(str::trim)
        .filter(|token| !token.is_empty())
        .map(|token| {
            let digits = token.trim_start_matches("0x").trim_end_matches("ull");
            u64::from_str_radix(digits, 16).expect("a hexadecimal constant")
        })
        .collect()
}

#[test]
fn mwc64x_jump_table_in_the_kernel_is_the_cpus() {
    assert_eq!(
        kernel_numbers("mwc_jump_table[64] = {"),
        mwc64x_jump_table().to_vec()
    );
    let source = crate::tutorial::TUTORIAL_SOURCE;
    assert!(source.contains(&format!("#define MWC_A {MWC64X_A}u")));
    assert!(source.contains(&format!("#define MWC_M {MWC64X_M}ull")));
    assert!(source.contains(&format!(
        "#define MWC_M_NEG_INV {MWC64X_M_NEG_INV:#018x}ull"
    )));
}

#[test]
fn seeds_start_inside_the_residues() {
    for seed in [0, 1, 2, 42, u64::MAX, 0x8000_0000_0000_0000] {
        let w = Mwc64x::from_seed(seed).residue();
        assert!((1..MWC64X_M).contains(&w), "seed {seed}: {w}");
    }
    assert_ne!(Mwc64x::from_seed(0), Mwc64x::from_seed(1));
}
