#!/usr/bin/env bash
# One field over several ranks on the GPU machine (it has Open MPI and NCCL, no cargo): the
# build with `--features distributed` carried as .gpu/heatlab-distributed.xz (or as
# .gpu/heatlab-distributed), its results under $OUT (or ./ranks-results).
#
#   benches/gpu-ranks.sh exact [SIZE]   every boundary: mpirun -n 2, 3 and 4 against one rank
#                                       (CUDA) and the CPU, every frame compared byte for byte
#   benches/gpu-ranks.sh bench [ARGS]   mpirun -n <GPUs> heatlab bench --ranks (weak and strong)
#
# Ranks share the GPUs there are (CUDA_VISIBLE_DEVICES is set per rank only when there are
# enough). NCCL's NVLink multicast stays off in every rank.
set -uo pipefail
REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
OUT_DIR=${OUT:-$PWD/ranks-results}
mkdir -p "$OUT_DIR"
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
HL=$REPO/.gpu/heatlab-distributed
if [ ! -x "$HL" ] && [ -f "$HL.xz" ]; then
  HL=/tmp/heatlab-distributed
  xz -dc "$REPO/.gpu/heatlab-distributed.xz" > "$HL" && chmod +x "$HL"
fi
GPUS=$(nvidia-smi -L 2>/dev/null | wc -l)
MPI=(mpirun --oversubscribe --bind-to none -x NCCL_NVLS_ENABLE -x TORCH_SYMM_MEM_DISABLE_MULTICAST
  -x NVSHMEM_DISABLE_NVLS)

# ranks N: mpirun for N ranks, all on GPU 0 when there are fewer GPUs than ranks.
ranks() {
  if [ "$1" -gt "$GPUS" ]; then
    echo "${MPI[@]} -x CUDA_VISIBLE_DEVICES=0 -n $1"
  else
    echo "${MPI[@]} -n $1"
  fi
}

# compare NAME LABEL ARGS...: `heatlab run ARGS` on the CPU, on one GPU and over 2, 3 and 4 CUDA
# ranks (host halos), every .npy frame compared with the CPU's; counts differences in $failures.
compare() {
  local name=$1 label=$2 n f other
  shift 2
  "$HL" run "$@" --backend cpu --out "cpu-$name" 2>>"$OUT_DIR/exact.log"
  "$HL" run "$@" --backend cuda --out "one-$name" 2>>"$OUT_DIR/exact.log"
  for n in 2 3 4; do
    # shellcheck disable=SC2046
    $(ranks "$n") "$HL" run "$@" --backend cuda --host-halos --out "r$n-$name" \
      >>"$OUT_DIR/exact.log" 2>&1
    for f in cpu-"$name"/*.npy; do
      f=$(basename "$f")
      for other in "one-$name" "r$n-$name"; do
        if ! cmp -s "cpu-$name/$f" "$other/$f"; then
          echo "DIFFERS: $name $other/$f" | tee -a "$OUT_DIR/exact.txt"
          failures=$((failures + 1))
        fi
      done
    done
    echo "$label, $n CUDA ranks (host halos): $(ls "r$n-$name"/*.npy | wc -l) .npy frames compared with one rank and the CPU" | tee -a "$OUT_DIR/exact.txt"
    cp "r$n-$name/run.json" "$OUT_DIR/run-$name-r$n.json" 2>/dev/null
  done
  cp "one-$name/run.json" "$OUT_DIR/run-$name-one.json" 2>/dev/null
}

cmd_exact() {
  local size=${1:-1000x777} boundary problem
  failures=0
  cd "$(mktemp -d)" || exit 1
  for boundary in dirichlet neumann periodic; do
    compare "$boundary" "$boundary $size" --size "$size" --steps 300 --save-every 100 --npy \
      --boundary "$boundary" --coeff 0.23
  done
  # Heat problems (materials, heaters, held cells, sides, a thermostat, wrapping rows).
  for problem in heater-thermostat heat-sink periodic-plate jagged-plate thermal-bridge; do
    compare "$problem" "$problem" --scenario "$problem" --steps 3000 --save-every 500 --npy
  done
  echo "exact: $failures files differ" | tee -a "$OUT_DIR/exact.txt"
  if [ "$GPUS" -lt 2 ]; then
    # Two ranks on one GPU without --host-halos: NCCL would refuse them; they go through the
    # host by themselves (run.json's method says so).
    # shellcheck disable=SC2046
    $(ranks 2) "$HL" run --size 512 --steps 100 --backend cuda --out nccl-one-gpu \
      >"$OUT_DIR/nccl-one-gpu.txt" 2>&1
    echo "2 ranks on 1 GPU, no --host-halos: exit $?" | tee -a "$OUT_DIR/exact.txt"
    grep -h '"method"' nccl-one-gpu/run.json | tee -a "$OUT_DIR/exact.txt"
  fi
}

cmd_bench() {
  local n=$GPUS
  [ "$n" -ge 1 ] || n=1
  # shellcheck disable=SC2046
  $(ranks "$n") "$HL" bench --ranks --backend cuda --json "$OUT_DIR/bench-ranks-$n.json" "$@" \
    2>&1 | tee "$OUT_DIR/bench-ranks-$n.txt"
}

case ${1:-} in
  exact) shift; cmd_exact "$@" ;;
  bench) shift; cmd_bench "$@" ;;
  *) echo "usage: benches/gpu-ranks.sh exact [SIZE] | bench [ARGS]" >&2; exit 2 ;;
esac
