"""Makes the golden files the tests compare against, with the NumPy reference.

Run from the repository root:
    python3 tests/golden/make_golden.py ../shared/reference/seed_reference.py
Dirichlet stepping is the reference's own `step`; the Neumann and periodic variants differ only
in the ghost cells (np.pad modes 'edge' and 'wrap').
"""
import importlib.util
import os
import sys

import numpy as np

spec = importlib.util.spec_from_file_location("seed_reference", sys.argv[1])
ref = importlib.util.module_from_spec(spec)
spec.loader.exec_module(ref)
out = os.path.dirname(os.path.abspath(__file__))

PAD_MODE = {"dirichlet": "constant", "neumann": "edge", "periodic": "wrap"}


def laplacian(f, boundary):
    p = np.pad(f, 1, mode=PAD_MODE[boundary])
    return (4 * f - p[:-2, 1:-1] - p[2:, 1:-1] - p[1:-1, :-2] - p[1:-1, 2:]).astype(np.float32)


def step(f, coeff, boundary):
    return (f - np.float32(coeff) * laplacian(f, boundary)).astype(np.float32)


CASES = [  # rows, cols, seed, steps, coeff
    (64, 64, 7, 25, 0.25),
    (33, 47, 3966789, 10, 0.25),
    (40, 64, 12345, 50, 0.2),
]
for rows, cols, seed, steps, coeff in CASES:
    f0 = ref.jagged(rows, cols, seed)
    np.save(os.path.join(out, f"field_{rows}x{cols}_{seed}.npy"), f0)
    for boundary in PAD_MODE:
        f = f0
        for _ in range(steps):
            f = step(f, coeff, boundary)
        if boundary == "dirichlet":
            # The reference's own step must agree with ours for the seed's boundary.
            g = f0
            for _ in range(steps):
                g = ref.step(g, coeff)
            assert np.array_equal(f, g)
        tag = f"{rows}x{cols}_{seed}_{boundary}_{steps}"
        np.save(os.path.join(out, f"diffused_{tag}.npy"), f)
        np.save(os.path.join(out, f"laplacian_{tag}.npy"), laplacian(f, boundary))
print("golden files written to", out)
