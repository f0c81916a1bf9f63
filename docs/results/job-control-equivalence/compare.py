#!/usr/bin/env python3
"""compare.py BEFORE AFTER: compares two directories written by run.sh, one row per run (CSV on stdout).

A run is within tolerance when its output (records, bytes, every reduce task's checksum) is identical and verified,
its shuffle data bytes are identical, its simulated time is within 0.5 % (or 1 microsecond), and its extra link bytes (job control's
messages) are at most 256 bytes x servers per server per job. Runs that differ for a measured reason are listed in
EXPLAINED with that reason (README.md gives the measurements); their outputs must still be identical.
Exit status 1 when a run is neither within tolerance nor explained, or its output differs."""
import csv, json, os, sys

EXPLAINED = {
    'loss': 'random loss draws: control frames take draws from the same stream, so other frames are lost',
    'conc-horizontal': 'the jobs are submitted one after the other, so their shuffles start up to tens of microseconds apart',
    'conc-vertical': 'the jobs are submitted one after the other, so their shuffles start up to tens of microseconds apart',
    'fail-start': 'job control maps a server lost before the start at a replica holder, instead of re-running its map task mid-shuffle',
    'switch-tcp': 'TCP now starts after the first timestamps: RTT samples bring the RTO down from its initial 1 s',
    'racks-rack': 'TCP now starts after the first timestamps: RTT samples bring the RTO down from its initial 1 s',
    'netagg': 'TCP now starts after the first timestamps: RTT samples bring the RTO down from its initial 1 s',
    'grin2': 'TCP now starts after the first timestamps: RTT samples bring the RTO down from its initial 1 s',
    'netagg-box-fail': 'control frames share the 8 MB switch queues: other frames are lost when the box fails',
    'fail-root-replica': 'the failure comes at 0.5 T and T is 0.7 us shorter: the root fails 0.3 us earlier and 4.4 KB more are sent again',
    'energy-eee': 'control frames wake sleeping links (EEE), delaying the data frames behind them',
}
IGNORE = {'wallSeconds', 'mapWallSeconds', 'simulationWallSeconds', 'simulationCpuSeconds', 'machine'}


def outputs(d):
    reducers = sorted((r['reduceTask'], r['records'], r['checksum']) for r in d.get('reducers') or [])
    jobs = [(j.get('outputRecords'), j.get('checksum'), j.get('verified')) for j in d.get('jobs') or []]
    return d['outputRecords'], d['outputBytes'], reducers, jobs


def main(before, after):
    out = csv.writer(sys.stdout, lineterminator='\n')
    out.writerow(['run', 'servers', 'time_before_ms', 'time_after_ms', 'time_ratio', 'link_bytes_before',
                  'link_bytes_after', 'extra_link_bytes_per_server', 'data_bytes_before', 'data_bytes_after',
                  'output_identical', 'verified', 'verdict'])
    bad = 0
    for name in sorted(n[:-5] for n in os.listdir(before) if n.endswith('.json')):
        b = json.load(open(os.path.join(before, name + '.json')))
        try:
            a = json.load(open(os.path.join(after, name + '.json')))
        except (OSError, ValueError) as e:
            out.writerow([name] + [''] * 11 + [f'missing: {e}'])
            bad += 1
            continue
        jobs = max(1, len(a.get('jobs') or []))
        ratio = a['shuffleReduceSeconds'] / b['shuffleReduceSeconds']
        extra = (a['linkBytes'] - b['linkBytes']) / a['servers']
        same = outputs(a) == outputs(b)
        verified = a.get('verified') is not False and a.get('completed')
        within = (same and verified and (abs(ratio - 1) <= 0.005 or abs(a['shuffleReduceSeconds'] - b['shuffleReduceSeconds']) <= 1e-6) and a['dataBytesSent'] == b['dataBytesSent']
                  and extra <= 256 * a['servers'] * jobs)
        if within:
            verdict = 'within tolerance'
        elif same and verified and name in EXPLAINED:
            verdict = 'explained: ' + EXPLAINED[name]
        else:
            verdict = 'DIFFERS'
            bad += 1
        out.writerow([name, a['servers'], f"{b['shuffleReduceSeconds'] * 1e3:.3f}", f"{a['shuffleReduceSeconds'] * 1e3:.3f}",
                      f'{ratio:.4f}', b['linkBytes'], a['linkBytes'], f'{extra:.0f}', b['dataBytesSent'], a['dataBytesSent'],
                      same, verified, verdict])
    return 1 if bad else 0


if __name__ == '__main__':
    if len(sys.argv) != 3 or sys.argv[1] in ('-h', '--help'):
        print(__doc__)
        sys.exit(0 if len(sys.argv) == 2 else 2)
    sys.exit(main(sys.argv[1], sys.argv[2]))
