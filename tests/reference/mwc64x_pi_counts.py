# The reference values of tests/tutorial.rs (PI_REFERENCE_COUNTS and the first words of seed 42), computed
# independently of the Rust code with Python integers: `python3 tests/reference/mwc64x_pi_counts.py`.
# Independent reference: MWC64X as Thomas's mwc64x_rng.cl / skip_mwc.cl (Python integers),
# SplitMix64 seeding, samples j = words 2j, 2j+1, top 24 bits, X^2 + Y^2 < 2^48.
A = 4294883355
M = A * 2**32 - 1
MASK64 = 2**64 - 1
def splitmix64(seed):
    z = (seed + 0x9E3779B97F4A7C15) & MASK64
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & MASK64
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & MASK64
    return z ^ (z >> 31)
def start(seed):
    z = splitmix64(seed)
    w = (z % (M - 1)) + 1
    return (w // A, w % A)
def skip(state, distance):  # MWC_SkipImpl_Mod64
    x, c = state
    m = pow(A, distance, M)
    v = (x * A + c) * m % M
    return (v // A, v % A)
def next_u32(state):
    x, c = state
    res = x ^ c
    xn = (A * x + c) & 0xFFFFFFFF
    carry = 1 if xn < c else 0
    cn = ((A * x) >> 32) + carry
    return res, (xn, cn)
def count(seed, first, n):
    st = skip(start(seed), (2 * first) & MASK64)
    inside = 0
    for _ in range(n):
        wx, st = next_u32(st)
        wy, st = next_u32(st)
        X, Y = wx >> 8, wy >> 8
        inside += X * X + Y * Y < 2**48
    return inside
# (seed, first sample, samples) of PI_REFERENCE_COUNTS in tests/tutorial.rs.
CASES = [(0, 0, 1), (0, 0, 1000), (42, 0, 100_001), (2**64 - 1, 0, 65_537), (7, 1 << 36, 10_001),
         (3, 2 * ((1 << 32) - 1000) + 1, 10_000), (5, (1 << 35) - 4000, 20_000), (9, 2**63 + 5, 3_000)]

if __name__ == "__main__":
    for seed, first, n in CASES:
        print(seed, first, n, count(seed, first, n))
    # the first words of seed 42, for the known-answer test
    st = start(42)
    words = []
    for _ in range(6):
        w, st = next_u32(st)
        words.append(hex(w))
    print("start 42:", start(42), "words:", words)
