#!/bin/bash
# One-off: heatlab run --scenario at 4096x4096 on the GPU, the code before and after the run loop.
set -u
B=/tmp/bins; mkdir -p $B
tar -xJf .gpu/bins.tar.xz -C $B heatlab
xz -dc .gpu/heatlab-before.xz > $B/heatlab-before; chmod +x $B/heatlab-before
S=benches/scenarios/heat-sink-4096.toml
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv > $OUT/measure-machine.txt
for rep in 1 2; do for which in before after; do for steps in 20000 120000; do
  bin=$B/heatlab; [ $which = before ] && bin=$B/heatlab-before
  d=/tmp/run-$which-$steps-$rep; rm -rf $d
  s=$(date +%s.%N)
  $bin run --scenario $S --steps $steps --backend cuda --out $d >/dev/null 2>>$OUT/measure-logs.txt
  rc=$?
  e=$(date +%s.%N)
  python3 - "$d/run.json" $which $steps $rep $s $e $rc >> $OUT/measure.txt <<'PY'
import json, sys
p, which, steps, rep, s, e, rc = sys.argv[1:]
r = json.load(open(p))
b = r["problem"].get("budget")
print(which, steps, "rep", rep, "rc", rc, "wall_s %.3f" % (float(e) - float(s)),
      "json_wall_s %.3f" % r["wall_seconds"], "stepping_s %.3f" % r["stepping_seconds"],
      "stepping_steps_per_s %.0f" % r["steps_per_s"], "method", r["method"],
      "windows", len(r["problem"]["energy"]),
      "last_stored %.9e" % r["problem"]["energy"][-1]["stored_after"],
      "budget_rel %s" % (b["window"]["relative_closing_error"] if b else None))
PY
done; done; done
cat $OUT/measure.txt
