#!/bin/bash
# The slowdown a running job sees while re-replication runs at a stated cap, on a 3x3x3 testbed. Stores a bulk
# dataset (what the copies move) and a text corpus (the job's input), runs WordCount alone RUNS times, then kills
# server 1,1,1 for good, starts the same job as soon as the grace period has passed, and once every chunk has three
# replicas again runs it RUNS times more on the 26 servers left: the servers the job had during the copies, without
# them. Every job's output (stored as a dataset) is read back and compared with the first run's.
# A reader of the servers' status.json files (rewritten every second) records when the copies ran. Needs root.
#   CAMDOOP=./camdoop RATE=50MB docs/results/rereplication/measure-job.sh >> docs/results/rereplication/job-slowdown.csv
# CSV on stdout: one row per job (phase alone | during | after).
set -euo pipefail
C=${CAMDOOP:-./camdoop}
RATE=${RATE:-50MB}
GRACE=${GRACE:-5}
BULK_MB=${BULK_MB:-2048}
INPUT=${INPUT:-4MB}
RUNS=${RUNS:-3}
PREFIX=cdrj
FE=10.221.0.1:7070
LOST=1,1,1
WORK=${WORK:-/tmp/camdoop-rerepl-job}
ROOT=/var/lib/camdoop/testbed-$PREFIX
mkdir -p "$WORK"
BULK=$WORK/bulk-$BULK_MB.txt
[ -f "$BULK" ] || head -c $((BULK_MB * 1024 * 1024 * 3 / 4)) /dev/urandom | base64 -w 100 > "$BULK"
if [ ! -f "$WORK/corpus-$INPUT.txt" ]; then
  "$C" datagen --kind text --servers 27 --input-per-server "$INPUT" --seed 7 --out "$WORK/gen" >&2
  cat "$WORK"/gen/server-*.input > "$WORK/corpus-$INPUT.txt"
  rm -rf "$WORK/gen"
fi
poller=
cleanup() {
  [ -n "$poller" ] && kill "$poller" 2>/dev/null || true
  "$C" testbed down --prefix $PREFIX >/dev/null 2>&1 || true
}
trap cleanup EXIT
"$C" testbed down --prefix $PREFIX >/dev/null 2>&1 || true
"$C" testbed up --prefix $PREFIX --subnet 221 --torus 3x3x3 --rereplicate-after "${GRACE}s" --rereplicate-rate "$RATE" >&2
"$C" put "$BULK" --name bulk --frontend $FE >&2
"$C" put "$WORK/corpus-$INPUT.txt" --name corpus --frontend $FE >&2
held=$(cat $ROOT/1-1-1/chunks/*.data | wc -c)

# Copy timeline: every 0.2 s, the sum over the servers of replicaBytesCopied and replicaCopiesPending.
python3 - "$ROOT" > "$WORK/copies.log" <<'EOF' &
import glob, json, sys, time
while True:
    copied = pending = 0
    for f in glob.glob(sys.argv[1] + "/*/status.json"):
        try:
            cs = json.load(open(f))["counters"]["chunkStore"]
        except Exception:
            continue
        copied += cs["replicaBytesCopied"]; pending += cs["replicaCopiesPending"]
    print(f"{time.time():.3f} {copied} {pending}", flush=True)
    time.sleep(0.2)
EOF
poller=$!
sleep $((GRACE + 5))   # every server past its start delay

first_sum=
n=0
job() {   # job PHASE: runs WordCount, prints the CSV row
  n=$((n + 1))
  local start end json out sum
  start=$(date +%s.%N)
  json=$("$C" submit --job wordcount --input corpus --reducers 27 --output "wc$n" --wait --json --frontend $FE 2>>"$WORK/submit.err") || true
  end=$(date +%s.%N)
  rm -f "$WORK/out.txt"
  "$C" get "wc$n" --out "$WORK/out.txt" --frontend $FE >/dev/null 2>>"$WORK/submit.err" || true
  sum=$(sort "$WORK/out.txt" | sha256sum | cut -c1-16)
  [ -n "$first_sum" ] || first_sum=$sum
  servers=$(echo "$json" | python3 -c 'import json,sys; print(json.load(sys.stdin)["servers"])' 2>/dev/null || echo failed)
  echo "$RATE,$1,$n,$start,$end,$(echo "$end - $start" | bc),$servers,$([ "$sum" = "$first_sum" ] && echo 1 || echo 0),$held" 
}
restored() {   # waits until fsck finds nothing under-replicated
  while true; do
    under=$("$C" fsck --json --frontend $FE 2>/dev/null | python3 -c 'import json,sys; print(json.load(sys.stdin)["underReplicated"])' 2>/dev/null || echo -1)
    [ "$under" = "0" ] && break
    sleep 1
  done
}

echo "rate,phase,run,start_unix,end_unix,job_s,servers,output_equal,lost_server_bytes"
for i in $(seq "$RUNS"); do job alone; done
"$C" testbed kill $LOST --prefix $PREFIX >&2
kill_at=$(date +%s.%N)
sleep $((3 + GRACE))   # detection (30 beacons at 100 ms) and the grace
job during
restored
sleep 3
for i in $(seq "$RUNS"); do job after; done
cp "$WORK/copies.log" "$WORK/copies-$RATE.log"
# The copy phase, from the timeline: from the first offer queued after the kill until the bytes copied reach the
# lost server's share (the job outputs written later add a few kilobytes); offers (copies and confirmations) queued.
python3 - "$WORK/copies.log" "$kill_at" "$held" "$RATE" >&2 <<'EOF'
import sys
log, kill, held, rate = sys.argv[1], float(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
data = [(float(a), int(b), int(c)) for a, b, c in (l.split() for l in open(log))]
base = max([b for t, b, c in data if t <= kill] or [0])
after = [(t, b, c) for t, b, c in data if t > kill]
start = next(t for t, b, c in after if c > 0 or b > base)
end = next(t for t, b, c in after if b - base >= 0.99 * held)
drained = next((t for t, b, c in after if t > start and c == 0), float("nan"))
print("rate,kill_unix,copies_start_after_kill_s,lost_share_copied_after_kill_s,copy_phase_s,peak_offers_queued,offers_drained_after_kill_s")
print(f"{rate},{kill:.3f},{start - kill:.2f},{end - kill:.2f},{end - start:.2f},{max(c for t, b, c in after)},{drained - kill:.2f}")
EOF
