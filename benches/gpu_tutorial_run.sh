#!/bin/bash
# Runs on the GPU machine from the repository root: tests, heatlab kernels at the seeds' sizes,
# then the seed's Numba code, everything written under $OUT.
set -u
D=.gpu-tutorial
cd "$(dirname "$0")/.." || exit 1
nvidia-smi -L > "$OUT/gpu.txt" 2>&1
nproc >> "$OUT/gpu.txt"
HEATLAB_REQUIRE_CUDA=1 timeout 90 $D/tutorial-tests --nocapture > "$OUT/tests.txt" 2>&1; echo "tests rc=$?" | tee -a "$OUT/tests.txt"
run() { name=$1; shift; timeout 90 $D/heatlab kernel "$@" --backend cuda --json --timings "$OUT/$name.csv" > "$OUT/$name.json" 2> "$OUT/$name.err"; echo "$name rc=$?"; }
run hidden_1M hidden-layer --n 1000000 --repeat 7
run gaussian_100M gaussian --n 100000000 --repeat 7
run pi_1M mc-pi --n 1000000 --repeat 7
run pi_1e10 mc-pi --n 1e10 --repeat 3 --cpu all-threads
timeout 40 $D/heatlab kernel gaussian --n 100000000 --repeat 3 --backend cuda --cpu skip > "$OUT/gaussian_table.txt" 2>&1
timeout 40 $D/heatlab kernel mc-pi --n 1e11 --repeat 3 --backend cuda --cpu skip > "$OUT/pi_1e11_table.txt" 2>&1
python3 -c "import numba, numpy; print(numba.__version__, numpy.__version__)" > "$OUT/numba_version.txt" 2>&1
timeout 150 python3 $D/seed_numba_tutorial.py --out "$OUT/numba.json" > "$OUT/numba_stdout.json" 2> "$OUT/numba.err"; echo "numba rc=$?"
tail -5 "$OUT/numba.err"
