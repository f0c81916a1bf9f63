#!/bin/bash
# Time to restore three replicas after a server dies, on a 3x3x3 testbed: store a dataset, kill server 1,1,1 for
# good, and poll `camdoop fsck` until nothing is under-replicated. Needs root.
#   CAMDOOP=./camdoop MB=256 GRACE=10 docs/results/rereplication/measure.sh > docs/results/rereplication/results.csv
set -euo pipefail
C=${CAMDOOP:-./camdoop}
MB=${MB:-256}
GRACE=${GRACE:-10}
FILE=${FILE:-/tmp/camdoop-rereplication.txt}
[ -f "$FILE" ] || head -c $((MB * 1024 * 1024 * 3 / 4)) /dev/urandom | base64 -w 100 > "$FILE"
"$C" testbed down --prefix cdrm >/dev/null 2>&1 || true
"$C" testbed up --prefix cdrm --subnet 215 --torus 3x3x3 --rereplicate-after "${GRACE}s" --no-warm-up >&2
FE=10.215.0.1:7070
"$C" put "$FILE" --name data --frontend $FE >&2
sleep $((GRACE + 5))   # every server past its start delay
held=$(cat /var/lib/camdoop/testbed-cdrm/1-1-1/chunks/*.data | wc -c)
"$C" testbed kill 1,1,1 --prefix cdrm >&2
start=$(date +%s.%N)
while true; do
  json=$("$C" fsck --json --frontend $FE 2>/dev/null || true)
  under=$(echo "$json" | python3 -c 'import json,sys; print(json.load(sys.stdin)["underReplicated"])' 2>/dev/null || echo -1)
  now=$(date +%s.%N)
  echo "t=$(echo "$now - $start" | bc) underReplicated=$under" >&2
  [ "$under" = "0" ] && break
  sleep 0.5
done
total=$(echo "$now - $start" | bc)
echo "dataset_bytes,lost_server_bytes,grace_s,kill_to_restored_s"
echo "$(stat -c %s "$FILE"),$held,$GRACE,$total"
"$C" testbed down --prefix cdrm >&2
