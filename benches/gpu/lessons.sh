# shellcheck shell=bash
# Part of benches/gpu.sh (sourced by it, never run alone): the tutorial kernels and the GPU basics (subcommands basics, screenshots, tutorial, pi, variants).

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
