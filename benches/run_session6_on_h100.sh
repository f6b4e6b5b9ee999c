#!/usr/bin/env bash
# One device call: the energy booked in the step's own launch (cuda_materials and the physics
# validation under HEATLAB_REQUIRE_CUDA=1, verify, the bench's material rows and the app's frame
# loop on the 2000x2000 heat sink), then the GUI problem tests alone in one process with parallel
# threads, and, if they fault, once more under compute-sanitizer to name the kernel.
# Binaries come packed in .gpu.pack/bins.tar.xz (stripped; `benches/run_tests_on_gpu.sh --pack`).
set -u
repo=$(pwd)
bins=/tmp/heatlab-bins
mkdir -p "$bins" "$OUT/raw"
tar -xJf .gpu.pack/bins.tar.xz -C /tmp && mv /tmp/bin/* "$bins"/
export HEATLAB_BIN=$bins/heatlab HEATLAB_REQUIRE_CUDA=1
cd /tmp
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv > "$OUT/nvidia-smi.txt" 2>&1
# The gpu binary's materials tests and the core binary's physics validation (the test
# executables were cuda_materials and physics_validation then).
for t in gpu:materials core:physics_validation; do
  binary=${t%%:*} module=${t#*:}
  timeout 200 "$bins/$binary" "$module::" > "$OUT/raw/test-$module.txt" 2>&1; echo "rc=$? $t" >> "$OUT/raw/test-$module.txt"
done
timeout 120 "$bins/heatlab" verify --backend cuda --sequences 150 > "$OUT/verify.txt" 2>&1; echo "rc=$?" >> "$OUT/verify.txt"
timeout 150 "$bins/heatlab" bench --sizes 2000 --no-numpy --no-field --json "$OUT/raw/bench.json" > "$OUT/bench.txt" 2>&1; echo "rc=$?" >> "$OUT/bench.txt"
export HEATLAB_MEASURE_SCENARIO=$repo/benches/scenarios/heat-sink-2000.toml HEATLAB_MEASURE_AUTO=1 HEATLAB_MEASURE_SECONDS=8
{
  echo "=== heat sink 2000x2000, no overlays"
  timeout 90 "$bins/gui" measure::measure_animation --exact --ignored --nocapture 2>&1 | grep "heatlab gui measure"
  echo "=== heat sink 2000x2000, isotherms and arrows"
  HEATLAB_MEASURE_OVERLAYS=1 timeout 90 "$bins/gui" measure::measure_animation --exact --ignored --nocapture 2>&1 | grep "heatlab gui measure"
} > "$OUT/gui_measure.txt" 2>&1
unset HEATLAB_MEASURE_SCENARIO HEATLAB_MEASURE_AUTO HEATLAB_MEASURE_SECONDS
timeout 150 "$bins/gui" problem:: --test-threads=8 > "$OUT/raw/test-gui_problem.txt" 2>&1; rc=$?
echo "rc=$rc gui_problem" >> "$OUT/raw/test-gui_problem.txt"
if [ $rc -ne 0 ]; then
  sanitizer=$(dirname "$(command -v nvcc)")/compute-sanitizer
  timeout 200 "$sanitizer" --tool memcheck --print-limit 10 "$bins/gui" problem:: --test-threads=4 > "$OUT/raw/sanitizer.txt" 2>&1
  echo "rc=$?" >> "$OUT/raw/sanitizer.txt"
fi
for f in "$OUT"/raw/test-*.txt; do echo "=== $f"; grep -E '^test result|^rc=|FAILED|panicked|ILLEGAL|skipped' "$f" | head -20; done > "$OUT/tests.txt"
grep -E "Invalid|ERROR SUMMARY|at .*materials|kernel|Address" "$OUT/raw/sanitizer.txt" 2>/dev/null | head -40 > "$OUT/sanitizer-summary.txt"
cp "$OUT"/raw/*.txt "$OUT/" 2>/dev/null
tar -czf "$OUT/raw.tgz" -C "$OUT" raw && rm -rf "$OUT/raw"
