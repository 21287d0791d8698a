#!/usr/bin/env python3
"""include_graph.py: the module rules of docs/internals.md, checked on the sources.

Each top-level module folder may include the headers of the modules below it only: the
order is base < frontend, primitives < ra_ir, lftj < weaver < harmony_ir < runtime (the
stages frontend -> ra_ir -> weaver -> harmony_ir -> runtime, over the operator libraries
primitives and lftj), and a folder's include of a header of a folder not below it is an
error. No library source file
may be over 1,500 lines (the parser and scanner bison and flex generate are not sources).
Prints the graph of folders; exits 1 with the offending includes and files otherwise."""
import os
import re
import sys

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
# folders from the bottom up; a folder may include from the folders before it
LEVELS = [["base"], ["frontend", "primitives"], ["ra_ir", "lftj"], ["weaver"], ["harmony_ir"], ["runtime"]]
LEVEL = {d: i for i, ds in enumerate(LEVELS) for d in ds}
SOURCE = re.compile(r"\.(c|h|cu|cuh|cc|l|y|def)$")
MAX_LINES = 1500


def main():
    owner = {}
    for d in LEVEL:
        for f in os.listdir(os.path.join(ROOT, d)):
            owner[f] = d
    edges, bad, long_files = {}, [], []
    for d in LEVEL:
        for f in sorted(os.listdir(os.path.join(ROOT, d))):
            if not SOURCE.search(f):
                continue
            path = os.path.join(ROOT, d, f)
            text = open(path, encoding="utf-8").read()
            lines = text.count("\n")
            if lines > MAX_LINES:
                long_files.append("%s/%s: %d lines" % (d, f, lines))
            for inc in re.findall(r'#include "([^"]+)"', text):
                to = owner.get(os.path.basename(inc))
                if not to or to == d:
                    continue
                edges.setdefault(d, set()).add(to)
                if LEVEL[to] >= LEVEL[d]:
                    bad.append("%s/%s includes %s (%s is not below %s)" % (d, f, inc, to, d))
    for ds in reversed(LEVELS):
        for d in ds:
            print("%-11s -> %s" % (d, ", ".join(sorted(edges.get(d, ()))) or "(nothing)"))
    for msg in bad + long_files:
        print("error: " + msg, file=sys.stderr)
    return 1 if bad or long_files else 0


if __name__ == "__main__":
    sys.exit(main())
