#!/bin/bash
# The cost of a streaming job: `sim run` of the built-in wordcount and of the Python WordCount of examples/streaming
# (with and without its combiner) over the same file, in alternating rounds, on 3x3x3 with R=3. CPU is user plus
# system time of the whole command, its programs included (they are its children); wall is /usr/bin/time's.
# Debian's python3 first in PATH: a pyenv shim costs some 70 ms of CPU per program start.
#   ROUNDS=3 SIZES="256KB 1MB" docs/results/streaming-cost/measure.sh > docs/results/streaming-cost/results.csv
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")/../../.." && pwd)"
ROUNDS=${ROUNDS:-3}
SIZES=${SIZES:-256KB 1MB}
export PATH=/usr/bin:/bin:$PATH
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
programs=(--job-dir "$here/examples/streaming" --mapper wordcount_mapper.py --reducer wordcount_reducer.py)
echo "size_per_server,input_bytes,lines,words,round,job,user_s,system_s,wall_s,intermediate_bytes,link_bytes,shuffle_reduce_s"
for size in $SIZES; do
  "$here/camdoop" datagen --kind text --servers 27 --input-per-server "$size" --seed 3 --out "$work/$size" >/dev/null 2>&1
  cat "$work/$size"/server-*.input > "$work/$size.txt"
  bytes=$(stat -c %s "$work/$size.txt")
  lines=$(wc -l < "$work/$size.txt")
  words=$(python3 -c 'import re, sys; print(len(re.findall(rb"[A-Za-z0-9]+", open(sys.argv[1], "rb").read())))' "$work/$size.txt")
  for i in $(seq 1 "$ROUNDS"); do
    for job in builtin streaming streaming-no-combiner; do
      case $job in
        builtin) args=(--job wordcount) ;;
        streaming) args=("${programs[@]}" --combiner wordcount_reducer.py) ;;
        streaming-no-combiner) args=("${programs[@]}") ;;
      esac
      /usr/bin/time -f "%U,%S,%e" -o "$work/time" "$here/camdoop" sim run --torus 3x3x3 --reducers 3 --input "$work/$size.txt" \
        "${args[@]}" --json > "$work/report.json" 2>/dev/null
      report=$(python3 -c 'import json, sys; d = json.load(open(sys.argv[1])); print(",".join(str(d[k]) for k in ("intermediateBytes", "linkBytes", "shuffleReduceSeconds")))' "$work/report.json")
      echo "$size,$bytes,$lines,$words,$i,$job,$(cat "$work/time"),$report"
    done
  done
done
