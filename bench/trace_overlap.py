#!/usr/bin/env python3
"""Reads an rfx --trace file and says, per device, how long the copies to the device and
the joins (compute) were busy and how much of the copying ran while a join was running:
the evidence that double buffering hides copies behind computation.
Usage: trace_overlap.py TRACE.json"""
import json
import sys


def merged(spans):
    """Union of [start, end) intervals, sorted and merged."""
    out = []
    for a, b in sorted(spans):
        if out and a <= out[-1][1]:
            out[-1][1] = max(out[-1][1], b)
        else:
            out.append([a, b])
    return out


def overlap(xs, ys):
    i = j = 0
    total = 0.0
    while i < len(xs) and j < len(ys):
        a, b = max(xs[i][0], ys[j][0]), min(xs[i][1], ys[j][1])
        total += max(0.0, b - a)
        if xs[i][1] < ys[j][1]:
            i += 1
        else:
            j += 1
    return total


def main():
    events = json.load(open(sys.argv[1]))["traceEvents"]
    lanes = {}
    for e in events:
        if e.get("ph") == "X" and e.get("pid", 1) >= 2:
            lanes.setdefault((e["pid"] - 2, e["tid"]), []).append((e["ts"], e["ts"] + e["dur"]))
    print("%-7s %8s %12s %12s %12s %10s" % ("device", "boxes", "join ms", "copy ms", "overlap ms", "of copies"))
    for dev in sorted({d for d, _ in lanes}):
        comp, copy = merged(lanes.get((dev, 1), [])), merged(lanes.get((dev, 2), []))
        busy_c = sum(b - a for a, b in comp) / 1e3
        busy_h = sum(b - a for a, b in copy) / 1e3
        ov = overlap(comp, copy) / 1e3
        print("%-7d %8d %12.2f %12.2f %12.2f %9.0f%%" % (dev, len(lanes.get((dev, 1), [])), busy_c, busy_h, ov,
                                                       100 * ov / busy_h if busy_h else 0))


if __name__ == "__main__":
    main()
