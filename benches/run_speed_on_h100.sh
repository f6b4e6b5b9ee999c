#!/usr/bin/env bash
# Third device call of the speed work: bench at 2000 beside the baselines, the resident kernel
# against the CPU at 2000x2000 under every boundary, two CUDA test executables under
# HEATLAB_REQUIRE_CUDA=1, 500 verify sequences, bench at 16384 beside the baselines.
# Binaries (heatlab and the `gpu` test executable; stripped) come in .gpu.speed/bins.tar.gz, carried.
set -u
src=$(pwd)/.gpu.speed
bins=/tmp/heatlab-bins
mkdir -p "$bins"
tar -xzf "$src/bins.tar.gz" -C "$bins"
export HEATLAB_BIN=$bins/heatlab HEATLAB_REQUIRE_CUDA=1
cd /tmp
timeout 60 "$bins/heatlab" bench --sizes 2000 --no-numpy --no-field --seconds 0.03 \
    --kernel auto,jacobi-vec4-rows16,temporal-k8-rows32,resident-h4,resident-h8 > "$OUT/bench2000.txt" 2>&1
rc=$?; echo "rc=$rc" >> "$OUT/bench2000.txt"
[ $rc = 124 ] && exit 0
{
  for boundary in dirichlet neumann periodic; do
    timeout 30 "$bins/heatlab" run --size 2000 --steps 301 --coeff 0.23 --boundary $boundary --backend cpu \
      --npy --out /tmp/x-cpu-$boundary > /dev/null 2>&1; echo "rc=$? cpu $boundary"
    for kernel in resident-h8 resident-h4; do
      timeout 20 "$bins/heatlab" run --size 2000 --steps 301 --coeff 0.23 --boundary $boundary --backend cuda \
        --kernel $kernel --npy --out /tmp/x-$kernel-$boundary > /tmp/log-$kernel-$boundary.txt 2>&1; echo "rc=$? cuda $kernel $boundary"
      if cmp /tmp/x-$kernel-$boundary/field_000301.npy /tmp/x-cpu-$boundary/field_000301.npy; then
        echo "identical after 301 steps: $kernel $boundary"
      else
        echo "DIFFERENT after 301 steps: $kernel $boundary"; tail -3 /tmp/log-$kernel-$boundary.txt
      fi
    done
  done
} > "$OUT/exact2000.txt" 2>&1
{ for t in vs_cpu:: field::; do echo "=== $t"; timeout 60 "$bins/gpu" "$t" --test-threads 1 2>&1 | grep -E '^test |^test result|panicked|GPU generation'; done; } > "$OUT/tests.txt" 2>&1
timeout 120 "$bins/heatlab" verify --backend cuda --sequences 500 --quiet --json "$OUT/verify.json" > "$OUT/verify.txt" 2>&1; echo "rc=$?" >> "$OUT/verify.txt"
timeout 60 "$bins/heatlab" bench --sizes 16384 --no-numpy --no-field --seconds 0.03 \
    --kernel temporal-k8-rows128,temporal-k8p-rows128,temporal-k8p2-rows128,temporal-k8p2-rows256,auto > "$OUT/bench16384.txt" 2>&1
echo "rc=$?" >> "$OUT/bench16384.txt"
