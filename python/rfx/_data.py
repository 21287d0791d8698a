"""Tuples in and out as columns: NumPy arrays, pandas DataFrames and Arrow tables described to
librfx in place (rfx_column: pointer, stride, format), so no tuple passes through Python.
"""
import numpy as np

from . import _capi as C
from ._errors import InputError

_FORMATS = {
    np.dtype(np.int32): C.FMT_I32, np.dtype(np.uint32): C.FMT_U32, np.dtype(np.float32): C.FMT_F32,
    np.dtype(np.int64): C.FMT_I64, np.dtype(np.uint64): C.FMT_U64, np.dtype(np.float64): C.FMT_F64,
}
TYPE_NAMES = {C.COL_NUMBER: "number", C.COL_UNSIGNED: "unsigned", C.COL_FLOAT: "float", C.COL_SYMBOL: "symbol"}
# the format each column type reads as, and the NumPy dtype that holds it
READ_FORMATS = {C.COL_NUMBER: C.FMT_I32, C.COL_UNSIGNED: C.FMT_U32, C.COL_FLOAT: C.FMT_F32, C.COL_SYMBOL: C.FMT_SYMBOL}
NATIVE = {C.COL_NUMBER: np.dtype(np.int32), C.COL_UNSIGNED: np.dtype(np.uint32),
          C.COL_FLOAT: np.dtype(np.float32), C.COL_SYMBOL: np.dtype(object)}


def _module(x):
    return type(x).__module__.split(".")[0]


def split_columns(data, arity, types, relation):
    """The data as one 1-D object per column: NumPy arrays or Arrow arrays."""
    kind = _module(data)
    if kind == "pandas":
        if hasattr(data, "columns"):
            cols = [data.iloc[:, c] for c in range(data.shape[1])]
        else:
            cols = [data]
    elif kind == "pyarrow":
        cols = [data.column(c) for c in range(data.num_columns)] if hasattr(data, "num_columns") else [data]
    elif isinstance(data, np.ndarray) and data.dtype.names:
        cols = [data[name] for name in data.dtype.names]
    else:
        if not isinstance(data, np.ndarray):
            rows = data if isinstance(data, (list, tuple)) else list(data)
            mixed = C.COL_SYMBOL in types and any(t != C.COL_SYMBOL for t in types)
            if mixed or (len(rows) == 0):
                # rows of mixed types: one array per column, so numbers stay numbers
                cols = [np.asarray(col) for col in zip(*rows)] if rows else [np.zeros(0, np.int32)] * arity
                return _checked(cols, arity, relation, len(rows))
            try:
                data = np.asarray(rows)
            except ValueError as e:   # ragged rows
                raise InputError(f"insert into {relation}: the rows are not a table ({e})") from None
        if data.ndim == 1 and arity == 1:
            data = data.reshape(-1, 1)
        if data.ndim != 2:
            raise InputError(f"insert into {relation}: expected a 2-D array of {arity} columns, got shape "
                             f"{data.shape}")
        cols = [data[:, c] for c in range(data.shape[1])]
    return _checked(cols, arity, relation, len(cols[0]) if cols else 0)


def _checked(cols, arity, relation, n):
    if len(cols) != arity:
        raise InputError(f"insert into {relation}: {len(cols)} columns given, the relation has {arity}")
    for c, col in enumerate(cols):
        if len(col) != n:
            raise InputError(f"insert into {relation}: column {c + 1} holds {len(col)} values, column 1 {n}")
    return cols


def _no_nulls(col, c, relation):
    if _module(col) == "pandas" and col.isna().any():
        raise InputError(f"insert into {relation}: column {c + 1} holds missing values (NA/None/NaN)")
    if _module(col) == "pyarrow" and col.null_count:
        raise InputError(f"insert into {relation}: column {c + 1} holds nulls")


def _texts_from_objects(arr, c, relation):
    kinds = set(map(type, arr.tolist()))
    if kinds - {str}:
        bad = ", ".join(sorted(k.__name__ for k in kinds - {str}))
        raise InputError(f"insert into {relation}: column {c + 1} is a symbol column; it holds {bad} values")
    return np.asarray(arr, dtype=str) if len(arr) else np.zeros(0, "U1")


def _arrow_column(col, typ, c, relation, keep):
    import pyarrow as pa
    if isinstance(col, pa.ChunkedArray):
        col = col.combine_chunks() if col.num_chunks != 1 else col.chunk(0)
    if pa.types.is_dictionary(col.type):
        col = col.dictionary_decode()
    if typ == C.COL_SYMBOL and (pa.types.is_string(col.type) or pa.types.is_large_string(col.type)):
        col = col.cast(pa.large_string())
        keep.append(col)
        _, offsets, data = col.buffers()
        off = np.frombuffer(offsets, dtype=np.int64)[col.offset:col.offset + len(col) + 1]
        keep.append(off)
        return C.Column(C.FMT_UTF8, data.address if data is not None and data.size else off.ctypes.data, 0, 0,
                        off.ctypes.data)
    return None, col.to_numpy(zero_copy_only=False)


def to_column(col, typ, c, relation, keep):
    """A C column over col (a 1-D NumPy, pandas or Arrow column), converting only where librfx
    takes no format of it; what must stay alive during the call goes into keep."""
    if len(col) == 0:
        return C.Column(READ_FORMATS[typ], None, 0, 0, None)
    _no_nulls(col, c, relation)
    kind = _module(col)
    if kind == "pyarrow":
        got = _arrow_column(col, typ, c, relation, keep)
        if isinstance(got, C.Column):
            return got
        col = got[1]
    elif kind == "pandas":
        dt = col.dtype
        if isinstance(dt, np.dtype) and dt.kind in "iufb":
            col = col.to_numpy()
        elif typ == C.COL_SYMBOL:
            col = col.to_numpy(dtype=object)
        else:
            col = col.to_numpy(dtype=NATIVE[typ] if dt.kind != "O" else None)
    arr = np.asarray(col)
    if typ == C.COL_SYMBOL:
        if arr.dtype.kind in "OT":
            arr = _texts_from_objects(arr.astype(object) if arr.dtype.kind == "T" else arr, c, relation)
        if arr.dtype.kind == "U":
            fmt = C.FMT_UTF32_FIXED
        elif arr.dtype.kind == "S":
            fmt = C.FMT_UTF8_FIXED
        else:
            raise InputError(f"insert into {relation}: column {c + 1} is a symbol column; it holds "
                             f"{arr.dtype} values")
        keep.append(arr)
        return C.Column(fmt, arr.ctypes.data, arr.strides[0] if len(arr) else arr.itemsize, arr.itemsize, None)
    if arr.dtype.kind == "O":
        try:
            arr = np.asarray(arr.tolist(), dtype=np.float64 if typ == C.COL_FLOAT else np.int64)
        except (TypeError, ValueError, OverflowError):
            raise InputError(f"insert into {relation}: column {c + 1} is a {TYPE_NAMES[typ]} column; it holds "
                             f"values that are not numbers") from None
    if arr.dtype.kind == "b" or (arr.dtype.kind == "i" and arr.itemsize < 4):
        arr = arr.astype(np.int32)
    elif arr.dtype.kind == "u" and arr.itemsize < 4:
        arr = arr.astype(np.uint32)
    elif arr.dtype.kind == "f" and arr.itemsize < 4:
        arr = arr.astype(np.float32)
    elif arr.dtype.kind in "iuf" and not arr.dtype.isnative:
        arr = arr.astype(arr.dtype.newbyteorder("="))
    fmt = _FORMATS.get(arr.dtype)
    if fmt is None:
        raise InputError(f"insert into {relation}: column {c + 1} is a {TYPE_NAMES[typ]} column; it holds "
                         f"{arr.dtype} values")
    keep.append(arr)
    return C.Column(fmt, arr.ctypes.data, arr.strides[0] if len(arr) else arr.itemsize, 0, None)


def texts_of(engine_p, ids, fail):
    """An object array of the texts of symbol ids (each id's text made once)."""
    if len(ids) == 0:
        return np.zeros(0, dtype=object)
    uniq, inverse = np.unique(ids, return_inverse=True)
    uniq = np.ascontiguousarray(uniq, dtype=np.uint32)
    offsets = np.empty(len(uniq) + 1, dtype=np.int64)
    fail(C.symbol_texts(engine_p, uniq.ctypes.data, len(uniq), None, 0, offsets.ctypes.data))
    buf = np.empty(max(int(offsets[-1]), 1), dtype=np.uint8)
    fail(C.symbol_texts(engine_p, uniq.ctypes.data, len(uniq), buf.ctypes.data, len(buf), offsets.ctypes.data))
    blob = buf[:int(offsets[-1])].tobytes()
    if blob.count(b"\0") == len(uniq):   # no text holds a NUL: one split makes them all
        texts = blob.decode("utf-8", "surrogateescape").split("\0")[:-1]
    else:
        texts = [blob[offsets[i]:offsets[i + 1] - 1].decode("utf-8", "surrogateescape") for i in range(len(uniq))]
    table = np.empty(len(uniq), dtype=object)
    table[:] = texts
    return table[inverse.reshape(-1)]
