#!/usr/bin/env bash
# Runs every setting of tcp-camdoop-8x8x8.csv again and rewrites the CSV (about 30 s of simulation CPU per row).
# Usage: docs/results/tcp-camdoop-8x8x8/make.sh [OUT.csv]
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
out="${1:-$here/tcp-camdoop-8x8x8.csv}"
cd "$here/../../.."
settings=(
    "newreno|"
    "min-rto-1ms|--min-rto 1ms"
    "dctcp|--tcp dctcp --ecn 64KB"
    "dctcp-rwnd|--tcp dctcp --ecn 64KB --rwnd 9KB"
    "buffer-64mb|--switch-buffer 64MB"
    "rwnd-buffer-8mb|--rwnd 9KB --switch-buffer 8MB"
    "paced|--pacing-mbps 1.9"
)
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
echo "setting,flags,shuffleReduceSeconds,switch1G,ratioToSwitch1G,timeouts,switchDrops,ecnMarks,peakQueueBytes,segmentsSent,segmentsResent,fastRetransmits,linkBytes,events,simulationCpuSeconds" >"$tmp/out.csv"
n=0
for entry in "${settings[@]}"; do
    name="${entry%%|*}"
    flags="${entry#*|}"
    n=$((n + 1))
    echo "make.sh: [$n/${#settings[@]}] $name" >&2
    # shellcheck disable=SC2086
    ./camdoop sim run --torus 8x8x8 --job synthetic --output-ratio 1 --reducers 1 --input-per-server 2MB --seed 1 \
        --network switch --mode tcp --threads 1 --json $flags >"$tmp/$name.json"
    python3 - "$tmp/$name.json" "$name" "$flags" >>"$tmp/out.csv" <<'PY'
import json, sys
d = json.load(open(sys.argv[1])); t = d['tcp']; bound = d['lowerBounds']['switch1G']
print(','.join(str(x) for x in [sys.argv[2], sys.argv[3], d['shuffleReduceSeconds'], bound,
      f"{d['shuffleReduceSeconds'] / bound:.4f}", d['timeouts'], t['switchDrops'], t['ecnMarks'], t['peakQueueBytes'],
      t['segmentsSent'], t['segmentsResent'], t['fastRetransmits'], d['linkBytes'], d['events'],
      f"{d['simulationCpuSeconds']:.2f}"]))
PY
done
mv "$tmp/out.csv" "$out"
