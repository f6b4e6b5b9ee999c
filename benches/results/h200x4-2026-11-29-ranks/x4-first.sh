#!/usr/bin/env bash
# Four H200s, first call: bench --ranks (4 GPUs), verify over 4 ranks, then the 131072² run.
set -u
REPO=$PWD; R=$(mktemp -d); t0=$SECONDS
nvidia-smi -L > $R/gpus.txt 2>&1; nvidia-smi topo -m > $R/topology.txt 2>&1
OUT=$R timeout 150 bash benches/gpu-ranks.sh bench > /dev/null 2>&1; echo "bench rc=$? at $((SECONDS - t0)) s" >> $R/times.txt
VERIFY_RANKS=4 OUT=$R timeout 70 bash benches/gpu-ranks.sh verify 20 > /dev/null 2>&1; echo "verify rc=$? at $((SECONDS - t0)) s" >> $R/times.txt
mkdir -p $R/big; OUT=$R/big timeout $((575 - (SECONDS - t0))) bash .gpu/x4-big.sh > /dev/null 2>&1; echo "big rc=$? at $((SECONDS - t0)) s" >> $R/times.txt
cp .gpu/x4-big.sh .gpu/x4-first.sh $R/
tar cJf $OUT/x4-first.tar.xz -C $R .
cat $R/times.txt $R/bench-ranks-*.txt $R/verify.txt $R/big/big.txt 2>/dev/null | cut -c1-300
