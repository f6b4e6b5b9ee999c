#!/usr/bin/env bash
# heatlab's GPU measurements, one runner for the GPU machine (which has no cargo):
#
#   benches/gpu.sh SUBCOMMAND [ARGS...] [+ SUBCOMMAND [ARGS...]]...
#
# Several subcommands separated by `+` run one after the other in one call, each writing into
# its own folder of the results. Subcommands:
#
#   tests [--verify N] [--sanitize] [NAME[:FILTER,...]...]
#                every test executable (or those named, with libtest filters) under
#                HEATLAB_REQUIRE_CUDA=1, side by side, each from a scratch folder; --verify N
#                runs N verify sequences beside them; --sanitize reruns a failed one under
#                compute-sanitizer's memcheck
#   verify [ARGS...]   heatlab verify on CUDA (default --sequences 500; --physics: the heat
#                problems against exact answers)
#   bench [ARGS...]    heatlab bench (default --sizes 2000,8192,16384 --no-numpy): every kernel
#                beside the device copy and the tutorial's kernel, checked against its reference
#   tiled        heatlab bench --sizes 8192,2000 --no-numpy --no-field: the material kernels
#                (tiled, blocked, vec4) beside the copy and the uniform kernels
#   speed [--at-2000 KERNELS] [--at-16384 KERNELS]
#                named kernels at 2000² and 16384² beside the baselines (--seconds 0.03), and
#                `exact` for the resident kernels
#   exact [--size N] [--steps N] [KERNEL...]
#                `heatlab run` on CUDA with each kernel (default resident-h8 resident-h4) against
#                the CPU under every boundary, the last fields compared byte for byte
#   display [--base DIR] [--sizes LIST]
#                heatlab bench --display 512 (default --sizes 2000,8192): the app's frame paths
#                and the field's regeneration; --base DIR alternates with an older build's
#                binaries (base, this, base, this)
#   app-share [--seconds S] [--scenario FILE [--size N]] [--plate N] [--agreement]
#             [--regeneration] [--base DIR]
#                the app's frame loop (the gui executable's measure tests) on the 2000x2000 heat
#                sink (benches/scenarios/heat-sink-2000.toml; --size: another scenario's size)
#                without and with the overlays, for 8 s each, beside the bench's rates at that
#                size in the same call; --plate N measures the
#                tutorial's plate at N² instead; --agreement adds each run with the live check
#                against the CPU; --regeneration adds the live regeneration measurement;
#                --base DIR alternates with an older build's binaries, two rounds
#   gif          a GIF recorded by `heatlab run` on CUDA (512², 2000 steps, every 100th)
#   scenario [NAME|FILE...]
#                a scenario on CUDA and on the CPU, the .npy fields compared byte for byte
#                (default assets/scenarios/composite-wall.toml and the gallery's fin)
#   basics       the GPU basics: their tests, every lesson as JSON and as a table, launch
#                geometry variants, the maximum ladder (heatlab bench --basics)
#   screenshots [SUFFIX]
#                the GPU basics tab's and the Kernel lab's screenshots (examples
#                basics_screenshots and lab_screenshots; SUFFIX defaults to the card, e.g. h100)
#   tutorial     the tutorial kernels: their tests, heatlab kernel at the seeds' sizes (JSON
#                and tables), then the seed's Numba code (benches/seed_numba_tutorial.py) in the
#                same session
#   pi           Monte Carlo pi at 1e10 and 1e11 samples (GPU) and 1e9 (GPU and every CPU
#                thread), with the kernels' tuning times (RUST_LOG=info) and the pi tests
#   variants     candidate shapes of the tutorial kernels (example tutorial_variants on
#                benches/tutorial_variants/variants.cu)
#   profile REGEX [BENCH_ARGS...]
#                Nsight Compute on the launches whose kernel name matches REGEX during
#                heatlab bench (default --sizes 8192 --no-numpy --no-field); HEATLAB_NCU_ARGS
#                replaces the default ncu options
#   all          every subcommand above but profile, one after the other (longer than one
#                10-minute device call: split it as below)
#   collect [--pack]
#                on the build machine: build, then copy the binaries into the binaries folder
#
# Binaries. The runner takes them from HEATLAB_GPU_BINS (default .gpu/ in the repository, which
# .gitignore ignores): `heatlab`, the test executables under their names without Cargo's hash
# (core, gpu, cli, gui from tests/; heatlab_engine, the engine's unit tests; heatlab_app, the
# app's unit tests; any engine integration test under its target's name), and the examples
# basics_screenshots, lab_screenshots and tutorial_variants. On the build machine
#
#   cargo build --release && cargo test --release --no-run
#
# prints the test executables (target/release/deps/core-<hash>, gpu-*, cli-*, gui-*,
# heatlab_engine-*, heatlab-* for src/lib.rs); `benches/gpu.sh collect` does that build, adds
# `cargo build --release --examples`, copies everything into .gpu/ under those names, strips it
# and writes .gpu/COMMIT (the commit built, and whether the tree had changes); with --pack it
# leaves one .gpu/bins.tar.xz instead (the runner unpacks it). Carry .gpu to the GPU machine
# (name it in the device tool's `carry`; 64 MiB at most, so strip or pack) and run there from
# the repository root, for example, each line one device call under 10 minutes:
#
#   bash benches/gpu.sh tests --verify 500                 # the closing check
#   bash benches/gpu.sh display + app-share + gif          # the app's frame path
#   bash benches/gpu.sh tests gpu + verify --sequences 300 + display + app-share + gif
#   bash benches/gpu.sh tiled + verify --physics
#
# Two builds (a change against its base): carry both folders and run the same subcommands once
# with each, HEATLAB_GPU_BINS and HEATLAB_GPU_RESULTS naming the build's folders; `display` and
# `app-share` alternate them in one call with --base.
#
# Results go under HEATLAB_GPU_RESULTS, else $OUT when set, else ./bench-out: machine.txt (the
# card, the driver, the commit built), summary.txt (every command's exit status and seconds) and
# a folder per subcommand. When they go to $OUT (the device tool returns at most 8 files), all
# but machine.txt and summary.txt are packed into results.tgz; HEATLAB_GPU_PACK=0 or 1 decides
# otherwise. The exit status is 1 when any command failed or timed out, 2 for a usage error.
#
# Test threads: HEATLAB_TEST_THREADS_<name> (e.g. HEATLAB_TEST_THREADS_core=4), else
# HEATLAB_TEST_THREADS, else 1 for gpu and gui (several app simulations sharing one CUDA context
# in parallel crashed there) and the harness's default for the rest. Each test executable gets
# HEATLAB_TEST_TIMEOUT seconds (default 540); HEATLAB_TEST_JOBS of them run at once (default
# all).
set -euo pipefail
# NVLink multicast stays off on multi-GPU hosts.
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1

REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
SUBCOMMANDS=" tests verify bench tiled speed exact display app-share gif scenario basics "
SUBCOMMANDS+="screenshots tutorial pi variants profile all "
# Executables in the binaries folder that are not test executables.
TOOLS=" heatlab basics_screenshots lab_screenshots tutorial_variants painted_hot_spot "
TOOLS+="cpu_blocking_sweep "
BINS=
RESULTS=
WORK=
DIR=
HL=
PACK=0
# app-share's choices, read by measure_rounds.
AGREEMENT=0
OVERLAYS="0 1"
MEASURE_ENV=()

usage() {
  sed -n '2,/^set -euo pipefail$/p' "${BASH_SOURCE[0]}" | sed '$d' | sed 's/^# \{0,1\}//'
}

die_usage() {
  echo "gpu.sh: $*" >&2
  echo "usage: benches/gpu.sh SUBCOMMAND [ARGS...] [+ SUBCOMMAND [ARGS...]]... (benches/gpu.sh --help)" >&2
  exit 2
}

# run_logged LABEL STDOUT STDERR LIMIT CMD...: CMD from the scratch folder under a time limit;
# its exit status and seconds go to STDERR's file and to summary.txt. Never fails itself.
run_logged() {
  local label=$1 out=$2 err=$3 limit=$4 start rc=0
  shift 4
  start=$(date +%s)
  mkdir -p "$(dirname "$out")" "$(dirname "$err")"
  (cd "$WORK" && exec timeout --kill-after=10 "$limit" "$@") >>"$out" 2>>"$err" || rc=$?
  # On a line of its own, even after output cut off by the time limit.
  printf '\nrc=%s seconds=%s\n' "$rc" "$(($(date +%s) - start))" >>"$err"
  printf '%-48s rc=%s seconds=%s\n' "$label" "$rc" "$(($(date +%s) - start))" >>"$RESULTS/summary.txt"
  return 0
}

# step LABEL LOG LIMIT CMD...: run_logged with stdout and stderr in one log.
step() {
  local label=$1 log=$2 limit=$3
  shift 3
  run_logged "$label" "$log" "$log" "$limit" "$@"
}

# fail LABEL MESSAGE: a failure that ran no command (a missing binary, a differing field).
fail() {
  printf '%-48s rc=missing %s\n' "$1" "$2" >>"$RESULTS/summary.txt"
  echo "gpu.sh: $1: $2" >&2
}

# require LABEL NAME...: the binaries exist in the binaries folder.
require() {
  local label=$1 name
  shift
  for name in "$@"; do
    if [ ! -x "$BINS/$name" ]; then
      fail "$label" "$BINS/$name is missing (build and copy it: see the top of benches/gpu.sh)"
      return 1
    fi
  done
}

# show FILE PATTERN: the lines of FILE matching PATTERN, on stdout (nothing when none match).
show() {
  grep -hE "$2" "$1" 2>/dev/null || true
}

cuda_tool() {
  local name=$1 nvcc
  if command -v "$name" >/dev/null 2>&1; then
    command -v "$name"
  elif nvcc=$(command -v nvcc) && [ -x "$(dirname "$nvcc")/$name" ]; then
    echo "$(dirname "$nvcc")/$name"
  elif [ -x "/usr/local/cuda/bin/$name" ]; then
    echo "/usr/local/cuda/bin/$name"
  else
    return 1
  fi
}

# The test executables in the binaries folder.
test_names() {
  local file name
  for file in "$BINS"/*; do
    name=$(basename "$file")
    if [ -f "$file" ] && [ -x "$file" ] && [[ $TOOLS != *" $name "* ]]; then
      echo "$name"
    fi
  done
}

# test_log SPEC: the log's name for NAME[:FILTER,...].
test_label() {
  if [[ $1 == *:* ]]; then
    printf '%s-%s\n' "${1%%:*}" "$(printf '%s' "${1#*:}" | tr -c 'A-Za-z0-9_.-' '_')"
  else
    printf '%s\n' "$1"
  fi
}

# run_test SPEC [BINS]: one test executable (NAME or NAME:FILTER,FILTER) with its threads,
# logged in $DIR/LABEL.txt.
run_test() {
  local spec=$1 bins=${2:-$BINS} name label per threads default filters=() args=()
  name=${spec%%:*}
  label=$(test_label "$spec")
  if [[ $spec == *:* ]]; then
    IFS=, read -r -a filters <<<"${spec#*:}"
  fi
  per="HEATLAB_TEST_THREADS_$name"
  case $name in gpu | gui) default=1 ;; *) default= ;; esac
  threads=${!per:-${HEATLAB_TEST_THREADS:-$default}}
  [ -z "$threads" ] || args+=(--test-threads "$threads")
  if [ ! -x "$bins/$name" ]; then
    fail "${DIR#"$RESULTS"/}/$label" "$bins/$name is missing"
    return 0
  fi
  echo "$bins/$name ${filters[*]} ${args[*]} (HEATLAB_BIN=$HEATLAB_BIN)" >"$DIR/$label.txt"
  step "${DIR#"$RESULTS"/}/$label" "$DIR/$label.txt" "${HEATLAB_TEST_TIMEOUT:-540}" \
    "$bins/$name" "${filters[@]}" "${args[@]}"
}

test_summary() {
  local label
  for label in "$@"; do
    echo "=== $label"
    show "$DIR/$label.txt" '^test result|^rc=|FAILED|panicked|skipped'
  done
}

cmd_tests() {
  local verify=0 sanitize=0 specs=() labels=() spec label pids=() pid jobs_at_once rc sanitizer
  local beside=0
  while [ $# -gt 0 ]; do
    case $1 in
      --verify) verify=${2:?--verify N}; shift 2 ;;
      --sanitize) sanitize=1; shift ;;
      -*) die_usage "tests: unknown option $1" ;;
      *) specs+=("$1"); shift ;;
    esac
  done
  if [ ${#specs[@]} = 0 ]; then
    mapfile -t specs < <(test_names)
  fi
  if [ ${#specs[@]} = 0 ]; then
    fail tests "no test executables in $BINS"
    return 0
  fi
  if [ "$verify" != 0 ]; then
    verify_into "$DIR" --sequences "$verify" &
    pids+=($!)
    beside=1
  fi
  # The executables run side by side: separate processes, each with its own CUDA context.
  jobs_at_once=${HEATLAB_TEST_JOBS:-${#specs[@]}}
  for spec in "${specs[@]}"; do
    while [ "$(jobs -rp | wc -l)" -ge "$((jobs_at_once + beside))" ]; do sleep 1; done
    labels+=("$(test_label "$spec")")
    run_test "$spec" &
    pids+=($!)
  done
  for pid in "${pids[@]}"; do wait "$pid" || true; done
  if [ "$sanitize" = 1 ]; then
    for spec in "${specs[@]}"; do
      label=$(test_label "$spec")
      rc=$(sed -n 's/^rc=\([0-9]*\) .*/\1/p' "$DIR/$label.txt" | tail -n 1)
      [ "${rc:-0}" != 0 ] || continue
      if ! sanitizer=$(cuda_tool compute-sanitizer); then
        fail "tests/$label-memcheck" "compute-sanitizer not found"
        continue
      fi
      local filters=()
      [[ $spec != *:* ]] || IFS=, read -r -a filters <<<"${spec#*:}"
      step "tests/$label-memcheck" "$DIR/$label-memcheck.txt" 500 \
        "$sanitizer" --tool memcheck --print-limit 10 "$BINS/${spec%%:*}" "${filters[@]}" --test-threads 4
      show "$DIR/$label-memcheck.txt" 'Invalid|ERROR SUMMARY|kernel|Address' | head -40
    done
  fi
  test_summary "${labels[@]}" >"$DIR/tests.txt"
  cat "$DIR/tests.txt"
  [ "$verify" = 0 ] || show "$DIR/verify.txt" 'sequences|^rc='
}

# verify_into FOLDER [ARGS...]: heatlab verify on CUDA into FOLDER/verify.txt (physics.txt with
# --physics) and its JSON beside.
verify_into() {
  local folder=$1 name=verify args=()
  shift
  args=("$@")
  [[ " ${args[*]} " == *" --physics "* ]] && name=physics
  [[ " ${args[*]} " == *" --backend "* ]] || args+=(--backend cuda)
  [[ " ${args[*]} " == *" --sequences "* || $name == physics ]] || args+=(--sequences 500)
  [[ " ${args[*]} " == *" --json "* ]] || args+=(--json "$folder/$name.json")
  step "${folder#"$RESULTS"/}/$name" "$folder/$name.txt" 400 "$HL" verify "${args[@]}"
}

cmd_verify() {
  require verify heatlab || return 0
  verify_into "$DIR" "$@"
  show "$DIR/verify.txt" 'sequences|^rc='
  show "$DIR/physics.txt" 'passed|failed|^rc='
}

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

cmd_display() {
  local base='' sizes=2000,8192 round
  while [ $# -gt 0 ]; do
    case $1 in
      --base) base=$(cd "${2:?--base DIR}" && pwd); shift 2 ;;
      --sizes) sizes=${2:?--sizes LIST}; shift 2 ;;
      *) die_usage "display: unknown argument $1" ;;
    esac
  done
  require display heatlab || return 0
  if [ -z "$base" ]; then
    bench_into bench_display --display 512 --sizes "$sizes"
    cat "$DIR/bench_display.txt"
    return 0
  fi
  [ -x "$base/heatlab" ] || { fail display "$base/heatlab is missing"; return 0; }
  for round in 1 2; do
    step "${DIR#"$RESULTS"/}/base-$round" "$DIR/bench_display_base$round.txt" 450 env \
      HEATLAB_BIN="$base/heatlab" "$base/heatlab" bench --display 512 --sizes "$sizes" \
      --json "$DIR/bench_display_base$round.json"
    bench_into "bench_display$round" --display 512 --sizes "$sizes"
  done
  show "$DIR/bench_display_base1.txt" . | head -40
  show "$DIR/bench_display1.txt" . | head -40
}

# measure LABEL LOG BINS TEST ENV...: one of the gui executable's measure tests.
measure() {
  local label=$1 log=$2 bins=$3 test=$4
  shift 4
  echo "=== $label" >>"$log"
  step "${DIR#"$RESULTS"/}/$label" "$log" 150 env HEATLAB_BIN="$bins/heatlab" "$@" \
    "$bins/gui" "measure::$test" --exact --ignored --nocapture
}

# measure_rounds LOG BINS PREFIX: the frame loop without and with the overlays (a scenario) or
# once (the plate), each also with the live agreement check when asked.
measure_rounds() {
  local log=$1 bins=$2 prefix=$3 overlays check
  local checks=(0)
  [ "$AGREEMENT" = 0 ] || checks=(0 1)
  for overlays in $OVERLAYS; do
    for check in "${checks[@]}"; do
      measure "${prefix}overlays$overlays-agreement$check" "$log" "$bins" measure_animation \
        "${MEASURE_ENV[@]}" HEATLAB_MEASURE_OVERLAYS="$overlays" HEATLAB_MEASURE_AGREEMENT="$check"
    done
  done
}

cmd_app_share() {
  local seconds=8 scenario=$REPO/benches/scenarios/heat-sink-2000.toml plate='' size=2000
  local regeneration=0 base='' round
  AGREEMENT=0
  while [ $# -gt 0 ]; do
    case $1 in
      --seconds) seconds=${2:?--seconds S}; shift 2 ;;
      --scenario) scenario=$(cd "$(dirname "${2:?--scenario FILE}")" && pwd)/$(basename "$2"); shift 2 ;;
      --plate) plate=${2:?--plate N}; shift 2 ;;
      --size) size=${2:?--size N}; shift 2 ;;
      --agreement) AGREEMENT=1; shift ;;
      --regeneration) regeneration=1; shift ;;
      --base) base=$(cd "${2:?--base DIR}" && pwd); shift 2 ;;
      *) die_usage "app-share: unknown argument $1" ;;
    esac
  done
  require app-share heatlab gui || return 0
  MEASURE_ENV=(HEATLAB_MEASURE_AUTO=1 HEATLAB_MEASURE_SECONDS="$seconds")
  OVERLAYS="0 1"
  if [ -n "$plate" ]; then
    size=$plate
    MEASURE_ENV+=(HEATLAB_MEASURE_SIZE="$plate")
    OVERLAYS=0
  else
    MEASURE_ENV+=(HEATLAB_MEASURE_SCENARIO="$scenario")
  fi
  # The kernels' bench rates at the same size, in the same call.
  bench_into bench --sizes "$size" --no-numpy --no-field
  if [ -z "$base" ]; then
    measure_rounds "$DIR/gui_measure.txt" "$BINS" ""
  else
    if [ ! -x "$base/gui" ] || [ ! -x "$base/heatlab" ]; then
      fail app-share "$base/gui or $base/heatlab is missing"
      return 0
    fi
    for round in 1 2; do
      measure_rounds "$DIR/ab_old_new.txt" "$base" "old-round$round-"
      measure_rounds "$DIR/ab_old_new.txt" "$BINS" "new-round$round-"
    done
  fi
  if [ "$regeneration" = 1 ]; then
    measure regeneration "$DIR/regeneration.txt" "$BINS" measure_live_regeneration \
      HEATLAB_MEASURE_SIZE="$size"
  fi
  show "$DIR/bench.txt" 'copy|materials-vec4|<- used'
  show "$DIR/gui_measure.txt" '^===|heatlab gui measure'
  show "$DIR/ab_old_new.txt" '^===|heatlab gui measure'
  show "$DIR/regeneration.txt" 'heatlab gui measure'
}

cmd_gif() {
  require gif heatlab || return 0
  step gif "$DIR/gif.txt" 90 "$HL" run --backend cuda --size 512 --steps 2000 \
    --video "$WORK/run.gif" --video-every 100 --out "$WORK/gif-run"
  { ls -la "$WORK/run.gif" 2>&1 || true; } >>"$DIR/gif.txt"
  cat "$DIR/gif.txt"
}

cmd_scenario() {
  local scenarios=("$@") scenario arg label backend field same differ
  [ ${#scenarios[@]} -gt 0 ] || scenarios=(assets/scenarios/composite-wall.toml fin)
  require scenario heatlab || return 0
  for scenario in "${scenarios[@]}"; do
    arg=$scenario
    [ ! -f "$REPO/$scenario" ] || arg=$REPO/$scenario
    [ ! -f "$scenario" ] || arg=$(cd "$(dirname "$scenario")" && pwd)/$(basename "$scenario")
    label=$(basename "$scenario" .toml)
    for backend in cuda cpu; do
      step "${DIR#"$RESULTS"/}/$label-$backend" "$DIR/$label.txt" 120 "$HL" run --scenario "$arg" \
        --backend "$backend" --out "$WORK/$label-$backend" --npy
    done
    same=0 differ=0
    for field in "$WORK/$label-cuda"/field_*.npy; do
      [ -e "$field" ] || continue
      if cmp "$field" "$WORK/$label-cpu/$(basename "$field")" >>"$DIR/$label.txt" 2>&1; then
        same=$((same + 1))
      else
        differ=$((differ + 1))
      fi
    done
    echo "$label: $same fields identical on CUDA and the CPU, $differ different" | tee -a "$DIR/$label.txt"
    if [ "$differ" != 0 ] || [ "$same" = 0 ]; then
      fail "${DIR#"$RESULTS"/}/$label" "$differ fields differ, $same identical"
    fi
  done
}

cmd_basics() {
  local lesson
  require basics heatlab || return 0
  run_test core:basics::
  run_test gui:basics::
  for lesson in max geometry sin-exp row-sums reduce device; do
    run_logged "${DIR#"$RESULTS"/}/$lesson.json" "$DIR/$lesson.json" "$DIR/$lesson.err" 120 \
      "$HL" kernel "$lesson" --backend cuda --json
    step "${DIR#"$RESULTS"/}/$lesson" "$DIR/tables.txt" 120 "$HL" kernel "$lesson" --backend cuda
  done
  step "${DIR#"$RESULTS"/}/geometry-2d" "$DIR/tables.txt" 120 "$HL" kernel geometry --dims 2 \
    --rows 256 --cols 256 --block 16x16 --backend cuda
  step "${DIR#"$RESULTS"/}/geometry-2d-x-along-cols" "$DIR/tables.txt" 120 "$HL" kernel geometry \
    --dims 2 --rows 256 --cols 256 --block 16x16 --x-along-cols --backend cuda
  step "${DIR#"$RESULTS"/}/geometry-unguarded" "$DIR/tables.txt" 120 "$HL" kernel geometry \
    --n 1000 --grid 4 --unguarded --backend cuda
  step "${DIR#"$RESULTS"/}/geometry-2d-unguarded" "$DIR/tables.txt" 120 "$HL" kernel geometry \
    --dims 2 --block 8x8 --grid 3x4 --unguarded --backend cuda
  bench_into bench_basics --basics 32,64,128,256
  test_summary core-basics__ gui-basics__
  cat "$DIR/tables.txt" "$DIR/bench_basics.txt"
}

cmd_screenshots() {
  local suffix=${1:-}
  if [ -z "$suffix" ]; then
    suffix=$(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -n 1 |
      grep -oiE '\b[a-z][0-9]{2,3}\b' | head -n 1 | tr '[:upper:]' '[:lower:]' || true)
    suffix=${suffix:-gpu}
  fi
  require screenshots heatlab basics_screenshots lab_screenshots || return 0
  step "${DIR#"$RESULTS"/}/basics_screenshots" "$DIR/screenshots.txt" 300 \
    "$BINS/basics_screenshots" "$DIR" "$suffix"
  step "${DIR#"$RESULTS"/}/lab_screenshots" "$DIR/screenshots.txt" 300 "$BINS/lab_screenshots" "$DIR"
  cat "$DIR/screenshots.txt"
}

# kernel_json NAME ARGS...: heatlab kernel ARGS --json into NAME.json, its timings into NAME.csv.
kernel_json() {
  local name=$1
  shift
  run_logged "${DIR#"$RESULTS"/}/$name" "$DIR/$name.json" "$DIR/$name.err" 120 env RUST_LOG=info \
    "$HL" kernel "$@" --backend cuda --json --timings "$DIR/$name.csv"
}

cmd_tutorial() {
  local args
  require tutorial heatlab || return 0
  run_test core:tutorial::
  run_test gui:tutorial::
  run_test heatlab_engine:tutorial::
  test_summary core-tutorial__ gui-tutorial__ heatlab_engine-tutorial__
  show "$DIR/core-tutorial__.txt" 'max \|gpu'
  kernel_json hidden_1M hidden-layer --n 1000000 --repeat 7
  kernel_json gaussian_100M gaussian --n 100000000 --repeat 7
  kernel_json pi_1M mc-pi --n 1000000 --repeat 7
  kernel_json pi_1e10 mc-pi --n 1e10 --repeat 3 --cpu all-threads
  for args in "hidden-layer --n 1000" "hidden-layer --n 100000" "gaussian --n 10000" \
    "gaussian --n 1000000" "hidden-layer --n 1000000" "gaussian --n 100000000" \
    "mc-pi --n 1000000" "mc-pi --n 1e10 --cpu all-threads" "mc-pi --n 1e11 --cpu skip"; do
    # shellcheck disable=SC2086 # the arguments are split on purpose
    step "${DIR#"$RESULTS"/}/table $args" "$DIR/tables.txt" 90 "$HL" kernel $args --repeat 3 --backend cuda
  done
  cat "$DIR/tables.txt"
  { python3 -c "import numba, numpy; print(numba.__version__, numpy.__version__)" 2>&1 || true; } \
    >"$DIR/numba_version.txt"
  run_logged "${DIR#"$RESULTS"/}/numba" "$DIR/numba_stdout.json" "$DIR/numba.err" 150 \
    env PYTHONUNBUFFERED=1 python3 "$REPO/benches/seed_numba_tutorial.py" --out "$DIR/numba.json"
  tail -n 5 "$DIR/numba.err"
}

cmd_pi() {
  local name
  require pi heatlab || return 0
  run_test heatlab_engine:mc_pi
  run_test core:tutorial::
  test_summary heatlab_engine-mc_pi core-tutorial__
  show "$DIR/core-tutorial__.txt" 'Monte Carlo kernel'
  pi_run() {
    local name=$1
    shift
    run_logged "${DIR#"$RESULTS"/}/$name" "$DIR/$name" "$DIR/$name.stderr" 180 env RUST_LOG=info \
      "$HL" kernel mc-pi "$@"
  }
  pi_run mc_pi_1e10.txt --n 1e10 --repeat 7 --cpu skip
  pi_run mc_pi_1e10.json --n 1e10 --repeat 7 --cpu skip --json
  pi_run mc_pi_1e11.txt --n 1e11 --repeat 3 --cpu skip
  pi_run mc_pi_1e9_cpu.txt --n 1e9 --repeat 1 --cpu all-threads
  for name in mc_pi_1e10.txt mc_pi_1e11.txt mc_pi_1e9_cpu.txt; do
    echo "== $name"
    show "$DIR/$name.stderr" 'samples in' | sed 's/.*\] //'
    show "$DIR/$name" '^result|device-resident \(kernel|max \|GPU|GPU kernel|^samples/s'
    show "$DIR/$name.stderr" '^rc='
  done
}

cmd_variants() {
  require variants tutorial_variants || return 0
  step "${DIR#"$RESULTS"/}/variants" "$DIR/variants.txt" 120 "$BINS/tutorial_variants" \
    "$REPO/benches/tutorial_variants/variants.cu"
  show "$DIR/variants.txt" '^pi n=|^hidden n=1000000 |^gaussian|^copy|^rc='
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

cmd_all() {
  run_subcommand tests --verify 500
  run_subcommand verify --physics
  local name
  for name in bench tiled speed display app-share gif scenario basics screenshots tutorial pi variants; do
    run_subcommand "$name"
  done
}

# run_subcommand NAME [ARGS...]: NAME's folder under the results, then NAME.
run_subcommand() {
  local name=$1 folder n=2
  shift
  if [ "$name" = all ]; then
    cmd_all "$@"
    return 0
  fi
  folder=$RESULTS/$name
  while [ -e "$folder" ]; do
    folder=$RESULTS/$name-$n
    n=$((n + 1))
  done
  mkdir -p "$folder"
  DIR=$folder
  echo "=== $name $* -> $folder"
  "cmd_${name//-/_}" "$@"
}

# The binaries folder, unpacked first when it holds only bins.tar.xz.
find_bins() {
  BINS=${HEATLAB_GPU_BINS:-$REPO/.gpu}
  [ -d "$BINS" ] || die_usage "no binaries folder $BINS (see the top of benches/gpu.sh)"
  BINS=$(cd "$BINS" && pwd)
  if [ ! -x "$BINS/heatlab" ] && [ -f "$BINS/bins.tar.xz" ]; then
    mkdir -p "$WORK/bins"
    tar -xJf "$BINS/bins.tar.xz" -C "$WORK/bins"
    BINS=$WORK/bins
    if [ ! -x "$BINS/heatlab" ] && [ -d "$BINS/bin" ]; then BINS=$BINS/bin; fi
  fi
  HL=$BINS/heatlab
  export HEATLAB_BIN=$HL HEATLAB_REQUIRE_CUDA=1
}

machine_info() {
  {
    date -u
    nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm,clocks.max.mem \
      --format=csv 2>&1 || echo "no nvidia-smi"
    echo "host cores: $(nproc)"
    echo "binaries: $BINS"
    if [ -f "$BINS/COMMIT" ]; then cat "$BINS/COMMIT"; else echo "commit built: unknown (no COMMIT file)"; fi
  } >"$RESULTS/machine.txt"
  cat "$RESULTS/machine.txt"
}

finish() {
  local status=$? entries=()
  if [ -n "$RESULTS" ] && [ -d "$RESULTS" ] && [ "$PACK" = 1 ]; then
    mapfile -t entries < <(cd "$RESULTS" && find . -mindepth 1 -maxdepth 1 ! -name results.tgz \
      ! -name summary.txt ! -name machine.txt -printf '%P\n')
    if [ ${#entries[@]} -gt 0 ]; then
      tar -czf "$RESULTS/results.tgz" -C "$RESULTS" "${entries[@]}" &&
        (cd "$RESULTS" && rm -rf -- "${entries[@]}")
    fi
  fi
  [ -z "$WORK" ] || rm -rf "$WORK"
  exit "$status"
}

# collect [--pack]: on the build machine, the binaries into the binaries folder.
cmd_collect() {
  local pack=0 dest target source executable name example files=()
  [ "${1:-}" != --pack ] || pack=1
  command -v cargo >/dev/null 2>&1 || die_usage "collect runs on the build machine (it needs cargo)"
  dest=${HEATLAB_GPU_BINS:-$REPO/.gpu}
  target=${CARGO_TARGET_DIR:-$REPO/target}
  cd "$REPO"
  cargo build --release
  cargo build --release --examples
  mkdir -p "$dest"
  find "$dest" -mindepth 1 -maxdepth 1 -type f -delete
  cp "$target/release/heatlab" "$dest/"
  for example in basics_screenshots lab_screenshots tutorial_variants; do
    cp "$target/release/examples/$example" "$dest/"
  done
  # Cargo names each test executable it built, as in
  # "Executable unittests src/lib.rs (target/release/deps/heatlab_engine-0123456789abcdef)".
  cargo test --release --no-run >"$dest/cargo-test.txt" 2>&1 || { cat "$dest/cargo-test.txt"; exit 1; }
  while IFS='|' read -r source executable; do
    [[ $executable == /* ]] || executable=$REPO/$executable
    name=$(basename "$executable")
    name=${name%-*}
    if [ "$name" = heatlab ]; then
      [[ $source != *main.rs ]] || continue # the binary's own unit tests: none
      name=heatlab_app
    fi
    cp "$executable" "$dest/$name"
  done < <(sed -n 's/^ *Executable \(.*\) (\(.*\))$/\1|\2/p' "$dest/cargo-test.txt")
  rm -f "$dest/cargo-test.txt"
  {
    echo "commit built: $(git rev-parse HEAD)"
    if [ -n "$(git status --porcelain --untracked-files=no)" ]; then echo "with uncommitted changes"; fi
  } >"$dest/COMMIT"
  mapfile -t files < <(cd "$dest" && ls)
  for name in "${files[@]}"; do
    [ "$name" = COMMIT ] || strip "$dest/$name" 2>/dev/null || true
  done
  if [ "$pack" = 1 ]; then
    tar -cJf "$dest/bins.tar.xz" -C "$dest" "${files[@]}" && (cd "$dest" && rm -f -- "${files[@]}")
  fi
  echo "collected into $dest: ${files[*]}"
  du -sh "$dest"
}

main() {
  local token known=() args=()
  [ $# -gt 0 ] || { usage >&2; exit 2; }
  case $1 in
    -h | --help | help) usage; exit 0 ;;
    collect) shift; cmd_collect "$@"; exit 0 ;;
  esac
  # Every subcommand's name is checked before anything runs.
  for token in + "$@"; do
    if [ ${#known[@]} -gt 0 ] && [ "${known[-1]}" = + ]; then
      [ "$token" != + ] || die_usage "an empty subcommand between two '+'"
      [[ $SUBCOMMANDS == *" $token "* ]] || { usage >&2; die_usage "unknown subcommand '$token'"; }
    fi
    known+=("$token")
  done
  [ "${known[-1]}" != + ] || die_usage "nothing after the last '+'"

  WORK=$(mktemp -d /tmp/heatlab-gpu.XXXXXX)
  if [ -n "${HEATLAB_GPU_RESULTS:-}" ]; then
    RESULTS=$HEATLAB_GPU_RESULTS
    PACK=${HEATLAB_GPU_PACK:-0}
  elif [ -n "${OUT:-}" ]; then
    RESULTS=$OUT
    PACK=${HEATLAB_GPU_PACK:-1}
  else
    RESULTS=./bench-out
    PACK=${HEATLAB_GPU_PACK:-0}
  fi
  trap finish EXIT
  mkdir -p "$RESULTS"
  RESULTS=$(cd "$RESULTS" && pwd)
  find_bins
  machine_info
  for token in "$@" +; do
    if [ "$token" = + ]; then
      run_subcommand "${args[@]}"
      args=()
    else
      args+=("$token")
    fi
  done
  echo "=== summary ($RESULTS/summary.txt)"
  cat "$RESULTS/summary.txt"
  if grep -qvE ' rc=0 seconds=' "$RESULTS/summary.txt"; then
    exit 1
  fi
}

main "$@"
