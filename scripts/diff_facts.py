#!/usr/bin/env python3
"""diff_facts.py: random fact files read by two rfx builds (or two option sets); exit status,
standard error and the relation written back must be identical.

Each case is one relation of 1-3 number or unsigned columns read from a file as tab-separated
facts (`.input r`) or as an edge list (`format="edges"`: any run of spaces, tabs
or commas; `#` and `%` comments; extra columns ignored), plain or gzip, of 0 to 200,000 lines
(large ones cross the reader's pieces and blocks on several threads), mostly well formed, with
lines that are not at random places: values at and past the ends of their ranges, leading
zeros, '+', hex, '-' in unsigned columns, separators doubled or missing, extra and missing
columns, empty lines, comments, CRLF and a lone CR, words, a last line without a newline.

Usage: diff_facts.py "RFX_A" "RFX_B" COUNT [--seed N] [--work DIR] [--threads "1 3 16"]
RFX_A and RFX_B are command lines (split as the shell would: "env LD_LIBRARY_PATH=lib rfx").
A differing case is kept in DIR/fail-N; exit 1 if any.
"""
import argparse
import gzip
import os
import random
import shlex
import shutil
import subprocess
import sys

EDGES = ["0", "-0", "007", "2147483647", "2147483648", "-2147483648", "-2147483649", "4294967295",
         "4294967296", "12345678901", "00000000001", "+5", "0x1F", "-", "1e3", "x", ""]


def value(rng, unsigned):
    r = rng.random()
    if r < 0.93:
        v = rng.randint(0, rng.choice([9, 99, 99999, 2 ** 31 - 1]))
        return str(v) if unsigned or rng.random() < 0.8 else "-" + str(v)
    return rng.choice(EDGES)


ODD = ["value", "extra", "missing", "text", "trailing", "crlf", "separators"]


def line(rng, arity, types, edges, odd):
    """A well-formed line, or (odd) one with a single oddity of a kind chosen at random."""
    kind = rng.choice(ODD) if odd else None
    sep = "\t"
    if edges and kind == "separators":
        sep = rng.choice([" ", ",", "  ", " , ", "\t\t"])
    vals = [str(rng.randint(0, 50000)) for _ in types]
    if kind == "value":
        i = rng.randrange(arity)
        vals[i] = value(rng, types[i] == "unsigned") if rng.random() < 0.5 else rng.choice(EDGES)
    elif kind == "extra":
        vals.append(str(rng.randint(0, 9)))
    elif kind == "missing" and arity > 1:
        vals.pop()
    text = sep.join(vals)
    if kind == "text":
        text = rng.choice(["", "# a comment", "% another", "  1\t2", "word", "\t", "1\t\t2", "FromNodeId\tToNodeId",
                           " 7", "7 ", "-", "3\r4"])
    elif kind == "trailing":
        text += rng.choice(["\t", " ", "\r", "\rx", ",", "\t\r"])
    return text + ("\r\n" if kind == "crlf" else "\n")


def gen_case(rng, d):
    arity = rng.randint(1, 3)
    types = [rng.choice(["number", "number", "unsigned"]) for _ in range(arity)]
    edges = rng.random() < 0.5
    n = rng.choice([0, 1, 3, 50, 2000, 30000, 200000])
    # half the files have one to three odd lines (the first error a file holds is the only one
    # reported, so each odd line should often be the first), the others none
    odd_at = set(rng.randrange(n) for _ in range(rng.randint(1, 3))) if n and rng.random() < 0.5 else set()
    lines = [line(rng, arity, types, edges, i in odd_at) for i in range(n)]
    text = "".join(lines)
    if text and rng.random() < 0.2:
        text = text.rstrip("\n")                     # the last line without its newline
    name = "r.facts"
    data = text.encode()
    if rng.random() < 0.2:
        name += ".gz"
        data = gzip.compress(data, compresslevel=1)
    with open(os.path.join(d, name), "wb") as f:
        f.write(data)
    cols = ", ".join("c%d: %s" % (i, t) for i, t in enumerate(types))
    src = ".decl r(%s)\n" % cols
    src += '.input r(filename="%s", format="edges")\n' % name if edges else '.input r(filename="%s", delimiter="\\t")\n' % name
    src += ".output r\n"
    with open(os.path.join(d, "p.dl"), "w") as f:
        f.write(src)


def run(cmd, d, threads, tag):
    out = os.path.join(d, "out-" + tag)
    os.makedirs(out, exist_ok=True)
    p = subprocess.run(shlex.split(cmd) + ["--backend=cpu", "-j", str(threads), "-F", d, "-D", out,
                                           os.path.join(d, "p.dl")],
                       capture_output=True, timeout=120)
    res = os.path.join(out, "r.csv")
    body = open(res, "rb").read() if os.path.exists(res) else None
    return p.returncode, p.stderr.replace(d.encode(), b"DIR"), body


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("a")
    ap.add_argument("b")
    ap.add_argument("count", type=int)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--work", default="/tmp/diff_facts")
    ap.add_argument("--threads", default="1 3 16")
    args = ap.parse_args()
    rng = random.Random(args.seed)
    shutil.rmtree(args.work, ignore_errors=True)
    os.makedirs(args.work)
    threads = [int(t) for t in args.threads.split()]
    failed = 0
    for i in range(args.count):
        d = os.path.join(args.work, "case")
        shutil.rmtree(d, ignore_errors=True)
        os.makedirs(d)
        gen_case(rng, d)
        t = threads[i % len(threads)]
        ra, rb = run(args.a, d, t, "a"), run(args.b, d, t, "b")
        same = ra == rb
        print("case %d (-j %d): %s, exit %d" % (i, t, "same" if same else "DIFFER", ra[0]), flush=True)
        if not same:
            failed += 1
            shutil.copytree(d, os.path.join(args.work, "fail-%d" % i))
    print("%d cases: %d differ" % (args.count, failed))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
