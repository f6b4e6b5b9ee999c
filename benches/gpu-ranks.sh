#!/usr/bin/env bash
# One field over several ranks on the GPU machine (it has Open MPI and NCCL, no cargo): the
# build with `--features distributed` carried as .gpu/heatlab-distributed.xz (or as
# .gpu/heatlab-distributed), its results under $OUT (or ./ranks-results).
#
#   benches/gpu-ranks.sh exact [SIZE]   every boundary: mpirun -n 2, 3 and 4 against one rank
#                                       (CUDA) and the CPU, every frame compared byte for byte
#   benches/gpu-ranks.sh verify [N]     mpirun -n 2, 3 and 4 heatlab verify (N sequences each)
#   benches/gpu-ranks.sh bench [ARGS]   mpirun -n <GPUs> heatlab bench --ranks (weak and strong),
#                                       with NCCL halos and through the host
#   benches/gpu-ranks.sh all            bench, verify 20, exact, bench with halos 16 deep and of
#                                       small fields, large 49152², within 9.5 minutes, all
#                                       tarred into $OUT/ranks-results.tar.xz (a device call
#                                       returns at most 8 files)
#   benches/gpu-ranks.sh large [SIZE] [STEPS]
#                                       a large field (default 65536², the largest side, 1280
#                                       steps) over one rank per GPU against one GPU, its .npy
#                                       frames compared byte for byte (in $LARGE_DIR or /tmp)
#   benches/gpu-ranks.sh wide [ROWS] [COLS] [STEPS]
#                                       a field COLS wide (default 20000 x 131072, 512 steps)
#                                       from an --initial .npy that every rank reads its rows
#                                       of, .npy frames alone written by every rank, against
#                                       one rank by checksums (in $LARGE_DIR or /tmp)
#
# Each rank takes GPU local_rank % GPUs: with a GPU each, halos go by NCCL; ranks sharing a
# GPU exchange through the host by themselves (run.json's method says which). NCCL's NVLink
# multicast stays off in every rank.
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

# ranks N: mpirun for N ranks (each picks its GPU by its local rank).
ranks() {
  echo "${MPI[@]} -n $1"
}

# compare NAME LABEL ARGS...: `heatlab run ARGS` on the CPU, on one GPU and over 2, 3 and 4 CUDA
# ranks, every .npy frame compared with the CPU's; counts differences in $failures.
compare() {
  local name=$1 label=$2 n f other
  shift 2
  "$HL" run "$@" --backend cpu --out "cpu-$name" 2>>"$OUT_DIR/exact.log"
  "$HL" run "$@" --backend cuda --out "one-$name" 2>>"$OUT_DIR/exact.log"
  for n in 2 3 4; do
    # shellcheck disable=SC2046
    $(ranks "$n") "$HL" run "$@" --backend cuda --out "r$n-$name" \
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
    echo "$label, $n CUDA ranks ($(halos_of "r$n-$name")): $(ls "r$n-$name"/*.npy | wc -l) .npy frames compared with one rank and the CPU" | tee -a "$OUT_DIR/exact.txt"
    cp "r$n-$name/run.json" "$OUT_DIR/run-$name-r$n.json" 2>/dev/null
  done
  cp "one-$name/run.json" "$OUT_DIR/run-$name-one.json" 2>/dev/null
}

# halos_of DIR: how the run in DIR exchanged its halos, from its run.json's method.
halos_of() {
  grep -o '"method": *"[^"]*"' "$1/run.json" 2>/dev/null | sed 's/"method": *//; s/"//g'
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

cmd_verify() {
  local sequences=${1:-40} n
  for n in ${VERIFY_RANKS:-2 3 4}; do
    # shellcheck disable=SC2046
    $(ranks "$n") "$HL" verify --backend cuda --sequences "$sequences" \
      >"$OUT_DIR/verify-r$n.txt" 2>&1
    echo "verify over $n CUDA ranks: exit $?; $(head -n 1 "$OUT_DIR/verify-r$n.txt")" \
      | tee -a "$OUT_DIR/verify.txt"
  done
}

cmd_bench() {
  local n=$GPUS
  [ "$n" -ge 1 ] || n=1
  nvidia-smi topo -m >"$OUT_DIR/topology.txt" 2>&1
  # shellcheck disable=SC2046
  $(ranks "$n") "$HL" bench --ranks --backend cuda --json "$OUT_DIR/bench-ranks-$n.json" "$@" \
    2>&1 | tee "$OUT_DIR/bench-ranks-$n.txt"
  # shellcheck disable=SC2046
  $(ranks "$n") "$HL" bench --ranks --backend cuda --host-halos \
    --json "$OUT_DIR/bench-ranks-$n-host.json" "$@" 2>&1 | tee "$OUT_DIR/bench-ranks-$n-host.txt"
}

cmd_large() {
  local size=${1:-65536} steps=${2:-1280} dir=${LARGE_DIR:-/tmp} f
  local args=(--size "$size" --steps "$steps" --save-every "$steps" --npy --backend cuda)
  cd "$dir" || exit 1
  rm -rf large-one large-ranks
  local started=$SECONDS
  "$HL" run "${args[@]}" --out large-one >"$OUT_DIR/large.log" 2>&1
  echo "one GPU: $((SECONDS - started)) s wall" | tee -a "$OUT_DIR/large.txt"
  started=$SECONDS
  # shellcheck disable=SC2046
  $(ranks "$GPUS") "$HL" run "${args[@]}" --out large-ranks >>"$OUT_DIR/large.log" 2>&1
  echo "$GPUS ranks: $((SECONDS - started)) s wall" | tee -a "$OUT_DIR/large.txt"
  if ! ls large-one/*.npy >/dev/null 2>&1; then
    echo "large: one GPU wrote no frames (large.log says why)" | tee -a "$OUT_DIR/large.txt"
  fi
  for f in large-one/*.npy; do
    [ -e "$f" ] || continue
    f=$(basename "$f")
    if cmp -s "large-one/$f" "large-ranks/$f"; then
      echo "same: $size over $GPUS ranks ($(halos_of large-ranks)): $f"
    else
      echo "DIFFERS: $size over $GPUS ranks: $f"
    fi
  done | tee -a "$OUT_DIR/large.txt"
  cp large-ranks/run.json "$OUT_DIR/run-large-ranks.json"
  cp large-one/run.json "$OUT_DIR/run-large-one.json"
  rm -rf large-one large-ranks
}

cmd_wide() {
  local rows=${1:-20000} cols=${2:-131072} steps=${3:-512} dir=${LARGE_DIR:-/tmp} n=$GPUS
  [ "$n" -ge 2 ] || n=2
  local args=(--initial wide.npy --steps "$steps" --npy --no-png --backend cuda)
  cd "$dir" || exit 1
  rm -rf wide-one wide-ranks wide.npy
  python3 - "$rows" "$cols" <<'PY' || { echo "wide: no input array" | tee -a "$OUT_DIR/wide.txt"; return; }
import sys
import numpy as np
rows, cols = int(sys.argv[1]), int(sys.argv[2])
field = np.lib.format.open_memmap("wide.npy", mode="w+", dtype=np.float32, shape=(rows, cols))
rng = np.random.default_rng(5)
for first in range(0, rows, 1024):
    field[first:first + 1024] = rng.random((min(1024, rows - first), cols), dtype=np.float32)
field.flush()
PY
  local started=$SECONDS
  "$HL" run "${args[@]}" --out wide-one >"$OUT_DIR/wide.log" 2>&1
  echo "one GPU: exit $?, $((SECONDS - started)) s wall" | tee -a "$OUT_DIR/wide.txt"
  (cd wide-one && sha256sum ./*.npy) >"$OUT_DIR/wide-one.sha256"
  cp wide-one/run.json "$OUT_DIR/run-wide-one.json"
  rm -rf wide-one
  started=$SECONDS
  # shellcheck disable=SC2046
  $(ranks "$n") "$HL" run "${args[@]}" --out wide-ranks >>"$OUT_DIR/wide.log" 2>&1
  echo "$n ranks: exit $?, $((SECONDS - started)) s wall ($(halos_of wide-ranks))" \
    | tee -a "$OUT_DIR/wide.txt"
  (cd wide-ranks && sha256sum ./*.npy) >"$OUT_DIR/wide-ranks.sha256"
  cp wide-ranks/run.json "$OUT_DIR/run-wide-ranks.json"
  if [ -s "$OUT_DIR/wide-one.sha256" ] && cmp -s "$OUT_DIR/wide-one.sha256" "$OUT_DIR/wide-ranks.sha256"; then
    echo "same: ${rows}x$cols over $n ranks: $(wc -l <"$OUT_DIR/wide-one.sha256") .npy frames" | tee -a "$OUT_DIR/wide.txt"
  else
    echo "DIFFERS: ${rows}x$cols over $n ranks" | tee -a "$OUT_DIR/wide.txt"
  fi
  rm -rf wide-ranks wide.npy
}

cmd_all() {
  local back=$OUT_DIR start=$SECONDS dir self=$REPO/benches/gpu-ranks.sh
  dir=$(mktemp -d)
  left() { echo $(($1 - (SECONDS - start))); }
  step() { echo "$1 done at $((SECONDS - start)) s" >>"$dir/times.txt"; }
  OUT=$dir timeout "$(left 150)" bash "$self" bench >/dev/null 2>&1; step bench
  OUT=$dir timeout "$(left 260)" bash "$self" verify 20 >/dev/null 2>&1; step verify
  OUT=$dir timeout "$(left 400)" bash "$self" exact >/dev/null 2>&1; step exact
  OUT=$dir/halos-16 timeout "$(left 440)" bash "$self" bench --halo-depth 16 >/dev/null 2>&1
  OUT=$dir/small-fields timeout "$(left 480)" bash "$self" bench --rank-size 4096 \
    --strong-size 8192 --rank-steps 10240 >/dev/null 2>&1
  step "other benches"
  OUT=$dir timeout "$(left 560)" bash "$self" large 49152 1280 >/dev/null 2>&1; step large
  nvidia-smi -L >"$dir/gpus.txt" 2>&1
  tar cJf "$back/ranks-results.tar.xz" -C "$dir" .
  cat "$dir"/times.txt "$dir"/bench-ranks-*.txt "$dir"/*/bench-ranks-*.txt "$dir"/verify.txt \
    "$dir"/exact.txt "$dir"/large.txt 2>/dev/null | cut -c1-300
  rm -rf "$dir"
}

case ${1:-} in
  exact) shift; cmd_exact "$@" ;;
  verify) shift; cmd_verify "$@" ;;
  bench) shift; cmd_bench "$@" ;;
  large) shift; cmd_large "$@" ;;
  wide) shift; cmd_wide "$@" ;;
  all) shift; cmd_all "$@" ;;
  *) echo "usage: benches/gpu-ranks.sh exact [SIZE] | verify [N] | bench [ARGS] | large [SIZE] [STEPS] | wide [ROWS] [COLS] [STEPS] | all" >&2
    exit 2 ;;
esac
