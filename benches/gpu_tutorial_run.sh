#!/bin/bash
# Runs on the GPU machine from the repository root with the binaries in .gpu-tutorial/: the
# tutorial tests under HEATLAB_REQUIRE_CUDA=1, heatlab's kernels at the seeds' sizes, then the
# seed's Numba code, in one session; everything is packed into $OUT/results.tgz (the device
# tool returns at most 8 files).
set -u
D=.gpu-tutorial
cd "$(dirname "$0")/.." || exit 1
R="$OUT/r"
mkdir -p "$R"
nvidia-smi -L > "$R/gpu.txt" 2>&1
nproc >> "$R/gpu.txt"
HEATLAB_BIN=$D/heatlab HEATLAB_REQUIRE_CUDA=1 timeout 90 $D/tutorial-tests --nocapture > "$R/tests.txt" 2>&1; echo "tests rc=$?" | tee -a "$R/tests.txt"
grep -E "test result|FAILED|panicked|max \|gpu" "$R/tests.txt"
run() { name=$1; shift; timeout 90 $D/heatlab kernel "$@" --backend cuda --json --timings "$R/$name.csv" > "$R/$name.json" 2> "$R/$name.err"; echo "$name rc=$?"; }
run hidden_1M hidden-layer --n 1000000 --repeat 7
run gaussian_100M gaussian --n 100000000 --repeat 7
run pi_1M mc-pi --n 1000000 --repeat 7
run pi_1e10 mc-pi --n 1e10 --repeat 3 --cpu all-threads
for args in "hidden-layer --n 1000" "hidden-layer --n 100000" "gaussian --n 10000" "gaussian --n 1000000" "hidden-layer --n 1000000" "gaussian --n 100000000" "mc-pi --n 1000000" "mc-pi --n 1e10 --cpu all-threads" "mc-pi --n 1e11 --cpu skip"; do
  timeout 60 $D/heatlab kernel $args --repeat 3 --backend cuda >> "$R/tables.txt" 2>&1
done
cat "$R/tables.txt"
python3 -c "import numba, numpy; print(numba.__version__, numpy.__version__)" > "$R/numba_version.txt" 2>&1
PYTHONUNBUFFERED=1 timeout 150 python3 $D/seed_numba_tutorial.py --out "$R/numba.json" > "$R/numba_stdout.json" 2> "$R/numba.err"; echo "numba rc=$?"
tail -5 "$R/numba.err"
tar czf "$OUT/results.tgz" -C "$R" . && rm -rf "$R"
