"""rfx from Python: Datalog on a GPU where there is one and on all CPU cores where not.

    import rfx, numpy as np
    eng = rfx.Engine()
    eng.load('''.decl edge(x: number, y: number)
                .decl path(x: number, y: number)
                path(x, y) :- edge(x, y).
                path(x, z) :- path(x, y), edge(y, z).''')
    eng.insert("edge", np.array([[1, 2], [2, 3]], dtype=np.int32))
    eng.run()
    eng.relation("path")        # Relation (an ndarray) [[1 2] [1 3] [2 3]]

Tuples move as whole columns through librfx (rfx.h's rfx_insert_columns / rfx_read_columns);
the GIL is released while librfx works. docs/python.md is the tour.
"""
import atexit
import json
import os
import sys
import threading
import weakref

import numpy as np

from . import _capi as C
from . import _data
from ._errors import BY_CODE, Error, InputError, InternalError, ProgramError, ResourceError

__all__ = ["Engine", "Relation", "cliques", "Error", "ProgramError", "InputError", "ResourceError",
           "InternalError", "__version__"]
__version__ = C.version().decode()

_SUFFIX = {"": 1, "k": 1 << 10, "m": 1 << 20, "g": 1 << 30, "t": 1 << 40}


def _bytes(size):
    if size is None:
        return 0
    if isinstance(size, str):
        s = size.strip().lower().rstrip("b").rstrip("i")
        unit = s[-1] if s and s[-1] in _SUFFIX else ""
        try:
            return int(float(s[:len(s) - len(unit)]) * _SUFFIX[unit])
        except ValueError:
            raise InputError(f"device_memory: '{size}' is not a size (bytes, or a number with K, M, G or T)") \
                from None
    return int(size)


def _encode(s):
    return None if s is None else os.fsencode(s)


class Relation(np.ndarray):
    """A relation's tuples: an ndarray of shape (n, arity) in rfx's output order, with the
    relation's .name, .columns (attribute names) and .types ('number', 'unsigned', 'float',
    'symbol'). Its dtype is the columns' own (int32, uint32, float32) when they share one,
    int64 or float64 when numbers of several kinds meet, object where symbols are involved
    (their texts as str)."""

    def __array_finalize__(self, obj):
        self.name = getattr(obj, "name", None)
        self.columns = getattr(obj, "columns", None)
        self.types = getattr(obj, "types", None)

    def _column(self, c):
        col = np.asarray(self)[:, c]
        native = _data.NATIVE[_TYPE_CODES[self.types[c]]]
        return col if native == object else col.astype(native, copy=False)

    def to_pandas(self):
        """A pandas DataFrame, a column per attribute, each of its own type."""
        import pandas as pd
        return pd.DataFrame({name: self._column(c) for c, name in enumerate(self.columns)})

    def to_arrow(self):
        """A pyarrow Table, a column per attribute (symbols as strings)."""
        import pyarrow as pa
        kinds = {"number": pa.int32(), "unsigned": pa.uint32(), "float": pa.float32(), "symbol": pa.string()}
        return pa.table({name: pa.array(self._column(c), type=kinds[self.types[c]])
                         for c, name in enumerate(self.columns)})


_TYPE_CODES = {v: k for k, v in _data.TYPE_NAMES.items()}


class _Progress:
    """The terminal progress line of long runs (stratum, iteration, delta sizes, time), read
    from a pipe librfx writes into and redrawn on sys.stderr, where Jupyter shows it too."""

    def __init__(self):
        r, w = os.pipe()
        self.fp = C.fdopen(w, b"w")
        if not self.fp:
            os.close(r)
            os.close(w)
            raise ResourceError("rfx: no pipe for the progress line")
        self.thread = threading.Thread(target=self._show, args=(r,), daemon=True, name="rfx-progress")
        self.thread.start()

    @staticmethod
    def _show(r):
        shown = 0
        pending = b""
        with os.fdopen(r, "rb", buffering=0) as f:
            while True:
                chunk = f.read(4096)
                if not chunk:
                    break
                pending += chunk
                *done, pending = pending.split(b"\r")
                for piece in done + ([pending] if pending.endswith(b"\n") else []):
                    line = piece.replace(b"\x1b[K", b"").decode("utf-8", "replace").rstrip("\n")
                    try:
                        sys.stderr.write("\r" + line.ljust(shown) + ("" if line else "\r"))
                        sys.stderr.flush()
                    except (OSError, ValueError):
                        pass
                    shown = len(line)

    def close(self):
        if self.fp:
            C.fclose(self.fp)
            self.fp = None
            self.thread.join(timeout=5)


def _show_progress_by_default():
    return "ipykernel" in sys.modules or (hasattr(sys.stderr, "isatty") and sys.stderr.isatty())


# Engines still open when the interpreter exits are closed first: closing one ends the
# kernel compiles its runs left in the background (rfx.h's rfx_close), which must not be
# at work when the process exits.
_open_engines = weakref.WeakSet()


@atexit.register
def _close_open_engines():
    for e in list(_open_engines):
        try:
            e.close()
        except Exception:
            pass


class Engine:
    """A Datalog engine: one program, the tuples inserted into it, the results of its last run.

    backend: "auto" (the CPU's cores and a GPU together), "cpu" or "cuda". threads: CPU worker
    threads (None: all cores). device_memory: bytes rfx may use on the GPU, an int or a string
    like "8G" (None: free memory less 5%). fact_dir / output_dir: where .input directives read
    from and .output directives write to (None: inputs hold only inserted tuples, outputs are
    read with relation()). profile: keep each run's per-operator profile for profile().
    progress: redraw a progress line during long runs (None: where stderr is a terminal or in
    Jupyter). tune: tuning settings, "key=value ..." (rfx --tune help). join: "auto", "binary"
    or "lftj". devices: GPU indexes. macros / include_dirs / library_dirs / libraries: as rfx's
    -M, -I, -L, -l; no_preprocessor: as --no-preprocessor (program files read as written).

    An engine is used by one thread at a time (calls from several wait their turn); separate
    engines run in separate threads at once."""

    def __init__(self, backend="auto", threads=None, device_memory=None, *, fact_dir=None, output_dir=None,
                 profile=False, progress=None, tune=None, join="auto", devices=None, no_fuse=False,
                 macros=None, library_dirs=None, libraries=None, include_dirs=None, no_preprocessor=False):
        self._p = None
        self._progress = None
        self._profile_file = None
        self._last_profile = None
        self._lock = threading.RLock()
        if backend not in C.BACKENDS:
            raise InputError(f"backend: '{backend}' is not one of auto, cpu, cuda")
        if join not in C.JOINS:
            raise InputError(f"join: '{join}' is not one of auto, binary, lftj")
        if tune is not None:
            err = C.ctypes.create_string_buffer(512)
            if not C.tune_check(tune.encode(), err, len(err)):
                raise InputError(f"tune: {err.value.decode()}")
        cfg = C.Config()
        C.config_init(C.ctypes.byref(cfg))
        cfg.backend = C.BACKENDS[backend]
        cfg.threads = 0 if threads is None else int(threads)
        if cfg.threads < 0:
            raise InputError("threads: must be positive (None: all cores)")
        cfg.device_memory = _bytes(device_memory)
        self._keep = [_encode(fact_dir), _encode(output_dir), _encode(macros), _encode(library_dirs),
                      _encode(libraries), tune.encode() if tune else None, _encode(include_dirs)]
        (cfg.fact_dir, cfg.output_dir, cfg.macros, cfg.library_dirs, cfg.libraries, cfg.tune,
         cfg.include_dirs) = self._keep
        cfg.join = C.JOINS[join]
        cfg.no_fuse = bool(no_fuse)
        cfg.no_preprocessor = bool(no_preprocessor)
        if devices is not None:
            devs = (C.ctypes.c_int * len(devices))(*devices)
            self._keep.append(devs)
            cfg.devices, cfg.ndevices = devs, len(devices)
        if profile:
            self._profile_file = C.CFile()
            cfg.profile_json = self._profile_file.fp
        if progress or (progress is None and _show_progress_by_default()):
            self._progress = _Progress()
            cfg.progress = self._progress.fp
        self._p = C.open_engine(C.ctypes.byref(cfg))
        if not self._p:
            self._close_files()
            raise ResourceError("rfx: out of memory opening an engine")
        _open_engines.add(self)

    # ---- life ---------------------------------------------------------------------------
    def close(self):
        """Frees the engine (device memory included); later calls fail."""
        with self._lock:
            if self._p:
                C.close(self._p)
                self._p = None
            self._close_files()

    def _close_files(self):
        if self._progress:
            self._progress.close()
            self._progress = None
        if self._profile_file:
            self._profile_file.close()
            self._profile_file = None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def __del__(self):
        try:
            self.close()
        except Exception:
            pass

    def _engine(self):
        if not self._p:
            raise InputError("rfx: the engine is closed")
        return self._p

    def _check(self, rc):
        if rc:
            msg = (C.errmsg(self._p) or b"").decode("utf-8", "replace").strip()
            if msg.startswith("rfx: error: ") and "\n" not in msg:   # a one-line message: its text alone
                msg = msg[len("rfx: error: "):]
            raise BY_CODE.get(rc, InternalError)(msg or f"rfx failed (exit status {rc})")
        return rc

    # ---- the program ----------------------------------------------------------------------
    def load(self, program, name=None):
        """Loads a program: a path (str or os.PathLike, a file that exists or a name ending in
        .dl) or the program's text. One program per engine."""
        with self._lock:
            p = self._engine()
            if isinstance(program, os.PathLike) or (isinstance(program, str) and "\n" not in program and (
                    program.endswith(".dl") or os.path.isfile(program))):
                self._check(C.load_file(p, os.fsencode(program)))
            else:
                if isinstance(program, bytes):
                    program = program.decode()
                self._check(C.load_string(p, program.encode(), (name or "<string>").encode()))
        return self

    @property
    def relations(self):
        """The names of the loaded program's relations, in declaration order."""
        with self._lock:
            p = self._engine()
            names, i = [], 0
            while True:
                n = C.relation_name(p, i)
                if n is None:
                    return names
                names.append(n.decode())
                i += 1

    def _info(self, relation):
        p = self._engine()
        arity = C.ctypes.c_int()
        self._check(C.relation_info(p, relation.encode(), C.ctypes.byref(arity), None))
        types = (C.ctypes.c_int * max(arity.value, 1))()
        self._check(C.relation_info(p, relation.encode(), C.ctypes.byref(arity), types))
        return arity.value, list(types)[:arity.value]

    def columns(self, relation):
        """A relation's attributes as (name, type) pairs."""
        with self._lock:
            arity, types = self._info(relation)
            return [((C.attribute_name(self._p, relation.encode(), c) or f"c{c}".encode()).decode(),
                     _data.TYPE_NAMES[t]) for c, t in enumerate(types)]

    def emit(self, stage="plan"):
        """A stage of the program's compilation as text: "ast", "plan", "harmony", "fused" or
        "cuda" (rfx --emit)."""
        if stage not in C.STAGES:
            raise InputError(f"emit: '{stage}' is not one of {', '.join(C.STAGES)}")
        with self._lock:
            f = C.CFile()
            try:
                self._check(C.emit(self._engine(), C.STAGES[stage], f.fp))
                return f.read_new()
            finally:
                f.close()

    # ---- tuples ---------------------------------------------------------------------------
    def insert(self, relation, data):
        """Adds tuples to a relation: anything NumPy views as a 2-D array of its columns (a
        1-D one for a unary relation), a structured array, a list of tuples, a pandas
        DataFrame or a pyarrow Table (columns in the relation's order). Numbers go in as
        int32/uint32/float32 or 64-bit values that fit; symbols as str. They take part in every
        later run. Nothing is inserted when a value does not fit."""
        with self._lock:
            arity, types = self._info(relation)
            cols = _data.split_columns(data, arity, types, relation)
            n = len(cols[0]) if cols else (len(data) if hasattr(data, "__len__") else 0)
            keep = []
            arr = (C.Column * max(arity, 1))(*[_data.to_column(col, t, c, relation, keep)
                                                for c, (col, t) in enumerate(zip(cols, types))])
            self._check(C.insert_columns(self._p, relation.encode(), arr, n))
        return self

    def read_inputs(self):
        """Reads the program's .input files now (from fact_dir) and keeps their tuples as
        inserted ones: later runs read no file. For a program run many times over the same
        facts; once per engine."""
        with self._lock:
            self._check(C.read_inputs(self._engine()))
        return self

    def run(self):
        """Computes the fixpoint over everything inserted so far (and the program's facts and
        inputs); the results of the previous run are replaced."""
        with self._lock:
            rc = C.run(self._engine())
            if self._profile_file:   # a failed run writes no profile
                text = self._profile_file.read_new().strip()
                self._last_profile = json.loads(text) if text and rc == 0 else None
            self._check(rc)
        return self

    def size(self, relation):
        """The number of tuples of a relation after the last run."""
        with self._lock:
            n = C.ctypes.c_size_t()
            self._check(C.size(self._engine(), relation.encode(), C.ctypes.byref(n)))
            return n.value

    def relation(self, relation):
        """A relation's tuples after the last run, as a Relation (an ndarray of shape
        (n, arity)) in the order rfx writes them."""
        with self._lock:
            arity, types = self._info(relation)
            n = C.ctypes.c_size_t()
            self._check(C.size(self._p, relation.encode(), C.ctypes.byref(n)))
            n = n.value
            names = [((C.attribute_name(self._p, relation.encode(), c) or f"c{c}".encode()).decode())
                     for c in range(arity)]
            kinds = set(types)
            if len(kinds) == 1 and C.COL_SYMBOL not in kinds:   # one 2-D array, filled in place
                out = np.empty((n, arity), dtype=_data.NATIVE[types[0]])
                fmt = _data.READ_FORMATS[types[0]]
                cols = (C.Column * arity)(*[C.Column(fmt, out.ctypes.data + 4 * c, 4 * arity, 0, None)
                                            for c in range(arity)])
                self._check(C.read_columns(self._p, relation.encode(), cols, n, None))
            else:
                # one array per column, each in its own type, then put side by side
                parts = [np.empty(n, dtype=np.uint32 if t == C.COL_SYMBOL else _data.NATIVE[t]) for t in types]
                cols = (C.Column * max(arity, 1))(*[C.Column(_data.READ_FORMATS[t], a.ctypes.data, 4, 0, None)
                                                    for a, t in zip(parts, types)])
                self._check(C.read_columns(self._p, relation.encode(), cols, n, None))
                parts = [_data.texts_of(self._p, a, self._check) if t == C.COL_SYMBOL else a
                         for a, t in zip(parts, types)]
                if C.COL_SYMBOL in kinds:
                    dtype = object
                elif C.COL_FLOAT in kinds:
                    dtype = np.float64
                else:
                    dtype = np.int64
                out = np.empty((n, arity), dtype=dtype)
                for c, a in enumerate(parts):
                    out[:, c] = a
            rel = out.view(Relation)
            rel.name, rel.columns, rel.types = relation, names, [_data.TYPE_NAMES[t] for t in types]
            return rel

    def profile(self):
        """The last run's profile as a dict (per operator: calls, seconds, tuples, bytes moved;
        the backend and device), as `rfx --profile=json:FILE` writes it. Needs
        Engine(profile=True); None before the first run."""
        if not self._profile_file and self._p:
            raise InputError("profile: this engine keeps no profile (open it with Engine(profile=True))")
        return self._last_profile


def _edge_array(edges):
    """(edges as an int array of shape (m, 2), vertex labels or None where ids are the labels)."""
    if _data._module(edges) == "networkx":
        nodes = list(edges.nodes())
        if all(isinstance(v, (int, np.integer)) and -2**31 <= v < 2**31 for v in nodes):
            arr = np.array(list(edges.edges()), dtype=np.int64).reshape(-1, 2)
            return arr, None
        labels = np.empty(len(nodes), dtype=object)
        labels[:] = nodes
        index = {v: i for i, v in enumerate(nodes)}
        arr = np.array([(index[a], index[b]) for a, b in edges.edges()], dtype=np.int32).reshape(-1, 2)
        return arr, labels
    if _data._module(edges) in ("pandas", "pyarrow"):
        return edges, None
    arr = np.asarray(edges)
    if arr.ndim != 2 or arr.shape[1] < 2:
        raise InputError(f"cliques: edges must be an array of shape (m, 2), got {arr.shape}")
    return arr[:, :2], None


def cliques(edges, k=3, count=True, order=None, **engine_options):
    """The k-cliques (2 <= k <= 8) of a graph: an edge array of shape (m, 2), a DataFrame or
    Arrow table of two columns, a networkx graph, or the path of an edge-list file (SNAP's
    format, read by rfx: '#' comments, any blanks or commas, gzip); taken as undirected and simple, as
    `rfx cliques` does. count=True: their number (never listed); otherwise a Relation with a
    clique a row, vertices ascending (networkx labels where they are not ints). order:
    "degree" or "id", how edges are oriented (default: degree when counting, id when
    listing). engine_options go to Engine (backend, threads, device_memory, ...)."""
    if not isinstance(k, (int, np.integer)) or not 2 <= k <= 8:
        raise InputError(f"cliques: k must be a clique size from 2 to 8, got {k!r}")
    if order not in (None, "degree", "id"):
        raise InputError(f"cliques: order must be 'degree' or 'id', got {order!r}")
    by_degree = count if order is None else order == "degree"
    path = None
    if isinstance(edges, (str, bytes, os.PathLike)):   # rfx reads the file (inputs come from fact_dir)
        full = os.path.abspath(os.fsdecode(edges))
        if not os.path.isfile(full):
            raise InputError(f"cliques: {os.fsdecode(edges)}: no such file")
        engine_options["fact_dir"] = os.path.dirname(full)
        path = os.fsencode(os.path.basename(full))
    n = C.clique_program(None, 0, int(k), bool(count), by_degree, path)
    buf = C.ctypes.create_string_buffer(n + 1)
    C.clique_program(buf, n + 1, int(k), bool(count), by_degree, path)
    arr, labels = _edge_array(edges) if path is None else (None, None)
    engine_options.setdefault("progress", False)
    with Engine(**engine_options) as eng:
        eng.load(buf.value.decode("utf-8", "surrogateescape"), name=f"<{k}-cliques>")
        if arr is not None:
            eng.insert("edge", arr)
        eng.run()
        if count:
            return eng.size("clique")
        found = eng.relation("clique")
        if labels is None:
            return found
        named = labels[np.asarray(found)].view(Relation)
        named.name, named.columns, named.types = found.name, found.columns, ["symbol"] * k
        return named
