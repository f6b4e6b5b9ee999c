#!/usr/bin/env bash
# One device call after the merges of the problem tools: every GPU-relevant test executable
# under HEATLAB_REQUIRE_CUDA=1 (started from /tmp), 500 verify sequences (problem operations,
# painting and thermostat switches included), verify --physics on CUDA, the app's frame loop
# stepping a 2000x2000 heat-sink problem with and without the overlays beside the material
# kernel's bench rate, and a gallery problem with a thermostat-free heater on CUDA and CPU.
# Binaries come packed in .gpu.pack/bins.tar.xz (stripped; `benches/run_tests_on_gpu.sh --pack`).
set -u
repo=$(pwd)
bins=/tmp/heatlab-bins
mkdir -p "$bins" "$OUT/raw"
tar -xJf .gpu.pack/bins.tar.xz -C /tmp && mv /tmp/bin/* "$bins"/
export HEATLAB_BIN=$bins/heatlab HEATLAB_REQUIRE_CUDA=1
cd /tmp
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv > "$OUT/nvidia-smi.txt" 2>&1
# The test executables (core, gpu, cli, gui; they were 29 then), logs in $OUT/tests/.
"$repo/benches/run_tests_on_gpu.sh" "$bins" > /dev/null
timeout 200 "$bins/heatlab" verify --backend cuda --sequences 500 --json "$OUT/raw/verify.json" > "$OUT/verify.txt" 2>&1; echo "rc=$?" >> "$OUT/verify.txt"
timeout 60 "$bins/heatlab" verify --physics --backend cuda > "$OUT/physics.txt" 2>&1; echo "rc=$?" >> "$OUT/physics.txt"
timeout 100 "$bins/heatlab" bench --sizes 2000 --no-numpy --no-field --json "$OUT/raw/bench.json" > "$OUT/bench.txt" 2>&1; echo "rc=$?" >> "$OUT/bench.txt"
export HEATLAB_MEASURE_SCENARIO=$repo/benches/scenarios/heat-sink-2000.toml HEATLAB_MEASURE_AUTO=1 HEATLAB_MEASURE_SECONDS=10
{
  echo "=== heat sink 2000x2000, no overlays"
  timeout 120 "$bins/gui" measure::measure_animation --exact --ignored --nocapture 2>&1 | grep "heatlab gui measure"
  echo "=== heat sink 2000x2000, isotherms and arrows"
  HEATLAB_MEASURE_OVERLAYS=1 timeout 120 "$bins/gui" measure::measure_animation --exact --ignored --nocapture 2>&1 | grep "heatlab gui measure"
} > "$OUT/gui_measure.txt" 2>&1
{
  timeout 60 "$bins/heatlab" run --scenario fin --backend cuda --out /tmp/fin-cuda --npy; echo "rc=$?"
  timeout 60 "$bins/heatlab" run --scenario fin --backend cpu --out /tmp/fin-cpu --npy; echo "rc=$?"
  for f in /tmp/fin-cuda/field_*.npy; do cmp "$f" "/tmp/fin-cpu/$(basename "$f")" && echo "identical $(basename "$f")"; done
} > "$OUT/scenario.txt" 2>&1
tar -czf "$OUT/raw.tgz" -C "$OUT" raw && rm -rf "$OUT/raw"
