#!/usr/bin/env bash
# What the live web view costs an idle 3x3x3 testbed: the monitoring service's bytes on the links and the node
# processes' CPU time, over a minute without the page and a minute with one page polling /api/state every second
# (as the page does), and the merge time of the page's link query. Needs root; writes cost.csv and latency.csv here.
#
# Usage: sudo docs/results/web-view/measure-cost.sh [prefix] [subnet] [seconds]
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
camdoop="$here/../../../camdoop"
prefix="${1:-cdw}"
subnet="${2:-220}"
seconds="${3:-60}"

"$camdoop" testbed up --prefix "$prefix" --subnet "$subnet" >/dev/null
trap '"$camdoop" testbed down --prefix "$prefix" >/dev/null' EXIT
frontend="$("$camdoop" testbed status --prefix "$prefix" --json | python3 -c 'import json,sys; print(json.load(sys.stdin)["frontend"])')"
read -r url login < <("$camdoop" web --prefix "$prefix" --json | python3 -c 'import json,sys; j=json.load(sys.stdin); print(j["url"], j["loginUrl"])')
# One session, its cookie kept in a jar. -k: the view's certificate is the node's, from a CA curl does not know.
jar="$(mktemp)"
trap '"$camdoop" testbed down --prefix "$prefix" >/dev/null; rm -f "$jar"' EXIT
curl -sk -c "$jar" -o /dev/null "$login"

# Bytes every server's monitoring queue handed to its links, summed over the cube; CPU ms of every node process.
monitor_bytes() {
    "$camdoop" query "select sum(bytes_sent) from services where service = 'monitor' every 1s" --once --json --frontend "$frontend" |
        python3 -c 'import json,sys; print(json.load(sys.stdin)["rows"][0][0])'
}
cpu_ms() {
    "$camdoop" testbed status --prefix "$prefix" --json | python3 -c '
import json, os, sys
tick = os.sysconf("SC_CLK_TCK"); total = 0; first = None
for s in json.load(sys.stdin)["servers"]:
    f = open("/proc/%d/stat" % s["pid"]).read().rsplit(")", 1)[1].split()
    ms = (int(f[11]) + int(f[12])) * 1000 // tick
    total += ms
    first = ms if first is None else first
print(first, total)'
}

sleep 5 # let the start-up settle
echo "phase,seconds,monitor_bytes,bytes_per_link_per_s,frontend_cpu_ms,cube_cpu_ms" > "$here/cost.csv"
measure() { # phase, then a command to run for $seconds
    local phase="$1"; shift
    local b0 c0 b1 c1
    b0="$(monitor_bytes)"; read -r f0 c0 < <(cpu_ms)
    "$@"
    b1="$(monitor_bytes)"; read -r f1 c1 < <(cpu_ms)
    python3 -c "print('$phase,$seconds,%d,%.1f,%d,%d' % ($b1 - $b0, ($b1 - $b0) / 162 / $seconds, $f1 - $f0, $c1 - $c0))" >> "$here/cost.csv"
}
idle() { sleep "$seconds"; }
poll() {
    echo "round,answered,latency_ms" > "$here/latency.csv"
    for _ in $(seq "$seconds"); do
        curl -sk -b "$jar" "${url}api/state" |
            python3 -c 'import json,sys; j=json.load(sys.stdin); print("%d,%d,%.3f" % (j["round"], j["answered"], j["latencyMs"]))' >> "$here/latency.csv"
        sleep 1
    done
}
measure idle idle
measure "one page polling" poll
cat "$here/cost.csv"
python3 - "$here/latency.csv" <<'PY'
import csv, sys
rows = list({r["round"]: r for r in csv.DictReader(open(sys.argv[1])) if int(r["round"]) > 0}.values())
lat = sorted(float(r["latency_ms"]) for r in rows)
print("rounds %d, all 27 answered in %d; merge time p50 %.1f ms, p90 %.1f ms, max %.1f ms" % (
    len(lat), sum(1 for r in rows if r["answered"] == "27"), lat[len(lat) // 2], lat[int(len(lat) * 0.9)], lat[-1]))
PY
