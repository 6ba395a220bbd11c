#!/usr/bin/env bash
# Speedscope gets samples in time order.  tests/bin/switcher
# alternates phase_a (100 ms) and phase_b (100 ms) on a fixed schedule.  In a
# 2 s profile written as speedscope, the worker thread's samples, read in
# order, must switch between the two phases about once per phase (not once
# in all, as one entry per unique stack would), and the weights must add up
# to the samples taken (one period each).
. "$(dirname "$0")/lib.sh"

start_target switcher 100000 100000 spin || done_testing
pid=$TARGET_PID
base=$TMP/order
prof "$base" "$pid" --duration 2 -o "$base.json"
check_ran "speedscope" "$base" "$base.json"
PY=$(cat <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
frames = [f["name"] for f in d["shared"]["frames"]]
period = 1e9 / 99
best = None
for p in d["profiles"]:
    seq = []
    for s in p["samples"]:
        names = [frames[i] for i in s]
        seq.append("a" if "phase_a" in names else "b" if "phase_b" in names else None)
    w = sum(p["weights"])
    ab = [x for x in seq if x]
    if not ab:
        continue
    switches = sum(1 for x, y in zip(ab, ab[1:]) if x != y)
    best = (switches, len(ab), round(w / period), p["name"])
print("%d %d %d %s" % best if best else "0 0 0 none")
PY
)
read -r switches entries periods name <<<"$(python3 -c "$PY" "$base.json" 2>&1)"
samples=$(summary_field "$base.err" samples)
diag "worker profile '$name': $entries entries in time order, $switches phase switches, $periods periods of weight; $samples samples in all"
DETAIL="$switches switches" check "the worker's samples are in time order (>= 10 phase switches in 2 s)" \
	"[ '${switches:-0}' -ge 10 ]"
DETAIL="$periods periods" check "weights add up to the worker's samples (about 2 s at 99 Hz)" \
	"[ '${periods:-0}' -ge 150 ] && [ '${periods:-0}' -le 220 ]"
stop_target "$pid"
done_testing
