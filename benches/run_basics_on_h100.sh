#!/bin/bash
# The GPU basics on the GPU machine, run from the repository root with the binaries in
# .gpu-basics/ (heatlab, the `core` and `gui` test executables as core-tests and gui-tests,
# and the `basics_screenshots` example, copied there from target/release/ and
# target/release/deps/):
# the tests under HEATLAB_REQUIRE_CUDA=1, every lesson as JSON and as a table, the maximum
# ladder beside the notebook's own Python rungs (NumPy, Numba where installed), and the tab's
# screenshots; everything is packed into $OUT/basics.tgz.
set -u
D=.gpu-basics
cd "$(dirname "$0")/.." || exit 1
R="$OUT/basics"
mkdir -p "$R"
nvidia-smi -L > "$R/gpu.txt" 2>&1
export HEATLAB_BIN=$D/heatlab
HEATLAB_REQUIRE_CUDA=1 timeout 300 $D/core-tests basics:: --nocapture > "$R/tests.txt" 2>&1; echo "basics tests rc=$?" | tee -a "$R/tests.txt"
timeout 300 $D/gui-tests basics:: --test-threads 1 > "$R/gui_tests.txt" 2>&1; echo "gui basics tests rc=$?" | tee -a "$R/gui_tests.txt"
grep -E "test result|FAILED|panicked" "$R/tests.txt" "$R/gui_tests.txt"
for lesson in max geometry sin-exp row-sums reduce device; do
  timeout 120 $D/heatlab kernel $lesson --backend cuda --json > "$R/$lesson.json" 2> "$R/$lesson.err"; echo "$lesson rc=$?"
  timeout 120 $D/heatlab kernel $lesson --backend cuda >> "$R/tables.txt" 2>&1
done
timeout 120 $D/heatlab kernel geometry --dims 2 --rows 256 --cols 256 --block 16x16 --backend cuda >> "$R/tables.txt" 2>&1
timeout 120 $D/heatlab kernel geometry --dims 2 --rows 256 --cols 256 --block 16x16 --x-along-cols --backend cuda >> "$R/tables.txt" 2>&1
timeout 120 $D/heatlab kernel geometry --n 1000 --grid 4 --unguarded --backend cuda >> "$R/tables.txt" 2>&1
cat "$R/tables.txt"
timeout 300 $D/heatlab bench --basics 32,64,128,256 --json "$R/bench_basics.json" > "$R/bench_basics.txt" 2>&1; echo "bench rc=$?"
cat "$R/bench_basics.txt"
HEATLAB_BIN=$D/heatlab timeout 300 $D/basics_screenshots "$R" h100 > "$R/screenshots.txt" 2>&1; echo "screenshots rc=$?"
tar czf "$OUT/basics.tgz" -C "$R" . && rm -rf "$R"
