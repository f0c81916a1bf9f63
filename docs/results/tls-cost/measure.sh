#!/bin/bash
# The cost of TLS on the testbed: put, get and a TCP Camdoop WordCount (R=2) of one file, in alternating pairs, on two
# 2x2x2 testbeds brought up side by side: one by a camdoop built without TLS (BASE, e.g. a checkout of the commit
# before it), one by this one (TLS). Needs root.
#   BASE=/path/to/base/camdoop TLS=./camdoop ROUNDS=6 docs/results/tls-cost/measure.sh > docs/results/tls-cost/results.csv
set -euo pipefail
: "${BASE:?set BASE to a camdoop built without TLS}"
TLS=${TLS:-./camdoop}
ROUNDS=${ROUNDS:-6}
FILE=${FILE:-/tmp/camdoop-tls-cost.txt}
[ -f "$FILE" ] || head -c 48000000 /dev/urandom | base64 -w 100 > "$FILE"
"$BASE" testbed up --torus 2x2x2 --prefix cdtb --subnet 232 >&2
"$TLS" testbed up --torus 2x2x2 --prefix cdts --subnet 233 >&2
seconds() { local s e; s=$(date +%s.%N); "$@" >/dev/null; e=$(date +%s.%N); echo "$e - $s" | bc; }
echo "round,side,bytes,put_s,get_s,tcp_wordcount_s"
for i in $(seq 1 "$ROUNDS"); do
  for side in base tls; do
    if [ $side = base ]; then C=$BASE; FE=10.232.0.1:7070; else C=$TLS; FE=10.233.0.1:7070; fi
    echo "round $i/$ROUNDS: $side" >&2
    put=$(seconds "$C" put "$FILE" --name f$i --frontend $FE)
    get=$(seconds "$C" get f$i --out "$FILE.back" --frontend $FE)
    cmp -s "$FILE" "$FILE.back" || { echo "get returned other bytes ($side)" >&2; exit 1; }
    job=$(seconds "$C" submit --job wordcount --input f$i --reducers 2 --mode tcp --wait --frontend $FE)
    echo "$i,$side,$(stat -c %s "$FILE"),$put,$get,$job"
  done
done
"$BASE" testbed down --prefix cdtb >&2
"$TLS" testbed down --prefix cdts >&2
