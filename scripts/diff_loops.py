#!/usr/bin/env python3
"""diff_loops.py: random recursive programs whose rules read the relations the loop makes
by their diagonals (`r(x, x)`), with constants, reversed and chained, each run by rfx
(one thread, two threads, `--no-fuse`) and by Soufflé 2.5; every output file must hold
the same tuples.

These are the atoms the planner searches tuple by tuple inside a semi-naive loop
(ra_ir/lower_probe.c) instead of filtering the whole relation every iteration, and the
heads it tests so before a join; diff_souffle.py's programs hold such an atom about once
in a few thousand. Columns are all number, all unsigned or all symbol; one relation in
three programs is an eqrel.

Usage: diff_loops.py RFX COUNT [--seed N] [--work DIR] [--budget SECONDS] [--souffle PATH]
A failing case is kept in DIR/fail-N (program, facts and outputs); exit 1 if any.
Without Soufflé it says so in one line and compares nothing.
"""
import argparse
import os
import random
import shutil
import sys
import time

from diff_demand import DEFAULT_SOUFFLE, outputs, run

RELS = ["r0", "r1", "r2"]
PATTERNS = ["(x, x)", "(y, y)", "(x, {c})", "({c}, y)", "(y, x)", "(x, y)", "({c}, {c})", "(y, z)", "(z, z)"]


def gen_program(rng):
    kind = rng.choice(["number", "unsigned", "symbol"])

    def const():
        v = rng.randint(0, 6)
        return '"s%d"' % v if kind == "symbol" else str(v)

    eqrel = rng.random() < 0.3
    lines = [".decl e(a: %s, b: %s)" % (kind, kind)]
    for _ in range(rng.randint(5, 60)):
        a, b = rng.randint(0, 8), rng.randint(0, 8)
        lines.append('e("s%d", "s%d").' % (a, b) if kind == "symbol" else "e(%d, %d)." % (a, b))
    for r in RELS:
        lines.append(".decl %s(a: %s, b: %s)%s" % (r, kind, kind, " eqrel" if eqrel and r == "r0" else ""))
        lines.append(".output %s" % r)
    lines.append("%s(a, b) :- e(a, b)." % rng.choice(RELS))
    for _ in range(rng.randint(3, 6)):
        body = ["%s(x, y)" % rng.choice(RELS + ["e"])]
        for _ in range(rng.randint(1, 3)):
            pattern = rng.choice(PATTERNS)
            while "{c}" in pattern:
                pattern = pattern.replace("{c}", const(), 1)
            body.append(rng.choice(RELS + ["e"]) + pattern)
        text = ", ".join(body)
        last = "z" if "z" in text else "y"
        head = rng.choice(["(x, y)", "(y, x)", "(x, %s)" % last, "(%s, x)" % last])
        lines.append("%s%s :- %s." % (rng.choice(RELS), head, text))
    return "\n".join(lines) + "\n"


def main():
    ap = argparse.ArgumentParser(description="random recursive programs reading their relations by diagonals")
    ap.add_argument("rfx")
    ap.add_argument("count", type=int)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--work", default="diff-loops")
    ap.add_argument("--budget", type=float, default=0, help="stop after this many seconds (0: none)")
    ap.add_argument("--souffle", default=DEFAULT_SOUFFLE)
    a = ap.parse_args()
    rfx = os.path.abspath(a.rfx)
    if not os.access(a.souffle, os.X_OK):
        print("diff_loops: skipped: no Soufflé at %s" % os.path.normpath(a.souffle))
        return 0
    shutil.rmtree(a.work, ignore_errors=True)
    os.makedirs(a.work)
    start, done, failed = time.time(), 0, 0
    runs = [("one", ["-j1"]), ("two", ["-j2"]), ("unfused", ["--no-fuse"])]
    for i in range(a.count):
        if a.budget and time.time() - start > a.budget:
            break
        d = os.path.join(a.work, "case")
        shutil.rmtree(d, ignore_errors=True)
        for sub in ["souffle"] + [name for name, _ in runs]:
            os.makedirs(os.path.join(d, sub))
        with open(os.path.join(d, "program.dl"), "w") as f:
            f.write(gen_program(random.Random(a.seed * 1000003 + i)))
        if run([a.souffle, "-D", "souffle", "program.dl"], d) != 0:
            continue   # a program Soufflé refuses (none is expected): not counted
        rcs = [run([rfx, "-q", "-D", name] + opts + ["program.dl"], d) for name, opts in runs]
        want = outputs(os.path.join(d, "souffle"))
        done += 1
        if any(rc != 0 for rc in rcs) or any(outputs(os.path.join(d, name)) != want for name, _ in runs):
            failed += 1
            keep = os.path.join(a.work, "fail-%d" % i)
            shutil.rmtree(keep, ignore_errors=True)
            shutil.copytree(d, keep)
            print("case %d: %s (exit codes %s): %s" % (i, "outputs differ" if all(rc == 0 for rc in rcs) else
                                                     "a run failed", rcs, keep))
    print("diff_loops: %d programs, %d differ from Soufflé's outputs" % (done, failed))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
