#!/usr/bin/env bash
# One device call for the resident and wide temporal kernels: the CUDA test executables under
# HEATLAB_REQUIRE_CUDA=1 (started from /tmp), 500 verify sequences, the new kernels against the
# CPU at 2000x2000 under every boundary (final fields compared byte for byte), and
# `heatlab bench` at 2000x2000 and 16384x16384 beside the device copy, the tutorial's kernel and
# the temporal kernels used so far. Binaries come packed in .gpu.pack/bins.tar.xz (stripped).
set -u
bins=/tmp/heatlab-bins
mkdir -p "$bins" "$OUT/raw"
tar -xJf .gpu.pack/bins.tar.xz -C "$bins"
export HEATLAB_BIN=$bins/heatlab HEATLAB_REQUIRE_CUDA=1
cd /tmp
nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm,clocks.max.mem --format=csv > "$OUT/nvidia-smi.txt" 2>&1
{
  timeout 100 "$bins/heatlab" bench --sizes 2000 --no-numpy --no-field \
    --kernel auto,temporal-k8-rows32,resident-h4,resident-h8,temporal-k8w8-rows64,temporal-k8w8-rows128
  echo "rc=$?"
  timeout 150 "$bins/heatlab" bench --sizes 16384 --no-numpy --no-field \
    --kernel auto,jacobi-vec4-rows8,temporal-k8-rows128,temporal-k8-rows256,temporal-k8-rows512,temporal-k8w8-rows128,temporal-k8w8-rows256,temporal-k8w8-rows512
  echo "rc=$?"
} > "$OUT/bench.txt" 2>&1
{
  for kernel in resident-h8 resident-h4 temporal-k8w8-rows256; do
    for boundary in dirichlet neumann periodic; do
      timeout 60 "$bins/heatlab" run --size 2000 --steps 301 --coeff 0.23 --boundary $boundary --backend cuda \
        --kernel $kernel --npy --out /tmp/x-$kernel-$boundary > /dev/null 2>&1; echo "rc=$? cuda $kernel $boundary"
    done
  done
  for boundary in dirichlet neumann periodic; do
    timeout 60 "$bins/heatlab" run --size 2000 --steps 301 --coeff 0.23 --boundary $boundary --backend cpu \
      --npy --out /tmp/x-cpu-$boundary > /dev/null 2>&1; echo "rc=$? cpu $boundary"
    for kernel in resident-h8 resident-h4 temporal-k8w8-rows256; do
      if cmp /tmp/x-$kernel-$boundary/field_000301.npy /tmp/x-cpu-$boundary/field_000301.npy; then
        echo "identical after 301 steps: $kernel $boundary"
      else
        echo "DIFFERENT after 301 steps: $kernel $boundary"
      fi
    done
  done
} > "$OUT/exact2000.txt" 2>&1
tests="lib cuda_vs_cpu verify lab cuda_materials cuda_field cuda_brush"
printf '%s\n' $tests | xargs -P 4 -I{} sh -c "timeout 300 $bins/{} > $OUT/raw/test-{}.txt 2>&1; echo \"rc=\$? {}\" >> $OUT/raw/test-{}.txt"
for t in $tests; do echo "=== $t"; grep -E '^test result|^rc=|FAILED|panicked' "$OUT/raw/test-$t.txt"; done > "$OUT/tests.txt"
timeout 200 "$bins/heatlab" verify --backend cuda --sequences 500 --json "$OUT/raw/verify.json" > "$OUT/verify.txt" 2>&1; echo "rc=$?" >> "$OUT/verify.txt"
tar -czf "$OUT/raw.tgz" -C "$OUT" raw && rm -rf "$OUT/raw"
