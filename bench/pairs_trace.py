#!/usr/bin/env python3
"""pairs_trace.py: where the time of a triangle count by parts goes, from a trace.

Usage: bench_ooc ... -t TRACE.json (with RFX_PAIRS_ITEMS=1, stderr to ITEMS.txt), then
       python3 bench/pairs_trace.py TRACE.json [ITEMS.txt]

Reads the count's spans ("copy chunk K" on the copy track, "join piece K" / "join chunk
K" for item K on the compute track; both lanes share that track) and, where given, the
item list (chunk, part, piece or streamed, rows) that RFX_PAIRS_ITEMS prints. Prints the
loop's length, the copies' busy time and gaps, how long 0, 1 or 2 items were joining (and,
where one was, whether a copy was in flight: a lane waiting for its copy), the tail after
the last copy, the longest items, and each part's span.
"""
import collections
import json
import re
import sys


def spans(path):
    trace = json.load(open(path))
    events = trace["traceEvents"] if isinstance(trace, dict) else trace
    copies, joins = [], []
    for e in events:
        m = re.match(r"(copy chunk|join piece|join chunk) (\d+)$", e.get("name", ""))
        if e.get("ph") != "X" or not m:
            continue
        t0 = e["ts"] / 1e3
        span = (t0, t0 + e["dur"] / 1e3, int(m.group(2)), m.group(1))
        (copies if m.group(1) == "copy chunk" else joins).append(span)
    return sorted(copies), sorted(joins)


def item_list(path):
    items = {}
    for line in open(path):
        m = re.match(r"pairs item (\d+): chunk (\d+) part (\d+) (\w+) rows (\d+)", line)
        if m and int(m.group(1)) not in items:   # the first count's plan (repeats print the same)
            items[int(m.group(1))] = (int(m.group(2)), int(m.group(3)), m.group(4), int(m.group(5)))
    return items


def active(joins, copies, a, b):
    """ms in [a, b) with 0, 1, 2 joins active; with 1, split by whether a copy is in flight."""
    cuts = sorted({a, b} | {t for s in joins + copies for t in s[:2] if a < t < b})
    out = collections.Counter()
    for t0, t1 in zip(cuts, cuts[1:]):
        mid = (t0 + t1) / 2
        n = sum(1 for j in joins if j[0] <= mid < j[1])
        key = str(n)
        if n == 1:
            key += " copying" if any(c[0] <= mid < c[1] for c in copies) else " not copying"
        out[key] += t1 - t0
    return out


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    copies, joins = spans(sys.argv[1])
    items = item_list(sys.argv[2]) if len(sys.argv) > 2 else {}
    if not joins or not copies:
        sys.exit("pairs_trace: no count by parts in %s" % sys.argv[1])
    start = min(copies[0][0], joins[0][0])
    end = max(j[1] for j in joins)
    busy = sum(c[1] - c[0] for c in copies)
    gaps = sum(max(0.0, copies[i + 1][0] - copies[i][1]) for i in range(len(copies) - 1))
    last_copy = max(c[1] for c in copies)
    print("loop %.1f ms; %d copies busy %.1f ms, gaps between them %.1f ms; tail after the last copy %.1f ms"
          % (end - start, len(copies), busy, gaps, end - last_copy))
    for label, a, b in (("whole loop", start, end), ("after the last copy", last_copy, end)):
        act = active(joins, copies, a, b)
        print("%-20s " % label + ", ".join("%s: %.1f ms" % (k, act[k]) for k in sorted(act)))
    print("%-6s %-6s %5s %5s %-9s %10s %9s %9s" % ("item", "kind", "chunk", "part", "as", "rows", "at ms", "ms"))
    for j in sorted(joins, key=lambda j: j[0] - j[1])[:12]:
        c, p, kind, rows = items.get(j[2], ("-", "-", "-", 0))
        print("%-6d %-6s %5s %5s %-9s %10s %9.1f %9.2f" % (j[2], j[3].split()[1], c, p, kind, rows or "-",
                                                       j[0] - start, j[1] - j[0]))
    parts = collections.defaultdict(list)
    for j in joins:
        if j[2] in items:
            parts[items[j[2]][1]].append(j)
    if parts:
        print("%-5s %6s %9s %9s %10s %12s %8s" % ("part", "items", "from ms", "to ms", "piece ms", "streamed ms",
                                                  "1 copying"))
    for p in sorted(parts):
        js = parts[p]
        a, b = min(j[0] for j in js), max(j[1] for j in js)
        print("%-5d %6d %9.1f %9.1f %10.1f %12.1f %8.1f" % (
            p, len(js), a - start, b - start, sum(j[1] - j[0] for j in js if j[3] == "join piece"),
            sum(j[1] - j[0] for j in js if j[3] == "join chunk"), active(joins, copies, a, b)["1 copying"]))


if __name__ == "__main__":
    main()
