# shellcheck shell=bash
# Part of benches/gpu.sh (sourced by it, never run alone): heatlab bench and the kernels (subcommands bench, tiled, speed, exact, profile).

# bench_into LOG_NAME [ARGS...]: heatlab bench, its table in $DIR/NAME.txt, its JSON beside.
bench_into() {
  local name=$1
  shift
  step "${DIR#"$RESULTS"/}/$name" "$DIR/$name.txt" 450 "$HL" bench "$@" --json "$DIR/$name.json"
}

cmd_bench() {
  require bench heatlab || return 0
  if [ $# = 0 ]; then
    set -- --sizes 2000,8192,16384 --no-numpy
  fi
  bench_into bench "$@"
  cat "$DIR/bench.txt"
}

cmd_tiled() {
  require tiled heatlab || return 0
  bench_into bench --sizes 8192,2000 --no-numpy --no-field
  show "$DIR/bench.txt" 'materials|copy|^rc='
}

cmd_speed() {
  local at2000=auto,jacobi-vec4-rows16,temporal-k8-rows32,resident-h4,resident-h8
  local at16384=temporal-k8-rows128,temporal-k8p-rows128,temporal-k8p2-rows128,temporal-k8p2-rows256,auto
  while [ $# -gt 0 ]; do
    case $1 in
      --at-2000) at2000=${2:?--at-2000 KERNELS}; shift 2 ;;
      --at-16384) at16384=${2:?--at-16384 KERNELS}; shift 2 ;;
      *) die_usage "speed: unknown argument $1" ;;
    esac
  done
  require speed heatlab || return 0
  bench_into bench2000 --sizes 2000 --no-numpy --no-field --seconds 0.03 --kernel "$at2000"
  cat "$DIR/bench2000.txt"
  cmd_exact resident-h8 resident-h4
  bench_into bench16384 --sizes 16384 --no-numpy --no-field --seconds 0.03 --kernel "$at16384"
  cat "$DIR/bench16384.txt"
}

cmd_exact() {
  local size=2000 steps=301 kernels=() boundary kernel last cpu
  while [ $# -gt 0 ]; do
    case $1 in
      --size) size=${2:?--size N}; shift 2 ;;
      --steps) steps=${2:?--steps N}; shift 2 ;;
      -*) die_usage "exact: unknown option $1" ;;
      *) kernels+=("$1"); shift ;;
    esac
  done
  [ ${#kernels[@]} -gt 0 ] || kernels=(resident-h8 resident-h4)
  require exact heatlab || return 0
  last=field_$(printf '%06d' "$steps").npy
  for boundary in dirichlet neumann periodic; do
    cpu="$WORK/exact-cpu-$boundary-$size"
    step "${DIR#"$RESULTS"/}/exact-cpu-$boundary" "$DIR/exact-runs.txt" 120 "$HL" run --size "$size" \
      --steps "$steps" --coeff 0.23 --boundary "$boundary" --backend cpu --npy --out "$cpu"
    for kernel in "${kernels[@]}"; do
      step "${DIR#"$RESULTS"/}/exact-$kernel-$boundary" "$DIR/exact-runs.txt" 60 "$HL" run \
        --size "$size" --steps "$steps" --coeff 0.23 --boundary "$boundary" --backend cuda \
        --kernel "$kernel" --npy --out "$WORK/exact-$kernel-$boundary-$size"
      if cmp -s "$WORK/exact-$kernel-$boundary-$size/$last" "$cpu/$last"; then
        echo "identical after $steps steps at ${size}²: $kernel $boundary" >>"$DIR/exact.txt"
      else
        echo "DIFFERENT after $steps steps at ${size}²: $kernel $boundary" >>"$DIR/exact.txt"
        fail "${DIR#"$RESULTS"/}/exact-$kernel-$boundary" "$last differs from the CPU's (or is missing)"
      fi
    done
  done
  cat "$DIR/exact.txt"
}

cmd_profile() {
  local regex=${1:-} ncu ncu_args=()
  [ -n "$regex" ] || die_usage "profile: name a kernel (a regular expression)"
  shift
  [ $# -gt 0 ] || set -- --sizes 8192 --no-numpy --no-field
  require profile heatlab || return 0
  if ! ncu=$(cuda_tool ncu); then
    fail profile "ncu (Nsight Compute) not found"
    return 0
  fi
  read -r -a ncu_args <<<"${HEATLAB_NCU_ARGS:---launch-count 4 --section SpeedOfLight --section LaunchStats --section Occupancy --section SchedulerStats --section WarpStateStats}"
  step "${DIR#"$RESULTS"/}/ncu" "$DIR/ncu.txt" 580 "$ncu" --kernel-name "regex:$regex" \
    "${ncu_args[@]}" "$HL" bench "$@"
  show "$DIR/ncu.txt" '==PROF==|Duration|Throughput|^rc='
}
