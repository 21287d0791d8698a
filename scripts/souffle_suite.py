#!/usr/bin/env python3
"""Soufflé's own test programs, run by rfx and compared with Soufflé 2.5's answers: each
directory TESTS/NAME holding NAME.dl (Soufflé's source tree: tests/evaluation, tests/example,
tests/interface, tests/scheduler) is run as `rfx -F FACTS -D OUT NAME.dl`, FACTS being
NAME/facts where it exists, else NAME itself, with -L NAME where the directory holds a
libfunctors.so (build it from the test's functors.cpp against Soufflé's headers first).

The answers are Soufflé's, run the same way (--souffle BIN: its interpreter, or a compiled
binary where the program declares functors: the interpreter cannot call them, --compile
builds one with c++ and the headers beside BIN). Outputs compare as sets of lines. A program
both refuse agrees; one only rfx refuses, or only Soufflé, is reported.

Soufflé's test programs are not part of rfx (their licence is Soufflé's): point TESTS at a
checkout. Usage:
  scripts/souffle_suite.py RFX TESTS... --souffle SOUFFLE_BIN [--compile] [--work DIR]
Prints one line per program and a closing count; exit status 1 when any answer differs."""
import argparse
import os
import shutil
import subprocess
import sys


def run(cmd, cwd, env=None, timeout=120):
    try:
        p = subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout)
        return p.returncode, p.stderr
    except subprocess.TimeoutExpired:
        return 124, "timed out"


def outputs(d):
    got = {}
    for f in sorted(os.listdir(d)):
        with open(os.path.join(d, f), errors="replace") as h:
            got[f] = sorted(h.read().splitlines())
    return got


def souffle_answers(args, name, src, facts, out, lib):
    """Soufflé's outputs into out; its exit status."""
    uses_functors = ".functor" in open(src, errors="replace").read()
    if not uses_functors or not args.compile:
        if uses_functors:
            return 125, "declares functors: give --compile"
        return run([args.souffle, "-F", facts, "-D", out, src], os.path.dirname(src))
    home = os.path.dirname(os.path.dirname(os.path.abspath(args.souffle)))
    cpp, exe = os.path.join(out, "..", name + ".cpp"), os.path.join(out, "..", name + ".bin")
    rc, err = run([args.souffle, "-g", cpp, src], os.path.dirname(src))
    if rc:
        return rc, err
    link = ["-L" + lib, "-lfunctors"] if lib else []
    rc, err = run(["c++", "-std=c++17", "-O1", "-fopenmp", "-DUSE_LIBZ", "-I", os.path.join(home, "include"), cpp,
                   "-o", exe] + link + ["-lz", "-pthread"], out, timeout=600)
    if rc:
        return rc, err
    env = dict(os.environ, LD_LIBRARY_PATH=lib or "")
    return run([exe, "-F", facts, "-D", out], os.path.dirname(src), env)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("rfx")
    ap.add_argument("tests", nargs="+")
    ap.add_argument("--souffle", required=True)
    ap.add_argument("--compile", action="store_true")
    ap.add_argument("--work", default="souffle-suite.work")
    args = ap.parse_args()
    args.rfx, args.souffle = os.path.abspath(args.rfx), os.path.abspath(args.souffle)
    shutil.rmtree(args.work, ignore_errors=True)
    counts = {"same": 0, "differ": 0, "refused": 0, "both refuse": 0, "skipped": 0}
    for tests in args.tests:
        for name in sorted(os.listdir(tests)):
            d = os.path.join(tests, name)
            src = os.path.join(d, name + ".dl")
            if not os.path.isfile(src):
                continue
            facts = os.path.join(d, "facts") if os.path.isdir(os.path.join(d, "facts")) else d
            lib = d if os.path.exists(os.path.join(d, "libfunctors.so")) else None
            work = os.path.join(args.work, os.path.basename(tests.rstrip("/")), name)
            so, ro = os.path.join(work, "souffle"), os.path.join(work, "rfx")
            os.makedirs(so)
            os.makedirs(ro)
            src = os.path.abspath(src)
            s_rc, s_err = souffle_answers(args, name, src, os.path.abspath(facts), os.path.abspath(so), lib)
            if s_rc == 125:
                counts["skipped"] += 1
                print("%-32s skipped: %s" % (name, s_err))
                continue
            cmd = [args.rfx, "-F", os.path.abspath(facts), "-D", os.path.abspath(ro)]
            if lib:
                cmd += ["-L", os.path.abspath(lib)]
            r_rc, r_err = run(cmd + [src], d)
            if s_rc and r_rc:
                verdict = "both refuse"
            elif r_rc:
                verdict = "refused"
            elif s_rc:
                verdict = "differ"   # rfx answers where Soufflé stops: reported, judged by a person
            else:
                verdict = "same" if outputs(so) == outputs(ro) else "differ"
            counts[verdict] += 1
            why = (r_err.strip().splitlines() or [""])[0] if verdict == "refused" else \
                  "Soufflé stopped: " + ((s_err.strip().splitlines() or [""])[-1]) if s_rc and not r_rc else ""
            print("%-32s %s%s" % (name, verdict, "  " + why if why else ""))
    print("souffle_suite: " + ", ".join("%d %s" % (v, k) for k, v in counts.items()))
    return 1 if counts["differ"] or counts["refused"] else 0


if __name__ == "__main__":
    sys.exit(main())
