#!/usr/bin/env bash
# Four H200s, second call: the CLI tests (a 131072² array refused on one GPU from its header),
# exact and verify over 2, 3 and 4 ranks (each its own GPU, NCCL), the GPU tests, halos 16 bench.
set -u
T=/tmp/t; mkdir -p $T && tar xJf .gpu/tests.tar.xz -C $T
R=$(mktemp -d); t0=$SECONDS
say() { echo "[$((SECONDS - t0)) s] $*" | tee -a $R/summary.txt; }
nvidia-smi -L > $R/gpus.txt 2>&1
(cd /tmp && HEATLAB_REQUIRE_CUDA=1 HEATLAB_BIN=$T/heatlab timeout 80 $T/cli > $R/cli.txt 2>&1); say "cli rc=$? $(grep 'test result' $R/cli.txt)"
grep "one_gpu_cannot" $R/cli.txt >> $R/summary.txt
cd /tmp && python3 -c "
import numpy as np
f = np.lib.format.open_memmap('big1.npy', mode='w+', dtype=np.float32, shape=(131072, 131072))
f[0, 0] = 1; f.flush()" && s0=$SECONDS && $T/heatlab run --backend cuda --initial big1.npy --steps 1 --out one > $R/one-gpu.txt 2>&1; say "one GPU, 131072² array: exit $? in $((SECONDS - s0)) s: $(tail -n 1 $R/one-gpu.txt)"; rm -f big1.npy; cd - > /dev/null
OUT=$R timeout 170 bash benches/gpu-ranks.sh exact > /dev/null 2>&1; say "exact rc=$? $(tail -n 1 $R/exact.txt)"
VERIFY_RANKS="2 3" OUT=$R timeout 90 bash benches/gpu-ranks.sh verify 20 > /dev/null 2>&1; say "verify rc=$?"
(cd /tmp && HEATLAB_REQUIRE_CUDA=1 HEATLAB_BIN=$T/heatlab timeout 100 $T/gpu > $R/gpu.txt 2>&1); say "gpu rc=$? $(grep 'test result' $R/gpu.txt)"
OUT=$R/halos-16 timeout $((570 - (SECONDS - t0))) bash benches/gpu-ranks.sh bench --halo-depth 16 > /dev/null 2>&1; say "halos 16 bench rc=$?"
tar cJf $OUT/x4-second.tar.xz -C $R .
cat $R/summary.txt; cat $R/verify.txt $R/halos-16/bench-ranks-*.txt 2>/dev/null | cut -c1-250; grep -h DIFFERS $R/exact.txt | head
