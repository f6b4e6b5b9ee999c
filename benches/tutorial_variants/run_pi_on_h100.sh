#!/bin/bash
# Issue 11, item 4 (Monte Carlo pi >= 1e12 samples/s): run on the GPU machine from the
# repository root, with the bundle of /work/notes/bundle.sh (heatlab, lib_tests and the test
# executables) carried along:
#   bash benches/tutorial_variants/run_pi_on_h100.sh .gpu/bundle.tar.xz
# Runs the tutorial tests under HEATLAB_REQUIRE_CUDA=1 (the GPU counts against the Python
# reference counts and the CPU's at awkward sizes and launch shapes), the MWC64X unit tests, and
# `heatlab kernel mc-pi` at 1e10 and 1e11 samples (GPU only) and 1e9 (GPU and all CPU threads,
# counts compared). RUST_LOG=info puts each candidate kernel's tuning time (2^27 samples) in the
# .stderr files. Everything goes to $OUT/pi/, and a summary to stdout.
set -u
BUNDLE=${1:-.gpu/bundle.tar.xz}
X=/tmp/pi-x
R=${OUT:-/tmp/pi-out}/pi
rm -rf "$X" && mkdir -p "$X" "$R" && tar xJf "$BUNDLE" -C "$X" || exit 1
export HEATLAB_REQUIRE_CUDA=1 HEATLAB_BIN=$X/heatlab
{ date -u; nvidia-smi --query-gpu=name,clocks.max.sm,clocks.sm,power.limit --format=csv; } > "$R/device.txt" 2>&1
t() { local name=$1; shift; (cd /tmp && timeout 180 "$@" > "$R/$name" 2>&1; echo "rc=$?" >> "$R/$name"); }
t test_tutorial.txt "$X/tutorial"
t test_gui_tutorial.txt "$X/gui_tutorial"
t test_lib_mc_pi.txt "$X/lib_tests" mc_pi
k() {
  local name=$1; shift
  (cd /tmp && RUST_LOG=info timeout 180 "$X/heatlab" kernel "$@" > "$R/$name" 2> "$R/$name.stderr"
   echo "rc=$?" >> "$R/$name.stderr")
}
k mc_pi_1e10.txt mc-pi --n 1e10 --repeat 7 --cpu skip
k mc_pi_1e10.json mc-pi --n 1e10 --repeat 7 --cpu skip --json
k mc_pi_1e11.txt mc-pi --n 1e11 --repeat 3 --cpu skip
k mc_pi_1e9_cpu.txt mc-pi --n 1e9 --repeat 1 --cpu all-threads
date -u >> "$R/device.txt"
cat "$R/device.txt"
grep -h "test result\|rc=" "$R"/test_*.txt
grep -h "Monte Carlo kernel" "$R/test_tutorial.txt"
for f in mc_pi_1e10.txt mc_pi_1e11.txt mc_pi_1e9_cpu.txt; do
  echo "== $f"
  grep -h "samples in" "$R/$f.stderr" | sed 's/.*\] //'
  grep -h "^result\|device-resident (kernel\|max |GPU\|GPU kernel\|^samples/s" "$R/$f"
  grep -h "rc=" "$R/$f.stderr"
done
