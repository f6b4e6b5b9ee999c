#!/usr/bin/env bash
# Every test executable on the GPU machine under HEATLAB_REQUIRE_CUDA=1 (a test that needs CUDA
# fails there instead of saying "skipped"), each started from /tmp so that none reads the source
# tree, with its log in $OUT/tests/NAME.txt and one summary in $OUT/tests.txt.
#
#   benches/run_tests_on_gpu.sh [PACK.tar.xz | FOLDER | EXECUTABLE...]
#
# With no argument the executables come from .gpu.pack/bins.tar.xz: `heatlab` and the test
# executables (core, gpu, cli, gui, and `lib`: the library's unit tests), stripped, under
# bin/ in the archive. Make that pack on the
# build machine with
#
#   benches/run_tests_on_gpu.sh --pack
#
# which builds the release tests, copies each test executable under its target's name, and
# writes .gpu.pack/bins.tar.xz. A folder is taken as the unpacked bin/; `heatlab` in it (or
# HEATLAB_BIN) is the binary under test and is not run as a test.
#
# Test threads: HEATLAB_TEST_THREADS_<name> (for example HEATLAB_TEST_THREADS_core=4), else
# HEATLAB_TEST_THREADS, else 1 for `gpu` and `gui` (several app simulations sharing one CUDA
# context in parallel crashed there) and the harness's default for the rest. Each executable
# gets HEATLAB_TEST_TIMEOUT seconds (default 540, under the device's 10 minutes a command).
# The exit status is 1 when any executable failed.
set -u

if [ "${1:-}" = "--pack" ]; then
  cd "$(dirname "$0")/.." || exit 1
  out=.gpu.pack
  rm -rf "$out/bin" && mkdir -p "$out/bin" || exit 1
  # Cargo names each test executable it built, with its target's name, in its JSON messages.
  cargo test --release --no-run --message-format=json 2>/dev/null |
    grep '"profile":{[^}]*"test":true' |
    sed -n 's/.*"target":{[^}]*"kind":\["\([a-z]*\)"\][^}]*"name":"\([^"]*\)".*"executable":"\([^"]*\)".*/\1 \2 \3/p' |
    while read -r kind name executable; do
      case $kind in
        test) cp "$executable" "$out/bin/$name" ;;
        lib) cp "$executable" "$out/bin/lib" ;;
      esac
    done
  cargo build --release --bin heatlab 2>/dev/null && cp "${CARGO_TARGET_DIR:-target}/release/heatlab" "$out/bin/"
  strip "$out"/bin/* && tar -cJf "$out/bins.tar.xz" -C "$out" bin && rm -rf "$out/bin" || exit 1
  echo "packed: $(tar -tJf "$out/bins.tar.xz" | tr '\n' ' ')"
  exit 0
fi

: "${OUT:?OUT must name the folder for the logs}"
mkdir -p "$OUT/tests"
bins=/tmp/heatlab-test-bins
executables=()
if [ $# = 0 ]; then
  set -- .gpu.pack/bins.tar.xz
fi
if [ $# = 1 ] && [ -f "$1" ] && [[ "$1" == *.tar.xz ]]; then
  rm -rf "$bins" && mkdir -p "$bins" && tar -xJf "$1" -C "$bins" || exit 1
  set -- "$bins/bin"
fi
if [ $# = 1 ] && [ -d "$1" ]; then
  folder=$(cd "$1" && pwd)
  for file in "$folder"/*; do
    [ -x "$file" ] && [ -f "$file" ] && [ "$(basename "$file")" != heatlab ] && executables+=("$file")
  done
  [ -x "$folder/heatlab" ] && export HEATLAB_BIN="${HEATLAB_BIN:-$folder/heatlab}"
else
  for file in "$@"; do executables+=("$(cd "$(dirname "$file")" && pwd)/$(basename "$file")"); done
fi
if [ ${#executables[@]} = 0 ]; then
  echo "no test executables found" >&2
  exit 1
fi
export HEATLAB_REQUIRE_CUDA=1
cd /tmp || exit 1
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv > "$OUT/nvidia-smi.txt" 2>&1

# One executable: its name without Cargo's hash, its threads, its log with its status.
run_one() {
  local executable=$1 name per_binary default threads log start rc
  name=$(basename "$executable")
  name=${name%%-*}
  per_binary="HEATLAB_TEST_THREADS_$name"
  case $name in gpu | gui) default=1 ;; *) default= ;; esac
  threads=${!per_binary:-${HEATLAB_TEST_THREADS:-$default}}
  local args=()
  [ -n "$threads" ] && args+=(--test-threads "$threads")
  log="$OUT/tests/$name.txt"
  echo "$executable ${args[*]+${args[*]}} (HEATLAB_BIN=${HEATLAB_BIN:-unset})" > "$log"
  start=$(date +%s)
  timeout --kill-after=10 "${HEATLAB_TEST_TIMEOUT:-540}" "$executable" ${args[@]+"${args[@]}"} >> "$log" 2>&1
  rc=$?
  # On a line of its own, even after a test cut off by the time limit.
  printf '\nrc=%s seconds=%s\n' "$rc" "$(($(date +%s) - start))" >> "$log"
  return $rc
}

# The executables run side by side (separate processes, each with its own CUDA context), as
# many at once as HEATLAB_TEST_JOBS says (default: all).
jobs_at_once=${HEATLAB_TEST_JOBS:-${#executables[@]}}
pids=()
for executable in "${executables[@]}"; do
  while [ "$(jobs -rp | wc -l)" -ge "$jobs_at_once" ]; do sleep 1; done
  run_one "$executable" &
  pids+=($!)
done
failed=0
for pid in "${pids[@]}"; do
  wait "$pid" || failed=1
done

for executable in "${executables[@]}"; do
  name=$(basename "$executable")
  name=${name%%-*}
  echo "=== $name"
  grep -E '^test result|^rc=|FAILED|panicked|skipped' "$OUT/tests/$name.txt"
done > "$OUT/tests.txt"
cat "$OUT/tests.txt"
exit $failed
