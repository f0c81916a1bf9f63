#!/usr/bin/env python3
"""Records what a fixed set of simulated runs produce, to check later that a change left every one unchanged.

Usage: scripts/record-simulated-runs.py [CAMDOOP]   (CAMDOOP: the command to run, default ./camdoop)

Reads the runs (a name and `sim run` arguments) from tests/Camdoop.Cli.Tests/Sim/simulated-runs.tsv, runs each with
--trace-hash --verify --json, and writes the file again with what each run gave: the event trace hash (every
event's time, kind, server, port and frame length), the simulated time, link bytes and frames, events, data bytes
sent, and the output's bytes, records and checksums. SimulatedRunsTests runs the same set and compares. Record
before a change that must not alter simulated results; a change that alters them on purpose records again, and the
diff shows which runs it touched.
"""
import json
import os
import shlex
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
TABLE = os.path.join(HERE, "..", "tests", "Camdoop.Cli.Tests", "Sim", "simulated-runs.tsv")
COLUMNS = ["name", "args", "eventTraceHash", "shuffleReduceSeconds", "linkBytes", "linkFrames", "events",
           "dataBytesSent", "outputBytes", "outputRecords", "checksums"]


def measure(camdoop, args):
    command = shlex.split(camdoop) + ["sim", "run"] + shlex.split(args) + ["--trace-hash", "--verify", "--json"]
    done = subprocess.run(command, capture_output=True, text=True)
    if done.returncode != 0:
        sys.exit(f"record-simulated-runs: '{args}' failed: {done.stderr.strip().splitlines()[-1:]}")
    report = json.loads(done.stdout)
    if report.get("verified") is not True:
        sys.exit(f"record-simulated-runs: '{args}' did not match the reference: {report.get('verificationError')}")
    checksums = [r["checksum"] for r in report["reducers"]] or [str(report["outputBytes"])]
    return [report["eventTraceHash"], repr(report["shuffleReduceSeconds"]), str(report["linkBytes"]),
            str(report["linkFrames"]), str(report["events"]), str(report["dataBytesSent"]),
            str(report["outputBytes"]), str(report["outputRecords"]), " ".join(checksums)]


def main():
    if len(sys.argv) > 1 and sys.argv[1] in ("-h", "--help"):
        print(__doc__.strip())
        return
    camdoop = sys.argv[1] if len(sys.argv) > 1 else os.path.join(HERE, "..", "camdoop")
    with open(TABLE, encoding="utf-8") as f:
        lines = [line.rstrip("\n").split("\t") for line in f if line.strip() and not line.startswith("#")]
    header, rows = lines[0], lines[1:]
    if header[:2] != COLUMNS[:2]:
        sys.exit(f"record-simulated-runs: {TABLE} does not start with the columns name and args")
    out = []
    for i, row in enumerate(rows, 1):
        print(f"[{i}/{len(rows)}] {row[0]}", file=sys.stderr, flush=True)
        out.append(row[:2] + measure(camdoop, row[1]))
    with open(TABLE, "w", encoding="utf-8") as f:
        f.write("# Simulated runs and what they gave; written by scripts/record-simulated-runs.py, checked by SimulatedRunsTests.\n")
        f.write("\t".join(COLUMNS) + "\n")
        for row in out:
            f.write("\t".join(row) + "\n")


if __name__ == "__main__":
    main()
