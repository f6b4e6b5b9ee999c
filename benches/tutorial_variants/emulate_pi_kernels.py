#!/usr/bin/env python3
"""Runs the Monte Carlo kernels of kernels/tutorial.cu on the CPU, without a GPU.

The device code of the MWC64X section (start, Montgomery jump, step, the three hit tests, the
per-thread split of count_inside) is compiled as C++ with g++, with host versions of the few
CUDA intrinsics it uses (__umul64hi, __funnelshift_r, __hiloint2double, __double2hiint, the PTX
carry chain of count_outside_integer) and the block reduction replaced by a plain sum; every
thread of a launch then runs in turn. The counts are compared with the independent Python
reference (tests/reference/mwc64x_pi_counts.py) for several launch shapes, and both hit tests
with the exact answer around the circle's edge. Usage, from the repository root:

    python3 benches/tutorial_variants/emulate_pi_kernels.py

This checks the kernel's arithmetic and its split of the work, not the GPU's compiler or
hardware: the GPU tests of tests/tutorial.rs do that on a GPU.
"""
import os
import pathlib
import subprocess
import sys
import tempfile

ROOT = pathlib.Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tests" / "reference"))
import mwc64x_pi_counts as reference  # noqa: E402

PRELUDE = r"""
#include <cstdio>
#include <cstring>
#include <cmath>
typedef unsigned long long u64;
#define __device__
#define __forceinline__ inline
#define __constant__
#define __global__
#define __launch_bounds__(x)
struct Dim { unsigned int x; };
static Dim gridDim, blockDim, blockIdx, threadIdx;
static inline u64 __umul64hi(u64 a, u64 b) { return (u64)(((unsigned __int128)a * b) >> 64); }
static inline unsigned int __funnelshift_r(unsigned int lo, unsigned int hi, unsigned int s) {
    return (unsigned int)(((((u64)hi) << 32) | lo) >> (s & 31));
}
static inline double __hiloint2double(int hi, int lo) {
    u64 bits = ((u64)(unsigned)hi << 32) | (unsigned)lo; double d; memcpy(&d, &bits, 8); return d;
}
static inline int __double2hiint(double d) { u64 bits; memcpy(&bits, &d, 8); return (int)(bits >> 32); }
static inline void add_block_count(u64 count, u64* inside) { *inside += count; }
"""

# The PTX carry chain of count_outside_integer, in C: the carry out of V*V + W*W.
ASM_START = 'asm("{'
HOST_CARRY = ("{ const u64 v_squared = (u64)v * v; const u64 sum = v_squared + w_squared;"
              " outside += sum < v_squared ? 1u : 0u; }")


def emulation_source() -> str:
    source = (ROOT / "kernels" / "tutorial.cu").read_text()
    section = source[source.index("#define MWC_A"):]
    reduction = section.index("// Adds the block's counts to *inside")
    after = section.index("__device__ __forceinline__ void add_block_count")
    end_of_reduction = section.index("\n}\n", after) + 3
    section = section[:reduction] + section[end_of_reduction:]
    start = section.index(ASM_START)
    end = section.index(");", start) + 2
    section = section[:start] + HOST_CARRY + section[end:]
    cases = ",\n".join(
        f"{{{seed}ull, {first}ull, {n}ull, {reference.count(seed, first, n)}ull}}"
        for seed, first, n in reference.CASES
    )
    main = r"""
typedef void (*Kernel)(u64, u64, u64, u64*);
static u64 launch(Kernel kernel, unsigned blocks, u64 seed, u64 first, u64 n) {
    u64 inside = 0;
    gridDim.x = blocks; blockDim.x = 256;
    for (unsigned b = 0; b < blocks; ++b) for (unsigned t = 0; t < 256; ++t) {
        blockIdx.x = b; threadIdx.x = t; kernel(seed, first, n, &inside);
    }
    return inside;
}
int main() {
    struct { u64 seed, first, n, inside; } cases[] = {
CASES
    };
    Kernel kernels[] = {monte_carlo_pi, monte_carlo_pi_double_test, monte_carlo_pi_alternating_test};
    const char* names[] = {"monte_carlo_pi", "monte_carlo_pi_double_test", "monte_carlo_pi_alternating_test"};
    unsigned shapes[] = {1, 3, 64, 1056};
    int runs = 0, bad = 0;
    for (auto& c : cases) for (unsigned blocks : shapes) for (int k = 0; k < 3; ++k) {
        const u64 got = launch(kernels[k], blocks, c.seed, c.first, c.n);
        ++runs;
        if (got != c.inside) {
            ++bad;
            printf("MISMATCH %s, %u blocks, seed %llu, samples [%llu, +%llu): %llu, reference %llu\n",
                   names[k], blocks, c.seed, c.first, c.n, got, c.inside);
        }
    }
    // Both hit tests against the exact answer, on and around the circle's edge.
    int edge = 0, edge_bad = 0;
    for (u64 X = 0; X < (1u << 24); X += 997) {
        const u64 Y0 = (u64)std::sqrt(281474976710656.0 - (double)X * X);
        for (u64 Y = Y0 > 2 ? Y0 - 2 : 0; Y <= Y0 + 2 && Y < (1u << 24); ++Y) {
            const unsigned wx = (unsigned)(X << 8) | 0x5a, wy = (unsigned)(Y << 8) | 0xa5;
            const unsigned expect = X * X + Y * Y < (1ull << 48);
            unsigned outside = 0;
            count_outside_integer(wx, 0, wy, 0, outside);
            ++edge;
            if (1 - outside != expect || inside_double(wx, 0, wy, 0) != expect) ++edge_bad;
        }
    }
    printf("%d launches, %d differ from the reference; %d edge points, %d misjudged\n", runs, bad, edge, edge_bad);
    return bad || edge_bad ? 1 : 0;
}
""".replace("CASES", cases)
    return PRELUDE + section + main


def main() -> int:
    with tempfile.TemporaryDirectory() as folder:
        source = os.path.join(folder, "emulation.cpp")
        binary = os.path.join(folder, "emulation")
        pathlib.Path(source).write_text(emulation_source())
        subprocess.run(["g++", "-O2", "-std=c++17", "-ffp-contract=off", "-o", binary, source], check=True)
        return subprocess.run([binary], check=False).returncode


if __name__ == "__main__":
    sys.exit(main())
