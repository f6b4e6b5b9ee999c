#!/usr/bin/env bash
# Two H200s: the GPU bands tests, then bench / verify / exact over NCCL (queued rounds).
set -u
REPO=$PWD; T=/tmp/t; mkdir -p $T && tar xJf .gpu/tests.tar.xz -C $T
R=$(mktemp -d); S=$R/summary.txt; t0=$SECONDS
say() { echo "[$((SECONDS - t0)) s] $*" | tee -a $S; }
nvidia-smi -L > $R/gpus.txt
(cd /tmp && HEATLAB_REQUIRE_CUDA=1 HEATLAB_BIN=$T/heatlab timeout 90 $T/gpu bands > $R/gpu-bands.txt 2>&1); say "gpu bands rc=$?"
OUT=$R timeout 140 bash benches/gpu-ranks.sh bench > /dev/null 2>&1; say "bench rc=$?"
VERIFY_RANKS=2 OUT=$R timeout 90 bash benches/gpu-ranks.sh verify 20 > /dev/null 2>&1; say "verify rc=$?"
OUT=$R timeout 150 bash benches/gpu-ranks.sh exact > /dev/null 2>&1; say "exact rc=$?"
tar cJf $OUT/x2-results.tar.xz -C $R .
cat $S; tail -3 $R/gpu-bands.txt; cat $R/bench-ranks-*.txt $R/verify.txt $R/exact.txt | cut -c1-200
