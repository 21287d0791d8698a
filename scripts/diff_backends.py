#!/usr/bin/env python3
"""diff_backends.py: random Datalog programs, each run on the CPU and the CUDA backend (or
two other configurations) with the same options; exit status, standard output and every
output file must be identical.

Programs are layered so that they are always valid: each derived relation reads the input
relations and the relations derived before it (negated only those), and may read itself in
rules that copy columns (recursion without arithmetic ends). Bodies join one to three
atoms, with comparisons, constants, negation, arithmetic heads (+, -, *), aggregates
(count, sum, min, max) and cyclic triangle bodies (the leapfrog triejoin); half of them
also have a float and a symbol relation (float arithmetic with inf, float aggregates, symbol
joins), half an unsigned relation (wrapping arithmetic) with disjunctions, nullary
relations and strata of negation. Facts are random values over a small domain; some programs take large inputs (tens
of thousands of rows), some a small --device-memory cap (out of core on both backends),
--no-fuse or --join.

Usage: diff_backends.py RFX COUNT [--seed N] [--work DIR] [--budget SECONDS]
                        [--a "OPTIONS"] [--b "OPTIONS"] [--b-launch "COMMAND"]
--a and --b are the two runs' options (default --backend=cpu and --backend=cuda); with
two CPU configurations (-j1 against -j3 and a --device-memory cap, say) it needs no GPU.
--b-launch starts the second run through a command ("mpirun -np 2": a distributed run).
A failing case is kept in DIR/fail-N (program, facts, both outputs); exit 1 if any.
A program either run cannot finish in a minute, or runs out of memory on (exit 3: a cap
where not even one part fits, say), is not compared.
"""
import argparse
import filecmp
import os
import random
import shlex
import shutil
import subprocess
import sys
import time

VARS = ["a", "b", "c", "d", "e"]


class Rel:
    def __init__(self, name, arity, edb=False):
        self.name, self.arity, self.edb = name, arity, edb


def gen_facts(rng, rel, big, path):
    n = rng.choice([0, 1, 5, 40, 300]) if not big else rng.choice([5000, 20000, 40000])
    hi = 25 if not big else n // rng.choice([1, 2])   # sparse: joins of big inputs stay small
    lo = -3 if rng.random() < 0.3 else 0
    rows = set()
    for _ in range(n):
        rows.add(tuple(rng.randint(lo, hi) for _ in range(rel.arity)))
    with open(path, "w") as f:
        for r in sorted(rows, key=lambda t: rng.random()):   # unsorted on purpose
            f.write("\t".join(map(str, r)) + "\n")


def atom(rel, args):
    return "%s(%s)" % (rel.name, ", ".join(args))


def gen_rule(rng, head, avail, recursive, big):
    """One rule for head over relations in avail (and head itself when recursive); over big
    inputs every atom joins the ones before it (no products)."""
    nat = rng.randint(1, 3)
    body, bound = [], []
    for i in range(nat):
        rel = head if (recursive and i == 0) else rng.choice(avail)
        args = []
        link = i > 0 and (big or rng.random() < 0.9)   # joined to the atoms before (rarely a product)
        before = list(bound)
        for j in range(rel.arity):
            if link and before and j == rel.arity - 1 and not any(a in before for a in args):
                v = rng.choice(before)
            elif bound and rng.random() < 0.45:
                v = rng.choice(bound)
            elif rng.random() < 0.08:
                v = str(rng.randint(0, 6))
            elif rng.random() < 0.06 and i > 0:
                v = "_"
            else:
                free = [v for v in VARS if v not in bound]
                v = free[0] if free else rng.choice(bound)
            if v != "_" and not v.isdigit() and v not in bound:
                bound.append(v)
            args.append(v)
        body.append(atom(rel, args))
    if not bound:
        return None
    lits = list(body)
    if rng.random() < 0.4:   # a comparison of bound variables or a constant
        op = rng.choice(["<", "<=", ">", ">=", "=", "!="])
        r = rng.choice(bound) if rng.random() < 0.6 else str(rng.randint(0, 12))
        lits.append("%s %s %s" % (rng.choice(bound), op, r))
    negs = [r for r in avail if r is not head]
    if negs and rng.random() < 0.25:   # negation of an earlier relation, its variables bound
        rel = rng.choice(negs)
        lits.append("!" + atom(rel, [rng.choice(bound) if rng.random() < 0.85 else "_" for _ in range(rel.arity)]))
    head_args = []
    for i in range(head.arity):
        if recursive:
            head_args.append(rng.choice(bound))
            continue
        p = rng.random()
        if p < 0.6:
            head_args.append(rng.choice(bound))
        elif p < 0.85:
            op = rng.choice(["+", "-", "*"])
            r = rng.choice(bound) if rng.random() < 0.5 else str(rng.randint(1, 5))
            head_args.append("%s %s %s" % (rng.choice(bound), op, r))
        elif p < 0.93:
            head_args.append(str(rng.randint(0, 9)))
        else:   # an aggregate over an earlier relation keyed by a bound variable
            rel = rng.choice(negs) if negs else None
            if rel is None or rel.arity < 2:
                head_args.append(rng.choice(bound))
                continue
            fn = rng.choice(["count", "sum", "min", "max"])
            inner = [rng.choice(bound)] + ["_"] * (rel.arity - 1)
            if fn == "count":
                agg = "count : { %s }" % atom(rel, inner)
            else:
                inner[-1] = "zz"
                agg = "%s zz : { %s }" % (fn, atom(rel, inner))
            v = "g%d" % i
            lits.append("%s = %s" % (v, agg))
            head_args.append(v)
    return "%s :- %s." % (atom(head, head_args), ", ".join(lits))


FLOATS = ["1.5", "-2.25", "0.1", "3", "1e10", "-7.75", "0.333", "250", "-0.5", "12.125", "inf", "-inf"]
SYMBOLS = ["a", "b", "zeta", "Alpha", "x y", "0", "-1", "\u00e9t\u00e9", "b2", "a_b"]


def gen_typed(rng, facts_dir):
    """Rules over a float and a symbol relation: float arithmetic, comparisons and
    aggregates (summed in key order on both backends), symbol joins, counts and negation;
    outputs ordered by number, float and symbol text."""
    with open(os.path.join(facts_dir, "fv.facts"), "w") as f:
        for _ in range(rng.choice([0, 3, 50, 400])):
            f.write("%d\t%s\n" % (rng.randint(-2, 9), rng.choice(FLOATS)))
    with open(os.path.join(facts_dir, "sy.facts"), "w", encoding="utf-8") as f:
        for _ in range(rng.choice([0, 3, 50, 400])):
            f.write("%s\t%d\n" % (rng.choice(SYMBOLS), rng.randint(0, 12)))
    c = rng.choice(["0.0", "1.5", "-1.0", "100.0"])
    op = rng.choice(["+", "-", "*"])
    cmp = rng.choice(["<", "<=", ">", "!="])
    fn = rng.choice(["sum", "min", "max"])
    templates = [
        ".decl fa(k: number, t: float)\nfa(k, t) :- fv(k, _), t = %s v : { fv(k, v) }.\n.output fa" % fn,
        ".decl fm(k: number, w: float)\nfm(k, v %s %s) :- fv(k, v), v %s %s." % (op, c, cmp, c),
        ".decl fm2(k: number, w: float)\nfm2(k + 1, v * 2.0 + 0.5) :- fv(k, v).\n.output fm2",
        ".decl fj(k: number, v: float, w: float)\nfj(k, v, w) :- fv(k, v), fv(k, w), v %s w.\n.output fj" % cmp,
        ".decl sj(s: symbol, t: symbol)\nsj(s, t) :- sy(s, k), sy(t, k), s != t.\n.output sj",
        ".decl so(s: symbol, t: symbol)\nso(s, t) :- sy(s, k), sy(t, k + 1), s %s t.\n.output so" % cmp,
        ".decl sc(s: symbol, n: number)\nsc(s, n) :- sy(s, _), n = count : { sy(s, _) }.\n.output sc",
        ".decl sn(s: symbol, k: number)\nsn(s, k) :- sy(s, k), !e1(k, k), k %s 6.\n.output sn" % cmp,
        ".decl sf(s: symbol, v: float)\nsf(s, v) :- sy(s, k), fv(k, v).\n.output sf",
    ]
    lines = [".decl fv(k: number, v: float)", ".input fv", ".decl sy(s: symbol, k: number)", ".input sy"]
    for t in rng.sample(templates, rng.randint(1, len(templates))):
        lines.append(t)
        if t.startswith(".decl fm(") and rng.random() < 0.7:
            lines.append(".output fm")
    return lines


def gen_extra(rng, facts_dir):
    """Unsigned arithmetic that wraps, disjunctions, nullary relations and a chain of strata
    with negation, over an unsigned relation and the number inputs."""
    with open(os.path.join(facts_dir, "uu.facts"), "w") as f:
        for _ in range(rng.choice([0, 4, 60, 500])):
            f.write("%d\t%d\n" % (rng.choice([0, 1, 7, 4294967295, 2147483648, rng.randint(0, 40)]),
                                     rng.randint(0, 40)))
    k = rng.randint(0, 9)
    op = rng.choice(["+", "-", "*"])
    cmp = rng.choice(["<", ">=", "!="])
    templates = [
        ".decl ua(x: unsigned, y: unsigned)\nua(x %s y, y) :- uu(x, y), x %s %du.\n.output ua" % (op, cmp, k),
        ".decl ud(x: number)\nud(x) :- e1(x, _) ; e2(_, x).\n.output ud",
        ".decl uv(x: number, y: number)\nuv(x, y) :- (e1(x, y) ; e2(y, x)), (x = %d ; y > %d).\n.output uv" % (k, k),
        ".decl un()\nun() :- e1(%d, _).\n.output un\n.decl uo(x: number)\nuo(x) :- u(x), !un().\n.output uo" % k,
        ".decl s1(x: number)\ns1(x) :- e1(x, _), !u(x).\n.decl s2(x: number)\ns2(x) :- e2(x, _), !s1(x).\n"
        ".decl s3(x: number)\ns3(x) :- u(x), !s2(x), !s1(x).\n.output s3\n.printsize s2",
        ".decl uc(y: unsigned, n: number)\nuc(y, n) :- uu(_, y), n = count : { uu(_, y) }.\n.output uc",
    ]
    lines = [".decl uu(x: unsigned, y: unsigned)", ".input uu"]
    lines.extend(rng.sample(templates, rng.randint(1, len(templates))))
    return lines


def gen_program(rng, facts_dir):
    big = rng.random() < 0.2
    edb = [Rel("e1", 2, True), Rel("e2", 2, True), Rel("u", 1, True), Rel("t3", 3, True)]
    lines = []
    for r in edb:
        lines.append(".decl %s(%s)" % (r.name, ", ".join("x%d: number" % i for i in range(r.arity))))
        lines.append(".input %s" % r.name)
        gen_facts(rng, r, big and r.arity == 2, os.path.join(facts_dir, r.name + ".facts"))
    avail = list(edb)
    for k in range(rng.randint(2, 7)):
        head = Rel("r%d" % k, rng.choice([1, 2, 2, 3]))
        lines.append(".decl %s(%s)" % (head.name, ", ".join("x%d: number" % i for i in range(head.arity))))
        rules = []
        if rng.random() < 0.15 and head.arity <= 3:   # a triangle body (cyclic: the triejoin)
            e = rng.choice([edb[0], edb[1]])
            rules.append("%s :- %s, %s, %s." % (atom(head, ["a", "b", "c"][:head.arity]), atom(e, ["a", "b"]),
                                                atom(e, ["b", "c"]), atom(e, ["a", "c"])))
        while len(rules) < rng.randint(1, 3):
            r = gen_rule(rng, head, avail, False, big)
            if r:
                rules.append(r)
        if head.arity >= 1 and rng.random() < 0.35:
            r = gen_rule(rng, head, avail, True, big)
            if r:
                rules.append(r)
        lines.extend(rules)
        lines.append(".output %s" % head.name)
        if rng.random() < 0.3:
            lines.append(".printsize %s" % head.name)
        avail.append(head)
    if rng.random() < 0.5:
        lines.extend(gen_typed(rng, facts_dir))
    if rng.random() < 0.5:
        lines.extend(gen_extra(rng, facts_dir))
    opts = []
    if rng.random() < 0.2:
        opts.append("--no-fuse")
    if rng.random() < 0.2:
        opts.append(rng.choice(["--join=binary", "--join=lftj"]))
    if rng.random() < 0.15:
        opts.append("--device-memory=%s" % rng.choice(["64K", "1M", "8M"]))
    return "\n".join(lines) + "\n", opts


CASE_TIMEOUT = 60   # seconds a backend may take on one program


def run(rfx, side, prog, facts, out, opts, launch=()):
    os.makedirs(out, exist_ok=True)
    try:
        p = subprocess.run(list(launch) + [rfx, "-q", "-F", facts, "-D", out] + opts + side + [prog],
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=CASE_TIMEOUT)
    except subprocess.TimeoutExpired:
        return None, b"", b"timed out"
    return p.returncode, p.stdout, p.stderr


def same_dirs(a, b):
    fa, fb = sorted(os.listdir(a)), sorted(os.listdir(b))
    if fa != fb:
        return False, "files %s / %s" % (fa, fb)
    for f in fa:
        if not filecmp.cmp(os.path.join(a, f), os.path.join(b, f), shallow=False):
            return False, f
    return True, ""


def main():
    ap = argparse.ArgumentParser(description="random Datalog programs run two ways, outputs compared")
    ap.add_argument("rfx")
    ap.add_argument("count", type=int)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--work", default="diff-work")
    ap.add_argument("--budget", type=float, default=float("inf"), help="seconds; no new program after them")
    ap.add_argument("--a", default="--backend=cpu", help="the first run's options")
    ap.add_argument("--b", default="--backend=cuda", help="the second run's options")
    ap.add_argument("--b-launch", default="", help="a command the second run is started by (mpirun -np 2)")
    args = ap.parse_args()
    rfx, count, seed, work, budget = args.rfx, args.count, args.seed, args.work, args.budget
    side_a, side_b = shlex.split(args.a), shlex.split(args.b)
    os.makedirs(work, exist_ok=True)
    fails, rejected, slow, ran = 0, 0, 0, 0
    start = time.time()
    for i in range(count):
        if time.time() - start > budget:
            print("time budget spent after %d programs" % ran)
            break
        rng = random.Random(seed * 100003 + i)
        case = os.path.join(work, "case")
        shutil.rmtree(case, ignore_errors=True)
        facts = os.path.join(case, "facts")
        os.makedirs(facts)
        text, opts = gen_program(rng, facts)
        prog = os.path.join(case, "program.dl")
        with open(prog, "w") as f:
            f.write(text)
        t0 = time.time()
        rc_c, out_c, err_c = run(rfx, side_a, prog, facts, os.path.join(case, "a"), opts)
        t1 = time.time()
        ran += 1
        if rc_c is None or rc_c == 3:   # too slow or too large for the first run: not compared
            slow += 1
            print("case %d: a %s after %.1f s, not compared" % (i, "timed out" if rc_c is None else "out of memory",
                                                                  t1 - t0), flush=True)
            continue
        rc_g, out_g, err_g = run(rfx, side_b, prog, facts, os.path.join(case, "b"), opts, shlex.split(args.b_launch))
        t2 = time.time()
        if rc_g is None or rc_g == 3:   # the second run's memory (a cap, the device) or time
            slow += 1
            print("case %d: b %s after %.1f s, not compared" % (i, "timed out" if rc_g is None else "out of memory",
                                                                  t2 - t1), flush=True)
            continue
        ok, why = (rc_c == rc_g and out_c == out_g), "exit %s / %s or stdout" % (rc_c, rc_g)
        if ok and rc_c == 0:
            ok, why = same_dirs(os.path.join(case, "a"), os.path.join(case, "b"))
        if rc_c == 1:
            rejected += 1
        print("case %d: a %.2f s, b %.2f s, exit %s: %s" % (i, t1 - t0, t2 - t1, rc_c, "same" if ok else "DIFFERS"),
              flush=True)
        if not ok:
            fails += 1
            keep = os.path.join(work, "fail-%d" % i)
            shutil.rmtree(keep, ignore_errors=True)
            shutil.copytree(case, keep)
            with open(os.path.join(keep, "why.txt"), "w") as f:
                f.write("options %s, a: %s, b: %s\n%s\na's stderr:\n%s\nb's stderr:\n%s\n" %
                        (opts, side_a, side_b, why, err_c.decode(errors="replace"), err_g.decode(errors="replace")))
            print("case %d (seed %d): differs: %s; kept in %s" % (i, seed, why, keep), flush=True)
    print("%d programs: %d rejected by the front end on both, %d too slow or out of memory (not compared), "
          "%d differ" % (ran, rejected, slow, fails))
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main())
