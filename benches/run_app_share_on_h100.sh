#!/usr/bin/env bash
# The app's heat-sink frame loop at 2000² against the material kernel's bench rate, in one call:
# `heatlab bench --sizes 2000` (the material rows), then the gui test binary's measure_animation
# on benches/scenarios/heat-sink-2000.toml without and with the overlays. Binaries come packed
# in .gpu.pack/bins.tar.xz (benches/run_tests_on_gpu.sh --pack); results go to $OUT.
set -u
repo=$(pwd)
bins=/tmp/heatlab-share-bins
rm -rf "$bins" && mkdir -p "$bins" && tar -xJf .gpu.pack/bins.tar.xz -C "$bins" || exit 1
export HEATLAB_BIN=$bins/bin/heatlab
cd /tmp || exit 1
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv > "$OUT/nvidia-smi.txt" 2>&1
timeout 200 "$HEATLAB_BIN" bench --sizes 2000 --no-numpy --no-field --json "$OUT/bench.json" > "$OUT/bench.txt" 2>&1
echo "rc=$?" >> "$OUT/bench.txt"
export HEATLAB_MEASURE_SCENARIO=$repo/benches/scenarios/heat-sink-2000.toml HEATLAB_MEASURE_AUTO=1 HEATLAB_MEASURE_SECONDS=8
{
  echo "=== heat sink 2000x2000, no overlays"
  timeout 90 "$bins/bin/gui" measure::measure_animation --exact --ignored --nocapture 2>&1 | grep "heatlab gui measure"
  echo "=== heat sink 2000x2000, isotherms and arrows"
  HEATLAB_MEASURE_OVERLAYS=1 timeout 90 "$bins/bin/gui" measure::measure_animation --exact --ignored --nocapture 2>&1 | grep "heatlab gui measure"
} > "$OUT/gui_measure.txt" 2>&1
grep "materials-vec4" "$OUT/bench.txt"
cat "$OUT/gui_measure.txt"
