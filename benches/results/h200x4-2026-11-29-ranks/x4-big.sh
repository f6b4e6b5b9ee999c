#!/usr/bin/env bash
# 131072² (1.7e10 cells, 64 GiB a field) over the GPUs of one host, .npy frames written by ranks.
# The input is zero but for four random blocks (two across band boundaries, one at the right
# edge, one in the corner): windows 520 cells around each block, stepped alone on the CPU by
# heatlab, must equal the big run's last frame there bit for bit (heat moves at most 512 cells
# in 512 steps; a cell with a zero neighbourhood stays zero).
set -u
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
HL=${HL:-/tmp/heatlab-distributed}; [ -x "$HL" ] || { xz -dc .gpu/heatlab-distributed.xz > $HL && chmod +x $HL; }
N=${RANKS:-$(nvidia-smi -L | wc -l)}; export BIG_N=${BIG_N:-131072} BIG_STEPS=${BIG_STEPS:-512}
BACKEND=${BACKEND:-cuda}; LAST=$(printf "%06d" $BIG_STEPS)
MPI=(mpirun --oversubscribe --bind-to none -x NCCL_NVLS_ENABLE -x TORCH_SYMM_MEM_DISABLE_MULTICAST -x NVSHMEM_DISABLE_NVLS -n $N)
S=$OUT/big.txt; t0=$SECONDS
say() { echo "[$((SECONDS - t0)) s] $*" | tee -a $S; }
nvidia-smi -L >> $S; df -h /tmp | tail -1 >> $S; free -g | head -2 >> $S
cd ${BIG_DIR:-/tmp} && rm -rf big.npy one big w*
python3 - <<'PY'
import json
import os
import numpy as np
n, steps = int(os.environ["BIG_N"]), int(os.environ["BIG_STEPS"])
margin = steps + 8
f = np.lib.format.open_memmap("big.npy", mode="w+", dtype=np.float32, shape=(n, n))
rng = np.random.default_rng(11)
blocks = [(n // 2 - 128, n * 305 // 1000, 256, 256), (n // 4 - 100, n - 256, 256, 256),
          (0, 0, 200, 200), (3 * n // 4 - 50, n * 534 // 1000, 100, 100)]
windows = []
for k, (r, c, h, w) in enumerate(blocks):
    f[r:r + h, c:c + w] = rng.random((h, w), dtype=np.float32)
    r0, c0 = max(r - margin, 0), max(c - margin, 0)
    r1, c1 = min(r + h + margin, n), min(c + w + margin, n)
    np.save(f"w{k}.npy", np.array(f[r0:r1, c0:c1]))
    windows.append((r0, r1, c0, c1))
f.flush()
json.dump(windows, open("windows.json", "w"))
PY
say "input written: $(ls -la big.npy | awk '{print $5}') bytes, $(du -k big.npy | cut -f1) KiB on disk"
args=(run --backend $BACKEND --initial big.npy --steps $BIG_STEPS --npy --no-png --frame-layers field)
[ "$BACKEND" = cuda ] && CUDA_VISIBLE_DEVICES=0 timeout 90 $HL "${args[@]}" --out one > $OUT/one.log 2>&1
say "one GPU: exit $? ($(tail -n 1 $OUT/one.log | cut -c1-300)); $(ls one 2>/dev/null | wc -l) files in its folder"
"${MPI[@]}" $HL "${args[@]}" --out big > $OUT/big.log 2>&1
say "$N ranks: exit $?"; cp big/run.json $OUT/run-big.json; ls -la big >> $S
for k in 0 1 2 3; do
  $HL run --backend cpu --initial w$k.npy --steps $BIG_STEPS --npy --no-png --frame-layers field --out w$k > /dev/null 2>&1
done
say "windows stepped on the CPU"
python3 - <<'PY' | tee -a $S
import json
import os
import numpy as np
last = "%06d" % int(os.environ["BIG_STEPS"])
big0 = np.load("big/field_000000.npy", mmap_mode="r")
big = np.load(f"big/field_{last}.npy", mmap_mode="r")
src = np.load("big.npy", mmap_mode="r")
print("frames", big0.shape, big0.dtype, big.shape, big.dtype)
for k, (r0, r1, c0, c1) in enumerate(json.load(open("windows.json"))):
    cpu = np.load(f"w{k}/field_{last}.npy")
    got = np.array(big[r0:r1, c0:c1])
    first = np.array_equal(np.array(big0[r0:r1, c0:c1]).view(np.uint32), np.array(src[r0:r1, c0:c1]).view(np.uint32))
    same = np.array_equal(cpu.view(np.uint32), got.view(np.uint32))
    ring = max(float(np.abs(got[:8]).max()), float(np.abs(got[-8:]).max()), float(np.abs(got[:, :8]).max()), float(np.abs(got[:, -8:]).max()))
    print(f"window {k} rows {r0}:{r1} cols {c0}:{c1}: last frame {'EQUAL' if same else 'DIFFERS'} to the CPU's bit for bit; first frame {'equal' if first else 'DIFFERS'} to the input; max |value| on its outer 8 cells {ring}; sum {got.sum(dtype=np.float64):.6f}")
PY
say "compared"
rm -rf big one w* big.npy
