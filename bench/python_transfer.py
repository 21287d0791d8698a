#!/usr/bin/env python3
"""Tuples between NumPy and librfx through the Python package: the rates of handing N int32
pairs to an engine and of reading a relation of that size back (the copies only; the run's
sorting and de-duplication are timed apart), and what the Python layer adds to a call.
GB/s is of the best of REPEATS calls (the first pays the page faults of fresh memory, which
the table shows beside it).
Usage: bench/python_transfer.py [N] [REPEATS]   (default 10^8 pairs, 3 repeats)"""
import statistics
import sys
import time

import numpy as np

import rfx
from rfx import _capi as C

PROGRAM = """.decl edge(x: number, y: number)
.decl copy(x: number, y: number)
copy(x, y) :- edge(x, y).
"""


def main():
    n = int(float(sys.argv[1])) if len(sys.argv) > 1 else 10**8
    repeats = int(sys.argv[2]) if len(sys.argv) > 2 else 3
    rng = np.random.default_rng(1)
    pairs = rng.integers(0, 2**31 - 1, size=(n, 2), dtype=np.int32)
    mb = pairs.nbytes / 1e6
    rows = []

    def transfer_in(data, label):
        def once():
            eng = rfx.Engine(backend="cpu", progress=False)
            eng.load(PROGRAM)
            t0 = time.perf_counter()
            eng.insert("edge", data)
            once.t = time.perf_counter() - t0
            eng.close()
        ts = []
        for _ in range(repeats):
            once()
            ts.append(once.t)
        rows.append((f"insert {label}", n, min(ts), ts[0], mb / 1e3 / min(ts)))

    transfer_in(pairs, "int32 row-major")
    transfer_in(np.asfortranarray(pairs), "int32 column-major")
    transfer_in(pairs.astype(np.int64), "int64 row-major (range-checked)")

    eng = rfx.Engine(backend="cpu", progress=False)
    eng.load(PROGRAM)
    eng.insert("edge", pairs)
    t0 = time.perf_counter()
    eng.run()
    t_run = time.perf_counter() - t0
    m = eng.size("copy")
    t_out = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        eng.relation("copy")
        t_out.append(time.perf_counter() - t0)
    out_mb = m * 8 / 1e6
    rows.append(("run (sort, unique, copy rule)", m, t_run, t_run, float("nan")))
    rows.append(("relation() int32 pairs", m, min(t_out), t_out[0], out_mb / 1e3 / min(t_out)))
    eng.close()

    # what the Python layer adds to a call: the wrapper against the bare ctypes call
    small = rfx.Engine(backend="cpu", progress=False)
    small.load(PROGRAM)
    tiny = np.array([[1, 2], [2, 3]], dtype=np.int32)
    small.insert("edge", tiny)

    def median_us(f, k=300):
        ts = []
        for _ in range(k):
            t0 = time.perf_counter()
            f()
            ts.append(time.perf_counter() - t0)
        return statistics.median(ts) * 1e6

    p = small._p
    size = C.ctypes.c_size_t()
    overhead = [
        ("run()", median_us(small.run), median_us(lambda: C.run(p))),
        ("size()", median_us(lambda: small.size("copy")),
         median_us(lambda: C.size(p, b"copy", C.ctypes.byref(size)))),
        ("relation() of 2 tuples", median_us(lambda: small.relation("copy")), None),
        ("insert() of 2 tuples", median_us(lambda: small.insert("edge", tiny)), None),
    ]
    small.close()

    print(f"rfx {rfx.__version__}, {n:,} int32 pairs ({mb:,.0f} MB), {repeats} repeats")
    print(f"{'transfer':<38} {'tuples':>12} {'best s':>8} {'first s':>8} {'GB/s':>6}")
    for label, k, t, first, rate in rows:
        print(f"{label:<38} {k:>12,} {t:>8.3f} {first:>8.3f} {rate:>6.2f}")
    print()
    print(f"{'call (median of 300)':<36} {'Python us':>10} {'bare C us':>10} {'added us':>9}")
    for label, py, bare in overhead:
        print(f"{label:<36} {py:>10.1f} {'' if bare is None else f'{bare:.1f}':>10} "
              f"{'' if bare is None else f'{py - bare:.1f}':>9}")


if __name__ == "__main__":
    main()
