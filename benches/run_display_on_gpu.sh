#!/usr/bin/env bash
# One device call for the frame pipeline and live regeneration: the test executables of the
# batched previews and the initial field kept on the GPU under HEATLAB_REQUIRE_CUDA=1 (started
# from /tmp), 200 verify sequences, and `heatlab bench --display 512` at 2000² and 8192² (both
# frame paths and the regeneration paths beside their baselines, in one run).
# Binaries come packed in .gpu.display/bins.tar.xz (stripped), a folder ignored by the main
# checkout's .git/info/exclude and named in `carry` (the device tool sends the main checkout).
set -u
bins=/tmp/heatlab-bins
mkdir -p "$bins" "$OUT/raw"
tar -xJf .gpu.display/bins.tar.xz -C /tmp && mv /tmp/bin/* "$bins"/
export HEATLAB_BIN=$bins/heatlab HEATLAB_REQUIRE_CUDA=1
cd /tmp
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv > "$OUT/nvidia-smi.txt" 2>&1
tests="cuda_vs_cpu cuda_field gui_field"
printf '%s\n' $tests | xargs -P 3 -I{} sh -c "timeout 120 $bins/{} > $OUT/raw/test-{}.txt 2>&1; echo \"rc=\$? {}\" >> $OUT/raw/test-{}.txt"
for t in $tests; do echo "=== $t"; grep -E '^test |^test result|^rc=|panicked' "$OUT/raw/test-$t.txt"; done > "$OUT/tests.txt"
timeout 80 "$bins/heatlab" verify --backend cuda --sequences 200 --json "$OUT/raw/verify.json" > "$OUT/verify.txt" 2>&1; echo "rc=$?" >> "$OUT/verify.txt"
timeout 120 "$bins/heatlab" bench --display 512 --sizes 2000,8192 --json "$OUT/bench_display.json" > "$OUT/bench_display.txt" 2>&1; echo "rc=$?" >> "$OUT/bench_display.txt"
tar -czf "$OUT/raw.tgz" -C "$OUT" raw && rm -rf "$OUT/raw"
