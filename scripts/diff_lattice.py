#!/usr/bin/env python3
"""Random programs with lattices (`.lattice`), run by rfx and by Soufflé 2.5 compiled (its
interpreter cannot call user-defined functors, which lattices need), outputs compared as
sets. The lattices are the test library's (tests/functors): numbers by <= (lat_max/lat_min)
and by >= (lat_min/lat_max), sets as bit masks (set_union/set_meet).

Usage: scripts/diff_lattice.py RFX N --souffle SOUFFLE_BIN --lib DIR [--seed S] [--work DIR]
(DIR holds libtestfunctors.so). Prints one line per program that differs or fails and a
closing 'N passed, N failed' line; exit status 1 when any differed."""
import argparse
import os
import random
import shutil
import subprocess
import sys

LATTICES = {
    "Max": ("-2147483648", "lat_max", "lat_min"),   # Lub, Glb
    "Dist": ("2147483647", "lat_min", "lat_max"),
    "Labels": ("0", "set_union", "set_meet"),
}


def value(rng, lat):
    return str(1 << rng.randrange(6)) if lat == "Labels" else str(rng.randrange(0, 12))


def grow(rng, lat, v):
    """An expression over lattice value v that keeps a recursion finite."""
    if lat == "Labels":
        return rng.choice([v, f"{v} bor {1 << rng.randrange(6)}", f"{v} band 63"])
    if lat == "Dist":
        return rng.choice([v, f"{v} + {rng.randrange(1, 4)}"])
    return rng.choice([v, f"{v} + 1"])   # Max: the rule carries `v < 12`


def program(rng):
    # one lattice of numbers (lat_max and lat_min take one type) and the sets
    num = rng.choice(["Max", "Dist"])
    kinds = [num, "Labels"]
    out = [f".type {num} <: number", ".type Labels <: number"]
    for lat in kinds:
        bot, lub, glb = LATTICES[lat]
        out += [f".functor {f}(a: {lat}, b: {lat}): {lat}" for f in (lub, glb)]
        out.append(f".lattice {lat}<> {{ Bottom -> {bot}, Lub -> @{lub}(_, _), Glb -> @{glb}(_, _) }}")
    out.append(".decl e(x: number, y: number)")
    for _ in range(rng.randrange(4, 14)):
        out.append(f"e({rng.randrange(7)}, {rng.randrange(7)}).")
    nl = rng.randrange(2, 5)
    lats = [rng.choice(kinds) for _ in range(nl)]
    keyless = [rng.random() < 0.15 for _ in range(nl)]
    for i, lat in enumerate(lats):
        out.append(f".decl r{i}(v: {lat}<>)" if keyless[i] else f".decl r{i}(x: number, v: {lat}<>)")
    np_ = rng.randrange(1, 3)
    for i in range(np_):
        out.append(f".decl p{i}(x: number)")

    def atom(i, x, v):
        return f"r{i}({v})" if keyless[i] else f"r{i}({x}, {v})"

    for i, lat in enumerate(lats):
        for _ in range(rng.randrange(0, 3)):
            out.append(atom(i, rng.randrange(7), value(rng, lat)) + ".")
        # a relation of lattice values alone is read by no lattice relation's rule: in a
        # recursion Soufflé 2.5 keeps each value it was raised to (docs/language.md)
        same = [j for j in range(nl) if lats[j] == lat and not keyless[j]]
        for _ in range(rng.randrange(1, 4) if same else 0):
            j = rng.choice(same)
            kind = rng.randrange(5)
            guard = ", v < 12" if lat == "Max" else ""
            if kind == 0:
                out.append(f"{atom(i, 'y', grow(rng, lat, 'v'))} :- {atom(j, 'x', 'v')}, e(x, y){guard}.")
            elif kind == 1:
                out.append(f"{atom(i, 'x', 'v')} :- {atom(j, 'x', 'v')}{guard}.")
            elif kind == 2:
                out.append(f"{atom(i, 'x', value(rng, lat))} :- e(x, _).")
            elif kind == 3:
                k = rng.choice(same)
                if keyless[i] or keyless[j] or keyless[k]:
                    continue
                out.append(f"{atom(i, 'x', 'v')} :- {atom(j, 'x', 'v')}, {atom(k, 'x', 'v')}, e(x, _).")
            else:
                out.append(f"{atom(i, 'x', grow(rng, lat, 'v'))} :- {atom(j, 'x', 'v')}, e(x, x){guard}.")
    for i in range(np_):
        for _ in range(rng.randrange(1, 3)):
            j = rng.randrange(nl)
            kind = rng.randrange(4)
            if kind == 0:
                out.append(f"p{i}(x) :- {atom(j, 'x', value(rng, lats[j]))}, e(x, _).")
            elif kind == 1:
                out.append(f"p{i}(x) :- e(x, _), !{atom(j, 'x', value(rng, lats[j]))}.")
            elif kind == 2:
                out.append(f"p{i}(x) :- {atom(j, 'x', 'v')}, e(x, _), v > {rng.randrange(8)}.")
            else:
                out.append(f"p{i}(x) :- {atom(j, 'x', 'y')}, e(x, y).")
    out.append(".output " + ", ".join([f"r{i}" for i in range(nl)] + [f"p{i}" for i in range(np_)]))
    return "\n".join(out) + "\n"


def outputs(d):
    return {f: sorted(open(os.path.join(d, f)).read().splitlines()) for f in os.listdir(d)}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("rfx")
    ap.add_argument("n", type=int)
    ap.add_argument("--souffle", required=True)
    ap.add_argument("--lib", required=True)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--work", default="/tmp/diff_lattice")
    a = ap.parse_args()
    a.lib = os.path.abspath(a.lib)
    a.rfx = os.path.abspath(a.rfx)
    inc = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(a.souffle))), "include")
    rng = random.Random(a.seed)
    passed = failed = 0
    for k in range(a.n):
        d = os.path.join(a.work, str(k))
        shutil.rmtree(d, ignore_errors=True)
        os.makedirs(os.path.join(d, "s"))
        os.makedirs(os.path.join(d, "r"))
        with open(os.path.join(d, "p.dl"), "w") as f:
            f.write(program(rng))
        env = dict(os.environ, LD_LIBRARY_PATH=a.lib)
        gen = subprocess.run([a.souffle, "-g", "p.cpp", "p.dl"], cwd=d, capture_output=True, text=True)
        if gen.returncode == 0:
            gen = subprocess.run(["c++", "-std=c++17", "-O0", "-DUSE_LIBZ", "-I", inc, "p.cpp", "-o", "p",
                                  f"-L{a.lib}", "-ltestfunctors", "-lz", "-pthread"], cwd=d, capture_output=True,
                                 text=True)
        if gen.returncode != 0:
            why = [line for line in gen.stderr.splitlines() if "rror" in line][:2]
            print(f"{k}: Soufflé refused it: {why}")
            continue
        s = subprocess.run(["./p", "-D", "s"], cwd=d, env=env, capture_output=True, text=True, timeout=60)
        r = subprocess.run([a.rfx, "-j2", "-L", a.lib, "-l", "testfunctors", "-D", "r", "p.dl"], cwd=d,
                           capture_output=True, text=True, timeout=60)
        if s.returncode != 0 or r.returncode != 0 or outputs(os.path.join(d, "s")) != outputs(os.path.join(d, "r")):
            failed += 1
            print(f"{k}: DIFFERS (Soufflé {s.returncode}, rfx {r.returncode}) {d}/p.dl {r.stderr.strip()[:200]}")
        else:
            passed += 1
    print(f"lattices: {passed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
