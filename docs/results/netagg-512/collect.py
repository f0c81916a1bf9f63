#!/usr/bin/env python3
"""Collects the runs' --json reports (RUNDIR/NAME.json, see README.md) into netagg-512.csv and draws netagg-512.svg."""
import json, os, sys

RUNS = [  # (file name, design, switch buffer)
    ("torus-camdoop", "Camdoop (8x8x8 torus)", "-"),
    ("racks-direct", "TCP Camdoop, direct (racks 1:4)", "256KB"),
    ("racks-rack", "TCP Camdoop, rack aggregation (racks 1:4)", "256KB"),
    ("netagg", "NetAgg, a box per switch", "256KB"),
    ("netagg-trees6", "NetAgg, 6 trees", "256KB"),
    ("netagg-upper", "NetAgg, core box only", "256KB"),
    ("racks-direct-deep", "TCP Camdoop, direct (racks 1:4)", "64MB"),
    ("racks-rack-deep", "TCP Camdoop, rack aggregation (racks 1:4)", "64MB"),
    ("netagg-deep", "NetAgg, a box per switch", "64MB"),
]

def load(rundir, name, s):
    with open(os.path.join(rundir, f"{name}-s{s}.json")) as f:
        return json.load(f)

def main(rundir, outdir):
    rows = []
    for name, design, buffer in RUNS:
        for s in ("0", "0.5"):
            r = load(rundir, name, s)
            tcp = r.get("tcp") or {}
            boxes = r.get("aggBoxes") or []
            rows.append({
                "design": design, "switch_buffer": buffer, "S": s, "seconds": r["shuffleReduceSeconds"],
                "joules_eee": r["energy"]["joules"], "timeouts": r["timeouts"], "switch_drops": tcp.get("switchDrops", 0),
                "core_link_bytes": r.get("coreLinkBytes", 0), "box_merged_bytes": sum(b["mergedBytes"] for b in boxes),
                "box_forwarded_bytes": sum(b["forwardedBytes"] for b in boxes),
                "busiest_box_busy_seconds": max((b["busySeconds"] for b in boxes), default=0),
                "simulation_cpu_seconds": r["simulationCpuSeconds"],
            })
    cols = list(rows[0].keys())
    with open(os.path.join(outdir, "netagg-512.csv"), "w") as f:
        f.write(",".join(cols) + "\n")
        for row in rows:
            f.write(",".join(f'"{v}"' if isinstance(v, str) and "," in v else str(v) for v in row.values()) + "\n")
    svg(rows, os.path.join(outdir, "netagg-512.svg"))

def svg(rows, path):
    # Two panels (S = 0, S = 0.5): one bar per run, log-scaled seconds, labelled with time and energy.
    width, bar, gap, left, top = 1060, 22, 6, 390, 50
    panels = [r for r in rows if r["S"] == "0"], [r for r in rows if r["S"] == "0.5"]
    height = top + 2 * (len(panels[0]) * (bar + gap) + 60) + 20
    import math
    lo, hi = math.log10(0.001), math.log10(30)
    def x(sec): return left + (math.log10(max(sec, 0.001)) - lo) / (hi - lo) * (width - left - 170)
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" font-family="sans-serif" font-size="12">',
           f'<text x="10" y="22" font-size="15">Synthetic job, 512 servers, R = 1, 2 MB per server: shuffle+reduce time (log scale) and network energy (EEE)</text>']
    y = top
    for s, panel in zip(("0", "0.5"), panels):
        out.append(f'<text x="10" y="{y + 12}" font-weight="bold">S = {s}</text>')
        y += 22
        for t in (0.001, 0.01, 0.1, 1, 10):
            out.append(f'<line x1="{x(t):.1f}" y1="{y}" x2="{x(t):.1f}" y2="{y + len(panel) * (bar + gap)}" stroke="#ddd"/>')
            out.append(f'<text x="{x(t):.1f}" y="{y + len(panel) * (bar + gap) + 14}" text-anchor="middle" fill="#666">{t:g} s</text>')
        for r in panel:
            colour = "#2a7" if r["design"].startswith("Camdoop") else "#37c" if r["design"].startswith("NetAgg") else "#c63"
            label = r["design"] + ("" if r["switch_buffer"] in ("-", "256KB") else f", {r['switch_buffer']} buffers")
            out.append(f'<text x="{left - 6}" y="{y + bar - 7}" text-anchor="end">{label}</text>')
            out.append(f'<rect x="{left}" y="{y}" width="{x(r["seconds"]) - left:.1f}" height="{bar}" fill="{colour}"/>')
            out.append(f'<text x="{x(r["seconds"]) + 4:.1f}" y="{y + bar - 7}">{r["seconds"]:.3g} s, {r["joules_eee"]:.0f} J</text>')
            y += bar + gap
        y += 40
    out.append("</svg>")
    with open(path, "w") as f:
        f.write("\n".join(out) + "\n")

if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2] if len(sys.argv) > 2 else os.path.dirname(os.path.abspath(__file__)))
