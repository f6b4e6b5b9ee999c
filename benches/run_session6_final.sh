#!/usr/bin/env bash
# The closing device calls of the session, in two parts (each under the 10-minute limit):
#   part tests: every test executable under HEATLAB_REQUIRE_CUDA=1 (benches/run_tests_on_gpu.sh,
#               the executables side by side) while 500 verify sequences run beside them;
#   part bench: alone on the GPU, `heatlab bench --display 512` at 2000² and 8192², the bench's
#               material rows at 2000², the app's frame loop on the 2000x2000 heat sink with and
#               without the overlays, and a GIF recorded by `heatlab run` on CUDA;
#   part booked: after a change to the energy booking, the gpu test executable under
#               HEATLAB_REQUIRE_CUDA=1 and 300 verify sequences, then part bench.
# Binaries come packed in .gpu.pack/bins.tar.xz (benches/run_tests_on_gpu.sh --pack).
set -u
repo=$(pwd)
part=${1:?part: tests or bench}
bins=/tmp/heatlab-final-bins
rm -rf "$bins" && mkdir -p "$bins" && tar -xJf .gpu.pack/bins.tar.xz -C "$bins" || exit 1
export HEATLAB_BIN=$bins/bin/heatlab
case $part in
booked)
  (cd /tmp && HEATLAB_REQUIRE_CUDA=1 timeout 200 "$bins/bin/gpu" > "$OUT/test-gpu.txt" 2>&1; echo "rc=$?" >> "$OUT/test-gpu.txt")
  (cd /tmp && timeout 150 "$HEATLAB_BIN" verify --backend cuda --sequences 300 > "$OUT/verify.txt" 2>&1; echo "rc=$?" >> "$OUT/verify.txt")
  bash "$0" bench
  ;;
tests)
  (cd /tmp && timeout 400 "$HEATLAB_BIN" verify --backend cuda --sequences 500 --json "$OUT/verify.json" > "$OUT/verify.txt" 2>&1; echo "rc=$?" >> "$OUT/verify.txt") &
  HEATLAB_TEST_TIMEOUT=450 bash benches/run_tests_on_gpu.sh "$bins/bin"
  wait
  ;;
bench)
  cd /tmp || exit 1
  nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv > "$OUT/nvidia-smi.txt" 2>&1
  timeout 150 "$HEATLAB_BIN" bench --display 512 --sizes 2000,8192 --json "$OUT/bench_display.json" > "$OUT/bench_display.txt" 2>&1; echo "rc=$?" >> "$OUT/bench_display.txt"
  timeout 150 "$HEATLAB_BIN" bench --sizes 2000 --no-numpy --no-field --json "$OUT/bench.json" > "$OUT/bench.txt" 2>&1; echo "rc=$?" >> "$OUT/bench.txt"
  export HEATLAB_MEASURE_SCENARIO=$repo/benches/scenarios/heat-sink-2000.toml HEATLAB_MEASURE_AUTO=1 HEATLAB_MEASURE_SECONDS=8
  {
    echo "=== heat sink 2000x2000, no overlays"
    timeout 90 "$bins/bin/gui" measure::measure_animation --exact --ignored --nocapture 2>&1 | grep "heatlab gui measure"
    echo "=== heat sink 2000x2000, isotherms and arrows"
    HEATLAB_MEASURE_OVERLAYS=1 timeout 90 "$bins/bin/gui" measure::measure_animation --exact --ignored --nocapture 2>&1 | grep "heatlab gui measure"
  } > "$OUT/gui_measure.txt" 2>&1
  unset HEATLAB_MEASURE_SCENARIO HEATLAB_MEASURE_AUTO HEATLAB_MEASURE_SECONDS
  {
    timeout 60 "$HEATLAB_BIN" run --backend cuda --size 512 --steps 2000 --video /tmp/run.gif --video-every 100 --out /tmp/gif-run; echo "rc=$?"
    ls -la /tmp/run.gif
  } > "$OUT/gif.txt" 2>&1
  ;;
esac
