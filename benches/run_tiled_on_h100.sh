#!/usr/bin/env bash
# The tiled material kernels' bench on the GPU machine: `heatlab bench` at 8192² and 2000² (the
# material rows beside the device copy and the uniform kernels, each row checked against its
# reference), alone on the GPU. Binaries come packed in .gpu.pack/bins.tar.xz
# (benches/run_tests_on_gpu.sh --pack); results go to $OUT.
set -u
bins=/tmp/heatlab-tiled-bins
rm -rf "$bins" && mkdir -p "$bins" && tar -xJf .gpu.pack/bins.tar.xz -C "$bins" || exit 1
cd /tmp || exit 1
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv > "$OUT/nvidia-smi.txt" 2>&1
timeout 400 "$bins/bin/heatlab" bench --sizes 8192,2000 --no-numpy --no-field --json "$OUT/bench.json" > "$OUT/bench.txt" 2>&1
echo "rc=$?" >> "$OUT/bench.txt"
grep "materials\|copy\|rc=" "$OUT/bench.txt"
