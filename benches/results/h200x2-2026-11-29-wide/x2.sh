#!/usr/bin/env bash
# 131072 x 65536 (8.6e9 cells, 32 GiB) over the 2 GPUs: each band past 2^32 cells.
set -u
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
HL=/tmp/heatlab-distributed; xz -dc .gpu/heatlab-distributed.xz > $HL && chmod +x $HL
MPI=(mpirun --oversubscribe --bind-to none -x NCCL_NVLS_ENABLE -x TORCH_SYMM_MEM_DISABLE_MULTICAST -x NVSHMEM_DISABLE_NVLS -n 2)
S=$OUT/x2.txt; t0=$SECONDS
say() { echo "[$((SECONDS - t0)) s] $*" | tee -a $S; }
nvidia-smi -L >> $S; df -h /tmp | tail -1 >> $S; free -g | head -2 >> $S
cd /tmp
python3 - <<'PY'
import numpy as np
rows, cols = 65536, 131072
f = np.lib.format.open_memmap("big.npy", mode="w+", dtype=np.float32, shape=(rows, cols))
rng = np.random.default_rng(7)
for first in range(0, rows, 2048):
    f[first:first + 2048] = rng.random((2048, cols), dtype=np.float32)
f.flush()
PY
say "input written: $(ls -la big.npy | awk '{print $5}') bytes"
args=(run --backend cuda --initial big.npy --steps 512 --npy --no-png --frame-layers field)
"${MPI[@]}" $HL "${args[@]}" --out nccl > $OUT/nccl.log 2>&1
say "2 ranks NCCL: exit $?"; cp nccl/run.json $OUT/run-nccl.json
cmp -i 128 big.npy nccl/field_000000.npy && say "first frame's values equal the input's"
sha256sum nccl/field_000512.npy | tee -a $S; rm -rf nccl
"${MPI[@]}" $HL "${args[@]}" --host-halos --out host > $OUT/host.log 2>&1
say "2 ranks through the host: exit $?"; cp host/run.json $OUT/run-host.json
sha256sum host/field_000512.npy | tee -a $S
