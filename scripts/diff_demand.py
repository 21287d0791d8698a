#!/usr/bin/env python3
"""diff_demand.py: random programs shaped for the front end's demand rewrite
(frontend/sema_demand.c), each run by rfx as it is and with `--tune demand=0`, and by
Soufflé 2.5 where it is found; every output file must hold the same tuples.

The random programs of diff_souffle.py rarely hold a helper read in one place beside
atoms that filter (about one in 300). Here every program has one to three helpers (joins
of two or three atoms over small input relations, with comparisons, negations, a
disjunction, helpers read by later helpers) and one to three output rules that read them
once or twice, positively or negated, beside input atoms with constants and comparisons:
a third or more of the programs are rewritten, the rest run as written.

Usage: diff_demand.py RFX COUNT [--seed N] [--work DIR] [--budget SECONDS] [--souffle PATH]
A failing case is kept in DIR/fail-N (program and every run's outputs); exit 1 if any.
Without Soufflé the two rfx runs are compared alone (said in one line).
"""
import argparse
import os
import random
import shutil
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
DEFAULT_SOUFFLE = os.path.join(HERE, "..", "..", "shared", "tools", "souffle", "bin", "souffle")
VARS = "xyzuvw"


def gen_program(rng):
    lines, arity = [], {}
    for b in range(4):
        name, ar = "b%d" % b, rng.choice([2, 2, 3])
        arity[name] = ar
        lines.append(".decl %s(%s)" % (name, ", ".join("c%d: number" % i for i in range(ar))))
        for _ in range(rng.randint(5, 40)):
            lines.append("%s(%s)." % (name, ", ".join(str(rng.randint(0, 7)) for _ in range(ar))))
    inputs = list(arity)

    def atom(names, pool):
        name = rng.choice(names)
        args = []
        for _ in range(arity[name]):
            r = rng.random()
            args.append(str(rng.randint(0, 7)) if r < 0.12 else "_" if r < 0.2 else rng.choice(pool))
        return "%s(%s)" % (name, ", ".join(args)), {a for a in args if a in pool}

    def atoms(names, pool, n):
        """n atoms of relations in names over pool's variables, and the variables they bind."""
        body, bound = [], set()
        for _ in range(n):
            a, vs = atom(names, pool)
            body.append(a)
            bound |= vs
        return body, bound

    helpers = []
    for h in range(rng.randint(1, 3)):
        name, ar = "h%d" % h, rng.choice([1, 2, 2, 3])
        readable = inputs + [x for x in helpers if rng.random() < 0.5]
        lines.append(".decl %s(%s)" % (name, ", ".join("a%d: number" % i for i in range(ar))))
        rules = 0
        for _ in range(rng.randint(1, 2)):
            pool = list(VARS[:rng.randint(2, 4)])
            body, bound = atoms(readable, pool, rng.randint(2, 3))
            if not bound:
                continue
            bl = sorted(bound)
            head = [rng.choice(bl) for _ in range(ar)]
            if rng.random() < 0.4 and len(bl) >= 2:
                body.append("%s %s %s" % (rng.choice(bl), rng.choice(["!=", "<", "<="]), rng.choice(bl)))
            if rng.random() < 0.2:
                n = rng.choice(inputs)
                body.append("!%s(%s)" % (n, ", ".join(rng.choice(bl) if rng.random() < 0.7 else "_"
                                                        for _ in range(arity[n]))))
            text = ", ".join(body)
            if rng.random() < 0.15 and len(bl) >= 2:
                text += ", (%s < %s ; %s > 5)" % (bl[0], bl[1], bl[0])
            lines.append("%s(%s) :- %s." % (name, ", ".join(head), text))
            rules += 1
        if not rules:
            lines.append("%s(%s) :- b0(%s)." % (name, ", ".join(["0"] * ar), ", ".join(["_"] * arity["b0"])))
        arity[name] = ar
        helpers.append(name)
    outputs = 0
    for c in range(rng.randint(1, 3)):
        pool = list(VARS[:rng.randint(2, 5)])
        body, bound = atoms(inputs, pool, rng.randint(1, 3))
        if not bound:
            continue
        bl = sorted(bound)
        if rng.random() < 0.5:
            body.append("%s %s %d" % (rng.choice(bl), rng.choice(["<", ">", "!=", "="]), rng.randint(0, 7)))
        for name in rng.sample(helpers, rng.randint(1, min(2, len(helpers)))):
            neg = rng.random() < 0.35
            args = [rng.choice(bl) if neg or rng.random() < 0.8 else "_" for _ in range(arity[name])]
            body.append("%s%s(%s)" % ("!" if neg else "", name, ", ".join(args)))
        head = rng.sample(bl, rng.randint(1, len(bl)))
        lines.append(".decl out%d(%s)" % (c, ", ".join("o%d: number" % i for i in range(len(head)))))
        lines.append("out%d(%s) :- %s." % (c, ", ".join(head), ", ".join(body)))
        lines.append(".output out%d" % c)
        outputs += 1
    if not outputs:
        lines += [".decl out9(x: number)", "out9(x) :- b0(x, _).", ".output out9"]
    return "\n".join(lines) + "\n"


def outputs(d):
    """Each output file's lines, sorted (the order of rows is not compared)."""
    return {f: sorted(open(os.path.join(d, f)).read().splitlines()) for f in sorted(os.listdir(d))
            if f.endswith(".csv")}


def run(cmd, cwd):
    try:
        return subprocess.run(cmd, cwd=cwd, capture_output=True, text=True, timeout=60).returncode
    except subprocess.TimeoutExpired:
        return -1


def main():
    ap = argparse.ArgumentParser(description="random programs for the demand rewrite, with and without it")
    ap.add_argument("rfx")
    ap.add_argument("count", type=int)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--work", default="diff-demand")
    ap.add_argument("--budget", type=float, default=0, help="stop after this many seconds (0: none)")
    ap.add_argument("--souffle", default=DEFAULT_SOUFFLE)
    a = ap.parse_args()
    rfx = os.path.abspath(a.rfx)
    souffle = a.souffle if os.access(a.souffle, os.X_OK) else None
    if not souffle:
        print("diff_demand: no Soufflé at %s: rfx's two runs compared alone" % a.souffle)
    shutil.rmtree(a.work, ignore_errors=True)
    os.makedirs(a.work)
    start, done, rewritten, failed = time.time(), 0, 0, 0
    for i in range(a.count):
        if a.budget and time.time() - start > a.budget:
            break
        d = os.path.join(a.work, "case")
        shutil.rmtree(d, ignore_errors=True)
        for sub in ("rfx", "whole", "souffle"):
            os.makedirs(os.path.join(d, sub))
        with open(os.path.join(d, "program.dl"), "w") as f:
            f.write(gen_program(random.Random(a.seed * 1000003 + i)))
        ast = subprocess.run([rfx, "--emit=ast", "program.dl"], cwd=d, capture_output=True, text=True, timeout=60)
        rewritten += "+demand_" in ast.stdout
        rcs = [run([rfx, "-D", "rfx", "program.dl"], d), run([rfx, "--tune", "demand=0", "-D", "whole", "program.dl"], d)]
        outs = [outputs(os.path.join(d, "rfx")), outputs(os.path.join(d, "whole"))]
        if souffle:
            rcs.append(run([souffle, "-D", "souffle", "program.dl"], d))
            outs.append(outputs(os.path.join(d, "souffle")))
        done += 1
        if any(rc != 0 for rc in rcs) or any(o != outs[0] for o in outs):
            failed += 1
            keep = os.path.join(a.work, "fail-%d" % i)
            shutil.copytree(d, keep)
            print("case %d: %s (exit codes %s): %s" % (i, "runs differ" if all(rc == 0 for rc in rcs) else "a run failed",
                                                     rcs, keep))
    print("diff_demand: %d programs (%d rewritten), %d differ%s" % (done, rewritten, failed,
                                                                   "" if souffle else "; Soufflé not run"))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
