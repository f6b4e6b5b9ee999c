#!/bin/bash
# Issue 11, items 2 and 4 (tutorial helper): run from the repository root on the H100 with
#   bash -c 'X=/tmp/tutorial-x; rm -rf $X; mkdir -p $X; tar xJf .gpu-tutorial/bundle.tar.xz -C $X && bash $X/run.sh'
# Two builds of branch `tutorial`: pcg/ (PCG32, the branch's head) and philox7/ (the commit
# before it, Philox4x32-7), each: the tutorial test executables under HEATLAB_REQUIRE_CUDA=1 and
# `heatlab kernel` for each kernel; plus the candidate-kernel harness. Everything goes into one
# archive, $OUT/tutorial-results.tar.xz (a call brings back only a few files), and a summary
# is printed.
X=/tmp/tutorial-x; R=$X/results; rm -rf $R; mkdir -p $R; cd $X
{ date -u; nvidia-smi; nvidia-smi --query-gpu=name,clocks.max.sm,clocks.sm,pcie.link.gen.current,pcie.link.width.current --format=csv; } > $R/device.txt 2>&1
timeout 40 ./tutorial_variants ./variants.cu > $R/variants.txt 2>&1; echo "rc=$?" >> $R/variants.txt
for build in pcg philox7; do
  B=$X/$build; O=$R/$build; mkdir -p $O; cp $B/COMMIT $O/
  export HEATLAB_REQUIRE_CUDA=1 HEATLAB_BIN=$B/heatlab
  (cd /tmp && timeout 90 $B/tutorial > $O/test_tutorial.txt 2>&1; echo "rc=$?" >> $O/test_tutorial.txt)
  (cd /tmp && timeout 30 $B/gui_tutorial > $O/test_gui_tutorial.txt 2>&1; echo "rc=$?" >> $O/test_gui_tutorial.txt)
  (cd /tmp && timeout 15 $B/libtests > $O/test_lib.txt 2>&1; echo "rc=$?" >> $O/test_lib.txt)
  k() { local name=$1; shift; RUST_LOG=info timeout 40 $B/heatlab kernel "$@" > $O/$name 2> $O/$name.stderr; echo "rc=$?" >> $O/$name.stderr; }
  k hidden_layer_1M.txt hidden-layer --n 1000000 --repeat 20 --cpu all-threads
  k hidden_layer_1M.json hidden-layer --n 1000000 --repeat 20 --cpu all-threads --json
  k gaussian_100M.txt gaussian --n 100000000 --repeat 5 --cpu all-threads
  k gaussian_100M.json gaussian --n 100000000 --repeat 10 --cpu all-threads --json
  k mc_pi_1e10.txt mc-pi --n 1e10 --repeat 5 --cpu skip
  k mc_pi_1e10.json mc-pi --n 1e10 --repeat 10 --cpu skip --json
  k mc_pi_1e10_cpu.json mc-pi --n 1e10 --repeat 1 --cpu all-threads --json
done
date -u >> $R/device.txt
tar cJf $OUT/tutorial-results.tar.xz -C $X results
for build in pcg philox7; do
  O=$R/$build; echo "== $build $(cat $O/COMMIT)"
  grep -h "test result\|rc=" $O/test_*.txt
  grep -h "monte_carlo_pi" $O/mc_pi_1e10.txt.stderr
  grep -h "device-resident (kernel\|pinned host arrays (total)\|chunks on\|max |GPU\|pinned results\|GPU kernel" $O/*.txt
  grep -h -A2 '"gpu_device_resident"' $O/mc_pi_1e10.json | head -3
  grep -h '"max_abs_difference_gpu_cpu"\|"inside"' $O/mc_pi_1e10_cpu.json
done
grep -h "^pi n=\|^hidden n=1000000 \|^gaussian\|^copy" $R/variants.txt
