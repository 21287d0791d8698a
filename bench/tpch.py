#!/usr/bin/env python3
"""TPC-H in Datalog against DuckDB: generate the tables, run each programs/tpch/qNN.dl with
rfx and the same query with DuckDB, compare the answers, print a table.

    bench/tpch.py gen DIR SF [--answers FILE]
                                      tables as DIR/<table>.tbl (DuckDB's dbgen, '|', no header);
                                      with --answers, DuckDB's answers to the queries (and its
                                      times) kept in FILE, made over the tables it generated
    bench/tpch.py run DIR RFX [opts]  each query with rfx and DuckDB over DIR's tables
    bench/tpch.py suite DIR RFX [opts]
                                      the queries as one program (each a component, the tables
                                      read once), one rfx process a backend, each answer compared

run options: --queries 1,6 (default: every programs/tpch/qNN.dl), --backends cpu,cuda
(default cpu), --repeat N (timings: best of N), --rfx-args "..." (passed to rfx), --answers
FILE (DuckDB's answers and times from gen, where loading the tables into DuckDB again would
take minutes: large scale factors). Each rfx
time is its whole process; its load column is the part --profile gives to reading the
tables (its INPUT row), from one more run (--no-loads: none, "?"). With --kept
BENCH_QUERIES (build/bench/bench_queries) RFX is not run: each query's engine reads its
tables once (the load column) and its time is the best of N runs over them after an untimed
one, as DuckDB's is over the tables it holds; its floor column is the bandwidth floor of
the query's scans (its inputs read once at the measured copy bandwidth, from one more,
profiled run) as a fraction of that time; the last row sums each column.

Answers compare as SQL's: decimals exactly, floats to 1e-9 relative, dates and text as
text; rows in order where the query orders them (rows equal on its sort keys in any
order); SQL's row of NULLs (an aggregate over no row) as no row, Datalog having no NULL. Needs the PyPI packages duckdb==1.5.5 and duckdb-extension-tpch==1.5.5 (the
extension is loaded from the wheel); exit 2 with one line where they are missing, 1 where
an answer differs."""
import argparse
import datetime
import decimal
import os
import pickle
import re
import shutil
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
PROGRAMS = os.path.join(HERE, "..", "programs", "tpch")
TABLES = ["lineitem", "orders", "customer", "part", "partsupp", "supplier", "nation", "region"]


def duckdb_connection():
    try:
        import duckdb
        import duckdb_extension_tpch
    except ImportError:
        print("tpch: skipped: the PyPI packages duckdb==1.5.5 and duckdb-extension-tpch==1.5.5 are not installed")
        sys.exit(2)
    ext = os.path.join(os.path.dirname(duckdb_extension_tpch.__file__), "extensions", "v" + duckdb.__version__,
                       "tpch.duckdb_extension")
    con = duckdb.connect(config={"allow_unsigned_extensions": "true"})
    con.execute("LOAD '%s'" % ext)
    return con


def generate(directory, sf, answers):
    os.makedirs(directory, exist_ok=True)
    con = duckdb_connection()
    con.execute("CALL dbgen(sf=%s)" % sf)
    for t in TABLES:
        con.execute("COPY %s TO '%s' (DELIMITER '|', HEADER false)" % (t, os.path.join(directory, t + ".tbl")))
    if answers:   # written whole or not at all
        kept = {q: duck_answer(con, q, 1) for q in all_queries()}
        with open(answers + ".tmp", "wb") as f:
            pickle.dump(kept, f)
        os.replace(answers + ".tmp", answers)


def all_queries():
    return sorted(int(f[1:3]) for f in os.listdir(PROGRAMS) if re.match(r"q\d\d\.dl$", f))


def duck_answer(con, q, repeat):
    """Query q by DuckDB: (its SQL, the column names, the rows, the best of repeat runs in s)."""
    sql = con.execute("SELECT query FROM tpch_queries() WHERE query_nr = %d" % q).fetchall()[0][0]
    best = None
    for _ in range(repeat):
        t0 = time.perf_counter()
        res = con.execute(sql)
        rows = res.fetchall()
        best = min(best or 1e9, time.perf_counter() - t0)
    return sql, [d[0] for d in res.description], rows, best


def load(con, directory):
    """DuckDB's own tables from the same files rfx reads (its types, as dbgen made them)."""
    con.execute("CALL dbgen(sf=0)")
    for t in TABLES:
        con.execute("DELETE FROM %s" % t)
        con.execute("COPY %s FROM '%s' (DELIMITER '|', HEADER false)" % (t, os.path.join(directory, t + ".tbl")))


def value(text, like):
    """rfx's text of a value as the Python value DuckDB returns beside it."""
    if isinstance(like, bool) or like is None:
        return text
    if isinstance(like, decimal.Decimal):
        return decimal.Decimal(text)
    if isinstance(like, float):
        return float(text)
    if isinstance(like, int):
        return int(text)
    if isinstance(like, datetime.date):
        return datetime.date.fromisoformat(text)
    return text


def same_value(a, b):
    if isinstance(b, float):
        return a == b or abs(a - b) <= 1e-9 * max(abs(a), abs(b))
    return a == b


def sort_keys(sql, names):
    """The select-list positions of the query's ORDER BY keys (None: not ordered)."""
    m = re.search(r"ORDER\s+BY\s+(.*?)(LIMIT|;|$)", sql, re.S | re.I)
    if not m:
        return None
    keys = []
    for item in m.group(1).split(","):
        name = item.strip().split()[0] if item.strip() else ""
        if name in names:
            keys.append(names.index(name))
    return keys


def compare(rfx_rows, duck_rows, keys):
    # an aggregate over no row is SQL's NULL; Datalog has no NULL, and its program no row
    duck_rows = [r for r in duck_rows if any(x is not None for x in r)]
    if len(rfx_rows) != len(duck_rows):
        return "%d rows, DuckDB %d" % (len(rfx_rows), len(duck_rows))
    got = [tuple(value(t, d) for t, d in zip(r, dr)) for r, dr in zip(rfx_rows, duck_rows)]

    def norm(rows):   # rows equal on the sort keys may come in any order
        return sorted(rows, key=lambda r: tuple(str(x) for x in r))

    def group(rows):
        if keys is None:
            return [norm(rows)]
        out, cur, last = [], [], None
        for r in rows:
            k = tuple(r[i] for i in keys)
            if cur and k != last:
                out.append(norm(cur))
                cur = []
            cur.append(r)
            last = k
        return out + ([norm(cur)] if cur else [])

    for gg, gd in zip(group(got), group(list(duck_rows))):
        for a, b in zip(gg, gd):
            if len(a) != len(b) or not all(same_value(x, y) for x, y in zip(a, b)):
                return "row %s, DuckDB %s" % (a, b)
    return None


def input_seconds(profile):
    """The seconds --profile gives reading the tables (its INPUT row): the load, apart."""
    for line in profile.splitlines():
        f = line.split()
        if len(f) > 2 and f[0] == "INPUT":
            return float(f[2])
    return None


def duck_answers(args):
    """The queries asked, and a function of a query and a repeat count giving DuckDB's answer
    (duck_answer's tuple): from --answers' file, or from DuckDB over the directory's tables."""
    queries = [int(q) for q in args.queries.split(",")] if args.queries else all_queries()
    if args.answers:
        with open(args.answers, "rb") as f:
            kept = pickle.load(f)
        return queries, lambda q, repeat: kept[q]
    con = duckdb_connection()
    load(con, args.dir)
    return queries, lambda q, repeat: duck_answer(con, q, repeat)


def run(args):
    queries, answer_of = duck_answers(args)
    bad = 0
    backends = args.backends.split(",")
    duck_total, totals = 0.0, {b: [0.0, 0.0, 0.0] for b in backends}
    floor = " | %s floor" if args.kept else ""
    print("| query | rows | DuckDB s | " + " | ".join(("rfx %s s | %s load s" + floor) % ((b, b, b) if floor else (b, b))
                                                 for b in backends) + " | answers |")
    print("|---:|---:|---:|" + ("---:|---:|---:|" if floor else "---:|---:|") * len(backends) + "---|")
    for q in queries:
        sql, names, duck, best = answer_of(q, args.repeat)
        cells, why = [], None
        for b in backends:
            out = tempfile.mkdtemp(prefix="tpch-q%02d-" % q)
            if args.kept:
                t_best, t_load, t_floor, failed = kept_times(args, b, out, q)
                if failed:
                    shutil.rmtree(out, ignore_errors=True)
                    why = why or "%s: %s" % (b, failed)
                    cells += ["-", "-", "-"]
                    continue
                why = why or answer(out, duck, sql, names)
                cells += ["%.3f" % t_best, "%.3f" % t_load, percent(t_floor, t_best)]
                totals[b] = [totals[b][0] + t_best, totals[b][1] + t_load, totals[b][2] + t_floor]
                continue
            t_best = None
            cmd = [args.rfx, "-q", "--backend=" + b, "-F", args.dir, "-D", out] + args.rfx_args.split() + [
                os.path.join(PROGRAMS, "q%02d.dl" % q)]
            for _ in range(args.repeat):
                t0 = time.perf_counter()
                r = subprocess.run(cmd, capture_output=True, text=True)
                t_best = min(t_best or 1e9, time.perf_counter() - t0)
            # the load apart: one more run, profiled (the profile's own measurements cost time)
            t_load = input_seconds(subprocess.run(cmd[:2] + ["--profile"] + cmd[2:], capture_output=True,
                                                  text=True).stderr) if r.returncode == 0 and args.loads else None
            if r.returncode != 0:
                shutil.rmtree(out, ignore_errors=True)
                why = why or "%s: rfx exit %d: %s" % (b, r.returncode, r.stderr.strip()[:300])
                cells += ["-", "-"]
                continue
            why = why or answer(out, duck, sql, names)
            cells += ["%.3f" % t_best, "%.3f" % t_load if t_load is not None else "?"]
        bad += why is not None
        duck_total += best
        print("| Q%d | %d | %.3f | %s | %s |" % (q, len(duck), best, " | ".join(cells), why or "equal"))
    if args.kept:
        print("| total | | %.3f | %s | |" % (duck_total, " | ".join(
            "%.3f | %.3f | %s" % (totals[b][0], totals[b][1], percent(totals[b][2], totals[b][0])) for b in backends)))
    return 1 if bad else 0


def answer(out, duck, sql, names, name="result", keep=False):
    """rfx's result (relation name's file in folder out, removed after unless keep) against
    DuckDB's rows: None, or how they differ."""
    with open(os.path.join(out, name + ".csv")) as f:
        rows = [line.rstrip("\n").split("\t") for line in f if line.strip("\n") != ""]
    if not keep:
        shutil.rmtree(out, ignore_errors=True)
    return compare(rows, duck, sort_keys(sql, names))


def suite_program(queries):
    """One program of the queries: each query's rules a component (its relations qNN.*), the
    tables its files include declared once (each table's file is included once)."""
    includes, parts = [], []
    for q in queries:
        body = []
        with open(os.path.join(PROGRAMS, "q%02d.dl" % q)) as f:
            for line in f.read().splitlines():
                if line.startswith("#include"):
                    includes += [line] if line not in includes else []
                else:
                    body.append(line)
        parts.append(".comp Q%02d {\n%s\n}\n.init q%02d = Q%02d\n" % (q, "\n".join(body), q, q))
    return "\n".join(includes) + "\n" + "\n".join(parts)


def suite(args):
    """The queries as one program: one rfx process a backend (whole process, and the load from
    --profile's INPUT row), each component's result against DuckDB's answer."""
    queries, answer_of = duck_answers(args)
    duck = {q: answer_of(q, 1) for q in queries}
    work = tempfile.mkdtemp(prefix="tpch-suite-")
    program = os.path.join(work, "suite.dl")
    with open(program, "w") as f:
        f.write(suite_program(queries))
    bad = 0
    print("| backend | queries | DuckDB s (sum) | rfx s (process) | load s | answers |")
    print("|---|---:|---:|---:|---:|---|")
    for b in args.backends.split(","):
        out = os.path.join(work, b)
        os.makedirs(out)
        cmd = [args.rfx, "-q", "--profile", "--backend=" + b, "-I", PROGRAMS, "-F", args.dir, "-D", out] + \
            args.rfx_args.split() + [program]
        t0 = time.perf_counter()
        r = subprocess.run(cmd, capture_output=True, text=True)
        took = time.perf_counter() - t0
        if r.returncode != 0:
            why = "rfx exit %d: %s" % (r.returncode, r.stderr.strip()[-300:])
        else:
            whys = []
            for q in queries:
                sql, names, rows, _ = duck[q]
                w = answer(out, rows, sql, names, "q%02d.result" % q, keep=True)
                whys += ["Q%d: %s" % (q, w)] if w else []
            why = "; ".join(whys) or None
        bad += why is not None
        load_s = input_seconds(r.stderr) if r.returncode == 0 else None
        print("| %s | %d | %.3f | %.3f | %s | %s |" % (b, len(queries), sum(d[3] for d in duck.values()), took,
                                                   "%.3f" % load_s if load_s is not None else "?", why or "equal"))
    shutil.rmtree(work, ignore_errors=True)
    return 1 if bad else 0


def percent(part, whole):
    return "%.1f%%" % (100 * part / whole) if whole > 0 else "-"


def kept_times(args, backend, out, q):
    """bench_queries on one query: (best run s, load s, scans' floor s, None) or (.., why it failed)."""
    cmd = [args.kept, "-b", backend, "-r", str(args.repeat), "-F", args.dir, "-D", out,
           os.path.join(PROGRAMS, "q%02d.dl" % q)]
    r = subprocess.run(cmd, capture_output=True, text=True)
    for line in r.stdout.splitlines():
        f = line.split()
        if r.returncode == 0 and len(f) == 6 and f[0] == "q%02d.dl" % q:
            return float(f[3]) / 1e3, float(f[1]) / 1e3, float(f[4]) / 1e3, None
    return 0, 0, 0, "bench_queries exit %d: %s" % (r.returncode, (r.stdout + r.stderr).strip()[-300:])


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="cmd", required=True)
    g = sub.add_parser("gen")
    g.add_argument("dir")
    g.add_argument("sf")
    g.add_argument("--answers", default="", metavar="FILE")
    common = argparse.ArgumentParser(add_help=False)   # what run and suite both take
    common.add_argument("dir")
    common.add_argument("rfx")
    common.add_argument("--queries", default="")
    common.add_argument("--backends", default="cpu")
    common.add_argument("--rfx-args", default="")
    common.add_argument("--answers", default="", metavar="FILE")
    r = sub.add_parser("run", parents=[common])
    r.add_argument("--repeat", type=int, default=1)
    r.add_argument("--no-loads", dest="loads", action="store_false")
    r.add_argument("--kept", default="", metavar="BENCH_QUERIES")
    sub.add_parser("suite", parents=[common])
    args = ap.parse_args()
    if args.cmd == "suite":
        return suite(args)
    if args.cmd == "gen":
        generate(args.dir, args.sf, args.answers)
        return 0
    return run(args)


if __name__ == "__main__":
    sys.exit(main())
