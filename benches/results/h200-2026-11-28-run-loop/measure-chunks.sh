#!/bin/bash
set -u
B=/tmp/bins; mkdir -p $B
[ -x $B/heatlab ] || tar -xJf .gpu/bins.tar.xz -C $B heatlab
[ -x $B/heatlab-before ] || { xz -dc .gpu/heatlab-before.xz > $B/heatlab-before; chmod +x $B/heatlab-before; }
S=benches/scenarios/heat-sink-4096.toml
for spec in "after 120000 1000" "after 120000 10000" "after 220000 1000" "before 120000 10000" "before 220000 1000"; do
  set -- $spec; which=$1; steps=$2; chunk=$3
  bin=$B/heatlab; [ $which = before ] && bin=$B/heatlab-before
  d=/tmp/m2-$which-$steps-$chunk; rm -rf $d
  s=$(date +%s.%N)
  $bin run --scenario $S --steps $steps --chunk $chunk --backend cuda --out $d >/dev/null 2>>$OUT/m2-logs.txt
  e=$(date +%s.%N)
  python3 - "$d/run.json" $which $steps $chunk $s $e >> $OUT/m2.txt <<'PY'
import json, sys
p, which, steps, chunk, s, e = sys.argv[1:]
r = json.load(open(p))
print(which, steps, "chunk", chunk, "wall_s %.3f" % (float(e) - float(s)), "json_wall_s %.3f" % r["wall_seconds"],
      "stepping_s %.3f" % r["stepping_seconds"], "stepping_steps_per_s %.0f" % r["steps_per_s"])
PY
done
cp /tmp/m2-after-120000-1000/timings.csv $OUT/m2-after-timings.csv
ls -la /tmp/m2-after-120000-1000 > $OUT/m2-files.txt
cat $OUT/m2.txt
