#!/usr/bin/env bash
# Runs every line of runs.txt (NAME|ARGS of `camdoop sim run`) with --verify --json, writing NAME.json in OUTDIR.
# Usage: docs/results/job-control-equivalence/run.sh OUTDIR [REPO]   (REPO: a checkout to run, default this one)
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
out="$(realpath -m "$1")"
repo="$(realpath "${2:-$here/../../..}")"
data="$out/data"
mkdir -p "$out" "$data"
cd "$repo"
# The median run's input: one server's worth of "word<TAB>number" lines.
./camdoop datagen --kind topk --servers 1 --input-per-server 600KB --seed 5 --out "$data" >/dev/null
mv "$data/server-00000.input" "$data/median.input"
total="$(grep -c '|' "$here/runs.txt")"
n=0
while IFS='|' read -r name args; do
    [ -z "$name" ] && continue
    n=$((n + 1))
    echo "run.sh: [$n/$total] $name" >&2
    eval "./camdoop sim run $args --verify --json" >"$out/$name.json" 2>"$out/$name.err" || echo "run.sh: $name failed (see $out/$name.err)" >&2
done <"$here/runs.txt"
