# shellcheck shell=bash
# Part of benches/gpu.sh (sourced by it, never run alone): the app's frame paths (subcommands display, app-share, gif, scenario).

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
