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

# The subcommands, one file a group in benches/gpu/.
# shellcheck source=gpu/tests.sh
source "$REPO/benches/gpu/tests.sh"
# shellcheck source=gpu/kernels.sh
source "$REPO/benches/gpu/kernels.sh"
# shellcheck source=gpu/app.sh
source "$REPO/benches/gpu/app.sh"
# shellcheck source=gpu/lessons.sh
source "$REPO/benches/gpu/lessons.sh"
# shellcheck source=gpu/collect.sh
source "$REPO/benches/gpu/collect.sh"

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
