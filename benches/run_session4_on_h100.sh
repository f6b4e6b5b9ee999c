#!/usr/bin/env bash
# One device call for this round's GPU work: every GPU-relevant test executable under
# HEATLAB_REQUIRE_CUDA=1 (started from /tmp), 500 verify sequences (heat-problem operations
# included), verify --physics on CUDA, bench (uniform and material kernels beside the copy),
# the GPU basics lessons, the bench beside the notebook's Python rungs, and a scenario run.
# Binaries come packed in .gpu.pack/bins.tar.xz (stripped; see the closing note).
set -u
repo=$(pwd)
bins=/tmp/heatlab-bins
mkdir -p "$bins" "$OUT/raw"
tar -xJf .gpu.pack/bins.tar.xz -C "$bins" && { [ ! -d "$bins/bin" ] || { mv "$bins"/bin/* "$bins"/ && rmdir "$bins/bin"; }; }
export HEATLAB_BIN=$bins/heatlab HEATLAB_REQUIRE_CUDA=1
cd /tmp
nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm,clocks.max.mem --format=csv > "$OUT/nvidia-smi.txt" 2>&1
# The test executables (lib, core, gpu, cli, gui; they were 19 separate ones then), logs in
# $OUT/tests/.
"$repo/benches/run_tests_on_gpu.sh" "$bins" > /dev/null
timeout 200 "$bins/heatlab" verify --backend cuda --sequences 500 --json "$OUT/raw/verify.json" > "$OUT/verify.txt" 2>&1; echo "rc=$?" >> "$OUT/verify.txt"
timeout 60 "$bins/heatlab" verify --physics --backend cuda --json "$OUT/raw/physics.json" > "$OUT/physics.txt" 2>&1; echo "rc=$?" >> "$OUT/physics.txt"
timeout 150 "$bins/heatlab" bench --sizes 2000,8192,16384 --no-numpy --json "$OUT/raw/bench.json" > "$OUT/bench.txt" 2>&1; echo "rc=$?" >> "$OUT/bench.txt"
{
  for lesson in device max geometry sin-exp row-sums reduce; do
    echo "=== kernel $lesson"; timeout 60 "$bins/heatlab" kernel "$lesson"; echo "rc=$?"
  done
  echo "=== kernel geometry --dims 2 --block 8x8 --grid 3x4 --unguarded"
  timeout 30 "$bins/heatlab" kernel geometry --dims 2 --block 8x8 --grid 3x4 --unguarded; echo "rc=$?"
  echo "=== bench --basics"; timeout 120 "$bins/heatlab" bench --basics 32,128,256; echo "rc=$?"
} > "$OUT/basics.txt" 2>&1
{
  timeout 60 "$bins/heatlab" run --scenario "$repo/assets/scenarios/composite-wall.toml" --backend cuda --out /tmp/wall-cuda --npy; echo "rc=$?"
  timeout 60 "$bins/heatlab" run --scenario "$repo/assets/scenarios/composite-wall.toml" --backend cpu --out /tmp/wall-cpu --npy; echo "rc=$?"
  for f in /tmp/wall-cuda/field_*.npy; do cmp "$f" "/tmp/wall-cpu/$(basename "$f")" && echo "identical $(basename "$f")"; done
} > "$OUT/scenario.txt" 2>&1
tar -czf "$OUT/raw.tgz" -C "$OUT" raw && rm -rf "$OUT/raw"
